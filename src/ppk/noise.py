"""The laws of a release: the natural noise the unknown rows make, and the noise the mechanism adds.

A query over ``n`` rows releases ``f(D) + Z``.  The rows the attacker does not know contribute a
random integer total ``X`` (the *natural noise*, the attacker's belief about those rows); ``Z`` is the
*added noise*.  :class:`ppk.NoisyQuery` combines one law of each kind; ``docs/natural-noise.md``
explains how its privacy curve is computed and which path each combination takes.

Natural-noise laws (integer-valued; every pmf exact in long double, in log space):

* :class:`Binomial` -- i.i.d. Bernoulli(p) rows (``ppk.CountingQuery``'s case).
* :class:`PoissonBinomial` -- each row its own probability (``probs=``), or groups of rows that
  share one (``groups=[(count, p), ...]``).
* :class:`BetaBinomial` -- the attacker is unsure of p: a Beta(a, b) prior over it.
* :class:`BinomialMixture` -- a discrete prior over p.
* :class:`RowSum` -- each unknown row holds an integer ``0..B`` with a given pmf; ``X`` is their sum.
* :class:`Pmf` -- any pmf on consecutive integers.

Added-noise laws: :class:`Gaussian`, :class:`Laplace`, :class:`DiscreteGaussian` (Canonne, Kamath &
Steinke), :class:`DiscreteLaplace` (two-sided geometric) and :class:`NoNoise`.  Every scale is in
the units of the query (counts for a count).
"""
from __future__ import annotations

import heapq
import math
import numbers
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import numpy.typing as npt
from . import _kernels
from ._validate import _show, integer, real, real_array, sequence

__all__ = ["Binomial", "PoissonBinomial", "BetaBinomial", "BinomialMixture", "RowSum", "Pmf",
           "Gaussian", "Laplace", "DiscreteGaussian", "DiscreteLaplace", "NoNoise", "Window",
           "NaturalNoise", "AddedNoise", "MAX_WINDOW"]

LD = np.longdouble
LDArray = npt.NDArray[np.longdouble]
Floats = npt.NDArray[np.floating[Any]]   # double or long double: the added laws compute in either

#: Most integers a natural-noise window may hold (memory: 16 bytes each, a few copies).
MAX_WINDOW = 20_000_000

#: Below this depth (in e-folds) windows are convolved in double precision, above in long double.
_DOUBLE_DEPTH = 600.0
#: ... and while the result's rounding is amplified at most this many times in the final law
_DOUBLE_AMPLIFIED = 16

#: Smallest scale of an added noise: below it the noise is no noise on integer data (use NoNoise).
MIN_SCALE = 1e-6

#: Relative tolerance on a pmf's total mass (and on mixture weights).
PMF_TOLERANCE = 1e-12

#: Most work one natural-noise window's convolutions may take, in long-double multiply-adds (2e8-4e8 a
#: second on one core; a double one counts 1/4): 10-20 s.  They are direct (quadratic, exact to the
#: last bits): a row sum of 1000 rows of 1000 values took minutes per window.
MAX_CONVOLUTION_WORK = 4e9
_LD_RATE = 2e8           # long-double multiply-adds a second, for the messages
_DOUBLE_WEIGHT = 1 / 4   # a double multiply-add against a long-double one: np.convolve ran 1.5e8-9e9 a
                         # second against 1.8e8-3.8e8 (measured on two shared cores, hence the margin)


@dataclass(frozen=True)
class Window:
    """The natural noise's pmf on a window of consecutive integers.

    ``log_pmf[i]`` is ``log P(X = offset + i)`` (long double).  ``exp(log_dropped)`` bounds the mass
    the window leaves out, or its total-variation distance from the law (so every privacy number
    computed from the window is within ``(1 + e^eps) exp(log_dropped)`` of the exact one); in logs,
    because it reaches far below the double range.  ``log_concave``: whether the
    pmf is log-concave (then the privacy loss is monotone in the output).
    """

    offset: int
    log_pmf: LDArray
    log_dropped: float
    log_concave: bool

    @property
    def size(self) -> int:
        return int(self.log_pmf.size)

    def mirrored(self) -> Window:
        """The window of ``-X``."""
        return Window(-(self.offset + self.size - 1), self.log_pmf[::-1].copy(), self.log_dropped, self.log_concave)


class NaturalNoise:
    """Base of the natural-noise laws: ``window(depth)`` holds every value within ``e^-depth`` of the mode."""

    log_concave: bool = False

    @property
    def constant(self) -> bool:
        """Whether the law is a single value (no natural noise at all); False where not known cheaply."""
        return False

    def window(self, depth: float) -> Window:
        """The pmf on a window holding every value within ``e^-depth`` of the mode's (``depth`` >= 0)."""
        raise NotImplementedError


# -------------------------------------------------------------------------------------------------
# helpers

def _check_size(size: int, what: str) -> None:
    if size > MAX_WINDOW:
        raise ValueError(f"{what} needs {size:,} support points, more than MAX_WINDOW={MAX_WINDOW:,}; "
                         "a natural noise this wide makes delta negligible -- use a smaller one, or Pmf")


