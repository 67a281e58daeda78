"""The one gateway to the C++ core, ``ppk._core``.

No other module of the package imports ``_core``: they call the small named functions here,
which take and return plain Python and numpy types with the units written in their names.  The
kernels themselves are described in ``docs/method.md`` (the privacy curve of a noisy count) and
``docs/accuracy.md`` (what "certified upper bound" means).

Arguments are validated by the public functions before they reach this module; the core checks
them again and raises ``ValueError`` instead of misbehaving, as a second line of defence.
"""
from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass
from typing import Tuple

import numpy as np
import numpy.typing as npt

from . import _core

__all__ = ["Curve", "METHODS", "interruptible", "check_interrupt", "counting_curve", "counting_log_delta_upper", "counting_log_delta_upper_many", "counting_tail_logs", "counting_noiseless_mixture",
           "gaussian_curve", "gaussian_log_delta_upper", "mixture_log_delta_bracket", "mixture_log_delta_brackets", "norm_logsf", "binom_logpmf", "beta_binomial_logpmf", "hypergeom_logpmf",
           "convolve_longdouble", "ridge_sensitivities", "clear_caches"]

FloatArray = npt.NDArray[np.float64]

#: How the core evaluated a point of a privacy curve, by the code it returns.
METHODS = ("gaussian", "noiseless", "flat region", "threshold")


@dataclass(frozen=True)
class Curve:
    """A privacy curve evaluated at the points ``eps`` (arrays of the same shape as ``eps``)."""

    log_delta: FloatArray        #: natural log of delta(eps), the best estimate
    log_delta_upper: FloatArray  #: natural log of a certified upper bound on delta(eps)
    method: npt.NDArray[np.int8]  #: index into :data:`METHODS` of the path each point took

    def methods(self) -> Tuple[str, ...]:
        """The path each point took, by name (flattened)."""
        return tuple(METHODS[int(m)] for m in self.method.ravel())


def _curve(raw: Tuple[FloatArray, FloatArray, npt.NDArray[np.int8]], shape: Tuple[int, ...]) -> Curve:
    log_d, log_u, method = raw
    return Curve(log_d.reshape(shape), log_u.reshape(shape), method.reshape(shape))


@functools.lru_cache(maxsize=16)
def _noisy_count(n_unknown: int, p: float) -> _core.NoisyCount:
    # Holds the log-pmf window of Bin(N, p), built once and shared by every sigma and eps.
    return _core.NoisyCount(n_unknown, p)


@contextlib.contextmanager
def interruptible():
    """A Python loop over many kernels, interruptible by Ctrl-C from any thread (cpp/src/bindings.hpp): a
    SIGINT after the scope began stops the next kernel (KeyboardInterrupt, in this thread) even when it
    came between two of them.  Scopes nest; loops that run no kernel for long call :func:`check_interrupt`."""
    _core.interrupt_enter()
    try:
        yield
    finally:
        _core.interrupt_exit()


def check_interrupt() -> None:
    """KeyboardInterrupt if Ctrl-C came since this thread's :func:`interruptible` scope began (off the main
    thread, where Python itself never raises it)."""
    _core.interrupt_check()


def clear_caches() -> None:
    """Forget the cached binomial windows (benchmarks time the cold path with this)."""
    _noisy_count.cache_clear()


def counting_curve(n_unknown: int, p: float, *, sigma: float, eps: npt.ArrayLike) -> Curve:
    """Privacy curve of ``a + Bin(n_unknown, p) + N(0, sigma^2)``, ``a`` in {0, 1}, ``sigma`` in counts.

    ``eps`` is any array of finite non-negative floats; the points are evaluated in parallel with
    the GIL released, and Ctrl-C interrupts the evaluation.
    """
    e = np.asarray(eps, dtype=np.float64)
    return _curve(_noisy_count(n_unknown, p).log_delta(sigma, e.ravel()), e.shape)


def counting_log_delta_upper(n_unknown: int, p: float, *, sigma: float, eps: float) -> float:
    """Log of the certified upper bound on delta(eps) of the noisy count (one point)."""
    return float(_noisy_count(n_unknown, p).log_delta(sigma, np.array([eps], dtype=np.float64))[1][0])


def counting_log_delta_upper_many(n_unknown: int, ps: npt.ArrayLike, *, sigma: float, eps: float) -> FloatArray:
    """Log of the certified upper bound on delta(eps) of the noisy count for each bias in ``ps`` (one
    C++ call, both cores, the GIL released: Algorithm 2's grid check over p)."""
    return _core.counting_log_delta_upper_many(n_unknown, np.ascontiguousarray(ps, dtype=np.float64), sigma, eps)


