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

import contextlib
import heapq
import math
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Hashable, Iterator, Sequence, TypeVar

import numpy as np
import numpy.typing as npt

from ._curve import BracketedCurve
from ._shuffle_progress import Reporter, _check as _check_progress
from ._shuffle_split import DEPTH, RANGE_DEPTH, Flip, check_interrupt, derived_curve, interruptible, split_curve
from ._typing import FloatArray
from ._validate import integer, real, real_array

__all__ = ["ShuffledRandomizedResponse", "MAX_USERS", "LARGE_USERS", "MAX_COUNT_VARIANCE", "LARGE_COUNT_VARIANCE"]

#: The most users the exact search takes (docs/shuffle.md, "Limits"; measured up to there: 1-4 s at 10^9 for eps0
#: 8 to 14); beyond, the clone bound (ppk.related.shuffle_clones) is the practical tool.  Past LARGE_USERS it takes
#: only laws whose count varies little: its time follows the variance of the others' count, n r (1 - r) (about
#: 1 s at 2e5, 5-12 s at 2e6: docs/shuffle.md, "Speed").
MAX_USERS = 10 ** 9
LARGE_USERS = 10 ** 8
#: The largest variance of the others' count the exact search takes at any n: its time and memory grow faster
#: than the variance (n = 10^8 at eps0 = 2, variance 1.05e7: 54 s and 2.6 GB; at eps0 = 0.5, 2.4e7: past
#: 12 GB), so beyond it a clear error, not a machine eaten (docs/shuffle.md, "Limits").
MAX_COUNT_VARIANCE = 1.2e7
#: The largest variance taken past LARGE_USERS users (n = 10^8 at eps0 = 4 is 1.8e6).
LARGE_COUNT_VARIANCE = 2e6

#: The local privacy that stands for no flipping (``with_scale(0)``): 1 / (1 + e^746) rounds to 0 in double.
NO_FLIP_EPS0 = 746.0

#: Threads that evaluate the branch and bound's ranges (the C++ split curves release the GIL), from this many
#: known inputs on (below, a search takes milliseconds and threads would only add their start-up).
WORKERS = 2
THREADS_FROM = 20_000
#: Ranges refined per step of the branch and bound (their halves evaluated together, on the threads): a
#: constant, so the cover -- and every bracket -- never depends on the machine or on the number of threads.
BATCH = 4

_T = TypeVar("_T")
_R = TypeVar("_R")