def _log_geometric_tail(log_a: float, log_b: float) -> float:
    """log of a mass bound of a log-concave tail whose first two terms (outwards) have logs ``log_a``, ``log_b``."""
    if log_a == -math.inf:
        return -math.inf
    step = log_b - log_a
    if not step < 0:
        return math.inf
    return log_a - math.log(-math.expm1(step))


def _log_add(a: float, b: float) -> float:
    return float(np.logaddexp(a, b))


def _log_concave_window(logpmf, lo: int, hi: int, mode: int, depth: float, log_concave: bool = True) -> Window:
    """Window of a log-concave pmf on ``lo..hi``: every value within ``e^-depth`` of the mode's, with
    the two tails outside bounded by geometric series (log-concavity makes their ratios decrease)."""
    top = float(logpmf(np.array([mode]))[0])

    def edge(direction: int) -> int:
        limit = hi if direction > 0 else lo
        step, last_in = 1, mode
        while True:     # gallop outwards, then bisect: logpmf is monotone on each side of the mode
            k = mode + direction * step
            if (k - limit) * direction >= 0:
                k = limit
            if float(logpmf(np.array([k]))[0]) < top - depth:
                a, b = last_in, k
                break
            if k == limit:
                return limit
            last_in, step = k, 2 * step
        while abs(b - a) > 1:
            m = (a + b) // 2
            if float(logpmf(np.array([m]))[0]) < top - depth:
                b = m
            else:
                a = m
        return a

    left, right = edge(-1), edge(+1)
    _check_size(right - left + 1, "the natural noise")
    values = np.asarray(logpmf(np.arange(left, right + 1)), dtype=LD)
    log_dropped = -math.inf
    if right < hi:
        pair = logpmf(np.array([right + 1, min(right + 2, hi)]))
        log_dropped = _log_add(log_dropped, _log_geometric_tail(float(pair[0]), float(pair[1]))
                               if right + 2 <= hi else float(pair[0]))
    if left > lo:
        pair = logpmf(np.array([left - 1, max(left - 2, lo)]))
        log_dropped = _log_add(log_dropped, _log_geometric_tail(float(pair[0]), float(pair[1]))
                               if left - 2 >= lo else float(pair[0]))
    return Window(left, values, log_dropped, log_concave)


def _trim(offset: int, values: LDArray, log_scale: LD, depth: float) -> tuple[int, LDArray, float]:
    """Drop the ends of a linear pmf window (``values * e^log_scale``) below ``max e^-depth``; returns the
    trimmed window and the log of the exact mass it dropped."""
    # the cut in long double: math.exp(-depth) is 0.0 beyond depth 745 and would keep every value
    keep = np.nonzero(values >= values.max() * np.exp(LD(-depth)))[0]
    a, b = int(keep[0]), int(keep[-1]) + 1
    cut = values[:a].sum() + values[b:].sum()
    with np.errstate(divide="ignore"):
        log_cut = float(np.log(cut) + log_scale)
    return offset + a, values[a:b], log_cut


@dataclass
class _Linear:
    """A window held as ``values * e^log_scale`` (values <= 1, the largest = 1), for convolutions."""

    offset: int
    values: LDArray
    log_scale: LD      # long double: it is a sum over every convolution of the tree (in double its
                       # rounding, ~1e-16 per level, was most of a row sum's 1e-13 error)
    log_dropped: float

    @classmethod
    def of(cls, w: Window) -> _Linear:
        top = w.log_pmf.max()
        return cls(w.offset, np.exp(w.log_pmf - top), LD(top), w.log_dropped)

    def convolve(self, other: _Linear, depth: float, amplified: int = 1, budget: "_Budget | None" = None) -> _Linear:
        """The product's window.  ``amplified``: how many copies of the result the final law holds (a
        row sum's partial powers): their rounding grows that many times, so beyond a few the
        convolution runs in long double.  ``budget`` is charged before the work starts."""
        if budget is not None:
            budget.charge(_convolution_work(self.values.size, other.values.size, depth, amplified))
        if depth < _DOUBLE_DEPTH and amplified <= _DOUBLE_AMPLIFIED:
            # every kept value lies in [e^-depth, 1]: double holds it (no underflow), and a direct
            # convolution of positive terms keeps ~1e-16 relative -- several times faster than long double
            values = np.convolve(self.values.astype(float), other.values.astype(float)).astype(LD)
        else:
            values = _kernels.convolve_longdouble(self.values, other.values)
        top = values.max()
        values = values / top
        log_scale = self.log_scale + other.log_scale + np.log(top)
        offset, values, cut = _trim(self.offset + other.offset, values, log_scale, depth)
        # (P - D1) * (Q - D2) >= P * Q - D1 * Q - P * D2: the product leaves out at most D1 + D2
        return _Linear(offset, values, log_scale, _log_add(_log_add(self.log_dropped, other.log_dropped), cut))

    def window(self, log_concave: bool) -> Window:
        with np.errstate(divide="ignore"):
            return Window(self.offset, np.log(self.values) + self.log_scale, self.log_dropped, log_concave)


