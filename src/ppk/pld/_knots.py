"""Where ``connect_the_dots`` (ppk.pld.curves) evaluates a query's certified upper curve, and how loose the
resulting pair is (docs/accuracy.md, "Any query").

The pair's delta between two knots is the chord, in a = e^eps, of the curve's values there.  Where log U
falls by D over a width h in eps, linearly, the chord stands above the curve by :func:`chord_excess` (about
cosh(D/2) - 1 when h is small), so the knots are placed by the fall of log U, not evenly, down to where U
is below the PLD's truncation: a first pass at a loose tolerance (:data:`COARSE_RTOL`) gives the curve's
shape, from each knot the next is the farthest grid point whose predicted excess is at most
:data:`PLACE_EXCESS`, the knots are evaluated to :data:`UPPER_RTOL`, and an interval whose excess is
still above :data:`MAX_EXCESS` is cut (a few rounds, at most ``curve_points`` knots in all).

A looser bracket is sound here: the pair needs only upper ends, and the upper end of a wider bracket is
still a certified upper end; the width only costs tightness, and :func:`looseness` measures it.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._curve import PrivacyCurve
from ._masses import LD

#: The largest excess of the chord between neighbouring knots over a log-linear U (:func:`chord_excess`).
MAX_EXCESS = 6.5e-3
#: The chord excess the first placement aims at (below MAX_EXCESS: the coarse curve is only a prediction).
PLACE_EXCESS = 0.95 * MAX_EXCESS
#: The relative tolerance of the pass that places the knots (only the curve's shape is read from it).
COARSE_RTOL = 3e-2
#: The relative tolerance of the upper ends at the knots (a summed bracket stops there; docs/histograms.md).
UPPER_RTOL = 6e-3
#: Evaluations of the coarse pass.
COARSE_POINTS = 65
#: Rounds of cutting the intervals whose chord excess is still above MAX_EXCESS.
REFINE_ROUNDS = 6


def coarse_upper(curve: PrivacyCurve, eps: float) -> float:
    """log of the certified upper curve at one eps, to :data:`COARSE_RTOL` (an upper end all the same)."""
    if not curve._costly_curve:
        return curve._log_delta_upper_at(eps)
    return float(curve._log_delta_ends_many(np.array([eps], dtype=np.float64), rtol=COARSE_RTOL)[1][0])


def knots(curve: PrivacyCurve, dx: float, bound: float, k_reach: int,
          max_points: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(knots as multiples of dx, ascending from 0 to k_reach; log lower ends; log upper ends there).  A cheap
    curve (not ``curve._costly_curve``) is read at ``max_points`` evenly spaced knots, in one call."""
    if not curve._costly_curve:
        step = max(1, math.ceil(k_reach / (max_points - 1)))
        k = np.arange(0, -(-k_reach // step) + 1) * step
        return (k,) + _ends(curve, k, dx)
    n_coarse = min(COARSE_POINTS, max_points)
    coarse = np.unique(np.round(np.linspace(0, k_reach, n_coarse)).astype(np.int64))
    _, log_c = curve._log_delta_ends_many((coarse * dx).astype(np.float64), rtol=COARSE_RTOL)
    log_c = np.minimum.accumulate(np.minimum(np.asarray(log_c, dtype=np.float64), 0.0))
    _check(curve, log_c, coarse * dx)
    log_c = np.maximum(log_c, bound - 1)   # a delta of 0 (pure DP beyond some eps) as just below the bound
    k = _place(coarse, log_c, dx, bound, k_reach, max_points)
    log_l, log_u = _ends(curve, k, dx)
    for _ in range(REFINE_ROUNDS):
        log_g = np.maximum(np.minimum.accumulate(log_u), bound - 1)   # below the bound nothing is placed
        excess = chord_excess(log_g[:-1] - log_g[1:], np.diff(k) * dx)
        wide = np.flatnonzero((excess > MAX_EXCESS) & (np.diff(k) >= 2) & (log_g[:-1] > bound))
        room = max_points - k.size
        if wide.size == 0 or room <= 0:
            break
        # each wide interval cut evenly into as many pieces as its excess needs (about 1 / pieces^2 of it)
        added = []
        for i in wide[np.argsort(-excess[wide], kind="stable")]:
            n = min(int(k[i + 1] - k[i]), math.ceil(1.05 * math.sqrt(excess[i] / MAX_EXCESS)), room + 1)
            if n < 2:
                break
            room -= n - 1
            added.append(np.unique(np.round(k[i] + (k[i + 1] - k[i]) * np.arange(1, n) / n).astype(np.int64)))
        mid = np.setdiff1d(np.concatenate(added), k) if added else np.array([], dtype=np.int64)
        if mid.size == 0:
            break
        lo, up = _ends(curve, mid, dx)
        k = np.concatenate([k, mid])
        order = np.argsort(k, kind="stable")
        k, log_l, log_u = k[order], np.concatenate([log_l, lo])[order], np.concatenate([log_u, up])[order]
    return k, log_l, log_u


def _place(coarse: np.ndarray, log_c: np.ndarray, dx: float, bound: float, k_reach: int,
           max_points: int) -> np.ndarray:
    """Knots from the coarse curve: from each knot, the farthest grid point at which the predicted chord
    excess stays below :data:`PLACE_EXCESS`.  -log U grows about like eps^2 (a Gaussian tail), so between the
    coarse points sqrt(-log U) is interpolated linearly in eps."""
    grid = np.arange(k_reach + 1)
    pred = -np.interp(grid, coarse, np.sqrt(-log_c)) ** 2
    k = [0]
    while k[-1] < k_reach and pred[k[-1]] > bound and len(k) < max_points - 1:
        j = k[-1]

        def fits(i: int) -> bool:
            return bool(chord_excess(np.array([pred[j] - pred[i]]), np.array([(i - j) * dx]))[0] <= PLACE_EXCESS)
        lo, step = j + 1, 1   # fits(lo) or lo is the next grid point; gallop, then bisect
        while lo + step <= k_reach and fits(lo + step):
            lo, step = lo + step, 2 * step
        hi = min(lo + step, k_reach + 1)   # the first point known not to fit (or past the end)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if fits(mid) else (lo, mid)
        k.append(lo)
    return np.unique(np.array(k + [k_reach], dtype=np.int64))


def chord_excess(drop: np.ndarray, width: np.ndarray) -> np.ndarray:
    """How far above a curve log-linear in eps (falling by ``drop`` over ``width``) its chord in a = e^eps
    rises between the two ends, relative: max over 0 <= t <= 1 of (1 - (1 - e^-D) expm1(t h) / expm1(h)) e^(t D)
    - 1, read on 65 points (about cosh(D/2) - 1 for a narrow interval; more where h is wide)."""
    t = np.linspace(0.0, 1.0, 65)[None, :]
    d, h = np.asarray(drop, dtype=np.float64)[:, None], np.maximum(np.asarray(width, dtype=np.float64), 1e-300)[:, None]
    chord = 1 + np.expm1(-d) * (np.expm1(t * h) / np.expm1(h))
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.max(chord * np.exp(t * d), axis=1) - 1
    return np.where(np.isfinite(out), out, np.inf)


def _ends(curve: PrivacyCurve, k: np.ndarray, dx: float) -> tuple[np.ndarray, np.ndarray]:
    lo, up = curve._log_delta_ends_many((k * dx).astype(np.float64), rtol=UPPER_RTOL)
    up = np.minimum(np.asarray(up, dtype=np.float64), 0.0)
    _check(curve, up, k * dx)
    return np.minimum(np.asarray(lo, dtype=np.float64), up), up


def _check(curve: PrivacyCurve, log_u: np.ndarray, eps: np.ndarray) -> None:
    if np.isnan(log_u).any():
        raise ValueError(f"{curve!r} gave NaN for log_delta_upper on [0, {eps.max():.6g}]")


def hull_at_knots(e: Any, g: Any, v: np.ndarray, left0: Any) -> Any:
    """G, the pair's delta, at every knot (e = eps, g = the non-increasing upper ends, v = the hull's vertices;
    ``left0`` = e^e_v0 times G's slope before the first vertex, the chord to its mirror image)."""
    out = np.empty_like(g)
    j = np.arange(e.size)
    seg = np.clip(np.searchsorted(v, j, side="right") - 1, 0, max(v.size - 2, 0))
    if v.size > 1:
        a, b = v[seg], v[seg + 1]
        out[:] = g[a] + (g[b] - g[a]) * (np.expm1(e - e[a]) / np.expm1(e[b] - e[a]))
    else:
        out[:] = g[v[0]]
    before = j < v[0]
    out[before] = g[v[0]] + left0 * np.expm1(e[before] - e[v[0]])   # G(a) = g_v0 + slope (a - a_v0)
    out[v] = g[v]
    return out


def looseness(e: Any, hull: Any, g: Any, log_l: Any, bound: float) -> float:
    """max over eps between knots, where the pair's delta G is above e^bound, of G / f - 1: how far the pair's
    delta may be above any delta curve f that is convex in a = e^eps, non-increasing, below the upper ends g at
    the knots and above the lower ends e^log_l there -- the query's own delta, or the bound it certifies
    (docs/accuracy.md, "Any query").  Between knots j and j+1, f is at least e^l_(j+1) and the two chords of
    its neighbours extended (convexity), so the ratio is largest at an end or where two of those meet."""
    n = e.size
    if n < 2:
        return 0.0
    worst = 0.0
    for j in range(n - 1):
        if not hull[j] > math.exp(bound):
            break
        scale = g[j]
        span = np.expm1(e[j + 1] - e[j]) * np.exp(e[j])              # a_(j+1) - a_j
        g0, g1 = hull[j] / scale, hull[j + 1] / scale
        l0, l1 = np.exp(log_l[j]) / scale, np.exp(log_l[j + 1]) / scale
        lines = [(l1, LD(0))]                                         # (value at t = 0, slope in t)
        if j >= 1:   # through (a_(j-1), g_(j-1)) and (a_j, l_j), extended right
            r = np.expm1(e[j] - e[j - 1]) * np.exp(e[j - 1]) / span
            lines.append((l0, (l0 - g[j - 1] / scale) / r))
        if j + 2 < n:   # through (a_(j+1), l_(j+1)) and (a_(j+2), g_(j+2)), extended left
            r = np.expm1(e[j + 2] - e[j + 1]) * np.exp(e[j + 1]) / span
            s = (g[j + 2] / scale - l1) / r
            lines.append((l1 - s, s))
        ts = [LD(0), LD(1)]
        for x in range(len(lines)):
            for y in range(x + 1, len(lines)):
                if lines[x][1] != lines[y][1]:
                    t = (lines[y][0] - lines[x][0]) / (lines[x][1] - lines[y][1])
                    if 0 < t < 1:
                        ts.append(t)
        for t in ts:
            f = max(c + s * t for c, s in lines)
            if not f > 0:
                return math.inf
            worst = max(worst, float((g0 + (g1 - g0) * t) / f - 1))
    return worst