def _map(pool: ThreadPoolExecutor | None, fn: Callable[[_T], _R], items: Sequence[_T]) -> list[_R]:
    """``[fn(x) for x in items]``, on ``pool``'s threads when there is one, results in order.  On an error or
    Ctrl-C the tasks not yet started are cancelled (the running ones stop at their kernels' next poll)."""
    if pool is None or len(items) < 2:
        return [fn(x) for x in items]

    def task(x: _T) -> _R:
        with interruptible():    # Ctrl-C reaches this thread's kernels and Python loops (docs/limits.md)
            return fn(x)

    futures = [pool.submit(task, x) for x in items]
    try:
        return [f.result() for f in futures]
    except BaseException:
        for f in futures:
            f.cancel()
        raise


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

    __slots__ = ("n", "eps0", "known", "p", "rtol", "_flip", "_q", "_fixed_mass", "_curves", "_progress")

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
            raise ValueError(f"n={self.n} is more users than the exact search takes (MAX_USERS={MAX_USERS:,}); use "
                             "ppk.related.shuffle_clones.clone_bound_epsilon for a bound")
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
        variance = self._count_variance(r)
        large = self.n > LARGE_USERS
        limit = LARGE_COUNT_VARIANCE if large else MAX_COUNT_VARIANCE
        if variance > limit:
            where = f"past {LARGE_USERS:,} users the" if large else "the"
            raise ValueError(f"n={self.n} with eps0={self.eps0!r}: {where} exact search takes only counts that vary "
                             f"little (the others' count has variance {variance:.3g} here, at most {limit:.2g} taken: its "
                             f"time and memory follow it, about {'10 s' if large else '1 min and 3 GB'} there); a larger "
                             "eps0, fewer users, or ppk.related.shuffle_clones.clone_bound_epsilon for a bound")
        # A group whose flip is random but whose probability rounds to 0 or 1 in double (r < 2^-53, eps0 > 36.7;
        # q rounded to 1) is taken as fixed by the kernels: right for an upper end (an attacker who knows its
        # outputs), not for a lower one.  Their count times the chance of the other value bounds the mass where
        # they are not fixed (_lower_end).
        dropped_unknown = (1 - (self.p or 0.0)) * (1 - r) + (self.p or 0.0) * r if self._q == 1.0 else 0.0
        self._fixed_mass = ((self.known * r if 0.0 < r and 1.0 - r == 1.0 else 0.0)
                            + unknown * dropped_unknown) * (1 + 1e-12)
        self._curves: dict[tuple, Any] = {}   # (first, last) or ("split", j) -> a curve with log_bracket(eps)
        self._progress: Any = None

    @property
    def progress(self) -> Any:
        """Progress of the long searches (docs/shuffle.md): ``None``/``False`` quiet (the default), ``True`` a
        bar on stderr when it is a terminal (tqdm's if installed), or a callable ``progress(fraction, stage)``."""
        return self._progress

    @progress.setter
    def progress(self, value: Any) -> None:
        self._progress = _check_progress(value)

    @contextlib.contextmanager
    def _workers(self) -> Iterator[ThreadPoolExecutor | None]:
        """The threads of one search (none for small populations)."""
        if self.known < THREADS_FROM:
            yield None
            return
        with ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="ppk-shuffle") as pool:
            yield pool

    def __repr__(self) -> str:
        extra = "" if self.known == self.n - 1 else f", known={self.known}, p={self.p!r}"
        return f"ShuffledRandomizedResponse(n={self.n}, eps0={self.eps0!r}{extra})"

    @property
    def flip_probability(self) -> float:
        """``r = 1 / (1 + e^eps0)``: the probability that a user reports the other bit."""
        return self._flip.r

    # -- one split, and a range of splits
    def _range_curve(self, first: int, last: int, parent: tuple[int, int] | None = None) -> Any:
        """The curve of splits ``first`` (known 1s) with the ``last - first`` users whose inputs vary in the
        range removed: it bounds every split ``first..last`` (the attacker told their reports knows more).
        A range inside the cached range ``parent`` is the parent's law plus the users it holds fixed (1s below
        ``first``, 0s above ``last``): derived from the parent's log C by one small convolution."""
        key = (first, last)
        curve = self._curves.get(key)
        if curve is None:   # setdefault: threads racing here all use the first curve stored (equal anyway)
            made = None
            if parent is not None and parent in self._curves:
                a, b = parent
                if first == last and a < first and last < b:    # one split inside: through (first, b)
                    self._range_curve(first, b, parent)
                    a = first
                added = (first - a, True) if b == last else (b - last, False) if a == first else (0, True)
                made = derived_curve(self._curves[(a, b)], count=added[0], ones=added[1],
                                     depth=DEPTH if first == last else RANGE_DEPTH, backward_only=self._mirrored,
                                     upper_only=first < last)    # a range only prunes: its upper end
            if made is None:
                made = split_curve(self._flip, ones=first, zeros=self.known - last, unknown=self.n - 1 - self.known,
                                   q=self._q, depth=DEPTH if first == last else RANGE_DEPTH,
                                   backward_only=self._mirrored)
            if first < last and self._mirrored and hasattr(made, "set_range_users"):
                made.set_range_users(last - first)    # the tighter bound on a range (docs/shuffle.md)
            curve = self._curves.setdefault(key, made)
        return curve

    def _split_curve(self, j: int) -> Any:
        """Split ``j``'s curve computed directly, never derived (:meth:`split_log_delta_bracket`'s: a derived
        split's upper end may carry its parent's pruning allowance, ``e^-RANGE_DEPTH`` of the value)."""
        curve = self._curves.get(("split", j))
        if curve is None:
            made = split_curve(self._flip, ones=j, zeros=self.known - j, unknown=self.n - 1 - self.known, q=self._q,
                               depth=DEPTH, backward_only=self._mirrored)
            curve = self._curves.setdefault(("split", j), made)
        return curve

    @property
    def _mirrored(self) -> bool:
        """With every other input known, split j's forward order is split known - j's backward order (reflect
        the output s -> n - s), so the supremum over splits of both orders is that of the backward order."""
        return self.known == self.n - 1

    def _count_variance(self, r: float) -> float:
        """The variance of the others' count at flip probability r (what the exact search's cost follows)."""
        q = r + (self.p or 0.0) * (1 - 2 * r)
        return self.known * r * (1 - r) + (self.n - 1 - self.known) * q * (1 - q)

    def _calibration_scale_cap(self) -> float:
        """The largest flip probability whose count variance the exact search takes (the variance grows with r
        up to 1/2): calibrate searches below it, not at randomized response's own scale, which a large n refuses."""
        limit = LARGE_COUNT_VARIANCE if self.n > LARGE_USERS else MAX_COUNT_VARIANCE
        if self._count_variance(0.5) <= limit:
            return math.inf
        lo, hi = 0.0, 0.5
        for _ in range(80):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if self._count_variance(mid) <= limit else (lo, mid)
        return lo

    def _lower_end(self, low: float, eps: float) -> float:
        """A certified lower log end from one computed with the groups of ``_fixed_mass`` fixed: with w >= 1 - m
        the chance they are (m = ``_fixed_mass``), the set that is best for the fixed law gives
        delta >= w delta_fixed - (1 - w) e^eps (the rest's part is at least -e^eps times its mass;
        docs/shuffle.md, "Limits")."""
        m = self._fixed_mass
        if m == 0.0 or low == -math.inf:
            return low
        if eps > 700.0:
            return -math.inf
        value = math.exp(low) * (1 - m) - m * math.exp(eps)
        return math.log(value) if value > 0 else -math.inf

    def split_log_delta_bracket(self, eps: float, *, ones: int) -> tuple[float, float]:
        """Certified log ends of delta(eps) when ``ones`` of the known inputs are 1 (one split, both orders)."""
        ones = integer("ones", ones, minimum=0, maximum=self.known)
        eps = real("eps", eps, minimum=0.0)
        with interruptible():
            low, up = self._split_curve(ones).log_bracket(eps)
            if self._mirrored:  # the curves hold the backward order; split ones's forward one is known - ones's
                mirror = self._split_curve(self.known - ones).log_bracket(eps)
                low, up = max(low, mirror[0]), max(up, mirror[1])
        return min(self._lower_end(low, eps), 0.0), min(up, 0.0)

    def _sup_bracket(self, eps: float, pool: ThreadPoolExecutor | None = None,
                     reporter: Reporter | None = None) -> tuple[float, float]:
        """Certified log ends of ``max over splits`` of delta(eps), by branch and bound."""
        if self.eps0 == 0.0 or eps >= self.eps0:
            return -math.inf, -math.inf
        best, cover = self._cover(eps, pool, reporter)
        return min(self._lower_end(best, eps), 0.0), min(max(up for up, _, _ in cover), 0.0)     # delta <= 1

    def _cover(self, eps: float, pool: ThreadPoolExecutor | None = None,
               reporter: Reporter | None = None) -> tuple[float, list[tuple[float, int, int]]]:
        """Branch and bound at ``eps``: the largest certified lower end of a split evaluated, and a cover of the
        splits ``0..known`` by ranges ``(log upper at eps, first, last)`` (``first == last``: one split, exact),
        refined until no range's upper end exceeds both that lower end by more than ``rtol`` and the largest
        upper end of a split evaluated (which the supremum's upper end reaches anyway).  A cover bounds the
        supremum at every eps, not only this one (:meth:`epsilon` uses that).  Each step refines the ``BATCH``
        ranges with the largest upper ends, their halves evaluated together on ``pool``'s threads."""
        slack = math.log1p(self.rtol)
        best = -math.inf                                  # the largest lower end of a split evaluated
        # A range is settled below max(best + slack, top): top is the largest upper end of a split evaluated, which
        # the supremum's upper end reaches anyway.  Where a split's own bracket is wider than rtol (1.1e-6 at
        # n = 5e7, eps0 = 4, when r's rounding was allowed for as an absolute error), no range could settle below
        # best + slack, and every split near the worst ones was evaluated one by one (21,000 and 9 GB at n = 1e8).
        top = -math.inf
        heap: list[tuple[float, int, int]] = []           # ranges still open, largest upper end first
        done: list[tuple[float, int, int]] = []           # single splits, evaluated exactly
        parents: dict[tuple[int, int], tuple[int, int]] = {}   # a half -> the range it was cut from

        def evaluate(keys: list[tuple[int, int]]) -> None:
            nonlocal best, top
            ends = _map(pool, lambda key: self._range_curve(key[0], key[1], parents.get(key)).log_bracket(eps), keys)
            for (first, last), (low, up) in zip(keys, ends):
                if first == last:                         # one split: exact, and a candidate for the best
                    best = max(best, low)
                    top = max(top, up)
                    done.append((up, first, last))
                else:
                    heapq.heappush(heap, (-up, first, last))

        # the worst splits lie near the two ends (docs/shuffle.md): ranges growing geometrically from each end
        # towards the middle, the eight splits at each end exactly
        k = self.known
        keys = [(j, j) for j in sorted({j for j in range(8) if j <= k} | {k - j for j in range(8) if k - j >= 0})]
        lo, hi = 8, k - 8                                 # the splits left, cut at 2^i and k + 1 - 2^i
        if lo <= hi:
            cuts = sorted({lo, hi + 1} | {c for i in range(4, k.bit_length() + 1)
                                          for c in (2 ** i, k + 1 - 2 ** i) if lo < c <= hi})
            keys += [(a, b - 1) for a, b in zip(cuts, cuts[1:])]
        evaluate(keys)
        while heap and -heap[0][0] > max(best + slack, top):   # a range may still beat the best by more than rtol
            check_interrupt()
            keys = []
            while heap and len(keys) < 2 * BATCH and -heap[0][0] > max(best + slack, top):
                _, first, last = heapq.heappop(heap)
                if last - first < 8:                      # a short range: every split in it, exactly
                    keys += [(j, j) for j in range(first, last + 1)]
                    parents.update({(j, j): (first, last) for j in range(first, last + 1)})
                else:
                    mid = (first + last) // 2
                    keys += [(first, mid), (mid + 1, last)]
                    parents[(first, mid)] = parents[(mid + 1, last)] = (first, last)
            evaluate(keys)
            if reporter is not None and reporter.due():   # the share of the splits settled so far
                open_ = sum(b - a + 1 for neg, a, b in heap if -neg > max(best + slack, top))
                reporter.report(1.0 - open_ / (k + 1), "cover")
        if reporter is not None:
            reporter.report(1.0, "cover")
        return best, done + [(-neg, a, b) for neg, a, b in heap]

    def _log_bracket(self, eps: npt.ArrayLike) -> tuple[FloatArray, FloatArray, bool]:
        flat, scalar = real_array("eps", eps, minimum=0.0)
        shape = np.shape(eps) if not scalar else ()
        with interruptible(), self._workers() as pool, Reporter(self._progress) as reporter:
            # Ctrl-C from any thread stops the loop's next kernel (docs/limits.md)
            pairs = [self._sup_bracket(float(v), pool, reporter) for v in flat]
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
        with interruptible(), self._workers() as pool, Reporter(self._progress) as reporter:
            # Ctrl-C from any thread stops the searches' next kernel (docs/limits.md)
            return self._epsilon(target, rtol, pool, reporter)

    def _epsilon(self, target: float, rtol: float, pool: ThreadPoolExecutor | None, reporter: Reporter) -> float:
        """:meth:`epsilon` at the log target, within its interruptible scope: the ranges of the cover are
        checked at the current answer ``2 * BATCH`` at a time (largest upper end first), and those above the
        target searched together on the threads."""
        from ._search import smallest_feasible_near

        def eps_of(first: int, last: int, start: float) -> float:
            curve = self._range_curve(first, last)
            found = smallest_feasible_near(lambda e: curve.log_bracket(e)[1] - target if e < self.eps0 else -1.0,
                                           start, max(1e-3 * start, 1e-12), upper=self.eps0, rtol=rtol)
            return self.eps0 if found is None else found.x

        guess = eps_of(0, 0, min(1.0, self.eps0 / 2))
        if guess >= self.eps0:
            return self.eps0
        _, cover = self._cover(guess, pool, reporter)
        answer = guess
        ranges = [(first, last) for _, first, last in sorted(cover, reverse=True)]   # largest first: later
        for i in range(0, len(ranges), 2 * BATCH):                                  # ones rarely move it
            check_interrupt()
            batch = ranges[i:i + 2 * BATCH]
            ups = _map(pool, lambda key: self._range_curve(*key).log_bracket(answer)[1], batch)
            above = [key for key, up in zip(batch, ups) if up > target]
            answer = max([answer] + _map(pool, lambda key: eps_of(*key, guess), above))
            if reporter.due():
                reporter.report((i + len(batch)) / len(ranges), "epsilon")
        reporter.report(1.0, "epsilon")
        return answer
