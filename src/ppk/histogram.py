"""A noisy histogram under partial background knowledge (docs/histograms.md).

``n`` rows, each in one of ``k`` categories.  The attacker knows ``known`` rows; the other
``N = n - known - 1`` rows besides the challenge row are i.i.d. categorical with probabilities
``probs`` (the attacker's belief).  The challenge row is in category ``a`` or ``b``; every bin's count
is released with independent Gaussian noise of standard deviation ``sigma`` (counts).  The unknown
rows are natural noise shared by all bins: they cannot be composed as independent releases.

What ppk computes (docs/histograms.md proves each step):

* ``M = X_a + X_b``, the unknown rows in the two bins, is ``Bin(N, pi_a + pi_b)`` under both
  hypotheses, and given ``M`` the other bins carry no information.  Revealing ``M`` to the attacker
  can only help them, and then ``(y_a - y_b) / 2`` is a count with natural noise
  ``Bin(M, pi_a / (pi_a + pi_b))`` and Gaussian noise ``sigma / sqrt(2)``.  So
  ``delta <= max over ordered pairs E_M[H_M(sigma / sqrt 2)]`` -- with equality at ``sigma = 0``
  (the attacker learns ``M`` anyway) and when only two categories are possible.
* That upper end is non-increasing in ``pi_a`` and in ``pi_b`` (more rows in the pair is
  post-processing), so the worst ordered pairs are the two smallest categories, in both orders.
* Any single bin is a count with natural noise ``Bin(N, pi_a)``, and the worst pair's difference
  ``y_a - y_b`` a count of natural noise ``X_a - X_b`` shifted by 2: their deltas are lower ends.
* ``H_M`` is non-increasing in ``M``, so buckets of ``M`` bracket the expectation with certainty
  (``ppk/histogram.hpp``); the bracket is refined to ``rtol``.
* At ``sigma = 0`` delta is a finite sum of positive terms over the pair's two counts, computed in
  full (:func:`_noiseless_pair`): exact to rounding, whatever ``rtol``, up to
  :data:`NOISELESS_MAX_TERMS` terms.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import numpy.typing as npt

from . import _kernels
from ._curve import BracketedCurve
from .counting import CountingQuery
from .noise import MIN_SCALE, Gaussian, RowSum
from .noisy_query import NoisyQuery
from ._typing import FloatArray
from ._validate import choice, integer, real, real_array, text

__all__ = ["HistogramQuery", "MAX_HISTOGRAM_ROWS", "MAX_CATEGORIES", "NOISELESS_MAX_TERMS", "probabilities",
           "floor_probabilities"]

#: Largest database a histogram takes: the kernel holds a window of O(sqrt(N)) values of M.
MAX_HISTOGRAM_ROWS = 10**10
#: Most categories :func:`floor_probabilities` and a histogram's :func:`ppk.release` take: the belief is built as a list
#: of one probability per category (a million of them is already far more bins than rows of most data sets).
MAX_CATEGORIES = 10**6

# How many categories give a single-bin lower end: those with the least natural noise.
_LOWER_CANDIDATES = 3
# The difference lower end (HistogramQuery._difference_lower) is computed where delta > e^-50 and N <= 1e8.
_DIFFERENCE_MIN_LOG_DELTA = -50.0
_DIFFERENCE_MAX_ROWS = 10**8
_DIFFERENCE_AUTO_ROWS = 2 * 10**6
_LOWER_METHODS = ("auto", "single", "difference")


def probabilities(name: str, values: npt.ArrayLike, *, minimum_length: int = 2) -> tuple[float, ...]:
    """Validated category probabilities: finite, in [0, 1], summing to 1 within 1e-9 (then renormalised).

    ``name`` is the caller's name for ``values``: the errors name it (``"probs"`` for a histogram)."""
    name = text("name", name)
    minimum_length = integer("minimum_length", minimum_length, minimum=1, maximum=MAX_CATEGORIES)
    flat, scalar = real_array(name, values, minimum=0.0, maximum=1.0)
    if scalar or flat.size < minimum_length:
        shown = float(flat[0]) if scalar else flat.size
        raise ValueError(f"{name} must list at least {minimum_length} probabilities, got "
                         + (f"a single number ({shown!r})" if scalar else f"{shown}"))
    total = math.fsum(flat.tolist())
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"{name} must sum to 1 (one probability per category), got a sum of {total!r}")
    return tuple(float(x) / total for x in flat)


