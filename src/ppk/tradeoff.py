"""Certified trade-off curves: the best attack's power 1 - beta(alpha) at false-positive rate alpha.

The f-DP curve of a release follows from its privacy profile delta(eps) (docs/tradeoff.md derives it):
with G(a) the hockey-stick profile of the symmetric pair -- G(a) = delta(ln a) for a >= 1 and
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

import csv
import io
import json
import math
from typing import Any, Callable, overload

import numpy as np
import numpy.typing as npt

from ._curve import BracketedCurve, PrivacyCurve
from ._typing import FloatArray
from ._validate import integer, real, real_array, text

__all__ = ["power_bracket", "tradeoff_table", "tradeoff_functions", "write_tradeoff", "plot_tradeoff"]

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


def _profile(obj: Any) -> tuple[Ends, bool]:
    """(eps -> (log delta lower, log delta upper), both orders?) of a curve, PLD or Accountant."""
    from .pld.accountant import Accountant
    from .pld.distribution import PrivacyLossDistribution
    if isinstance(obj, Accountant):
        obj = obj.pld()
    if isinstance(obj, PrivacyLossDistribution):
        return (lambda e: obj.log_delta_bracket(e)), not obj._one_sided
    if isinstance(obj, BracketedCurve):
        return (lambda e: obj.log_delta_bracket(e)), True
    if isinstance(obj, PrivacyCurve):
        def ends(e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            est = np.asarray(obj.log_delta(e), dtype=np.float64)
            lower = est + np.log1p(-_ESTIMATE_MARGIN) - 1e-14 * np.abs(est)   # below 1e-300: 1e-14 of |log|
            return lower, np.asarray(obj.log_delta_upper(e), dtype=np.float64)
        return ends, True
    raise TypeError("obj must be a ppk privacy curve (a query), a PrivacyLossDistribution or an Accountant, "
                    f"got {type(obj).__name__}")


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


@overload
def power_bracket(obj: Any, alpha: float) -> tuple[float, float]: ...
@overload
def power_bracket(obj: Any, alpha: npt.ArrayLike) -> tuple[FloatArray, FloatArray]: ...
def power_bracket(obj: Any, alpha: npt.ArrayLike) -> tuple[float, float] | tuple[FloatArray, FloatArray]:
    """Certified ``(lower, upper)`` on the best attack's power 1 - beta(alpha) at false-positive rate alpha.

    ``obj`` is a ppk privacy curve (a query), a :class:`~ppk.PrivacyLossDistribution` or an
    :class:`~ppk.Accountant`; ``alpha`` a number or an array in [0, 1] (vectorised).  The curve bracketed is
    the f-DP curve of the release's privacy profile: both orders of the pair (the larger delta, as ppk
    reports it), so for a symmetric pair (Gaussian, Laplace, randomized response) the trade-off curve of the
    pair itself.  Both ends are relative-accurate to about the delta bracket's own width (1e-13 for a
    Gaussian read in closed form) down to alpha = 1e-12 and below: the power is formed without
    cancellation.  Below alpha = 1e-250 the bracket is [alpha, the upper end at 1e-250].  A query with no
    certified lower end of delta (CountingQuery, NoisyQuery) takes its estimate lowered by 1e-9 relative as
    the lower end (docs/tradeoff.md).
    """
    ends, two_sided = _profile(obj)
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


def tradeoff_table(obj: Any, *, alpha_min: float = 1e-12, points: int = 100) -> list[dict[str, float]]:
    """Rows ``alpha, beta_lower, beta_upper, power_lower, power_upper`` on a log grid of ``points`` values of
    alpha from ``alpha_min`` to 1: beta = 1 - power rounded outward (beta_lower <= beta(alpha) <=
    beta_upper); the power columns keep the relative accuracy that beta, within 1e-9 of 1, cannot show."""
    alpha_min = real("alpha_min", alpha_min, minimum=ALPHA_FLOOR, maximum=1.0, min_inclusive=True,
                     max_inclusive=False)
    points = integer("points", points, minimum=2, maximum=100_000)
    alpha = np.logspace(math.log10(alpha_min), 0.0, points)
    alpha[0], alpha[-1] = alpha_min, 1.0
    lo, up = power_bracket(obj, alpha)
    beta_lo = np.nextafter(np.maximum(1.0 - up, 0.0), -np.inf).clip(0.0)
    beta_up = np.nextafter(1.0 - lo, np.inf).clip(max=1.0)
    return [dict(alpha=float(x), beta_lower=float(bl), beta_upper=float(bu), power_lower=float(pl),
                 power_upper=float(pu)) for x, bl, bu, pl, pu in zip(alpha, beta_lo, beta_up, lo, up)]


def write_tradeoff(rows: list[dict[str, float]], path: str, *, format: str | None = None) -> None:
    """Write :func:`tradeoff_table`'s rows as CSV or JSON (``format``: "csv" or "json"; default from the
    path's suffix), every number with 17 significant digits (round-trips exactly)."""
    path = text("path", path)
    fmt = format if format is not None else ("json" if path.lower().endswith(".json") else "csv")
    if fmt not in ("csv", "json"):
        raise ValueError(f"format must be 'csv' or 'json', got {fmt!r}")
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise TypeError("rows must be the list of dicts tradeoff_table returns")
    if fmt == "json":
        body = json.dumps(dict(columns=list(rows[0]) if rows else [], rows=rows), indent=1)
    else:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        names = list(rows[0]) if rows else ["alpha", "beta_lower", "beta_upper", "power_lower", "power_upper"]
        writer.writerow(names)
        for r in rows:
            writer.writerow([f"{float(r[k]):.17g}" for k in names])
        body = buf.getvalue()
    with open(path, "w", encoding="utf-8") as f:
        f.write(body)