def counting_tail_logs(n_unknown: int, p: float, *, sigma: float, eps: FloatArray,
                       mirrored: bool = False) -> Tuple[FloatArray, FloatArray]:
    """``(log P(O_1 > o*), log P(O_0 > o*))`` where the privacy loss at ``o*`` equals each ``eps``.

    ``mirrored`` takes the pair with ``X -> N - X``, whose upper tails are the forward pair's lower
    tails at ``-eps`` (docs/method.md).  Needs ``sigma > 0`` and natural noise.
    """
    return _noisy_count(n_unknown, p).tail_logs(sigma, np.asarray(eps, dtype=np.float64), mirrored)


def counting_noiseless_mixture(n_unknown: int, s: float, rest: float, q: float, q_rest: float, *, eps: float,
                               m_lo: int, m_hi: int) -> Tuple[float, float, float, int, int, float]:
    """``sum_{m_lo <= M <= m_hi} Bin(n_unknown, s)(M) H_M`` with ``H_M = H_{e^eps}(1 + X || X)``, ``X ~ Bin(M, q)``:
    the noiseless histogram pair over a window of ``M`` (cpp/include/ppk/counting/noiseless_mixture.hpp).

    ``rest = 1 - s`` and ``q_rest = 1 - q`` are passed exactly (``rest = 0``: ``M = n_unknown`` only).  Returns
    ``(log_lower, log_estimate, log_upper, rows, terms, log_cone)``, both ends certified for the window;
    ``log_cone`` bounds the log of the mass the sum's positive part sees, ``sum_M P(M) P(X_M >= k_M)``.  One
    thread, the GIL released, Ctrl-C honoured.
    """
    lo, est, up, rows, terms, cone = _core.counting_noiseless_mixture(int(n_unknown), float(s), float(rest), float(q),
                                                               float(q_rest), float(eps), int(m_lo), int(m_hi))
    return float(lo), float(est), float(up), int(rows), int(terms), float(cone)


def mixture_log_delta_bracket(n_unknown: int, s: float, s_rest: float, q: float, q_rest: float, *, sigma: float,
                              eps: float, rtol: float, max_evaluations: int) -> Tuple[float, float, int]:
    """Bracket on ``E_M[H_M]``, ``M ~ Bin(n_unknown, s)``, ``H_M`` the one-direction delta(eps) of a count.

    ``H_M = H_{e^eps}(1 + X + Z || X + Z)`` with ``X ~ Bin(M, q)`` and ``Z ~ N(0, sigma^2)`` (sigma in
    counts); ``s_rest = 1 - s`` and ``q_rest = 1 - q`` are passed exactly.  Returns
    ``(log_lower, log_upper, evaluations)``: certified logs of the two ends, narrower than ``rtol``
    relative unless ``max_evaluations`` values of ``M`` were spent first (docs/histograms.md).
    The values of ``M`` are evaluated in parallel with the GIL released; Ctrl-C interrupts.
    """
    lo, up, evaluations = _core.binomial_mixture_delta(n_unknown, s, s_rest, q, q_rest, sigma, eps, rtol,
                                                       max_evaluations)
    return float(lo), float(up), int(evaluations)


def mixture_log_delta_brackets(n_unknown: int, s: float, s_rest: float, q: float, q_rest: float, *, sigma: float,
                               eps: npt.ArrayLike, rtol: float, max_evaluations: int,
                               block: int = 32) -> Tuple[FloatArray, FloatArray, npt.NDArray[np.int64]]:
    """:func:`mixture_log_delta_bracket` at every eps of an array, in one call: neighbouring eps (``block``
    of them) share the values of ``M`` and each law's pmf (cpp/include/ppk/histogram_many.hpp).  Each eps
    keeps its own certified bracket, refined to ``rtol`` or its own ``max_evaluations``; returns the arrays
    ``(log_lower, log_upper, evaluations)`` shaped like ``eps``.  GIL released, both cores, Ctrl-C interrupts."""
    e = np.asarray(eps, dtype=np.float64)
    lo, up, evaluations = _core.binomial_mixture_delta_many(n_unknown, s, s_rest, q, q_rest, sigma, e.ravel(), rtol,
                                                            max_evaluations, block)
    return lo.reshape(e.shape), up.reshape(e.shape), evaluations.reshape(e.shape)


