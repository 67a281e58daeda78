"""Shuffled randomized response for one split of the other users' inputs: the exact delta(eps), certified.

The shuffler publishes how many of the n users reported 1.  Each user flips its input with probability
``r = 1 / (1 + e^eps0)``.  With the other users' inputs fixed (``ones`` of them 1, ``zeros`` of them 0) and
``unknown`` further users whose inputs are i.i.d. Bernoulli(p) (each reports 1 with ``q = r + p (1 - 2r)``),
the others' reports sum to

    C = Bin(ones, 1 - r) + Bin(zeros, r) + Bin(unknown, q),

and the challenge user's input 0 or 1 gives the outputs ``P0 = C + Bern(r)`` and ``P1 = C + Bern(1 - r)``.
With ``rho(s) = C(s-1) / C(s)`` (non-decreasing in s: C is a Poisson binomial, so log-concave),

    P1(s) - e^eps P0(s) = f (C(s-1) - rho1 C(s)),    P0(s) - e^eps P1(s) = g (rho0 C(s) - C(s-1)),

with ``f = (1 - r) - e^eps r``, ``g = e^eps (1 - r) - r``, ``rho1 = g / f = 1 / rho0``: both hockey sticks
are sums of positive parts of these closed forms -- no difference of two large probabilities is ever
formed.  docs/shuffle.md derives them and the error bounds below.

``log C(s)`` comes from a direct convolution of the narrower binomial with the wider law (one binomial in
closed form, or the kernel's certified window of two), exponentially tilted so that the window's values
are the bulk of the tilted sums (relative accuracy in every tail, no FFT).  Each value carries a lower
and an upper end; the hockey sticks are summed from the ends that make them a lower and an upper bound.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from . import _kernels
from ._kernels import check_interrupt, interruptible   # for ppk/shuffle.py's loops (Ctrl-C in any thread)
from ._logmath import log1mexp
from ._typing import FloatArray
from .noise.window import Window

U = 2.0 ** -53           # unit roundoff of double
TINY = 2.0 ** -1021      # products below this may have lost their value to underflow
FULL_SUPPORT = 256      # narrow binomials of fewer users are convolved over their whole support
DEPTH = 40.0             # a window ends where its terms fall below e^-DEPTH of the sum's (tails bounded)
RANGE_DEPTH = 16.0       # the same for the bounds that only prune ranges of splits


@dataclass(frozen=True)
class Flip:
    """The randomizer: flip probability ``r = 1 / (1 + e^eps0)`` (eps0 >= 0, finite), with log(1 - r)."""

    eps0: float

    @cached_property
    def r(self) -> float:
        """The flip probability; 0 where it would be subnormal (eps0 above about 708.4): a subnormal r has lost
        its relative precision (the error bounds, relative to r, become infinite: delta was NaN for eps0 in
        738..745).  r = 0 leaves the challenge user's own randomized response in the coefficients f and g,
        which take eps0 itself, and makes the others' reports known exactly: the attacker knows more, so
        delta can only be over-stated (docs/shuffle.md)."""
        r = 1.0 / (1.0 + math.exp(self.eps0)) if self.eps0 < 700 else math.exp(-self.eps0)
        return r if r >= sys.float_info.min else 0.0

    @cached_property
    def log_1mr(self) -> float:
        return -float(np.logaddexp(0.0, -self.eps0))

    def coefficients(self, eps: float) -> tuple[float, float]:
        """``(log f, log g)`` of the module docstring at ``eps`` (< eps0); ``log rho1 = log g - log f``.
        ``f = (1 - r)(1 - e^(eps - eps0))`` and ``g = e^eps (1 - r)(1 - e^-(eps + eps0))`` (as r / (1 - r) = e^-eps0):
        no cancellation for any eps0, and r = 0 needs no case of its own."""
        log_f = self.log_1mr + math.log(-math.expm1(eps - self.eps0))
        log_g = eps + self.log_1mr + math.log(-math.expm1(-(eps + self.eps0)))
        return log_f, log_g


@dataclass(frozen=True)
class _Group:
    """``count`` Bernoulli(p) reports, ``p = 1 - r`` written as ``mirrored`` (pmf at x = Bin(count, r) at count - x)."""

    count: int
    p: float
    mirrored: bool = False

    @property
    def prob_one(self) -> float:
        return 1.0 - self.p if self.mirrored else self.p

    def log_pmf(self, x: np.ndarray) -> FloatArray:
        """log pmf at the consecutive integers ``x`` (``-inf`` outside 0..count)."""
        k = (self.count - x[::-1]) if self.mirrored else x
        out = np.full(k.shape, -np.inf)
        inside = np.nonzero((k >= 0) & (k <= self.count))[0]
        if inside.size:
            out[inside[0]:inside[-1] + 1] = _binomial_run(self.count, self.p, int(k[inside[0]]), inside.size)
        return out[::-1] if self.mirrored else out

    def log_pmf_at(self, x: np.ndarray) -> FloatArray:
        """log pmf at any integers ``x`` (each from the kernel)."""
        k = (self.count - x) if self.mirrored else x
        out = np.full(k.shape, -np.inf)
        inside = (k >= 0) & (k <= self.count)
        if np.any(inside):
            out[inside] = _kernels.binom_logpmf(self.count, self.p, k[inside].astype(np.int64))
        return out


#: Every ANCHOR-th value of a run of binomial log pmfs comes from the kernel; the ones between follow by the
#: exact ratio w(k) / w(k-1) = (n - k + 1) p / (k q), cumulated: each step adds at most u (|log| + |logit p| + 3)
#: to the log's error, so a value's error is below ANCHOR u (|value| + |logit p| + 3) + the kernel's.
ANCHOR = 64


def run_error(values: FloatArray, p: float) -> FloatArray:
    """A bound on the absolute error of :func:`_binomial_run`'s logs ``values`` (finite ones)."""
    logit = abs(math.log(p) - math.log1p(-p)) if 0 < p < 1 else 0.0
    return 1e-17 + ANCHOR * U * (np.abs(values) + logit + 4)