def floor_probabilities(*, categories: int, min_prob: float) -> list[float]:
    """A belief whose upper end covers every belief that gives each of ``categories`` categories at least
    ``min_prob`` (see :meth:`HistogramQuery.worst_case`): two categories at exactly ``min_prob`` and the
    others sharing the rest, ``[m, m, r, ..., r]`` with ``r = (1 - 2m) / (k - 2) >= m`` -- one probability
    per category, so it can be given as ``probs`` to a release of ``k`` counts.

    The upper end depends on the two least likely categories and the rest's total only, so it is that
    of ``[m, m, 1 - 2m]`` whatever ``k``.  With two categories no two-entry belief covers them all (their
    probabilities must add to 1), so ``[m, m, 1 - 2m]`` is returned, with a third category the rows never
    fill: pass ``min_prob=`` to :func:`ppk.release` for a release of two counts.
    """
    k = integer("categories", categories, minimum=2, maximum=MAX_CATEGORIES)
    floor = real("min_prob", min_prob, minimum=0.0, maximum=0.5)
    if floor > 1.0 / k:
        raise ValueError(f"min_prob must be <= 1/categories = {1.0 / k!r} (no belief gives each of {k} categories "
                         f"more), got {floor!r}")
    if k == 2:
        return [floor, floor, 1.0 - 2.0 * floor]
    # max(., floor): 1 - 2m rounded and divided can land an ulp below m when m = 1/k (the uniform belief)
    rest = max((1.0 - 2.0 * floor) / (k - 2), floor)
    return [floor, floor] + [rest] * (k - 2)


# -- sigma = 0: the exact sum -------------------------------------------------------------------
#: Lattice terms the exact sigma = 0 sum of one ordered pair may add (about 17 ns each: ~1 s on 2 cores).
#: A larger sum -- many unknown rows at a small eps: N = 1e7 at eps = 0.01, 1e8 at 0.05, 1e10 at 0.5 --
#: is bracketed by the kernel to ``rtol`` instead.
NOISELESS_MAX_TERMS = 6 * 10**7
_U = 2.0 ** -53          # unit roundoff of a double
_UL = 2.0 ** -64         # of a long double (x87, 64-bit mantissa)
_BLOCK = 64              # lattice steps per row and pass
_COLUMNS = 4096          # rows per pass: the blocks stay in cache


def _binom_logpmf(n: int, p: float, pc: float, k: npt.NDArray[np.int64]) -> FloatArray:
    """log Bin(n, p) at k with ``pc = 1 - p`` held accurately: the kernel gets the smaller of the two
    (it forms the other as 1 - it in long double, exact enough only when it is the smaller)."""
    if p <= pc:
        return _kernels.binom_logpmf(n, p, k)
    return _kernels.binom_logpmf(n, pc, n - k)


def _tail_mass_log(N: int, p: float, lo: int, hi: int) -> float:
    """log of an upper bound on P(Bin(N, p) < lo) + P(Bin(N, p) > hi) for lo <= mode <= hi - 1: each
    tail by its first term over 1 - the pmf's ratio there (the ratios fall away from the mode)."""
    out = -math.inf
    if lo > 0:
        m = lo - 1
        ratio = m * (1.0 - p) / ((N - m + 1) * p)
        out = np.logaddexp(out, float(_binom_logpmf(N, p, 1.0 - p, np.array([m]))[0]) - math.log1p(-ratio))
    if hi < N:
        m = hi + 1
        ratio = (N - m) * p / ((m + 1) * (1.0 - p))
        out = np.logaddexp(out, float(_binom_logpmf(N, p, 1.0 - p, np.array([m]))[0]) - math.log1p(-ratio))
    return float(out)


