"""The certified bracket on one pair of categories' upper experiment (docs/table-plans.md, docs/histograms.md).

A release of linear statistics of one table, with the challenge row in category ``a`` or ``b``, is
bounded above by the experiment in which the attacker is also told every other category's count of
unknown rows and ``M = X_a + X_b ~ Bin(N, pi_a + pi_b)``.  Given ``M``, the release is a count of natural
noise ``Bin(M, pi_a / (pi_a + pi_b))`` seen through Gaussian noise of standard deviation ``sigma_eff``
(counts): ``E_M[H_M]``, one direction of the count's hockey stick per ordered pair.  A histogram has
``sigma_eff = sigma / sqrt 2``; a plan of counts has ``sigma_eff = 1 / sqrt(sum_j u_j^2 / sigma_j^2)``,
``u`` the change the challenge row's move makes to the counts.  ``sigma_eff = 0`` is the noiseless
lattice sum.  This module is the one place that evaluates that bracket.
"""
from __future__ import annotations

from . import _kernels
from ._histogram_noiseless import noiseless_pair


def interruptible():
    """A loop over many pairs' brackets, interruptible by Ctrl-C from any thread (``ppk._kernels.interruptible``)."""
    return _kernels.interruptible()


def pair_log_bracket(n_unknown: int, pa: float, pb: float, rest: float, *, sigma_eff: float, eps: float,
                     rtol: float, max_evaluations: int) -> tuple[float, float]:
    """(log lower, log upper) of ``max`` over the two orders of the pair ``{a, b}`` of ``E_M[H_M]``.

    ``pa``, ``pb`` are the pair's probabilities for an unknown row, ``rest`` the others' total (passed
    exactly, 0 when there are none); ``sigma_eff`` in counts.  Both ends are certified; at
    ``sigma_eff = 0`` the lattice sum is exact to rounding unless its budget is passed, and then the
    kernel's bracket at ``rtol`` is used, as for any ``sigma_eff > 0``.
    """
    if sigma_eff == 0:
        orders = [(pa, pb)] if pa == pb else [(pa, pb), (pb, pa)]   # equal: the same sum
        exact = [noiseless_pair(n_unknown, x, y, rest, eps) for x, y in orders]
        if all(e is not None for e in exact):
            return max(e[0] for e in exact), max(e[1] for e in exact)   # type: ignore[index]
    s = pa + pb
    if s == 0:   # both impossible for an unknown row: no natural noise between them
        q_pairs = [(0.5, 0.5)]
    else:
        q_a, q_b = pa / s, pb / s
        q_pairs = [(q_a, q_b)] if q_a == q_b else [(q_a, q_b), (q_b, q_a)]
    lows, ups = [], []
    for q, q_rest in q_pairs:
        lo, up, _ = _kernels.mixture_log_delta_bracket(n_unknown, s, rest, q, q_rest, sigma=sigma_eff, eps=eps,
                                                       rtol=rtol, max_evaluations=max_evaluations)
        lows.append(lo)
        ups.append(up)
    return max(lows), max(ups)
