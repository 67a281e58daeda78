"""The Python engine of :class:`ppk.NoisyQuery`'s "lattice sum" and "crossings" paths (double precision).

Moved unchanged from ``ppk.noisy_query`` when the threshold path went to C++ (``ppk._family``); these two
paths have not been ported yet (docs/natural-noise.md has their methods and their 1e-9 accuracy).
"""
from __future__ import annotations

import math
import sys
from typing import Callable

import numpy as np

from ._family import (DEPTH_START, _crossing_range, _dg_log_sf, _lse, _log_expm1, _log_sub, _moments,
                      _Result)
from ._logmath import log1mexp
from .noise import AddedNoise, DiscreteGaussian, Gaussian, Window

MAX_GRID = 20_000      # most grid points of the crossings search (coarser grids certify less, never wrongly)
UNIMODAL_MIN = 20_000  # log-concave windows wider than this are summed around each sum's peak only
CELL_BUDGET = 20_000   # most cell bounds the crossings search evaluates to certify a negative region
_ROUNDING = 1e-14      # relative rounding allowance of one tail sum (logs from double-precision pieces)


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