def gaussian_curve(*, sigma: float, eps: npt.ArrayLike, sensitivity: float = 1.0) -> Curve:
    """Balle–Wang privacy curve of the Gaussian mechanism (``sigma`` in the units of ``sensitivity``)."""
    e = np.asarray(eps, dtype=np.float64)
    return _curve(_core.gaussian_log_delta(sigma, e.ravel(), sensitivity), e.shape)


def gaussian_log_delta_upper(*, sigma: float, eps: float, sensitivity: float = 1.0) -> float:
    """Log of the certified upper bound on the Gaussian mechanism's delta(eps) (one point)."""
    return float(_core.gaussian_log_delta(sigma, np.array([eps], dtype=np.float64), sensitivity)[1][0])


def norm_logsf(x: npt.ArrayLike) -> FloatArray:
    """``log P(Z > x)`` for a standard normal ``Z``, accurate in the far tails (long double)."""
    return _core.norm_logsf(np.asarray(x, dtype=np.float64))


def binom_logpmf(n: int, p: float, k: npt.ArrayLike) -> FloatArray:
    """``log P(Bin(n, p) = k)`` for ``0 <= p <= 1``, ``-inf`` outside ``0..n``.

    Loader's saddle-point form in long double: no difference of large log-gammas, ~1e-16 relative.
    """
    kk = np.asarray(k, dtype=np.int64)
    if p in (0.0, 1.0):   # a point mass at 0 or n
        return np.where(kk == (n if p == 1.0 else 0), 0.0, -np.inf)
    return _core.binom_logpmf(n, p, kk.ravel()).reshape(kk.shape)


def beta_binomial_logpmf(n: int, a: float, b: float) -> npt.NDArray[np.longdouble]:
    """The normalised log pmf of BetaBinomial(n, a, b) at ``0..n`` in long double, from its closed-form
    ratios summed with compensation (no difference of large log-gammas)."""
    return _core.beta_binomial_logpmf(n, a, b)


def hypergeom_logpmf(population: int, successes: int, draws: int) -> Tuple[int, FloatArray]:
    """``(first support value, log pmf over the whole support)`` of the hypergeometric law."""
    first, logpmf = _core.hypergeom_logpmf(population, successes, draws)
    return int(first), logpmf




def convolve_longdouble(a: npt.NDArray[np.longdouble], b: npt.NDArray[np.longdouble]) -> npt.NDArray[np.longdouble]:
    """Exact direct convolution of two non-negative ``numpy.longdouble`` vectors."""
    return _core.convolve_longdouble(a, b)




def ridge_sensitivities(X: FloatArray, y: FloatArray, *, lam: float, rows: int, pairs: int,
                        seed: int) -> FloatArray:
    """l1 distances between ridge solutions on ``pairs`` neighbouring datasets of ``rows`` rows."""
    return _core.ridge_sensitivities(X, y, lam, rows, pairs, seed)




# -- the family engine of ppk.NoisyQuery (cpp/include/ppk/family/): windows, added laws, its three paths

__all__ += ["family_law", "family_window", "family_binomial_window", "family_threshold", "family_noiseless",
            "family_lattice", "family_crossings"]


@functools.lru_cache(maxsize=8)
def family_law(kind: int, scale: float) -> _core.FamilyLaw:
    """An added law in C++: kind 0 Gaussian, 1 Laplace, 2 discrete Gaussian, 3 discrete Laplace (cached:
    the discrete Gaussian's tail table is built once per scale)."""
    if kind not in (0, 1, 2, 3):
        raise ValueError(f"kind must be 0, 1, 2 or 3, got {kind!r}")
    if not (0 < scale < float("inf")):
        raise ValueError(f"scale must be finite and > 0, got {scale!r}")
    return _core.FamilyLaw(kind, float(scale))


def family_window(offset: int, log_pmf: npt.NDArray[np.longdouble], *, log_dropped: float,
                  log_error: float) -> _core.FamilyWindow:
    """A natural noise's window in C++: ``log_pmf[i] = log P(X = offset + i)`` (long double), the log of a
    bound on the mass left out, and the absolute error allowed each log value."""
    lw = np.ascontiguousarray(log_pmf, dtype=np.longdouble)
    if lw.ndim != 1 or lw.size == 0:
        raise ValueError("log_pmf must be a non-empty 1-d array")
    return _core.FamilyWindow(int(offset), lw, float(log_dropped), float(log_error))


