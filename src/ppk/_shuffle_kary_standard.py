"""Standard shuffle DP for k-ary randomized response (every other user's value known, the supremum over them):
a certified bracket, docs/shuffle.md "k-ary".

Lower end: the exact curves of the assignments in which every other user holds one value
(:func:`ppk._shuffle_kary.standard_lower_log_delta`).  Upper end: *clones that keep their coins*.  For every
value v, ``R(v) >= c (R(x) + R(x'))`` pointwise with ``c = b / (a + b) = 1 / (e^eps0 + 1)``, so each other
user is, with probability ``2c``, a clone reporting ``R(u)`` for ``u`` uniform on ``{x, x'}``, and otherwise
reports from a leftover law.  An attacker told which users are leftovers and what they reported knows more
(the histogram is a function of that and the clones' histogram).  Given the ``C ~ Bin(n - 1, 2c)`` clones,
their reports are i.i.d. with probabilities ``((a + b)/2, (a + b)/2, b, ..., b)`` -- equal outside the pair --
so their histogram with the challenge user's is the exact i.i.d. curve of :mod:`ppk._shuffle_kary`::

    delta(eps) <= sum_C P(C) delta_iid(C + 1 users; eps).

The clone bound of Feldman, McMillan and Talwar (SODA 2023) also reveals the clones' values; keeping their
coins is tighter.  ``delta_iid`` does not increase with C (one more independent report is post-processing),
so buckets of C bound the sum by their edges (as docs/histograms.md, point 5).
"""
from __future__ import annotations

import math
from typing import Hashable, Sequence

import numpy as np
import numpy.typing as npt

from ._shuffle_kary import (MAX_CATEGORIES, KaryCurve, ShuffledKaryRandomizedResponse, binomial_log_weights,
                            eps0_of, interruptible, kary_users, log_tail_below, pair_log_bracket, rr_probs,
                            standard_lower_log_delta)
from ._search import smallest_feasible_near
from ._typing import FloatArray
from ._validate import integer, real, real_array

__all__ = ["ShuffledKaryStandard", "clone_coins_log_delta", "clone_curve", "kary", "MAX_CLONES"]

#: The most clones (users expected to be clones, n 2 / (e^eps0 + 1)) the upper end takes: it sums about 80
#: curves of that many users, each about 30 ms at 5 10^5 (docs/shuffle.md, k-ary): about 3 s per delta and 10 s
#: per epsilon at the cap.
MAX_CLONES = 600_000


#: Each clone curve's pieces left out are below e^-CLONE_DEPTH of it (in its upper end): far inside the sum's rtol.
CLONE_DEPTH = 12.0


def clone_curve(*, n: int, eps0: float, categories: int, eps: float) -> tuple[float, float]:
    """Log ends of the i.i.d. curve of ``n`` users reporting as clones, ``((a + b)/2, (a + b)/2, b, ..., b)``."""
    a, b = rr_probs(eps0, categories)
    t = 0.5 * (a + b)
    return pair_log_bracket(n=n, k=categories, eps0=eps0, theta1=t, theta2=t, theta3=(categories - 2) * b, eps=eps,
                            depth=CLONE_DEPTH)


