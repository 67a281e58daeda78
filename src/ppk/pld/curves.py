"""The privacy loss distribution of any query's privacy curve (``PrivacyLossDistribution.from_curve``).

A query that knows its privacy loss exactly says how (``PrivacyCurve._exact_loss``, ppk._curve): the
exact tails of the loss (the noisy count's, from the counting kernel), a Gaussian mechanism or two
pmfs; the PLD is then built from them.  Any other query -- a NoisyQuery off the counting kernel, a
HistogramQuery, OverlappingCounts -- gives only its certified upper curve; the PLD is then the
pessimistic "connect-the-dots" pair of Doroshenko, Ghazi, Kamath, Kumar and Manurangsi ("Connect the
Dots: Tighter Discrete Approximations of Privacy Loss Distributions", PETS 2022) built from that
curve alone (:func:`connect_the_dots`, whose docstring proves it dominates the query).

Like the other builders these return the PLD made by ``make`` (the class); the caller sets its
shared-rows key (``PrivacyCurve._rows_key``).
"""
from __future__ import annotations

import math
from typing import Any, Callable, TypeVar

import numpy as np

from .._curve import ExactLoss, PrivacyCurve
from .._logmath import log1mexp
from . import _knots
from ._masses import _MASS_RTOL, LD, MAX_BUILD_BUCKETS, _Masses
from .mechanisms import fitting_interval, from_pmfs, from_tails, gaussian

T = TypeVar("T")

#: Nothing here is public on its own: PrivacyLossDistribution's methods are the API these implement.
__all__: list[str] = []

#: The largest eps a connect-the-dots pair reaches: its atoms carry e^eps in long double (to ~e^11356).
MAX_REACH = 1e4


def from_exact_loss(make: Callable[..., T], curve: PrivacyCurve, exact: ExactLoss, *, dx: float, bound: float,
                    pessimistic_estimate: bool, max_buckets: int) -> T:
    """The PLD of a loss the query knows exactly: a Gaussian mechanism, two pmfs, or the loss's tails."""
    if exact.form == "gaussian":
        return gaussian(make, exact.sigma, 1.0, dx, bound, pessimistic_estimate, max_buckets, "sigma")
    if exact.form == "pmfs":
        assert exact.pmfs is not None
        # a query's pmfs are computed (a count's are exp of log pmfs in double): each mass is taken within the
        # builders' relative allowance of the truth (docs/accuracy.md, "Rounding")
        return from_pmfs(make, exact.pmfs[0], exact.pmfs[1], value_discretization_interval=dx, tolerance=1e-6,
                         pessimistic_estimate=pessimistic_estimate, max_buckets=max_buckets, mass_rtol=_MASS_RTOL)
    if exact.form != "tails":
        raise ValueError(f"{curve!r} names an unknown form of exact loss: {exact.form!r}")
    return _from_loss_tails(make, curve, exact.symmetric, dx=dx, bound=bound,
                            pessimistic_estimate=pessimistic_estimate, max_buckets=max_buckets)


