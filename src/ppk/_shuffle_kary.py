"""k-ary randomized response in the shuffle model: the exact delta(eps) of the shuffled histogram, certified.

Each of ``n`` users reports its value (one of ``k`` categories) with probability ``a = e^eps0 / (e^eps0 + k - 1)``
and each other value with probability ``b = 1 / (e^eps0 + k - 1)``; the shuffler publishes the histogram of
the reports.  The challenge user holds ``x`` or ``x'``.  When the other users' reports are i.i.d. with
probabilities ``theta`` that are equal on every category outside ``{x, x'}`` (docs/shuffle.md, "k-ary"), the
counts ``(h1, h2, h3)`` of reports in ``x``, in ``x'`` and elsewhere are sufficient, and with ``M'(h) =
Mult_{n}(h; theta) / n``

    P_x(h) - e^eps P_x'(h) = M'(h) L(h),   L(h) = alpha h1 / theta1 + beta h2 / theta2 - gamma h3 / theta3,

``alpha = a - e^eps b``, ``beta = b - e^eps a``, ``gamma = (e^eps - 1)(k - 2) b``: the hockey stick is the sum of
``M'(h) L(h)`` over the half-plane ``L > 0``, every term positive.  Each term carries a certified lower and
upper end (the kernel's binomial log pmfs, the rounding of ``theta`` and of ``L``); the terms outside the
window summed are bounded by binomial tails (log-concavity: geometric series) and added to the upper end.
"""
from __future__ import annotations

import math
from typing import Hashable, Sequence

import numpy as np
import numpy.typing as npt

from ._curve import BracketedCurve
from ._kernels import binom_logpmf, check_interrupt, interruptible
from ._typing import FloatArray
from ._validate import integer, real, real_array, sequence

__all__ = ["ShuffledKaryRandomizedResponse", "pair_log_bracket", "standard_lower_log_delta", "MAX_KARY_USERS"]

U = 2.0 ** -53
DEPTH = 40.0               # the window grows until the terms left out are below e^-DEPTH of the sum
MAX_CATEGORIES = 16
#: The exact sum visits about (24 sd)^2 lattice points of the report counts: 10^6 users take seconds per eps.
MAX_KARY_USERS = 10 ** 6
#: The most lattice points one window may visit before the sum stops widening (the bound covers the rest).
MAX_CELLS = 4 * 10 ** 8


def rr_probs(eps0: float, k: int) -> tuple[float, float]:
    """``(a, b)``: the probability of reporting the true value and of each other value (no cancellation)."""
    if eps0 > 700.0:          # e^eps0 overflows; b underflows towards 0 (the caller caps eps0)
        return 1.0, 0.0
    b = 1.0 / (math.exp(eps0) + k - 1)
    return 1.0 / (1.0 + (k - 1) * math.exp(-eps0)), b


def _log_tail(n: int, p: float, edge: int, upper: bool) -> float:
    """log of a bound on ``P(Bin(n, p) > edge)`` (``upper``) or ``P(Bin(n, p) < edge)``: the pmf beyond the edge
    times a geometric series, valid where the ratios of successive terms only decrease (past the mode)."""
    if (upper and edge >= n) or (not upper and edge <= 0):
        return -math.inf
    j = edge + 1 if upper else edge - 1
    log_first = float(binom_logpmf(n, p, np.array([j]))[0])
    # the ratio pmf(j + 1) / pmf(j) moving outwards, at the first term left out
    ratio = (n - j) * p / ((j + 1) * (1 - p)) if upper else j * (1 - p) / ((n - j + 1) * p)
    if ratio >= 1.0:
        return 0.0            # the edge is not past the mode: no better bound than 1
    return log_first - math.log1p(-ratio * (1 + 8 * U)) + 1e-12


def _logsumexp(v: FloatArray) -> float:
    if v.size == 0:
        return -math.inf
    m = float(np.max(v))
    return m + math.log(float(np.sum(np.exp(v - m)))) if math.isfinite(m) else -math.inf


