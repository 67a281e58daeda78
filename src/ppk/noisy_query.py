"""The privacy curve of any natural noise plus any added noise: :class:`NoisyQuery`.

A release ``f(D) + Z`` over rows the attacker partly knows: the unknown rows other than the challenge
row contribute ``X`` (a law of :mod:`ppk.noise`), the mechanism adds ``Z``, and the challenge row
shifts the output by an integer ``d``, ``1 <= |d| <= sensitivity``.  The curve is

    delta(eps) = max over d of  H_{e^eps}( law of d + X + Z  ||  law of X + Z ),

computed by one of four paths (``docs/natural-noise.md`` has the proofs):

* ``"counting kernel"`` -- Binomial natural noise, Gaussian or no added noise, sensitivity 1: the
  :class:`ppk.CountingQuery` kernel (same numbers).
* ``"threshold"`` -- log-concave natural noise (binomial, Poisson-binomial, beta-binomial with
  ``a, b >= 1``, log-concave row sums and pmfs) with any of the four noises, all log-concave: the loss
  is monotone in the output, the optimal set is a half-line (a threshold on the lattice for discrete
  noise), and ``delta = A - e^eps B`` at the root, with a bracket-certified upper bound.
* ``"lattice sum"`` -- no added noise, or discrete noise with natural noise that is not log-concave:
  ``sum_o (P(o) - e^eps Q(o))_+`` over the exact pmf of ``X + Z`` (direct long-double convolution).
* ``"crossings"`` -- continuous noise with natural noise that is not log-concave (mixtures, U-shaped
  beta-binomials, arbitrary pmfs): every crossing of the loss with eps is located and the intervals
  are summed.  Both noises are totally positive kernels, so the number of crossings is at most the
  number of sign changes of ``w_{k-d} - e^eps w_k``; when that many are found the upper bound is
  certified, otherwise it falls back to a bound by post-processing.

Every path works on windows of the natural noise's pmf holding all values within ``e^-depth`` of its
mode; the mass left out enters the upper bound, and the depth grows until it is negligible.

Where delta is tiny (large eps sigma^2 / d) the optimal set lies far beyond the window: for the
Gaussian laws every crossing of the loss with eps lies within ``eps sigma^2 / d + d/2`` plus the
window's span (the loss is an average of the termwise ratios, :func:`_crossing_range`), and the root
search and the crossings' grid go there; the Laplace laws' loss is at most ``d / b``.  The tails' sums
then have logs of thousands or millions, and the rounding allowance of the bounds grows with them.
What holds (``log_delta_upper`` always; ``log_delta`` as stated):

* ``log_delta_upper >= log delta``, finite unless delta is exactly 0, at least ``-1.8e308``.
* ``log_delta <= log_delta_upper``.  Within 1e-9 of ``log delta`` where the window's slack is
  negligible and the sums' logs are small (``|log delta|`` up to about 1,000); beyond, its error
  grows with the logs' rounding (about ``1e-16 |log A| A / delta``, ``A`` the optimal set's mass
  under the shifted law) and stays within ``log_delta_upper - log_delta``, which holds that rounding:
  at e^-7815 (1,000 rows, sigma = 30, eps = 4) 2e-9 against a gap of 6e-8, at e^-1.1e6 (eps = 50)
  8e-6 against 1e-4 (measured against the counting kernel and a 50-digit oracle).
* Where the windows cannot resolve delta -- the deepest (``e^-DEPTH_MAX``) leaves out more than
  delta of a natural noise wider than that around its mode, or on the lattice-sum path, whose windows
  trim the added noise too, about ``e^-2000`` -- or ``|log delta| > 5e11``, ``log_delta`` is reported
  equal to the bound (pessimistic; the closed-form caps of :meth:`NoisyQuery._cap` keep it near the
  added noise's own delta: e^-7212 for 1e4 rows, sigma = 30, eps = 4, where delta is e^-13243).
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Sequence

import numpy as np
import numpy.typing as npt

from . import _kernels
from ._curve import PrivacyCurve
from ._logmath import log1mexp
from ._search import log_target, smallest_feasible_near
from .baselines import analytic_gaussian_epsilon, analytic_gaussian_sigma
from ._typing import FloatArray
from ._validate import integer, real, real_array, sequence
from .noise import (LD, MIN_SCALE, AddedNoise, Binomial, DiscreteGaussian, DiscreteLaplace, Gaussian,
                    Laplace, NaturalNoise, NoNoise, Window, _Linear)

__all__ = ["NoisyQuery", "PATHS"]

#: The computation paths (see the module docstring).
PATHS = ("counting kernel", "threshold", "lattice sum", "crossings")

DEPTH_START = 64.0     # windows first hold every value within e^-64 of the mode ...
DEPTH_MAX = 2048.0     # ... and deepen (doubling) while the mass they leave out matters
MAX_SENSITIVITY = 10_000
MAX_GRID = 20_000      # most grid points of the crossings search (coarser grids certify less, never wrongly)
UNIMODAL_MIN = 20_000  # log-concave windows wider than this are summed around each sum's peak only
CELL_BUDGET = 20_000   # most cell bounds the crossings search evaluates to certify a negative region
CONVOLUTION_BUDGET = 3e9   # most multiply-adds of a lattice-sum convolution
_LOG_TINY_RELATIVE = math.log(1e-11)   # the window's slack is negligible below this fraction of delta
_LOG_TIGHT = 1e-3      # an upper bound within this (in log) of the estimate: the noiseless cap, >= delta, cannot help
_ROUNDING = 1e-14      # relative rounding allowance of one tail sum (logs from double-precision pieces)
_EPS_SEARCH_MAX = 1e4  # the largest eps epsilon() searches; beyond it the answer is inf


def _lse(t: np.ndarray) -> float:
    """log sum exp, -inf for an empty or all -inf input."""
    if t.size == 0:
        return -math.inf
    m = t.max()
    if m == -np.inf:
        return -math.inf
    return float(m + np.log(np.exp(t - m).sum()))


def _log_sub(a: float, b: float) -> float:
    """log(e^a - e^b), -inf when b >= a."""
    return a + float(log1mexp(b - a)) if b < a else -math.inf


def _crossing_range(noise: AddedNoise, k_lo: float, k_hi: float, d: int, eps: float) -> tuple[float, float] | None:
    """An interval holding every output o at which L(o) = log p_d(o) / p_0(o) can equal eps (d > 0, X
    supported on [k_lo, k_hi]); (inf, -inf) when L <= eps everywhere (then delta_d = 0 exactly); None
    for a law not listed here.

    p_d(o) / p_0(o) is the average of the termwise ratios r_k(o) = f(o - d - k) / f(o - k) with the
    weights w_k f(o - k), so L lies between the smallest and the largest log r_k(o):
    Gaussian (and the discrete Gaussian, same exponent): log r_k(o) = (2 d (o - k) - d^2) / (2 sigma^2),
    decreasing in k, so L < eps left of k_lo + d/2 + eps sigma^2 / d and L > eps right of
    k_hi + d/2 + eps sigma^2 / d -- a range the width of the window, however far out (at large eps or
    sigma it lies far beyond the window: eps = 4, sigma = 30 puts it 3,600 beyond a binomial of 1,000
    rows).  Laplace (discrete Laplace, b = t): log r_k = -d/b for o <= k and d/b for o >= k + d, so L
    is at most d/b (no crossing when eps >= d/b, compared exactly) and crosses in [k_lo, k_hi + d].
    The ends are widened by a relative 1e-9 (+1): they are formed in floating point."""
    if isinstance(noise, (Gaussian, DiscreteGaussian)):
        c = d / 2 + eps * noise.sigma * noise.sigma / d
        if not math.isfinite(c):     # beyond the doubles (eps ~ 1e300): as far as they go
            return sys.float_info.max, sys.float_info.max
        lo, hi = k_lo + c, k_hi + c
    elif isinstance(noise, (Laplace, DiscreteLaplace)):
        if Fraction(eps) * Fraction(noise.scale) >= d:
            return math.inf, -math.inf
        lo, hi = k_lo, k_hi + d
    else:
        return None
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    return lo - 1e-9 * abs(lo) - 1.0, hi + 1e-9 * abs(hi) + 1.0


def _log_expm1(x: float) -> float:
    """log(e^x - 1) for x > 0, bounded above by x where e^x overflows."""
    return math.log(math.expm1(x)) if x < 30 else x


def _dg_log_sf(noise: DiscreteGaussian, x: np.ndarray) -> np.ndarray:
    """log P(Z > x) for the discrete Gaussian, exact at the end of its tail table and beyond too.

    Beyond the table (x >= top = sigma sqrt(3000) + 2, the tail below e^-1500) DiscreteGaussian.log_sf
    gives the geometric bound pmf(x + 1) / (1 - r), r = pmf(x + 2) / pmf(x + 1), above the tail by a
    relative 4e-5 at the table's edge for sigma = 30, 3e-4 for sigma = 300; and the table's own last
    entries sum the pmf only up to top + 1, below the tail by up to 1.2 in log at x = top - 1 for
    sigma = 300 (5.2 for sigma = 2e4: the terms beyond top + 1 are left out).  A threshold's delta
    A - e^eps B is a difference of two such tails: it was 4e-4 above the truth in log, its bound with
    it (e^-1567: 70 rows, sigma = 30, eps = 1.85; now 4e-10).  Here, wherever the terms
    beyond top + 1 are not below e^-45 of the tail (x >= top - 45 sigma^2 / (top + 2)) and beyond:
    pmf(m) sum_{j < J} e^{-(2 m j + j^2) / (2 sigma^2)}, m = x + 1, with J terms until the rest -- at
    most the J-th over 1 - its ratio to the next, added -- is below e^-40 of the sum (J is about
    40 sigma^2 / m: 0.8 sigma near the table's end, 40 far beyond it).  Against 40-digit sums: within
    1e-13 in log (of logs -1500 and below) for sigma = 3 ... 2e4."""
    out = np.array(noise._log_sf(x), dtype=float)
    xi = np.asarray(x).astype(np.int64)      # (as log_sf: the lattice points)
    top = noise._tail_table().size - 1
    far = xi >= top - int(math.ceil(45.0 * noise.sigma * noise.sigma / (top + 2)))
    if not np.any(far):
        return out
    u, inv = np.unique(xi[far] + 1, return_inverse=True)
    s2 = 2.0 * noise.sigma * noise.sigma
    vals = np.empty(u.size)
    i = 0
    while i < u.size:     # ascending m: the first of each chunk needs the most terms
        a = (2.0 * float(u[i]) + 1.0) / s2     # -log of the first ratio, the largest
        J = int(math.ceil((40.0 - math.log(-math.expm1(-a))) / a)) + 1
        rows = max(1, int(4e6 // J))
        m = u[i:i + rows].astype(float)[:, None]
        j = np.arange(J, dtype=float)[None, :]
        total = np.exp(-(2.0 * m * j + j * j) / s2).sum(axis=1)
        m1 = m[:, 0]
        rest = np.exp(-(2.0 * m1 * J + J * J) / s2) / -np.expm1(-(2.0 * m1 + 2.0 * J + 1.0) / s2)
        vals[i:i + rows] = noise._log_density(m1) + np.log(total + rest)
        i += rows
    out[far] = vals[inv.ravel()]
    return out


@dataclass(frozen=True)
class _Result:
    log_delta: float
    log_upper: float


def _moments(k: FloatArray, log_w: FloatArray) -> tuple[float, float]:
    """Mean and variance of the (unnormalised) weights e^log_w at the points k."""
    p = np.exp(log_w - log_w.max())
    mean = float(p.dot(k) / p.sum())
    return mean, float(p.dot((k - mean) ** 2) / p.sum())


class _Engine:
    """delta(eps) for one natural-noise window and one added noise."""

    def __init__(self, w: Window, noise: AddedNoise, depth: float = DEPTH_START):
        # Sums run in double precision: every term's log is formed once (relative error ~1e-16 of its
        # size, a few hundred at most), so the losses carry ~1e-13 and the tails ~1e-14 -- inside the
        # allowances below, and far inside the 1e-9 the tests ask of delta.
        self.w, self.noise = w, noise
        self.k = (w.offset + np.arange(w.size)).astype(float)
        self.lw = np.asarray(w.log_pmf, dtype=float)
        self.mean, self.var = _moments(self.k, self.lw)
        self.err = 4e-16 * (1.0 + float(np.max(np.abs(self.lw[np.isfinite(self.lw)]), initial=0.0)))
        support = np.flatnonzero(np.isfinite(self.lw))     # the window's extreme support points
        self.k_lo, self.k_hi = (float(self.k[support[0]]), float(self.k[support[-1]])) if support.size else (0.0, 0.0)
        # the density at a point takes only the terms within the noise's reach when they dominate:
        # every other term is below e^floor (w_k <= 1 times the density beyond the reach)
        self.reach = noise._reach(depth + 30)
        self.floor_depth = depth + 30
        self.floor = float(noise._log_density(np.zeros(1))[0]) - self.floor_depth
        self.floor_sf = float(noise._log_sf(np.array([self.reach]))[0])   # P(Z > reach) = P(Z < -reach)
        # the tails' sums take the discrete Gaussian's tail exactly beyond its table (_dg_log_sf)
        self.log_sf: Callable[[np.ndarray], np.ndarray] = (
            (lambda x: _dg_log_sf(noise, x)) if isinstance(noise, DiscreteGaussian) else noise._log_sf)
        # wide log-concave windows: every sum below has log-concave terms in k (w and the noise's
        # density and sf are log-concave), so it is summed around its peak only
        self.unimodal = w.log_concave and w.size > UNIMODAL_MIN
        if self.unimodal:
            self.samples = np.unique(np.linspace(0, w.size - 1, 1024).astype(np.int64))
        # a noise narrow against the window: a density is the sum over the reach around its point (one
        # short sum, before the unimodal search); so is a tail, with P(X >= k) beyond the reach from
        # suffix sums (a pass over the window, so only where the unimodal search does not take tails)
        self.local = 2 * self.reach + 1 < self.k.size / 4
        if self.local and not self.unimodal:   # log P(X >= k_i), for the terms of a tail where the noise's sf is ~1
            self.suffix = np.logaddexp.accumulate(self.lw[::-1])[::-1]

    def _unimodal_lse(self, term: Callable[[np.ndarray], np.ndarray]) -> float:
        """log sum_i e^{t_i} for a log-concave sequence t_i = term(i): located on a coarse sample, the
        peak and the range of terms within e^-80 of it are refined between neighbouring samples; every
        term outside is smaller (there are fewer than MAX_WINDOW of them: a relative e^-63 at most)."""
        n, samples = self.k.size, self.samples
        ts = term(samples)
        j = int(np.argmax(ts))
        if ts[j] == -np.inf:
            return -math.inf
        # a unimodal sequence peaks between the samples next to its best sample
        a, b = int(samples[max(j - 1, 0)]), int(samples[min(j + 1, samples.size - 1)])
        top = float(term(np.arange(a, b + 1)).max())
        low = ts < top - 80
        below_left = np.nonzero(low[:j])[0]
        below_right = np.nonzero(low[j + 1:])[0]
        i0, i1 = 0, n - 1
        if below_left.size:      # the first significant index lies after the last low sample on the left
            lo = int(samples[below_left[-1]])
            hi = int(samples[below_left[-1] + 1])
            seg = np.arange(lo, hi + 1)
            i0 = int(seg[np.argmax(term(seg) >= top - 80)])
        if below_right.size:     # the last significant index lies before the first low sample on the right
            k = j + 1 + int(below_right[0])
            lo, hi = int(samples[k - 1]), int(samples[k])
            seg = np.arange(lo, hi + 1)
            ok = np.nonzero(term(seg) >= top - 80)[0]
            i1 = int(seg[ok[-1]]) if ok.size else lo
        return _lse(term(np.arange(i0, i1 + 1)))

    def _slice(self, c: float, reach: float) -> tuple[int, int]:
        """The indices of the support values within ``reach`` of c."""
        n = self.k.size
        return (max(0, int(math.floor(c - reach - self.k[0]))),
                min(n, int(math.ceil(c + reach - self.k[0])) + 1))

    def _local_log_p(self, c: float) -> float:
        """log sum_k w_k f(c - k) over the noise's reach around c, or nan when the terms beyond it
        (each f <= e^floor, their w summing to <= 1) are not below e^-50 of the sum.  In the natural
        noise's far tail the sum is small against that floor: the reach is widened once, to where f
        is e^-50 below the first sum (a few more terms: the noise decays fast)."""
        i0, i1 = self._slice(c, self.reach)
        if i1 <= i0:
            return math.nan
        local = float(_lse(self.lw[i0:i1] + self.noise._log_density(c - self.k[i0:i1])))
        if local - self.floor > 50:
            return local
        if local == -math.inf:
            return math.nan
        depth = (self.floor + self.floor_depth) - (local - 50)     # f(reach') = f(0) e^-depth = e^{local - 50}
        reach = self.noise._reach(depth)
        if not 2 * reach + 1 < self.k.size / 4:
            return math.nan
        i0, i1 = self._slice(c, reach)
        return float(_lse(self.lw[i0:i1] + self.noise._log_density(c - self.k[i0:i1])))

    # -- the output densities
    def log_p(self, o: float, shift: int) -> float:
        """log of the density (pmf) of ``shift + X + Z`` at ``o``."""
        c = o - shift
        if self.local:
            local = self._local_log_p(c)
            if not math.isnan(local):
                return local
        if self.unimodal:
            return self._unimodal_lse(lambda i: self.lw[i] + self.noise._log_density(c - self.k[i]))
        return float(_lse(self.lw + self.noise._log_density(c - self.k)))

    def loss(self, o: float, d: int) -> tuple[float, float]:
        """(L(o), its rounding bound) for L = log p_d / p_0."""
        a, b = self.log_p(o, d), self.log_p(o, 0)
        if a == -math.inf and b == -math.inf:
            return math.nan, math.inf
        return a - b, self.err + 1e-15 * (abs(a) + abs(b))

    def log_rounding(self, la: float, lb: float, eps: float) -> float:
        """log of the rounding allowance of A - e^eps B for two sums with logs la, lb: rho (A + e^eps B).

        A term's log (the log-pmf value, whose error self.err covers, plus the noise's log tail) is formed
        in double precision with an absolute error of a few 1e-16 of its size, and every term that
        matters has |log| <= |log of its sum| + 60 (the others are e^-40 below it, fewer than e^20 of
        them), so a sum carries a relative error self.err + 1e-15 (|log sum| + 60) (twice a 5e-16 per
        unit of log) besides the summation's _ROUNDING.  At small delta the logs are large -- -7,800
        at eps = 4 for a binomial of 1,000 rows and sigma = 30, -1e8 at eps = 50 and sigma = 300 -- and
        the flat 1e-14 this was under-stated the rounding, amplified by A / H (e^8.2 for the former,
        whose estimate is 2e-9 off in log): the bound was below delta by 1.3e-10 in log at e^-115243
        (70 rows, sigma = 30, eps = 16) and by 3e-11 at e^-461 (5 points, sigma = 30, eps = 1)."""
        rho = _ROUNDING + self.err + 1e-15 * (max(abs(la), abs(lb)) + 60.0)
        return math.log(rho) + float(np.logaddexp(la, eps + lb))

    def log_tail(self, o: float, shift: int) -> float:
        """log P(shift + X + Z > o)."""
        c = o - shift
        if self.unimodal:
            return self._unimodal_lse(lambda i: self.lw[i] + self.log_sf(c - self.k[i]))
        if self.local:   # (with the suffix sums)
            # support values above the reach have sf(c - k) >= 1 - P(Z > reach): their mass P(X >= k);
            # those below have sf(c - k) <= P(Z > reach): left out, both relative to e^floor_sf
            # (in X's far tail the total is small against that floor: the reach is widened once, by
            # as many e-folds as it fell short and a few more, and the floor re-evaluated there)
            reach, floor_sf = self.reach, self.floor_sf
            for attempt in range(2):
                i0, i1 = self._slice(c, reach)
                local = float(_lse(self.lw[i0:i1] + self.log_sf(c - self.k[i0:i1]))) if i1 > i0 else -math.inf
                above = float(self.suffix[i1]) if i1 < self.k.size else -math.inf
                total = float(np.logaddexp(local, above))
                if total - floor_sf > 50:
                    return total
                if total == -math.inf or attempt:
                    break
                reach = self.noise._reach(self.floor_depth + (floor_sf - (total - 50)) + 8)
                if not 2 * reach + 1 < self.k.size / 4:
                    break
                floor_sf = float(self.noise._log_sf(np.array([reach]))[0])
        return float(_lse(self.lw + self.log_sf(c - self.k)))

    def log_interval(self, lo: float, hi: float, shift: int) -> float:
        """log P(lo < shift + X + Z <= hi) (lo may be -inf, hi +inf)."""
        if hi == math.inf:
            return self.log_tail(lo, shift)
        x2 = hi - shift - self.k
        if lo == -math.inf:
            return float(_lse(self.lw + self.noise._log_cdf(x2)))
        x1 = lo - shift - self.k
        s1, s2 = self.noise._log_sf(x1), self.noise._log_sf(x2)
        c1, c2 = self.noise._log_cdf(x1), self.noise._log_cdf(x2)
        with np.errstate(divide="ignore", invalid="ignore"):
            upper = s1 + log1mexp(s2 - s1)      # sf(x1) - sf(x2), upper tail
            lower = c2 + log1mexp(c1 - c2)      # cdf(x2) - cdf(x1), lower tail
            middle = np.log1p(-(np.exp(s2) + np.exp(c1)))
        mass = np.where(x1 >= 0, upper, np.where(x2 <= 0, lower, middle))
        return float(_lse(self.lw + mass))

    # -- the paths
    def lattice_sum(self, d: int, eps: float) -> _Result:
        """sum_o (P(o) - e^eps Q(o))_+ with P(o) = Y(o - d), Q = Y, Y the window's pmf (no added noise)."""
        lw = self.lw
        pad = np.full(abs(d), -np.inf)
        lp = np.concatenate([pad, lw]) if d > 0 else np.concatenate([lw, pad])
        lq = np.concatenate([lw, pad]) if d > 0 else np.concatenate([pad, lw])
        with np.errstate(invalid="ignore"):
            diff = lp - lq                                     # inf where Q = 0 < P; nan where both 0
        e = self.err + 1e-15 * np.abs(np.where(np.isfinite(lp), lp, 0))
        keep = diff > eps - e
        if not np.any(keep):
            return _Result(-math.inf, -math.inf)
        est_terms = np.where(diff[keep] > eps, lp[keep] + log1mexp(eps - diff[keep]), -np.inf)
        up_terms = lp[keep] + e[keep] + log1mexp(eps - diff[keep] - e[keep])
        return _Result(float(_lse(est_terms)), float(_lse(up_terms)) + 1e-15)

    def threshold(self, d: int, eps: float) -> _Result:
        """Log-concave X and noise, d > 0: the loss increases in the output; one root o* of L = eps."""
        noise, lattice = self.noise, self.noise.lattice
        # start at the Gaussian approximation of the root (X + Z normal: L is linear with slope
        # d / variance), with steps of a tenth of the spread: a wide natural noise (a beta-binomial of
        # 1e6 rows has sd 2e5) would otherwise take dozens of doublings from steps of the noise's scale
        # The root lies in _crossing_range (for the four laws): the start is clamped into it, and the
        # bracket's search may give up only beyond it.  (It once gave up a fixed distance from the start,
        # reach(DEPTH_MAX) + the window, and returned delta = 0: but a Gaussian's root lies eps sigma^2 / d
        # beyond the window -- 3,600 at eps = 4, sigma = 30 -- where delta was e^-7815, reported -inf.)
        span = _crossing_range(noise, self.k_lo, self.k_hi, d, eps)
        if span is not None and span[0] > span[1]:
            return _Result(-math.inf, -math.inf)     # L <= d/b <= eps everywhere: delta_d = 0 exactly
        extreme = self._beyond_doubles(span, d) if span is not None else None
        if extreme is not None:
            return extreme
        var = self.var + noise.scale * noise.scale      # inf for a huge scale: then the centre below
        step = max(noise.scale, 1.0, 0.1 * math.sqrt(self.var))
        o = self.mean + d / 2 + eps * var / d
        if span is not None and math.isfinite(o):
            o = min(max(o, span[0]), span[1])
        elif not abs(o - self.mean) <= self.k[-1] - self.k[0] + noise._reach(DEPTH_START):
            o = self.mean + d / 2      # far outside the window (tiny d / variance): start at the centre
        if lattice:
            o = math.floor(o)
        # beyond `limit` the loss exceeds eps (a law of _crossing_range) or should have (another law);
        # a few more doublings allow for the loss's rounding there (a Gaussian's loss grows linearly)
        limit = span[1] if span is not None else o + noise._reach(DEPTH_MAX) + step + self.w.size + d

        def f(x: float) -> tuple[float, float]:
            val, err = self.loss(x, d)
            if math.isnan(val):     # both densities vanish (lattice noise far out): side by position
                centre = float(self.k[0] + self.k[-1]) / 2 + d / 2
                return (math.inf if x > centre else -math.inf), 0.0
            return val - eps, err

        # a bracket lo < hi with f(lo) <= 0 < f(hi), by steps that double outwards from the mean
        if f(o)[0] > 0:
            hi, lo = o, o - step
            while f(lo)[0] > 0:       # L -> -d/scale or -inf on the left: this ends
                hi, step = lo, 2 * step
                lo = hi - step
        else:
            lo, hi = o, o + step
            beyond = 0
            while f(hi)[0] <= 0:
                if hi > limit:
                    beyond += 1
                    if beyond > 64 or not math.isfinite(hi):
                        # a Laplace loss flat at d/b beyond the window, within its rounding of eps; or a
                        # law not listed: no certified value here but the law's ratio bound or the caps
                        return _Result(-math.inf, self._log_ratio_cap(d, eps))
                lo, step = hi, 2 * step
                hi = lo + step
        if lattice:
            lo, hi = math.floor(lo), math.ceil(hi)
            while hi - lo > 1:      # o* = the smallest integer with L > eps
                mid = (lo + hi) // 2
                if f(mid)[0] > 0:
                    hi = mid
                else:
                    lo = mid
            # Certified: o_lo, the largest point found with L - eps below its rounding, and o_hi, the
            # smallest above it, so the optimal threshold t* (the first integer with L > eps) lies in
            # (o_lo, o_hi]; each candidate's value H(t) = A(t-1) - e^eps B(t-1) is computed within the
            # rounding of the tails at o_lo (the largest), so H <= max over candidates + that rounding.
            # (This once took the candidates hi - 1 .. hi + 1 but the rounding of the tails at hi - 1,
            # which does not cover H(hi - 1): where L(hi - 1) = eps within the loss's rounding and
            # H(hi - 1) is a relative 3e-12 of A (so its A - e^eps B is lost in double precision), the
            # bound was e^4.5 below delta -- a binomial of 200 rows, sensitivity 2, sigma = 30, eps = 50,
            # where eps sigma^2 / d is an integer.)
            o_lo, o_hi = self._certified_side(f, lo, -1), self._certified_side(f, hi, 1)
            est = self._threshold_value(hi - 1, d, eps)
            if o_lo is None or o_hi is None:     # the loss's rounding never clears
                return _Result(est, max(est, self._log_ratio_cap(d, eps)))
            if o_hi - o_lo <= 8:
                core = max([est] + [self._threshold_value(t - 1, d, eps) for t in range(o_lo + 1, o_hi + 1) if t != hi])
            else:      # first order: A decreases and B too as the threshold rises
                core = max(est, _log_sub(self.log_tail(o_lo, d), eps + self.log_tail(o_hi - 1, 0)))
            rounding = self.log_rounding(self.log_tail(o_lo, d), self.log_tail(o_lo, 0), eps)
            return _Result(est, float(np.logaddexp(core, rounding)))
        # continuous: regula falsi (Illinois) safeguarded by bisection, then certified signs
        f_lo, _ = f(lo)
        f_hi, err = f(hi)       # err: the rounding of the loss at the last point evaluated
        side = 0
        root = math.nan
        for _ in range(200):
            width = hi - lo
            if width <= 1e-13 * max(abs(lo), abs(hi), noise.scale):
                break
            x = hi - f_hi * (hi - lo) / (f_hi - f_lo) if math.isfinite(f_hi - f_lo) and f_hi != f_lo else 0.5 * (lo + hi)
            # bisect when the secant cannot be trusted: outside the bracket, two steps on one side, or,
            # while neither end is close, ends whose losses differ by orders of magnitude (the loss is
            # far from linear there, e.g. flat over a wide natural noise and steep at its support's edge)
            small = min(abs(f_lo), abs(f_hi))
            lopsided = small > 1e-6 * max(1.0, eps) and max(abs(f_lo), abs(f_hi)) > 1e3 * small
            if not (lo < x < hi) or side > 1 or lopsided:
                x, side = 0.5 * (lo + hi), 0
            fx, err = f(x)
            if abs(fx) <= err:    # at the rounding floor of the loss: no iterate can do better
                root = x
                break
            if fx > 0:
                hi, f_hi = x, fx
                if side == -1:
                    f_lo /= 2
                side = -1 if side >= 0 else side - 1
            else:
                lo, f_lo = x, fx
                if side == 1:
                    f_hi /= 2
                side = 1 if side <= 0 else side + 1
        if math.isnan(root):
            root = 0.5 * (lo + hi)
        la, lb = self.log_tail(root, d), self.log_tail(root, 0)
        est = _log_sub(la, eps + lb)
        # certified: widen until both signs are beyond rounding, then A(lo) - e^eps B(hi) >= H; start
        # where the secant slope says the rounding of the loss (as at the last point, next to the
        # root) is cleared
        slope = (f_hi - f_lo) / (hi - lo) if hi > lo else math.nan
        clear = 4 * err / slope if math.isfinite(slope) and slope > 0 else 0.0
        h = max(clear if clear > 0 else hi - lo, 1e-15 * max(abs(root), noise.scale))
        certified = False
        for _ in range(60):
            (fl, el), (fh, eh) = f(root - h), f(root + h)
            if fl < -el and fh > eh:
                certified = True
                break
            h *= 4
        if not certified:     # the signs never cleared the rounding: the caps (post-processing) bound delta
            return _Result(est, max(est, self._log_ratio_cap(d, eps)))
        la_h = self.log_tail(root - h, d)
        first_order = _log_sub(la_h, eps + self.log_tail(root + h, 0))
        rounding = self.log_rounding(la_h, self.log_tail(root - h, 0), eps)    # (the largest tails used)
        # second order: the root o* lies in (root - h, root + h), and H(o*) - H(root) is the integral of
        # |g| = p_0 e^eps |e^{L - eps} - 1| between them, at most h sup p_0 e^eps expm1(dL) with dL the
        # largest |L - eps| at the ends (L is monotone), rounding included.  The first-order bound
        # A(root - h) - e^eps B(root + h) exceeds H by about 2 h p_d(o*), which against H is large
        # where delta is tiny: at eps = 4, sigma = 30 and a binomial of 1,000 rows A / H = e^8.2 and
        # the first-order bound was 1.7e-3 above delta in log, the second-order one is within 1e-13
        d_loss = max(fh + eh, el - fl)
        second_order = self._log_sup_density(root - h, root + h, 0) + eps + math.log(h) + _log_expm1(d_loss)
        upper = min(first_order, float(np.logaddexp(est, second_order)))
        upper = float(np.logaddexp(max(upper, est), rounding))
        return _Result(est, upper)

    def _certified_bracket(self, root: float, h: float, h_max: float, d: int, eps: float
                           ) -> tuple[tuple[float, float], float] | None:
        """((root - h', root + h'), dL) with L - eps of opposite signs beyond its rounding at the two ends
        (widened from h by fourfold steps up to h_max), dL the larger |L - eps| there plus its rounding;
        None when the signs never clear."""
        h = max(h, 1e-15 * max(abs(root), self.noise.scale))
        while h <= h_max:
            (v0, e0), (v1, e1) = self.loss(root - h, d), self.loss(root + h, d)
            f0, f1 = v0 - eps, v1 - eps
            if abs(f0) > e0 and abs(f1) > e1 and (f0 > 0) != (f1 > 0):
                return (root - h, root + h), max(abs(f0) + e0, abs(f1) + e1)
            h *= 4
        return None

    def _log_sup_density(self, x0: float, x1: float, shift: int) -> float:
        """log of an upper bound of the density of shift + X + Z on [x0, x1]: each term w_k f(x - shift - k)
        at its largest over the interval (the noise density is symmetric and unimodal)."""
        def term(i: np.ndarray) -> np.ndarray:
            t0, t1 = x0 - shift - self.k[i], x1 - shift - self.k[i]
            near = np.where((t0 <= 0) & (t1 >= 0), 0.0, np.minimum(np.abs(t0), np.abs(t1)))
            return self.lw[i] + self.noise._log_density(near)
        if self.unimodal:    # log-concave in k: w is, and so is the sup of a log-concave f over a shifted interval
            return self._unimodal_lse(term)
        return float(_lse(term(np.arange(self.k.size))))

    @staticmethod
    def _certified_side(f: Callable[[float], tuple[float, float]], o: int, direction: int) -> int | None:
        """From o, the first of o, o + direction, o + 2 direction, o + 4 direction, ... where L - eps
        is beyond its rounding on the side of direction (below for -1); None after 64 steps."""
        step = 0
        for _ in range(64):
            x = o + direction * step
            val, err = f(x)
            if direction * val > err:
                return x
            step = 2 * step if step else 1
        return None

    def _beyond_doubles(self, span: tuple[float, float], d: int) -> _Result | None:
        """For the Gaussian laws when delta is below e^-5e11: (b, b) with b a bound of log H_d in closed
        form, else None.  L < eps left of span[0], so H_d <= P(d + X + Z > span[0]) <= P(Z > x),
        x = span[0] - d - k_hi, and log P(Z > x) <= -x^2 / (2 sigma^2) (the Chernoff bound; for the
        discrete law sum_{z > x} e^{-z^2 / 2 sigma^2} <= e^{-x^2 / 2 sigma^2} / (1 - e^{-x / sigma^2}),
        over a normaliser >= 1, and x / sigma^2 > 50 here as sigma <= 2e4; the square is rounded
        up by a relative 1e-14 against its rounding).  There the sums cannot resolve delta: their logs are above
        5e11 in size, and carry an error of 1e-16 of that in each term (at eps = 1e300 their squares
        overflowed); the bound is reported as the estimate too (pessimistic), at least -1.8e308 (the
        counting kernel's convention where log delta is beyond the doubles)."""
        if not isinstance(self.noise, (Gaussian, DiscreteGaussian)):
            return None
        sigma = self.noise.sigma
        x = span[0] - d - self.k_hi
        if not x / sigma > 1e6:
            return None
        z = x / sigma
        b = max(-0.5 * z * z * (1 - 1e-14), -sys.float_info.max)    # (z * z: inf beyond the doubles, not an error)
        return _Result(b, b)

    def _log_ratio_cap(self, d: int, eps: float) -> float:
        """log of a bound on H_{e^eps}(P_d || P_0) from the noise's largest loss: for the Laplace laws
        p_d <= e^{d/b} p_0 termwise, so H <= sup_S P_d(S) (1 - e^{eps - d/b}) <= d/b - eps (compared
        exactly, rounded up); inf for the other laws (the caps of NoisyQuery apply).  It matters where
        eps is within the loss's rounding of d/b: the root cannot be certified there."""
        if not isinstance(self.noise, (Laplace, DiscreteLaplace)):
            return math.inf
        gap = Fraction(d) / Fraction(self.noise.scale) - Fraction(eps)
        return math.log(float(gap) * (1 + 1e-15)) if gap > 0 else -math.inf

    def _threshold_value(self, t: float, d: int, eps: float) -> float:
        return _log_sub(self.log_tail(t, d), eps + self.log_tail(t, 0))

    def _log_cell_bound(self, x0: float, x1: float, d: int, eps: float) -> float:
        """log of an upper bound of g = p_d - e^eps p_0 on [x0, x1] (-inf where g <= 0 throughout).

        The noise density is symmetric and unimodal, so on the cell each term of p_d is at most its
        value at the point nearest to its centre and each term of p_0 at least its value at the
        farthest point."""
        cd, c0 = d + self.k, self.k
        t0, t1 = x0 - cd, x1 - cd
        near = np.where((t0 <= 0) & (t1 >= 0), 0.0, np.minimum(np.abs(t0), np.abs(t1)))
        far = np.maximum(np.abs(x0 - c0), np.abs(x1 - c0))
        lp = _lse(self.lw + self.noise._log_density(near))
        lq = _lse(self.lw + self.noise._log_density(far))
        return _log_sub(float(lp), eps + float(lq))

    def _negative_region_slack(self, start: float, end: float, grid: np.ndarray, d: int, eps: float) -> list[float]:
        """Logs of bounds on the integral of g_+ over a region the search found negative: cells whose
        bound is positive are halved (up to 30 times, within a budget of cell evaluations); what
        remains positive is counted in full."""
        terms: list[float] = []
        if start == -math.inf:
            terms.append(self.log_interval(-math.inf, float(grid[0]), d))
            start = float(grid[0])
        if end == math.inf:
            terms.append(self.log_tail(float(grid[-1]), d))
            end = float(grid[-1])
        points = [start] + [float(x) for x in grid if start < x < end] + [end]
        stack = [(x0, x1, 0) for x0, x1 in zip(points[:-1], points[1:]) if x1 > x0]
        budget = CELL_BUDGET
        while stack:
            x0, x1, level = stack.pop()
            bound = self._log_cell_bound(x0, x1, d, eps)
            budget -= 1
            if bound == -math.inf:
                continue
            if level < 30 and budget > len(stack):
                mid = 0.5 * (x0 + x1)
                stack += [(x0, mid, level + 1), (mid, x1, level + 1)]
            else:
                terms.append(bound + math.log(x1 - x0))
        return terms

    def crossings(self, d: int, eps: float) -> tuple[_Result, bool]:
        """Continuous noise, any X, d > 0: locate every root of L = eps; (result, certified)."""
        lw, noise = self.lw, self.noise
        lp = np.concatenate([np.full(d, -np.inf), lw])   # w_{k-d} on the range of k
        lq = np.concatenate([lw, np.full(d, -np.inf)])
        with np.errstate(invalid="ignore"):
            sign = np.sign(np.where(np.isfinite(lp) | np.isfinite(lq), lp - (lq + eps), 0.0))
        nz = sign[sign != 0]
        changes = int(np.count_nonzero(nz[1:] != nz[:-1]))
        if isinstance(noise, Gaussian) and self.k_hi - self.k_lo <= 2 * noise.sigma:
            # at most one crossing: with theta = o / sigma^2, L = (2 d o - d^2) / (2 sigma^2) + psi(theta - d /
            # sigma^2) - psi(theta), psi the log-partition function of the law w_k e^{-k^2 / 2 sigma^2}
            # tilted by e^{theta k}, whose variance psi'' is at most (k_hi - k_lo)^2 / 4 (Popoviciu); so
            # dL/do >= d / sigma^2 (1 - (k_hi - k_lo)^2 / (4 sigma^2)) >= 0: L is monotone.  (The cells
            # below cannot certify far from the window, where the density varies by e^{distance h /
            # sigma^2} across a cell: 5 bimodal points at sigma = 30, eps = 1 fell back to the caps.)
            changes = min(changes, 1)
        reach = noise._reach(DEPTH_START + 10)
        a, b = float(self.k[0]) - reach, float(self.k[-1]) + d + reach
        h = noise.scale / 4
        # every crossing lies in _crossing_range; a Gaussian's lies eps sigma^2 / d beyond the window,
        # outside [a, b] once eps sigma / d > sqrt(148): there the grid covers that range instead (one
        # step beyond each end), and left of it L < eps is certified by the range itself (the grid over
        # [a, b] found no crossing and the estimate was -inf: 5 bimodal points at sigma = 3, eps = 8,
        # where delta is e^-293.1)
        span = _crossing_range(noise, self.k_lo, self.k_hi, d, eps)
        if span is not None and span[0] > span[1]:
            return _Result(-math.inf, -math.inf), True    # L <= d/b <= eps everywhere: delta_d = 0 exactly
        extreme = self._beyond_doubles(span, d) if span is not None else None
        if extreme is not None:
            return extreme, True
        left_certified = False
        if span is not None and not (a <= span[0] and span[1] <= b):
            left_certified = True
            a, b = span[0] - h, span[1] + h
        count = int((b - a) / h) + 2
        if count > MAX_GRID:
            count = MAX_GRID
        grid = np.linspace(a, b, count)

        def F(x: float) -> float:
            val, _ = self.loss(x, d)
            return val - eps

        values = np.array([F(x) for x in grid])
        finite = np.isfinite(values)
        grid, values = grid[finite], values[finite]
        roots: list[tuple[float, float]] = []
        slack: dict[tuple[float, float], float] = {}    # a certified bracket's second-order term (below)
        for i in np.nonzero(np.sign(values[1:]) * np.sign(values[:-1]) < 0)[0]:
            lo, hi, f_lo = float(grid[i]), float(grid[i + 1]), float(values[i])
            for _ in range(80):
                mid = 0.5 * (lo + hi)
                fm = F(mid)
                if (fm > 0) == (f_lo > 0):
                    lo, f_lo = mid, fm
                else:
                    hi = mid
                if hi - lo <= 1e-13 * max(abs(lo), noise.scale):
                    break
            bracket = self._certified_bracket(0.5 * (lo + hi), 0.5 * (hi - lo), 0.5 * h, d, eps)
            if bracket is not None:
                (lo, hi), d_loss = bracket
                # a region's end moved from the bracket's midpoint to the root changes its P - e^eps Q by
                # at most the bracket's width times sup |g| there, sup p_0 e^eps expm1(|L - eps|)
                slack[(lo, hi)] = (self._log_sup_density(lo, hi, 0) + eps + math.log(hi - lo)
                                   + _log_expm1(d_loss))
            roots.append((lo, hi))
        # the regions between consecutive roots alternate in sign, starting with the sign at the grid's left
        positive = bool(values[0] > 0) if values.size else False
        est_terms, up_terms = [], []
        bounds = [(-math.inf, -math.inf)] + roots + [(math.inf, math.inf)]
        for (a_lo, a_hi), (b_lo, b_hi) in zip(bounds[:-1], bounds[1:]):
            if positive:   # (a, b) holds L > eps: its P - e^eps Q; expanded for P, shrunk for Q bounds it above
                mid_a, mid_b = 0.5 * (a_lo + a_hi), 0.5 * (b_lo + b_hi)
                mid_a = -math.inf if math.isnan(mid_a) else mid_a
                mid_b = math.inf if math.isnan(mid_b) else mid_b
                la, lb = self.log_interval(mid_a, mid_b, d), self.log_interval(mid_a, mid_b, 0)
                est_terms.append(_log_sub(la, eps + lb))
                up = _log_sub(self.log_interval(a_lo, b_hi, d), eps + self.log_interval(a_hi, b_lo, 0))
                ends = [(a_lo, a_hi), (b_lo, b_hi)]
                if all(e in slack or math.isinf(e[0]) for e in ends):
                    # second order (the first-order form exceeds H by ~ the brackets' widths times the
                    # density, against H large where delta is tiny: as in threshold)
                    second = float(_lse(np.array([est_terms[-1]] + [slack[e] for e in ends if e in slack])))
                    up = min(up, second)
                up_terms.append(float(np.logaddexp(max(up, est_terms[-1]), self.log_rounding(la, lb, eps))))
            positive = not positive
        if len(roots) < changes and values.size:
            # fewer crossings than the kernel's variation-diminishing bound allows: certify that the
            # regions found negative hold no positive part (or bound it), cell by cell
            positive = bool(values[0] > 0)
            for (a_lo, a_hi), (b_lo, b_hi) in zip(bounds[:-1], bounds[1:]):
                if not positive:
                    start = float(grid[0]) if left_certified and a_hi == -math.inf else a_hi
                    up_terms += self._negative_region_slack(start, b_lo, grid, d, eps)
                positive = not positive
        est = float(_lse(np.array(est_terms))) if est_terms else -math.inf
        up = float(_lse(np.array(up_terms))) if up_terms else -math.inf
        if up > -math.inf:
            up += math.log1p(_ROUNDING)     # (the cell bounds' own rounding)
        return _Result(est, max(up, est)), True


