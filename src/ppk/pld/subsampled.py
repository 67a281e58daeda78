"""Builders of privacy loss distributions for Poisson-subsampled Gaussian and Laplace mechanisms
(docs/accuracy.md, "Composition"), in dp_accounting's conventions.

With sampling probability q the challenge row enters the output with probability q.  For noise mu of
scale sigma (b) and sensitivity s, dp_accounting's pairs (mu_upper, mu_lower) are

* ``"remove"``: P = (1 - q) mu(x) + q mu(x + s) against Q = mu(x);
* ``"add"``:    mu(x) against (1 - q) mu(x) + q mu(x - s) -- the mirror image x -> -x of (Q, P).

So one pair (P, Q) has H(P || Q) = delta_remove and H(Q || P) = delta_add.  ``"add_or_remove"`` (the
default) is the remove pair reported as the larger of its two orders, max(delta_remove, delta_add), as
dp_accounting does.  ``"remove"`` and ``"add"`` alone are *one-sided* PLDs: the pair oriented so that
``mass_upper`` is dp_accounting's mu_upper of that adjacency, and only H(P || Q) reported.  A plan stays
one-sided when every leaf is one-sided or symmetric (a Gaussian mechanism), an eager composition when both
parts are one-sided: otherwise both orders of the composed pair are read, never less than either.

The loss of the remove pair is L = log(1 - q + q e^l), l the loss of the unsubsampled pair; L is monotone
in the output, so every bucket edge k Delta is one output value, in closed form, and the bucket masses
are exact differences of the two laws' tails there, taken in log space from the smaller tail.
"""
from __future__ import annotations

import math
from typing import Callable, TypeVar

import numpy as np

from .. import _kernels
from .._validate import choice, real
from . import mechanisms
from ._masses import LD
from .mechanisms import _log_interval_masses, fitting_interval

T = TypeVar("T")

#: Nothing here is public on its own: PrivacyLossDistribution's builders are the API these implement.
__all__: list[str] = []

#: dp_accounting's adjacencies of a subsampled mechanism; the first is the default of its builders.
ADJACENCIES = ("add_or_remove", "remove", "add")

_LOG2 = math.log(2.0)
_EXP_SAFE = 700.0    # below, e^x and expm1(x) are finite; above, the large-argument forms are used


def check_subsampling(sampling_prob: object, adjacency: object) -> tuple[float, str]:
    """``sampling_prob`` in (0, 1] and ``adjacency`` one of :data:`ADJACENCIES`, validated."""
    q = real("sampling_prob", sampling_prob, minimum=0.0, maximum=1.0, min_inclusive=False)
    return q, choice("adjacency", adjacency, ADJACENCIES)


def subsampled_loss(ell: float, q: float) -> float:
    """log(1 - q + q e^ell): the remove pair's loss where the unsubsampled pair's loss is ``ell``."""
    if ell <= _EXP_SAFE:
        return math.log1p(q * math.expm1(ell))
    return ell + math.log(q) + math.log1p((1 - q) / q * math.exp(-ell))


