"""The search for eps of a tilted plan reader (ppk.pld._tilted_bracket.PlanCurve, ppk.pld._enumerated): the
smallest eps whose certified upper delta meets a target, found from a saddle-point guess with as few distinct
eps read as possible (each read may build a tilted composition).  Where to look is decided here; the answer is
``ppk._search``'s, the same whichever way the bracket was found."""
from __future__ import annotations

import math
from typing import Any

from .._search import SearchResult, log_target, smallest_feasible, smallest_feasible_near

#: The least excess (in log delta) a search sees: every eps at least e^-1e4 below the target is as feasible as
#: any other, and the excess stays finite where the upper end is 0 (log -inf).
_EXCESS_FLOOR = 1e4


def search_epsilon(log_upper: Any, log_delta: float, *, guess: float, step: float, upper: float,
                   floor: float) -> tuple[float, float]:
    """The search of a plan reader's ``epsilon_bracket``, shared by every reader: the smallest eps in [0, upper]
    whose ``log_upper(eps)`` is at most log_delta lowered by a few ulps (so that it passes in delta too, where
    the caller checks), to 1e-13 of itself, bracketed outwards from ``guess``; log delta is smooth where delta
    is not, so this takes a handful of reads.  Returns (lower, x); (inf, inf) when nothing in [0, upper] is
    feasible, at once when the upper end's least value ``floor`` (its mass at +inf, in it at every eps) exceeds
    the target."""
    target = log_target(math.exp(log_delta)) if log_delta > -745.0 else log_delta
    if floor > target:
        return math.inf, math.inf
    def excess(e: float) -> float:
        # -inf past the plan's largest loss (delta is 0 there): a finite floor keeps it non-increasing, and
        # keeps regula falsi's step finite (-inf made it inf/inf = NaN, returned as eps)
        return max(float(log_upper(e)) - target, -_EXCESS_FLOOR)
    bracket = _secant_bracket(excess, guess, step, upper)
    found: SearchResult | None
    if bracket is not None:
        lo, f_lo, hi, f_hi = bracket
        if hi <= 0.0:
            return 0.0, 0.0
        found = smallest_feasible(excess, lo, hi, f_lo=f_lo, f_hi=f_hi, rtol=1e-13)
    else:
        found = smallest_feasible_near(excess, guess, step, upper=upper, rtol=1e-13)
    return (math.inf, math.inf) if found is None else (found.lower, found.x)


def _secant_bracket(excess: Any, guess: float, step: float, upper: float) -> tuple[float, float, float, float] | None:
    """(lo, f(lo), hi, f(hi)) with f(lo) > 0 >= f(hi), found from ``guess`` by secant steps on log delta
    (smooth, near linear over a few deviations), or None after a few (the caller then steps out geometrically).
    Every eps read builds the tilt of its key, so jumping straight to where the secant puts the answer (a
    little past it) builds that key's and few others; steps that grow 4-fold from the guess would read the
    keys on the way.  Only where to look is decided here: ``smallest_feasible`` finds the answer in the
    bracket, the same whichever way the bracket was found (to its 1e-13)."""
    x = min(max(guess, 0.0), upper)
    fx = excess(x)
    sign = 1.0 if fx > 0 else -1.0           # up while infeasible, down while feasible
    y = min(max(x + sign * step, 0.0), upper)
    for _ in range(6):
        if y == x:
            return None
        fy = excess(y)
        if (fx > 0) != (fy > 0):
            return (x, fx, y, fy) if x < y else (y, fy, x, fx)
        if (y >= upper and fy > 0) or (y <= 0.0 and fy <= 0):
            return None if y >= upper else (0.0, fy, 0.0, fy)
        slope = (fy - fx) / (y - x)
        # the secant's root, overshot by a quarter of the way (log delta bends away from the chord), at least
        # one step and at most 64 steps on
        go = abs(fy / slope) * 1.25 if slope < 0 else math.inf
        go = min(max(go, step), 64.0 * step)
        x, fx, y = y, fy, min(max(y + sign * go, 0.0), upper)
    return None