def _convolution_work(a: int, b: int, depth: float, amplified: int = 1) -> float:
    """Cost of one _Linear.convolve in long-double multiply-adds (its choice of precision)."""
    double = depth < _DOUBLE_DEPTH and amplified <= _DOUBLE_AMPLIFIED
    return float(a) * float(b) * (_DOUBLE_WEIGHT if double else 1.0)


class _Budget:
    """Work spent on one window's convolutions; refuses a convolution that would pass the limit (a
    safety net behind the up-front estimates, which can be off by a factor for skewed laws)."""

    def __init__(self, what: str, limit: float = 2 * MAX_CONVOLUTION_WORK):
        self.what, self.limit, self.spent = what, limit, 0.0

    def charge(self, work: float) -> None:
        if self.spent + work > self.limit:
            raise ValueError(f"{self.what}: its window's exact convolutions need more than {self.limit:.3g} "
                             f"long-double multiply-adds (about {self.limit / _LD_RATE:.0f} s; spent "
                             f"{self.spent:.3g}, the next one {work:.3g}): use fewer rows, a row law with fewer "
                             "values, or a Pmf of the sum computed elsewhere")
        self.spent += work


def _convolve_all(parts: list[_Linear], depth: float) -> _Linear:
    """Convolve windows, narrowest pairs first (a Huffman order keeps every product small)."""
    heap = [(p.values.size, i, p) for i, p in enumerate(parts)]
    heapq.heapify(heap)
    counter = len(parts)
    while len(heap) > 1:
        _, _, a = heapq.heappop(heap)
        _, _, b = heapq.heappop(heap)
        c = a.convolve(b, depth)
        heapq.heappush(heap, (c.values.size, counter, c))
        counter += 1
    return heap[0][2]


def _is_log_concave(log_pmf: np.ndarray) -> bool:
    """No interior zeros and ``w_k^2 >= w_{k-1} w_{k+1}`` (to a relative 1e-12)."""
    finite = np.isfinite(log_pmf)
    idx = np.nonzero(finite)[0]
    if idx.size == 0 or not np.all(finite[idx[0]:idx[-1] + 1]):
        return False
    lw = np.asarray(log_pmf[idx[0]:idx[-1] + 1], dtype=float)
    return bool(np.all(2 * lw[1:-1] >= lw[:-2] + lw[2:] - 1e-12 * (1 + np.abs(lw[1:-1]))))


def _scale(name: str, value: object) -> float:
    out = real(name, value, minimum=0.0, min_inclusive=False)
    if out < MIN_SCALE:
        raise ValueError(f"{name} must be >= {MIN_SCALE:g} (a smaller noise is none on integer data: use "
                         f"NoNoise()), got {out!r}")
    return out


def _probability(name: str, value: object) -> float:
    return real(name, value, minimum=0.0, maximum=1.0)


def _depth(value: object) -> float:
    """A window's or a reach's ``depth`` (e-folds below the peak): finite and >= 0."""
    return real("depth", value, minimum=0.0)


def _numbers(name: str, value: object) -> np.ndarray:
    """``value`` (a real number, a list or an array of them) as an array: float arrays keep their dtype
    (long double stays long double), integer ones become float64.  Infinities and NaN pass: the caller
    says which it takes."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a real number or an array of them, got a bool ({value!r})")
    if isinstance(value, numbers.Real) and not isinstance(value, (np.ndarray, np.generic)):
        try:        # a Python int or a Fraction beyond the doubles
            value = float(value)
        except OverflowError:
            raise ValueError(f"{name} must be real numbers within the float range, got {_show(value)}") from None
    try:
        arr = np.asarray(value)
    except (OverflowError, ValueError, TypeError):
        raise ValueError(f"{name} must be real numbers within the float range, got {_show(value)}") from None
    if arr.dtype == object:
        raise TypeError(f"{name} must be real numbers within the float range, got {_show(value)}")
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be real (float or int), got {type(value).__name__} ({_show(value)}) of "
                        f"dtype {arr.dtype}")
    return arr.astype(np.float64) if arr.dtype.kind in "iu" else arr


def _points(value: object):
    """The points ``x`` of an added law's log density, log sf or log cdf: real numbers (a scalar stays a
    scalar, an array keeps a float dtype), +-inf taken, NaN refused."""
    arr = _numbers("x", value)
    if np.any(np.isnan(arr)):
        raise ValueError(f"x must not be NaN, got {_show(value)}")
    if arr.ndim == 0 and not isinstance(value, np.ndarray):
        return arr[()] if isinstance(value, np.generic) else float(arr)
    return arr


# -------------------------------------------------------------------------------------------------
# natural-noise laws

class Binomial(NaturalNoise):
    """``X ~ Bin(n, p)``: ``n`` unknown rows, each 1 with probability ``p``, independently."""

    log_concave = True

    def __init__(self, n: int, p: float):
        self.n = integer("n", n, minimum=0, maximum=10**12)
        self.p = _probability("p", p)

    def __repr__(self) -> str:
        return f"Binomial(n={self.n}, p={self.p!r})"

    @property
    def constant(self) -> bool:
        return self.n == 0 or self.p in (0.0, 1.0)

    def window(self, depth: float) -> Window:
        depth = _depth(depth)
        if self.n == 0 or self.p in (0.0, 1.0):
            return Window(self.n if self.p == 1.0 else 0, np.zeros(1, dtype=LD), -math.inf, True)
        mode = min(self.n, int(math.floor((self.n + 1) * self.p)))
        return _log_concave_window(lambda k: _kernels.binom_logpmf(self.n, self.p, k), 0, self.n, mode, depth)


def _group(name: str, group: Any) -> tuple[int, float]:
    """One (count, p) pair of PoissonBinomial's ``groups``; ``name`` is ``groups[i]``."""
    try:
        count, p = group
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (count, p), got {_show(group)}") from None
    return integer(f"{name} count", count, minimum=0, maximum=10**12), _probability(f"{name} p", p)


