"""k-ary randomized response in the shuffle model: the exact delta(eps) of the shuffled histogram, certified.

Each of ``n`` users reports its value (one of ``k`` categories) with probability ``a = e^eps0 / (e^eps0 + k - 1)``
and each other value with probability ``b = 1 / (e^eps0 + k - 1)``; the shuffler publishes the histogram of
the reports.  The challenge user holds ``x`` or ``x'``.  When the other users' reports are i.i.d. with
probabilities ``theta`` that are equal on every category outside ``{x, x'}`` (docs/shuffle.md, "k-ary"), the
counts ``(h1, h2, h3)`` of reports in ``x``, in ``x'`` and elsewhere are sufficient, and with ``M'(h) =
Mult_{n}(h; theta) / n``

    P_x(h) - e^eps P_x'(h) = M'(h) L(h),   L(h) = alpha h1 / theta1 + beta h2 / theta2 - gamma h3 / theta3,

``alpha = a - e^eps b``, ``beta = b - e^eps a``, ``gamma = (e^eps - 1)(k - 2) b``: the hockey stick is the sum of
``M'(h) L(h)`` over the half-plane ``L > 0``, every term positive.  The kernel (cpp/include/ppk/shuffle_kary.hpp)
walks each row's run of ``L > 0`` outwards from its largest weight, each term with certified lower and upper ends
(the binomial log pmfs, the rounding of ``theta`` and of ``L``); what it does not walk is bounded by geometric
series and the rows' crude bounds ``L <= c1 h1`` and added to the upper end (docs/shuffle.md, "k-ary").
"""
from __future__ import annotations

import math
from typing import Hashable, Sequence

import numpy as np
import numpy.typing as npt

from ._curve import BracketedCurve
from ._kernels import binom_logpmf, interruptible, shuffle_kary_pair
from ._typing import FloatArray
from ._validate import integer, real, real_array, sequence

__all__ = ["ShuffledKaryRandomizedResponse", "pair_log_bracket", "standard_lower_log_delta", "binomial_log_weights",
           "log_tail_below", "MAX_KARY_USERS", "kary_users"]

U = 2.0 ** -53
DEPTH = 40.0               # the window grows until the terms left out are below e^-DEPTH of the sum
MAX_CATEGORIES = 16
MAX_KARY_USERS = 10 ** 6


def kary_users(n: object) -> int:
    """``n`` checked against the k-ary search's limit, the error saying the limit is the k-ary one."""
    n = integer("n", n, minimum=1)
    if n > MAX_KARY_USERS:
        raise ValueError(f"n={n} is more users than the k-ary search takes (at most {MAX_KARY_USERS:,} with "
                         "categories >= 3; binary reports take up to 10^9)")
    return n
#: The most lattice points one sum may walk (about 2 s); past them each row's crude bound stands in the upper end.
MAX_CELLS = 4 * 10 ** 8


def rr_probs(eps0: float, k: int) -> tuple[float, float]:
    """``(a, b)``: the probability of reporting the true value and of each other value (no cancellation)."""
    if eps0 > 700.0:          # e^eps0 overflows; b underflows towards 0 (the caller caps eps0)
        return 1.0, 0.0
    b = 1.0 / (math.exp(eps0) + k - 1)
    return 1.0 / (1.0 + (k - 1) * math.exp(-eps0)), b


def log_binom(n: int, p: float, pc: float, k: npt.ArrayLike) -> FloatArray:
    """``log Bin(n, p)(k)`` with ``pc = 1 - p`` given (formed without cancellation): the kernel is asked with the
    smaller of the two, whose relative rounding is then the only one (a p within 1e-17 of 1 rounds to 1)."""
    kk = np.asarray(k, dtype=np.int64)
    return binom_logpmf(n, p, kk) if p <= pc else binom_logpmf(n, pc, n - kk)