def _noiseless_pair(N: int, pa: float, pb: float, rest: float, eps: float) -> tuple[float, float, int] | None:
    """(log lower, log upper, terms) of one ordered pair's delta at sigma = 0, or None past the budget.

    At sigma = 0 the attacker reads the two bins: with ``x, y`` the unknown rows in ``a`` and ``b``
    (trinomial ``T(x, y)`` with the rest), the hypotheses give ``(x + 1, y)`` and ``(x, y + 1)``, and
    ``T(x - 1, y + 1) / T(x, y) = (pi_b / pi_a) x / (y + 1)``.  So, with ``c = e^eps pi_a / pi_b``,

        delta = sum over x + 1 > c y of  T(x, y) (1 - c y / (x + 1)),

    a finite sum of positive terms.  By ``M = x + y ~ Bin(N, s)`` and ``x ~ Bin(M, q)`` given ``M``,
    row ``M`` starts at the least ``k`` in the cone; its terms fall by the ratio
    ``(M - x) q / ((x + 1) q_c) < e^-eps`` (in the cone), so each row stops when the geometric bound
    on its rest is below ``e^-55 / W`` of the largest row: the rest is added to the upper end.  The
    rows that matter lie around the mean of the tilted law ``Bin(N, s')``, ``s' = s g / (1 - s + s g)``,
    ``g = (q_c + q e^eps) e^{-eps theta}``, ``theta = c / (1 + c)``: Chernoff's bound at the tilt eps gives
    ``P(x >= k) <= e^{eps (1 - theta)} g^M``, so the rows outside 12 standard deviations of ``s'`` carry
    at most ``e^{eps (1 - theta)} (1 - s + s g)^N P(Bin(N, s') outside)``, added to the upper end.
    Rounding: the anchors are the kernel's log pmf (Loader, long double, returned as doubles); the
    terms are products of ratios in double; the weight's numerator ``(x + 1) - c y`` grows by ``1 + c``
    a step, so it is its row's first value (long double) plus a multiple of ``1 + c``: an absolute error
    ~1e-18 plus a few ulps relative, never a cancellation.  The bound on each is added to the upper end
    and taken from the lower one.
    """
    if N == 0 or pa == 0.0 or pb == 0.0:
        return 0.0, 0.0, 0   # a bin the unknown rows never reach (or none unknown): it shows the challenge row
    s = pa + pb
    q, qc = pa / s, pb / s
    LD = np.longdouble
    qL, qcL = (LD(q), LD(1) - LD(q)) if q <= qc else (LD(1) - LD(qc), LD(qc))   # as the kernel forms them
    log_qL, log_qcL = np.log(qL), np.log(qcL)
    lc = LD(eps) + log_qL - log_qcL
    # bound on the error of lc, hence of c = e^lc (relative): the roundings of eps + log - log and of exp
    err_c = float(4 * _UL * (abs(LD(eps)) + abs(log_qL) + abs(log_qcL) + 1))
    if lc > np.log(LD(N)) + 1e-9:
        # c > N >= M: no x < M is in the cone (that needs (x + 1)/(M - x) > c), and x = M has weight 1, so
        # delta = sum_M P(M) q^M = (1 - s q_c)^N: the distinguishing mass (no row of the pair in b)
        log_delta = LD(N) * np.log1p(-(LD(s) * qcL))
        slack = 8 * _UL * (abs(log_delta) + 1) + 4 * _U * abs(float(log_delta))   # + s rounded from pa + pb
        return float(log_delta) - slack, float(log_delta) + slack, 1
    c = np.exp(lc)
    theta = 1 / (1 + np.exp(-lc))
    log_g = np.logaddexp(log_qcL, log_qL + LD(eps)) - LD(eps) * theta
    if rest == 0.0:   # two categories: every unknown row is in the pair
        Ms = np.array([N], dtype=np.int64)
        log_pm = np.zeros(1)
        log_outside = -math.inf
    else:
        logit = np.log(LD(s)) + log_g - np.log(LD(rest))
        sp = min(max(float(1 / (1 + np.exp(-logit))), 1e-300), 1.0 - 2**-53)
        mode = min(int(math.floor((N + 1) * sp)), N)
        half = int(math.ceil(12 * math.sqrt(N * sp * (1 - sp)) + 40))
        lo, hi = max(0, mode - half), min(N, mode + half)
        Ms = np.arange(lo, hi + 1, dtype=np.int64)
        log_pm = _binom_logpmf(N, s, rest, Ms)
        log_chernoff = float(LD(eps) * (1 - theta) + LD(N) * np.logaddexp(np.log(LD(rest)), np.log(LD(s)) + log_g))
        # times 2: s' is rounded, and the identity sum P(M) g^M [M in S] = (1 - s + s g)^N P(Bin(N, s') in S) is exact
        log_outside = log_chernoff + math.log(2.0) + _tail_mass_log(N, sp, lo, hi)
    # row M starts at k = the least x in the cone {x = M or x + 1 > c (M - x)}
    ML = Ms.astype(LD)
    k = np.clip(np.floor(theta * (ML + 1) - 1).astype(np.int64) + 1, 0, Ms)
    def inside(x):
        return (x >= Ms) | ((x + 1).astype(LD) > c * (Ms - x).astype(LD))
    for _ in range(8):   # theta (M + 1) is within a few ulps of the boundary: one step each way suffices
        k = np.where((k > 0) & inside(k - 1), k - 1, k)
        k = np.where(inside(k), k, k + 1)
    if not (inside(k).all() and not ((k > 0) & inside(k - 1)).any()):
        raise ArithmeticError("the sigma = 0 histogram sum could not place its rows; please report")
    W = Ms.size
    # a priori work: rows x terms per row (the fall e^-eps per step, or log-concavity near eps = 0)
    mid = W // 2
    M_mid, k_mid = int(Ms[mid]), int(k[mid])
    r0 = (M_mid - k_mid) * q / ((k_mid + 1) * qc) if M_mid > k_mid else 0.0
    per_row = 1.0 if r0 == 0 else min(M_mid - k_mid + 1.0, 60 / -math.log(r0) if r0 < 1 else math.inf,
                                      math.sqrt(120 * M_mid * q * qc) + 60)
    if W * (per_row + 50) > 2 * NOISELESS_MAX_TERMS:   # + 50: a row's anchor costs about as many terms
        return None
    # the anchors: log P(M) + log Bin(M, q)(k), the kernel's Loader form
    log_anchor = np.array([float(_binom_logpmf(int(m), q, qc, np.array([x]))[0]) for m, x in zip(Ms, k)])
    base = log_pm + log_anchor
    # The weight's numerator D = (x + 1) - c (M - x) grows by exactly 1 + c a step: D_j = D_0 + j (1 + c),
    # with D_0 in (0, 1 + c] formed once per row in long double.  So D_j carries a few ulps relative
    # plus D_0's absolute error (c's relative error times c (M - k) < k + 1), never a cancellation.
    d0L = (k + 1).astype(LD) - c * (Ms - k).astype(LD)
    d0 = d0L.astype(float)
    one_c = float(1 + c)
    rho = float(qL / qcL)
    S = np.zeros(W)          # sum of t w per row, relative to its first term
    T = np.zeros(W)          # sum of t per row (the weights' absolute error multiplies it)
    tail = np.zeros(W)       # bound on the row's terms not added
    steps = np.zeros(W)      # terms added per row
    t_next = np.ones(W)
    x1_0, y_0 = (k + 1).astype(float), (Ms - k).astype(float)
    offsets = np.arange(_BLOCK, dtype=float)[:, None]
    active = np.arange(W)
    ref = -math.inf
    terms = 0
    j0 = 0
    log_w_rows = math.log(W)
    while active.size:
        if terms > 3 * NOISELESS_MAX_TERMS:
            return None
        offs = offsets + j0
        grow = offs * one_c
        still = []
        for start in range(0, active.size, _COLUMNS):
            idx = active[start:start + _COLUMNS]
            inv = 1.0 / (x1_0[idx] + offs)                  # 1 / (x + 1)
            R = (y_0[idx] - offs) * inv                     # (M - x) / (x + 1): 0 at x = M, the row's end
            R *= rho                                        # t(x + 1) / t(x)
            t = np.empty_like(R)
            t[0] = t_next[idx]
            for i in range(1, _BLOCK):
                np.multiply(t[i - 1], R[i - 1], out=t[i])
            w = (d0[idx] + grow) * inv
            S[idx] += np.einsum("ij,ij->j", t, w)
            T[idx] += t.sum(axis=0)
            steps[idx] += _BLOCK
            terms += t.size
            nxt = t[-1] * R[-1]
            y_next = y_0[idx] - (j0 + _BLOCK)               # M - (next x)
            r_next = y_next * rho / (x1_0[idx] + (j0 + _BLOCK))
            done = y_next < 0                               # the row reached x = M
            with np.errstate(divide="ignore", invalid="ignore"):
                bound = np.where(done, 0.0, np.where(r_next < 1, nxt / (1 - r_next), np.inf))
                ref = max(ref, float(np.max(base[idx] + np.log(S[idx]))))
                finished = done | (base[idx] + np.log(bound) <= ref - 55 - log_w_rows)
            tail[idx[finished]] = bound[finished]
            t_next[idx] = nxt
            still.append(idx[~finished])
        active = np.concatenate(still)
        j0 += _BLOCK
    # assemble in long double: rows relative to the largest
    with np.errstate(divide="ignore"):
        log_rows = base + np.log(S)
    top = float(np.max(log_rows))
    scale = np.exp((base - top).astype(LD))
    rows = scale * S.astype(LD)
    # relative error per row: two anchors (double logs of long-double values), the ratio products and
    # rho's rounding (4 ulps a step), the block sums, D_j and the division by x + 1 (6 ulps)
    eta = 2 * _U * (np.abs(log_pm) + np.abs(log_anchor) + 2) + _U * (4 * steps + _BLOCK + steps / _BLOCK + 16)
    # the weights' absolute error: D_0's (c's relative error and the long-double rounding, times c (M - k),
    # which is below k + 1) over x + 1 >= k + 1, and D_0's rounding to a double
    e_w = err_c + 4 * _UL + _U * float(np.max(np.abs(d0) / x1_0))
    # a lattice point just outside the cone by less than that error may belong in it, with a weight
    # below e_w: its term is t(k - 1) = t(k) k / ((M - k + 1) rho)
    before = np.where(k > 0, k / np.maximum(Ms - k + 1, 1) / rho, 0.0)
    middle = float(np.sum(rows))
    spread = float(np.sum(rows * (np.exp(eta.astype(LD)) - 1)) + e_w * np.sum(scale * (T + before).astype(LD)))
    cut = float(np.sum(scale * tail.astype(LD)))
    upper = middle + spread + cut
    lower = middle - spread
    log_up = top + math.log(upper) + 4 * _UL * abs(top)
    log_up = float(np.logaddexp(log_up, log_outside))
    log_lo = top + math.log(lower) - 4 * _UL * abs(top) if lower > 0 else -math.inf
    return log_lo, min(log_up, 0.0), terms


