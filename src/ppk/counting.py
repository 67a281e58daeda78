"""The noisy counting query under partial background knowledge (docs/method.md).

A database holds ``n`` binary rows.  The attacker knows ``known`` of them; the
challenge row is unknown; the other ``N = n - known - 1`` rows are unknown to
the attacker and i.i.d. Bernoulli(``p``).  The mechanism releases the count
plus Gaussian noise of standard deviation ``sigma`` (count units, sensitivity
1).  The unknown rows act as *natural noise*: the privacy curve is

    delta(eps) = max( H_{e^eps}(P_1 || P_0), H_{e^eps}(P_0 || P_1) ),
    P_a = law of  a + Bin(N, p) + N(0, sigma^2),

the hockey-stick divergence between the outputs with the challenge row 1 and
0 (docs/method.md, "The model").  It depends on ``(N, p, sigma, eps)`` only: which rows the
attacker knows, and their values, do not matter (docs/decisions.md, "Which rows the attacker knows does not matter").

:class:`CountingQuery` is the case ``natural=Binomial(N, p)``, ``added=Gaussian(sigma)``, sensitivity 1
of :class:`ppk.NoisyQuery`, which computes it on the C++ counting kernel; this class only names the
laws in the thesis's terms.
"""
from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from . import _kernels
from ._curve import ExactLoss
from ._typing import FloatArray
from ._validate import integer, real, real_array
from .baselines import analytic_gaussian_sigma
from .noise import Binomial, Gaussian, NoNoise
from .noisy_query import NoisyQuery

__all__ = ["CountingQuery", "MAX_ROWS", "log_delta_upper_over_biases"]

#: Largest supported database size.  One evaluation costs O(sqrt(n)) time and memory.
MAX_ROWS = 10**12


class CountingQuery(NoisyQuery):
    """A noisy count over ``n`` binary rows seen by an attacker who knows ``known`` rows.

    The case of :class:`~ppk.NoisyQuery` the thesis studies, in its terms: natural noise
    ``Binomial(N, p)`` with ``N = n - known - 1``, added noise ``Gaussian(sigma)`` (none at
    ``sigma = 0``), sensitivity 1.  Its privacy curve (:meth:`delta`, :meth:`log_delta`,
    :meth:`delta_upper`, :meth:`epsilon`) is computed by the C++ counting kernel: measured <= 1e-11
    relative on delta against a 40-digit oracle, the certified upper bound within ~1e-10 of it
    (docs/accuracy.md).

    Parameters
    ----------
    n : int
        Number of rows in the database, ``1 <= n <= 1e12``.
    known : int
        Number of rows the attacker knows, ``0 <= known <= n - 1`` (the challenge
        row is never known).
    p : float
        Probability that an unknown row is 1, in ``[0, 1]``.
    sigma : float
        Standard deviation of the added Gaussian noise **in counts** (the query
        has sensitivity 1).  ``sigma = 0`` is the noiseless count.  The thesis's
        normalised scale is ``beta = sigma / n``.

    Notes
    -----
    ``N = n - known - 1 = 0`` or ``p`` in ``{0, 1}`` leaves no natural noise: the
    curve is the analytic Gaussian one of Balle & Wang (and 1 at ``sigma = 0``).

    Examples
    --------
    >>> q = CountingQuery(n=100_000, known=50_000, p=0.5, sigma=3.0)
    >>> bool(q.delta(0.05) < 1e-6)
    True
    >>> q.natural, q.added
    (Binomial(n=49999, p=0.5), Gaussian(sigma=3.0))
    """

    _calibration_rtol = 1e-10   # an evaluation is cheap (the counting kernel)

    def __init__(self, *, n: int, known: int, p: float, sigma: float):
        self.n = integer("n", n, minimum=1, maximum=MAX_ROWS)
        self.known = integer("known", known, minimum=0)
        if self.known >= self.n:
            raise ValueError(f"known must be < n (the challenge row is unknown), got known={self.known}, n={self.n}")
        self.p = real("p", p, minimum=0.0, maximum=1.0)
        self.sigma = real("sigma", sigma, minimum=0.0)
        super().__init__(natural=Binomial(self.n - self.known - 1, self.p),
                         added=Gaussian(self.sigma) if self.sigma > 0 else NoNoise(), sensitivity=1)

    def __repr__(self) -> str:
        return f"CountingQuery(n={self.n}, known={self.known}, p={self.p!r}, sigma={self.sigma!r})"

    @property
    def n_unknown(self) -> int:
        """``N = n - known - 1``: the unknown rows other than the challenge row."""
        return self.n - self.known - 1

    @property
    def beta(self) -> float:
        """The thesis's normalised noise scale ``sigma / n``."""
        return self.sigma / self.n

    def with_sigma(self, sigma: float) -> "CountingQuery":
        """The same query with another noise level (counts)."""
        return CountingQuery(n=self.n, known=self.known, p=self.p, sigma=sigma)

    def with_scale(self, scale: float) -> "CountingQuery":
        """:meth:`with_sigma` (the calibration protocol's name)."""
        return self.with_sigma(real("scale", scale, minimum=0.0))

    def without_natural_noise(self) -> "CountingQuery":
        """The same noise against an attacker who knows every other row (``N = 0``): the Gaussian mechanism."""
        return CountingQuery(n=1, known=0, p=self.p, sigma=self.sigma)

    def dp_scale(self, *, eps: float, delta: float) -> float:
        """Plain DP's sigma for a count: the analytic Gaussian mechanism's (Balle & Wang), sensitivity 1."""
        return analytic_gaussian_sigma(eps=eps, delta=delta, sensitivity=1.0, rtol=1e-12)

    # -- the privacy loss distribution protocol (ppk.PrivacyLossDistribution.from_curve)
    @property
    def _rows_key(self) -> tuple[str, int, int] | None:
        """``("rows", n, known)``: every count or histogram of a table of ``n`` rows against an attacker who
        knows ``known`` of them draws on the same unknown rows -- whatever attribute it counts (ppk has no
        joint model of two attributes, so two counts of one table are not independent as far as it can tell)."""
        return ("rows", self.n, self.known) if self.has_natural_noise else None

    def _exact_loss(self) -> ExactLoss:
        """The count's loss exactly: its tails from the counting kernel (symmetric at p = 1/2, where
        X -> N - X maps the law to itself); the lattice pmfs at sigma = 0; without natural noise the
        Gaussian mechanism."""
        if not self.has_natural_noise:
            if self.sigma == 0:
                raise ValueError("sigma = 0 with no natural noise: the output reveals the row (delta = 1)")
            return ExactLoss("gaussian", sigma=self.sigma)
        if self.sigma == 0:
            lo, hi = _lattice_window(self.n_unknown, self.p)
            w = np.exp(_kernels.binom_logpmf(self.n_unknown, self.p, np.arange(lo, hi + 1)))
            return ExactLoss("pmfs", pmfs=(np.append(0.0, w), np.append(w, 0.0)))
        return ExactLoss("tails", symmetric=self.p == 0.5)

    def _loss_tail_logs(self, eps: FloatArray, *, mirrored: bool) -> tuple[FloatArray, FloatArray]:
        return _kernels.counting_tail_logs(self.n_unknown, self.p, sigma=self.sigma, eps=eps, mirrored=mirrored)

    def repeat(self, k: int) -> "CountingQuery":
        """k releases of the same count, each with fresh N(0, sigma^2) noise, as one exact query.

        The k outputs share the unknown rows X (natural noise is *not* fresh), so composing k
        copies of this query's PLD would be wrong.  Exactly: given the rows, the outputs' joint
        density depends on the data only through their mean, which is ``a + X + N(0, sigma^2/k)``;
        by sufficiency the k releases have the privacy curve of one release with ``sigma/sqrt(k)``.
        """
        k = integer("k", k, minimum=1)
        return self.with_sigma(self.sigma / math.sqrt(k))

    def epsilon(self, delta: float, *, rtol: float = 1e-12) -> float:
        """Smallest eps with delta(eps) <= ``delta``, rounded up (never too small).

        :meth:`NoisyQuery.epsilon` at a tighter default ``rtol`` (an evaluation here is cheap).  Returns
        ``inf`` when no eps up to 1e4 reaches ``delta`` (e.g. the noiseless count with
        ``delta < max(p, 1-p)**N``, which no eps reaches).
        """
        return super().epsilon(delta, rtol=rtol)


