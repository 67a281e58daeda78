"""Builders of privacy loss distributions for mechanisms: two pmfs, the Gaussian and Laplace mechanisms,
and buckets from the tails of a loss (docs/accuracy.md, "Composition").

Each builder returns the PLD made by ``make`` -- the class :class:`~ppk.pld.PrivacyLossDistribution`,
whose ``from_*`` class methods call these (the module knows the constructor's keywords, not the class:
ppk.pld.distribution imports it, never the reverse).  Bucket k holds the losses in
[(k - 1) Delta, k Delta]; a loss range that needs more than ``max_buckets`` buckets is built on the
doubled interval that fits (:func:`fitting_interval`) instead of being built and merged.
"""
from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Any, Callable, Mapping, TypeVar

import numpy as np
import numpy.typing as npt

from .. import _kernels
from .._validate import flag, instance, real
from ._masses import _SLACK, LD, _check_max_buckets, round_up

T = TypeVar("T")

#: Nothing here is public on its own: PrivacyLossDistribution's methods are the API these implement.
__all__: list[str] = []

def randomized_response_pmfs(eps0: float) -> tuple[list[float], list[float]]:
    """Randomized response with local eps0: P = [e^eps0, 1] / (1 + e^eps0) against Q = P reversed (written with
    e^-eps0 so a large eps0 does not overflow).  Its loss takes the two values +-eps0, so it is also the exact
    pair of an eps0-DP discrete Laplace count (docs/ledger.md)."""
    e = math.exp(-eps0)
    p = [1.0 / (1.0 + e), e / (1.0 + e)]
    return p, p[::-1]


def fitting_interval(dx: float, span: float, extra: int, max_buckets: int, what: str) -> float:
    """The smallest dx * 2^j whose grid covers a loss range of length ``span`` in at most ``max_buckets``
    points (``span / interval + extra`` of them).  Builders use it instead of building more buckets and
    merging them right after (the constructor merges pairs, which is the doubled grid): no allocation
    beyond max_buckets, at any loss range."""
    if not math.isfinite(span):
        raise ValueError(f"{what}: its privacy loss range is beyond the float range (the two laws are "
                         "disjoint to double precision, delta = 1 at every eps of interest)")
    room = max(1, max_buckets - extra)   # a tiny max_buckets: the constructor merges the rest

    def scaled(j: int) -> float:          # dx 2^j, inf past the float range (2.0**j raises there)
        try:
            return math.ldexp(dx, j)
        except OverflowError:
            return math.inf
    # the logs separately: span / (dx room) overflows at a subnormal dx (5e-324)
    j = 0 if span <= dx * room else max(0, math.ceil(math.log2(span) - math.log2(dx) - math.log2(room)) - 1)
    # log2 rounds: settle the last step or two by checking (bounded: at most a few passes)
    while span / scaled(j) > room:
        j += 1
    out = scaled(j)
    if not math.isfinite(out):
        raise ValueError(f"{what}: its loss range {span:.3g} fits no grid of at most max_buckets = {max_buckets} "
                         "buckets within the float range")
    return out


def _log_interval_masses(log_sf_lo, log_sf_hi, log_cdf_lo, log_cdf_hi):
    """log of the mass between two edges, from whichever tail is smaller (no cancellation)."""
    upper_side = log_sf_lo < np.log(0.5)
    with np.errstate(divide="ignore"):
        up = log_sf_lo + np.log(-np.expm1(np.minimum(log_sf_hi - log_sf_lo, 0.0)))
        down = log_cdf_hi + np.log(-np.expm1(np.minimum(log_cdf_lo - log_cdf_hi, 0.0)))
    return np.where(upper_side, up, down)


