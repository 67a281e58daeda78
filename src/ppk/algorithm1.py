"""Algorithm 1: the least Gaussian noise that makes a count PPK-DP (thesis Sec. 4.1, Alg. 1).

The attacker's distribution is known: unknown rows are Bernoulli(p).  The
privacy curve delta(eps; sigma) of :class:`~ppk.CountingQuery` is continuous
and non-increasing in sigma (adding noise is post-processing), and the plain
Gaussian mechanism's sigma (Balle & Wang) always suffices, because the
natural noise can only help.  So the smallest sigma is found in
``[0, sigma_BW]`` by a bracketing search on the *certified upper bound* of
delta: the returned sigma has been evaluated and found private.  This is
:func:`ppk.calibrate` for a :class:`~ppk.CountingQuery`, in the thesis's terms.

Thesis features dropped on purpose (docs/decisions.md, "Algorithm 1"): the ``init`` doubling loop,
which never ends when natural noise alone suffices; ``steps``, which can
cross the bracket; the ``D``/``D'`` inputs, which do not change the answer.
"""
from __future__ import annotations

from ._validate import real
from .calibration import Calibration, calibrate
from .counting import CountingQuery

__all__ = ["alg1"]


def alg1(*, n: int, known: int, p: float, eps: float, delta: float, error: float | None = None,
         rtol: float = 1e-10) -> Calibration[CountingQuery]:
    """Smallest Gaussian sigma (counts) with which the count is (eps, delta)-PPK-DP.

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
    ppk.Calibration
        ``scale`` is sigma, never below the true optimum sigma* (its delta was evaluated with the
        certified upper bound and found <= ``delta``), and ``lower = scale - zeta`` is not feasible, so
        ``sigma* in [lower, scale]``; ``query`` is the calibrated :class:`~ppk.CountingQuery` (its
        ``beta`` is the thesis's sigma / n); ``scale_dp`` is plain DP's sigma.
    """
    base = CountingQuery(n=n, known=known, p=p, sigma=0.0)
    atol = 0.0 if error is None else real("error", error, minimum=0.0)
    return calibrate(base, eps=eps, delta=delta, rtol=rtol, atol=atol)