def tradeoff_functions(obj: Any) -> tuple[Callable[[npt.ArrayLike], Any], Callable[[npt.ArrayLike], Any]]:
    """``(beta_lower, beta_upper)``: callables of alpha (vectorised) for f-DP tools that take a trade-off
    function; ``beta_lower`` is a valid (pessimistic) f-DP curve of the release."""
    def beta_lower(alpha: npt.ArrayLike) -> Any:
        return np.maximum(1.0 - np.asarray(power_bracket(obj, alpha)[1]), 0.0)

    def beta_upper(alpha: npt.ArrayLike) -> Any:
        return 1.0 - np.asarray(power_bracket(obj, alpha)[0])
    return beta_lower, beta_upper


def plot_tradeoff(obj: Any, *, alpha_min: float = 1e-12, points: int = 121, ax: Any = None, label: str | None = None,
                  path: str | None = None) -> Any:
    """Draw the certified power 1 - beta(alpha) against alpha on log-log axes (the band between the ends,
    and the chance line power = alpha); save a PNG to ``path`` if given.  Returns the Axes."""
    try:
        import matplotlib
        if ax is None and path is not None:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plot_tradeoff needs matplotlib: pip install 'ppk[plot]'", name="matplotlib") from None
    if label is not None:
        label = text("label", label)
    if path is not None:
        path = text("path", path)
    rows = tradeoff_table(obj, alpha_min=alpha_min, points=points)
    alpha = np.array([r["alpha"] for r in rows])
    lo = np.array([r["power_lower"] for r in rows])
    up = np.array([r["power_upper"] for r in rows])
    new = ax is None
    if new:
        _, ax = plt.subplots(figsize=(6.4, 4.4))
    line, = ax.loglog(alpha, up, lw=2, label=(label or "best attack") + " (certified upper end)")
    ax.fill_between(alpha, lo, up, color=line.get_color(), alpha=0.3, lw=0)
    if new:    # once a figure: another curve drawn into the same Axes shares it
        ax.loglog(alpha, alpha, color="0.5", lw=1, ls=":", label="chance (power = α)")
    ax.set_xlabel("false-positive rate α")
    ax.set_ylabel("true-positive rate 1 − β(α)")
    ax.set_title("Trade-off curve: the best membership attack's power")
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize=8, loc="lower right")
    if path is not None:
        ax.figure.savefig(path, dpi=150, bbox_inches="tight")
    return ax
