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
  full (:func:`ppk._histogram_noiseless.noiseless_pair`): exact to rounding, whatever ``rtol``, up to
  :data:`NOISELESS_MAX_TERMS` terms.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import numpy.typing as npt

from . import _kernels
from ._curve import BracketedCurve
from ._histogram_noiseless import NOISELESS_MAX_TERMS
from ._pair_bound import pair_log_bracket, pairs_log_brackets
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
    def _rows_key(self) -> tuple[str, int, int] | None:
        """``("rows", n, known)``: a histogram shares its table's unknown rows with every count or histogram
        of that table (``CountingQuery._rows_key``)."""
        return ("rows", self.n, self.known) if self.has_natural_noise else None

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
        """(log lower, log upper) of max over the two worst ordered pairs of E_M[H_M(sigma/sqrt 2)] (at sigma = 0
        the exact lattice sum unless it is too large): the pair bound of :mod:`ppk._pair_bound`."""
        a, b = self.worst_pair()
        return pair_log_bracket(self.n_unknown, self.probs[a], self.probs[b], self._rest(a, b),
                                sigma_eff=self.sigma / math.sqrt(2.0), eps=eps, rtol=self.rtol,
                                max_evaluations=self.max_evaluations)

    _costly_curve = True

    def _log_delta_ends_many(self, eps: FloatArray, *, rtol: float) -> tuple[FloatArray, FloatArray]:
        """The pair bound's bracket at every eps in one kernel call (connect_the_dots, ppk.pld.curves), to ``rtol``."""
        a, b = self.worst_pair()
        lo, up = pairs_log_brackets(self.n_unknown, [(self.probs[a], self.probs[b], self._rest(a, b),
                                                      self.sigma / math.sqrt(2.0))],
                                    eps=eps, rtol=rtol, max_evaluations=self.max_evaluations)
        up = np.minimum(up, 0.0)
        return np.minimum(lo, up), up

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
        with _kernels.interruptible():   # Ctrl-C from any thread stops the loop's next kernel (docs/limits.md)
            for i, e in enumerate(flat):
                lower[i], upper[i] = self._upper_pairs(float(e))
        if not self.exact:   # the pair's lower end bounds the upper experiment only
            lower = np.maximum(self._single_bin_lower(flat), self._difference_lower(flat, upper))
        upper = np.minimum(upper, 0.0)   # delta <= 1 (the bound's rounding slack can reach past it)
        lower = np.minimum(lower, upper)
        shape = np.shape(eps)
        return lower.reshape(shape), upper.reshape(shape), scalar