def _binomial_run(n: int, p: float, k0: int, size: int) -> FloatArray:
    """``log Bin(n, p)(k)`` for ``k = k0 .. k0 + size - 1`` (all within 0..n)."""
    k = np.arange(k0, k0 + size)
    anchors = _kernels.binom_logpmf(n, p, k[::ANCHOR].astype(np.int64))
    if size <= 1:
        return anchors
    # steps into each k from k - 1, cumulated within blocks of ANCHOR that start at an anchor
    blocks = -(-size // ANCHOR)
    flat = np.zeros(blocks * ANCHOR)
    kk = k[1:]
    flat[1:size] = np.log((n - kk + 1.0) / kk) + (math.log(p) - math.log1p(-p))
    steps = flat.reshape(blocks, ANCHOR)
    steps[:, 0] = anchors
    return np.cumsum(steps, axis=1).ravel()[:size]


class Split:
    """The others' reports ``C`` for one split; :meth:`log_pmf_bracket` gives certified ends of ``log C(s)``."""

    def __init__(self, flip: Flip, *, ones: int, zeros: int, unknown: int = 0, q: float = 0.5, depth: float = DEPTH):
        self.flip, self.ones, self.zeros, self.unknown, self.q = flip, ones, zeros, unknown, q
        self.depth = depth
        r = flip.r
        groups = [g for g in (_Group(ones, r, True), _Group(zeros, r), _Group(unknown, q)) if g.count > 0
                  and 0.0 < g.prob_one < 1.0]
        self.shift = (ones if r == 0.0 else 0) + (unknown if q == 1.0 else 0)   # deterministic reports
        self.size = sum(g.count for g in groups)                                 # C lives on shift..shift+size
        self.mean = ones * (1 - r) + zeros * r + unknown * q
        self.var = (ones + zeros) * r * (1 - r) + unknown * q * (1 - q)
        groups.sort(key=lambda g: g.count * g.prob_one * (1 - g.prob_one))
        self._narrow = groups[0] if len(groups) > 1 else None
        self._wide = groups[1:] if len(groups) > 1 else groups
        self._wide_window: Window | None = None      # the kernel's window of two wide groups, made once
        # r and q are rounded to doubles (relative error <= 4u), and the kernel's window of two groups takes
        # 1 - r as a probability: d log pmf / dp = (x - k p) / (p (1 - p)) gives a log error per count of
        # deviation from the mean
        smallest = min([min(p, 1 - p) for p in (r, q) if 0 < p < 1] or [0.5])
        self._log_err_per_count = 5 * U / smallest

    # -- the wider law: one binomial in closed form, or the kernel's window of two
    def _wide_log_pmf(self, y: np.ndarray, consecutive: bool = True) -> tuple[FloatArray, float]:
        """log of the wider law at y (with ``shift`` removed; consecutive integers unless said otherwise) and
        an absolute bound on what it leaves out."""
        if not self._wide:
            return np.where(y == 0, 0.0, -np.inf), 0.0
        if len(self._wide) == 1:
            g = self._wide[0]
            return (g.log_pmf(y) if consecutive else g.log_pmf_at(y)), 0.0
        if self._wide_window is None:
            from .noise.natural import PoissonBinomial
            groups = [(g.count, g.prob_one) for g in self._wide]
            self._wide_window = PoissonBinomial(groups=groups).window(800.0)
        w = self._wide_window
        idx = y - w.offset
        out = np.full(y.shape, -np.inf)
        inside = (idx >= 0) & (idx < w.size)
        out[inside] = np.asarray(w.log_pmf[idx[inside]], dtype=np.float64)
        return out, math.exp(w.log_dropped)

    def _saddle(self, target: float) -> float:
        """The tilt lam whose tilted law has mean ``target`` (the saddle point): there the tilted sums' terms
        are largest, far from under- or overflow.  Newton's method on the tilted mean (increasing, with the
        tilted variance as slope), kept inside a bracket; any lam is exact, a good one only keeps the work
        small, so a few steps suffice."""
        groups = ([self._narrow] if self._narrow else []) + list(self._wide)
        counts = np.array([g.count for g in groups], dtype=float)
        logits = np.array([math.log(g.prob_one) - math.log1p(-g.prob_one) for g in groups])
        lo, hi, lam = -750.0, 750.0, 0.0
        for _ in range(60):
            p = 1.0 / (1.0 + np.exp(np.minimum(-(logits + lam), 700.0)))
            mean, slope = float(counts @ p), float(counts @ (p * (1 - p)))
            if mean < target:
                lo = lam
            else:
                hi = lam
            step = (target - mean) / slope if slope > 0 else math.inf
            nxt = lam + step
            if not lo < nxt < hi:
                nxt = 0.5 * (lo + hi)
            if abs(nxt - lam) < 1e-6 or hi - lo < 1e-9:
                return nxt
            lam = nxt
        return lam

    def _wide_run_error(self, values: FloatArray) -> FloatArray:
        """The error bound of the wider law's logs: a binomial run's, or the kernel window's (long double)."""
        if len(self._wide) == 1:
            return run_error(values, self._wide[0].p)
        return 1e-15 + 4 * U * np.abs(values)

    def _narrow_window(self, lam: float) -> tuple[np.ndarray, FloatArray, tuple[float, float]]:
        """The narrow binomial's x-range for tilt ``lam`` (about its mean ``xm``): ``(x, log pmf, logs of the
        tilted masses left out below and above, relative to e^(lam (x - xm)))``.  Up to FULL_SUPPORT users
        the whole support is kept (nothing left out)."""
        g = self._narrow
        assert g is not None
        p1 = g.prob_one
        xm = g.count * p1
        if g.count < FULL_SUPPORT:
            x0, x1 = 0, g.count
        else:   # the tilted law is Bin(count, p'), p' = p e^lam / (1 - p + p e^lam): centre the window on it
            lp = float(np.logaddexp(math.log1p(-p1), math.log(p1) + lam))
            # p' and 1 - p' each from its own exp: 1 - p' formed by subtraction can round below 0
            pt, qt = min(1.0, math.exp(math.log(p1) + lam - lp)), min(1.0, math.exp(math.log1p(-p1) - lp))
            # beyond the window the tilted law is below about e^-(depth + 10): the tails are bounded in extra
            half = int(math.sqrt(2 * (self.depth + 10)) * math.sqrt(g.count * pt * qt) + 12)
            centre = int(g.count * pt)
            x0, x1 = max(0, centre - half), min(g.count, centre + half)
        x = np.arange(x0, x1 + 1)
        la = g.log_pmf(x)
        ta = la + lam * (x - xm)
        dropped = [-math.inf, -math.inf]
        for side, (edge, nxt, at_end) in enumerate(((0, 1, x0 == 0), (-1, -2, x1 == g.count))):
            if not at_end:     # outwards, a log-concave law's ratios decrease: a geometric bound
                dropped[side] = _geometric(ta[edge], ta[edge] - ta[nxt] if x.size > 1 else 0.0)
        return x, la, (dropped[0], dropped[1])

    def _wide_tilted_max(self, a: int, b: int, lam: float, ym: float) -> float:
        """max over y in a..b of the wide law's log pmf + lam (y - ym): it is log-concave, so the maximum is
        at the interval's ends or at the tilted law's mode, which lies within 1 of its mean."""
        if a > b:
            return -math.inf
        mean = sum(w.count * math.exp(math.log(w.prob_one) + lam
                                      - float(np.logaddexp(math.log1p(-w.prob_one), math.log(w.prob_one) + lam)))
                   for w in self._wide)
        ys = np.unique(np.clip(np.array([a, b, int(mean) - 1, int(mean), int(mean) + 1, int(mean) + 2]), a, b))
        vals, _ = self._wide_log_pmf(ys, consecutive=False)
        return float(np.max(vals + lam * (ys - ym)))

    def log_pmf_bracket(self, lo: int, hi: int) -> tuple[FloatArray, FloatArray]:
        """Certified ``(lower, upper)`` ends of ``log C(s)`` for ``s = lo..hi`` (``-inf`` outside the support)."""
        first, last = max(lo, self.shift), min(hi, self.shift + self.size)
        lower, upper = np.full(hi - lo + 1, -np.inf), np.full(hi - lo + 1, -np.inf)
        if first <= last:
            low, up = self._bracket_inside(first, last)
            lower[first - lo:last - lo + 1], upper[first - lo:last - lo + 1] = low, up
        return lower, upper

    def _bracket_inside(self, lo: int, hi: int) -> tuple[FloatArray, FloatArray]:
        """:meth:`log_pmf_bracket` on a window inside the support; a window whose tilted sums underflow
        somewhere is halved (each half with its own tilt)."""
        s = np.arange(lo, hi + 1)
        t = s - self.shift
        dev = self._log_err_per_count
        if self._narrow is None:
            vals, lost = self._wide_log_pmf(t)
            finite = np.where(np.isfinite(vals), vals, 0.0)
            err = self._wide_run_error(finite) + 2 * U * np.abs(finite) + dev * np.abs(t - self.mean)
            upper = np.logaddexp(vals, math.log(lost)) if lost > 0 else vals
            return vals - err, upper + err
        # Tilt by e^(lam (x - xm)) and e^(lam (y - ym)) so the window's middle is the tilted sums' bulk (the
        # saddle point: any tilt is exact, a good one keeps every product far from underflow).
        g = self._narrow
        xm = g.count * g.prob_one
        ym = self.mean - xm
        lam = self._saddle(0.5 * (t[0] + t[-1]))
        x, la, (drop_below, drop_above) = self._narrow_window(lam)
        y = np.arange(t[0] - x[-1], t[-1] - x[0] + 1)
        lb, lost = self._wide_log_pmf(y)
        ta, tb = la + lam * (x - xm), lb + lam * (y - ym)
        ma, mb = float(np.max(ta)), float(np.max(tb))
        if not (math.isfinite(ma) and math.isfinite(mb)):
            empty = np.full(s.shape, -np.inf)
            return empty, empty
        c = np.convolve(np.exp(tb - mb), np.exp(ta - ma), mode="valid")
        scale = ma + mb - lam * (t - xm - ym)          # log C(s) = log c(s) + scale
        # In c's units: the narrow tails left out times the tilted wide law's total (a bound on each of its
        # values), and products that underflowed.
        extra = x.size * TINY
        if drop_below > -math.inf:    # x < x[0] pairs with y in t[0]-x[0]+1 .. t[-1]
            top = self._wide_tilted_max(t[0] - x[0] + 1, t[-1], lam, ym)
            extra += math.exp(min(drop_below - ma + top - mb, 700.0))
        if drop_above > -math.inf:    # x > x[-1] pairs with y in t[0]-count .. t[-1]-x[-1]-1
            top = self._wide_tilted_max(t[0] - self._narrow.count, t[-1] - x[-1] - 1, lam, ym)
            extra += math.exp(min(drop_above - ma + top - mb, 700.0))
        # halve where the left-out parts exceed e^-depth of a value (or the tilted sum underflows)
        if hi > lo and not np.all(c > max(1e-250, math.exp(min(self.depth, 600.0)) * extra)):
            mid = (lo + hi) // 2
            a, b = self._bracket_inside(lo, mid), self._bracket_inside(mid + 1, hi)
            return np.concatenate([a[0], b[0]]), np.concatenate([a[1], b[1]])
        fin_a, fin_b = np.isfinite(la), np.isfinite(lb)
        # rounding: the log pmfs and tilts (3u of each magnitude), exp (2u a factor), the sums ((len + 4) u),
        # the scale, and r's rounding (dev per count of deviation from the mean)
        err = (float(np.max(run_error(la[fin_a], self._narrow.p))) + float(np.max(self._wide_run_error(lb[fin_b]), initial=0.0))
               + 3 * U * (float(np.max(np.abs(la[fin_a]))) + float(np.max(np.abs(lam * (x - xm))))
                                + float(np.max(np.abs(lb[fin_b]), initial=0.0))
                                + float(np.max(np.abs(lam * (y - ym)))) + abs(ma) + abs(mb))
               + (x.size + 8) * U * 1.01 + 2 * U * np.abs(scale)
               + dev * (np.abs(t - self.mean) + 2 * float(np.max(np.abs(x - xm)))))
        with np.errstate(divide="ignore"):
            lower = np.log(c) + scale - err
            upper = np.log(c * (1 + 4 * U) + extra) + scale + err
        if lost > 0:                                   # the wide window's left-out mass, absolute
            upper = np.logaddexp(upper, math.log(lost))
        return lower, upper


def _log_sum(v: FloatArray) -> float:
    m = float(np.max(v, initial=-np.inf))
    return m + math.log(float(np.sum(np.exp(v - m)))) if math.isfinite(m) else -math.inf


def _geometric(log_first: float, log_ratio: float) -> float:
    """log of first / (1 - ratio): a bound on a tail whose ratios only decrease (log-concavity)."""
    if log_first == -math.inf:
        return -math.inf
    return log_first - math.log(-math.expm1(log_ratio)) if log_ratio < 0 else math.inf


class _Cache:
    """log C's certified ends in blocks of ``block`` consecutive s aligned on the support's first value
    (as ppk/shuffle.hpp): each value depends on its block alone, never on the eps asked before, so a curve
    answers the same bits whatever the call order and from any thread.  A block is computed outside any
    lock and published whole (``dict.setdefault`` is atomic); two threads may both compute one, with the
    same bits."""

    def __init__(self, split: Split):
        self.split = split
        # about two standard deviations, a power of two in 64 .. 2^16 (a block much wider than the law would
        # be tilted far from its mean, where r's rounding weighs more)
        self.block = 64
        while self.block < 2 ** 16 and self.block < 2 * math.sqrt(split.var):
            self.block *= 2
        self._blocks: dict[int, tuple[FloatArray, FloatArray]] = {}

    def _ends(self, index: int) -> tuple[FloatArray, FloatArray]:
        ends = self._blocks.get(index)
        if ends is None:
            if len(self._blocks) * self.block >= 2 ** 22:   # 64 MiB: start afresh (values never depend on it)
                self._blocks.clear()
            sp = self.split
            lo = sp.shift + index * self.block
            ends = self._blocks.setdefault(index, sp.log_pmf_bracket(lo, min(lo + self.block - 1, sp.shift + sp.size)))
        return ends

    def get(self, lo: int, hi: int) -> tuple[FloatArray, FloatArray]:
        """Ends of log C on ``lo..hi`` (C is 0 outside ``shift..shift + size``)."""
        sp = self.split
        lower, upper = np.full(hi - lo + 1, -np.inf), np.full(hi - lo + 1, -np.inf)
        a, b = max(lo, sp.shift), min(hi, sp.shift + sp.size)
        if a <= b:
            for index in range((a - sp.shift) // self.block, (b - sp.shift) // self.block + 1):
                first = sp.shift + index * self.block
                low, up = self._ends(index)
                i, j = max(a, first), min(b, first + self.block - 1)
                lower[i - lo:j - lo + 1], upper[i - lo:j - lo + 1] = low[i - first:j - first + 1], up[i - first:j - first + 1]
        return lower, upper


class SplitCurve:
    """delta(eps) of the pair ``(C + Bern(r), C + Bern(1 - r))`` for one :class:`Split`, certified:
    :meth:`log_bracket` gives ``(lower, upper)`` ends of ``log max(H(P1 || P0), H(P0 || P1))`` (or of
    ``log H(P0 || P1)`` alone with ``backward_only``).  The sums stop where their far tails are below
    ``e^-depth`` of them (the tails are bounded and added to the upper end)."""

    def __init__(self, split: Split, *, depth: float = DEPTH, backward_only: bool = False):
        self.split, self.depth, self.backward_only = split, depth, backward_only
        self._cache = _Cache(split)

    def log_bracket(self, eps: float) -> tuple[float, float]:
        flip = self.split.flip
        if eps >= flip.eps0:
            return -math.inf, -math.inf                   # the loss never exceeds eps0
        bwd = self._order(eps, False)
        if self.backward_only:
            return bwd
        fwd = self._order(eps, True)
        return max(fwd[0], bwd[0]), max(fwd[1], bwd[1])

    def _order(self, eps: float, forward: bool) -> tuple[float, float]:
        """``H(P1 || P0)`` (forward) or ``H(P0 || P1)``: certified log ends."""
        sp = self.split
        log_f, log_g = sp.flip.coefficients(eps)
        log_rho1 = log_g - log_f
        slack = 16 * U * (1 + abs(log_f) + abs(log_g))     # the rounding of log f, log g and rho1
        sd = math.sqrt(sp.var) if sp.var > 0 else 1.0
        # Gaussian guess of the threshold (log rho(s) ~ (s - mean) / var), then the window grows until the
        # side beyond the threshold is certainly empty and the far tail is below e^-DEPTH of the sum
        centre = sp.shift + sp.mean + sp.var * (log_rho1 if forward else -log_rho1)
        d = abs(centre - sp.shift - sp.mean)
        reach = math.sqrt(d * d + 2 * sp.var * self.depth) - d + 4
        inner, outer = 0.5 * sd + 4, reach
        for _ in range(60):
            check_interrupt()                                  # Ctrl-C from any thread (docs/limits.md)
            first, last = sp.shift, sp.shift + sp.size + 1     # the terms live on first..last

            def index(x: float) -> int:   # x truncated, within first - 1 .. last + 1 (x may be inf or NaN)
                return first - 1 if not x > first - 1 else last + 1 if not x < last + 1 else int(x)

            lo, hi = (index(centre - inner), index(centre + outer) + 1) if forward else \
                (index(centre - outer) - 1, index(centre + inner))
            lo, hi = min(max(lo, first), last - 1), max(min(hi, last), first + 1)
            low, up = self._cache.get(lo - 1, hi)                  # log C on lo-1..hi
            ends = (lo == first, hi == last)
            lower, upper, inner_ok, tail = (_forward if forward else _backward)(low, up, log_rho1, slack, ends)
            tail_ok = tail == -math.inf or tail <= upper - self.depth
            if inner_ok and tail_ok:
                # both orders carry the factor f (g rho0 = f); the sums' rounding is (log2 n + 4) u
                grow = slack + (math.log2(hi - lo + 2) + 4) * U * 1.01
                total = float(np.logaddexp(upper, tail))
                return log_f + lower - grow, log_f + total + grow
            inner, outer = (inner if inner_ok else 2 * inner), (outer if tail_ok else 2 * outer)
        raise RuntimeError("the shuffled randomized-response window did not settle")   # pragma: no cover


def _tail(edge_up: float, next_low: float) -> float:
    """log bound on the terms beyond a window's edge, from the edge's upper end and its neighbour's lower end
    (-inf when the edge is 0: the ratio is not formed, -inf - -inf would be NaN and warn)."""
    return -math.inf if edge_up == -math.inf else _geometric(edge_up, edge_up - next_low)


def _forward(low: FloatArray, up: FloatArray, log_rho1: float, slack: float, ends: tuple[bool, bool]):
    """Sums of ``(C(s-1) - rho1 C(s))_+`` over the window from C's ends on ``lo-1..hi``; whether no s below
    lo has a positive term (rho(lo) <= rho1, or lo is the support's first), and a bound on the terms beyond
    hi (none when hi is one past the support's last).  ``ends``: whether lo and hi are those two."""
    with np.errstate(invalid="ignore"):
        t_up = up[:-1] + log1mexp(low[1:] - up[:-1] + (log_rho1 - slack))
        t_low = low[:-1] + log1mexp(up[1:] - low[:-1] + (log_rho1 + slack))
        inner_ok = ends[0] or bool(up[0] - low[1] <= log_rho1 - slack)
    if ends[1]:
        tail = -math.inf
    else:
        tail = _tail(float(up[-1]), float(low[-2]))
    return _log_sum(t_low), _log_sum(t_up), inner_ok, tail


def _backward(low: FloatArray, up: FloatArray, log_rho1: float, slack: float, ends: tuple[bool, bool]):
    """Sums of ``(C(s) - rho1 C(s-1))_+`` (= ``rho1 (rho0 C(s) - C(s-1))_+``) over the window; whether no s
    above hi has a positive term (rho(hi) >= rho0, or hi is one past the support's last), and a bound on the
    terms below lo (none when lo is the support's first)."""
    with np.errstate(invalid="ignore"):
        t_up = up[1:] + log1mexp(low[:-1] - up[1:] + (log_rho1 - slack))
        t_low = low[1:] + log1mexp(up[:-1] - low[1:] + (log_rho1 + slack))
        inner_ok = ends[1] or bool(low[-2] - up[-1] >= -log_rho1 + slack)
    if ends[0]:
        tail = -math.inf
    else:
        tail = _tail(float(up[0]), float(low[1]))
    return _log_sum(t_low), _log_sum(t_up), inner_ok, tail


def derived_curve(parent, *, count: int, ones: bool, depth: float, backward_only: bool, upper_only: bool = False):
    """The curve of ``parent``'s law (a C++ split curve) plus ``count`` users whose input is known to be 1
    (``ones``) or 0: log C is the parent's certified log C convolved with that one binomial (ppk/shuffle.hpp;
    docs/shuffle.md, "Ranges derived from their parent"); None when the parent is the Python reference.
    ``upper_only``: its lower end is -inf (for ranges, which only prune)."""
    if isinstance(parent, SplitCurve) or count < 1:
        return None
    return _kernels.shuffle_split_derived(parent, count, ones, depth, backward_only, upper_only)


def split_curve(flip: Flip, *, ones: int, zeros: int, unknown: int, q: float, depth: float = DEPTH,
                backward_only: bool = False):
    """The curve of one split, with ``log_bracket(eps)``: the C++ port (ppk/shuffle.hpp) when at most two of
    the three groups are random, else :class:`SplitCurve` (the reference, which also convolves three)."""
    r = flip.r
    random = sum(1 for count, p in ((ones, 1 - r), (zeros, r), (unknown, q)) if count > 0 and 0 < p < 1)
    if random <= 2:
        return _kernels.shuffle_split(ones, zeros, unknown, r, q, flip.eps0, depth, backward_only)
    return SplitCurve(Split(flip, ones=ones, zeros=zeros, unknown=unknown, q=q, depth=depth), depth=depth,
                      backward_only=backward_only)