#: Largest lattice of a noiseless count's PLD (points of Bin(N, p) above e^-750): ~0.5 GB of arrays as it is built.
MAX_LATTICE = 2 * 10**7


def _lattice_window(N: int, p: float) -> tuple[int, int]:
    """``[lo, hi]``: the values of ``Bin(N, p)`` whose pmf is at least e^-750, found by bisection on its log
    (monotone either side of the mode).  Outside it every pmf value underflows to 0.0 in double anyway (e^-745
    is the least double), so the lattice PLD is the same as over ``0..N``, without ``N + 1`` values in memory
    (N = 1e9: 1.2e6 values instead of 1e9).  ValueError past :data:`MAX_LATTICE` values."""
    mode = min(N, int(math.floor((N + 1) * p)))
    def below(k: int) -> bool:
        return bool(_kernels.binom_logpmf(N, p, np.array([k]))[0] < -750.0)
    def edge(direction: int) -> int:
        # the last k from the mode in this direction with log pmf >= -750 (or the support's end)
        end = N if direction > 0 else 0
        if not below(end):
            return end
        good, step = mode, 1
        while True:
            k = mode + direction * step
            if (k - end) * direction >= 0 or below(k):
                bad = end if (k - end) * direction >= 0 else k
                break
            good, step = k, 2 * step
        while abs(bad - good) > 1:
            mid = (good + bad) // 2
            if below(mid):
                bad = mid
            else:
                good = mid
        return good
    lo, hi = edge(-1), edge(+1)
    if hi - lo + 1 > MAX_LATTICE:
        raise ValueError(f"sigma = 0 with {N} unknown rows: the noiseless count's lattice has {hi - lo + 1} values "
                         f"above e^-750, more than {MAX_LATTICE} for its privacy loss distribution; use sigma > 0, "
                         "or the curve (delta, epsilon) itself")
    return lo, hi


def log_delta_upper_over_biases(n_unknown: int, ps: npt.ArrayLike, *, sigma: float, eps: float) -> FloatArray:
    """``log_delta_upper(eps)`` of the count with natural noise ``Bin(n_unknown, p)`` and Gaussian noise
    ``sigma`` for every bias ``p`` in ``ps``, in one call of the kernel (both cores, the GIL released):
    Algorithm 2's check of a noise level over an interval of biases."""
    n_unknown = integer("n_unknown", n_unknown, minimum=0, maximum=MAX_ROWS)
    flat, scalar = real_array("ps", ps, minimum=0.0, maximum=1.0)
    if scalar:
        raise ValueError(f"ps must be a sequence of biases, got {ps!r}")
    sigma = real("sigma", sigma, minimum=0.0)
    eps = real("eps", eps, minimum=0.0)
    return _kernels.counting_log_delta_upper_many(n_unknown, flat, sigma=sigma, eps=eps)
