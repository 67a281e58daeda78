"""The "hiding among the clones" bound on shuffled randomized response, and plain randomized response.

Feldman, McMillan and Talwar (FOCS 2021, arXiv 2012.12803, Theorem 3.2 and the numerical method of
their Section 5 / Appendix E) bound the privacy of ``n`` shuffled ``eps0``-DP reports by the
hockey-stick divergence of one pair of distributions on two counts::

    C ~ Bin(n - 1, p),  A | C ~ Bin(C, 1/2),  Delta ~ Bern(e^eps0 / (e^eps0 + 1)),
    P = (A + Delta, C - A + 1 - Delta),   Q = (A + 1 - Delta, C - A + Delta).

``p`` is the probability that another user's report is a "clone" of the target's:

* ``variant="fmt21"``: ``p = e^-eps0``, the FOCS 2021 theorem for any ``eps0``-DP randomizer; the
  reference code (github.com/apple/ml-shuffling-amplification) uses it, and so does the bracket it
  publishes (n = 1e6, eps0 = 4, delta = 1e-6: eps in [0.049416, 0.050203]).
* ``variant="fmt23"``: ``p = 2 / (e^eps0 + 1)``, the "stronger clones" of Feldman, McMillan and Talwar
  (SODA 2023, arXiv 2208.04591).  For binary randomized response the decomposition is exact:
  ``R(x) = 2r (R(0) + R(1))/2 + (1 - 2r) [x]`` with ``r = 1/(e^eps0 + 1)``, so the pair bounds the
  shuffled count (the count is a post-processing of the pair with the clones' origin revealed).

Evaluation.  The second count is ``C + 1 - first``, so ``C`` is seen: given ``C = c``
the first count has ``P_c(a) = b(a) (e0 t_a + 1)/(e0 + 1)``, ``Q_c(a) = b(a) (t_a + e0)/(e0 + 1)``
with ``b = Bin(c, 1/2)``, ``e0 = e^eps0`` and ``t_a = a/(c - a + 1) = b(a - 1)/b(a)``.  The loss grows
with ``a``, so ``P_c - e^eps Q_c > 0`` exactly for ``a >= u = floor(tau (c + 1)) + 1`` with
``tau = (e^(eps+eps0) - 1)/((e0 - 1)(e^eps + 1))``, and summing ``b(a) t_a = b(a - 1)`` gives the row in
closed form::

    delta_c = b(u - 1) [(e0 - e^eps)/(e0 + 1) - (e^eps - 1) S(u)/b(u - 1)],   S(u) = P(Bin(c, 1/2) >= u).

``S(u)/b(u)`` comes from the incomplete beta function's continued fraction (DLMF 8.17.22), which
converges in tens of terms in the tail and needs no pmf sums.  The mirror ``a -> c + 1 - a`` maps
``P_c`` to ``Q_c``, so both orders of the divergence are equal.  Rows ``c`` whose ``Bin(n - 1, p)``
log-pmf is more than ``cut`` below its mode are left out and their whole mass is added (each row's
delta is at most 1), so the value is an upper bound of the pair's divergence up to rounding.
"""
from __future__ import annotations

import functools
import math
from typing import Literal

import numpy as np
import numpy.typing as npt

from .._kernels import binom_logpmf
from .._validate import choice, integer, real

__all__ = ["clone_bound_delta", "clone_bound_epsilon", "rr_dp_delta", "rr_dp_epsilon"]

Variant = Literal["fmt21", "fmt23"]
VARIANTS = ("fmt21", "fmt23")

#: Rows of C whose log-pmf is this far below the mode are left out (their mass is added to delta).
_CUT = 60.0
#: The left-out mass is kept below this fraction of delta (a second pass widens the window).
_LEFTOUT_RTOL = 1e-12
#: Rows between two anchors of the binomial log-pmf path (see _path_logpmf).
_BLOCK = 64
#: Relative width to which clone_bound_epsilon brackets eps before returning the upper end.
_EPS_RTOL = 1e-6


def _eps0(eps0) -> float:
    # e^eps0 must stay finite and e^-eps0 a normal number for the clone probability.
    return real("eps0", eps0, minimum=0.0, min_inclusive=False, maximum=700.0)


def _clone_probability(eps0: float, variant: str) -> float:
    if variant == "fmt21":
        return math.exp(-eps0)
    return 2.0 / (math.exp(eps0) + 1.0)


