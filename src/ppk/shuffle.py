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
from typing import Hashable

import numpy as np
import numpy.typing as npt

from ._curve import BracketedCurve
from ._shuffle_split import Flip, Split, SplitCurve
from ._typing import FloatArray
from ._validate import integer, real

__all__ = ["ShuffledRandomizedResponse"]


class ShuffledRandomizedResponse(BracketedCurve):
    """delta(eps) of the shuffled count of ``n`` randomized responses with local privacy ``eps0``.

    Parameters
    ----------
    n : int
        Users (>= 2), the challenge user included.
    eps0 : float
        Local privacy of each user's randomized response (>= 0; ``inf``: no flipping).  Each user reports
        its bit with probability ``e^eps0 / (1 + e^eps0)`` and the flipped bit otherwise.
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

    def __init__(self, *, n: int, eps0: float, known: int | None = None, p: float | None = None,
                 rtol: float = 1e-6):
        self.n = integer("n", n, minimum=2)
        self.eps0 = math.inf if eps0 == math.inf else real("eps0", eps0, minimum=0.0)
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
        self._curves: dict[tuple[int, int], SplitCurve] = {}

    def __repr__(self) -> str:
        extra = "" if self.known == self.n - 1 else f", known={self.known}, p={self.p!r}"
        return f"ShuffledRandomizedResponse(n={self.n}, eps0={self.eps0!r}{extra})"

    @property
    def flip_probability(self) -> float:
        """``r = 1 / (1 + e^eps0)``: the probability that a user reports the other bit."""
        return self._flip.r

    # -- one split, and a range of splits
    def _range_curve(self, first: int, last: int) -> SplitCurve:
        """The curve of splits ``first`` (known 1s) with the ``last - first`` users whose inputs vary in the
        range removed: it bounds every split ``first..last`` (the attacker told their reports knows more)."""
        key = (first, last)
        if key not in self._curves:
            split = Split(self._flip, ones=first, zeros=self.known - last, unknown=self.n - 1 - self.known,
                          q=self._q)
            self._curves[key] = SplitCurve(split)
        return self._curves[key]

    def split_log_delta_bracket(self, eps: float, *, ones: int) -> tuple[float, float]:
        """Certified log ends of delta(eps) when ``ones`` of the known inputs are 1 (one split)."""
        ones = integer("ones", ones, minimum=0, maximum=self.known)
        return self._range_curve(ones, ones).log_bracket(real("eps", eps, minimum=0.0))

    def _sup_bracket(self, eps: float) -> tuple[float, float]:
        """Certified log ends of ``max over splits`` of delta(eps), by branch and bound."""
        if self.eps0 == 0.0 or eps >= self.eps0:
            return -math.inf, -math.inf
        slack = math.log1p(self.rtol)
        best = -math.inf                                  # the largest lower end of a split evaluated
        best_upper = -math.inf                            # the largest upper end of a split evaluated
        heap: list[tuple[float, int, int]] = []

        def exact(j: int) -> None:
            nonlocal best, best_upper
            low, up = self._range_curve(j, j).log_bracket(eps)
            best, best_upper = max(best, low), max(best_upper, up)

        def push(first: int, last: int) -> None:
            if first <= last:
                up = self._range_curve(first, last).log_bracket(eps)[1]
                heapq.heappush(heap, (-up, first, last))

        # the worst splits lie near the two ends (docs/shuffle.md): start from ranges growing geometrically
        # from each end towards the middle
        exact(0)
        if self.known > 0:
            exact(self.known)
        edges = sorted({0, self.known} | {min(self.known, 2 ** k) for k in range(self.known.bit_length())}
                       | {max(0, self.known - 2 ** k) for k in range(self.known.bit_length())})
        for a, b in zip(edges, edges[1:]):
            push(a + 1, b - 1)
        for b in edges[1:-1]:
            exact(b)
        while heap:
            neg_up, first, last = heap[0]
            if -neg_up <= best + slack:
                break                                     # no range can beat the best by more than rtol
            heapq.heappop(heap)
            mid = (first + last) // 2
            exact(mid)
            push(first, mid - 1)
            push(mid + 1, last)
        top = -heap[0][0] if heap else -math.inf
        return best, max(best_upper, top)

    def _log_bracket(self, eps: npt.ArrayLike) -> tuple[FloatArray, FloatArray, bool]:
        e = np.asarray(eps, dtype=float)
        scalar = e.ndim == 0
        flat = np.atleast_1d(e).ravel()
        for value in flat:
            real("eps", float(value), minimum=0.0)
        pairs = [self._sup_bracket(float(v)) for v in flat]
        lower = np.array([a for a, _ in pairs]).reshape(e.shape)
        upper = np.array([b for _, b in pairs]).reshape(e.shape)
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
        eps0 = math.inf if r == 0.0 else math.log((1 - r) / r) if r < 0.5 else 0.0
        return ShuffledRandomizedResponse(n=self.n, eps0=eps0, known=self.known, p=self.p, rtol=self.rtol)

    @property
    def has_natural_noise(self) -> bool:
        return True

    def dp_scale(self, *, eps: float, delta: float) -> float:
        """The flip probability with which randomized response alone is (eps, delta)-DP: its curve is
        ``delta(eps) = (1 - r) - e^eps r``, so ``r = (1 - delta) / (1 + e^eps)`` (rounded up)."""
        return math.nextafter((1 - delta) / (1 + math.exp(eps)), 1.0)

    @property
    def _rows_key(self) -> Hashable | None:
        return ("shuffle", self.n, self.known)

    def _epsilon_start(self, delta: float, root_target: float, excess) -> tuple[float, float]:
        """Start :meth:`epsilon` at the eps where the split with every known input 0 reaches delta: the
        supremum is within a fraction of a percent of it (docs/shuffle.md), so the search needs few steps."""
        from ._search import log_target, smallest_feasible_near
        target = log_target(delta)
        one = self._range_curve(0, 0)
        found = smallest_feasible_near(lambda e: one.log_bracket(e)[1] - target if e < self.eps0 else -1.0,
                                       min(1.0, self.eps0 / 2), 0.5, upper=max(self.eps0, 1e-300), rtol=1e-6)
        guess = self.eps0 / 2 if found is None else found.x
        return guess, max(1e-3 * guess, 1e-12)