def from_pmfs(make: Callable[..., T], pmf_upper: npt.ArrayLike, pmf_lower: npt.ArrayLike, *,
              value_discretization_interval: float, pessimistic_estimate: bool, tolerance: float,
              max_buckets: int, mass_rtol: float = 0.0) -> T:
    """From two pmfs on a common support: ``P = pmf_upper``, ``Q = pmf_lower``; loss log(P/Q).

    Each outcome goes to the bucket k = ceil(L / Delta), i.e. L in [(k-1) Delta, k Delta].
    The discretisation error of the reported bound is at most the P-mass of the one bucket
    that straddles eps (per order); ``delta_bracket`` gives both ends.  ``mass_rtol``: the relative error of
    each mass given (a query's computed pmfs, ppk.pld.curves; 0 for pmfs taken as exact), which the exact
    composition of the outcomes (ppk.pld._enumerated) covers.
    """
    pessimistic_estimate = flag("pessimistic_estimate", pessimistic_estimate)
    p, q = (_check_pmf(name, v, tolerance) for name, v in (("pmf_upper", pmf_upper), ("pmf_lower", pmf_lower)))
    if p.shape != q.shape:
        raise ValueError(f"pmf_upper and pmf_lower must have the same length, got {p.size} and {q.size}")
    dx = real("value_discretization_interval", value_discretization_interval, minimum=0.0, min_inclusive=False)
    max_buckets = _check_max_buckets(max_buckets)
    both = (p > 0) & (q > 0)
    loss = np.log(p[both]) - np.log(q[both])
    if loss.size:
        dx = fitting_interval(dx, float(np.max(loss) - np.min(loss)), 4, max_buckets, "the pmfs")
    x = loss / dx
    k = np.ceil(x + _SLACK * (1 + np.abs(x))).astype(np.int64)
    width = 1 + 2 * _SLACK * (1 + (float(np.max(np.abs(x))) if x.size else 0.0))
    off = int(k.min()) if k.size else 0
    size = int(k.max()) - off + 1 if k.size else 1
    mp_, mq_ = np.zeros(size, dtype=LD), np.zeros(size, dtype=LD)
    np.add.at(mp_, k - off, p[both].astype(LD))
    np.add.at(mq_, k - off, q[both].astype(LD))
    out = make(interval=dx, offset=off, mass_upper=mp_, mass_lower=mq_, width=width,
               infinity_mass_upper=p[(p > 0) & (q == 0)].astype(LD).sum(),
               infinity_mass_lower=q[(q > 0) & (p == 0)].astype(LD).sum(),
               pessimistic_estimate=pessimistic_estimate, max_buckets=max_buckets)
    # the outcomes themselves: a plan with few runs of finite pairs composes them exactly (ppk.pld._enumerated)
    setattr(out, "_finite_pair", (p[both].copy(), q[both].copy()))
    setattr(out, "_finite_rtol", float(mass_rtol))
    if loss.size:
        # |log p - log q| rounds (each log and the difference: u of the sizes), the masses' own error moves
        # it by at most 2 mass_rtol/(1 - mass_rtol): a bound on the largest |loss|, for the pure-DP cap
        lp, lq = np.abs(np.log(p[both])), np.abs(np.log(q[both]))
        bound = np.abs(loss) + 2.3e-16 * (lp + lq + np.abs(loss)) + 2.1 * mass_rtol
        setattr(out, "_max_loss", math.nextafter(float(np.max(bound)), math.inf))
    return out


def _check_pmf(name, values, tolerance):
    tolerance = real("tolerance", tolerance, minimum=0.0, maximum=1.0)
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be a non-empty 1-d array of real numbers")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} has a non-finite entry (NaN or inf)")
    if np.any(arr < 0):
        raise ValueError(f"{name} has a negative entry: {float(arr.min())}")
    total = float(arr.sum())
    if abs(total - 1.0) > tolerance:
        raise ValueError(f"{name} must sum to 1 within {tolerance}, sums to {total!r}")
    return arr


def from_tails(make: Callable[..., T], dx: float, k_lo: int, k_hi: int, log_p_up, log_p_down, log_q_up,
               log_q_down, **kw: Any) -> T:
    """Buckets k_lo+1..k_hi from the log tails at the edges k Delta, k = k_lo..k_hi.

    log_p_up[i] = log P(L > edge_i), log_p_down[i] = log P(L <= edge_i); same for Q.
    """
    lp = _log_interval_masses(log_p_up[:-1], log_p_up[1:], log_p_down[:-1], log_p_down[1:])
    lq = _log_interval_masses(log_q_up[:-1], log_q_up[1:], log_q_down[:-1], log_q_down[1:])
    return make(interval=dx, offset=k_lo + 1, mass_upper=np.exp(lp.astype(LD)), mass_lower=np.exp(lq.astype(LD)),
                overflow_mass_upper=np.exp(LD(log_p_up[-1])) + np.exp(LD(log_p_down[0])),
                overflow_mass_lower=np.exp(LD(log_q_up[-1])) + np.exp(LD(log_q_down[0])), **kw)


def scale_arguments(scale: object, sensitivity: object, value_discretization_interval: object,
                    pessimistic_estimate: object, max_buckets: object, scale_name: str
                    ) -> tuple[float, float, float, bool, int]:
    """A noise builder's arguments, validated (errors name ``scale_name`` for the noise's scale)."""
    return (real(scale_name, scale, minimum=0.0, min_inclusive=False),
            real("sensitivity", sensitivity, minimum=0.0, min_inclusive=False),
            real("value_discretization_interval", value_discretization_interval, minimum=0.0, min_inclusive=False),
            flag("pessimistic_estimate", pessimistic_estimate), _check_max_buckets(max_buckets))


