"""Composition by exponential tilting: certified masses far out in the tails (docs/accuracy.md, "Composition
without the floor").

A plan is a list of factors (a mass vector ``v`` on grid indices ``offset, offset + 1, ...`` and a count
``k``); its composition is the convolution of ``v_1^{*k_1} * ... * v_r^{*k_r}``.  A double FFT computes it
with an absolute error of ~1e-16 of the largest mass, so every mass below that -- every delta below about
1e-9 after many folds -- was lost in the round-off.  Tilting moves the masses of interest into the bulk:
with ``b_i[j] = v_i[j] e^{lam j Delta} / Z_i`` (``Z_i`` the sum, so ``b_i`` is a probability vector), the
tilt commutes with convolution, so

    (v_1^{*k_1} * ...)[s] = Z e^{-lam s Delta} (b_1^{*k_1} * ...)[s],    Z = prod Z_i^{k_i}.

Chosen so that the tilted law's mean sits at the loss eps of interest, the masses that make delta(eps) are
where the FFT is accurate relative to them.  One tilt serves the eps within a few of the tilted law's
standard deviations; a curve takes a few tilts.

What is certified (:class:`Tilted`): for the tilted composition ``c`` and the computed ``c_hat`` on the window
``[s_lo, s_hi)`` of a cyclic FFT of length ``N``,

* ``|c_hat - c_N|_2 <= err2``, ``c_N`` the cyclic (aliased) exact composition: the FFT's rounding (Higham's
  bound, as in ``_convolution``), carried through the powers ``B^k`` (``|prod B_hat^k - prod B^k| <=
  sum k_i |B_hat_i - B_i|`` once every computed ``B_hat`` is projected onto the unit disk, where the exact
  transform of a probability vector lies) and the powers' own rounding;
* ``0 <= c_N - c`` entry by entry, summing to at most ``alias`` (the tilted mass outside the window, which
  wraps around; a Chernoff bound from the tilted factors' generating functions);
* the tilted mass left of the window and right of it, each at most ``below`` / ``above`` (Chernoff);
* each factor's entries carry a relative error ``rtol`` (the builders' rounding; the conversion to
  double), which compounds to a relative ``(1 + rtol)^K - 1`` of every composed mass.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ._convolution import U, _rho

LD = np.longdouble

#: Half-width of the FFT window in tilted standard deviations (plus the factors' own spread): the tilted
#: mass outside it -- aliased into the window, bounded by Chernoff -- is below e^-100 relative.
WINDOW_SDS = 16.0
#: Most entries of one tilted FFT (2^24 doubles: 128 MiB per vector).
MAX_FFT = 1 << 24
#: The tilted mass a window may leave outside (both sides; it aliases into the window or is bounded apart).
#: Only a size: whatever the window leaves out is certified (below / above / alias).  1e-20 is 1e4 below the
#: FFT's own error (~1e-16 of the tilted masses), which dominates both ends anyway; 1e-30 made a near-normal
#: law's window 23.6 deviations, just past 2^19 points, so many windows doubled for nothing.
TAIL = 1e-20
#: Spectral entries of modulus below e^-DROP_LOG are set to 0 before the inverse transform (counted in err2): at
#: most e^-79 sqrt(2) = 7e-35 in 2-norm, 1e16 below the transforms' own rounding (rho |c|_1 / sqrt(n) > 6e-18).
DROP_LOG = 80.0


def _log_mgf(log_v: npt.NDArray, j: npt.NDArray, t: float) -> tuple[Any, Any, Any]:
    """log sum_j v_j e^{t j}, and the mean and variance of j under the tilted law (in the arrays' precision)."""
    x = log_v + j.dtype.type(t) * j
    k = int(np.argmax(x))
    top = x[k]
    x -= top
    w = np.exp(x, out=x)
    s = np.sum(w)
    # the moments about the tilted mode (an index of the law, so near the mean): two dot products, no
    # vector-long temporaries; the variance's cancellation is (mean - mode)^2 / var ulps, and nothing
    # certified rests on these (they place tilts and windows, whose errors are bounded apart)
    d = j - j[k]
    # (einsum, not np.dot: BLAS's threads spin after each of the many small calls, CPU time for nothing)
    m1 = np.einsum("i,i->", w, d) / s
    var = max(np.einsum("i,i,i->", w, d, d) / s - m1 * m1, 0.0)
    return top + np.log(s), m1 + j[k], var


class Factor:
    """A mass vector ``v`` on grid indices ``offset, offset + 1, ...`` taken ``count`` times, with its logs
    ready for tilts."""

    def __init__(self, v: npt.NDArray[np.longdouble], offset: int, count: int):
        self.v, self.offset, self.count = v, int(offset), int(count)
        with np.errstate(divide="ignore"):
            log_v = np.log(v.astype(LD))
        keep = np.isfinite(log_v)
        # the logs in long double (masses below the double range), kept in double; indices as integers
        self.j = (self.offset + np.arange(v.size, dtype=np.int64))[keep]
        self.j64, self.log_v64 = self.j.astype(np.float64), log_v[keep].astype(np.float64)
        self._moments: dict[float, tuple[float, float, float]] = {}

    def mirrored(self) -> "Factor":
        return Factor(self.v[::-1].copy(), -(self.offset + self.v.size - 1), self.count)

    def moments(self, t: float) -> tuple[float, float, float]:
        """(log mgf, mean, variance) at tilt t in double precision (searches and Chernoff bounds); kept per t,
        as the tilt choice, the window and the composition ask for the same ones."""
        if t not in self._moments:
            lm, mean, var = _log_mgf(self.log_v64, self.j64, t)
            self._moments[t] = (float(lm), float(mean), float(var))
        return self._moments[t]


def saddle(prepared: list[Factor], target_index: float, t_max: float, *, cell: float = 0.0) -> float:
    """The tilt ``t`` (per grid index, >= 0) at which the composed tilted mean is ``target_index``; 0 when the
    untilted mean already reaches it, ``t_max`` when even that tilt falls short.  Any tilt is valid (the
    errors are certified for the one used); this one makes the masses near ``target_index`` the bulk.
    ``cell`` > 0: the caller rounds the tilt down to a multiple of it, so the search stops as soon as the
    saddle's bracket lies within one such cell (returning the bracket's low end, which rounds alike)."""
    def mean_var(t: float) -> tuple[float, float]:
        ms = [p.moments(t) for p in prepared]
        return (sum(p.count * m[1] for p, m in zip(prepared, ms)), sum(p.count * m[2] for p, m in zip(prepared, ms)))
    m, v = mean_var(0.0)
    if m >= target_index:
        return 0.0
    # a target past the largest tilt's mean (the support's far end): t_max at once, not after tens of Newton
    # steps crawling up to it (the moments at t_max are kept: every such key asks for the same ones)
    # (only past the tolerance below: a target within it of t_max's mean is met by a smaller tilt, which the
    # clamped-tilt read of _tilted_bracket.log_upper needs as the next tilt inwards)
    m_max, v_max = mean_var(t_max)
    if m_max < target_index - 0.1 * max(1.0, math.sqrt(v_max)):
        return t_max
    lo, hi, t = 0.0, t_max, 0.0
    for _ in range(100):        # Newton on the increasing mean (its derivative is the variance), kept in [lo, hi]
        # a tenth of a tilted deviation is close enough: the tilt only decides where the FFT is sharpest
        if abs(m - target_index) <= 0.1 * max(1.0, math.sqrt(v)) or hi - lo <= 1e-12 * hi:
            break
        if cell > 0 and math.floor(lo / cell) == math.floor(hi / cell) and hi < t_max:
            return lo
        lo, hi = (t, hi) if m < target_index else (lo, t)
        step = t + (target_index - m) / v if v > 0 else 0.5 * (lo + hi)
        t = step if lo < step < hi else 0.5 * (lo + hi)
        m, v = mean_var(t)
    return t


@dataclass
class Tilted:
    """The tilted composition on a window, with its certified errors (tilted units; see the module)."""

    t: float                              # the tilt per grid index
    log_z: LD                             # log Z: untilted mass at s = c[s] e^{log_z - t s}
    s_lo: int                             # the window's first composed grid index
    c: npt.NDArray[np.float64]            # computed tilted masses (clipped at 0) at s_lo, s_lo + 1, ...
    err2: float                           # 2-norm bound of c - c_N
    alias: float                          # sum of c_N - c (>= 0 entrywise)
    below: float                          # tilted mass left of the window
    above: float                          # tilted mass right of the window
    rel: float                            # relative error of every composed mass from the factors' rounding
    mean: float                           # tilted mean and standard deviation (grid indices)
    sd: float
    room: npt.NDArray[np.float64] | None = None   # c's buffer, c its first c.size entries and longer: room for
    #                                               sums made in place (ppk.pld._tilted_bracket._UpperTilt)

    @property
    def s(self) -> npt.NDArray[np.int64]:
        """The window's composed grid indices, increasing (made on demand: a window-long array)."""
        return np.arange(self.s_lo, self.s_lo + self.c.size, dtype=np.int64)

    def log_weight(self) -> npt.NDArray[np.longdouble]:
        """log of the untilting factor Z e^{-t s} per window entry."""
        return self.log_z - LD(self.t) * self.s.astype(LD)


def _cores(p: Factor, t: float, lz: float, budget: float) -> tuple[tuple[np.ndarray, float], ...]:
    """Per side (left, right): the factor's entries that a Chernoff bound uses, and the tilted mass it leaves
    out (at most ``budget``): the far tail on the bound's side, whose e^{th j} would swamp the generating
    function of a long-tailed factor (a subsampled mechanism's loss)."""
    x = p.log_v64 + t * p.j64 - lz
    w = np.exp(x - np.max(x)) * math.exp(float(np.max(x)))       # tilted masses (sum <= 1)
    return _core(w, False, budget), _core(w, True, budget)


def _core(w: np.ndarray, right: bool, budget: float) -> tuple[np.ndarray, float]:
    tail = np.cumsum(w[::-1])[::-1] if right else np.cumsum(w)   # mass from each entry outward
    drop = tail <= budget
    keep = ~drop
    left_out = float(np.max(tail[drop], initial=0.0)) * (1 + 1e-12)
    return keep, left_out


class _TailBound:
    """Bounds on the tilted composed mass beyond an edge (right: >= edge; left: < edge).  Each factor's far
    tail on that side (tilted mass <= 1e-40 / runs) is set aside -- some run lands there with probability at
    most the sum of those masses -- and the rest is bounded by exp(K(th) - th edge) at the best of a few th,
    K the kept parts' cumulant generating function.  K is taken about integer centres c_i of the factors,
    ``K(th) - th edge = sum k_i C_i(th) + th (sum k_i c_i - edge)`` with ``C_i(th) = log E[e^{th (j - c_i)}]``:
    the last bracket is an exact integer, so a 2^62-fold plan does not cancel 19 digits away (in double,
    C_i's rounding is covered by the slack in the exponent)."""

    def __init__(self, prepared: list[Factor], t: float, log_zs: list[float], sd: float):
        self.prepared, self.t, self.log_zs, self.sd = prepared, t, log_zs, sd
        total = sum(p.count for p in prepared)
        both = [_cores(p, t, lz, 1e-40 / total) for p, lz in zip(prepared, log_zs)]
        self.cores = {right: [sides[right] for sides in both] for right in (False, True)}
        self.centres = [int(round(p.moments(t)[1])) if p.j64.size else 0 for p in prepared]
        self.centre = sum(p.count * c for p, c in zip(prepared, self.centres))     # a Python int: exact
        self._made: dict[bool, tuple[float, list[tuple[float, float, float]]]] = {}

    def _sums(self, right: bool) -> tuple[float, list[tuple[float, float, float]]]:
        """The edge-free parts of the bound on one side, made once: the mass set aside, and per th the summed
        K_i and the slack covering their rounding (a window search reads many edges)."""
        if right not in self._made:
            cores = self.cores[right]
            set_aside = sum(p.count * out for p, (_, out) in zip(self.prepared, cores))
            per_th = []
            # the th-free parts once per factor (the same sums, in the same order, as per th)
            parts = []
            for p, lz, c, (keep, _) in zip(self.prepared, self.log_zs, self.centres, cores):
                jj = p.j64[keep]
                parts.append((p.log_v64[keep] + self.t * jj - lz, jj - c))
            for mult in (1 / 32, 1 / 8, 1 / 2, 1.0, 2.0, 4.0, 8.0):
                th = mult * WINDOW_SDS / max(self.sd, 1.0) / 4 * (1 if right else -1)   # sd in grid steps
                terms = []
                for p, (base, d) in zip(self.prepared, parts):
                    x = th * d
                    x += base
                    top = float(np.max(x, initial=-np.inf))
                    if np.isfinite(top):
                        x -= top
                        terms.append(p.count * (top + math.log(float(np.sum(np.exp(x, out=x))))))
                    else:
                        terms.append(-math.inf)
                per_th.append((th, sum(terms), 1e-12 * (sum(abs(x) for x in terms if math.isfinite(x)) + 1.0)))
            self._made[right] = (set_aside, per_th)
        return self._made[right]

    def __call__(self, edge: int, right: bool) -> float:
        set_aside, per_th = self._sums(right)
        best = 1.0
        for th, total, slack in per_th:
            k = total + th * float(self.centre - int(edge))
            with np.errstate(over="ignore"):
                best = min(best, math.exp(min(k + slack, 0.0)))
        return min(1.0, best + set_aside)


def _placed(tail_bound: "_TailBound", mean: float, sd: float) -> tuple[int, int, float, float]:
    """(n, s_lo, below, above): the window of a tilted law of this mean and deviation.  WINDOW_SDS deviations
    either side; a long-tailed law (a subsampled mechanism's) reaches further: doubled (within MAX_FFT) until
    the certified mass outside is within TAIL, then fitted to each side's tail (:func:`_fitted`)."""
    n = fft_length(sd)
    s_lo = int(round(mean)) - n // 2
    below, above = tail_bound(s_lo, False), tail_bound(s_lo + n, True)
    while n * 2 <= MAX_FFT and below + above > TAIL:
        n *= 2
        s_lo = int(round(mean)) - n // 2
        below, above = tail_bound(s_lo, False), tail_bound(s_lo + n, True)
    if n >= 1 << 18:
        n, s_lo, below, above = _fitted(tail_bound, int(round(mean)), n, (s_lo, below, above))
    return n, s_lo, below, above


def window_at(prepared: list[Factor], t: float) -> int:
    """The FFT length :func:`compose` would take at tilt t (its window, without the composition)."""
    stats = [p.moments(t) for p in prepared]
    mean = float(sum(p.count * st[1] for p, st in zip(prepared, stats)))
    sd = math.sqrt(max(float(sum(p.count * st[2] for p, st in zip(prepared, stats))), 0.0))
    return _placed(_TailBound(prepared, t, [st[0] for st in stats], sd), mean, sd)[0]


def _fitted(tail_bound: "_TailBound", centre: int, n: int, fallback: tuple[int, float, float]) -> tuple[int, int, float, float]:
    """A large window fitted to each side's own tail (docs/accuracy.md, "Composition without the floor"): the
    distance from the centre at which each certified tail bound falls to TAIL / 2 (by bisection within the
    doubled window's half, to 1/64 of it), and the shortest power of two holding both.  A subsampled
    mechanism's tilted law reaches far on one side only, and even a near-normal one needs fewer than
    WINDOW_SDS deviations: the centred, doubled window is often twice what the tails need.  Returns
    (n, s_lo, below, above); the doubled window's own when fitting gains nothing."""
    half = n // 2

    def reach(right: bool) -> int:
        def out(d: int) -> float:
            return tail_bound(centre + d, True) if right else tail_bound(centre - d, False)
        if out(half) > TAIL / 2:
            return half
        lo, hi = 0, half
        while hi - lo > half // 64:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if out(mid) > TAIL / 2 else (lo, mid)
        return hi
    left = reach(False)
    right = reach(True)
    m = 1 << (left + right + 128 - 1).bit_length()
    if m >= n:
        return (n,) + fallback
    s_lo = centre - left - (m - left - right) // 2
    below, above = tail_bound(s_lo, False), tail_bound(s_lo + m, True)
    if below + above > TAIL:       # each side is within TAIL / 2 (the bounds fall outwards): not expected
        return (n,) + fallback
    return m, s_lo, below, above


def fft_length(sd: float) -> int:
    """The FFT length of a window of WINDOW_SDS tilted deviations on either side of the mean; ValueError
    past MAX_FFT.  A factor wider than the window needs no room of its own: folding its vector mod n before
    the transform folds the composed law the same way (the fold commutes with convolution), so whatever lies
    outside the window is the composed mass that aliases, which the Chernoff bounds count."""
    half = int(math.ceil(WINDOW_SDS * sd)) + 64
    n = 1 << (2 * half).bit_length()
    if n > MAX_FFT:
        raise ValueError(f"the composed privacy loss spreads over {2 * half:,} grid points (more than the {MAX_FFT:,} "
                         "of one FFT): use a larger value_discretization_interval, or fewer compositions")
    return n


def window_size(factors: list[Factor]) -> int:
    """The FFT length of the untilted composition (ValueError when it would not fit): the check that a plan
    can be evaluated, made when it is composed."""
    var = sum(f.count * f.moments(0.0)[2] for f in factors)
    return fft_length(math.sqrt(max(var, 0.0)))


def _rfft(x: npt.NDArray[np.float64], n: int) -> npt.NDArray[np.complex128]:
    """The real transform of length n (x may be overwritten): numpy's from 2.0 on (see :func:`_irfft`)."""
    if _NUMPY_OUT:
        return np.fft.rfft(x, n)
    import scipy.fft   # loaded on use: `import ppk` stays light (docs/architecture.md)
    return scipy.fft.rfft(x, n, workers=-1, overwrite_x=True)


def _irfft(half: npt.NDArray[np.complex128], n: int, out: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The inverse real transform of length n, into ``out`` (n doubles) where numpy can (2.0 on): the same
    pocketfft transforms as scipy.fft's (the same numbers), without scipy's work buffer and fresh output (8 MiB
    each at 2^20 points: much of a tilt's peak).  Both directions one library's: each caches its own plans
    (as large again)."""
    if _NUMPY_OUT:
        return np.fft.irfft(half, n, out=out)
    import scipy.fft   # loaded on use: `import ppk` stays light (docs/architecture.md)
    return scipy.fft.irfft(half, n, workers=-1, overwrite_x=True)


_NUMPY_OUT = np.lib.NumpyVersion(np.__version__) >= "2.0.0"


def compose(factors: list[Factor], *, t: float, rtol: float, window: tuple[int, int] | None = None) -> Tilted:
    """The composition of ``factors`` tilted by e^{t j} per grid index j (see the module for what it certifies).
    ``rtol``: the relative error allowance of each factor's entries; ``window``: (first index, FFT length)
    instead of the one centred on the tilted mean."""
    prepared = factors
    stats = [p.moments(t) for p in prepared]
    # the normalisers in double (so the tilted masses below and the untilting use the very same number),
    # raised by more than their rounding (n ulps of a sum of positive terms) and the exponents': each
    # tilted vector then sums to at most 1, so its exact transform lies in the unit disk (any normaliser
    # is exact for untilting, as long as the same one is used both ways)
    entry_rels = [4 * U * (float(np.max(np.abs(p.log_v64) + abs(t) * np.abs(p.j64) + abs(st[0]), initial=0.0)) + 1)
                  for p, st in zip(prepared, stats)]
    log_zs = [LD(st[0] + 4 * (p.j.size + 8) * U + 2 * er) for p, st, er in zip(prepared, stats, entry_rels)]
    mean = float(sum(p.count * st[1] for p, st in zip(prepared, stats)))
    sd = math.sqrt(max(float(sum(p.count * st[2] for p, st in zip(prepared, stats))), 0.0))
    tail_bound = _TailBound(prepared, t, [st[0] for st in stats], sd)
    if window is None:
        n, s_lo, below, above = _placed(tail_bound, mean, sd)
    else:
        s_lo, n = window
        below, above = tail_bound(s_lo, False), tail_bound(s_lo + n, True)
    # each factor's tilted vector placed so that the composed index s sits at (s - s_lo) mod n
    # The spectrum is kept only on the entries whose modulus is at least e^-DROP_LOG (``live``, None for all,
    # with ``prod`` and ``gamma`` there); the others are set to 0, a change of the inverse transform's input
    # whose 2-norm (Parseval) is counted in err2.  A long composition's spectrum is gone within a few hundred
    # low frequencies (a smooth law), or a few around each multiple of a lattice's frequency (a Laplace
    # mechanism's atoms): the logs, angles and sines are taken there.  (Few window-long arrays: each fresh one
    # costs its pages' first touch, ~4 ms per 8 MiB.)
    live: npt.NDArray[np.int64] | None = None
    prod: Any = None
    gamma: Any = None                      # relative rounding bound of each spectral entry's powers
    full: Any = None                       # the first transform's buffer: the spectrum's, then the window's
    out: Any = None                        # the first factor's buffer: the inverse transform's
    log_mag: Any = None                    # log |prod B^k| so far, on ``live``
    dropped = 0                            # spectral entries set to 0 (each of modulus < e^(1 - DROP_LOG))
    fft_err = 0.0                          # sum_i k_i |B_hat_i - B_i|_2
    total = 0
    entry_rel = 0.0
    rho = _rho(n)
    for p, lz, er in zip(prepared, log_zs, entry_rels):
        # the tilted masses in double: each exponent's rounding (a few ulps of its terms' sizes) is a
        # relative error of the entry, counted per run in ``rel`` below
        arg = p.log_v64 + t * p.j64 - float(lz)
        entry_rel = max(entry_rel, er)
        # index j at j mod n: the cyclic convolution puts the composed index s (the sum of the factors'
        # indices) at s mod n, which the window [s_lo, s_lo + n) reads back
        x = np.asarray(np.bincount(p.j % n, weights=np.exp(arg), minlength=n), dtype=np.float64)   # (no copy)
        norm2 = math.sqrt(float(np.einsum("i,i->", x, x)))
        B = _rfft(x, n)
        dft_err = rho * math.sqrt(n) * norm2 * (1 + 1e-6)
        # plus the tilted masses below the double range, left out (each < 2.3e-308; a missing mass a moves
        # the k-fold composition by at most k a in 1-norm, hence in 2-norm)
        fft_err += p.count * (dft_err + 2.3e-308 * p.j.size * math.sqrt(n))
        if full is None:
            full = B
        elif live is not None:
            B = B[live]
        # |B| <= 1 for the exact transform of a probability vector: projecting the computed one onto the
        # unit disk moves it no further from the exact value, and keeps every power of it <= 1 (so the
        # powers' differences add up as sum k_i |B_hat_i - B_i|, without a (1 + eta)^K growth)
        log_r = np.abs(B, out=x[:B.size]) if B.size <= x.size else np.abs(B)   # (x's pages, not fresh ones)
        if out is None:
            out = x          # the first factor's buffer takes the inverse transform (its last use is before)
        del x
        np.minimum(log_r, 1.0, out=log_r)
        with np.errstate(divide="ignore"):
            np.log(log_r, out=log_r)
        # log |B|^k, and the running log |prod B^k| (each |B| <= 1: a later factor only shrinks it); the
        # entries where that falls below -DROP_LOG leave (see ``dropped`` below)
        mag = log_r * p.count
        if log_mag is None:
            log_mag = mag
        else:
            log_mag += mag
        keep = np.flatnonzero(log_mag >= -DROP_LOG)
        if keep.size < log_mag.size:
            dropped += log_mag.size - keep.size
            live = keep if live is None else live[keep]
            log_r, B, mag, log_mag = log_r[keep], B[keep], mag[keep], log_mag[keep]
            if prod is not None:
                prod, gamma = prod[keep], gamma[keep]
        if log_mag is mag:                  # (mag is about to become |B|^k)
            log_mag = mag.copy() if p is not prepared[-1] else None
        phase = np.angle(B)
        phase *= p.count
        np.mod(phase, 2 * math.pi, out=phase)
        np.exp(mag, out=mag)
        # mag e^{i phase} as mag cos + i mag sin: the very products the complex exp makes
        # (written straight into B's parts: no further buffer)
        np.cos(phase, out=B.real)
        B.real *= mag
        np.sin(phase, out=B.imag)
        B.imag *= mag
        del phase, mag
        if prod is None:
            prod = B
        else:
            prod *= B
        del B
        # the powers' rounding: log and angle to a few ulps, each multiplied by k; the exp and the product
        np.negative(log_r, out=log_r)             # |log r| (r <= 1), 0 where r = 0
        log_r[np.isinf(log_r)] = 0.0
        log_r += 2 * math.pi + 2
        log_r *= p.count
        log_r += 4
        log_r *= 8 * U
        if gamma is None:
            gamma = log_r
        else:
            gamma += log_r
        del log_r
        total += p.count
    # the full spectrum's entries n - i are the conjugates of the half's i (1 <= i < n/2): each inner entry
    # twice, the two ends once; the double sum of n/2 squares is within (log2 n) u of itself, below the margin
    # (before the inverse transform, which may then overwrite the spectrum: fewer window-long arrays at once)
    ge = np.abs(prod)
    ge *= gamma
    del gamma
    ge *= ge
    index = np.arange(ge.size) if live is None else live
    ge[(index > 0) & (index < n // 2)] *= 2.0
    del index
    power_err = math.sqrt(float(np.sum(ge)) * (1 + 1e-9)) / math.sqrt(n)
    del ge
    if live is not None:           # the spectrum into the first transform's buffer, 0 where it was dropped
        full[:] = 0.0
        full[live] = prod
        prod = full
    del live
    c = _irfft(prod, n, out)
    del prod, out
    norm_c = math.sqrt(float(np.einsum("i,i->", c, c)))     # (einsum: no BLAS threads spinning after it)
    # the entries set to 0: each exact prod B_hat^k there within e^{1 - DROP_LOG} (the computed log sum is
    # within a few ulps of its terms' sizes, far below 1), its computed power too (gamma << 1); counted twice
    # (the conjugate half), their inverse transform's 2-norm is at most this (Parseval)
    drop_err = math.exp(1.0 - DROP_LOG) * math.sqrt(2.0 * dropped / n)
    err2 = rho * norm_c * (1 + 2 * rho) + fft_err / math.sqrt(n) + power_err + drop_err
    err2 += U * norm_c                 # the clipping below moves no entry away from c_N
    # the composed index s_lo + i sits at (s_lo + i) mod n: rotated into the spectrum's dead buffer (n + 2
    # doubles), not a fresh array
    r = s_lo % n
    room: Any = full.view(np.float64)
    window_c = room[:n]
    del full
    if np.shares_memory(window_c, c):
        window_c, room = np.roll(c, -r), None
    else:
        window_c[:n - r] = c[r:]
        window_c[n - r:] = c[:r]
    del c
    np.maximum(window_c, 0.0, out=window_c)
    # the factors' own rounding, the conversion to double and the long-double normalisers (n ulps each)
    u_ld = float(np.finfo(LD).eps)
    log_rel = total * math.log1p(rtol + 2 * U + entry_rel + max(p.j.size for p in prepared) * u_ld)
    rel = math.expm1(log_rel) if log_rel < 700 else math.inf
    return Tilted(t, LD(sum(p.count * lz for p, lz in zip(prepared, log_zs))), s_lo, window_c, err2, below + above,
                  below, above, rel, mean, sd, room=room)


def compose_shifted(factors: list[Factor], like: Tilted, shift: float, rtol: float) -> Tilted:
    """The composition tilted by ``like.t + shift`` on ``like``'s window (the Q-masses of a pair beside the
    P-masses: Q = P e^{-L} makes the tilt ``t + Delta`` per index put them in the same place)."""
    return compose(factors, t=like.t + shift, rtol=rtol, window=(like.s_lo, int(like.c.size)))
