"""The two ends of delta(eps) of a composed plan, read off tilted compositions (docs/accuracy.md, "Composition
without the floor").

The plan is a list of ``(leaf, count)``: uncomposed PLDs, each taken ``count`` times.  Per order of the pair
(P || Q, and the mirror Q || P) and per eps:

* **upper end** -- the dominating pairs' atoms (losses exactly on the grid, Q = P e^{-L}) composed with the
  tilt whose tilted mean sits at eps: ``sum_{L > eps} P_L (1 - e^{eps - L})`` from the computed masses, plus
  every certified error of ppk.pld._tilted (the FFT's 2-norm error times the 2-norm of the untilting
  weights, the tilted mass beyond the window times the largest weight there), times ``1 + rel``, plus the
  composed mass at +inf (distinguishing events and the builders' cut-off tails);
* **lower end** -- the buckets' P- and Q-masses per composed label (the true pair garbled by label, so its
  delta is below the truth), ``sum_K (P_K - e^eps Q_K)`` over the labels whose computed loss exceeds eps,
  minus every error bound (P lower, Q upper), plus the composed mass of distinguishing events.

Tilts are centred on a fixed grid of loss indices (``COVER_SDS`` untilted deviations apart) and each eps is
read off the nearest one, so an answer never depends on what was asked before; :class:`PlanCurve` keeps the
tilts it has made, so a search over eps (``get_epsilon_for_delta``) makes two or three.  Everything is summed in long
double relative to a reference weight per tilt, so deltas far below 1e-300 stay representable; the results
are natural logs.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import numpy.typing as npt

from . import _tilted
from ._masses import _MASS_RTOL, LD
from ._tilted_search import search_epsilon

#: Tilts are centred this many untilted standard deviations apart (on the grid of loss indices); each
#: eps is read off the nearest one.
COVER_SDS = 3.0
#: Saddle tilts are rounded to multiples of this many inverse untilted deviations (per grid index), so that
#: keys with nearly the same tilt share one composition (_OrderCurve._snapped).
TILT_STEP = 0.25
_JUMP = 2.0            # ... and moved below a step that more than doubles the tilted deviation
_WINDOW_GROWTH = 2     # ... and to a window at most this many times the untilted one, checked where the
_SPREAD = 1.5          # tilted deviation passes this many untilted ones
_T_MAX_LOSS = 1e5      # the largest tilt, per unit of loss ...
_T_MAX_SPAN = 4000.0   # ... and per window: e^{t n} (and its square) stays inside the long-double range
_TRUST = 16.0          # a label enters the lower end when both its masses exceed this many error bounds


def _union_log(ms: Sequence[tuple[float, int]]) -> LD:
    """log of 1 - prod (1 - m_i)^{k_i}: the mass of 'some component is at this infinity'."""
    acc = LD(0)
    for m, k in ms:
        if m >= 1:
            return LD(0)
        acc += LD(k) * np.log1p(-LD(m))
    with np.errstate(divide="ignore"):
        return np.log(-np.expm1(acc)) if acc < 0 else LD(-np.inf)


def _lse(a: Any, b: Any) -> Any:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        m = np.maximum(a, b)
        m = np.where(np.isfinite(m), m, LD(0))
        return m + np.log(np.exp(a - m) + np.exp(b - m))


def _log_or_minus_inf(x: Any, ref: Any) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, np.log(np.maximum(x, LD(0))) + ref, LD(-np.inf))


class _UpperTilt:
    """One tilt of the atoms, with the suffix sums that read the upper end at any eps.

    The sums run in double relative to the weight at the tilted peak (``ref``): weights below e^-350 of it
    are counted as e^-350 (more, never less), weights above e^350 make every eps whose sum reaches them
    answer 1 (squares stay in range); a double suffix sum of m terms is within m u of its value, which
    ``slack`` adds."""

    _CLIP = 350.0
    _BLOCK = 1 << 16      # weights made this many at a time (no window-long temporaries)

    def __init__(self, tl: _tilted.Tilted, dx: float, reach: int = 1):
        """Takes ``tl`` over: its window arrays are released as soon as the sums no longer need them (the
        reads need the suffix sums and the bounds, not the window's masses and indices: a plan keeps its tilts
        between questions, and fewer window-long arrays at once lower the peak)."""
        self.dx, self.reach = dx, reach
        c, room = tl.c, tl.room
        tl.c, tl.room = np.empty(0), None
        self.tl = tl
        n = c.size
        self.size, self.s_lo = n, tl.s_lo
        s_last = self.s_lo + n - 1
        peak = self.s_lo + int(np.argmax(c))
        t = LD(tl.t)
        self.ref = tl.log_z - t * LD(peak)          # the log weight at the peak (Tilted.log_weight there)
        self.loss_ref = float(peak) * dx
        # The two suffix sums are made in place: c times the P-weights in c's own buffer (one longer: the
        # composition leaves room), c times the Q-weights in one fresh buffer, the weights themselves a block at
        # a time -- a tilt's making holds c and the two sums, nothing else window-long.
        if room is not None and room.size > n and np.shares_memory(room[:1], c[:1]):
            s_p = room[:n + 1]
        else:
            s_p = np.empty(n + 1)
            s_p[:n] = c
        s_pe = np.empty(n + 1)
        s_p[n] = s_pe[n] = 0.0
        self.huge_end = 0
        for lo in range(0, n, self._BLOCK):
            hi = min(n, lo + self._BLOCK)
            # each log weight relative to ref, t (peak - s), in double: the integer difference is exact, so one
            # rounding -- no further from the truth than the long-double weights' difference rounded to double,
            # and no long-double arrays (docs/accuracy.md, "Composition without the floor"); the window is
            # contiguous, s_i = s_lo + i, so the differences come from an arange, exactly in double
            x = np.arange(lo, hi, dtype=np.float64)
            np.subtract(float(peak - self.s_lo), x, out=x)
            edges = np.subtract(float(peak), x)     # s_i in double (exact: integers far below 2^53)
            x *= tl.t
            # e^{-L} relative to the peak's loss (for q_w below); clipped where it would pass e^700 (atoms far
            # left of the peak, read only for eps there): a smaller Q-part, so a larger upper end
            edges *= dx
            edges -= self.loss_ref
            np.maximum(edges, -700.0, out=edges)
            big = x > self._CLIP
            # an eps reads a weight past e^350 when its first atom is at or before the last such one
            if big.any():
                self.huge_end = lo + int(big.size - np.argmax(big[::-1]))
            xc = np.clip(x, -self._CLIP, self._CLIP, out=x)
            np.subtract(xc, edges, out=edges)
            q_w = np.exp(np.minimum(edges, 700.0, out=edges), out=edges)
            q_w[big] = 0.0
            np.multiply(q_w, c[lo:hi], out=s_pe[lo:hi])
            w = np.exp(xc, out=xc)
            w[big] = 0.0
            np.multiply(s_p[lo:hi], w, out=s_p[lo:hi])
        del c, room
        for rev in (s_pe[-2::-1], s_p[-2::-1]):       # suffix sums in place (the last entry 0)
            np.cumsum(rev, out=rev)
        self.s_pe, self.s_p = s_pe, s_p
        self.peak = peak
        self.gamma = 2.0 * self.size * _tilted.U      # the suffix sums' relative rounding
        last = tl.log_z - t * LD(s_last)              # the log weight at the window's end
        self.beyond = LD(tl.above) * np.exp(last - self.ref - t)   # masses from the window's end on

    def _root_w2(self, j: npt.NDArray[np.int64]) -> npt.NDArray[np.longdouble]:
        """The square root of a bound on sum_{i >= j} w_i^2 (the 2-norm of the weights an FFT error meets), in
        closed form rather than a third window-long suffix sum: the weights e^{t (peak - s_i)} (t >= 0) fall
        geometrically, so the sum is at most both w_j^2 / (1 - e^{-2t}) and (terms) w_j^2, plus e^-700 a term
        for the weights clipped up to e^-350; 1e-12 covers the exponents' rounding (a few ulps of <= 700).
        Only j at or past ``huge_end`` is read (before it, the upper end is 1), where w_j <= e^350."""
        terms = (self.size - j).astype(LD)
        x = np.minimum(self.tl.t * (self.peak - (self.s_lo + j)).astype(np.float64), self._CLIP)
        top = np.exp(LD(2) * x.astype(LD))
        bound = terms * top
        if self.tl.t > 0:
            bound = np.minimum(bound, top / LD(-math.expm1(-2.0 * self.tl.t)))
        bound += terms * LD(math.exp(-2 * self._CLIP))
        return np.sqrt(bound * LD(1 + 1e-12))

    def _edge(self, i: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        """The loss of the window's atom i, as the window's grid index times Delta in double."""
        return (self.s_lo + i).astype(np.float64) * self.dx

    def _first_above(self, eps: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
        """The number of atoms with loss <= eps (searchsorted on the losses, side right), without keeping them:
        eps / Delta is within an index of the count, and the losses, increasing, settle it exactly."""
        with np.errstate(invalid="ignore"):
            x = np.clip(np.floor(eps / self.dx) - self.s_lo + 1, -1.0, self.size + 1.0)
        i = np.clip(np.nan_to_num(x, nan=0.0).astype(np.int64), 0, self.size)
        for _ in range(4):       # one step either way suffices; a few for the rounding's benefit of doubt
            down = (i > 0) & (self._edge(np.maximum(i - 1, 0)) > eps)
            up = (i < self.size) & (self._edge(np.minimum(i, self.size - 1)) <= eps)
            if not (down.any() or up.any()):
                return i
            i = i - down + up
        # not settled (not expected): the search on all the losses
        return np.searchsorted(self._edge(np.arange(self.size, dtype=np.int64)), eps, side="right")

    def log_upper(self, eps: npt.NDArray[np.float64]) -> npt.NDArray[np.longdouble]:
        tl = self.tl
        e = eps.astype(LD)
        j = self._first_above(eps)                              # the first atom with loss > eps
        sp, spe = self.s_p[j].astype(LD), self.s_pe[j].astype(LD)
        with np.errstate(over="ignore", invalid="ignore"):
            ee = np.exp(e - LD(self.loss_ref))
            value = np.maximum(sp - ee * spe, LD(0))
            slack = _scaled(self.gamma, sp + ee * spe)
        err = _scaled(tl.err2, self._root_w2(j) * LD(1 + self.gamma))
        # eps left of the window: the masses between eps and the window weigh at most e^{-t eps/dx} each
        gap = np.where(j == 0, LD(tl.below) * np.exp(tl.log_z - LD(tl.t) * (e / LD(self.dx)) - self.ref), LD(0))
        base = value + slack + err + self.beyond + gap
        # the leaves' masses within rel of the truth move the upper end by rel times the P-mass of the atoms
        # within ``reach`` steps below eps and above (ppk.pld._bracket.mass_error: the dominating pair's split)
        # from `reach` steps below the first atom above eps (the window is contiguous); past the window's end,
        # the atoms within reach of eps, found by loss (a hair further down: rounding)
        jr = np.where(j < self.size, np.maximum(j - self.reach, 0),
                      self._first_above(eps - self.reach * self.dx * (1 + 1e-9)))
        near = (self.s_p[jr].astype(LD) * LD(1 + self.gamma) + self.beyond
                + _scaled(tl.err2, self._root_w2(jr) * LD(1 + self.gamma))
                + np.where(jr == 0, LD(tl.below) * np.exp(tl.log_z - LD(tl.t) * (e / LD(self.dx) - self.reach)
                                                                   - self.ref), LD(0)))
        # a grid so coarse that e^{reach dx} overflows: an infinite allowance (sound), not an OverflowError
        grow = math.exp(self.reach * self.dx) if self.reach * self.dx < 700.0 else math.inf
        straddle = _scaled(tl.rel * (1 + tl.rel) * (1 + grow), near)
        out = _log_or_minus_inf(base + _scaled(tl.rel, base) + straddle, self.ref)
        return np.where((j < self.huge_end) | ~np.isfinite(value), LD(0), out)


class _LowerTilt:
    """One tilt of the buckets' P- and Q-masses (on one window), sorted by each label's computed loss."""

    def __init__(self, tp: _tilted.Tilted, tq: _tilted.Tilted):
        lwp, lwq = tp.log_weight(), tq.log_weight()
        self.ref = lwp[int(np.argmax(tp.c))]
        with np.errstate(over="ignore"):
            wp, wq = np.exp(lwp - self.ref), np.exp(lwq - self.ref)
        # the labels whose two masses stand clear of the FFT's error (each entry is within err2 of the
        # aliased truth): there the computed loss says which side of eps a label lies on.  Any subset of
        # labels gives a lower end, so leaving out the others is safe; their masses are near the noise.
        trusted = (tp.c > _TRUST * (tp.err2 + tp.alias)) & (tq.c > _TRUST * tq.err2) & np.isfinite(wp) & np.isfinite(wq)
        a, b = tp.c[trusted].astype(LD) * wp[trusted], tq.c[trusted].astype(LD) * wq[trusted]
        ell = np.log(a) - np.log(b)
        by = np.argsort(-ell, kind="stable")          # labels by their computed loss, largest first
        self.neg_ell = (-ell[by]).astype(np.float64)

        def prefix(x: npt.NDArray[np.longdouble]) -> npt.NDArray[np.longdouble]:
            return np.concatenate([np.zeros(1, dtype=LD), np.cumsum(x[by])])
        self.sp, self.sq = prefix(a), prefix(b)
        self.sp2, self.sq2 = prefix(wp[trusted] ** 2), prefix(wq[trusted] ** 2)
        self.err_p, self.err_q = LD(tp.err2 + tp.alias), LD(tq.err2)
        self.rel = LD(max(tp.rel, tq.rel))

    def log_lower(self, eps: npt.NDArray[np.float64], log_q_cut: LD) -> npt.NDArray[np.longdouble]:
        j = np.searchsorted(self.neg_ell, -eps, side="left")      # the labels with computed loss > eps
        with np.errstate(over="ignore", invalid="ignore"):
            ee = np.exp(eps.astype(LD))
            value = self.sp[j] - ee * self.sq[j]
            err = (_scaled(self.err_p, np.sqrt(self.sp2[j])) + ee * _scaled(self.err_q, np.sqrt(self.sq2[j]))
                   + _scaled(self.rel, self.sp[j] + ee * self.sq[j]) + ee * np.exp(log_q_cut - self.ref))
            return _log_or_minus_inf(value - err, self.ref)


def _scaled(bound: Any, norm: Any) -> Any:
    """bound * norm, 0 where the norm is 0 (an infinite bound over no entry moves nothing)."""
    with np.errstate(invalid="ignore"):
        return np.where(norm > 0, LD(bound) * norm, LD(0))


def _label_offset(b: Any, order: int, dx: float) -> float:
    """The mean of (label - loss / Delta) over a leaf's buckets, weighted by the order's P-masses (order 1: the
    mirror, label -k for loss -log(P/Q)).  Only centres a tilt: any tilt is certified."""
    with np.errstate(divide="ignore", invalid="ignore"):
        lp, lq = np.log(b.p.astype(LD)), np.log(b.q.astype(LD))
    both = np.isfinite(lp) & np.isfinite(lq)
    if not both.any():
        return 0.0
    k = (b.offset + np.arange(b.p.size))[both]
    off = k - ((lp[both] - lq[both]) / LD(dx)).astype(np.float64)
    log_w = (lp if order == 0 else lq)[both]
    w = np.exp(log_w - np.max(log_w)).astype(np.float64)
    return float(np.sum(w * off) / np.sum(w)) * (1.0 if order == 0 else -1.0)


class _OrderCurve:
    """Both ends of one order of the plan's pair, with the tilts made so far."""

    def __init__(self, plan: Sequence[tuple[Any, int]], order: int, dx: float):
        self.dx = dx
        self.plan, self.order = plan, order
        self.reach = max(leaf._reach for leaf, _ in plan)     # ppk.pld._bracket.mass_error
        self.atoms = []
        self._buckets: tuple[list[_tilted.Factor], list[_tilted.Factor]] | None = None   # made for the lower end
        m_up, m_true, q_cut = [], [], []
        self._label_shift: float | None = None          # made for the lower end
        for leaf, k in plan:
            a, b = leaf._atoms, leaf._buckets
            # the mirror (order 1): P' = Q, losses negated
            self.atoms.append(_tilted.Factor(a.p, a.offset, k) if order == 0 else
                              _tilted.Factor(a.q[::-1].copy(), -(a.offset + a.q.size - 1), k))
            inf = float(leaf.infinity_mass_upper if order == 0 else leaf.infinity_mass_lower)
            cut_up = float(a.overflow_p if order == 0 else a.overflow_q)
            m_up.append((min(1.0, (inf + cut_up) * (1 + 1e-15)), k))
            m_true.append((inf * (1 - 1e-15), k))
            q_cut.append((min(1.0, float(b.overflow_q if order == 0 else b.overflow_p) * (1 + 1e-15)), k))
        self.log_inf_up, self.log_inf_true, self.log_q_cut = _union_log(m_up), _union_log(m_true), _union_log(q_cut)
        moments = [f.moments(0.0) for f in self.atoms]     # the untilted composition's mean and variance
        self.mean0 = sum(f.count * m[1] for f, m in zip(self.atoms, moments))
        var0 = sum(f.count * m[2] for f, m in zip(self.atoms, moments))
        self.t_max = min(_T_MAX_LOSS * dx, _T_MAX_SPAN / _tilted.fft_length(math.sqrt(max(var0, 0.0))))
        # tilts are centred on a grid of COVER_SDS untilted deviations: every eps is read within a deviation
        # and a half of its tilt's centre (masses there within e^-1.2 of the peak, for a near-normal law)
        self.sd = math.sqrt(max(var0, 1.0))
        self.quantum = COVER_SDS * self.sd
        self._windows: dict[int, int] = {}
        self.upper_keys: dict[int, float] = {}       # key -> its (snapped) tilt; the compositions by tilt
        self.lower_keys: dict[int, float] = {}
        self.upper_tilts: dict[float, _UpperTilt] = {}
        self.lower_tilts: dict[float, _LowerTilt] = {}

    @property
    def label_shift(self) -> float:
        """How far a composed label lies from its loss (grid steps), so the lower end's tilt is centred where the
        labels of losses near eps are: about half the summed widths for buckets spread evenly, ~0 for atoms at
        their bucket's edge (a Laplace mechanism's ends), and of the other sign in the mirror order.  Made on
        the first lower end: an eps query reads upper ends only."""
        if self._label_shift is None:
            self._label_shift = sum(k * _label_offset(leaf._buckets, self.order, self.dx) for leaf, k in self.plan)
        return self._label_shift

    @property
    def bucket_factors(self) -> tuple[list[_tilted.Factor], list[_tilted.Factor]]:
        """The buckets' P- and Q-masses as factors (this order's; the mirror swaps them)."""
        if self._buckets is None:
            bp = [_tilted.Factor(leaf._buckets.p, leaf._buckets.offset, k) for leaf, k in self.plan]
            bq = [_tilted.Factor(leaf._buckets.q, leaf._buckets.offset, k) for leaf, k in self.plan]
            self._buckets = (bp, bq) if self.order == 0 else ([f.mirrored() for f in bq], [f.mirrored() for f in bp])
        return self._buckets

    @staticmethod
    def _support(factors: list[_tilted.Factor]) -> tuple[float, float]:
        """The composed support's first and last grid index."""
        lo = sum(f.count * float(f.j64[0]) for f in factors if f.j64.size)
        hi = sum(f.count * float(f.j64[-1]) for f in factors if f.j64.size)
        return lo, hi

    @classmethod
    def _target(cls, factors: list[_tilted.Factor], index: float) -> float:
        """``index`` kept within the composed support (beyond it no tilt helps: the masses there are 0)."""
        lo, hi = cls._support(factors)
        return min(max(index, lo), hi)

    def _snapped(self, t: float) -> float:
        """A saddle tilt rounded down to a multiple of ``TILT_STEP / sd``.  Keys whose saddles are that close
        share one composition: a Gaussian-like law's tilted mean moves down by at most TILT_STEP deviations
        (every eps still reads masses near its tilt's bulk), and where a far mode switches on (a subsampled
        mechanism's hits: the mean jumps over many keys within a sliver of tilts) the keys of that sliver read
        one composition, on the near side of the jump, whose window is the narrower.  Down, never up: a tilt
        past the jump puts the whole law in the far mode, where an eps left of its window reads delta = 1.
        Any tilt is certified: this only decides how many FFTs a plan makes."""
        step = TILT_STEP / self.sd
        j = math.floor(min(t, self.t_max) / step)
        # and below a jump: where one step more than doubles the tilted deviation, the far mode is switching
        # on within the step (its window doubles with it), and the step below reads the same keys from the
        # near side (a bounded walk: a smooth law stops at once)
        for _ in range(64):
            if j <= 0 or self._tilted_sd(j * step) <= _JUMP * self._tilted_sd((j - 1) * step):
                break
            j -= 1
        # and down to a window at most _WINDOW_GROWTH times the untilted one, where the far mode has spread the
        # law (screened by its deviation: a near-normal law's window does not grow), by bisection on the steps
        if j > 0 and self._tilted_sd(j * step) > _SPREAD * self.sd:
            limit = _WINDOW_GROWTH * self._window(0)
            if self._window(j) > limit:
                lo, hi = 0, j          # window(lo) within the limit, window(hi) past it
                while hi - lo > 1:
                    mid = (lo + hi) // 2
                    lo, hi = (mid, hi) if self._window(mid) <= limit else (lo, mid)
                j = lo
        return j * step

    def _window(self, j: int) -> int:
        """The window of the tilt j steps up (cached: keys share them; a tilt composed already has its own)."""
        t = j * (TILT_STEP / self.sd)          # the very tilt _snapped makes of j
        if j not in self._windows and t in self.upper_tilts:
            self._windows[j] = self.upper_tilts[t].size
        if j not in self._windows:
            try:
                self._windows[j] = _tilted.window_at(self.atoms, t)
            except ValueError:      # past one FFT (fft_length): over any limit, never composed from here
                self._windows[j] = _tilted.MAX_FFT + 1
        return self._windows[j]

    def _tilted_sd(self, t: float) -> float:
        return math.sqrt(max(sum(f.count * f.moments(t)[2] for f in self.atoms), 0.0))

    def _upper_tilt(self, key: int) -> _UpperTilt:
        if key not in self.upper_keys:
            index = self._target(self.atoms, key * self.quantum)
            self.upper_keys[key] = self._snapped(_tilted.saddle(self.atoms, index, self.t_max, cell=TILT_STEP / self.sd))
        t = self.upper_keys[key]
        if t not in self.upper_tilts:
            self.upper_tilts[t] = _UpperTilt(_tilted.compose(self.atoms, t=t, rtol=_MASS_RTOL), self.dx, self.reach)
        return self.upper_tilts[t]

    def _lower_tilt(self, key: int) -> _LowerTilt:
        bp, bq = self.bucket_factors
        if key not in self.lower_keys:
            self.lower_keys[key] = self._snapped(_tilted.saddle(bp, self._target(bp, key * self.quantum), self.t_max,
                                                                cell=TILT_STEP / self.sd))
        t = self.lower_keys[key]
        if t not in self.lower_tilts:
            tp = _tilted.compose(bp, t=t, rtol=_MASS_RTOL)
            tq = _tilted.compose_shifted(bq, tp, self.dx, _MASS_RTOL)
            self.lower_tilts[t] = _LowerTilt(tp, tq)
        return self.lower_tilts[t]

    def _by_tilt(self, eps: npt.NDArray[np.float64], shift: float, get: Any, read: Any) -> npt.NDArray[np.longdouble]:
        """Each eps read off the tilt centred at the nearest multiple of ``quantum`` (grid indices): the same
        eps always reads the same tilt, whatever was asked before."""
        out = np.full(eps.shape, -np.inf, dtype=LD)
        keys = np.rint((eps / self.dx + shift) / self.quantum).astype(np.int64)
        for key in np.unique(keys):
            mine = keys == key
            out[mine] = read(get(int(key)), eps[mine])
        return out

    def eps_guess(self, log_delta: float) -> float:
        """Where the saddle-point approximation puts this order's delta at e^log_delta: a starting point for the
        search (nothing certified rests on it), so that it builds the tilt of the answer and few others.

        At the tilt t (per grid index) whose tilted mean m is the eps asked, delta = Z e^{-t m} E_t[e^{-t Y/Delta}
        (1 - e^{-Y})_+] with Y = (j - m) Delta; Y taken normal with the tilted variance s^2 makes the expectation
        (erfcx(a s/sqrt 2) - erfcx((a + 1) s/sqrt 2))/2, a = t/Delta."""
        from scipy.special import erfcx   # loaded on use: `import ppk` stays light

        def log_delta_at(t: float) -> tuple[float, float]:
            ms = [f.moments(t) for f in self.atoms]
            mean = sum(f.count * m[1] for f, m in zip(self.atoms, ms))
            s = math.sqrt(max(sum(f.count * m[2] for f, m in zip(self.atoms, ms)), 1e-300)) * self.dx
            a = t / self.dx
            g = 0.5 * (float(erfcx(a * s / math.sqrt(2))) - float(erfcx((a + 1) * s / math.sqrt(2))))
            # a guess only: the denominator kept off 0 (a loss of variance ~0, q = 1e-20, underflows it)
            g = g if g > 0 else 1.0 / max(s * math.sqrt(2 * math.pi) * max(a, 1e-300) * (a + 1), 1e-300)
            return mean * self.dx, sum(f.count * m[0] for f, m in zip(self.atoms, ms)) - t * mean + math.log(g)
        eps0, at0 = log_delta_at(0.0)
        if at0 <= log_delta:
            return max(eps0, 0.0)
        lo, hi = 0.0, self.t_max
        eps_max, at_max = log_delta_at(hi)
        if at_max > log_delta:       # beyond the largest tilt: start there
            return eps_max
        for _ in range(60):      # bisection on the decreasing log delta(t), to a hundredth of the tilt
            mid = 0.5 * (lo + hi)
            if log_delta_at(mid)[1] > log_delta:
                lo = mid
            else:
                hi = mid
            if hi - lo <= 0.01 * hi:
                break
        return log_delta_at(hi)[0]

    def log_upper(self, eps: npt.NDArray[np.float64]) -> npt.NDArray[np.longdouble]:
        vals = self._by_tilt(eps, 0.0, self._upper_tilt, lambda t, e: t.log_upper(e))
        # a tilt whose centre the support's end clamped is steep there (the saddle runs to t_max), and an eps
        # a few hundred steps inside reads it with its errors multiplied by e^{t * steps}: a Laplace x 3 read
        # delta(1.2) = 1 off the tilt at the all-at-the-edge atom.  Such eps also read the next tilt inwards;
        # both ends are certified, so the smaller stands (and the same eps always reads the same two tilts)
        keys = np.rint((eps / self.dx) / self.quantum).astype(np.int64)
        lo, hi = self._support(self.atoms)
        inward = np.where(keys * self.quantum > hi, keys - 1, np.where(keys * self.quantum < lo, keys + 1, keys))
        for key in np.unique(inward[inward != keys]):
            mine = (inward == key) & (inward != keys)
            vals[mine] = np.minimum(vals[mine], self._upper_tilt(int(key)).log_upper(eps[mine]))
        return _lse(vals, self.log_inf_up)

    def log_lower(self, eps: npt.NDArray[np.float64]) -> npt.NDArray[np.longdouble]:
        vals = self._by_tilt(eps, self.label_shift, self._lower_tilt, lambda t, e: t.log_lower(e, self.log_q_cut))
        return _lse(vals, self.log_inf_true)