class PoissonBinomial(NaturalNoise):
    """``X`` = the number of 1s among independent rows with their own probabilities.

    Give ``probs`` (one probability a row) or ``groups=[(count, p), ...]`` (``count`` rows with
    probability ``p``; up to a few hundred groups over millions of rows).  Rows with equal ``p`` are
    grouped into binomials, whose exact windows are convolved directly in long double (no FFT),
    narrowest first.
    """

    log_concave = True

    def __init__(self, *, probs: npt.ArrayLike | None = None, groups: Sequence[tuple[int, float]] | None = None):
        if (probs is None) == (groups is None):
            raise ValueError("give exactly one of probs (a probability a row) and groups ([(count, p), ...])")
        merged: dict[float, int] = {}
        if probs is not None:
            arr, _ = real_array("probs", probs, minimum=0.0, maximum=1.0)
            if arr.size == 0:
                raise ValueError("probs must hold at least one probability")
            values, counts = np.unique(arr, return_counts=True)
            merged = {float(v): int(c) for v, c in zip(values, counts)}
        else:
            assert groups is not None
            if isinstance(groups, np.ndarray) and groups.ndim == 2:   # rows (count, p)
                groups = list(groups)
            for count, p in sequence("groups", groups, _group):
                merged[p] = merged.get(p, 0) + count
            if not merged:
                raise ValueError("groups must hold at least one (count, p) pair")
        self.groups = tuple(sorted((c, p) for p, c in merged.items() if c > 0))

    def __repr__(self) -> str:
        if len(self.groups) > 6:
            return f"PoissonBinomial(<{len(self.groups)} groups over {self.n} rows>)"
        return f"PoissonBinomial(groups={list(self.groups)!r})"

    @property
    def n(self) -> int:
        return sum(c for c, _ in self.groups)

    def window(self, depth: float) -> Window:
        depth = _depth(depth)
        shift = sum(c for c, p in self.groups if p == 1.0)
        random = [(c, p) for c, p in self.groups if 0.0 < p < 1.0]
        if not random:
            return Window(shift, np.zeros(1, dtype=LD), -math.inf, True)
        part_depth = depth + math.log(len(random)) + 10      # every truncation leaves out far less
        parts = [_Linear.of(Binomial(c, p).window(part_depth)) for c, p in random]
        out = _convolve_all(parts, part_depth)
        w = out.window(True)
        return Window(w.offset + shift, w.log_pmf, w.log_dropped, True)


class BetaBinomial(NaturalNoise):
    """``X ~ BetaBinomial(n, a, b)``: binomial rows whose p the attacker only knows to follow Beta(a, b).

    Log-concave when ``a, b >= 1``.  The pmf comes from its closed-form ratios
    ``w_{k+1}/w_k = (n - k)(k + a) / ((k + 1)(n - k - 1 + b))``, their logs summed in long double with
    compensation (C++, docs/natural-noise.md "Accuracy"), normalised over the whole support.
    """

    def __init__(self, n: int, a: float, b: float):
        self.n = integer("n", n, minimum=0, maximum=MAX_WINDOW - 1)
        self.a = real("a", a, minimum=0.0, min_inclusive=False)
        self.b = real("b", b, minimum=0.0, min_inclusive=False)
        self.log_concave = self.a >= 1 and self.b >= 1
        self._cache: LDArray | None = None

    def __repr__(self) -> str:
        return f"BetaBinomial(n={self.n}, a={self.a!r}, b={self.b!r})"

    def window(self, depth: float) -> Window:
        depth = _depth(depth)
        log_w = self._log_pmf()
        keep = np.nonzero(log_w >= log_w.max() - LD(depth))[0]
        lo, hi = int(keep[0]), int(keep[-1]) + 1
        # the window's exact tails.  The values' own rounding (the running sum of log-ratios and the
        # normalisation: measured within 1e-18 of mpmath at n = 1e6) is a relative error of every value,
        # inside the engine's allowance for its logs, 4e-16 (1 + max |log w|) (docs/natural-noise.md,
        # "Accuracy"); counted here as dropped mass it made every delta below ~1e-8 of it look unresolved.
        tails = np.concatenate([log_w[:lo], log_w[hi:]])
        log_dropped = float(tails.max() + np.log(np.exp(tails - tails.max()).sum())) if tails.size else -math.inf
        return Window(lo, log_w[lo:hi], log_dropped, self.log_concave)

    def _log_pmf(self) -> LDArray:
        """The whole support's log pmf (computed once)."""
        if self._cache is not None:
            return self._cache
        log_w = _kernels.beta_binomial_logpmf(self.n, self.a, self.b)
        self._cache = log_w
        return log_w


