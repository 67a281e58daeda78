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

__all__ = ["ShuffledKaryRandomizedResponse", "pair_log_bracket", "standard_lower_log_delta", "binomial_log_weights",
           "MAX_KARY_USERS"]

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
    t1c = th[1] + th[2]                           # 1 - theta1, and x' among the reports not in x: all formed
    q2, q2c = th[1] / t1c, th[2] / t1c            # without cancellation
    # rounding: the smaller of p, 1 - p (the one the kernel gets) is within 12u of itself, which moves
    # log Bin(m, p)(j) by at most 12u |j - m p| / (1 - p) <= 24u per count of deviation from the mean
    dev = 32 * U
    m1, s1 = n * th[0], math.sqrt(n * th[0] * t1c)
    width = math.sqrt(2 * (depth + 12))
    logit = math.log(th[1]) - math.log(th[2])
    while True:
        check_interrupt()
        lo1, hi1 = max(1, int(m1 - width * s1) - 2), min(n, int(m1 + width * s1) + 2)   # h1 = 0: L <= 0
        lows, ups = [], []
        # terms with h1 outside lo1..hi1: L <= alpha h1 / theta1 and M' h1 / theta1 = T(h - e1), the others'
        # trinomial, so they sum to at most alpha P(Bin(n - 1, theta1) outside lo1 - 1 .. hi1 - 1)
        tails = [math.log(alpha) + _log_tail(n - 1, th[0], t1c, lo1 - 1, False),
                 math.log(alpha) + _log_tail(n - 1, th[0], t1c, hi1 - 1, True)]
        h1_all = np.arange(lo1, hi1 + 1)
        lw1_all = log_binom(n, th[0], t1c, h1_all)
        cols = int(2 * width * math.sqrt(n * q2 * q2c) + (hi1 - lo1) * q2) + 8
        step = max(1, min(hi1 - lo1 + 1, (1 << 20) // max(cols, 1)))
        for r0 in range(lo1, hi1 + 1, step):
            check_interrupt()
            sl = slice(r0 - lo1, min(r0 + step, hi1 + 1) - lo1)
            h1, lw1 = h1_all[sl], lw1_all[sl]
            blk = _Block(n, q2, q2c, logit, h1, lw1, width)
            c0 = c1 * h1 - c3 * (n - h1)      # L = c0 + cs h2 on each row, rounded by less than err
            cs = c2 + c3
            err = 16 * U * (c1 * h1 + (abs(c2) + c3) * (n - h1))
            L = c0[:, None] + cs * blk.j[None, :]
            moved = dev * (np.abs(h1 - m1)[:, None] + np.abs(blk.j[None, :] - blk.mean2[:, None]))
            base = blk.lw - log_n
            e = blk.err + moved + 16 * U * np.abs(lw1)[:, None]
            with np.errstate(divide="ignore", invalid="ignore"):
                lows.append((base - e + np.log(np.maximum(L - err[:, None], 0.0)))[blk.valid])
                ups.append((base + e + np.log(np.maximum(L + err[:, None], 0.0)))[blk.valid])
            # beyond each row's columns: L <= alpha h1 / theta1 times the binomial's tail there, unless L is
            # certainly not positive beyond (it is linear in h2)
            row_bound = lw1 - log_n + np.log(alpha * h1 / th[0])
            right_pos = (cs > 0) | (c0 + cs * blk.right + err > 0)
            left_pos = (cs < 0) | (c0 + cs * blk.j[0] + err > 0)
            tails += list((row_bound + blk.right_tail)[right_pos]) + list((row_bound + blk.left_tail)[left_pos])
        low = _logsumexp(np.concatenate(lows)) if lows else -math.inf
        up = _logsumexp(np.concatenate(ups)) if ups else -math.inf
        tail = _logsumexp(np.array(tails))
        # done when what is left out is below e^-depth of the sum (the window covering the support leaves
        # nothing out); a window that would grow past MAX_CELLS stops with the bound in the upper end
        if tail <= low - depth or tail == -math.inf or (2 * width * s1) * cols > MAX_CELLS:
            grow = (math.log2(n) + 8) * U * 1.01
            return low - grow, float(np.logaddexp(up, tail)) + grow
        # Gaussian tails: e^(-w^2/2) falls by the missing nats when w^2 grows by twice them
        width = math.sqrt(width * width + 2 * (tail - low + depth) + 8) if low > -math.inf else 2 * width


#: Every ANCHOR-th column of a row's binomial log pmfs comes from the kernel; the ones between follow by the
#: exact ratio w(j)/w(j-1) = (m - j + 1) q / (j (1 - q)), cumulated (docs/shuffle.md, "log C(s), certified").
ANCHOR = 64


class _Block:
    """``log Bin(m_i, q)(j)`` on a block of rows ``m_i = n - h1_i`` plus the row weights ``lw1``, over one range
    of columns ``j`` wide enough for every row's window (about its mean +- width sd), with an error bound and
    logs of bounds on each row's tails beyond the range."""

    def __init__(self, n: int, q: float, qc: float, logit: float, h1: np.ndarray, lw1: np.ndarray, width: float):
        m = n - h1
        self.mean2 = m * q
        sd = np.sqrt(m * q * qc)
        lo = int(max(0, np.min(self.mean2 - width * sd) - 2))
        hi = int(min(np.max(m), np.max(self.mean2 + width * sd) + 2))
        size = -(-(hi - lo + 1) // ANCHOR) * ANCHOR
        self.j = np.arange(lo, lo + size)
        anchors = self.j[::ANCHOR]
        steps = np.empty((h1.size, size))
        with np.errstate(divide="ignore", invalid="ignore"):
            steps[:] = np.log(np.maximum(m[:, None] - self.j[None, :] + 1, 0) / np.maximum(self.j, 1)[None, :])
        steps += logit                            # log(q / (1 - q))
        blocks = steps.reshape(h1.size, -1, ANCHOR)
        for i, mi in enumerate(m):
            blocks[i, :, 0] = log_binom(int(mi), q, qc, anchors)
        lw2 = np.cumsum(blocks, axis=2).reshape(h1.size, size)
        self.valid = (self.j[None, :] <= m[:, None]) & (self.j[None, :] <= hi)
        lw2 = np.where(self.valid, lw2, -np.inf)
        finite = np.where(np.isfinite(lw2), np.abs(lw2), 0.0)
        # d = steps from the anchor: the anchor's error (about 4u of its magnitude, which is within d B of the
        # value), each step's rounding (5u + u B, B = log(m + 1) + |logit q| bounds a step) and the cumulated
        # sums' (u times each partial sum, within (d - t) B of the value): below 2u (d + 4)(|v| + (d + 5)(B + 1))
        d = (np.arange(size) % ANCHOR)[None, :]
        bound = (np.log(m + 1.0) + abs(logit) + 1)[:, None]
        self.err = 1e-15 + 2 * U * (d + 4) * (finite + (d + 5) * bound)
        self.lw = lw1[:, None] + lw2
        # each row's last column, and the geometric bounds beyond it and before the first (past the mode the
        # ratios of successive terms only decrease outwards)
        self.right = np.minimum(m, hi)
        r_idx = self.right - lo
        rows = np.arange(h1.size)
        edge_r = lw2[rows, r_idx] + self.err[rows, r_idx]
        rho_r = (m - self.right) * q / ((self.right + 1) * qc)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.right_tail = np.where(self.right >= m, -np.inf,
                                       np.where(rho_r < 1, edge_r + np.log(rho_r) - np.log1p(-rho_r), 0.0))
            edge_l = lw2[:, 0] + self.err[:, 0]
            rho_l = lo * qc / ((m - lo + 1) * q)
            self.left_tail = np.where(lo == 0, -np.inf,
                                      np.where(rho_l < 1, edge_l + np.log(rho_l) - np.log1p(-rho_l), 0.0))
        self.right_tail = self.right_tail + 1e-12
        self.left_tail = self.left_tail + 1e-12


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