def _from_loss_tails(make: Callable[..., T], curve: PrivacyCurve, symmetric: bool, *, dx: float, bound: float,
                     pessimistic_estimate: bool, max_buckets: int) -> T:
    """Buckets from the exact tails of the loss (a noisy count's: its loss is monotone in the output,
    docs/method.md, so bucket k's masses are the masses of the output interval between the thresholds
    where the loss is (k-1) Delta and k Delta: two tail evaluations per edge, no output grid).  When the
    loss range needs more than ``max_buckets`` buckets the interval is doubled before building, as the
    constructor would after."""
    def tails(eps: np.ndarray, mirrored: bool) -> tuple[np.ndarray, np.ndarray]:
        return curve._loss_tail_logs(eps, mirrored=mirrored)

    def reach(mirrored: bool) -> int:   # buckets until both tails are below the bound
        k = 1
        while k <= MAX_BUILD_BUCKETS:
            la, lb = tails(np.array([k * dx]), mirrored)
            if max(la[0], lb[0]) < bound:
                return k
            k *= 2
        raise ValueError(f"the loss range of {curve!r} down to tails of exp(log_mass_truncation_bound = "
                         f"{bound:.6g}) needs more than {MAX_BUILD_BUCKETS} buckets of value_discretization_"
                         f"interval = {dx:.6g}: use a larger value_discretization_interval or a larger "
                         "log_mass_truncation_bound")
    # symmetric (a count at p = 1/2: X -> N - X maps the law to itself): the reversed pair's tails at e are
    # the forward ones at e, P(L <= -e) = Q(L > e) and Q(L <= -e) = P(L > e)
    k_hi = reach(False)
    k_lo = k_hi if symmetric else reach(True)
    # more buckets than max_buckets would be merged in pairs (the interval doubling) right after
    # they are built; merged buckets are exactly the buckets of the doubled interval, so build those
    while k_hi + k_lo + 1 > max_buckets:
        dx, k_hi, k_lo = 2 * dx, -(-k_hi // 2), -(-k_lo // 2)
    up = np.arange(0, k_hi + 1) * dx
    down = np.arange(1, k_lo + 1) * dx                     # losses -dx, -2dx, ... via the reversed pair
    la, lb = tails(up, False)                             # P(L > e), Q(L > e), e >= 0
    not_la, not_lb = log1mexp(la), log1mexp(lb)           # P(L <= e), Q(L <= e)
    # reversed: P(L <= -e) = B', Q(L <= -e) = A' (and their complements)
    if symmetric:
        ma, mb, not_ma, not_mb = la[1:], lb[1:], not_la[1:], not_lb[1:]
    else:
        ma, mb = tails(down, True)
        not_ma, not_mb = log1mexp(ma), log1mexp(mb)
    log_p_up = np.concatenate([not_mb[::-1], la])
    log_p_down = np.concatenate([mb[::-1], not_la])
    log_q_up = np.concatenate([not_ma[::-1], lb])
    log_q_down = np.concatenate([ma[::-1], not_lb])
    return from_tails(make, dx, -k_lo, k_hi, log_p_up, log_p_down, log_q_up, log_q_down,
                      pessimistic_estimate=pessimistic_estimate, max_buckets=max_buckets)


def connect_the_dots(make: Callable[..., T], curve: PrivacyCurve, *, dx: float, bound: float,
                     pessimistic_estimate: bool, max_buckets: int, curve_points: int) -> T:
    """A pair that dominates every neighbouring pair of the query, from its certified upper curve alone.

    U(e) = ``curve.log_delta_upper`` bounds max(H_a(P||Q), H_a(Q||P)), a = e^e >= 1, for every neighbouring
    pair (P, Q) of the query, H_a(P||Q) = sum (P - a Q)_+ the hockey stick.  On knots e_j >= 0 (multiples
    of the grid, at most ``curve_points`` of them, up to where U falls below ``exp(bound)``: evenly spaced
    for a cheap curve, placed by the fall of U for a summed one, ppk.pld._knots) take g_j = min_{i <= j} U(e_i),
    U(e_i) any certified upper end (the proof below uses nothing else).  The pair built here is symmetric (its loss under Q
    is minus its loss under P) and its profile G(a) = H_a(P*||Q*) is, for a >= 1, the lower convex hull
    of the points (e^e_j, g_j) and of their mirror images T(a, g) = (1/a, 1 - 1/a + g/a), flat at g_J
    beyond the last knot; for a < 1 it is 1 - a + a G(1/a).

    Proof of dominance.  Fix a neighbouring pair (P, Q); h(a) = H_a(P||Q) and h'(a) = H_a(Q||P) are
    convex and non-increasing, and h(a) = 1 - a + a h'(1/a).  Every point (e^e_j, g_j) lies above both
    (g_j >= U(e_i) >= h(e^e_i) >= h(e^e_j) for the i <= j attaining the minimum), and so does every mirror
    image: 1 - 1/a + g/a >= 1 - 1/a + h'(a)/a = h(1/a), likewise for h'.  A lower convex hull lies above
    every convex function that lies below its points, so G >= h and G >= h' between the outermost points;
    beyond them G is g_J >= h(a) (a >= e^e_J, h non-increasing) and its mirror image.  So
    H_a(P*||Q*) >= H_a(P||Q) and, the pair being symmetric, H_a(Q*||P*) = G(a) >= H_a(Q||P), for all
    a > 0: (P*, Q*) dominates both orders of every neighbouring pair.  By Blackwell's theorem each is a
    post-processing of (P*, Q*), and products of dominating pairs dominate the products (Zhu, Dong and
    Wang, AISTATS 2022, on dominating pairs): the composed PLD's upper end is >= the true delta.

    The masses: G is piecewise linear in a with kinks at the hull's vertices; the P-mass of the atom at
    e_v is a_v = e^e_v (slope right - slope left), read off in e-space (no e^e is formed: the slopes
    times e^e_v are (g_v - g_next)/expm1(e_next - e_v) and (g_prev - g_v)/-expm1(e_prev - e_v)), its
    Q-mass a_v e^-e_v; the mirror atom at -e_v has them swapped, and g_J sits at +-inf (the overflow,
    counted by the upper end only).  Rounding can make a mass of a nearly straight vertex negative;
    it is raised to 0, which only raises G.

    How loose: ``curve_looseness`` on the PLD (ppk.pld._knots.looseness, docs/accuracy.md "Any query").

    The lower end: the curve bounds delta from above only, so the bucket representation is the pair of
    two equal laws (delta = 0 at every eps >= 0), below every pair; composed with other PLDs it leaves
    their lower ends as they are (composing more releases never lowers delta).
    """
    reach = _reach(curve, dx, bound)
    dx = fitting_interval(dx, 2 * reach, 3, max_buckets, repr(curve))
    k_reach = max(1, math.ceil(reach / dx))
    knots, log_l, log_u = _knots.knots(curve, dx, bound, k_reach, curve_points)
    eps = knots * dx
    log_g = np.minimum.accumulate(log_u).astype(LD)         # the truth is non-increasing
    e = eps.astype(LD)
    g = np.exp(log_g)
    # the first vertex: where the mirror-image chord is lowest at a = 1, i.e. (1 - g)/(a + 1) largest
    with np.errstate(divide="ignore"):
        start = int(np.argmax(np.log(-np.expm1(log_g)) - e - np.log1p(np.exp(-e))))
    v = start + _lower_hull(e[start:], g[start:])
    p_atoms = _vertex_masses(e[v], g[v])
    k = knots[v]
    size = 2 * int(knots[-1]) + 1
    mid = int(knots[-1])
    p, q = np.zeros(size, dtype=LD), np.zeros(size, dtype=LD)
    # the atoms at e_v > 0 and their mirror images at -e_v (an atom at 0 is its own mirror image)
    p[mid + k] += p_atoms
    q[mid + k] += p_atoms * np.exp(-e[v])
    outer = k > 0
    p[mid - k[outer]] += p_atoms[outer] * np.exp(-e[v][outer])
    q[mid - k[outer]] += p_atoms[outer]
    atoms = _Masses(-mid, p, q, 0.0, overflow_p=g[-1], overflow_q=g[-1])
    out: Any = make(interval=dx, offset=0, mass_upper=[1.0], mass_lower=[1.0], width=1.0,
                    pessimistic_estimate=pessimistic_estimate, max_buckets=max_buckets,
                    log_mass_truncation_bound=bound, _atoms=atoms)
    left0 = (g[v[0]] - 1) / (1 + np.exp(-e[v[0]])) if e[v[0]] > 0 else LD(0)
    hull = _knots.hull_at_knots(e, g, v, left0)
    out.curve_looseness = _knots.looseness(e, hull, g, np.minimum(log_l, log_g).astype(LD), bound)
    out._curve_knots = int(knots.size)
    return out


def _reach(curve: PrivacyCurve, dx: float, bound: float) -> float:
    """An eps at which the certified upper curve is below ``exp(bound)``, within 1/16 (or dx) of the least;
    or where it stops falling (a mass at infinite loss, e.g. a noiseless count's: the flat end is that
    mass, so knots beyond would add nothing)."""
    def below(e: float) -> bool:
        return _knots.coarse_upper(curve, e) < bound
    if below(0.0):
        return 0.0
    lo, hi = 0.0, 1.0
    before = _knots.coarse_upper(curve, 0.0)
    while not below(hi):
        now = _knots.coarse_upper(curve, hi)
        if before - now < 1e-9:
            return hi
        before, lo, hi = now, hi, 2 * hi
        if hi > MAX_REACH:
            raise ValueError(f"the certified delta of {curve!r} stays above exp(log_mass_truncation_bound = "
                             f"{bound:.6g}) up to eps = {MAX_REACH:g}: it has no privacy loss distribution ppk can "
                             "hold (raise log_mass_truncation_bound, or add noise)")
    while hi - lo > max(hi / 16, dx):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if below(mid) else (mid, hi)
    return hi


def _lower_hull(x: Any, y: Any) -> np.ndarray:
    """Indices of the vertices of the lower convex hull of the points (e^x_i, y_i), x increasing, y
    non-increasing (so the hull's slopes are <= 0 and its last point is a vertex).  Points above the chord
    of their neighbours are dropped all at once (none of them is a vertex), until none is left."""
    idx = np.arange(x.size)
    while idx.size > 2:
        xs, ys = x[idx], y[idx]
        # slope of each chord, in units of e^x of its left end: (y_r - y_l) / expm1(x_r - x_l)
        s = (ys[1:] - ys[:-1]) / np.expm1(xs[1:] - xs[:-1])
        # point i is above its neighbours' chord iff its left slope exceeds its right one; as slopes in a
        # they are s[i-1] e^-x_(i-1) and s[i] e^-x_i, compared here times e^x_i
        left = s[:-1] * np.exp(xs[1:-1] - xs[:-2])
        drop = np.flatnonzero(left > s[1:]) + 1
        if drop.size == 0:
            break
        idx = np.delete(idx, drop)
    return idx


def _vertex_masses(x: Any, y: Any) -> Any:
    """P-masses a_v of the atoms at the hull's vertices (x = e_v, y = G there; module docstring), >= 0."""
    n = x.size
    right = np.zeros(n, dtype=LD)      # e^x_v times the slope after v (0 after the last: G is flat there)
    left = np.zeros(n, dtype=LD)       # e^x_v times the slope before v
    if n > 1:
        right[:-1] = (y[1:] - y[:-1]) / np.expm1(x[1:] - x[:-1])
        left[1:] = (y[1:] - y[:-1]) / -np.expm1(x[:-1] - x[1:])
    if x[0] > 0:
        # before the first vertex: the chord to its mirror image, slope (y - 1)/(a + 1)
        left[0] = (y[0] - 1) / (1 + np.exp(-x[0]))
        masses = right - left
    else:
        # a vertex at a = 1: its left slope is the mirror image's, -1 + y_0 - slope_0, and the atom at 0
        # takes the whole kink (it is its own mirror image)
        masses = right - left
        masses[0] = 1 - y[0] + 2 * right[0]
    return np.maximum(masses, LD(0))