class BinomialMixture(NaturalNoise):
    """``X`` ~ Bin(n, p) with p drawn from a discrete prior: ``P(p = ps[j]) = weights[j]``."""

    def __init__(self, n: int, weights: Sequence[float], ps: Sequence[float]):
        self.n = integer("n", n, minimum=0, maximum=10**12)
        w, _ = real_array("weights", weights, minimum=0.0)
        q, _ = real_array("ps", ps, minimum=0.0, maximum=1.0)
        if w.size == 0 or w.size != q.size:
            raise ValueError(f"weights and ps must be non-empty and of the same length, got {w.size} and {q.size}")
        if abs(w.sum() - 1) > PMF_TOLERANCE:
            raise ValueError(f"weights must sum to 1 (within {PMF_TOLERANCE:g}), got {w.sum()!r}")
        keep = w > 0
        self.weights, self.ps = tuple(float(x) for x in w[keep]), tuple(float(x) for x in q[keep])
        self.log_concave = len(set(self.ps)) == 1

    def __repr__(self) -> str:
        return f"BinomialMixture(n={self.n}, weights={list(self.weights)!r}, ps={list(self.ps)!r})"

    def window(self, depth: float) -> Window:
        depth = _depth(depth)
        part_depth = depth + math.log(len(self.ps)) + 5
        parts = [Binomial(self.n, p).window(part_depth) for p in self.ps]
        lo = min(w.offset for w in parts)
        hi = max(w.offset + w.size for w in parts)
        _check_size(hi - lo, "the mixture")
        k = np.arange(lo, hi)
        log_w = np.full(k.size, -np.inf, dtype=LD)
        for weight, p in zip(self.weights, self.ps):
            log_w = np.logaddexp(log_w, LD(math.log(weight)) + np.asarray(_kernels.binom_logpmf(self.n, p, k), dtype=LD))
        log_dropped = float(np.logaddexp.reduce([math.log(weight) + w.log_dropped
                                                 for weight, w in zip(self.weights, parts)]))
        return Window(lo, log_w, log_dropped, self.log_concave)


class RowSum(NaturalNoise):
    """``X`` = the sum of ``count`` unknown rows, each an integer ``0..B`` with pmf ``row_pmf`` (i.i.d.).

    A bounded-sum query: the challenge row shifts the output by up to ``B``, so use it with
    ``sensitivity=B``.  The pmf of the sum is built by repeated squaring with exact long-double
    convolutions.
    """

    def __init__(self, row_pmf: npt.ArrayLike, count: int):
        pmf, _ = real_array("row_pmf", row_pmf, minimum=0.0)
        if pmf.size == 0:
            raise ValueError("row_pmf must be a non-empty array of probabilities >= 0")
        if abs(pmf.sum() - 1) > PMF_TOLERANCE:
            raise ValueError(f"row_pmf must sum to 1 (within {PMF_TOLERANCE:g}), got {pmf.sum()!r}")
        self.row_pmf = pmf
        self.count = integer("count", count, minimum=0, maximum=10**9)
        self._whole: Window | None = None
        with np.errstate(divide="ignore"):
            self.log_concave = _is_log_concave(np.log(pmf))

    def __repr__(self) -> str:
        if self.row_pmf.size > 8:   # a 1000-value row printed whole made every message about it pages long
            return f"RowSum(row_pmf=<{self.row_pmf.size} values>, count={self.count})"
        return f"RowSum(row_pmf={self.row_pmf.tolist()!r}, count={self.count})"

    def _estimated_work(self, first: int, last: int, part_depth: float) -> float:
        """The window's convolutions in long-double multiply-adds, before doing them: the loop below
        with each partial sum of m rows as wide as its support (m span + 1) or, narrower, as its normal
        approximation's values within e^-depth of the mode (2 sd sqrt(2 depth), sd = sqrt(m var))."""
        span = last - first
        pmf = self.row_pmf[first:last + 1] / self.row_pmf[first:last + 1].sum()
        values = np.arange(span + 1, dtype=float)
        mean = float(np.dot(values, pmf))
        var = float(np.dot((values - mean) ** 2, pmf))

        def size(m: int) -> float:
            return min(m * span + 1.0, 2 * math.sqrt(m * var * 2 * part_depth) + span + 1.0)

        work, base, result, k = 0.0, 1, 0, self.count
        while True:
            if k & 1:
                if result:
                    work += _convolution_work(int(size(result)), int(size(base)), part_depth)
                result += base
            k >>= 1
            if not k:
                return work
            work += _convolution_work(int(size(base)), int(size(base)), part_depth, amplified=k)
            base *= 2

    def window(self, depth: float) -> Window:
        depth = _depth(depth)
        if self.count == 0:
            return Window(0, np.zeros(1, dtype=LD), -math.inf, True)
        if self._whole is not None:   # the whole support, already: every depth's window is this one
            return self._whole
        nz = np.nonzero(self.row_pmf)[0]
        first, last = int(nz[0]), int(nz[-1])
        with np.errstate(divide="ignore"):
            # the row's logs in long double: a relative error of the row's values grows count-fold in the sum
            row = Window(first, np.log(self.row_pmf[first:last + 1].astype(LD)), -math.inf, self.log_concave)
        part_depth = depth + 2 * math.log(self.count + 1) + 10
        estimate = self._estimated_work(first, last, part_depth)
        if estimate > MAX_CONVOLUTION_WORK:
            raise ValueError(
                f"{self!r}: its pmf down to e^-{depth:g} of the mode needs about {estimate:.2g} long-double "
                f"multiply-adds of exact convolution (about {estimate / _LD_RATE:.0f} s), more than "
                f"MAX_CONVOLUTION_WORK = {MAX_CONVOLUTION_WORK:.0e}: use fewer rows (count), a row law with fewer "
                "values (coarser units), or a Pmf of the sum computed elsewhere")
        budget = _Budget(repr(self))
        base, result, k = _Linear.of(row), None, self.count
        while True:
            if k & 1:
                result = base if result is None else result.convolve(base, part_depth, budget=budget)
            k >>= 1
            if not k:
                break
            # the squared base enters the sum k times over (k = count >> level): its relative rounding
            # does too, so the early, small squarings run in long double (at 5,000 rows in double the
            # values were 1.4e-14 off; now 7e-17)
            base = base.convolve(base, part_depth, amplified=k, budget=budget)
        assert result is not None
        window = result.window(self.log_concave)
        if not window.log_concave and _is_log_concave(np.asarray(window.log_pmf, dtype=float)):
            # the sum of many rows is log-concave on its window even when one row is not (a central limit):
            # what the threshold path needs is the window's own log-concavity, checked on its values
            window = Window(window.offset, window.log_pmf, window.log_dropped, True)
        if window.log_dropped == -math.inf:
            # nothing was cut: the exact pmf on the whole support, which a deeper window would only
            # recompute (NoisyQuery asks for ever deeper windows until one equals the last)
            self._whole = window
        return window