def clone_coins_log_delta(*, n: int, eps0: float, categories: int, eps: float, rtol: float = 1e-2,
                          max_evaluations: int = 120) -> float:
    """The certified upper end above: the sum over the clones' number C, bucketed, each bucket's mass times
    the curve at its smallest C (the curve is non-increasing in C); buckets are halved where the gap to the
    curve at the next edge is largest until the gaps sum to less than ``rtol`` of the sum (or
    ``max_evaluations`` curves were computed).  The default 1e-2 moves eps by about 1e-2 / (2 log(1/delta))
    relatively (0.04 % at delta = 1e-6), well inside the gap between the two ends of the bracket; below
    delta = e^-100 the tolerance grows: ``1 - (1 - rtol) exp(-5e-4 (-log(delta) - 100))``."""
    k = categories
    if eps >= eps0:
        return -math.inf
    a, b = rr_probs(eps0, k)
    c2, c2c = 2 * b / (a + b), a * -math.expm1(-eps0) / (a + b)    # a clone, and not (a - b without cancelling)
    cache: dict[int, tuple[float, float]] = {}

    def curve(c: int) -> tuple[float, float]:
        if c not in cache:
            cache[c] = clone_curve(n=c + 1, eps0=eps0, categories=k, eps=eps)
        return cache[c]

    m = n - 1
    mean, sd = m * c2, math.sqrt(m * c2 * c2c)
    lo, hi = max(0, int(mean - 12 * sd) - 2), min(m, int(mean + 12 * sd) + 2)
    logw, below, above = binomial_log_weights(m, c2, c2c, lo, hi)
    # prefix sums of the weights (scaled), rounded up by a relative 1e-12
    top = float(np.max(logw))
    cum = np.concatenate([[0.0], np.cumsum(np.exp(logw - top))]) * (1 + 1e-12)

    def mass(i: int, j: int) -> float:          # log P(lo + i <= C < lo + j)
        v = cum[j] - cum[i]
        return top + math.log(v) if v > 0 else -math.inf

    # left-out masses: above hi the curve is at most curve(hi)'s; below lo at most curve(0)'s, and where that
    # matters (far in the tails, where it was most of the upper end) a ladder of buckets [e', e) below lo, e = lo,
    # lo - 4 sd, lo - 12 sd, lo - 28 sd, ... 0, each at most P(C < e) times the curve at e' (docs/shuffle.md, k-ary)
    extra = float(np.logaddexp(below + curve(0)[1], above + curve(hi)[1]))
    if below > -math.inf:
        main = float(np.logaddexp.reduce([mass(0, hi + 1 - lo) + curve(hi)[1], above + curve(hi)[1]]))
        if below + curve(0)[1] > main + math.log(rtol) - 20:
            ladder, step = [lo], max(4 * sd, 1.0)
            while ladder[-1] > 0:
                ladder.append(max(0, min(ladder[-1] - 1, int(lo - step))))
                step = 2 * step + 4 * sd
            rungs = [log_tail_below(m, c2, c2c, e) + curve(e_next)[1] for e, e_next in zip(ladder, ladder[1:])]
            extra = float(np.logaddexp.reduce(rungs + [above + curve(hi)[1]]))
    edges = sorted({lo + round(i * (hi - lo) / 8) for i in range(9)} | {hi + 1})
    while True:
        # a bucket's sum lies between its mass times the curve at its first C (upper) and at the next edge (lower,
        # or its own C when it holds one): only the edges' curves are computed
        parts = [(mass(e0 - lo, e1 - lo), curve(e0)[1], curve(e0 if e1 - e0 == 1 else e1)[0], e0, e1)
                 for e0, e1 in zip(edges, edges[1:])]
        upper = float(np.logaddexp.reduce([w + u for w, u, _, _, _ in parts] + [extra]))
        gaps = [(w + u + math.log1p(-math.exp(min(lw - u, 0.0))) if lw < u else -math.inf, e0, e1)
                for w, u, lw, e0, e1 in parts]
        total = float(np.logaddexp.reduce([g for g, _, _ in gaps]))
        split = [(e0 + e1) // 2 for g, e0, e1 in sorted(gaps, reverse=True)[:4] if e1 - e0 > 1 and g > -math.inf]
        # far in the tails the tolerance grows with -log delta: past e^-100 the gaps may leave the log of the upper
        # end 5e-4 per nat above that of the sum (at most 1 nat at e^-2100, within 5e-4 of the log), where rtol of
        # delta itself costs a hundred curves (2 s at n = 10^5)
        tolerance = 1.0 - (1.0 - rtol) * math.exp(-5e-4 * max(0.0, -upper - 100.0))
        if total <= upper + math.log(tolerance) or not split or len(cache) >= max_evaluations:
            return min(upper, 0.0)
        edges = sorted(set(edges) | set(split))        # the four buckets with the largest gaps, halved


class ShuffledKaryStandard(KaryCurve):
    """Standard shuffle DP for k-ary randomized response: delta(eps) between certified ends (the module
    docstring); ``delta`` reports the upper end.  Not exact: the bracket's width is the method's, not rounding."""

    __slots__ = ()

    def __init__(self, *, n: int, eps0: float, categories: int):
        self.n = kary_users(n)
        self.eps0 = real("eps0", eps0, minimum=0.0, maximum=700.0)
        self.categories = integer("categories", categories, minimum=3, maximum=MAX_CATEGORIES)
        a, b = rr_probs(self.eps0, self.categories)
        clones = (self.n - 1) * 2 * b / (a + b)
        if clones > MAX_CLONES:
            raise ValueError(f"n={self.n} with eps0={self.eps0!r} makes about {clones:,.0f} clones: the standard k-ary "
                             f"bracket sums tens of curves of that many users (MAX_CLONES={MAX_CLONES:,}; tens of "
                             "seconds beyond); use fewer users or a larger eps0, or ppk.related.shuffle_clones."
                             "clone_bound_epsilon(variant='fmt23'), within about 1-6 % above it (docs/shuffle.md)")

    def __repr__(self) -> str:
        return f"ShuffledRandomizedResponse(n={self.n}, eps0={self.eps0!r}, categories={self.categories})"

    def _ends(self, eps: float) -> tuple[float, float]:
        if self.eps0 == 0.0 or eps >= self.eps0:
            return -math.inf, -math.inf
        low = standard_lower_log_delta(n=self.n, eps0=self.eps0, categories=self.categories, eps=eps)
        return low, max(low, clone_coins_log_delta(n=self.n, eps0=self.eps0, categories=self.categories, eps=eps))

    def _log_bracket(self, eps: npt.ArrayLike) -> tuple[FloatArray, FloatArray, bool]:
        flat, scalar = real_array("eps", eps, minimum=0.0)
        shape = np.shape(eps) if not scalar else ()
        with interruptible():
            pairs = [self._ends(float(v)) for v in flat]
        return (np.array([a for a, _ in pairs], dtype=float).reshape(shape),
                np.array([b for _, b in pairs], dtype=float).reshape(shape), scalar)

    def _log_delta_upper_at(self, eps: float) -> float:
        if self.eps0 == 0.0 or eps >= self.eps0:
            return -math.inf
        return clone_coins_log_delta(n=self.n, eps0=self.eps0, categories=self.categories, eps=eps)

    def epsilon(self, delta: float, *, rtol: float = 1e-6) -> float:
        """Smallest eps with ``delta_upper(eps) <= delta``, rounded up; ``rtol`` defaults to 1e-6 here, well
        inside the bracket's own width (each step sums tens of curves)."""
        return super().epsilon(delta, rtol=rtol)

    def _epsilon_start(self, delta: float, root_target: float, excess) -> tuple[float, float]:
        """Only where the search starts, never its answer: the eps of the one clone curve at the clones' mean
        number (a few curves; the sum over the clones' number is within 0.2 % above it where measured, n >= 10^3,
        and 3 % at n = 3000, eps0 = 4), searched from the stronger clone bound's (FMT23), a few per cent above."""
        from .related.shuffle_clones import clone_bound_epsilon
        if self.n < 2 or self.eps0 == 0.0:
            return 1.0, 1.0
        guess = clone_bound_epsilon(n=self.n, eps0=self.eps0, delta=delta, variant="fmt23")
        a, b = rr_probs(self.eps0, self.categories)
        mean = round((self.n - 1) * 2 * b / (a + b))

        def single(e: float) -> float:
            up = clone_curve(n=mean + 1, eps0=self.eps0, categories=self.categories, eps=e)[1]
            return root_target - math.sqrt(-min(max(up, -1e300), 0.0))

        found = smallest_feasible_near(single, 0.99 * guess, 0.05 * guess, upper=self.eps0, rtol=1e-4)
        if found is None or found.x <= 0.0:
            return max(0.99 * guess, 1e-6), max(0.01 * guess, 1e-6)
        return min(found.x * 1.0005, self.eps0), 0.002 * found.x     # (delta = 0 from eps0 on)

    def with_scale(self, scale: float) -> "ShuffledKaryStandard":
        return ShuffledKaryStandard(n=self.n, eps0=eps0_of(scale, self.categories), categories=self.categories)

    def without_natural_noise(self) -> "ShuffledKaryStandard":
        """k-ary randomized response alone (``n = 1``): ``delta(eps) = a - e^eps b``."""
        return ShuffledKaryStandard(n=1, eps0=self.eps0, categories=self.categories)

    @property
    def _rows_key(self) -> Hashable | None:
        return None      # every other value known: each release's noise is its own users' fresh coins


def kary(*, n: int, eps0: float, categories: int, known: int | None = None, p: float | None = None,
         probs: Sequence[float] | None = None, rtol: float | None = None):
    """``ppk.ShuffledRandomizedResponse(categories=k >= 3, ...)``: standard shuffle DP (``known`` omitted or
    ``n - 1``: a certified bracket, this module) or the attacker who knows no other value
    (``known=0``, i.i.d. belief ``probs``: exact); the binary class's parameters that do not carry over are
    refused by name."""
    if p is not None:
        raise ValueError("p: for categories >= 3 the belief is probs= (one probability per category)")
    if rtol is not None:
        real("rtol", rtol, minimum=0.0, maximum=1.0, min_inclusive=False)   # no search over splits here
    n = kary_users(n)
    known = None if known is None else integer("known", known, minimum=0, maximum=n - 1)
    if known == 0:    # (with n = 1 both attackers coincide; the exact class answers)
        return ShuffledKaryRandomizedResponse(n=n, eps0=eps0, categories=categories, probs=probs)
    if known is None or known == n - 1:
        if probs is not None:
            raise ValueError("probs: a belief about the other users' values needs known=0 (with every other "
                             "value known there is none)")
        return ShuffledKaryStandard(n=n, eps0=eps0, categories=categories)
    raise ValueError(f"known={known}: for categories >= 3 the attacker knows every other value (known omitted "
                     "or n - 1: standard shuffle DP) or none (known=0, with the belief probs); partial "
                     "knowledge of some values is not implemented (docs/shuffle.md, k-ary)")