def gaussian_arguments(sigma: object, sensitivity: object, value_discretization_interval: object,
                       log_mass_truncation_bound: object, pessimistic_estimate: object, max_buckets: object,
                       sigma_name: str) -> tuple[float, float, float, float, bool, int]:
    """The Gaussian builders' arguments, validated: :func:`scale_arguments` and the truncation bound."""
    sigma_, s, dx, pessimistic, buckets = scale_arguments(sigma, sensitivity, value_discretization_interval,
                                                          pessimistic_estimate, max_buckets, sigma_name)
    return sigma_, s, dx, real("log_mass_truncation_bound", log_mass_truncation_bound, maximum=-1.0), pessimistic, buckets


def gaussian(make: Callable[..., T], sigma: object, sensitivity: object, value_discretization_interval: object,
             log_mass_truncation_bound: object, pessimistic_estimate: object, max_buckets: object, sigma_name: str) -> T:
    """Gaussian mechanism N(0, sigma^2) vs N(sensitivity, sigma^2): L ~ N(+-mu, 2 mu), mu = s^2/(2 sigma^2).

    Bucket masses are exact normal-CDF differences; mass beyond the loss range where the tails fall below
    ``exp(log_mass_truncation_bound)`` goes to the overflow.  Messages name sigma ``sigma_name``
    (dp_accounting's ``standard_deviation``)."""
    sigma, s, dx, bound, pessimistic_estimate, max_buckets = gaussian_arguments(
        sigma, sensitivity, value_discretization_interval, log_mass_truncation_bound, pessimistic_estimate,
        max_buckets, sigma_name)
    ratio = s / sigma
    mu = 0.5 * ratio * ratio
    if mu < 1e-300:     # the two laws coincide to the float range: all mass at loss 0
        return make(interval=dx, offset=0, mass_upper=[1.0], mass_lower=[1.0],
                    pessimistic_estimate=pessimistic_estimate, max_buckets=max_buckets)
    sd = math.sqrt(2 * mu) if math.isfinite(mu) else math.inf
    z = math.sqrt(-2 * bound) + 2
    dx = fitting_interval(dx, 2 * (mu + z * sd), 3, max_buckets, f"sensitivity/{sigma_name} = {ratio:.3g}")
    k_lo, k_hi = math.floor((-mu - z * sd) / dx), math.ceil((mu + z * sd) / dx)
    edges = np.arange(k_lo, k_hi + 1) * dx
    zp, zq = (edges - mu) / sd, (edges + mu) / sd
    out = from_tails(make, dx, k_lo, k_hi, *_normal_tails(zp, dx / sd), *_normal_tails(zq, dx / sd),
                     pessimistic_estimate=pessimistic_estimate, max_buckets=max_buckets)
    setattr(out, "_gaussian_mu", ratio)   # a Gaussian mechanism: plans merge its runs exactly (ppk.pld._plan)
    return out


def _normal_tails(z: np.ndarray, step: float) -> tuple[np.ndarray, np.ndarray]:
    """(log P(Z > z), log P(Z <= z)) at increasing edges ``step`` apart, each only where
    :func:`_log_interval_masses` reads it: the upper tail from z > -1/2 - step on (an interval's masses come
    from it where P(Z > lo) < 1/2, z_lo > 0, and its upper edge is a step on), the lower below 1/2 + step;
    0 (log 1) elsewhere, never read (there the other tail decides).  Half the kernel's evaluations of both
    tails everywhere (a Gaussian leaf built to e^-800 has 10^5 edges and more), the same masses."""
    up, down = np.zeros_like(z), np.zeros_like(z)
    hi, lo = z > -0.5 - step, z < 0.5 + step
    logsf = _kernels.norm_logsf   # log P(Z > x); log P(Z <= x) = logsf(-x)
    up[hi], down[lo] = logsf(z[hi]), logsf(-z[lo])
    up[-1], down[0] = logsf(z[-1:])[0], logsf(-z[:1])[0]     # the overflow's two ends
    return up, down