def _log_tail(n: int, p: float, pc: float, edge: int, upper: bool) -> float:
    """log of a bound on ``P(Bin(n, p) > edge)`` (``upper``) or ``P(Bin(n, p) < edge)``: the pmf beyond the edge
    times a geometric series, valid where the ratios of successive terms only decrease (past the mode)."""
    if (upper and edge >= n) or (not upper and edge <= 0):
        return -math.inf
    j = edge + 1 if upper else edge - 1
    log_first = float(log_binom(n, p, pc, np.array([j]))[0])
    # the ratio pmf(j + 1) / pmf(j) moving outwards, at the first term left out
    ratio = (n - j) * p / ((j + 1) * pc) if upper else j * pc / ((n - j + 1) * p)
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
    other ``k - 2`` categories), and the challenge user's report is k-ary randomized response.  The sum over the
    half-plane ``L > 0`` row by row, each row walked outwards from its largest weight and cut where a geometric
    series bounds the rest (ppk/shuffle_kary.hpp; docs/shuffle.md, "k-ary")."""
    if eps >= eps0:
        return -math.inf, -math.inf               # the loss of k-ary randomized response never exceeds eps0
    a, b = rr_probs(eps0, k)
    alpha = a * -math.expm1(eps - eps0)
    beta = -a * math.exp(eps) * -math.expm1(-eps - eps0)
    gamma = math.expm1(eps) * (k - 2) * b
    if n == 1:                                    # the challenge user alone: only its own value shows it
        return math.log(alpha) - 4 * U, math.log(alpha) + 4 * U
    th = (theta1, theta2, theta3)             # all positive: b > 0 for eps0 <= 700
    t1c = th[1] + th[2]                           # 1 - theta1, and x' among the reports not in x: all formed
    q2, q2c = th[1] / t1c, th[2] / t1c            # without cancellation
    # L's coefficients alpha/theta1, beta/theta2, gamma/theta3 overflow where a theta is near b ~ e^-eps0 and eps
    # is large: then L / s for s = 1/min(theta) is summed (the same half-plane; delta scales by s), with log s's
    # rounding (2u of it) on each end
    cs = (alpha / th[0], beta / th[1], gamma / th[2]) if min(th) > 1e-150 else None
    shift = 0.0
    if cs is None or not all(math.isfinite(c) and abs(c) < 1e300 for c in cs):
        s = min(th)
        cs = (alpha * (s / th[0]), beta * (s / th[1]), gamma * (s / th[2]))
        shift = -math.log(s)
    low, up, _ = shuffle_kary_pair(n, th[0], t1c, q2, q2c, *cs, depth=depth, max_cells=MAX_CELLS)
    if shift:
        low, up = low + shift - 2 * U * shift, up + shift + 2 * U * shift
    return low, up


def log_tail_below(n: int, p: float, pc: float, edge: int) -> float:
    """log of a bound on ``P(Bin(n, p) < edge)`` (``pc = 1 - p``): 0 where the edge is not below the mode."""
    return _log_tail(n, p, pc, edge, False) if edge > 0 else -math.inf


def binomial_log_weights(n: int, p: float, pc: float, lo: int, hi: int) -> tuple[FloatArray, float, float]:
    """``log Bin(n, p)(c)`` (``pc = 1 - p``) for ``c = lo..hi`` and logs of bounds on ``P(Bin(n, p) < lo)`` and
    ``P(> hi)``."""
    return (log_binom(n, p, pc, np.arange(lo, hi + 1)), _log_tail(n, p, pc, lo, False) if lo > 0 else -math.inf,
            _log_tail(n, p, pc, hi, True))


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


class KaryCurve(BracketedCurve):
    """What both k-ary attackers share: ``n`` users, local privacy ``eps0``, ``categories`` values; calibration
    moves the probability of each other value."""

    __slots__ = ("n", "eps0", "categories")
    n: int
    eps0: float
    categories: int

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

    def dp_scale(self, *, eps: float, delta: float) -> float:
        return rr_dp_scale(self.categories, eps=eps, delta=delta)


class ShuffledKaryRandomizedResponse(KaryCurve):
    """delta(eps) of the shuffled histogram of ``n`` k-ary randomized responses, against an attacker who knows
    none of the other users' values and believes them i.i.d. with probabilities ``probs`` (docs/shuffle.md,
    "k-ary").  The supremum over the ordered pairs of values the challenge user may hold; exact and certified.

    ``probs`` may be any distribution for ``categories = 3``; for ``categories >= 4`` it must be uniform (the
    default): otherwise the counts outside the pair carry information and the two counts are not sufficient.
    """

    __slots__ = ("probs", "_pairs")

    def __init__(self, *, n: int, eps0: float, categories: int, probs: Sequence[float] | None = None):
        self.n = kary_users(n)
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

    def _epsilon_start(self, delta: float, root_target: float, excess) -> tuple[float, float]:
        """A Gaussian guess: the loss is about the standardized difference of the pair's two counts, sd
        ``sqrt(1/(n theta1) + 1/(n theta2))``; only where the search starts, never its answer."""
        sd = max(math.sqrt(1 / (self.n * t1) + 1 / (self.n * t2)) for t1, t2, _ in self._pairs)
        guess = min(0.9 * self.eps0, sd * math.sqrt(2 * math.log(1 / delta))) if self.eps0 > 0 else 1.0
        return max(guess, 1e-6), max(0.25 * guess, 1e-6)

    def with_scale(self, scale: float) -> "ShuffledKaryRandomizedResponse":
        return ShuffledKaryRandomizedResponse(n=self.n, eps0=eps0_of(scale, self.categories), categories=self.categories,
                                              probs=tuple(float(v) for v in self.probs))

    def without_natural_noise(self) -> "ShuffledKaryRandomizedResponse":
        """k-ary randomized response alone (``n = 1``): ``delta(eps) = a - e^eps b``, what the shuffler amplifies."""
        return ShuffledKaryRandomizedResponse(n=1, eps0=self.eps0, categories=self.categories)

    @property
    def _rows_key(self) -> Hashable | None:
        """The other users, whose unknown values every release over them shares."""
        return ("shuffle-kary", self.n)


def eps0_of(scale: float, k: int) -> float:
    """The local privacy whose other-value probability is ``scale`` (calibration moves it; more is more noise):
    ``b = 1 / (e^eps0 + k - 1)``, so ``eps0 = log(1 - (k - 1) b) - log b``; ``b = 0`` is no noise (eps0 = 700)."""
    b = real("scale", scale, minimum=0.0, maximum=1.0 / k)
    if b == 0.0:
        return 700.0
    return min(700.0, max(0.0, math.log1p(-(k - 1) * b) - math.log(b)))


def rr_dp_scale(k: int, *, eps: float, delta: float) -> float:
    """The other-value probability with which k-ary randomized response alone is (eps, delta)-DP: its curve is
    ``a - e^eps b = 1 - (k - 1 + e^eps) b``, so ``b = (1 - delta) / (k - 1 + e^eps)`` (rounded up)."""
    eps = real("eps", eps, minimum=0.0)
    delta = real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False)
    return math.nextafter((1 - delta) / (k - 1 + math.exp(min(eps, 700.0))), 1.0)
