"""Shuffled randomized response: the exact privacy curve of the shuffle model's count, with partial knowledge.

Each of ``n`` users reports its bit through randomized response with local privacy ``eps0`` (flips it with
probability ``r = 1 / (1 + e^eps0)``); the shuffler publishes only how many reports are 1.  The other users'
coins are natural noise.  :class:`ShuffledRandomizedResponse` is delta(eps) against an attacker who knows
``known`` of the other users' inputs -- the supremum over those inputs -- while the remaining
``n - 1 - known`` inputs are i.i.d. Bernoulli(p) to them; ``known = n - 1`` (the default) is standard
shuffle DP.  The curve for one split of the known inputs is exact and certified (:mod:`ppk._shuffle_split`);
the supremum over the ``known + 1`` splits is found by branch and bound on certified upper bounds: an
attacker who also sees the reports of the users whose inputs vary inside a range of splits knows more, so
the split with those users removed bounds every split of the range (docs/shuffle.md).
"""
from __future__ import annotations

import heapq
import math
from typing import Any, Hashable

import numpy as np
import numpy.typing as npt

from ._curve import BracketedCurve
from ._shuffle_split import DEPTH, RANGE_DEPTH, Flip, check_interrupt, interruptible, split_curve
from ._typing import FloatArray
from ._validate import integer, real, real_array

__all__ = ["ShuffledRandomizedResponse", "MAX_USERS"]

#: The most users the exact search takes: its cost grows like sqrt(n) range convolutions of sqrt(n) terms
#: each (15 s at 10^7); beyond, the clone bound (ppk.related.shuffle_clones) is the practical tool.
MAX_USERS = 10 ** 8

#: The local privacy that stands for no flipping (``with_scale(0)``): 1 / (1 + e^746) rounds to 0 in double.
NO_FLIP_EPS0 = 746.0


