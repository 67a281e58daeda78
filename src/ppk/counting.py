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
"""
from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from . import _kernels
from ._curve import PrivacyCurve
from ._search import log_target, smallest_feasible_near
from .baselines import analytic_gaussian_epsilon
from ._validate import integer, real, real_array
from ._typing import FloatArray

__all__ = ["CountingQuery", "MAX_ROWS"]

#: Largest supported database size.  One evaluation costs O(sqrt(n)) time and memory.
MAX_ROWS = 10**12

# Largest eps that epsilon() searches; beyond it the answer is reported as inf.
_EPS_SEARCH_MAX = 1e4


def _root_excess_gaussian(s: float, root_target: float, eps: float) -> float:
    """CountingQuery.epsilon's search function for one Gaussian of standard deviation ``s`` (the model)."""
    return root_target - math.sqrt(max(0.0, -_kernels.gaussian_log_delta_upper(sigma=s, eps=eps)))


class CountingQuery(PrivacyCurve):
    """A noisy count over ``n`` binary rows seen by an attacker who knows ``known`` rows.

    Its privacy curve (:meth:`delta`, :meth:`log_delta`, :meth:`delta_upper`) is computed by the C++
    kernel: measured <= 1e-11 relative on delta against a 40-digit oracle, the certified upper bound
    within ~1e-10 of it (docs/accuracy.md).

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
    """

    __slots__ = ("n", "known", "p", "sigma")

    def __init__(self, *, n: int, known: int, p: float, sigma: float):
        self.n = integer("n", n, minimum=1, maximum=MAX_ROWS)
        self.known = integer("known", known, minimum=0)
        if self.known >= self.n:
            raise ValueError(f"known must be < n (the challenge row is unknown), got known={self.known}, n={self.n}")
        self.p = real("p", p, minimum=0.0, maximum=1.0)
        self.sigma = real("sigma", sigma, minimum=0.0)

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

    def repeat(self, k: int) -> "CountingQuery":
        """k releases of the same count, each with fresh N(0, sigma^2) noise, as one exact query.

        The k outputs share the unknown rows X (natural noise is *not* fresh), so composing k
        copies of this query's PLD would be wrong.  Exactly: given the rows, the outputs' joint
        density depends on the data only through their mean, which is ``a + X + N(0, sigma^2/k)``;
        by sufficiency the k releases have the privacy curve of one release with ``sigma/sqrt(k)``.
        """
        k = integer("k", k, minimum=1)
        return self.with_sigma(self.sigma / math.sqrt(k))

    # -- the privacy curve -------------------------------------------------
    def _curve(self, eps: npt.ArrayLike) -> tuple[FloatArray, FloatArray, bool]:
        flat, scalar = real_array("eps", eps, minimum=0.0)
        curve = _kernels.counting_curve(self.n_unknown, self.p, sigma=self.sigma, eps=flat)
        shape = np.shape(eps)
        return curve.log_delta.reshape(shape), curve.log_delta_upper.reshape(shape), scalar

    def epsilon(self, delta: float, *, rtol: float = 1e-12) -> float:
        """Smallest eps with delta(eps) <= ``delta``, rounded up (never too small).

        The search certifies with :meth:`delta_upper`.  Returns ``inf`` when no
        eps up to 1e4 reaches ``delta`` (e.g. the noiseless count with
        ``delta < max(p, 1-p)**N``, which no eps reaches).
        """
        target = log_target(real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False))
        rtol = real("rtol", rtol, minimum=0.0, min_inclusive=False)
        root_target = math.sqrt(-target)

        def excess(e: float) -> float:
            # the sign of log delta_upper(e) - target, as a difference of square roots: -log delta grows
            # like eps^2 var / 2, so its root is nearly linear in eps and the search converges in a few steps
            log_upper = _kernels.counting_log_delta_upper(self.n_unknown, self.p, sigma=self.sigma, eps=e)
            return root_target - math.sqrt(max(0.0, -log_upper))

        # Start where one Gaussian of the total variance sigma^2 + N p q (natural and added noise) reaches
        # delta -- its exact (Balle-Wang) eps, a closed form: within ~1e-10 of the answer at N = 1e12,
        # where each evaluation here costs ~0.2 s -- and step by the model's distance to the root.
        s_eff = math.sqrt(self.sigma ** 2 + self.n_unknown * self.p * (1.0 - self.p))
        guess = analytic_gaussian_epsilon(sigma=s_eff, delta=delta, rtol=1e-13) if s_eff > 0 else 1.0
        guess = min(guess, _EPS_SEARCH_MAX)
        f_guess = excess(guess)
        model_step = 0.25 * guess + 1e-12
        if s_eff > 0 and guess > 0:
            h = 1e-6 * guess
            slope = (_root_excess_gaussian(s_eff, root_target, guess + h)
                     - _root_excess_gaussian(s_eff, root_target, guess - h)) / (2.0 * h)
            if slope < 0 and math.isfinite(slope):
                model_step = 1.5 * abs(f_guess / slope)
        cache = {guess: f_guess}
        found = smallest_feasible_near(lambda e: cache[e] if e in cache else excess(e), guess, model_step,
                                       upper=_EPS_SEARCH_MAX, rtol=rtol)
        return math.inf if found is None else found.x