class NoisyQuery(PrivacyCurve):
    """The privacy curve of a release whose unknown rows are natural noise.

    Parameters
    ----------
    natural : ppk.noise.NaturalNoise
        The law of ``X``, the total of the unknown rows other than the challenge row.
    added : ppk.noise.AddedNoise
        The noise the mechanism adds (``ppk.noise.NoNoise()`` for none).
    sensitivity : int
        Largest change of the query by one row: the challenge row shifts the output by an integer
        ``d`` with ``1 <= |d| <= sensitivity`` (1 for a count).
    shifts : sequence of int, optional
        Instead of ``sensitivity``: exactly the shifts ``|d|`` the challenge row can cause (e.g.
        ``(2,)`` for the difference of two bins of a histogram, where the row moves from one to the
        other).  delta is the maximum over these shifts, in both directions.

    Notes
    -----
    ``log_delta_upper`` is a certified upper bound of ``log delta`` however small delta is (finite
    unless delta is exactly 0); ``log_delta`` never exceeds it and is within 1e-9 of the truth down to
    ``|log delta|`` of about 1,000, beyond that within the gap between the two (the module's docstring
    says what holds where).

    Examples
    --------
    >>> from ppk import noise
    >>> q = NoisyQuery(natural=noise.Binomial(1000, 0.3), added=noise.DiscreteGaussian(sigma=2.0))
    >>> bool(q.delta(1.0) < q.delta(0.1))
    True
    """

    def __init__(self, *, natural: NaturalNoise, added: AddedNoise, sensitivity: int = 1,
                 shifts: Sequence[int] | None = None):
        if not isinstance(natural, NaturalNoise):
            raise TypeError(f"natural must be a law of ppk.noise (Binomial, PoissonBinomial, ...), got "
                            f"{type(natural).__name__}")
        if not isinstance(added, AddedNoise):
            raise TypeError(f"added must be a law of ppk.noise (Gaussian, Laplace, DiscreteGaussian, DiscreteLaplace, "
                            f"NoNoise), got {type(added).__name__}")
        self.natural, self.added = natural, added
        if shifts is None:
            self.sensitivity = integer("sensitivity", sensitivity, minimum=1, maximum=MAX_SENSITIVITY)
            self.shifts: tuple[int, ...] = tuple(range(1, self.sensitivity + 1))
        else:
            self.shifts = tuple(sorted(set(sequence(
                "shifts", shifts, lambda name, d: integer(name, d, minimum=1, maximum=MAX_SENSITIVITY)))))
            if not self.shifts:
                raise ValueError("shifts must name at least one shift")
            self.sensitivity = self.shifts[-1]
        if isinstance(added, Gaussian) and added.sigma < MIN_SCALE and not self._counting_kernel:
            # the counting kernel is exact at every sigma > 0; the other paths sum in double precision on
            # windows, where a smaller noise is none on integer data
            raise ValueError(f"sigma must be >= {MIN_SCALE:g} for this natural noise and sensitivity (a smaller "
                             f"noise is none on integer data: use NoNoise()), got {added.sigma!r}")
        self._windows: dict[float, Window] = {}
        self._variance: float | None = None     # of the natural noise's first window
        self._convolved: dict[float, Window] = {}
        self._engines: dict[tuple[int, bool], _Engine] = {}
        self._noiseless: NoisyQuery | None = None

    def __repr__(self) -> str:
        if self.shifts != tuple(range(1, self.sensitivity + 1)):
            return f"NoisyQuery(natural={self.natural!r}, added={self.added!r}, shifts={self.shifts})"
        return f"NoisyQuery(natural={self.natural!r}, added={self.added!r}, sensitivity={self.sensitivity})"

    # -- the calibration protocol (ppk.calibrate)
    @property
    def scale(self) -> float:
        """The added noise's scale (sigma for the Gaussian laws, b or t for the Laplace laws); 0 for none."""
        return 0.0 if isinstance(self.added, NoNoise) else float(self.added.scale)

    @property
    def scale_name(self) -> str:
        return "scale" if isinstance(self.added, (Laplace, DiscreteLaplace)) else "sigma"

    def with_scale(self, scale: float) -> "NoisyQuery":
        """The same natural noise and shifts with the added law at ``scale`` (no added noise at 0)."""
        if isinstance(self.added, NoNoise) and scale != 0:
            raise ValueError("this query adds no noise, so it has no law to scale: name one, e.g. "
                             "NoisyQuery(natural=..., added=noise.Gaussian(1.0))")
        added = NoNoise() if scale == 0 else self.added.with_scale(scale)
        return NoisyQuery(natural=self.natural, added=added, shifts=self.shifts)

    @property
    def has_natural_noise(self) -> bool:
        return not self.natural.constant

    @property
    def _rows_key(self) -> tuple[object, ...] | None:
        """The natural law: releases over one law of unknown rows share those rows as far as ppk can tell
        (whatever their shifts), so the accountant refuses to compose them as independent."""
        return ("NoisyQuery", repr(self.natural)) if self.has_natural_noise else None

    def without_natural_noise(self) -> "NoisyQuery":
        return NoisyQuery(natural=Binomial(0, 0.5), added=self.added, shifts=self.shifts)

    def dp_scale(self, *, eps: float, delta: float) -> float:
        """The least scale of the added law that is (eps, delta)-DP alone: the Gaussian's analytic sigma
        (Balle & Wang), the Laplace law's ``s / (eps - 2 log(1 - delta))`` (from its curve
        ``1 - e^((eps - s/b)/2)``); for the discrete laws searched on the law alone, from a scale doubled
        until private.  Sensitivity ``s`` is the largest shift."""
        from .calibration import search_scale
        eps = real("eps", eps, minimum=0.0, min_inclusive=False)
        delta = real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
        s = self.sensitivity
        if isinstance(self.added, NoNoise):
            raise ValueError("this query adds no noise, so it has no law to scale: name one, e.g. "
                             "NoisyQuery(natural=..., added=noise.Gaussian(1.0))")
        if isinstance(self.added, Gaussian):
            return analytic_gaussian_sigma(eps=eps, delta=delta, sensitivity=s, rtol=1e-12)
        if isinstance(self.added, Laplace):
            return s / (eps - 2.0 * math.log1p(-delta))
        alone = self.without_natural_noise()
        target = log_target(delta)

        def excess(scale: float) -> float:
            return max(alone.with_scale(scale)._log_delta_upper_at(eps) - target, -1e3)

        hi = s * (math.sqrt(2 * math.log(1.25 / delta)) + 1) / eps
        while excess(hi) > 0:
            hi *= 2
            if not hi < 1e15:
                raise ValueError(f"eps={eps!r} and delta={delta!r} need a noise scale beyond 1e15; raise eps or delta")
        return search_scale(excess, hi, f_zero=excess(0.0), width=lambda x: 1e-8 * x, grow=1e-12,
                            eps=eps, delta=delta).x

    @property
    def _counting_kernel(self) -> bool:
        """Binomial natural noise, Gaussian or no added noise, one shift of 1: the counting kernel's case."""
        return isinstance(self.natural, Binomial) and isinstance(self.added, (Gaussian, NoNoise)) and self.shifts == (1,)

    @property
    def path(self) -> str:
        """Which computation gives delta (one of :data:`PATHS`)."""
        if self._counting_kernel:
            return "counting kernel"
        if isinstance(self.added, NoNoise):
            return "lattice sum"
        if self.natural.log_concave or self._window(DEPTH_START).log_concave:
            # a law that is not log-concave can still be so on its window (a sum of many rows): the
            # threshold formula needs only the window's own monotone likelihood ratio
            return "threshold"
        return self._path_without_log_concavity()

    def _path_without_log_concavity(self) -> str:
        return "lattice sum" if self.added.lattice else "crossings"

    @property
    def _kernel_args(self) -> tuple[int, float, float]:
        """(N, p, sigma) of the counting kernel's law (sigma 0 for no added noise)."""
        assert isinstance(self.natural, Binomial), "only on the counting kernel's path"
        return self.natural.n, self.natural.p, self.added.sigma if isinstance(self.added, Gaussian) else 0.0

    # -- windows
    def _window(self, depth: float) -> Window:
        if depth not in self._windows:
            self._windows[depth] = self.natural.window(depth)
        return self._windows[depth]

    def _output_window(self, depth: float) -> Window:
        """The exact pmf of X + Z on a window (lattice noise), for the lattice sum."""
        if isinstance(self.added, NoNoise):
            return self._window(depth)
        if depth not in self._convolved:
            w = self._window(depth)
            noise = self.added
            reach = int(math.ceil(noise._reach(depth + 10)))
            if float(w.size) * (2 * reach + 1) > CONVOLUTION_BUDGET:
                raise ValueError(f"the exact pmf of the natural plus the added noise needs {w.size:,} x {2 * reach + 1:,} "
                                 "multiply-adds, too many: use a smaller added-noise scale or a log-concave "
                                 "natural noise (then the threshold path needs no convolution)")
            z = np.arange(-reach, reach + 1).astype(LD)
            zw = Window(-reach, np.asarray(noise._log_density(z), dtype=LD),
                        math.log(2) + float(noise._log_sf(np.array([float(reach)]))[0]), True)
            y = _Linear.of(w).convolve(_Linear.of(zw), depth + 10)
            self._convolved[depth] = y.window(False)
        return self._convolved[depth]

    # -- one eps
    def _evaluate(self, eps: float) -> _Result:
        path = self.path
        if path == "counting kernel":
            n, p, sigma = self._kernel_args
            curve = _kernels.counting_curve(n, p, sigma=sigma, eps=np.array([eps]))
            return _Result(float(curve.log_delta[0]), float(curve.log_delta_upper[0]))
        cap = self._cap(eps)
        if cap == -math.inf:     # delta = 0 already by post-processing (e.g. Laplace noise at eps >= s/scale)
            return _Result(-math.inf, -math.inf)
        depth, last_dropped = self._start_depth(eps, path), math.inf     # (logs)
        while True:
            w = self._window(depth)
            here = path
            if here == "threshold" and not (self.natural.log_concave or w.log_concave):
                here = self._path_without_log_concavity()   # this deeper window is not log-concave
            if here == "lattice sum":
                w = self._output_window(depth)
            res = self._evaluate_window(w, eps, here, depth)
            slack = w.log_dropped + float(np.logaddexp(0.0, eps))          # (1 + e^eps) D
            upper = float(np.logaddexp(res.log_upper, slack))
            negligible = slack <= res.log_delta + _LOG_TINY_RELATIVE or res.log_delta == -math.inf
            if negligible or depth >= DEPTH_MAX or w.log_dropped >= last_dropped - 0.7:
                break      # (the last: a deeper window leaves out no less -- the law's rounding floor)
            deeper = self._window(2 * depth)
            if (deeper.offset, deeper.size) == (w.offset, w.size) and not deeper.log_dropped < w.log_dropped:
                break      # the window already holds the whole support: a deeper one is the same
                # (not when it leaves out less: a mixture's window of 41 rows spans the support at
                # depth 64 but leaves out e^-77 of a component's tail, e^-inf at 128; the loop stopped
                # there and reported its bound, the Gaussian cap e^-77.0 for a delta of e^-84.1)
            last_dropped = w.log_dropped
            depth *= 2
        upper = min(upper, cap, 0.0)
        # reported: the estimate when the window's slack is negligible (then the bound need only be within
        # _LOG_TIGHT), else the bound itself (then it must be within the stated 1e-9 of the estimate)
        if not upper <= res.log_delta + (_LOG_TIGHT if negligible else 1e-9):
            # the bound is loose: the natural noise alone may bound delta better (post-processing);
            # it costs a lattice sum over the whole window, so only here
            upper = min(upper, self._noiseless_cap(eps))
        if not negligible:   # delta is below what the deepest window resolves: report the bound
            return _Result(upper, upper)
        return _Result(min(res.log_delta, upper), upper)

    def _start_depth(self, eps: float, path: str) -> float:
        """The first window's depth: on the threshold path, the rung of the doubling ladder
        DEPTH_START * 2^j just below the depth the slack would need if delta were that of a Gaussian of
        the same variance (noise variance taken as 2 scale^2, at least that of every added law here: a
        larger variance means a larger delta, a shallower start); else DEPTH_START.  Only a start:
        deepening continues from it until the slack is negligible.  (A shallow window's own estimate
        cannot guide it: its root sits at the window's edge.)"""
        first = self._window(DEPTH_START)
        if path != "threshold" or first.log_dropped == -math.inf or not self.added.scale < math.inf:
            return DEPTH_START      # (a window holding the whole support: no deeper one differs)
        if self._variance is None:
            lw = np.asarray(first.log_pmf, dtype=float)
            self._variance = _moments(np.arange(lw.size, dtype=float), lw)[1]
        sd = math.sqrt(self._variance + 2 * self.added.scale ** 2)
        if not sd > 0:
            return DEPTH_START
        log_delta = float(_kernels.gaussian_curve(sigma=sd, eps=eps, sensitivity=float(self.sensitivity)).log_delta)
        need = -log_delta - _LOG_TINY_RELATIVE
        depth = DEPTH_START
        while 2 * depth <= min(need, DEPTH_MAX):
            depth *= 2
        return depth

    def _engine(self, w: Window, mirrored: bool, depth: float) -> _Engine:
        key = (id(w), mirrored)      # windows are cached per depth, so their ids are stable
        if key not in self._engines:
            self._engines[key] = _Engine(w.mirrored() if mirrored else w, self.added, depth)
        return self._engines[key]

    def _evaluate_window(self, w: Window, eps: float, path: str, depth: float) -> _Result:
        best_est, best_up = -math.inf, -math.inf
        certified = True
        for d in self.shifts:
            for mirrored in (False, True):     # shift +d, and -d as +d on the mirror (the noise is symmetric)
                engine = self._engine(w, mirrored, depth)
                if path == "lattice sum":
                    r = engine.lattice_sum(d, eps)
                elif path == "threshold":
                    r = engine.threshold(d, eps)
                else:
                    r, ok = engine.crossings(d, eps)
                    certified = certified and ok
                best_est, best_up = max(best_est, r.log_delta), max(best_up, r.log_upper)
        if not certified:
            best_up = math.inf   # not all crossings certified: the caps below bound delta
        return _Result(best_est, best_up)

    def _cap(self, eps: float) -> float:
        """Upper bounds by post-processing, in closed form: the added noise alone (the natural noise alone,
        a lattice sum, is :meth:`_noiseless_cap`)."""
        caps = [0.0]
        s = float(self.sensitivity)
        if isinstance(self.added, Gaussian):
            caps.append(_kernels.gaussian_log_delta_upper(sigma=self.added.sigma, eps=eps, sensitivity=s))
        elif isinstance(self.added, (Laplace, DiscreteLaplace)):
            # s/b - eps compared exactly (delta = 0 only when it is <= 0: in floats eps = 1/3 passed for
            # s/b = 1/3.0, which is above it) and rounded up; Laplace: the law's own delta
            # 1 - e^{(eps - s/b)/2}; the discrete law: p_d <= e^{d/t} p_0 gives 1 - e^{eps - s/t}
            # (it had no cap: its delta at eps >= s/t, exactly 0, was the natural noise's alone)
            gap = Fraction(self.sensitivity) / Fraction(self.added.scale) - Fraction(eps)
            if gap <= 0:
                return -math.inf
            g = float(gap) * (1 + 1e-15)
            caps.append(float(log1mexp(-g / 2 if isinstance(self.added, Laplace) else -g)))
        elif isinstance(self.added, DiscreteGaussian):
            # the law alone: its loss (2 d o - d^2) / (2 sigma^2) exceeds eps for o > d/2 + eps sigma^2 / d,
            # so H(d + Z || Z) <= P(Z > eps sigma^2 / d - d/2), largest at d = s (rounded down to the
            # lattice, after a margin for the rounding of x).  Where the lattice sum's windows cannot
            # reach the crossings it was the only bound but the natural noise's: e^-2058 for a delta of
            # e^-7214 (a U-shaped beta-binomial of 40 rows, sigma = 30, eps = 4), now e^-7204; and e^-2.4
            # at eps = 1e6
            sigma = self.added.sigma
            t = eps * sigma * sigma / s
            if not t / sigma <= 2e6:     # the Chernoff bound, as in _Engine._beyond_doubles
                z = (t - s / 2 - 1) / sigma
                caps.append(max(-0.5 * z * z * (1 - 1e-14), -sys.float_info.max))
            else:
                x = math.floor(t - s / 2 - 1e-12 * t - 1e-9)
                caps.append(float(_dg_log_sf(self.added, np.array([float(x)]))[0]))
        return min(caps)

    def _noiseless_cap(self, eps: float) -> float:
        """The natural noise alone: adding noise is post-processing, so its delta bounds ours."""
        if isinstance(self.added, NoNoise):
            return 0.0
        if self._noiseless is None:
            self._noiseless = NoisyQuery(natural=self.natural, added=NoNoise(), shifts=self.shifts)
            self._noiseless._windows = self._windows
        return self._noiseless._evaluate(eps).log_upper

    def _curve(self, eps: npt.ArrayLike) -> tuple[FloatArray, FloatArray, bool]:
        flat, scalar = real_array("eps", eps, minimum=0.0)
        shape = np.shape(eps)
        if self._counting_kernel:   # every eps in one C++ call: both cores, roots started from their neighbours
            n, p, sigma = self._kernel_args
            curve = _kernels.counting_curve(n, p, sigma=sigma, eps=flat)
            return curve.log_delta.reshape(shape), curve.log_delta_upper.reshape(shape), scalar
        res = [self._evaluate(float(e)) for e in flat]
        return (np.array([r.log_delta for r in res]).reshape(shape),
                np.array([r.log_upper for r in res]).reshape(shape), scalar)

    def epsilon(self, delta: float, *, rtol: float = 1e-10) -> float:
        """Smallest eps with ``delta_upper(eps) <= delta`` (rounded up; ``inf`` if no eps up to 1e4).

        The search certifies with :meth:`delta_upper`.  On the counting kernel's path it starts where one
        Gaussian of the total variance (natural plus added) reaches ``delta`` (docs/decisions.md, "The
        Gaussian approximation is not a certificate"); elsewhere at eps = 1.
        """
        target = log_target(real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False))
        rtol = real("rtol", rtol, minimum=0.0, min_inclusive=False)
        root_target = math.sqrt(-target)
        cache: dict[float, float] = {}

        def excess(e: float) -> float:
            # the sign of log delta_upper(e) - target, as a difference of square roots: -log delta grows like
            # eps^2 var / 2, so its root is nearly linear in eps (delta = 0 counts as e^-1e300)
            if e not in cache:
                log_upper = max(self._evaluate(e).log_upper, -1e300)
                cache[e] = root_target - math.sqrt(-min(log_upper, 0.0))
            return cache[e]

        guess, step = 1.0, 1.0
        if self._counting_kernel:
            n, p, sigma = self._kernel_args
            s_eff = math.sqrt(sigma ** 2 + n * p * (1.0 - p))
            if s_eff > 0:
                guess = min(analytic_gaussian_epsilon(sigma=s_eff, delta=delta, rtol=1e-13), _EPS_SEARCH_MAX)
                step = 0.25 * guess + 1e-12
                if guess > 0:   # the model's distance to the root, from its slope at the guess
                    h = 1e-6 * guess

                    def model(e: float) -> float:
                        return root_target - math.sqrt(-min(_kernels.gaussian_log_delta_upper(sigma=s_eff, eps=e), 0.0))

                    slope = (model(guess + h) - model(guess - h)) / (2.0 * h)
                    if slope < 0 and math.isfinite(slope):
                        step = 1.5 * abs(excess(guess) / slope)
        found = smallest_feasible_near(excess, guess, step, upper=_EPS_SEARCH_MAX, rtol=rtol)
        return math.inf if found is None else found.x