def pair_log_bracket(*, n: int, k: int, eps0: float, theta1: float, theta2: float, theta3: float,
                     eps: float, depth: float = DEPTH) -> tuple[float, float]:
    """Certified log ends of ``H_{e^eps}(P_x || P_x')`` when the other ``n - 1`` users' reports are i.i.d. with
    probabilities ``theta1`` (in x), ``theta2`` (in x') and ``theta3`` (elsewhere, spread equally over the
    other ``k - 2`` categories), and the challenge user's report is k-ary randomized response."""
    if eps >= eps0:
        return -math.inf, -math.inf               # the loss of k-ary randomized response never exceeds eps0
    a, b = rr_probs(eps0, k)
    alpha = a * -math.expm1(eps - eps0)
    beta = -a * math.exp(eps) * -math.expm1(-eps - eps0)
    gamma = math.expm1(eps) * (k - 2) * b
    if n == 1:                                    # the challenge user alone: only its own value shows it
        return math.log(alpha) - 4 * U, math.log(alpha) + 4 * U
    th = (theta1, theta2, theta3)             # all positive: b > 0 for eps0 <= 700
    c1, c2, c3 = alpha / th[0], beta / th[1], gamma / th[2]
    log_n = math.log(n)
    q2 = th[1] / (th[1] + th[2])                  # x' among the reports not in x (both formed without 1 - ...)
    # rounding of theta (4u relative each) moves a log pmf by at most 5u per count of deviation from the mean
    dev1 = 5 * U / min(th[0], 1 - th[0])
    dev2 = 5 * U / min(q2, 1 - q2)
    m1, s1 = n * th[0], math.sqrt(n * th[0] * (1 - th[0]))
    width = math.sqrt(2 * (depth + 12))
    cells = 0
    while True:
        check_interrupt()
        lo1, hi1 = max(0, int(m1 - width * s1) - 2), min(n, int(m1 + width * s1) + 2)
        lows, ups = [], []
        # terms with h1 outside lo1..hi1: L <= alpha h1 / theta1 and M' h1 / theta1 = T(h - e1), the others'
        # trinomial, so they sum to at most alpha P(Bin(n - 1, theta1) outside lo1 - 1 .. hi1 - 1)
        tails = [math.log(alpha) + _log_tail(n - 1, th[0], lo1 - 1, False),
                 math.log(alpha) + _log_tail(n - 1, th[0], hi1 - 1, True)]
        row_log = binom_logpmf(n, th[0], np.arange(lo1, hi1 + 1))
        for h1 in range(lo1, hi1 + 1):
            lw1 = float(row_log[h1 - lo1])
            if lw1 == -math.inf or h1 == 0:       # h1 = 0: L <= 0 (alpha h1 = 0, the rest not positive)
                continue
            m = n - h1                            # reports in x' or elsewhere
            c0 = c1 * h1 - c3 * m                 # L(h2) = c0 + cs h2 on this row, rounded by less than err
            cs = c2 + c3
            err = 16 * U * (c1 * h1 + abs(c2) * m + c3 * m)
            mean2, sd2 = m * q2, math.sqrt(m * q2 * (1 - q2))
            wa, wb = max(0, int(mean2 - width * sd2) - 2), min(m, int(mean2 + width * sd2) + 2)
            # the row's terms beyond the window: L <= alpha h1 / theta1 times the binomial's tails
            row_bound = lw1 - log_n + math.log(alpha * h1 / th[0])
            tails += [row_bound + _log_tail(m, q2, wb, True), row_bound + _log_tail(m, q2, wa, False)]
            a2, b2 = wa, wb                       # within the window, where the upper end of L can be positive
            if cs < 0:
                b2 = min(b2, int(math.floor((c0 + err) / -cs)) + 1)
            elif cs > 0:
                a2 = max(a2, int(math.ceil((-err - c0) / cs)) - 1)
            elif c0 + err <= 0:
                continue
            if a2 > b2:
                continue
            h2 = np.arange(a2, b2 + 1)
            cells += h2.size
            lw = lw1 + binom_logpmf(m, q2, h2)
            big = np.abs(lw) + abs(math.log(q2) - math.log1p(-q2)) + 4
            lw_err = 2e-15 + 16 * U * (big + abs(lw1)) + dev1 * abs(h1 - m1) + dev2 * np.abs(h2 - mean2)
            L = c0 + cs * h2
            with np.errstate(divide="ignore"):
                lows.append(lw - log_n - lw_err + np.log(np.maximum(L - err, 0.0)))
                ups.append(lw - log_n + lw_err + np.log(np.maximum(L + err, 0.0)))
        low = _logsumexp(np.concatenate(lows)) if lows else -math.inf
        up = _logsumexp(np.concatenate(ups)) if ups else -math.inf
        tail = _logsumexp(np.array(tails))
        # done when what is left out is below e^-depth of the sum; a window that would cost more than
        # MAX_CELLS stops with the left-out bound in the upper end (certified, only wider)
        if tail <= low - depth or tail == -math.inf or 4 * cells > MAX_CELLS:
            grow = (math.log2(n) + 8) * U * 1.01
            return low - grow, float(np.logaddexp(up, tail)) + grow
        width *= 2


def _thetas(eps0: float, k: int, probs: np.ndarray, x: int, y: int) -> tuple[float, float, float]:
    """The others' report probabilities in x, in y and elsewhere when their values are i.i.d. ``probs``."""
    a, b = rr_probs(eps0, k)
    amb = a * -math.expm1(-eps0)                  # a - b without cancellation
    rest = float(np.sum(np.delete(probs, [x, y])))
    return b + amb * probs[x], b + amb * probs[y], (k - 2) * b + amb * rest


def standard_lower_log_delta(*, n: int, eps0: float, categories: int, eps: float) -> float:
    """A certified lower end of the standard shuffle-DP delta(eps) (every other user's value known, the supremum
    over them): the largest of the exact curves of the assignments in which every other user holds the same
    value -- one of the pair (exact: the reports outside the pair are then uniform on their categories) or
    one outside it (the attacker reading only the pair's two counts: a post-processing, so a lower end)."""
    k = categories
    a, b = rr_probs(eps0, k)
    best = -math.inf
    for t1, t2, t3 in ((a, b, (k - 2) * b), (b, a, (k - 2) * b), (b, b, a + (k - 3) * b)):
        best = max(best, pair_log_bracket(n=n, k=k, eps0=eps0, theta1=t1, theta2=t2, theta3=t3, eps=eps)[0])
    return min(best, 0.0)


