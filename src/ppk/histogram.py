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
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import numpy.typing as npt

from . import _kernels
from ._curve import BracketedCurve
from ._random import as_source, warn_if_seeded
from ._search import log_target, smallest_feasible_scale
from ._typing import FloatArray, RngLike
from ._validate import integer, real, real_array

__all__ = ["HistogramQuery", "calibrate_histogram", "HistogramCalibration", "release_histogram",
           "HistogramRelease", "MAX_HISTOGRAM_ROWS", "probabilities", "floor_probabilities"]

#: Largest database a histogram takes: the kernel holds a window of O(sqrt(N)) values of M.
MAX_HISTOGRAM_ROWS = 10**10

# How many categories give a single-bin lower end: those with the least natural noise.
_LOWER_CANDIDATES = 3
# The difference lower end (HistogramQuery._difference_lower) is computed where delta > e^-50 and N <= 1e8.
_DIFFERENCE_MIN_LOG_DELTA = -50.0
_DIFFERENCE_MAX_ROWS = 10**8
_DIFFERENCE_AUTO_ROWS = 2 * 10**6
_LOWER_METHODS = ("auto", "single", "difference")


def probabilities(name: str, values: npt.ArrayLike, *, minimum_length: int = 2) -> tuple[float, ...]:
    """Validated category probabilities: finite, in [0, 1], summing to 1 within 1e-9 (then renormalised)."""
    flat, scalar = real_array(name, values, minimum=0.0, maximum=1.0)
    if scalar or flat.size < minimum_length:
        raise ValueError(f"{name} must list at least {minimum_length} probabilities, got {values!r}")
    total = math.fsum(flat.tolist())
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"{name} must sum to 1 (one probability per category), got a sum of {total!r}")
    return tuple(float(x) / total for x in flat)


def floor_probabilities(*, categories: int, min_prob: float) -> list[float]:
    """``[min_prob, min_prob, 1 - 2 min_prob]``: the belief whose upper end covers every belief that gives
    each of ``categories`` categories at least ``min_prob`` (see :meth:`HistogramQuery.worst_case`)."""
    k = integer("categories", categories, minimum=2)
    floor = real("min_prob", min_prob, minimum=0.0, maximum=1.0 / k)
    return [floor, floor, 1.0 - 2.0 * floor]


