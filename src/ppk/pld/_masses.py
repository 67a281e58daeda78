"""The mass vectors of a privacy loss distribution (docs/accuracy.md, "Composition").

:class:`_Masses` is one representation of the pair (P, Q): the P- and Q-masses of buckets of the loss
on a grid of interval Delta, the mass cut off at either end, and bounds on the 2-norm error of the two
vectors.  A :class:`~ppk.pld.PrivacyLossDistribution` holds two of them: buckets (its lower end) and
the dominating two-point pair on the grid (its upper end, :func:`_atoms_of`).  Here: merging bucket
pairs (Delta doubles), cutting off the tails, the two-point split, and composing two representations
(convolution, ppk.pld._convolution).

**Two representations, one for each end.**  The buckets above give the lower end.  The upper end
comes from a *dominating* pair on the grid: each bucket's masses are moved to its two edges, in the
proportions that keep both its P-mass and its Q-mass (the two-point split).  Any distribution of
losses inside [lo, hi] with these masses is a garbling of the two-point one, so the two-point pair
dominates the bucket for every eps at once (Blackwell), and dominance survives composition.  Its
atoms sit exactly on the grid, so composing them keeps them there: the upper end never widens with
the number of compositions.  At every grid point eps = k Delta it equals the exact delta of the
bucketed pair -- the "connect-the-dots" PLD of Doroshenko et al. (2022), which dp_accounting uses.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._validate import integer
from . import _convolution

LD = np.longdouble
_SLACK = 1e-9          # bucket-edge slack (in buckets) for the rounding of L / Delta
_MASS_RTOL = 1e-12     # relative rounding allowance of bucket masses, added to the bracket
#: Most buckets a builder creates (16M: 256 MiB per mass vector in long double); checked before allocating.
MAX_BUILD_BUCKETS = 1 << 24

#: Fewest buckets ``max_buckets`` may ask for.  Merging pairs (Delta doubles) shrinks a vector only
#: while it is longer than this: a loss range spanning 0 ends as buckets 0..1 and the dominating pair's
#: atoms at -Delta, 0, Delta, which no further doubling reduces.  With max_buckets = 2 the merging
#: never stopped (Delta doubled to inf).
MIN_MAX_BUCKETS = 3


def _check_max_buckets(max_buckets: object) -> int:
    value = integer("max_buckets", max_buckets)
    if not MIN_MAX_BUCKETS <= value <= MAX_BUILD_BUCKETS:
        raise ValueError(f"max_buckets must be in [{MIN_MAX_BUCKETS}, {MAX_BUILD_BUCKETS}] (the dominating pair "
                         f"needs atoms at -Delta, 0 and Delta; above, 256 MiB per mass vector), got {value}")
    return value


class _Masses:
    """One representation: P- and Q-masses of buckets offset, offset+1, ... (bucket k: losses in
    [(k - width) Delta, k Delta]; width 0: atoms at k Delta), the mass cut off at either end
    (``overflow_p``, ``overflow_q``: counted as infinite loss by the upper end), and bounds on the
    2-norm error of the two vectors (FFT rounding, ppk.pld._convolution)."""

    __slots__ = ("offset", "p", "q", "width", "overflow_p", "overflow_q", "err_p", "err_q")

    def __init__(self, offset: int, p, q, width: float, overflow_p=LD(0), overflow_q=LD(0), err_p: float = 0.0,
                 err_q: float = 0.0):
        self.offset, self.p, self.q, self.width = int(offset), p, q, float(width)
        self.overflow_p, self.overflow_q = LD(overflow_p), LD(overflow_q)
        self.err_p, self.err_q = float(err_p), float(err_q)

    def cap(self) -> None:
        """Keep the carried bounds finite.  Each bounds a probability or the distance to a vector of
        probabilities: the mass cut off is at most 1, and the true masses (disjoint events, total <= 1)
        have 2-norm <= 1, so |computed - true|_2 <= |computed|_2 + 1.  Past those values the bounds say
        nothing more, but uncapped they grew without limit under self-composition (FFT error bounds double
        per squaring): 1e36 at k = 1e12, then inf, and inf * 0 made the bracket NaN at k = 2^62."""
        one = LD(1)
        self.overflow_p, self.overflow_q = min(self.overflow_p, one), min(self.overflow_q, one)
        self.err_p = min(self.err_p, float(np.sqrt(np.sum(np.square(self.p)))) + 1.0)
        self.err_q = min(self.err_q, float(np.sqrt(np.sum(np.square(self.q)))) + 1.0)

    def copy(self) -> "_Masses":
        return _Masses(self.offset, self.p.copy(), self.q.copy(), self.width, self.overflow_p, self.overflow_q,
                       self.err_p, self.err_q)

    def coarsen(self, dx: float) -> None:
        """Merge bucket pairs (``dx`` the interval before): Delta doubles, bucket k goes to ceil(k/2) (losses rounded up); atoms
        between two new grid points are split between them (two-point split, still dominating)."""
        k = np.arange(self.offset, self.offset + self.p.size)
        if self.width == 0:
            # an atom at odd k lies at loss (k/2) Delta' between ceil(k/2) - 1 and ceil(k/2)
            lo_k = np.floor(k / 2).astype(np.int64)
            odd = (k % 2) != 0
            p_hi, q_hi = self.p.copy(), self.q.copy()
            p_lo, q_lo = np.zeros_like(self.p), np.zeros_like(self.q)
            if odd.any():
                ph, qh, pl, ql = _two_point(self.p[odd], self.q[odd], lo_k[odd].astype(LD), 1, LD(2 * dx))
                p_hi[odd], q_hi[odd], p_lo[odd], q_lo[odd] = ph, qh, pl, ql
            new_hi = np.where(odd, lo_k + 1, k // 2)
            off = int(lo_k[0])
            size = int(new_hi[-1]) - off + 1
            p, q = np.zeros(size, dtype=LD), np.zeros(size, dtype=LD)
            np.add.at(p, new_hi - off, p_hi)
            np.add.at(q, new_hi - off, q_hi)
            np.add.at(p, lo_k - off, p_lo)
            np.add.at(q, lo_k - off, q_lo)
            self.p, self.q, self.offset = p, q, off
        else:
            new_k = -((-k) // 2)
            off = int(new_k[0])
            size = int(new_k[-1]) - off + 1
            p, q = np.zeros(size, dtype=LD), np.zeros(size, dtype=LD)
            np.add.at(p, new_k - off, self.p)
            np.add.at(q, new_k - off, self.q)
            self.p, self.q, self.offset = p, q, off
            self.width = (self.width + 1) / 2
        # merging adds entries pairwise: the 2-norm of the error grows by at most sqrt(2)
        self.err_p *= math.sqrt(2)
        self.err_q *= math.sqrt(2)
        self.cap()

    def truncate(self, log_bound: float) -> None:
        """Cut off the mass beyond exp(log_bound) at both ends (into the overflow, counted as infinite loss)."""
        n = self.p.size
        # below the rounding noise of an FFT composition (sqrt(n) times its 2-norm error bound, which
        # the upper end carries anyway) the masses are unknown: cutting them there at most doubles it
        tau = max(math.exp(log_bound), math.sqrt(n) * max(self.err_p, self.err_q))
        # locate the cuts with double-precision cumulative sums (fast), shrunk by a margin so that the
        # long-double mass actually cut off stays below tau; then add that mass exactly
        p64, q64 = self.p.astype(np.float64), self.q.astype(np.float64)
        limit = tau * (1 - 1e-6)
        left = int(min(np.searchsorted(np.cumsum(p64), limit, side="right"),
                       np.searchsorted(np.cumsum(q64), limit, side="right")))
        right = int(min(np.searchsorted(np.cumsum(p64[::-1]), limit, side="right"),
                        np.searchsorted(np.cumsum(q64[::-1]), limit, side="right")))
        if left + right >= n or left + right == 0:
            return
        gone_p = self.p[:left].sum() + self.p[n - right:].sum()
        gone_q = self.q[:left].sum() + self.q[n - right:].sum()
        # the true mass cut off may exceed the computed one by the error of those entries
        slack = math.sqrt(left + right)
        self.overflow_p += gone_p + LD(slack * self.err_p)
        self.overflow_q += gone_q + LD(slack * self.err_q)
        self.p, self.q, self.offset = self.p[left:n - right].copy(), self.q[left:n - right].copy(), self.offset + left


def _two_point(p, q, lo, width, dx):
    """Split buckets with losses in [lo dx, (lo + width) dx] (P-mass p, Q-mass q; ``width`` one number
    for all) into atoms at the two edges keeping both masses: p_hi = (p - q e^lo)/(1 - e^(-width dx)),
    clipped to [0, p] against rounding.  Returns (p_hi, q_hi, p_lo, q_lo).

    One long-double exp per bucket: the span factor is one number, and e^(-hi) = e^(-width dx)/e^lo
    (two roundings instead of one; at 1e6 buckets the three exps were most of a PLD's construction)."""
    span = LD(width) * LD(dx)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        e_lo = np.exp(lo * dx)
        p_hi = (p - q * e_lo) / -np.expm1(-span)
        p_hi[~np.isfinite(p_hi)] = 0.0            # (nan_to_num's six passes over long doubles, in two)
        np.clip(p_hi, 0, p, out=p_hi)
        q_hi = p_hi * (np.exp(-span) / e_lo)      # >= 0 or NaN (0 inf): no -inf
        q_hi[np.isnan(q_hi)] = 0.0
        np.minimum(q_hi, q, out=q_hi)
    return p_hi, q_hi, p - p_hi, q - q_hi


def _atoms_of(buckets: _Masses, dx: float) -> _Masses:
    """The dominating two-point pair of a bucket representation, on the grid (width 0)."""
    if buckets.width == 0:
        return buckets.copy()
    k = np.arange(buckets.offset, buckets.offset + buckets.p.size)
    # width ~ 1 (a builder's rounding slack of ~1e-9 buckets is covered by _MASS_RTOL): lo = k - 1
    w = 1 if buckets.width <= 1 + 1e-6 else math.ceil(buckets.width)
    p_hi, q_hi, p_lo, q_lo = _two_point(buckets.p, buckets.q, (k - w).astype(LD), w, LD(dx))
    size = buckets.p.size + w
    p, q = np.zeros(size, dtype=LD), np.zeros(size, dtype=LD)
    p[w:] += p_hi
    q[w:] += q_hi
    p[:-w] += p_lo
    q[:-w] += q_lo
    return _Masses(buckets.offset - w, p, q, 0.0, buckets.overflow_p, buckets.overflow_q, buckets.err_p,
                   buckets.err_q)


def _compose_masses(a: _Masses, b: _Masses, method: str) -> _Masses:
    p, err_p = _convolution.convolve(a.p, a.err_p, b.p, b.err_p, method=method)
    q, err_q = _convolution.convolve(a.q, a.err_q, b.q, b.err_q, method=method)
    sa, sb, qa, qb = a.p.sum(), b.p.sum(), a.q.sum(), b.q.sum()
    out = _Masses(a.offset + b.offset, p, q, a.width + b.width,
                  a.overflow_p * (sb + b.overflow_p) + sa * b.overflow_p,
                  a.overflow_q * (qb + b.overflow_q) + qa * b.overflow_q, err_p, err_q)
    out.cap()
    return out


def _union(a, b):
    return a + b - a * b


def round_up(x: Fraction) -> float:
    """The least double >= x."""
    y = float(x)
    return math.nextafter(y, math.inf) if Fraction(y) < x else y


def plan_cap(factors) -> float:
    """sum k_i cap_i over a plan's leaves (each its ``_max_loss``, or its own plan's sum), exactly, rounded up;
    inf if some leaf has none (None)."""
    caps = [(plan_cap(leaf._plan.factors) if leaf._plan is not None else leaf._max_loss, k) for leaf, k in factors]
    if any(c is None or not math.isfinite(c) for c, _ in caps):
        return math.inf
    return round_up(sum((Fraction(c) * k for c, k in caps), Fraction(0)))