class Pmf(NaturalNoise):
    """Any pmf on consecutive integers: ``P(X = offset + i) = exp(log_pmf[i])`` (must sum to 1)."""

    def __init__(self, log_pmf: npt.ArrayLike, offset: int = 0):
        # long double kept (no real_array: it rounds to double, and refuses -inf, the log of a 0)
        lw = np.asarray(_numbers("log_pmf", log_pmf), dtype=LD).ravel()
        if lw.size == 0 or np.any(np.isnan(lw)) or np.any(lw > 0) or np.any(lw == np.inf):
            raise ValueError("log_pmf must be a non-empty array of log-probabilities (<= 0, no NaN)")
        _check_size(lw.size, "log_pmf")
        total = float(np.exp(lw).sum())
        if abs(total - 1) > PMF_TOLERANCE:
            raise ValueError(f"log_pmf must describe probabilities summing to 1 (within {PMF_TOLERANCE:g}), "
                             f"got a total of {total!r}")
        self.log_pmf = lw
        self.offset = integer("offset", offset, minimum=-(2**62), maximum=2**62)
        self.log_concave = _is_log_concave(np.asarray(lw, dtype=float))

    def __repr__(self) -> str:
        return f"Pmf(<{self.log_pmf.size} values>, offset={self.offset})"

    def window(self, depth: float) -> Window:
        depth = _depth(depth)
        return Window(self.offset, self.log_pmf, -math.inf, self.log_concave)


# -------------------------------------------------------------------------------------------------
# added-noise laws

class AddedNoise:
    """Base of the added-noise laws.  ``lattice``: integer-valued (outputs stay integers).

    The public ``log_density``, ``log_sf``, ``log_cdf`` and ``reach`` check their argument (``x``: real
    numbers, +-inf taken, NaN refused; ``depth``: finite, >= 0) and call ``_log_density``, ``_log_sf``,
    ``_log_cdf`` and ``_reach``, which a law implements and ``ppk.noisy_query`` calls directly (on
    values it formed itself: no checks in its inner loops).
    """

    lattice: bool = False
    scale: float = 0.0

    def log_density(self, x: Floats) -> Floats:
        """log pdf (continuous) or log pmf (lattice, at integers) at ``x``."""
        return self._log_density(_points(x))

    def log_sf(self, x: Floats) -> Floats:
        """``log P(Z > x)``."""
        return self._log_sf(_points(x))

    def log_cdf(self, x: Floats) -> Floats:
        """``log P(Z <= x)`` (every law here is symmetric)."""
        return self._log_cdf(_points(x))

    def _log_density(self, x: Floats) -> Floats:
        raise NotImplementedError

    def _log_sf(self, x: Floats) -> Floats:
        raise NotImplementedError

    def _log_cdf(self, x: Floats) -> Floats:
        return self._log_sf(-x - 1) if self.lattice else self._log_sf(-x)

    def reach(self, depth: float) -> float:
        """``|z|`` beyond which the density is below ``e^-depth`` of its peak (``depth`` >= 0)."""
        depth = _depth(depth)
        out = self._reach(depth)
        if not math.isfinite(out):
            raise ValueError(f"depth must be small enough that the reach, {self!r}'s |z| at depth e-folds below "
                             f"its peak, is a finite float, got {depth!r}")
        return out

    def _reach(self, depth: float) -> float:
        raise NotImplementedError

    def with_scale(self, scale: float) -> AddedNoise:
        """The same law with another scale (for calibration)."""
        raise NotImplementedError