def laplace(make: Callable[..., T], scale: object, sensitivity: object, value_discretization_interval: object,
            pessimistic_estimate: object, max_buckets: object, scale_name: str) -> T:
    """Laplace mechanism Lap(0, b) vs Lap(sensitivity, b): L in [-s/b, s/b], atoms at both ends.  Messages
    name the scale ``scale_name`` (dp_accounting's ``parameter``)."""
    b, s, dx, pessimistic_estimate, max_buckets = scale_arguments(
        scale, sensitivity, value_discretization_interval, pessimistic_estimate, max_buckets, scale_name)
    e0 = s / b
    dx = fitting_interval(dx, 2 * e0, 4, max_buckets, f"sensitivity/{scale_name} = {e0:.3g}")
    k_top = max(1, math.ceil(e0 / dx - _SLACK))
    edges = np.arange(-k_top, k_top + 1) * dx
    # continuous part: o in (0, s), L = (s - 2o)/b decreasing; L <= e  <=>  o >= (s - b e)/2
    o = np.clip((s - b * np.clip(edges, -e0, e0)) / 2, 0.0, s)
    # P = Lap(0, b) on o >= 0: P(o >= x) = e^{-x/b}/2;  Q = Lap(s, b) on o <= s: Q(o <= x) = e^{-(s-x)/b}/2
    p_cont_le = 0.5 * (np.exp(-o / b) - math.exp(-s / b))           # P(0 <= o < s, L <= e)
    q_cont_le = 0.5 * (1 - np.exp(-(s - o) / b))                     # Q(0 <= o < s, L <= e)
    # + the atom at L = -e0 (o >= s), below an edge only if the edge is at or above -e0: when e0 is not on
    # the grid the first edge lies below it, and counting the atom there put it a bucket too low (its Q-mass
    # read as P e^{k_top dx} > P e^{e0}: delta under-reported, ~1 % for b = 30 x 3 at dx = 1e-3)
    atom_below = edges >= -e0
    p_cdf = np.where(atom_below, LD(0.5 * math.exp(-s / b)), LD(0)) + p_cont_le.astype(LD)
    q_cdf = np.where(atom_below, LD(0.5), LD(0)) + q_cont_le.astype(LD)
    mp_, mq_ = np.diff(p_cdf), np.diff(q_cdf)
    mp_[-1] += LD(0.5)                                              # atom at L = +e0 (o <= 0)
    mq_[-1] += LD(0.5 * math.exp(-s / b))
    mp0 = np.zeros(mp_.size + 1, dtype=LD)
    mq0 = np.zeros(mq_.size + 1, dtype=LD)
    mp0[1:], mq0[1:] = mp_, mq_
    mp0[0], mq0[0] = p_cdf[0], q_cdf[0]                               # the atom at -e0
    out = make(interval=dx, offset=-k_top, mass_upper=mp0, mass_lower=mq0, width=1 + 2 * _SLACK * (1 + k_top),
               pessimistic_estimate=pessimistic_estimate, max_buckets=max_buckets)
    setattr(out, "_max_loss", laplace_loss_bound(s, b))   # pure DP: |L| <= s/b (docs/accuracy.md)
    # x -> s - x swaps Lap(0, b) and Lap(s, b): both orders have one delta(eps) (a plan reads one of them)
    setattr(out, "_symmetric", True)
    return out


def laplace_loss_bound(s: float, b: float) -> float | None:
    """s/b rounded up: the Laplace mechanism's largest |loss| (its pure-DP eps), never below the true one; None
    beyond the double range."""
    try:
        return round_up(Fraction(s) / Fraction(b))
    except OverflowError:
        return None


def pmfs_of_mappings(log_probability_mass_function_lower: Mapping[Any, float],
                     log_probability_mass_function_upper: Mapping[Any, float]) -> tuple[np.ndarray, np.ndarray]:
    """dp_accounting's two mappings outcome -> log probability as the pmfs (P, Q) on their common support:
    ``upper`` the law P with the challenge row, ``lower`` the law Q without it."""
    upper = _log_pmf("log_probability_mass_function_upper", log_probability_mass_function_upper)
    lower = _log_pmf("log_probability_mass_function_lower", log_probability_mass_function_lower)
    keys = list(dict.fromkeys([*upper, *lower]))
    p = np.exp([upper.get(x, -math.inf) for x in keys])
    q = np.exp([lower.get(x, -math.inf) for x in keys])
    return p, q


def _log_pmf(name: str, value: object) -> dict[Any, float]:
    """A mapping outcome -> log probability (each <= 0, -inf for 0) whose probabilities sum to 1 within 1e-6."""
    instance(name, value, Mapping, "a mapping outcome -> log probability (a dict)")
    out: dict[Any, float] = {}
    for key, v in value.items():   # type: ignore[attr-defined]
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            raise TypeError(f"{name}[{key!r}] must be a log probability (a real number <= 0), got "
                            f"{type(v).__name__}")
        try:
            x = float(v)
        except OverflowError:
            raise ValueError(f"{name}[{key!r}] must be a log probability <= 0, got a number beyond the float "
                             "range") from None
        if math.isnan(x) or x > 1e-6:   # a log probability, up to the rounding the sum's tolerance takes
            raise ValueError(f"{name}[{key!r}] must be a log probability in [-inf, 0], got {x!r}")
        out[key] = x
    total = math.fsum(math.exp(x) for x in out.values())
    if abs(total - 1.0) > 1e-6:
        raise ValueError(f"{name} must hold log probabilities whose probabilities sum to 1 within 1e-06, "
                         f"sums to {total!r}")
    return out

