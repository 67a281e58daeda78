"""Algorithm 1: the least Gaussian noise that makes a count PPK-DP (thesis Sec. 4.1, Alg. 1).

The attacker's distribution is known: unknown rows are Bernoulli(p).  The
privacy curve delta(eps; sigma) of :class:`~ppk.CountingQuery` is continuous
and non-increasing in sigma (adding noise is post-processing), and the plain
Gaussian mechanism's sigma (Balle & Wang) always suffices, because the
natural noise can only help.  So the smallest sigma is found in
``[0, sigma_BW]`` by a bracketing search on the *certified upper bound* of
delta: the returned sigma has been evaluated and found private.

Thesis features dropped on purpose (docs/decisions.md, "Algorithm 1"): the ``init`` doubling loop,
which never ends when natural noise alone suffices; ``steps``, which can
cross the bracket; the ``D``/``D'`` inputs, which do not change the answer.
"""
from __future__ import annotations

from dataclasses import dataclass

from ._validate import real
from .counting import CountingQuery
from .calibration import REASON_NATURAL, REASON_NO_NATURAL, REASON_SEARCH, calibrate

__all__ = ["alg1", "Alg1Result", "REASON_NATURAL", "REASON_NO_NATURAL", "REASON_SEARCH"]


@dataclass(frozen=True)
class Alg1Result:
    """What :func:`alg1` found.  All noise scales are standard deviations in counts."""

    sigma: float            #: the noise to add, in counts (0 when the unknown rows suffice)
    beta: float             #: sigma / n, the thesis's normalised scale
    zeta: float             #: width of the final bracket [sigma_lo, sigma]: sigma* lies in it
    delta_achieved: float   #: certified upper bound of delta(eps) at sigma (<= the target delta)
    evaluations: int        #: number of privacy-curve evaluations
    reason: str             #: which path produced sigma
    n: int
    known: int
    p: float
    eps: float
    delta: float

    @property
    def query(self) -> CountingQuery:
        """The calibrated query."""
        return CountingQuery(n=self.n, known=self.known, p=self.p, sigma=self.sigma)


def alg1(*, n: int, known: int, p: float, eps: float, delta: float, error: float | None = None, rtol: float = 1e-10) -> Alg1Result:
    """Smallest Gaussian sigma (counts) with which the count is (eps, delta)-PPK-DP.

    :func:`ppk.calibrate` for the count's natural noise ``Binomial(n - known - 1, p)`` and Gaussian
    added noise, in the thesis's terms.

    Parameters
    ----------
    n, known, p :
        As in :class:`~ppk.CountingQuery`: rows, rows the attacker knows, bias of the unknown rows.
    eps, delta :
        The privacy target, ``eps > 0``, ``0 < delta < 1``.
    error :
        Absolute tolerance on sigma in counts (the thesis's ``error``); default none.
    rtol :
        Relative tolerance on sigma (default 1e-10).  The search stops when the
        bracket is narrower than ``max(error, rtol * sigma)``.

    Returns
    -------
    Alg1Result
        ``sigma`` is never below the true optimum sigma* (its delta was
        evaluated with the certified upper bound and found <= ``delta``) and
        ``sigma - zeta`` is not feasible, so ``sigma* in [sigma - zeta, sigma]``.
    """
    base = CountingQuery(n=n, known=known, p=p, sigma=0.0)
    eps = real("eps", eps, minimum=0.0, min_inclusive=False)
    delta = real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    atol = 0.0 if error is None else real("error", error, minimum=0.0)
    rtol = real("rtol", rtol, minimum=0.0, min_inclusive=False)
    c = calibrate(base, eps=eps, delta=delta, rtol=rtol, atol=atol)
    return Alg1Result(sigma=c.scale, beta=c.scale / base.n, zeta=c.scale - c.lower, delta_achieved=c.delta_achieved,
                      evaluations=c.evaluations, reason=c.reason, n=base.n, known=base.known, p=base.p, eps=eps,
                      delta=delta)