def symmetric(leaf: Any) -> bool:
    """Whether the mechanism behind a leaf has H(P || Q) = H(Q || P) at every eps: a Gaussian or (unsubsampled)
    Laplace mechanism, whose pair a reflection of the output swaps.  Its discretised orders differ by their
    rounding, but each order's bracket is certified for the one true delta."""
    return leaf._gaussian_mu is not None or bool(getattr(leaf, "_symmetric", False))


class PlanCurve:
    """The bracket of a plan's delta(eps), max over its orders (both, or H(P || Q) alone for a one-sided plan),
    with its tilts kept for later reads."""

    def __init__(self, plan: Sequence[tuple[Any, int]], dx: float, *, orders: tuple[int, ...] = (0, 1)):
        self.dx = dx
        if all(symmetric(leaf) for leaf, _ in plan):
            # every mechanism's two orders have one delta(eps) (a reflection of the output swaps P and Q), so
            # the composed pair's have too: either order's certified bracket is the plan's
            orders = orders[:1]
        self.orders = [_OrderCurve(plan, order, dx) for order in orders]

    def epsilon_bracket(self, log_delta: float) -> tuple[float, float]:
        """(lo, hi) around the smallest eps whose certified upper end is <= e^log_delta, hi - lo within 1e-13 of
        hi; (0, 0) when eps = 0 reaches it, (inf, inf) when no eps does.
        Searched in log delta from the saddle-point guess (ppk._search.smallest_feasible_near): the tilts
        built are the answer's and its neighbours', not those of every point a search from 0 would visit."""
        o = self.orders[0]
        reach = max(sum(f.count * float(f.j64[-1]) for f in oc.atoms if f.j64.size) for oc in self.orders)
        upper = max(reach + 1.0, 1.0) * self.dx
        guess = min(oc.eps_guess(log_delta) for oc in self.orders)
        return search_epsilon(lambda e: self.log_upper(np.array([e], dtype=np.float64))[0], log_delta,
                              guess=guess, step=0.25 * o.sd * self.dx, upper=upper,
                              floor=max(float(oc.log_inf_up) for oc in self.orders))

    def log_upper(self, eps: npt.NDArray[np.float64]) -> npt.NDArray[np.longdouble]:
        return np.minimum(np.max([o.log_upper(eps) for o in self.orders], axis=0), LD(0))

    def log_ends(self, eps: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.longdouble], npt.NDArray[np.longdouble]]:
        """(log lower, log upper) at every eps."""
        up = self.log_upper(eps)
        lo = np.max([o.log_lower(eps) for o in self.orders], axis=0)
        return np.minimum(lo, up), up