class NoNoise(AddedNoise):
    """No added noise: the exact value is released."""

    lattice = True

    def __repr__(self) -> str:
        return "NoNoise()"

    def _log_density(self, x: Floats) -> Floats:
        return np.where(x == 0, 0.0, -np.inf)

    def _log_sf(self, x: Floats) -> Floats:
        return np.where(x < 0, 0.0, -np.inf)

    def _reach(self, depth: float) -> float:
        return 0.0

    def with_scale(self, scale: float) -> AddedNoise:
        return self


class Gaussian(AddedNoise):
    """``Z ~ N(0, sigma^2)``, ``sigma`` a standard deviation in the query's units (counts)."""

    def __init__(self, sigma: float):
        # any sigma > 0: the counting kernel is exact at every scale; NoisyQuery refuses sigma < MIN_SCALE
        # on the paths that sum in double precision
        self.sigma = self.scale = self._sigma("sigma", sigma)

    @staticmethod
    def _sigma(name: str, value: object) -> float:
        return real(name, value, minimum=0.0, min_inclusive=False)

    def __repr__(self) -> str:
        return f"Gaussian(sigma={self.sigma!r})"

    def _log_density(self, x: Floats) -> Floats:
        with np.errstate(over="ignore"):     # far out (x ~ 1e300): the density is 0, its log -inf
            z = x / self.sigma
            return -0.5 * z * z - math.log(self.sigma * math.sqrt(2 * math.pi))

    def _log_sf(self, x: Floats) -> Floats:
        with np.errstate(over="ignore"):
            z = np.asarray(x / self.sigma, dtype=float)
        return _kernels.norm_logsf(z.ravel()).reshape(z.shape)

    def _reach(self, depth: float) -> float:
        return self.sigma * math.sqrt(2 * depth)

    def with_scale(self, scale: float) -> AddedNoise:
        return Gaussian(self._sigma("scale", scale))


class Laplace(AddedNoise):
    """``Z ~ Laplace(0, scale)``: density ``e^{-|z|/scale} / (2 scale)``."""

    def __init__(self, scale: float):
        self.scale = _scale("scale", scale)

    def __repr__(self) -> str:
        return f"Laplace(scale={self.scale!r})"

    def _log_density(self, x: Floats) -> Floats:
        with np.errstate(over="ignore"):
            return -np.abs(x) / self.scale - math.log(2 * self.scale)

    def _log_sf(self, x: Floats) -> Floats:
        with np.errstate(over="ignore"):
            t = x / self.scale
            return np.where(t >= 0, -math.log(2) - t, np.log1p(-0.5 * np.exp(np.minimum(t, 0))))

    def _reach(self, depth: float) -> float:
        return self.scale * depth

    def with_scale(self, scale: float) -> AddedNoise:
        return Laplace(scale)