class ShuffledKaryRandomizedResponse(BracketedCurve):
    """delta(eps) of the shuffled histogram of ``n`` k-ary randomized responses, against an attacker who knows
    none of the other users' values and believes them i.i.d. with probabilities ``probs`` (docs/shuffle.md,
    "k-ary").  The supremum over the ordered pairs of values the challenge user may hold; exact and certified.

    ``probs`` may be any distribution for ``categories = 3``; for ``categories >= 4`` it must be uniform (the
    default): otherwise the counts outside the pair carry information and the two counts are not sufficient.
    """

    __slots__ = ("n", "eps0", "categories", "probs", "_pairs")

    def __init__(self, *, n: int, eps0: float, categories: int, probs: Sequence[float] | None = None):
        self.n = integer("n", n, minimum=1, maximum=MAX_KARY_USERS)
        self.eps0 = real("eps0", eps0, minimum=0.0, maximum=700.0)
        k = self.categories = integer("categories", categories, minimum=3, maximum=MAX_CATEGORIES)
        if probs is None:
            p = np.full(k, 1.0 / k)
        else:
            p = np.array(sequence("probs", probs, lambda name, v: real(name, v, minimum=0.0, maximum=1.0),
                                  min_length=k, max_length=k), dtype=float)
            if not abs(float(np.sum(p)) - 1.0) <= 1e-9:
                raise ValueError(f"probs must sum to 1 (they sum to {float(np.sum(p))!r})")
            if k >= 4 and not np.all(p == p[0]):
                raise ValueError("probs must be uniform for categories >= 4: with unequal probabilities outside a "
                                 "pair the other counts carry information (docs/shuffle.md, k-ary)")
        self.probs = p
        pairs = {_thetas(self.eps0, k, p, x, y) for x in range(k) for y in range(k) if x != y}
        self._pairs = sorted(pairs)

    def __repr__(self) -> str:
        return f"ShuffledRandomizedResponse(n={self.n}, eps0={self.eps0!r}, categories={self.categories}, known=0)"

    def _sup(self, eps: float) -> tuple[float, float]:
        if self.eps0 == 0.0 or eps >= self.eps0:
            return -math.inf, -math.inf
        low = up = -math.inf
        for t1, t2, t3 in self._pairs:
            lo_, up_ = pair_log_bracket(n=self.n, k=self.categories, eps0=self.eps0, theta1=t1, theta2=t2,
                                        theta3=t3, eps=eps)
            low, up = max(low, lo_), max(up, up_)
        return min(low, 0.0), min(up, 0.0)

    def _log_bracket(self, eps: npt.ArrayLike) -> tuple[FloatArray, FloatArray, bool]:
        flat, scalar = real_array("eps", eps, minimum=0.0)
        shape = np.shape(eps) if not scalar else ()
        with interruptible():
            pairs = [self._sup(float(v)) for v in flat]
        lower = np.array([a for a, _ in pairs], dtype=float).reshape(shape)
        upper = np.array([b for _, b in pairs], dtype=float).reshape(shape)
        return lower, upper, scalar

    @property
    def scale(self) -> float:
        """The probability of reporting a given other value, ``b = 1 / (e^eps0 + k - 1)``."""
        return rr_probs(self.eps0, self.categories)[1]

    @property
    def scale_name(self) -> str:
        return "other_value_probability"

    @property
    def has_natural_noise(self) -> bool:
        return self.n > 1 and self.eps0 < 700.0

    @property
    def _rows_key(self) -> Hashable | None:
        return ("shuffle-kary", self.n)


def kary(*, n: int, eps0: float, categories: int, known: int | None = None, p: float | None = None,
         probs: Sequence[float] | None = None, rtol: float | None = None) -> ShuffledKaryRandomizedResponse:
    """``ppk.ShuffledRandomizedResponse(categories=k >= 3, ...)``: the k-ary curve, with the binary class's
    parameters that do not carry over refused by name."""
    if known is None or integer("known", known, minimum=0) != 0:
        raise ValueError("known: for categories >= 3 only known=0 is exact (the attacker knows no other user's "
                         "value and believes them i.i.d. with probabilities probs; the worst case over known "
                         "values is not implemented, docs/shuffle.md k-ary): pass known=0, or use "
                         "ppk.related.shuffle_clones.clone_bound_epsilon for standard shuffle DP")
    if p is not None:
        raise ValueError("p: for categories >= 3 the belief is probs= (one probability per category)")
    if rtol is not None:
        real("rtol", rtol, minimum=0.0, maximum=1.0, min_inclusive=False)   # exact: no search tolerance
    return ShuffledKaryRandomizedResponse(n=n, eps0=eps0, categories=categories, probs=probs)