class HistogramQuery(BracketedCurve):
    """Every bin of a ``k``-category histogram plus Gaussian noise, against an attacker who knows ``known`` rows.

    :meth:`delta` and :meth:`log_delta` report the certified upper end of the privacy curve (exact
    at ``sigma = 0`` up to the summation bracket); :meth:`delta_bracket` gives both ends: the upper
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
        if lower not in _LOWER_METHODS:
            raise ValueError(f"lower must be one of {_LOWER_METHODS}, got {lower!r}")
        self.lower = lower

    def __repr__(self) -> str:
        return (f"HistogramQuery(n={self.n}, known={self.known}, probs={list(self.probs)!r}, "
                f"sigma={self.sigma!r})")

    @property
    def n_unknown(self) -> int:
        """``N = n - known - 1``: the unknown rows other than the challenge row."""
        return self.n - self.known - 1

    @property
    def exact(self) -> bool:
        """True when the two ends coincide (up to the summation's ``rtol``): the attacker knows
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
        for two categories of exactly ``min_prob`` and the rest elsewhere: the histogram
        ``[min_prob, min_prob, 1 - 2 min_prob]`` returned here (for ``categories = 2`` too; its lower
        end describes that belief only).  ``min_prob = 0`` is plain DP.
        """
        return cls(n=n, known=known, probs=floor_probabilities(categories=categories, min_prob=min_prob),
                   sigma=sigma, rtol=rtol)

    def with_sigma(self, sigma: float) -> "HistogramQuery":
        """The same histogram with another noise level (counts)."""
        return HistogramQuery(n=self.n, known=self.known, probs=self.probs, sigma=sigma, rtol=self.rtol,
                              max_evaluations=self.max_evaluations, lower=self.lower)

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
            curve = _kernels.counting_curve(self.n_unknown, p, sigma=self.sigma, eps=eps)
            out = np.maximum(out, curve.log_delta)
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
        from .noise import MIN_SCALE, Gaussian, RowSum
        from .noisy_query import NoisyQuery
        limit = _DIFFERENCE_AUTO_ROWS if self.lower == "auto" else _DIFFERENCE_MAX_ROWS
        if self.lower == "single" or self.sigma * math.sqrt(2.0) < MIN_SCALE or N == 0 or N > limit:
            return out
        q = NoisyQuery(natural=RowSum([self.probs[b], self._rest(a, b), self.probs[a]], N),
                       added=Gaussian(self.sigma * math.sqrt(2.0)), shifts=(2,))
        wanted = log_upper > _DIFFERENCE_MIN_LOG_DELTA
        if wanted.any():
            # the estimate is never above the window pair's delta by more than rounding, nor that above
            # the law's by more than the window's negligible slack: 1e-9 relative covers both
            out[wanted] = np.asarray(q.log_delta(eps[wanted])) - 1e-9
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


@dataclass(frozen=True)
class HistogramCalibration:
    """What :func:`calibrate_histogram` found.  Noise scales are standard deviations in counts, per bin."""

    sigma: float            #: the noise to add to every bin (0 when the unknown rows suffice)
    sigma_lower: float      #: sigma - this is the width of the final bracket: the least sigma is above it
    sigma_dp: float         #: plain DP: the analytic Gaussian with sensitivity sqrt(2) (no natural noise)
    delta_achieved: float   #: certified upper end of delta(eps) at sigma (<= the target)
    evaluations: int
    query: HistogramQuery   #: the calibrated histogram

    @property
    def noise_saved(self) -> float:
        """1 - sigma / sigma_dp: the fraction of plain DP's noise the natural noise makes unnecessary."""
        return 1.0 - self.sigma / self.sigma_dp


def calibrate_histogram(*, n: int, known: int, probs: Sequence[float] | npt.ArrayLike, eps: float, delta: float,
                        rtol: float = 1e-6, summation_rtol: float = 1e-3) -> HistogramCalibration:
    """The smallest per-bin Gaussian sigma whose certified upper delta(eps) is <= ``delta``.

    The search (regula falsi on log delta against sigma^2, safeguarded by bisection) runs between 0
    and plain DP's sigma for sensitivity sqrt(2), which is always private: every ``H_M`` is at most
    the Gaussian mechanism's delta.  The returned sigma was evaluated and found private.

    Parameters
    ----------
    n, known, probs :
        As in :class:`HistogramQuery`.
    eps, delta : float
        The target, ``eps > 0``, ``0 < delta < 1``.
    rtol : float
        Relative width of the final bracket on sigma.
    summation_rtol : float
        ``rtol`` of each evaluation's summation over ``M`` (a wider one is cheaper and slightly
        more pessimistic, never less private).
    """
    base = HistogramQuery(n=n, known=known, probs=probs, sigma=0.0, rtol=summation_rtol)
    eps = real("eps", eps, minimum=0.0, min_inclusive=False)
    delta = real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    rtol = real("rtol", rtol, minimum=0.0, min_inclusive=False)
    target = log_target(delta)
    from .baselines import analytic_gaussian_sigma
    sigma_dp = analytic_gaussian_sigma(eps=eps, delta=delta, sensitivity=math.sqrt(2.0))
    cache: dict[float, float] = {}

    def excess(sigma: float) -> float:
        if sigma not in cache:
            cache[sigma] = max(base.with_sigma(sigma)._upper_pairs(eps)[1] - target, -1e3)
        return cache[sigma]

    def result(sigma: float, lower: float) -> HistogramCalibration:
        return HistogramCalibration(sigma=sigma, sigma_lower=lower, sigma_dp=sigma_dp,
                                    delta_achieved=math.exp(excess(sigma) + target), evaluations=len(cache),
                                    query=base.with_sigma(sigma))

    if excess(0.0) <= 0:
        return result(0.0, 0.0)
    # sigma's relative width rtol/2: the bracket in v = sigma^2 is rtol v wide
    found = smallest_feasible_scale(excess, sigma_dp, f_zero=excess(0.0), width=lambda s: rtol * s, grow=1e-6)
    return result(found.x, found.lower)


@dataclass(frozen=True)
class HistogramRelease:
    """A released histogram: ``counts[i] + round(sigma Z_i)`` per bin, and how sigma was chosen."""

    values: tuple[int, ...]             #: the noisy counts to publish, one per category
    calibration: HistogramCalibration   #: public: sigma, the certified delta, plain DP's sigma
    insecure_for_testing: bool          #: seeded randomness: reproducible, NOT private


def release_histogram(*, counts: Sequence[int], known: int, probs: Sequence[float] | npt.ArrayLike, eps: float,
                      delta: float, rng: RngLike = None) -> HistogramRelease:
    """Release every bin's count plus exactly sampled rounded Gaussian noise, sigma from :func:`calibrate_histogram`.

    ``counts`` are the true counts per category (their sum is ``n``, which is public).  The noise is
    drawn by the exact integer sampler :func:`ppk.samplers.rounded_gaussian` from a cryptographically
    secure source unless ``rng`` is given (then it warns and marks the result as not private).
    Rounding each bin is post-processing, so the calibrated (eps, delta) holds for the integers released.
    """
    from .samplers import rounded_gaussian
    values = [integer(f"counts[{i}]", c, minimum=0) for i, c in enumerate(counts)]
    probs_t = probabilities("probs", probs)
    if len(values) != len(probs_t):
        raise ValueError(f"counts and probs must have one entry per category, got {len(values)} counts and "
                         f"{len(probs_t)} probabilities")
    n = sum(values)
    if n < 1:
        raise ValueError("counts must hold at least one row")
    cal = calibrate_histogram(n=n, known=known, probs=probs_t, eps=eps, delta=delta)
    source = as_source(rng)
    warn_if_seeded(source, "release_histogram")
    noisy = tuple(c + (rounded_gaussian(cal.sigma, rng=source) if cal.sigma > 0 else 0) for c in values)
    return HistogramRelease(values=noisy, calibration=cal, insecure_for_testing=not source.secure)