def rr_dp_delta(*, eps0: float, eps: float) -> float:
    """delta(eps) of binary randomized response alone (no shuffling): ``max(0, (e^eps0 - e^eps)/(e^eps0 + 1))``.

    The true bit is reported with probability ``e^eps0/(e^eps0 + 1)``; the only output whose privacy
    loss exceeds ``eps < eps0`` is the true bit, loss ``eps0``.  Both ``eps0`` and ``eps`` in nats.
    """
    eps0 = _eps0(eps0)
    eps = real("eps", eps, minimum=0.0)
    if eps >= eps0:
        return 0.0
    # (e0 - e^eps)/(e0 + 1) = -expm1(eps - eps0) / (1 + e^-eps0): no cancellation near eps0.
    return -math.expm1(eps - eps0) / (1.0 + math.exp(-eps0))


def rr_dp_epsilon(*, eps0: float, delta: float) -> float:
    """The smallest eps (nats) with :func:`rr_dp_delta` ``<= delta``: ``max(0, eps0 + log(1 - delta (1 + e^-eps0)))``."""
    eps0 = _eps0(eps0)
    delta = real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    x = delta * (1.0 + math.exp(-eps0))
    return 0.0 if x >= 1.0 else max(0.0, eps0 + math.log1p(-x))


@functools.lru_cache(maxsize=16)
def _rows(n_other: int, p: float, cut: float) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], float]:
    """The counts ``c`` of clones kept, their ``log P(C = c)``, and a bound on ``P(C not kept)``."""
    mean, var = n_other * p, n_other * p * (1.0 - p)
    # Bernstein's inequality puts the e^-cut points inside mean +- t; widened until both ends are out.
    t = cut / 3.0 + math.sqrt(cut * cut / 9.0 + 2.0 * cut * var) + 2.0
    while True:
        lo, hi = max(0, math.floor(mean - t)), min(n_other, math.ceil(mean + t))
        lp = binom_logpmf(n_other, p, np.arange(lo, hi + 1, dtype=np.int64))
        top = float(lp.max())
        if (lo == 0 or lp[0] < top - cut) and (hi == n_other or lp[-1] < top - cut):
            break
        t *= 2.0
    keep = np.flatnonzero(lp >= top - cut)
    i, j = int(keep[0]), int(keep[-1])
    left_out = 0.0
    if lo + i > 0:      # below the mode the pmf ratios fall as c falls: a geometric series bounds the tail
        c = lo + i - 1
        ratio = c * (1.0 - p) / ((n_other - c + 1) * p)
        left_out += math.exp(lp[i - 1]) / (1.0 - ratio)
    if lo + j < n_other:
        c = lo + j + 1
        ratio = (n_other - c) * p / ((c + 1) * (1.0 - p))
        left_out += math.exp(lp[j + 1]) / (1.0 - ratio)
    rows, log_pc = np.arange(lo + i, lo + j + 1, dtype=np.int64), lp[i:j + 1].copy()
    rows.flags.writeable = log_pc.flags.writeable = False     # cached: shared by every eps of a search
    return rows, log_pc, left_out