class DiscreteGaussian(AddedNoise):
    """Integer ``Z`` with ``P(Z = z)`` proportional to ``exp(-z^2 / (2 sigma^2))`` (Canonne, Kamath, Steinke).

    ``sigma`` is the parameter of the law (its standard deviation is slightly below ``sigma`` for
    ``sigma < 1`` and equal to it to double precision above).
    """

    lattice = True
    #: Largest sigma: the exact tail table holds sigma * sqrt(3000) entries (1.1 million at the cap).
    SIGMA_MAX = 2e4
    #: Depth of the tail table: P(Z > x) is exact down to e^-1500 of the peak, bounded beyond.
    TABLE_DEPTH = 1500.0

    def __init__(self, sigma: float):
        self.sigma = self.scale = self._sigma("sigma", sigma)
        s = self.sigma
        if s >= 1:   # Poisson summation: sum_z e^{-z^2/2s^2} = s sqrt(2 pi) (1 + 2 sum_m e^{-2 pi^2 s^2 m^2})
            m = np.arange(1, 4, dtype=LD)
            self._log_norm = float(LD(math.log(s * math.sqrt(2 * math.pi))) + np.log1p(
                2 * np.exp(-2 * LD(math.pi) ** 2 * LD(s) ** 2 * m * m).sum()))
        else:        # a few terms reach every term above e^-800
            z = np.arange(1, int(40 * s) + 40, dtype=LD)
            self._log_norm = float(np.log1p(2 * np.exp(-0.5 * (z / LD(s)) ** 2).sum()))
        self._sf_cache: dict[int, npt.NDArray[np.float64]] = {}

    @classmethod
    def _sigma(cls, name: str, value: object) -> float:
        out = _scale(name, value)
        if out > cls.SIGMA_MAX:
            raise ValueError(f"{name} must be <= {cls.SIGMA_MAX:g} for the discrete Gaussian (its tail table "
                             f"grows with sigma; use Gaussian for wider noise), got {out!r}")
        return out

    def __repr__(self) -> str:
        return f"DiscreteGaussian(sigma={self.sigma!r})"

    def _log_density(self, x: Floats) -> Floats:
        with np.errstate(over="ignore"):     # far out (x ~ 1e300): the pmf is 0, its log -inf
            z = x / self.sigma          # (x / sigma)^2, not x^2 / sigma^2: sigma^2 underflows for tiny sigma
            return -0.5 * z * z - self._log_norm

    def _log_sf(self, x: Floats) -> Floats:
        # P(Z > x) = sum_{z > x} pmf(z): a table of the upper tail (log space, summed from the far end
        # inwards so that every partial sum is formed from smaller terms), symmetric for x < 0.
        # The lattice points (x truncated towards 0) in float: int64 holds neither +-inf nor 1e300.
        xt = np.trunc(np.asarray(x, dtype=float))
        table = self._tail_table()
        top = table.size - 1
        out = np.empty(xt.shape)
        pos = xt >= 0
        idx = np.minimum(xt[pos], top).astype(np.int64)
        out[pos] = table[idx]
        far = xt[pos] >= top
        if np.any(far):   # beyond the table: the Gaussian tail bound sum_{z > x} <= pmf(x+1) / (1 - ratio)
            xf = xt[pos][far] + 1
            out_pos = out[pos]
            with np.errstate(over="ignore"):
                out_pos[far] = self._log_density(xf) - np.log(-np.expm1(-(2 * xf + 1) / (2 * self.sigma) / self.sigma))
            out[pos] = out_pos
        neg = ~pos
        if np.any(neg):   # P(Z > x) = 1 - P(Z <= x) = 1 - P(Z > -x - 1), x < 0
            mirror = np.minimum(-xt[neg] - 1, top).astype(np.int64)
            out[neg] = np.log1p(-np.exp(table[mirror]))
        return out

    def _tail_table(self) -> npt.NDArray[np.float64]:
        if 0 not in self._sf_cache:
            zmax = int(math.ceil(self.sigma * math.sqrt(2 * self.TABLE_DEPTH))) + 2
            z = np.arange(zmax + 2, dtype=LD)
            log_p = -0.5 * (z / LD(self.sigma)) ** 2 - LD(self._log_norm)
            # log P(Z > x) for x = 0..zmax: logsumexp of log_p[x+1:], accumulated from the far end
            rev = np.logaddexp.accumulate(log_p[::-1])[::-1]
            self._sf_cache[0] = np.asarray(rev[1:zmax + 2], dtype=float)
        return self._sf_cache[0]

    def _reach(self, depth: float) -> float:
        return self.sigma * math.sqrt(2 * depth) + 1

    def with_scale(self, scale: float) -> AddedNoise:
        return DiscreteGaussian(self._sigma("scale", scale))


class DiscreteLaplace(AddedNoise):
    """Integer ``Z`` with ``P(Z = z) = tanh(1 / (2 scale)) e^{-|z| / scale}`` (two-sided geometric)."""

    lattice = True

    def __init__(self, scale: float):
        self.scale = _scale("scale", scale)
        self._log_c = math.log(math.tanh(0.5 / self.scale))

    def __repr__(self) -> str:
        return f"DiscreteLaplace(scale={self.scale!r})"

    def _log_density(self, x: Floats) -> Floats:
        with np.errstate(over="ignore"):
            return -np.abs(x) / self.scale + self._log_c

    def _log_sf(self, x: Floats) -> Floats:
        # z > x >= 0: sum_{z >= x+1} c e^{-z/t} = e^{-(x+1)/t} / (1 + e^{-1/t});  x < 0: 1 - P(Z > -x - 1)
        t = self.scale
        xi = np.asarray(x, dtype=float)
        log_den = np.log1p(np.exp(-1 / t))
        with np.errstate(over="ignore"):
            upper = -(np.abs(xi) + 1) / t - log_den                      # log P(Z > |x|) (and the mirror)
            mirror = -np.abs(xi) / t - log_den                           # log P(Z > -x - 1) for x < 0
        with np.errstate(divide="ignore"):
            return np.where(xi >= 0, upper, np.log1p(-np.exp(mirror)))

    def _reach(self, depth: float) -> float:
        return self.scale * depth + 1

    def with_scale(self, scale: float) -> AddedNoise:
        return DiscreteLaplace(scale)


#: The added-noise laws by the names :func:`ppk.calibrate` and the command line use.
ADDED_BY_NAME = {"gaussian": Gaussian, "laplace": Laplace, "discrete_gaussian": DiscreteGaussian,
                 "discrete_laplace": DiscreteLaplace}
