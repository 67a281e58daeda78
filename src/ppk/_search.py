"""One place for the monotone root searches behind every calibration.

All calibrations ask the same question: the smallest x (a noise scale, an
eps) at which a certified upper bound of delta is <= the target, where that
bound is non-increasing in x.  :func:`smallest_feasible` answers it with a
bracketing search (Illinois regula falsi on the log-excess, safeguarded by
bisection) that keeps the invariant "f(hi) <= 0 was evaluated", so the value
it returns is always feasible: never under-noised.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable


def log_target(delta: float) -> float:
    """log(delta) lowered by a few ulps, so that a log-bound below it also passes ``exp(bound) <= delta``.

    Searches compare logs; users check ``delta_upper(...) <= delta`` in floats.
    exp and log each round (relative ~1.1e-16 |log delta|), so without the
    margin a bound equal to the target in log space can exceed it by an ulp.
    """
    ld = math.log(delta)
    return ld - (4e-16 * max(1.0, abs(ld)) + 1e-15)


def log_quotient(a: float, b: float) -> float:
    """``log(a / b)`` for positive ``a``, ``b``, finite even where ``a / b`` leaves the floats.

    ``math.log(a / b)`` where the quotient is a normal float (so results stay bit-identical to it),
    ``log a - log b`` where it overflows or underflows: ``log(1.25 / 5e-324)`` is inf, the bound it
    enters (a sigma, a Hoeffding deviation) is not.
    """
    q = a / b
    return math.log(q) if 2.2250738585072014e-308 <= q < math.inf else math.log(a) - math.log(b)


@dataclass(frozen=True)
class SearchResult:
    x: float            # the smallest feasible point found (f(x) <= 0 was evaluated)
    lower: float        # f(lower) > 0 was evaluated (or lower = the initial bound)
    evaluations: int


def smallest_feasible(f: Callable[[float], float], lo: float, hi: float, *, f_lo: float | None = None,
                      f_hi: float | None = None, atol: float = 0.0, rtol: float = 1e-10,
                      tolerance: Callable[[float], float] | None = None,
                      max_evaluations: int = 400) -> SearchResult:
    """Shrink ``[lo, hi]`` with ``f(lo) > 0 >= f(hi)``, ``f`` non-increasing, to width ``max(atol, rtol*hi)``.

    ``tolerance(hi)``, if given, replaces that width rule (for searches in a
    transformed variable, e.g. sigma^2, whose tolerance is stated in sigma).
    """
    if tolerance is None:
        def tolerance(h: float) -> float:
            return max(atol, rtol * h)
    evaluations = 0
    if f_lo is None:
        f_lo, evaluations = f(lo), evaluations + 1
    if f_hi is None:
        f_hi, evaluations = f(hi), evaluations + 1
    if not (f_lo > 0 >= f_hi):
        raise ValueError(f"not a bracket: f({lo})={f_lo}, f({hi})={f_hi}")
    side = 0
    width_before = hi - lo
    steps_since_halving = 0
    while evaluations < max_evaluations:
        tol = tolerance(hi)
        if hi - lo <= tol:
            break
        if steps_since_halving >= 2:
            x = 0.5 * (lo + hi)        # regula falsi stalled: bisect
        else:
            x = hi - f_hi * (hi - lo) / (f_hi - f_lo)
        # keep the point at least tol/2 inside, so that near the root one more
        # evaluation lands on the other side and closes the bracket
        x = min(max(x, lo + 0.5 * tol), hi - 0.5 * tol)
        fx = f(x)
        evaluations += 1
        if fx <= 0:
            hi, f_hi = x, fx
            if side == 1:
                f_lo *= 0.5
            side = 1
        else:
            lo, f_lo = x, fx
            if side == -1:
                f_hi *= 0.5
            side = -1
        if hi - lo <= 0.5 * width_before:
            width_before, steps_since_halving = hi - lo, 0
        else:
            steps_since_halving += 1
    return SearchResult(x=hi, lower=lo, evaluations=evaluations)


def smallest_feasible_near(f: Callable[[float], float], guess: float, step: float, *, upper: float,
                           rtol: float) -> SearchResult | None:
    """:func:`smallest_feasible` on ``[0, upper]``, bracketed outwards from a good ``guess``.

    Where a model predicts the answer well (an eps from the Gaussian approximation at large N), the
    bracket found by steps of ``step``, ``4 step``, ``16 step``, ... from the guess -- up while
    ``f > 0``, down while ``f <= 0`` -- is a few ``step`` wide, and the search ends after a handful of
    evaluations instead of halving its way in from the ends of the domain.  0 is the last point tried
    on the way down (returned when ``f(0) <= 0``); ``None`` when ``f(upper) > 0``: nothing is feasible.
    """
    x = min(max(guess, 0.0), upper)
    step = max(step, 4.0 * rtol * x, 1e-300)
    fx, evaluations = f(x), 1
    if fx > 0:
        lo, f_lo = x, fx
        while True:
            if lo >= upper:
                return None
            hi = min(lo + step, upper)
            f_hi, evaluations = f(hi), evaluations + 1
            if f_hi <= 0:
                break
            lo, f_lo, step = hi, f_hi, 4.0 * step
    else:
        hi, f_hi = x, fx
        while True:
            if hi <= 0.0:
                return SearchResult(x=0.0, lower=0.0, evaluations=evaluations)
            lo = max(hi - step, 0.0)
            f_lo, evaluations = f(lo), evaluations + 1
            if f_lo > 0:
                break
            hi, f_hi, step = lo, f_lo, 4.0 * step
    found = smallest_feasible(f, lo, hi, f_lo=f_lo, f_hi=f_hi, rtol=rtol)
    return SearchResult(x=found.x, lower=found.lower, evaluations=found.evaluations + evaluations)


def smallest_feasible_scale(excess: Callable[[float], float], hi: float, *, f_zero: float,
                            width: Callable[[float], float], grow: float) -> SearchResult:
    """The smallest noise scale s > 0 with ``excess(s) <= 0`` (``excess`` non-increasing in s,
    ``excess(0) = f_zero > 0``), searched in v = s^2 below a scale ``hi`` that is feasible in exact
    arithmetic.

    log delta is close to linear in the total variance (natural + added), hence in v, so regula falsi
    converges in a few steps; ``width(s)`` is the bracket width wanted *in s*.  ``hi`` is raised by the
    factor ``1 + grow`` while its certified bound misses the target by rounding; the scale returned is
    one whose excess was evaluated and found <= 0 (``x``), and ``lower`` one found infeasible.
    """
    f_hi = excess(hi)
    for _ in range(100):   # feasible in exact arithmetic: absorb the rounding of the two bounds
        if f_hi <= 0:
            break
        hi *= 1 + grow
        f_hi = excess(hi)
    else:
        raise RuntimeError(f"the scale {hi!r}, private in exact arithmetic, was not certified; please report this")
    found = smallest_feasible(lambda v: excess(math.sqrt(v)), 0.0, hi * hi, f_lo=f_zero, f_hi=f_hi,
                              tolerance=lambda v_hi: width(math.sqrt(v_hi)) * math.sqrt(v_hi))
    scale = math.sqrt(found.x)
    while excess(scale) > 0:   # sqrt(v)^2 may round below v: step up to a scale evaluated feasible
        scale = math.nextafter(scale, math.inf)
    return SearchResult(x=scale, lower=math.sqrt(found.lower), evaluations=found.evaluations)