def _path_logpmf(c: npt.NDArray[np.int64], a: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """``log P(Bin(c_i, 1/2) = a_i)`` along a path of consecutive ``c`` whose ``a`` rises by 0 or 1 a row.

    The kernel takes one size per call, so it anchors every ``_BLOCK``-th row; in between, the pmf
    follows the exact ratios ``b_{c+1}(a) = b_c(a) (c + 1)/(2 (c + 1 - a))`` and
    ``b_{c+1}(a + 1) = b_c(a) (c + 1)/(2 (a + 1))``, whose logs are ``log1p`` of small numbers, summed
    within the block only (a few ulps of the anchor's value).
    """
    rows = c.size
    steps = np.zeros(rows)
    if rows > 1:
        cp, ap, up = c[:-1].astype(np.float64), a[:-1].astype(np.float64), a[1:] > a[:-1]
        steps[1:] = np.where(up, np.log1p((cp - 1.0 - 2.0 * ap) / (2.0 * (ap + 1.0))),
                             np.log1p((2.0 * ap - cp - 1.0) / (2.0 * (cp + 1.0 - ap))))
    blocks = -(-rows // _BLOCK)
    flat = np.zeros(blocks * _BLOCK)
    flat[:rows] = steps
    block_steps = flat.reshape(blocks, _BLOCK)
    block_steps[:, 0] = 0.0
    walk = np.cumsum(block_steps, axis=1).ravel()[:rows]
    anchors = np.array([binom_logpmf(int(c[i]), 0.5, np.array([a[i]], dtype=np.int64))[0]
                        for i in range(0, rows, _BLOCK)])
    return walk + np.repeat(anchors, _BLOCK)[:rows]


def _tail_over_pmf(u: npt.NDArray[np.int64], c: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """``P(Bin(c, 1/2) >= u) / P(Bin(c, 1/2) = u)`` for ``c/2 < u <= c``.

    ``I_x(a, b)`` with ``a = u``, ``b = c - u + 1``, ``x = 1/2`` is ``b(u) (1 - x)`` times the continued
    fraction ``1/(1 + d1/(1 + d2/(1 + ...)))`` of DLMF 8.17.22, evaluated by the modified Lentz method on
    all rows at once; a row leaves the active set when its factor is 1 to rounding.  The fraction
    converges fast here because ``x = 1/2 < a/(a + b)`` (tens of terms three deviations out).
    """
    a = u.astype(np.float64)
    b = (c - u + 1).astype(np.float64)
    f = np.ones_like(a)                                  # f_0 = b_0 = 1
    lentz_c, lentz_d = np.ones_like(a), np.zeros_like(a)  # C_0 = f_0, D_0 = 0
    active = np.arange(a.size)
    k = 1
    while active.size:
        aa, bb = a[active], b[active]
        m = k // 2
        if k % 2:
            d = -(aa + m) * (aa + bb + m) * 0.5 / ((aa + 2 * m) * (aa + 2 * m + 1))
        else:
            d = m * (bb - m) * 0.5 / ((aa + 2 * m - 1) * (aa + 2 * m))
        dd = 1.0 + d * lentz_d
        dd = 1.0 / np.where(dd == 0.0, 1e-300, dd)
        cc = 1.0 + d / lentz_c
        cc = np.where(cc == 0.0, 1e-300, cc)
        step = cc * dd
        f[active] *= step
        done = np.abs(step - 1.0) <= 4e-16
        lentz_c, lentz_d = cc[~done], dd[~done]
        active = active[~done]
        k += 1      # d_{2b} = 0 ends every row's fraction exactly, so the loop stops by k = 2b + 1
    return 0.5 / f


def _log_rows(c: npt.NDArray[np.int64], log_pc: npt.NDArray[np.float64], eps0: float,
              eps: float) -> npt.NDArray[np.float64]:
    """``log(P(C = c) delta_c)`` for each kept row (``-inf`` where the row has no positive part)."""
    # tau (c + 1) is where the loss a -> log((e0 t_a + 1)/(t_a + e0)) crosses eps, e0 = e^eps0:
    # tau = (e^(eps + eps0) - 1) / ((e0 - 1)(e^eps + 1)), written in e^-eps0 and e^-eps (no overflow)
    tau = -math.expm1(-(eps + eps0)) / (-math.expm1(-eps0) * (1.0 + math.exp(-eps)))
    u = np.minimum(np.floor(tau * (c + 1)).astype(np.int64) + 1, c + 1)
    log_b = _path_logpmf(c, u - 1)
    # (e0 - e^eps)/(e0 + 1) without cancellation near eps0, then minus (e^eps - 1) S(u)/b(u - 1).
    head = -math.expm1(eps - eps0) / (1.0 + math.exp(-eps0))
    ratio = np.zeros(c.shape)
    inner = u <= c                  # u = c + 1: only the outcome a = c + 1 has a positive part
    if inner.any():
        ci, ui = c[inner], u[inner]
        ratio[inner] = (ci - ui + 1) / ui * _tail_over_pmf(ui, ci)
    bracket = head - math.expm1(eps) * ratio
    with np.errstate(divide="ignore"):
        return log_pc + log_b + np.log(np.maximum(bracket, 0.0))


#: The most users the bound is computed for: its windows grow like sqrt(n) (a few million values at 10^12).
MAX_USERS = 10 ** 12


#: clone_bound_epsilon refuses a clone count Bin(n - 1, p) with a larger standard deviation: each of its ~20
#: evaluations sums a window of about 2 sqrt(2 cut) sd rows (n = 1e9, eps0 = 2: sd 1.1e4, 5 s in all).
EPSILON_MAX_SD = 1.5e4


def _users(n) -> int:
    return integer("n", n, minimum=2, maximum=MAX_USERS)


def _check_variant(variant) -> str:
    return choice("variant", variant, VARIANTS)


def clone_bound_delta(*, n: int, eps0: float, eps: float, variant: Variant = "fmt21") -> float:
    """The clone bound on delta(eps) of ``n`` shuffled ``eps0``-DP reports (both in nats).

    The hockey-stick divergence ``sup_S P(S) - e^eps Q(S)`` of the Feldman-McMillan-Talwar pair (see
    the module docstring; ``variant`` picks the clone probability: ``"fmt21"`` ``e^-eps0`` as in the
    FOCS 2021 paper and its code, ``"fmt23"`` ``2/(e^eps0 + 1)``, exact for binary randomized
    response), computed row by row in closed form.  Rows of ``C`` far out in its tails are left out
    and their probability added, so the value is not below the pair's divergence except by rounding
    (about 1e-13 relative).  ``n >= 2`` users in all, ``eps0 > 0``, ``eps >= 0``.
    """
    n = _users(n)
    eps0 = _eps0(eps0)
    eps = real("eps", eps, minimum=0.0)
    return _delta(n, eps0, eps, _clone_probability(eps0, _check_variant(variant)))


def _delta(n: int, eps0: float, eps: float, p: float) -> float:
    if eps >= eps0:
        return 0.0      # the pair's likelihood ratio lies in [e^-eps0, e^eps0]
    cut = _CUT
    while True:
        c, log_pc, left_out = _rows(n - 1, p, cut)
        logs = _log_rows(c, log_pc, eps0, eps)
        top = float(logs.max())
        total = math.exp(top) * float(np.sum(np.exp(logs - top))) if math.isfinite(top) else 0.0
        if left_out == 0.0 or left_out <= _LEFTOUT_RTOL * total or cut > 1400.0:
            return min(1.0, total + left_out)
        # widen the window until the left-out mass is negligible next to delta
        grow = -math.log(_LEFTOUT_RTOL * total / left_out) + 5.0 if total > 0.0 else cut
        cut = max(2.0 * cut, cut + grow)


def clone_bound_epsilon(*, n: int, eps0: float, delta: float, variant: Variant = "fmt21") -> float:
    """The smallest eps (nats) with :func:`clone_bound_delta` ``<= delta``, to 1e-6 relative, rounded up.

    The returned eps satisfies the bound (``clone_bound_delta(eps) <= delta``); the eps 1e-6 relative
    below it does not.  The search is false position on ``log delta(eps)`` (Illinois variant) inside the
    bracket ``[0, eps0]``.  ``n >= 2``, ``eps0 > 0``, ``0 < delta < 1``.
    """
    n = _users(n)
    eps0 = _eps0(eps0)
    delta = real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    p = _clone_probability(eps0, _check_variant(variant))
    sd = math.sqrt((n - 1) * p * (1 - p))
    if sd > EPSILON_MAX_SD:
        raise ValueError(
            f"n={n} users with eps0={eps0!r}: the clone count's standard deviation, {sd:.3g}, exceeds "
            f"EPSILON_MAX_SD = {EPSILON_MAX_SD:g}, and the search's windows grow with it (about 5 s at 1e4, minutes "
            f"at n = 1e12); its Gaussian estimate, not a bound, is eps ~ {_eps_guess(n, eps0, p, delta):.3g}: use "
            "fewer users, or clone_bound_delta at chosen eps (one evaluation each)")
    log_target = math.log(delta)

    def g(x: float) -> float:
        d = _delta(n, eps0, x, p)
        return math.log(d) - log_target if d > 0.0 else -math.inf

    lo, g_lo, hi, g_hi = _bracket(g, _eps_guess(n, eps0, p, delta), eps0)
    if lo == hi:
        return hi
    side = 0
    while hi - lo > _EPS_RTOL * hi:
        x = 0.5 * (lo + hi)
        if math.isfinite(g_hi):
            # false position, kept a quarter tolerance inside the bracket so that it closes
            x = hi - g_hi * (hi - lo) / (g_hi - g_lo)
            x = min(max(x, lo + 0.25 * _EPS_RTOL * hi), hi - 0.25 * _EPS_RTOL * hi)
        gx = g(x)
        if gx > 0.0:
            lo, g_lo = x, gx
            if side == -1:
                g_hi *= 0.5         # Illinois: the end that stays put has its value halved
            side = -1
        else:
            hi, g_hi = x, gx
            if side == 1:
                g_lo *= 0.5
            side = 1
    return hi


def _eps_guess(n: int, eps0: float, p: float, delta: float) -> float:
    """A starting eps: given C = c the pair is near two normals ``(e0 - 1)/(e0 + 1)`` apart with
    variance ``c/4`` (a Gaussian mechanism of ``mu = 2 tanh(eps0/2)/sqrt(c)``)."""
    c = max(1.0, (n - 1) * p)
    mu = 2.0 * math.tanh(eps0 / 2.0) / math.sqrt(c)
    return min(eps0, mu * math.sqrt(2.0 * math.log(1.25 / delta)))


def _bracket(g, guess: float, eps0: float) -> tuple[float, float, float, float]:
    """``lo < hi`` with ``g(lo) > 0 >= g(hi)`` (``lo == hi == 0`` when ``g(0) <= 0``), from ``guess``."""
    x, gx = guess, g(guess)
    if gx > 0.0:
        lo, g_lo = x, gx
        while True:
            x = min(eps0, 2.0 * x)
            gx = g(x)
            if gx <= 0.0:
                return lo, g_lo, x, gx
            lo, g_lo = x, gx
    hi, g_hi = x, gx
    while x > 1e-3 * guess:
        x *= 0.5
        gx = g(x)
        if gx > 0.0:
            return x, gx, hi, g_hi
        hi, g_hi = x, gx
    g0 = g(0.0)
    return (0.0, g0, hi, g_hi) if g0 > 0.0 else (0.0, g0, 0.0, g0)