class ShuffledRandomizedResponse(BracketedCurve):
    """delta(eps) of the shuffled count of ``n`` randomized responses with local privacy ``eps0``.

    Parameters
    ----------
    n : int
        Users (>= 1), the challenge user included (``n = 1``: randomized response alone, no shuffling).
    eps0 : float
        Local privacy of each user's randomized response (>= 0, finite; from about 708.4 on, where the flip
        probability would be a subnormal double, the other users' reports are treated as unflipped while the
        challenge user's keeps eps0, which can only over-state delta: delta(eps) is then randomized
        response's own, ``(1 - r)(1 - e^(eps - eps0))``).  Each user reports its bit with probability
        ``e^eps0 / (1 + e^eps0)`` and the flipped bit otherwise.
    known : int, optional
        How many of the other ``n - 1`` users' inputs the attacker knows (default ``n - 1``: standard shuffle
        DP).  The curve is the supremum over those inputs.
    p : float, optional
        The probability that each of the ``n - 1 - known`` users the attacker does not know holds a 1
        (required when ``known < n - 1``).
    rtol : float
        Relative width allowed for the supremum's bracket (default 1e-6): the branch and bound stops when
        no range of splits can exceed the best split found by more than this.

    ``delta`` and ``log_delta`` report the certified upper end; ``delta_bracket`` gives both ends.

    Examples
    --------
    >>> import ppk
    >>> q = ppk.ShuffledRandomizedResponse(n=1000, eps0=2.0)
    >>> lo, up = q.delta_bracket(0.5)
    >>> bool(lo <= up <= lo * (1 + 1e-5)), f"{up:.6e}"
    (True, '9.041498e-11')
    """

    __slots__ = ("n", "eps0", "known", "p", "rtol", "_flip", "_q", "_curves")

    def __new__(cls, *, categories: int = 2, **kwargs: Any) -> Any:
        # categories >= 3: k-ary randomized response (ppk/_shuffle_kary.py, docs/shuffle.md "k-ary")
        if integer("categories", categories, minimum=2, maximum=16) > 2:
            from ._shuffle_kary_standard import kary
            return kary(categories=categories, **kwargs)
        return super().__new__(cls)

    def __init__(self, *, n: int, eps0: float, known: int | None = None, p: float | None = None,
                 rtol: float = 1e-6, categories: int = 2):
        self.n = integer("n", n, minimum=1)
        if self.n > MAX_USERS:
            raise ValueError(f"n={self.n} is more users than the exact search takes (MAX_USERS={MAX_USERS:,}: its time "
                             "grows like n, minutes at 10^8); use ppk.related.shuffle_clones.clone_bound_epsilon for a bound")
        self.eps0 = real("eps0", eps0, minimum=0.0)
        self.known = self.n - 1 if known is None else integer("known", known, minimum=0, maximum=self.n - 1)
        unknown = self.n - 1 - self.known
        if unknown and p is None:
            raise ValueError(f"p is required when known={self.known} < n - 1 = {self.n - 1}: the probability "
                             "that each user the attacker does not know holds a 1")
        self.p = None if p is None else real("p", p, minimum=0.0, maximum=1.0)
        self.rtol = real("rtol", rtol, minimum=0.0, maximum=1.0, min_inclusive=False)
        self._flip = Flip(self.eps0)
        r = self._flip.r
        self._q = r + (self.p or 0.0) * (1 - 2 * r)
        self._curves: dict[tuple[int, int], Any] = {}       # (first, last) -> a curve with log_bracket(eps)

    def __repr__(self) -> str:
        extra = "" if self.known == self.n - 1 else f", known={self.known}, p={self.p!r}"
        return f"ShuffledRandomizedResponse(n={self.n}, eps0={self.eps0!r}{extra})"

    @property
    def flip_probability(self) -> float:
        """``r = 1 / (1 + e^eps0)``: the probability that a user reports the other bit."""
        return self._flip.r

    # -- one split, and a range of splits
    def _range_curve(self, first: int, last: int) -> Any:
        """The curve of splits ``first`` (known 1s) with the ``last - first`` users whose inputs vary in the
        range removed: it bounds every split ``first..last`` (the attacker told their reports knows more)."""
        key = (first, last)
        curve = self._curves.get(key)
        if curve is None:   # setdefault: threads racing here all use the first curve stored (equal anyway)
            made = split_curve(self._flip, ones=first, zeros=self.known - last, unknown=self.n - 1 - self.known,
                               q=self._q, depth=DEPTH if first == last else RANGE_DEPTH, backward_only=self._mirrored)
            curve = self._curves.setdefault(key, made)
        return curve

    @property
    def _mirrored(self) -> bool:
        """With every other input known, split j's forward order is split known - j's backward order (reflect
        the output s -> n - s), so the supremum over splits of both orders is that of the backward order."""
        return self.known == self.n - 1

    def split_log_delta_bracket(self, eps: float, *, ones: int) -> tuple[float, float]:
        """Certified log ends of delta(eps) when ``ones`` of the known inputs are 1 (one split, both orders)."""
        ones = integer("ones", ones, minimum=0, maximum=self.known)
        eps = real("eps", eps, minimum=0.0)
        with interruptible():
            low, up = self._range_curve(ones, ones).log_bracket(eps)
            if self._mirrored:  # the curves hold the backward order; split ones's forward one is known - ones's
                mirror = self._range_curve(self.known - ones, self.known - ones).log_bracket(eps)
                low, up = max(low, mirror[0]), max(up, mirror[1])
        return min(low, 0.0), min(up, 0.0)

    def _sup_bracket(self, eps: float) -> tuple[float, float]:
        """Certified log ends of ``max over splits`` of delta(eps), by branch and bound."""
        if self.eps0 == 0.0 or eps >= self.eps0:
            return -math.inf, -math.inf
        best, cover = self._cover(eps)
        return min(best, 0.0), min(max(up for up, _, _ in cover), 0.0)     # delta <= 1

    def _cover(self, eps: float) -> tuple[float, list[tuple[float, int, int]]]:
        """Branch and bound at ``eps``: the largest certified lower end of a split evaluated, and a cover of the
        splits ``0..known`` by ranges ``(log upper at eps, first, last)`` (``first == last``: one split, exact),
        refined until no range's upper end exceeds that lower end by more than ``rtol``.  A cover bounds the
        supremum at every eps, not only this one (:meth:`epsilon` uses that)."""
        slack = math.log1p(self.rtol)
        best = -math.inf                                  # the largest lower end of a split evaluated
        heap: list[tuple[float, int, int]] = []           # ranges still open, largest upper end first
        done: list[tuple[float, int, int]] = []           # single splits, evaluated exactly

        def exact(j: int) -> None:
            nonlocal best
            low, up = self._range_curve(j, j).log_bracket(eps)
            best = max(best, low)
            done.append((up, j, j))

        def push(first: int, last: int) -> None:
            if first <= last:
                up = self._range_curve(first, last).log_bracket(eps)[1]
                heapq.heappush(heap, (-up, first, last))

        # the worst splits lie near the two ends (docs/shuffle.md): ranges growing geometrically from each end
        # towards the middle, the eight splits at each end exactly
        k = self.known
        for j in sorted({j for j in range(8) if j <= k} | {k - j for j in range(8) if k - j >= 0}):
            exact(j)
        lo, hi = 8, k - 8                                 # the splits left, cut at 2^i and k + 1 - 2^i
        if lo <= hi:
            cuts = sorted({lo, hi + 1} | {c for i in range(4, k.bit_length() + 1)
                                          for c in (2 ** i, k + 1 - 2 ** i) if lo < c <= hi})
            for a, b in zip(cuts, cuts[1:]):
                push(a, b - 1)
        while heap and -heap[0][0] > best + slack:        # a range may still beat the best by more than rtol
            check_interrupt()
            _, first, last = heapq.heappop(heap)
            if last - first < 8:                          # a short range: every split in it, exactly
                for j in range(first, last + 1):
                    exact(j)
                continue
            mid = (first + last) // 2
            push(first, mid)
            push(mid + 1, last)
        return best, done + [(-neg, a, b) for neg, a, b in heap]

    def _log_bracket(self, eps: npt.ArrayLike) -> tuple[FloatArray, FloatArray, bool]:
        flat, scalar = real_array("eps", eps, minimum=0.0)
        shape = np.shape(eps) if not scalar else ()
        with interruptible():    # Ctrl-C from any thread stops the loop's next kernel (docs/limits.md)
            pairs = [self._sup_bracket(float(v)) for v in flat]
        lower = np.array([a for a, _ in pairs], dtype=float).reshape(shape)
        upper = np.array([b for _, b in pairs], dtype=float).reshape(shape)
        return lower, upper, scalar

    # -- the calibration protocol: the noise scale is the flip probability r (more flipping, more noise)
    @property
    def scale(self) -> float:
        return self._flip.r

    @property
    def scale_name(self) -> str:
        return "flip_probability"

    def with_scale(self, scale: float) -> "ShuffledRandomizedResponse":
        r = real("scale", scale, minimum=0.0, maximum=0.5)
        # r = 0 (no flipping) is eps0 = NO_FLIP_EPS0, where r rounds to 0 in double
        eps0 = NO_FLIP_EPS0 if r == 0.0 else min(math.log1p(-r) - math.log(r), NO_FLIP_EPS0) if r < 0.5 else 0.0
        return ShuffledRandomizedResponse(n=self.n, eps0=eps0, known=self.known, p=self.p, rtol=self.rtol)

    @property
    def has_natural_noise(self) -> bool:
        """Whether the other users' coins hide the challenge user (any other user, and some flipping)."""
        return self.n > 1 and 0.0 < self._flip.r

    def without_natural_noise(self) -> "ShuffledRandomizedResponse":
        """Randomized response alone (``n = 1``): the curve against an attacker who sees every other report,
        ``delta(eps) = max(0, (1 - r) - e^eps r)`` -- local DP, what the shuffler amplifies."""
        return ShuffledRandomizedResponse(n=1, eps0=self.eps0, rtol=self.rtol)

    def dp_scale(self, *, eps: float, delta: float) -> float:
        """The flip probability with which randomized response alone is (eps, delta)-DP: its curve is
        ``delta(eps) = (1 - r) - e^eps r``, so ``r = (1 - delta) / (1 + e^eps)`` (rounded up)."""
        eps = real("eps", eps, minimum=0.0)
        delta = real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False)
        return math.nextafter((1 - delta) * math.exp(-eps) / (1 + math.exp(-eps)), 1.0)

    @property
    def _rows_key(self) -> Hashable | None:
        """The users whose inputs the attacker does not know (shared by every release over them); with every
        other input known there are none: each release's noise is its own fresh coins."""
        return None if self.known == self.n - 1 else ("shuffle", self.n, self.known)

    def epsilon(self, delta: float, *, rtol: float = 1e-10) -> float:
        """Smallest eps with ``delta_upper(eps) <= delta``, rounded up (certified: the returned eps was evaluated).

        One branch and bound, at the eps where the split with every known input 0 reaches ``delta``, gives a
        cover of the splits; the cover bounds the supremum at every eps, so the answer is the largest of its
        ranges' own eps (each a search on one curve), found by checking every range at the current answer.
        """
        from ._search import log_target
        target = log_target(real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False))
        rtol = real("rtol", rtol, minimum=0.0, min_inclusive=False)
        if self.eps0 == 0.0:
            return 0.0
        with interruptible():    # Ctrl-C from any thread stops the searches' next kernel (docs/limits.md)
            return self._epsilon(target, rtol)

    def _epsilon(self, target: float, rtol: float) -> float:
        """:meth:`epsilon` at the log target, within its interruptible scope."""
        from ._search import smallest_feasible_near

        def eps_of(first: int, last: int, start: float) -> float:
            curve = self._range_curve(first, last)
            found = smallest_feasible_near(lambda e: curve.log_bracket(e)[1] - target if e < self.eps0 else -1.0,
                                           start, max(1e-3 * start, 1e-12), upper=self.eps0, rtol=rtol)
            return self.eps0 if found is None else found.x

        guess = eps_of(0, 0, min(1.0, self.eps0 / 2))
        if guess >= self.eps0:
            return self.eps0
        _, cover = self._cover(guess)
        answer = guess
        for _, first, last in sorted(cover, reverse=True):    # largest first: later ones rarely move it
            if self._range_curve(first, last).log_bracket(answer)[1] > target:
                answer = max(answer, eps_of(first, last, guess))
        return answer
