"""The natural-noise laws: the attacker's belief about the total of the rows they do not know.

Every law is integer-valued and hands :class:`ppk.NoisyQuery` its pmf on a window
(:class:`ppk.noise.Window`), exact in long double logs.  A log-concave law with a closed-form pmf
(``Binomial``) finds its window from the mode outwards; ``BetaBinomial`` computes its whole support
once; the sums (``PoissonBinomial``, ``RowSum``) convolve their parts' windows in
``ppk.noise._convolve``; ``BinomialMixture`` adds its components' pmfs.
"""
from __future__ import annotations

import math
from typing import Any, Sequence, overload

import numpy as np
import numpy.typing as npt

from .. import _kernels
from .._validate import _show, integer, real, real_array, sequence
from ._arguments import _depth, _numbers
from ._convolve import MAX_CONVOLUTION_WORK, _LD_RATE, _Budget, _convolution_work, _convolve_all, _Linear
from .._typing import FloatArray
from .window import LD, MAX_WINDOW, LDArray, Window, _check_size, _is_log_concave, _log_concave_window

__all__ = ["NaturalNoise", "Binomial", "PoissonBinomial", "BetaBinomial", "BinomialMixture", "RowSum", "Pmf"]

#: Relative tolerance on a pmf's total mass (and on mixture weights).
PMF_TOLERANCE = 1e-12


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


def _probability(name: str, value: object) -> float:
    return real(name, value, minimum=0.0, maximum=1.0)


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

    @overload
    def log_pmf(self, k: int) -> float: ...
    @overload
    def log_pmf(self, k: npt.ArrayLike) -> float | FloatArray: ...
    def log_pmf(self, k: npt.ArrayLike) -> float | FloatArray:
        """``log P(X = k)`` for integers ``k`` (an int or an array; ``-inf`` outside ``0..n``), by the kernel's
        saddle-point form in long double (~1e-16 relative)."""
        try:
            kk = np.asarray(k)
        except (TypeError, ValueError, OverflowError):
            raise TypeError(f"k must be an integer or an array of integers, got {_show(k)}") from None
        integral = kk.dtype.kind in "iu" or (kk.dtype.kind == "f" and bool(np.all(np.isfinite(kk) & (kk == np.round(kk)))))
        if not integral or kk.dtype.kind == "b":
            raise TypeError(f"k must be an integer or an array of integers, got {_show(k)}")
        if kk.size and (float(np.max(np.abs(kk.astype(float)))) > 2.0**62):
            raise ValueError(f"k must be within +-2**62, got {_show(k)}")
        out = _kernels.binom_logpmf(self.n, self.p, kk.astype(np.int64))
        return float(out) if kk.ndim == 0 else out

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
        # (the whole support's log pmf and its largest value, set together: one assignment, so a thread
        # never sees the one without the other)
        self._cache: tuple[LDArray, np.longdouble] | None = None

    def __repr__(self) -> str:
        return f"BetaBinomial(n={self.n}, a={self.a!r}, b={self.b!r})"

    def window(self, depth: float) -> Window:
        depth = _depth(depth)
        log_w, top = self._pmf_and_top()
        lo, hi = _kept(log_w, top - LD(depth))
        # the window's exact tails.  The values' own rounding (the running sum of log-ratios and the
        # normalisation: measured within 1e-18 of mpmath at n = 1e6) is a relative error of every value,
        # inside the engine's allowance for its logs, 4e-16 (1 + max |log w|) (docs/natural-noise.md,
        # "Accuracy"); counted here as dropped mass it made every delta below ~1e-8 of it look unresolved.
        tails = np.concatenate([log_w[:lo], log_w[hi:]])
        log_dropped = float(tails.max() + np.log(np.exp(tails - tails.max()).sum())) if tails.size else -math.inf
        return Window(lo, log_w[lo:hi], log_dropped, self.log_concave)

    def _log_pmf(self) -> LDArray:
        """The whole support's log pmf (computed once)."""
        return self._pmf_and_top()[0]

    def _pmf_and_top(self) -> tuple[LDArray, np.longdouble]:
        """The whole support's log pmf and its largest value (computed once)."""
        if self._cache is None:
            log_w = _kernels.beta_binomial_logpmf(self.n, self.a, self.b)
            self._cache = (log_w, log_w.max())
        return self._cache


def _kept(log_w: LDArray, floor: np.longdouble) -> tuple[int, int]:
    """The first and one past the last index with log_w >= floor (some value is), scanning from each end
    in chunks that double: a window holding most of the support is found without a pass over it."""
    n = log_w.size
    lo = chunk = 0
    step = 1024
    while True:
        hit = log_w[chunk:chunk + step] >= floor
        if hit.any():
            lo = chunk + int(hit.argmax())
            break
        chunk, step = chunk + step, 2 * step
    end, step = n, 1024
    while True:
        start = max(end - step, lo)
        hit = log_w[start:end] >= floor
        if hit.any():
            return lo, end - int(hit[::-1].argmax())
        end, step = start, 2 * step


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