class HistogramQuery(BracketedCurve):
    """Every bin of a ``k``-category histogram plus Gaussian noise, against an attacker who knows ``known`` rows.

    :meth:`delta` and :meth:`log_delta` report the certified upper end of the privacy curve (at
    ``sigma = 0`` the exact value, to long-double rounding, whenever its lattice sum has at most
    :data:`NOISELESS_MAX_TERMS` terms; a bracket to ``rtol`` beyond); :meth:`delta_bracket` gives both ends: the upper
    one reveals ``M = X_a + X_b`` to the attacker, the lower one is the best single bin or the worst
    pair's difference (``lower``).

    Parameters
    ----------
    n : int
        Rows in the database, ``1 <= n <= 1e10``.
    known : int
        Rows the attacker knows, ``0 <= known <= n - 1``.
    probs : sequence of float
        The attacker's belief: the probability of each category for an unknown row (sums to 1).
    sigma : float
        Standard deviation of the Gaussian noise added to **each** bin, in counts.
    rtol : float
        Relative width to which the expectation over ``M`` is summed (default 1e-3).  The bracket
        is certified whatever its width; a smaller ``rtol`` costs more evaluations.
    max_evaluations : int
        Budget of values of ``M`` per ordered pair (default 2000); the bracket is reported as it
        stands when it is spent.
    lower : str
        How the lower end is found: ``"single"`` (the best single bin), ``"difference"`` (also the
        worst pair's difference ``y_a - y_b``, often within a factor of a few of the upper end, but
        its natural noise is built exactly and costs ~1 s at N = 1e7), or ``"auto"`` (default: the
        difference up to N = 2e6 unknown rows).

    Examples
    --------
    >>> h = HistogramQuery(n=10_000, known=5_000, probs=[0.5, 0.3, 0.2], sigma=2.0)
    >>> lower, upper = h.delta_bracket(0.5)
    >>> bool(0 < lower <= upper < 1e-6)
    True
    """

    __slots__ = ("n", "known", "probs", "sigma", "rtol", "max_evaluations", "lower")

    def __init__(self, *, n: int, known: int, probs: Sequence[float] | npt.ArrayLike, sigma: float,
                 rtol: float = 1e-3, max_evaluations: int = 2000, lower: str = "auto"):
        self.n = integer("n", n, minimum=1, maximum=MAX_HISTOGRAM_ROWS)
        self.known = integer("known", known, minimum=0)
        if self.known >= self.n:
            raise ValueError(f"known must be < n (the challenge row is unknown), got known={self.known}, n={self.n}")
        self.probs = probabilities("probs", probs)
        self.sigma = real("sigma", sigma, minimum=0.0)
        self.rtol = real("rtol", rtol, minimum=1e-15, maximum=1.0)
        self.max_evaluations = integer("max_evaluations", max_evaluations, minimum=2, maximum=10**6)
        self.lower = choice("lower", lower, _LOWER_METHODS)

    def __repr__(self) -> str:
        return (f"HistogramQuery(n={self.n}, known={self.known}, probs={list(self.probs)!r}, "
                f"sigma={self.sigma!r})")

    @property
    def n_unknown(self) -> int:
        """``N = n - known - 1``: the unknown rows other than the challenge row."""
        return self.n - self.known - 1

    @property
    def exact(self) -> bool:
        """True when the two ends coincide (at ``sigma = 0`` to rounding, or to ``rtol`` past the exact sum's
        budget; otherwise up to the summation's ``rtol``): the attacker knows
        ``M = X_a + X_b`` for the worst pair anyway -- ``sigma = 0``, ``N = 0``, or every unknown row
        is in the pair (only those two categories are possible) or none is."""
        a, b = self.worst_pair()
        s = self.probs[a] + self.probs[b]
        return self.sigma == 0 or self.n_unknown == 0 or s == 0 or self._rest(a, b) == 0

    def _rest(self, a: int, b: int) -> float:
        """The probability of the categories outside the pair, summed exactly (0 when there are none)."""
        return math.fsum(p for i, p in enumerate(self.probs) if i not in (a, b))

    @classmethod
    def worst_case(cls, *, n: int, known: int, categories: int, min_prob: float, sigma: float,
                   rtol: float = 1e-3) -> "HistogramQuery":
        """The histogram whose upper end covers **every** belief giving each category at least ``min_prob``.

        The upper end of an ordered pair depends on the pair's two probabilities only and is
        non-increasing in each (docs/histograms.md), so over all such beliefs it is at most its value
        for two categories of exactly ``min_prob`` and the rest elsewhere: the histogram of
        :func:`floor_probabilities` returned here (``[m, m, r, ..., r]``; ``[m, m, 1 - 2m]`` for
        ``categories = 2``); its lower end describes that belief only.  ``min_prob = 0`` is plain DP.
        """
        return cls(n=n, known=known, probs=floor_probabilities(categories=categories, min_prob=min_prob),
                   sigma=sigma, rtol=rtol)

    def with_sigma(self, sigma: float) -> "HistogramQuery":
        """The same histogram with another noise level (counts)."""
        return HistogramQuery(n=self.n, known=self.known, probs=self.probs, sigma=sigma, rtol=self.rtol,
                              max_evaluations=self.max_evaluations, lower=self.lower)

    # -- the calibration protocol (ppk.calibrate)
    _calibration_rtol = 1e-6    # an evaluation sums over M: costlier than a count's
    _calibration_grow = 1e-6    # the summation's rounding allowance is wider than a count's

    @property
    def scale(self) -> float:
        """:attr:`sigma`, the noise of every bin (counts)."""
        return self.sigma

    def with_scale(self, scale: float) -> "HistogramQuery":
        """:meth:`with_sigma` (the calibration protocol's name)."""
        return self.with_sigma(real("scale", scale, minimum=0.0))

    @property
    def has_natural_noise(self) -> bool:
        return self.n_unknown > 0

    @property
    def _rows_key(self) -> tuple[str, int, int, tuple[float, ...]] | None:
        """``(n, known, probs)``: histograms of one database against one attacker share its unknown rows."""
        return ("HistogramQuery", self.n, self.known, self.probs) if self.has_natural_noise else None

    def without_natural_noise(self) -> "HistogramQuery":
        """The same noise against an attacker who knows every other row (``N = 0``)."""
        return HistogramQuery(n=self.known + 1, known=self.known, probs=self.probs, sigma=self.sigma, rtol=self.rtol,
                              max_evaluations=self.max_evaluations, lower=self.lower)

    def dp_scale(self, *, eps: float, delta: float) -> float:
        """Plain DP's sigma for a histogram: the analytic Gaussian mechanism's at sensitivity sqrt 2 (a row
        moves from one bin to another), which bounds every ``H_M``."""
        from .baselines import analytic_gaussian_sigma
        return analytic_gaussian_sigma(eps=eps, delta=delta, sensitivity=math.sqrt(2.0))

    def _log_delta_upper_at(self, eps: float) -> float:
        return self._upper_pairs(float(eps))[1]

    def worst_pair(self) -> tuple[int, int]:
        """The indices of the two least likely categories: the ordered pairs that bound delta."""
        order = sorted(range(len(self.probs)), key=lambda i: self.probs[i])
        return order[0], order[1]

    # -- the two ends, one eps at a time ----------------------------------------------------
    def _upper_pairs(self, eps: float) -> tuple[float, float]:
        """(log lower, log upper) of max over the two worst ordered pairs of E_M[H_M(sigma/sqrt 2)]."""
        a, b = self.worst_pair()
        s = self.probs[a] + self.probs[b]
        rest = self._rest(a, b)
        if self.sigma == 0:
            # the exact sum (rtol plays no part), unless it is too large; then the kernel's bracket below
            orders = [(a, b)] if self.probs[a] == self.probs[b] else [(a, b), (b, a)]   # equal: the same sum
            exact = [_noiseless_pair(self.n_unknown, self.probs[i], self.probs[j], rest, eps) for i, j in orders]
            if all(e is not None for e in exact):
                return max(e[0] for e in exact), max(e[1] for e in exact)   # type: ignore[index]
        sigma_pair = self.sigma / math.sqrt(2.0)
        if s == 0:   # both impossible: no natural noise between them
            q_pairs = [(0.5, 0.5)]
        else:
            q_a, q_b = self.probs[a] / s, self.probs[b] / s
            q_pairs = [(q_a, q_b)] if q_a == q_b else [(q_a, q_b), (q_b, q_a)]
        lows, ups = [], []
        for q, q_rest in q_pairs:
            lo, up, _ = _kernels.mixture_log_delta_bracket(self.n_unknown, s, rest, q, q_rest, sigma=sigma_pair,
                                                           eps=eps, rtol=self.rtol,
                                                           max_evaluations=self.max_evaluations)
            lows.append(lo)
            ups.append(up)
        return max(lows), max(ups)

    def _single_bin_lower(self, eps: FloatArray) -> FloatArray:
        """max over a few single bins of the count's delta: each bin alone is a noisy count."""
        distinct = sorted({min(p, 1.0 - p) for p in self.probs})[:_LOWER_CANDIDATES]
        out = np.full(eps.shape, -np.inf)
        for p in distinct:
            log_delta, _, _ = CountingQuery(n=self.n_unknown + 1, known=0, p=p, sigma=self.sigma)._curve(eps)
            out = np.maximum(out, log_delta)
        return out

    def _difference_lower(self, eps: FloatArray, log_upper: FloatArray) -> FloatArray:
        """The worst pair's difference y_a - y_b alone, without M: a count of natural noise
        X_a - X_b (a sum of N rows valued -1, 0, 1 with probabilities pi_b, rest, pi_a) shifted by
        exactly 2, with noise N(0, 2 sigma^2) -- a post-processing of the release, so its delta is a
        lower end.  Only where delta > e^-50 (deeper, its windows cost more than the bracket needs),
        N <= 1e8, and (``lower="auto"``) N <= 2e6."""
        out = np.full(eps.shape, -np.inf)
        a, b = self.worst_pair()
        N = self.n_unknown
        limit = _DIFFERENCE_AUTO_ROWS if self.lower == "auto" else _DIFFERENCE_MAX_ROWS
        if self.lower == "single" or self.sigma * math.sqrt(2.0) < MIN_SCALE or N == 0 or N > limit:
            return out
        q = NoisyQuery(natural=RowSum([self.probs[b], self._rest(a, b), self.probs[a]], N),
                       added=Gaussian(self.sigma * math.sqrt(2.0)), shifts=(2,))
        wanted = log_upper > _DIFFERENCE_MIN_LOG_DELTA
        if wanted.any():
            try:
                log_delta = np.asarray(q.log_delta(eps[wanted]))
            except ValueError:
                # noise.py refuses a window whose exact convolutions would pass MAX_CONVOLUTION_WORK (with N
                # near 1e8, windows deeper than e^-64 of the mode): a lower end may always be dropped -- it
                # only tightens the bracket -- so the single bins' lower end stands alone
                return out
            # the estimate is never above the window pair's delta by more than rounding, nor that above
            # the law's by more than the window's negligible slack: 1e-9 relative covers both
            out[wanted] = log_delta - 1e-9
        return out

    def _log_bracket(self, eps: npt.ArrayLike) -> tuple[FloatArray, FloatArray, bool]:
        flat, scalar = real_array("eps", eps, minimum=0.0)
        lower = np.empty_like(flat)
        upper = np.empty_like(flat)
        for i, e in enumerate(flat):
            lower[i], upper[i] = self._upper_pairs(float(e))
        if not self.exact:   # the pair's lower end bounds the upper experiment only
            lower = np.maximum(self._single_bin_lower(flat), self._difference_lower(flat, upper))
        upper = np.minimum(upper, 0.0)   # delta <= 1 (the bound's rounding slack can reach past it)
        lower = np.minimum(lower, upper)
        shape = np.shape(eps)
        return lower.reshape(shape), upper.reshape(shape), scalar