def family_binomial_window(n: int, p: float, *, depth: float) -> _core.FamilyWindow:
    """Bin(n, p) on every value within e^-depth of its mode, from the counting kernel's pmf (ValueError
    when that is more than 2e7 values)."""
    if not (0.0 <= p <= 1.0) or n < 0:
        raise ValueError(f"need n >= 0 and 0 <= p <= 1, got n={n!r}, p={p!r}")
    return _core.FamilyWindow.binomial(int(n), float(p), float(depth))


def family_threshold(window: _core.FamilyWindow, law: _core.FamilyLaw, *, scale: float, shifts: "Tuple[int, ...]",
                     eps: float) -> Tuple[float, float]:
    """(log delta, log of its certified upper bound) on the threshold path: the largest over ``shifts``
    in both directions (GIL released, both cores, Ctrl-C honoured)."""
    return _core.FamilyWindow.threshold(window, law, float(scale), np.asarray(shifts, dtype=np.int64), float(eps))


def family_noiseless(window: _core.FamilyWindow, *, shifts: "Tuple[int, ...]", eps: float) -> Tuple[float, float]:
    """(log delta, log of its certified upper bound) of the natural noise alone, a lattice sum over the
    window: the largest over ``shifts`` in both directions (GIL released, both cores, Ctrl-C honoured)."""
    return _core.FamilyWindow.noiseless(window, np.asarray(shifts, dtype=np.int64), float(eps))


def family_lattice(window: _core.FamilyWindow, law: _core.FamilyLaw, *, scale: float, shifts: "Tuple[int, ...]",
                   eps: float) -> Tuple[float, float]:
    """(log delta, log of its certified upper bound) on the lattice-sum path (a discrete added law, any
    natural noise): the largest over ``shifts`` in both directions (GIL released, both cores, Ctrl-C honoured)."""
    return _core.FamilyWindow.lattice(window, law, float(scale), np.asarray(shifts, dtype=np.int64), float(eps))


def family_crossings(window: _core.FamilyWindow, law: _core.FamilyLaw, *, scale: float, shifts: "Tuple[int, ...]",
                     eps: float) -> Tuple[float, float, bool]:
    """(log delta, log upper, certified) on the crossings path (a continuous added law, any natural noise):
    the largest over ``shifts`` in both directions; not certified when a crossing may have been missed
    (then the caller's caps bound delta).  GIL released, both cores, Ctrl-C honoured."""
    return _core.FamilyWindow.crossings(window, law, float(scale), np.asarray(shifts, dtype=np.int64), float(eps))


__all__ += ["shuffle_split", "shuffle_split_derived"]


def shuffle_split(ones: int, zeros: int, unknown: int, r: float, q: float, eps0: float, depth: float,
                  backward_only: bool) -> _core.ShuffleSplit:
    """One split of shuffled randomized response (ppk/shuffle.hpp): ``log_bracket(eps)`` gives certified log
    ends of its delta(eps).  At most two of the three groups may be random."""
    return _core.ShuffleSplit(int(ones), int(zeros), int(unknown), float(r), float(q), float(eps0), float(depth),
                              bool(backward_only))


def shuffle_split_derived(parent: _core.ShuffleSplit, count: int, ones: bool, depth: float, backward_only: bool,
                          upper_only: bool) -> _core.ShuffleSplit:
    """``parent``'s law plus ``count`` users whose input is known (1 when ``ones``): the parent's log C convolved
    with one binomial (ppk/shuffle.hpp); ``upper_only``: its lower end is -inf."""
    return _core.ShuffleSplit(parent, int(count), bool(ones), float(depth), bool(backward_only), bool(upper_only))


__all__ += ["shuffle_kary_pair"]


def shuffle_kary_pair(n: int, th1: float, t1c: float, q: float, qc: float, c1: float, c2: float, c3: float, *,
                      depth: float, max_cells: float) -> Tuple[float, float, int]:
    """Certified ``(log lower, log upper, cells walked)`` of one ordered pair's delta(eps), k-ary shuffled
    randomized response with the other reports i.i.d. (ppk/shuffle_kary.hpp; coefficients from
    ppk/_shuffle_kary.py).  GIL released, Ctrl-C interrupts."""
    lo, up, cells, _ = _core.shuffle_kary_pair(int(n), float(th1), float(t1c), float(q), float(qc), float(c1),
                                               float(c2), float(c3), float(depth), float(max_cells))
    return lo, up, cells