def unsubsampled_loss(loss: np.ndarray, q: float) -> np.ndarray:
    """The inverse of :func:`subsampled_loss`, log(1 + (e^L - 1)/q) (increasing); -inf at and below
    L = log(1 - q), the smallest loss of the remove pair.  No cancellation: expm1/log1p below, and
    L - log q + log1p(-(1 - q) e^-L) where e^L would overflow."""
    loss = np.asarray(loss, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        y = np.expm1(np.minimum(loss, _EXP_SAFE)) / q
        small = np.where(y > -1.0, np.log1p(np.maximum(y, -1.0)), -np.inf)
        large = loss - math.log(q) + np.log1p(-(1 - q) * np.exp(-np.maximum(loss, _EXP_SAFE)))
    return np.where(loss <= _EXP_SAFE, small, large)


def _mixture(log_a: np.ndarray, log_b: np.ndarray, q: float) -> np.ndarray:
    """log((1 - q) e^log_a + q e^log_b): a tail of P from the tails of its two components."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.logaddexp(math.log1p(-q) + log_a, math.log(q) + log_b)


def _build(make: Callable[..., T], dx: float, k_lo: int, tails: list, adjacency: str, **kw: object) -> T:
    """The PLD of buckets k_lo+1..k_hi of the remove pair from the log tails [p_up, p_down, q_up, q_down]
    at its edges k Delta, k = k_lo..k_hi (``up``: P(L > edge), ``down``: P(L <= edge)); the mass beyond
    both end edges goes to the overflow.  ``"add"`` gets the mirror image (L -> -L, P and Q swapped).
    The list is emptied: the tails go before the PLD is made (a lower peak while it makes its atoms)."""
    p_up, p_down, q_up, q_down = tails
    tails.clear()
    with np.errstate(invalid="ignore", divide="ignore"):
        # both tails 0 at both edges (beyond a loss range's end) is a mass 0, not the NaN of -inf - -inf
        lp = np.nan_to_num(_log_interval_masses(p_up[:-1], p_up[1:], p_down[:-1], p_down[1:]), nan=-np.inf)
        lq = np.nan_to_num(_log_interval_masses(q_up[:-1], q_up[1:], q_down[:-1], q_down[1:]), nan=-np.inf)
    mp, mq = np.exp(lp.astype(LD)), np.exp(lq.astype(LD))
    over_p = np.exp(LD(p_up[-1])) + np.exp(LD(p_down[0]))
    over_q = np.exp(LD(q_up[-1])) + np.exp(LD(q_down[0]))
    del p_up, p_down, q_up, q_down, lp, lq
    offset = k_lo + 1
    if adjacency == "add":
        # bucket k (losses in [(k-1) Delta, k Delta]) of the remove pair is bucket 1 - k of its mirror image
        offset = 2 - offset - mp.size
        mp, mq, over_p, over_q = mq[::-1].copy(), mp[::-1].copy(), over_q, over_p
    out = make(interval=dx, offset=offset, mass_upper=mp, mass_lower=mq, overflow_mass_upper=over_p,
               overflow_mass_lower=over_q, **kw)
    setattr(out, "_one_sided", adjacency != "add_or_remove")   # one adjacency: only H(P || Q) is its delta
    return out


def gaussian(make: Callable[..., T], sigma: object, sensitivity: object, sampling_prob: object,
             value_discretization_interval: object, log_mass_truncation_bound: object, pessimistic_estimate: object,
             max_buckets: object, adjacency: object, sigma_name: str) -> T:
    """Poisson-subsampled Gaussian mechanism: the remove pair P = (1 - q) N(0, sigma^2) + q N(-s, sigma^2)
    against Q = N(0, sigma^2) (module docstring: one pair serves all three adjacencies; ``"remove"`` and
    ``"add"`` alone report their own order).

    In t = x / sigma, r = s / sigma, the unsubsampled loss is l = -r t - r^2/2 and L = log(1 - q + q e^l)
    decreases in t, from +inf to log(1 - q): the edge L = k Delta is t = -l_k / r - r/2, and the tails
    there are normal tails (the kernel's log normal tail; P's a two-term mixture, summed in log space).
    Beyond the t where both laws' tails fall below ``exp(log_mass_truncation_bound)`` the mass goes to
    the overflow, as for :func:`ppk.pld.mechanisms.gaussian`.  ``sampling_prob = 1`` is that builder's
    result.  Messages name sigma ``sigma_name`` (dp_accounting's ``standard_deviation``)."""
    q, adjacency = check_subsampling(sampling_prob, adjacency)
    if q == 1.0:
        return mechanisms.gaussian(make, sigma, sensitivity, value_discretization_interval, log_mass_truncation_bound,
                                   pessimistic_estimate, max_buckets, sigma_name)
    sigma, s, dx, bound, pessimistic_estimate, max_buckets = mechanisms.gaussian_arguments(
        sigma, sensitivity, value_discretization_interval, log_mass_truncation_bound, pessimistic_estimate,
        max_buckets, sigma_name)
    r = s / sigma
    if 0.5 * r * r < 1e-300:     # the two laws coincide to the float range: all mass at loss 0
        return make(interval=dx, offset=0, mass_upper=[1.0], mass_lower=[1.0],
                    pessimistic_estimate=pessimistic_estimate, max_buckets=max_buckets)
    # both laws put less than e^bound beyond t = z (Q's tail; P's components N(0,1), N(-r,1) less) and
    # below t = -z - r (Q's and N(-r,1)'s tails there are at most the standard tail at z)
    z = math.sqrt(-2 * bound) + 2
    top, bottom = subsampled_loss(r * (z + 0.5 * r), q), subsampled_loss(-r * (z + 0.5 * r), q)
    dx = fitting_interval(dx, top - bottom, 3, max_buckets,
                          f"sensitivity/{sigma_name} = {r:.3g} at sampling_prob = {q:.3g}")
    k_lo, k_hi = math.floor(bottom / dx), math.ceil(top / dx)
    k_hi = max(k_hi, k_lo + 1)
    ell = unsubsampled_loss(np.arange(k_lo, k_hi + 1) * dx, q)
    with np.errstate(invalid="ignore"):
        t = np.where(np.isneginf(ell), np.inf, -ell / r - 0.5 * r)   # L <= log(1 - q): no output at all
    logsf = _kernels.norm_logsf   # log P(Z > x); log P(Z <= x) = logsf(-x)
    # L > edge <=> output t' < t:  Q(t' < t) = Phi(t);  P = (1 - q) Phi(t) + q Phi(t + r)
    q_up, q_down = logsf(-t), logsf(t)
    p_up, p_down = _mixture(q_up, logsf(-t - r), q), _mixture(q_down, logsf(t + r), q)
    del ell, t
    tails = [p_up, p_down, q_up, q_down]
    del p_up, p_down, q_up, q_down
    return _build(make, dx, k_lo, tails, adjacency, pessimistic_estimate=pessimistic_estimate,
                  max_buckets=max_buckets)


def laplace(make: Callable[..., T], scale: object, sensitivity: object, sampling_prob: object,
            value_discretization_interval: object, pessimistic_estimate: object, max_buckets: object,
            adjacency: object, scale_name: str) -> T:
    """Poisson-subsampled Laplace mechanism: the remove pair P = (1 - q) Lap(0, b) + q Lap(-s, b) against
    Q = Lap(0, b) (adjacencies as for :func:`gaussian`).

    The unsubsampled loss l = (|x| - |x + s|)/b is e0 = s/b for x <= -s, -e0 for x >= 0 and decreasing in
    between, so L = log(1 - q + q e^l) has an atom at each end of [L(-e0), L(e0)] and is monotone inside:
    the edge L = k Delta is x = -(b l_k + s)/2, where both laws' tails are exponentials (in log space).
    ``sampling_prob = 1`` is :func:`ppk.pld.mechanisms.laplace`'s result.  Messages name the scale
    ``scale_name`` (dp_accounting's ``parameter``)."""
    q, adjacency = check_subsampling(sampling_prob, adjacency)
    if q == 1.0:
        return mechanisms.laplace(make, scale, sensitivity, value_discretization_interval, pessimistic_estimate,
                                  max_buckets, scale_name)
    b, s, dx, pessimistic_estimate, max_buckets = mechanisms.scale_arguments(
        scale, sensitivity, value_discretization_interval, pessimistic_estimate, max_buckets, scale_name)
    e0 = s / b
    lowest, highest = subsampled_loss(-e0, q), subsampled_loss(e0, q)
    dx = fitting_interval(dx, highest - lowest, 4, max_buckets,
                          f"sensitivity/{scale_name} = {e0:.3g} at sampling_prob = {q:.3g}")
    # end edges strictly below the lower atom and at or above the upper one: no mass beyond them
    k_lo, k_hi = math.floor(lowest / dx), math.ceil(highest / dx)
    k_lo -= k_lo * dx >= lowest
    k_hi += k_hi * dx < highest
    ell = np.clip(unsubsampled_loss(np.arange(k_lo, k_hi + 1) * dx, q), -e0, e0)
    # in units of b: a = -x/b (x in [-s, 0]), c = (x + s)/b; L > edge <=> output x' < x
    a, c = (e0 + ell) / 2, (e0 - ell) / 2
    q_up, q_down = -a - _LOG2, np.log1p(-0.5 * np.exp(-a))            # Lap(0, b): P(x' < x) = e^{x/b}/2
    o_up, o_down = np.log1p(-0.5 * np.exp(-c)), -c - _LOG2            # Lap(-s, b): P(x' >= x) = e^{-c}/2
    p_up, p_down = _mixture(q_up, o_up, q), _mixture(q_down, o_down, q)
    for up in (p_up, q_up):
        up[-1] = -np.inf      # nothing above the upper atom
    for down in (p_down, q_down):
        down[0] = -np.inf     # nothing below the lower atom
    p_up[0] = q_up[0] = p_down[-1] = q_down[-1] = 0.0
    out = _build(make, dx, k_lo, [p_up, p_down, q_up, q_down], adjacency,
                 pessimistic_estimate=pessimistic_estimate, max_buckets=max_buckets)
    # pure DP: |L| <= max(L(e0), -L(-e0)) in both orders.  Each is a few roundings of expm1, a product and
    # log1p; log1p(y) near y = -q amplifies them by at most 1/(1 - q): 1e-13/(1 - q) relative covers that
    e0_up = mechanisms.laplace_loss_bound(s, b)
    if e0_up is not None:
        top = max(subsampled_loss(e0_up, q), -subsampled_loss(-e0_up, q))
        setattr(out, "_max_loss", math.nextafter(top * (1 + 1e-13 / (1 - q)), math.inf))
    return out
