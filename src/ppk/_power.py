"""The certified power 1 - beta(alpha) of a privacy profile: the one implementation behind
``ppk.tradeoff.power_bracket`` and the ``power_bracket`` methods (docs/tradeoff.md derives it).

With G(a) the hockey-stick profile of the symmetric pair -- G(a) = delta(ln a) for a >= 1 and
G(a) = 1 - a + a delta(-ln a) for a < 1, ppk's delta being the larger of both orders --

    power(alpha) = 1 - beta(alpha) = inf over a > 0 of  G(a) + a alpha.

G + a alpha is convex and G non-increasing in a, so an infimum over finitely many evaluated points is
certified from both sides: the upper end is one evaluated G_upper(a) + a alpha (never a guess), the lower
end the least of per-cell lower bounds that hold on every point of each cell (the chords of a convex
function extended beyond their points, and monotonicity), over cells that cover every a > 0.  The power is
a sum of positive terms here: no 1 - (1 - x) cancels, and the bracket stays relative-accurate where
beta is within 1e-9 of 1.

A pair known in one order only (a PLD of one adjacency: delta = H(P || Q)) has no G below a = 1; there the
bound G(a) >= max(1 - a, delta(0)) stands in, which gives the power of that order exactly wherever the
best test's threshold is >= 1 (small alpha) and a certified but looser lower end elsewhere.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import numpy.typing as npt

from ._typing import FloatArray
from ._validate import real_array

__all__: list[str] = []

#: Below this alpha the bracket is [alpha, upper end at this alpha]: the power is non-decreasing in alpha
#: and >= alpha (a trade-off curve lies below 1 - alpha); it keeps e^eps alpha and delta within doubles.
ALPHA_FLOOR = 1e-250
#: How far the profile's a = e^eps is searched below 1 (two orders): G(a) + a alpha >= 1 - e^-40 beyond.
_NEG_REACH = 40.0
#: The first grid's points (eps >= 0; a quarter as many below 0), the points of each refinement, the spacing in
#: eps at which refining stops and the most refinements (each divides the spacing by 8).
_COARSE_POINTS = 160
_ZOOM_POINTS = 33
_ZOOM_STOP = 1e-7
_ZOOM_ROUNDS = 14
#: Every sum, product and exp below is correct to a few ulps of the power (all terms are >= 0 where they
#: add); the ends are moved outward by this relative allowance, far above those few ulps.
_ROUNDING = 1e-13
#: A curve's estimate ``log_delta`` (no certified lower end) is lowered by this before it serves as a
#: lower end: ppk states 1e-12 relative for it (docs/accuracy.md), so the margin is 1000 times that.
_ESTIMATE_MARGIN = 1e-9

Ends = Callable[[np.ndarray], "tuple[np.ndarray, np.ndarray]"]




def estimate_ends(log_delta: Callable[[np.ndarray], Any], log_delta_upper: Callable[[np.ndarray], Any]) -> Ends:
    """The ends of a curve whose lower end is its estimate ``log_delta`` (no certificate): lowered by
    _ESTIMATE_MARGIN relative (and 1e-14 of |log delta| where delta < 1e-300, ppk's stated accuracy there)."""
    def ends(e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        est = np.asarray(log_delta(e), dtype=np.float64)
        lower = est + np.log1p(-_ESTIMATE_MARGIN) - 1e-14 * np.abs(est)
        return lower, np.asarray(log_delta_upper(e), dtype=np.float64)
    return ends


def bracket(ends: Ends, two_sided: bool, alpha: npt.ArrayLike) -> tuple[float, float] | tuple[FloatArray, FloatArray]:
    """``(lower, upper)`` on the power at each alpha of the profile ``ends`` (eps -> log delta's ends, eps >= 0);
    ``two_sided``: delta is the larger of both orders.  Below ALPHA_FLOOR: [alpha, the upper end there]."""
    flat, scalar = real_array("alpha", alpha, minimum=0.0, maximum=1.0)
    lower, upper = np.zeros(flat.size), np.zeros(flat.size)
    if flat.size:
        eff, inverse = np.unique(np.maximum(flat, ALPHA_FLOOR), return_inverse=True)
        lo, up = _power_ends(ends, two_sided, eff)
        lower, upper = lo[inverse.ravel()], up[inverse.ravel()]
        lower = np.where(flat < ALPHA_FLOOR, flat, lower)
    if scalar:
        return float(lower[0]), float(upper[0])
    shape = np.shape(alpha)
    return lower.reshape(shape), upper.reshape(shape)


def _evaluate(ends: Ends, eps: np.ndarray, alpha: np.ndarray) -> tuple[np.ndarray, ...]:
    """At each eps (rows: one alpha each) a = e^eps, G's ends (without a alpha) and a alpha."""
    lo, up = ends(np.abs(eps).ravel())
    d_lo = np.exp(np.asarray(lo, dtype=np.float64)).reshape(eps.shape)
    d_up = np.nextafter(np.exp(np.asarray(up, dtype=np.float64)), np.inf).reshape(eps.shape)
    d_lo, d_up = np.minimum(d_lo, 1.0), np.minimum(d_up, 1.0)
    a = np.exp(eps)
    neg = eps < 0
    # a < 1: G(a) = 1 - a + a delta(-ln a) (the other order's profile), 1 - a as -expm1 (no cancellation)
    g_lo = np.where(neg, -np.expm1(eps) + a * d_lo, d_lo)
    g_up = np.where(neg, -np.expm1(eps) + a * d_up, d_up)
    return a, g_lo, g_up, a * alpha[:, None]


def _cell_lower(a: np.ndarray, g_lo: np.ndarray, g_up: np.ndarray, aa: np.ndarray) -> np.ndarray:
    """A lower bound of G + a alpha on each cell [a_i, a_i+1] of every row (shape (rows, n - 1)).

    * monotone: G(a) >= G(a_i+1) and a alpha >= a_i alpha on the cell;
    * convex: for a >= a_i the chord through a_i-1, a_i extended, l_i + s1 (a - a_i), s1 >= (l_i - u_i-1) /
      (a_i - a_i-1); for a <= a_i+1 the chord through a_i+1, a_i+2 extended backwards.  The least of the larger
      of two lines on the cell is bounded by any convex combination of them (a line: least at an end); the
      combination that makes it flat gives the crossing, and the lines alone give the rest.
    """
    lo, up = g_lo + aa, g_up + aa
    w = a[:, 1:] - a[:, :-1]
    mono = g_lo[:, 1:] + aa[:, :-1]
    n = a.shape[1]
    c1 = np.full_like(w, -np.inf)
    s1 = np.zeros_like(w)
    c2 = np.full_like(w, -np.inf)
    s2 = np.zeros_like(w)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if n >= 3:
            d_left = a[:, 1:-1] - a[:, :-2]
            ok = d_left > 0
            c1[:, 1:] = np.where(ok, lo[:, 1:-1], -np.inf)
            s1[:, 1:] = np.where(ok, (lo[:, 1:-1] - up[:, :-2]) / d_left, 0.0)
            d_right = a[:, 2:] - a[:, 1:-1]
            ok = d_right > 0
            c2[:, :-1] = np.where(ok, lo[:, 1:-1], -np.inf)
            s2[:, :-1] = np.where(ok, (lo[:, 1:-1] - up[:, 2:]) / d_right, 0.0)
        l1_0, l1_w = c1, c1 + s1 * w
        l2_0, l2_w = c2 + s2 * w, c2
        best = np.maximum(np.minimum(l1_0, l1_w), np.minimum(l2_0, l2_w))
        both = np.isfinite(c1) & np.isfinite(c2) & (s1 + s2 > 0)
        lam = np.clip(np.where(both, s2 / (s1 + s2), 0.0), 0.0, 1.0)
        mix = np.minimum(lam * l1_0 + (1 - lam) * l2_0, lam * l1_w + (1 - lam) * l2_w)
        best = np.where(both & np.isfinite(mix), np.maximum(best, mix), best)
    return np.maximum(mono, np.where(np.isnan(best), -np.inf, best))


def _power_ends(ends: Ends, two_sided: bool, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) on the power at each alpha in [ALPHA_FLOOR, 1] (1-d)."""
    m = alpha.size
    reach = -math.log(float(alpha.min())) + 0.5      # beyond: a alpha > 1 >= the power
    pos = np.linspace(0.0, reach, _COARSE_POINTS)
    grid = np.concatenate([np.linspace(-_NEG_REACH, 0.0, _COARSE_POINTS // 4 + 1)[:-1], pos]) if two_sided else pos
    eps = np.broadcast_to(grid, (m, grid.size)).copy()
    step = reach / (_COARSE_POINTS - 1)
    # the tails of the search: eps > reach (a alpha > 1), eps < -40 (G >= 1 - a); one order: G >= max(1 - a, TV)
    outside = np.full(m, 1.0 - math.exp(-_NEG_REACH))
    best_up = np.ones(m)
    rows = np.arange(m)
    for round_ in range(_ZOOM_ROUNDS + 1):
        a, g_lo, g_up, aa = _evaluate(ends, eps, alpha)
        if round_ == 0 and not two_sided:   # the zero of eps is column 0
            outside = np.minimum(outside, alpha + g_lo[:, 0] * (1 - alpha))
        u = g_up + aa
        best_up = np.minimum(best_up, u.min(axis=1))
        cells = _cell_lower(a, g_lo, g_up, aa)
        if round_ == _ZOOM_ROUNDS or step < _ZOOM_STOP:
            outside = np.minimum(outside, cells.min(axis=1))
            break
        # the window: two cells either side of the least upper end (G + a alpha is unimodal in eps); cells
        # outside it are bounded now, the window is gridded finer (with one point beyond each end for chords)
        n = eps.shape[1]
        k = np.argmin(u, axis=1)
        lo_i, hi_i = np.maximum(k - 2, 0), np.minimum(k + 2, n - 1)
        idx = np.arange(n - 1)[None, :]
        out = (idx < lo_i[:, None]) | (idx >= hi_i[:, None])
        outside = np.minimum(outside, np.where(out, cells, np.inf).min(axis=1))
        left, right = eps[rows, np.maximum(lo_i - 1, 0)], eps[rows, np.minimum(hi_i + 1, n - 1)]
        e0, e1 = eps[rows, lo_i], eps[rows, hi_i]
        t = np.linspace(0.0, 1.0, _ZOOM_POINTS)[None, :]
        fine = e0[:, None] + (e1 - e0)[:, None] * t
        fine[:, -1] = e1                              # the window's ends exactly (the cells must tile)
        eps = np.concatenate([left[:, None], fine, right[:, None]], axis=1)
        step = float((e1 - e0).max()) / (_ZOOM_POINTS - 1)
    lower = np.maximum(outside * (1 - _ROUNDING), alpha)
    upper = np.minimum(best_up * (1 + _ROUNDING), 1.0)
    return np.minimum(lower, upper), upper
