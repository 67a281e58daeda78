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

import numpy as np
import numpy.typing as npt

from . import _kernels
from ._histogram_noiseless import noiseless_pair


def interruptible():
    """A loop over many pairs' brackets, interruptible by Ctrl-C from any thread (``ppk._kernels.interruptible``)."""
    return _kernels.interruptible()


def _orders(pa: float, pb: float) -> list[tuple[float, float]]:
    """``(q, 1 - q)`` of each order of the pair given ``M``: ``q = pa / (pa + pb)`` and its mirror (one when equal)."""
    s = pa + pb
    if s == 0:   # both impossible for an unknown row: no natural noise between them
        return [(0.5, 0.5)]
    q_a, q_b = pa / s, pb / s
    return [(q_a, q_b)] if q_a == q_b else [(q_a, q_b), (q_b, q_a)]


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
    lows, ups = [], []
    for q, q_rest in _orders(pa, pb):
        lo, up, _ = _kernels.mixture_log_delta_bracket(n_unknown, s, rest, q, q_rest, sigma=sigma_eff, eps=eps,
                                                       rtol=rtol, max_evaluations=max_evaluations)
        lows.append(lo)
        ups.append(up)
    return max(lows), max(ups)


#: Tolerance and points of the first pass of :func:`pairs_log_brackets`, which only tells the parts apart.
SORT_RTOL = 3e-2
SORT_POINTS = 33


def pairs_log_brackets(n_unknown: int, pairs: list[tuple[float, float, float, float]], *, eps: npt.ArrayLike,
                       rtol: float, max_evaluations: int) -> tuple[np.ndarray, np.ndarray]:
    """Max over ``pairs`` -- ``(pa, pb, rest, sigma_eff)`` each -- of :func:`pair_log_bracket`, at every eps of
    an array (arrays shaped like ``eps``), one many-eps kernel call per order of a pair
    (``_kernels.mixture_log_delta_brackets``: neighbouring eps share their values of ``M``).

    An order need not be summed where another is certainly larger: on a first pass at :data:`SORT_RTOL` over
    :data:`SORT_POINTS` points e_i spanning ``eps``, an order c is left out on [e_i, e_(i+1)] when its upper
    end at e_i is below another's lower end at e_(i+1).  Sound: each order's delta is non-increasing in eps,
    so there c's delta <= its upper end at e_i < the other's delta at e_(i+1) <= the largest order's delta
    at eps, and the order with the largest lower end at e_(i+1) is never left out (its upper end at e_i is
    above that lower end), so the maximum's ends are those of the orders kept.  At ``sigma_eff = 0`` the exact
    lattice sum is taken eps by eps."""
    e = np.asarray(eps, dtype=np.float64)
    flat = e.ravel()
    lo, up = np.full(flat.shape, -np.inf), np.full(flat.shape, -np.inf)
    parts = []
    for pa, pb, rest, sigma_eff in pairs:
        if sigma_eff == 0:
            exact = [pair_log_bracket(n_unknown, pa, pb, rest, sigma_eff=0.0, eps=float(x), rtol=rtol,
                                      max_evaluations=max_evaluations) for x in flat]
            lo = np.maximum(lo, [x[0] for x in exact])
            up = np.maximum(up, [x[1] for x in exact])
        else:
            parts += [(pa + pb, rest, q, q_rest, sigma_eff) for q, q_rest in _orders(pa, pb)]

    def brackets(part, at, tol):
        s, rest, q, q_rest, sigma_eff = part
        lo_, up_, _ = _kernels.mixture_log_delta_brackets(n_unknown, s, rest, q, q_rest, sigma=sigma_eff, eps=at,
                                                          rtol=tol, max_evaluations=max_evaluations)
        return lo_, up_

    needed = np.ones((len(parts), flat.size), dtype=bool)
    if len(parts) > 1 and flat.size > SORT_POINTS:
        grid = np.linspace(flat.min(), flat.max(), SORT_POINTS)
        ends = [brackets(part, grid, SORT_RTOL) for part in parts]
        cell = np.clip(np.searchsorted(grid, flat, side="right") - 1, 0, SORT_POINTS - 2)
        for c in range(len(parts)):
            others = [ends[d][0][cell + 1] for d in range(len(parts)) if d != c]
            needed[c] = ~(ends[c][1][cell] < np.max(others, axis=0))
    for c, part in enumerate(parts):
        if needed[c].any():
            lo_, up_ = brackets(part, flat[needed[c]], rtol)
            lo[needed[c]] = np.maximum(lo[needed[c]], lo_)
            up[needed[c]] = np.maximum(up[needed[c]], up_)
    return lo.reshape(e.shape), up.reshape(e.shape)
