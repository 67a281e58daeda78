"""Privacy loss distributions (privacy buckets) with honest [lower, upper] brackets.

A :class:`PrivacyLossDistribution` describes a pair of output laws (P, Q) --
``pmf_upper`` and ``pmf_lower`` in dp_accounting's words -- through the
privacy loss L = log(P/Q) grouped into buckets of width
``value_discretization_interval`` (Delta).  Bucket k holds every outcome whose
loss lies in [(k - w) Delta, k Delta] (w = 1 when built, it grows under
composition), and stores **two** masses: its P-mass and its Q-mass.

Why both masses (the "error correction" of privacy buckets, made exact): for
a bucket whose losses all exceed eps, its contribution to
H_{e^eps}(P||Q) = sum_x (P(x) - e^eps Q(x))_+ is exactly P-mass - e^eps Q-mass.
Only the w buckets that straddle eps are uncertain.  For those, with u = e^{-L}
the contribution is E_P[(1 - e^eps u)_+] at the known mean E_P[u] = Q-mass/P-mass:
Jensen gives the lower bound (P-mass - e^eps Q-mass)_+, and the convex function
is largest when the mass sits at the bucket's two ends, which gives the upper
bound (P-mass - Q-mass e^lo)/(1 - e^{lo-hi}) * (1 - e^{eps-hi}) -- both attained
by some pair of distributions with these masses, so no bound from these
numbers is tighter.  Hence

    lower <= delta(eps) <= upper,   upper <= the rounding-up (privacy buckets) bound,

and the bracket width is at most the P-mass of the w buckets next to eps.  Both
orders come from the same object (L -> -L swaps the masses), and
:meth:`get_delta_for_epsilon` reports the larger, like ppk's curve (docs/method.md, "The model").

Infinities: mass where Q = 0 (P = 0) is a distinguishing event, kept apart
(``infinity_mass``); mass cut off outside the loss range when a continuous law
is bucketed is a *numerical* infinity (``overflow_mass``), counted as L = +inf
by the upper bound and as 0 by the lower bound.

**Two representations, one for each end.**  The buckets above give the lower end.  The upper end
comes from a *dominating* pair on the grid: each bucket's masses are moved to its two edges, in the
proportions that keep both its P-mass and its Q-mass (the two-point split).  Any distribution of
losses inside [lo, hi] with these masses is a garbling of the two-point one, so the two-point pair
dominates the bucket for every eps at once (Blackwell), and dominance survives composition.  Its
atoms sit exactly on the grid, so composing them keeps them there: the upper end never widens with
the number of compositions.  At every grid point eps = k Delta it equals the exact delta of the
bucketed pair -- the "connect-the-dots" PLD of Doroshenko et al. (2022), which dp_accounting uses.

Composition of independent mechanisms convolves the mass vectors (ppk._convolution): the exact
long-double direct convolution while it is cheap, otherwise a double FFT whose rounding is bounded by
a proven formula; the bound (a 2-norm error per vector) is carried along and added to the upper end
and taken from the lower one.  Mass below ``exp(log_mass_truncation_bound)`` at either end is cut off
after each composition and counted as an infinite loss by the upper end.  Widths of the buckets add;
when a vector grows past ``max_buckets`` pairs of buckets merge (Delta doubles) instead of failing.
Masses are long doubles, so deltas far below 1e-300 stay representable (see
:meth:`log_delta_bracket`).
"""
from __future__ import annotations

import copy
import math
import numbers
from typing import TYPE_CHECKING, Any, Callable, Mapping, overload

import numpy as np
import numpy.typing as npt
from . import _convolution, _kernels
from ._logmath import log1mexp
from ._search import smallest_feasible
from ._validate import choice, flag, instance, integer, real, real_array, sequence

if TYPE_CHECKING:
    from .counting import CountingQuery
from ._typing import FloatArray

__all__ = ["PrivacyLossDistribution"]

LD = np.longdouble
_SLACK = 1e-9          # bucket-edge slack (in buckets) for the rounding of L / Delta
_MASS_RTOL = 1e-12     # relative rounding allowance of bucket masses, added to the bracket
#: Most buckets a builder creates (16M: 256 MiB per mass vector in long double); checked before allocating.
MAX_BUILD_BUCKETS = 1 << 24


#: Most vector entries :meth:`PrivacyLossDistribution.self_compose` convolves in all (the sum of the
#: lengths of the operands): about 10 s on one core (3-4 million a second at a million buckets).
MAX_SELF_COMPOSE_WORK = 35_000_000

#: Fewest buckets ``max_buckets`` may ask for.  Merging pairs (Delta doubles) shrinks a vector only
#: while it is longer than this: a loss range spanning 0 ends as buckets 0..1 and the dominating pair's
#: atoms at -Delta, 0, Delta, which no further doubling reduces.  With max_buckets = 2 the merging
#: never stopped (Delta doubled to inf).
MIN_MAX_BUCKETS = 3
#: Most straddling buckets the lower end reads one by one at an eps; beyond, they are read in this
#: many runs of neighbours, each bounded by Jensen's inequality as one bucket.  A width in the
#: millions (a self-composition of a one-bucket PLD) made delta_bracket loop that many times.
_STRADDLE_RUNS = 64


def _check_max_buckets(max_buckets: object) -> int:
    value = integer("max_buckets", max_buckets)
    if not MIN_MAX_BUCKETS <= value <= MAX_BUILD_BUCKETS:
        raise ValueError(f"max_buckets must be in [{MIN_MAX_BUCKETS}, {MAX_BUILD_BUCKETS}] (the dominating pair "
                         f"needs atoms at -Delta, 0 and Delta; above, 256 MiB per mass vector), got {value}")
    return value


def _fitting_interval(dx: float, span: float, extra: int, max_buckets: int, what: str) -> float:
    """The smallest dx * 2^j whose grid covers a loss range of length ``span`` in at most ``max_buckets``
    points (``span / interval + extra`` of them).  Builders use it instead of building more buckets and
    merging them right after (the constructor merges pairs, which is the doubled grid): no allocation
    beyond max_buckets, at any loss range."""
    if not math.isfinite(span):
        raise ValueError(f"{what}: its privacy loss range is beyond the float range (the two laws are "
                         "disjoint to double precision, delta = 1 at every eps of interest)")
    room = max(1, max_buckets - extra)   # a tiny max_buckets: the constructor merges the rest

    def scaled(j: int) -> float:          # dx 2^j, inf past the float range (2.0**j raises there)
        try:
            return math.ldexp(dx, j)
        except OverflowError:
            return math.inf
    # the logs separately: span / (dx room) overflows at a subnormal dx (5e-324)
    j = 0 if span <= dx * room else max(0, math.ceil(math.log2(span) - math.log2(dx) - math.log2(room)) - 1)
    # log2 rounds: settle the last step or two by checking (bounded: at most a few passes)
    while span / scaled(j) > room:
        j += 1
    out = scaled(j)
    if not math.isfinite(out):
        raise ValueError(f"{what}: its loss range {span:.3g} fits no grid of at most max_buckets = {max_buckets} "
                         "buckets within the float range")
    return out


def _positive_part(mp_, mq_, eps):
    """(P-mass - e^eps Q-mass)_+ per bucket, as P (1 - e^{eps + log Q - log P})_+: no e^eps overflows."""
    with np.errstate(divide="ignore", invalid="ignore"):
        d = LD(eps) + np.log(mq_) - np.log(mp_)
        return np.where(d < 0, mp_ * -np.expm1(np.minimum(d, LD(0))), LD(0))


def _log_interval_masses(log_sf_lo, log_sf_hi, log_cdf_lo, log_cdf_hi):
    """log of the mass between two edges, from whichever tail is smaller (no cancellation)."""
    upper_side = log_sf_lo < np.log(0.5)
    with np.errstate(divide="ignore"):
        up = log_sf_lo + np.log(-np.expm1(np.minimum(log_sf_hi - log_sf_lo, 0.0)))
        down = log_cdf_hi + np.log(-np.expm1(np.minimum(log_cdf_lo - log_cdf_hi, 0.0)))
    return np.where(upper_side, up, down)


class _Masses:
    """One representation: P- and Q-masses of buckets offset, offset+1, ... (bucket k: losses in
    [(k - width) Delta, k Delta]; width 0: atoms at k Delta), the mass cut off at either end
    (``overflow_p``, ``overflow_q``: counted as infinite loss by the upper end), and bounds on the
    2-norm error of the two vectors (FFT rounding, ppk._convolution)."""

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
        p_hi = np.clip(np.nan_to_num(p_hi, nan=0.0, posinf=0.0, neginf=0.0), 0, p)
        q_hi = np.minimum(np.nan_to_num(p_hi * (np.exp(-span) / e_lo), nan=0.0, posinf=np.inf), q)
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


class PrivacyLossDistribution:
    """Bucketed privacy loss of a pair (P, Q) with both masses per bucket.  Build it with a ``from_*``.

    ``composition`` chooses how :meth:`compose` convolves: ``"auto"`` (exact while cheap, else the
    certified FFT), ``"exact"`` (long-double direct: for deltas far below 1e-12) or ``"fft"``.
    """

    def __init__(self, *, interval: float, offset: int, mass_upper: npt.ArrayLike, mass_lower: npt.ArrayLike, width: float = 1.0,
                 infinity_mass_upper: float = 0.0, infinity_mass_lower: float = 0.0, overflow_mass_upper: float = 0.0,
                 overflow_mass_lower: float = 0.0, pessimistic_estimate: bool = True, max_buckets: int = 1 << 20,
                 shared_noise_key: tuple[int, int, float] | None = None, composition: str = "auto",
                 log_mass_truncation_bound: float = -100.0, _atoms: _Masses | None = None):
        self.value_discretization_interval = real("interval", interval, minimum=0.0, min_inclusive=False)
        offset = integer("offset", offset, minimum=-(2**62), maximum=2**62)
        p = self._masses("mass_upper", mass_upper)
        q = self._masses("mass_lower", mass_lower)
        if p.shape != q.shape:
            raise ValueError(f"mass_upper and mass_lower must have the same length, got {p.size} and {q.size}")
        width = real("width", width, minimum=0.0)
        max_buckets = _check_max_buckets(max_buckets)
        if _atoms is None:
            # the dominating pair spreads each bucket over ceil(width) grid steps: estimate its vectors
            # before allocating them (width=1e12 asked for 2 x 14.6 TiB)
            points = p.size + math.ceil(width)
            if points > MAX_BUILD_BUCKETS:
                raise ValueError(
                    f"width = {width:.6g} (buckets of the interval) with {p.size:,} buckets makes the dominating "
                    f"pair span {points:.3g} grid points, 2 vectors of {points * 16:.3g} bytes; the limit is "
                    f"{MAX_BUILD_BUCKETS:,} points ({MAX_BUILD_BUCKETS * 16 // 2**20} MiB a vector): give the "
                    "masses on a coarser interval, where the same losses span fewer buckets")

        def probability(name: str, value: object) -> np.longdouble:
            return LD(real(name, value, minimum=0.0, maximum=1.0 + 1e-9))

        buckets = _Masses(offset, p, q, width, probability("overflow_mass_upper", overflow_mass_upper),
                          probability("overflow_mass_lower", overflow_mass_lower))
        composition = choice("composition", composition, _convolution.METHODS)
        pessimistic_estimate = flag("pessimistic_estimate", pessimistic_estimate)
        shared_noise_key = _check_noise_key(shared_noise_key)
        self._install(buckets=buckets,
                      atoms=_atoms if _atoms is not None else _atoms_of(buckets, self.value_discretization_interval),
                      infinity_mass_upper=probability("infinity_mass_upper", infinity_mass_upper),
                      infinity_mass_lower=probability("infinity_mass_lower", infinity_mass_lower),
                      pessimistic_estimate=pessimistic_estimate,
                      max_buckets=max_buckets,
                      composition=composition,
                      log_mass_truncation_bound=real("log_mass_truncation_bound", log_mass_truncation_bound,
                                                     maximum=-1.0),
                      shared_noise_key=shared_noise_key)

    def _install(self, *, buckets: _Masses, atoms: _Masses, infinity_mass_upper: np.longdouble,
                 infinity_mass_lower: np.longdouble, pessimistic_estimate: bool, max_buckets: int, composition: str,
                 log_mass_truncation_bound: float, shared_noise_key: tuple[int, int, float] | None) -> None:
        """Every field but the interval, from validated parts (the constructor and compose share it);
        vectors longer than ``max_buckets`` are coarsened."""
        self.infinity_mass_upper = infinity_mass_upper   # loss +inf
        self.infinity_mass_lower = infinity_mass_lower   # loss -inf
        self._buckets, self._atoms = buckets, atoms
        self.pessimistic_estimate = pessimistic_estimate
        self.max_buckets = max_buckets
        self.composition = composition
        self.log_mass_truncation_bound = log_mass_truncation_bound
        self._shared_noise_key = shared_noise_key
        self._sums: tuple | None = None
        while max(self._buckets.p.size, self._atoms.p.size) > self.max_buckets:
            # merging shrinks both vectors while they are longer than MIN_MAX_BUCKETS <= max_buckets, so
            # this ends within log2(length) passes; the checks keep it bounded whatever the fields hold
            # (a vector that stops shrinking, or an interval that would double past the float range)
            before = (self._buckets.p.size, self._atoms.p.size)
            if not math.isfinite(2 * self.value_discretization_interval):
                break
            self._coarsen()
            if (self._buckets.p.size, self._atoms.p.size) == before:
                break

    def with_composition(self, composition: str) -> "PrivacyLossDistribution":
        """The same PLD composing by ``composition`` (``"auto"``, ``"exact"`` or ``"fft"``); shares the masses."""
        composition = choice("composition", composition, _convolution.METHODS)
        out = copy.copy(self)
        out.composition = composition
        return out

    # the bucket representation, under the names the builders and users know
    @property
    def offset(self) -> int:
        return self._buckets.offset

    @property
    def mass_upper(self) -> npt.NDArray[np.longdouble]:
        """P-mass of each bucket (the lower end's representation)."""
        return self._buckets.p

    @property
    def mass_lower(self) -> npt.NDArray[np.longdouble]:
        """Q-mass of each bucket."""
        return self._buckets.q

    @property
    def width(self) -> float:
        """Bucket k holds losses in [(k - width) Delta, k Delta] (width grows under composition)."""
        return self._buckets.width

    @property
    def overflow_mass_upper(self) -> np.longdouble:
        return self._buckets.overflow_p

    @property
    def overflow_mass_lower(self) -> np.longdouble:
        return self._buckets.overflow_q

    @staticmethod
    def _masses(name, values):
        try:
            arr = np.asarray(values, dtype=LD)
        except (TypeError, ValueError, OverflowError):
            raise TypeError(f"{name} must be a non-empty 1-d array of masses, got {type(values).__name__}") from None
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(f"{name} must be a non-empty 1-d array of masses, got shape {arr.shape}")
        if not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise ValueError(f"{name} must hold finite masses >= 0")
        return arr

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_pmfs(cls, pmf_upper: npt.ArrayLike, pmf_lower: npt.ArrayLike, *, value_discretization_interval: float = 1e-4,
                  pessimistic_estimate: bool = True, tolerance: float = 1e-9, max_buckets: int = 1 << 20) -> PrivacyLossDistribution:
        """From two pmfs on a common support: ``P = pmf_upper``, ``Q = pmf_lower``; loss log(P/Q).

        Each outcome goes to the bucket k = ceil(L / Delta), i.e. L in [(k-1) Delta, k Delta].
        The discretisation error of the reported bound is at most the P-mass of the one bucket
        that straddles eps (per order); :meth:`delta_bracket` gives both ends.
        """
        pessimistic_estimate = flag("pessimistic_estimate", pessimistic_estimate)
        p, q = (cls._check_pmf(name, v, tolerance) for name, v in (("pmf_upper", pmf_upper),
                                                                   ("pmf_lower", pmf_lower)))
        if p.shape != q.shape:
            raise ValueError(f"pmf_upper and pmf_lower must have the same length, got {p.size} and {q.size}")
        dx = real("value_discretization_interval", value_discretization_interval, minimum=0.0, min_inclusive=False)
        max_buckets = _check_max_buckets(max_buckets)
        both = (p > 0) & (q > 0)
        loss = np.log(p[both]) - np.log(q[both])
        if loss.size:
            dx = _fitting_interval(dx, float(np.max(loss) - np.min(loss)), 4, max_buckets, "the pmfs")
        x = loss / dx
        k = np.ceil(x + _SLACK * (1 + np.abs(x))).astype(np.int64)
        width = 1 + 2 * _SLACK * (1 + (float(np.max(np.abs(x))) if x.size else 0.0))
        off = int(k.min()) if k.size else 0
        size = int(k.max()) - off + 1 if k.size else 1
        mp_, mq_ = np.zeros(size, dtype=LD), np.zeros(size, dtype=LD)
        np.add.at(mp_, k - off, p[both].astype(LD))
        np.add.at(mq_, k - off, q[both].astype(LD))
        return cls(interval=dx, offset=off, mass_upper=mp_, mass_lower=mq_, width=width,
                   infinity_mass_upper=p[(p > 0) & (q == 0)].astype(LD).sum(),
                   infinity_mass_lower=q[(q > 0) & (p == 0)].astype(LD).sum(),
                   pessimistic_estimate=pessimistic_estimate, max_buckets=max_buckets)

    @staticmethod
    def _check_pmf(name, values, tolerance):
        tolerance = real("tolerance", tolerance, minimum=0.0, maximum=1.0)
        arr = np.asarray(values)
        if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iuf":
            raise ValueError(f"{name} must be a non-empty 1-d array of real numbers")
        arr = arr.astype(np.float64)
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} has a non-finite entry (NaN or inf)")
        if np.any(arr < 0):
            raise ValueError(f"{name} has a negative entry: {float(arr.min())}")
        total = float(arr.sum())
        if abs(total - 1.0) > tolerance:
            raise ValueError(f"{name} must sum to 1 within {tolerance}, sums to {total!r}")
        return arr

    @classmethod
    def _from_tails(cls, dx, k_lo, k_hi, log_p_up, log_p_down, log_q_up, log_q_down, **kw):
        """Buckets k_lo+1..k_hi from the log tails at the edges k Delta, k = k_lo..k_hi.

        log_p_up[i] = log P(L > edge_i), log_p_down[i] = log P(L <= edge_i); same for Q.
        """
        lp = _log_interval_masses(log_p_up[:-1], log_p_up[1:], log_p_down[:-1], log_p_down[1:])
        lq = _log_interval_masses(log_q_up[:-1], log_q_up[1:], log_q_down[:-1], log_q_down[1:])
        return cls(interval=dx, offset=k_lo + 1, mass_upper=np.exp(lp.astype(LD)), mass_lower=np.exp(lq.astype(LD)),
                   overflow_mass_upper=np.exp(LD(log_p_up[-1])) + np.exp(LD(log_p_down[0])),
                   overflow_mass_lower=np.exp(LD(log_q_up[-1])) + np.exp(LD(log_q_down[0])), **kw)

    @classmethod
    def from_gaussian(cls, *, sigma: float, sensitivity: float = 1.0, value_discretization_interval: float = 1e-4,
                      log_mass_truncation_bound: float = -100.0, pessimistic_estimate: bool = True,
                      max_buckets: int = 1 << 20) -> PrivacyLossDistribution:
        """Gaussian mechanism N(0, sigma^2) vs N(sensitivity, sigma^2): L ~ N(+-mu, 2 mu), mu = s^2/(2 sigma^2).

        Bucket masses are exact normal-CDF differences; mass beyond the loss range where the
        tails fall below ``exp(log_mass_truncation_bound)`` goes to the overflow (infinity) bucket.
        """
        return cls._gaussian(sigma, sensitivity, value_discretization_interval, log_mass_truncation_bound,
                             pessimistic_estimate, max_buckets, "sigma")

    @classmethod
    def _gaussian(cls, sigma, sensitivity, value_discretization_interval, log_mass_truncation_bound,
                  pessimistic_estimate, max_buckets, sigma_name: str) -> PrivacyLossDistribution:
        """from_gaussian, its messages naming sigma ``sigma_name`` (dp_accounting's ``standard_deviation``)."""
        sigma = real(sigma_name, sigma, minimum=0.0, min_inclusive=False)
        s = real("sensitivity", sensitivity, minimum=0.0, min_inclusive=False)
        dx = real("value_discretization_interval", value_discretization_interval, minimum=0.0, min_inclusive=False)
        bound = real("log_mass_truncation_bound", log_mass_truncation_bound, maximum=-1.0)
        pessimistic_estimate = flag("pessimistic_estimate", pessimistic_estimate)
        max_buckets = _check_max_buckets(max_buckets)
        ratio = s / sigma
        mu = 0.5 * ratio * ratio
        if mu < 1e-300:     # the two laws coincide to the float range: all mass at loss 0
            return cls(interval=dx, offset=0, mass_upper=[1.0], mass_lower=[1.0],
                       pessimistic_estimate=pessimistic_estimate, max_buckets=max_buckets)
        sd = math.sqrt(2 * mu) if math.isfinite(mu) else math.inf
        z = math.sqrt(-2 * bound) + 2
        dx = _fitting_interval(dx, 2 * (mu + z * sd), 3, max_buckets, f"sensitivity/{sigma_name} = {ratio:.3g}")
        k_lo, k_hi = math.floor((-mu - z * sd) / dx), math.ceil((mu + z * sd) / dx)
        edges = np.arange(k_lo, k_hi + 1) * dx
        zp, zq = (edges - mu) / sd, (edges + mu) / sd
        logsf = _kernels.norm_logsf   # log P(Z > x); log P(Z <= x) = logsf(-x)
        return cls._from_tails(dx, k_lo, k_hi, logsf(zp), logsf(-zp), logsf(zq), logsf(-zq),
                               pessimistic_estimate=pessimistic_estimate, max_buckets=max_buckets)

    @classmethod
    def from_laplace(cls, *, scale: float, sensitivity: float = 1.0, value_discretization_interval: float = 1e-4,
                     pessimistic_estimate: bool = True, max_buckets: int = 1 << 20) -> PrivacyLossDistribution:
        """Laplace mechanism Lap(0, b) vs Lap(sensitivity, b): L in [-s/b, s/b], atoms at both ends."""
        return cls._laplace(scale, sensitivity, value_discretization_interval, pessimistic_estimate, max_buckets,
                            "scale")

    @classmethod
    def _laplace(cls, scale, sensitivity, value_discretization_interval, pessimistic_estimate, max_buckets,
                 scale_name: str) -> PrivacyLossDistribution:
        """from_laplace, its messages naming the scale ``scale_name`` (dp_accounting's ``parameter``)."""
        b = real(scale_name, scale, minimum=0.0, min_inclusive=False)
        s = real("sensitivity", sensitivity, minimum=0.0, min_inclusive=False)
        dx = real("value_discretization_interval", value_discretization_interval, minimum=0.0, min_inclusive=False)
        pessimistic_estimate = flag("pessimistic_estimate", pessimistic_estimate)
        max_buckets = _check_max_buckets(max_buckets)
        e0 = s / b
        dx = _fitting_interval(dx, 2 * e0, 4, max_buckets, f"sensitivity/{scale_name} = {e0:.3g}")
        k_top = max(1, math.ceil(e0 / dx - _SLACK))
        edges = np.arange(-k_top, k_top + 1) * dx
        # continuous part: o in (0, s), L = (s - 2o)/b decreasing; L <= e  <=>  o >= (s - b e)/2
        o = np.clip((s - b * np.clip(edges, -e0, e0)) / 2, 0.0, s)
        # P = Lap(0, b) on o >= 0: P(o >= x) = e^{-x/b}/2;  Q = Lap(s, b) on o <= s: Q(o <= x) = e^{-(s-x)/b}/2
        p_cont_le = 0.5 * (np.exp(-o / b) - math.exp(-s / b))           # P(0 <= o < s, L <= e)
        q_cont_le = 0.5 * (1 - np.exp(-(s - o) / b))                     # Q(0 <= o < s, L <= e)
        p_cdf = LD(0.5 * math.exp(-s / b)) + p_cont_le.astype(LD)      # + atom at L = -e0 (o >= s)
        q_cdf = LD(0.5) + q_cont_le.astype(LD)
        mp_, mq_ = np.diff(p_cdf), np.diff(q_cdf)
        mp_[-1] += LD(0.5)                                              # atom at L = +e0 (o <= 0)
        mq_[-1] += LD(0.5 * math.exp(-s / b))
        mp0 = np.zeros(mp_.size + 1, dtype=LD)
        mq0 = np.zeros(mq_.size + 1, dtype=LD)
        mp0[1:], mq0[1:] = mp_, mq_
        mp0[0], mq0[0] = p_cdf[0], q_cdf[0]                               # the atom at -e0
        return cls(interval=dx, offset=-k_top, mass_upper=mp0, mass_lower=mq0, width=1 + 2 * _SLACK * (1 + k_top),
                   pessimistic_estimate=pessimistic_estimate, max_buckets=max_buckets)

    @classmethod
    def from_counting_query(cls, query: CountingQuery, *, value_discretization_interval: float = 1e-4, log_mass_truncation_bound: float = -100.0,
                            pessimistic_estimate: bool = True, max_buckets: int = 1 << 20) -> PrivacyLossDistribution:
        """The natural-noise count a + Bin(N, p) + N(0, sigma^2), P = challenge row 1, Q = row 0.

        Its loss is monotone in the output (docs/method.md), so bucket k's masses are the masses of the
        output interval between the thresholds where the loss is (k-1) Delta and k Delta: two tail
        evaluations of the C++ kernel per edge, no output grid (the roots of neighbouring edges start
        from each other, docs/method.md).  When the loss range needs more than ``max_buckets`` buckets
        the interval is doubled before building, as the constructor would after.  sigma = 0 uses the
        lattice pmfs; no natural noise (N = 0, p in {0, 1}) is the Gaussian PLD.
        """
        from .counting import CountingQuery
        if not isinstance(query, CountingQuery):
            raise TypeError(f"query must be a ppk.CountingQuery, got {type(query).__name__}")
        dx = real("value_discretization_interval", value_discretization_interval, minimum=0.0, min_inclusive=False)
        bound = real("log_mass_truncation_bound", log_mass_truncation_bound, maximum=-1.0)
        pessimistic_estimate = flag("pessimistic_estimate", pessimistic_estimate)
        max_buckets = _check_max_buckets(max_buckets)
        N, p, sigma = query.n_unknown, query.p, query.sigma
        key = (query.n, query.known, query.p)
        if N == 0 or p in (0.0, 1.0):
            if sigma == 0:
                raise ValueError("sigma = 0 with no natural noise: the output reveals the row (delta = 1)")
            return cls.from_gaussian(sigma=sigma, value_discretization_interval=dx, log_mass_truncation_bound=bound,
                                     pessimistic_estimate=pessimistic_estimate, max_buckets=max_buckets)
        if sigma == 0:
            w = np.exp(_kernels.binom_logpmf(N, p, np.arange(N + 1)))
            out = cls.from_pmfs(np.append(0.0, w), np.append(w, 0.0), value_discretization_interval=dx,
                                tolerance=1e-6, pessimistic_estimate=pessimistic_estimate, max_buckets=max_buckets)
            out._shared_noise_key = key
            return out
        def tails(eps: np.ndarray, mirrored: bool) -> tuple[np.ndarray, np.ndarray]:
            return _kernels.counting_tail_logs(N, p, sigma=sigma, eps=eps, mirrored=mirrored)

        def reach(mirrored: bool) -> int:   # buckets until both tails are below the bound
            k = 1
            while k <= MAX_BUILD_BUCKETS:
                la, lb = tails(np.array([k * dx]), mirrored)
                if max(la[0], lb[0]) < bound:
                    return k
                k *= 2
            raise ValueError(f"the loss range of {query!r} down to tails of exp(log_mass_truncation_bound = "
                             f"{bound:.6g}) needs more than {MAX_BUILD_BUCKETS} buckets of value_discretization_"
                             f"interval = {dx:.6g}: use a larger value_discretization_interval or a larger "
                             "log_mass_truncation_bound")
        # p = 1/2: X -> N - X maps the law to itself, so the mirror pair is the pair (the kernel answers
        # both calls alike): the mirror's tails at e are the forward ones at e, P(L <= -e) = Q(L > e) and
        # Q(L <= -e) = P(L > e)
        symmetric = p == 0.5
        k_hi = reach(False)
        k_lo = k_hi if symmetric else reach(True)
        # more buckets than max_buckets would be merged in pairs (the interval doubling) right after
        # they are built; merged buckets are exactly the buckets of the doubled interval, so build those
        while k_hi + k_lo + 1 > max_buckets:
            dx, k_hi, k_lo = 2 * dx, -(-k_hi // 2), -(-k_lo // 2)
        up = np.arange(0, k_hi + 1) * dx
        down = np.arange(1, k_lo + 1) * dx                     # losses -dx, -2dx, ... via the mirror pair
        la, lb = tails(up, False)                             # P(L > e), Q(L > e), e >= 0
        not_la, not_lb = log1mexp(la), log1mexp(lb)           # P(L <= e), Q(L <= e)
        # mirror: P(L <= -e) = B', Q(L <= -e) = A' (and their complements)
        if symmetric:
            ma, mb, not_ma, not_mb = la[1:], lb[1:], not_la[1:], not_lb[1:]
        else:
            ma, mb = tails(down, True)
            not_ma, not_mb = log1mexp(ma), log1mexp(mb)
        log_p_up = np.concatenate([not_mb[::-1], la])
        log_p_down = np.concatenate([mb[::-1], not_la])
        log_q_up = np.concatenate([not_ma[::-1], lb])
        log_q_down = np.concatenate([ma[::-1], not_lb])
        out = cls._from_tails(dx, -k_lo, k_hi, log_p_up, log_p_down, log_q_up, log_q_down,
                              pessimistic_estimate=pessimistic_estimate, max_buckets=max_buckets)
        out._shared_noise_key = key
        return out

    # ------------------------------------------------------------------ dp_accounting's names
    @classmethod
    def from_gaussian_mechanism(cls, standard_deviation: float, sensitivity: float = 1.0,
                                pessimistic_estimate: bool = True, value_discretization_interval: float = 1e-4,
                                log_mass_truncation_bound: float = -50.0, sampling_prob: float = 1.0,
                                use_connect_dots: bool = True) -> PrivacyLossDistribution:
        """:meth:`from_gaussian` under dp_accounting's signature, so code ports by changing an import.

        ``use_connect_dots`` is accepted for compatibility: ppk's upper end is always the connect-the-dots
        pair.  Subsampling (``sampling_prob < 1``) is not supported yet.
        """
        _no_subsampling(sampling_prob)
        flag("use_connect_dots", use_connect_dots)
        return cls._gaussian(standard_deviation, sensitivity, value_discretization_interval,
                             log_mass_truncation_bound, pessimistic_estimate, 1 << 20, "standard_deviation")

    @classmethod
    def from_laplace_mechanism(cls, parameter: float, sensitivity: float = 1.0, pessimistic_estimate: bool = True,
                               value_discretization_interval: float = 1e-4, sampling_prob: float = 1.0,
                               use_connect_dots: bool = True) -> PrivacyLossDistribution:
        """:meth:`from_laplace` under dp_accounting's signature (``parameter`` is the Laplace scale)."""
        _no_subsampling(sampling_prob)
        flag("use_connect_dots", use_connect_dots)
        return cls._laplace(parameter, sensitivity, value_discretization_interval, pessimistic_estimate, 1 << 20,
                            "parameter")

    @classmethod
    def from_two_probability_mass_functions(cls, log_probability_mass_function_lower: Mapping[Any, float],
                                            log_probability_mass_function_upper: Mapping[Any, float],
                                            pessimistic_estimate: bool = True,
                                            value_discretization_interval: float = 1e-4,
                                            log_mass_truncation_bound: float = -math.inf,
                                            symmetric: bool = True) -> PrivacyLossDistribution:
        """:meth:`from_pmfs` under dp_accounting's signature: two mappings outcome -> log probability,
        ``upper`` the law P with the challenge row, ``lower`` the law Q without it."""
        upper = _log_pmf("log_probability_mass_function_upper", log_probability_mass_function_upper)
        lower = _log_pmf("log_probability_mass_function_lower", log_probability_mass_function_lower)
        keys = list(dict.fromkeys([*upper, *lower]))
        p = np.exp([upper.get(x, -math.inf) for x in keys])
        q = np.exp([lower.get(x, -math.inf) for x in keys])
        return cls.from_pmfs(p, q, value_discretization_interval=value_discretization_interval,
                             pessimistic_estimate=pessimistic_estimate, tolerance=1e-6)

    # ------------------------------------------------------------------ interoperability
    def to_dp_accounting(self) -> Any:
        """A pessimistic ``dp_accounting`` PrivacyLossDistribution built from ppk's dominating pair.

        Its ``get_delta_for_epsilon`` is never below the true delta: the error bounds ppk carries are
        moved into its infinity mass.  Needs ``pip install dp_accounting``.
        """
        from ._pld_interop import to_dp_accounting
        return to_dp_accounting(self)

    @classmethod
    def from_dp_accounting(cls, pld: Any) -> PrivacyLossDistribution:
        """ppk's PLD of a dp_accounting PrivacyLossDistribution, taken as given: its bracket describes
        dp_accounting's discretised pair, not the mechanism it came from."""
        from ._pld_interop import from_dp_accounting
        return from_dp_accounting(cls, pld)

    def privacy_profile(self) -> Callable[[float], float]:
        """eps -> the certified upper end of delta(eps): a privacy profile for OpenDP's
        ``new_privacy_profile`` (or any accountant that takes a delta(eps) function)."""
        from ._pld_interop import privacy_profile
        return privacy_profile(self)

    # ------------------------------------------------------------------ delta
    def _prefix_sums(self):
        """Cumulative sums (long double) of both representations, computed once per object."""
        if self._sums is None:
            def sums(m: _Masses):
                # prefix sums from the left (for the mirrored order's low losses) and suffix sums from the
                # right (for high losses), each summed from its small end: a tail of 1e-10 read off as a
                # difference of two sums near 1 would keep only 9 digits
                zero = np.zeros(1, dtype=LD)
                def pre(x):
                    return np.concatenate([zero, np.cumsum(x)])
                def suf(x):
                    return np.concatenate([np.cumsum(x[::-1])[::-1], zero])
                return (pre(m.p), pre(m.q), suf(m.p), suf(m.q))
            self._sums = (sums(self._atoms), sums(self._buckets))
        return self._sums

    def _ends(self, eps: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.longdouble], npt.NDArray[np.longdouble]]:
        """(lower, upper) of max over both orders of delta at every eps (long double), vectorised."""
        dx = self.value_discretization_interval
        atom_sums, bucket_sums = self._prefix_sums()
        e = eps.astype(LD)
        up = np.zeros(eps.shape, dtype=LD)
        lo = np.zeros(eps.shape, dtype=LD)
        for order in (0, 1):
            up = np.maximum(up, self._upper_end(e, eps, dx, atom_sums, order))
            lo = np.maximum(lo, self._lower_end(e, eps, dx, bucket_sums, order))
        return np.minimum(lo, up), np.minimum(up, LD(1))

    @staticmethod
    def _tail_difference(e, sum_p, sum_q):
        """sum_p - e^eps sum_q without forming e^eps (it may overflow where sum_q is 0).  Where even
        e^eps sum_q overflows (eps = 1e6 over a tail of rounding-sized Q-masses) the difference is -inf:
        the tail counts 0 (it cannot be positive with sum_p <= 1), and the error terms carry the rest."""
        with np.errstate(divide="ignore", over="ignore"):
            return sum_p - np.exp(e + np.log(sum_q))

    def _upper_end(self, e, eps, dx, sums, order):
        """The dominating pair's delta: every atom above eps contributes P - e^eps Q exactly."""
        m = self._atoms
        n = m.p.size
        k = np.arange(m.offset, m.offset + n)
        if order == 0:   # H(P || Q): atoms with k Delta > eps
            j = np.searchsorted(k * dx, eps, side="right")
            sp, sq = sums[2][j], sums[3][j]
            inf, over, err_a, err_b = self.infinity_mass_upper, m.overflow_p, m.err_p, m.err_q
            count = n - j
        else:            # H(Q || P): atoms with k Delta < -eps
            j = np.searchsorted(k * dx, -eps, side="left")
            sp, sq = sums[1][j], sums[0][j]
            inf, over, err_a, err_b = self.infinity_mass_lower, m.overflow_q, m.err_q, m.err_p
            count = j
        value = np.maximum(self._tail_difference(e, sp, sq), LD(0))
        # rounding: the cumulative sums (n ulps of long double), the builders' masses (_MASS_RTOL),
        # and the convolutions' error: sum |error| over `count` entries <= sqrt(count) * 2-norm
        fft = _noise_term(count, e, err_a, err_b)
        slack = LD(_MASS_RTOL + 4 * n * _convolution.U_LD) * (2 * sp + inf)
        return value + inf + over + fft + slack

    def _lower_end(self, e, eps, dx, sums, order):
        """The bucket representation's lower end: buckets entirely above eps exactly, the ones that
        straddle eps by (P - e^eps Q)_+ (Jensen), minus every rounding bound."""
        m = self._buckets
        n = m.p.size
        k = np.arange(m.offset, m.offset + n).astype(np.float64)
        p, q = (m.p, m.q) if order == 0 else (m.q, m.p)
        # in the mirrored order bucket k holds -L in [-k Delta, -(k - w) Delta]
        top = (k if order == 0 else -(k - m.width)) * dx        # the largest loss of each bucket (this order)
        low = top - m.width * dx
        if order == 0:
            j_full = np.searchsorted(low, eps, side="left")     # low >= eps from here on
            j_str = np.searchsorted(top, eps, side="right")     # top > eps from here on
            full_p, full_q = sums[2][j_full], sums[3][j_full]
            count = n - j_str
        else:   # top and low decrease with k: buckets with low >= eps are the first ones
            j_full = np.searchsorted(-low, -eps, side="right")  # low >= eps before here
            j_str = np.searchsorted(-top, -eps, side="left")    # top > eps before here
            full_p, full_q = sums[1][j_full], sums[0][j_full]
            count = j_str
        value = self._tail_difference(e, full_p, full_q)
        # the buckets straddling eps: indices start..end-1 (about `width` of them)
        start, end = (j_str, j_full) if order == 0 else (j_full, j_str)
        size = np.maximum(end - start, 0)
        widest = int(size.max()) if size.size else 0
        runs = min(widest, _STRADDLE_RUNS)
        gamma = 4 * n * _convolution.U_LD       # relative rounding of a cumulative sum
        for t in range(runs):
            # run t: straddling buckets a..b-1 (one bucket each while at most _STRADDLE_RUNS straddle)
            a, b = start + (t * size) // runs, start + ((t + 1) * size) // runs
            i = np.minimum(a, n - 1)
            one = _positive_part(p[i], q[i], e)
            if widest > runs:
                # a longer run as one bucket: (sum P - e^eps sum Q)_+ <= sum of (P - e^eps Q)_+ (Jensen
                # again), its masses read off the cumulative sums from the side nearest eps's tail
                if order == 0:
                    run_p, run_q = sums[2][a] - sums[2][b], sums[3][a] - sums[3][b]
                else:
                    run_p, run_q = sums[1][b] - sums[1][a], sums[0][b] - sums[0][a]
                many = _positive_part(np.maximum(run_p, LD(0)), np.maximum(run_q, LD(0)), e)
                one = np.where(b - a > 1, many, one)
            value = value + np.where(b > a, one, LD(0))
        if widest > runs:
            # each run's two masses are differences of cumulative sums, each off by gamma times the sum
            # at the straddle's outer end: 2 gamma (P + e^eps Q) per run
            if order == 0:
                outer_p, outer_q = sums[2][start], sums[3][start]
            else:
                outer_p, outer_q = sums[1][end], sums[0][end]
            with np.errstate(divide="ignore", over="ignore"):   # inf: the lower end is 0 there
                runs_slack = 2 * runs * LD(gamma) * (outer_p + np.exp(e + np.log(outer_q)))
            value = value - np.where(size > runs, runs_slack, LD(0))
        inf = self.infinity_mass_upper if order == 0 else self.infinity_mass_lower
        err_a, err_b = (m.err_p, m.err_q) if order == 0 else (m.err_q, m.err_p)
        fft = _noise_term(count, e, err_a, err_b)
        slack = LD(_MASS_RTOL + gamma) * (2 * full_p + inf)
        return np.maximum(value + inf - fft - slack, LD(0))

    def _bracket_ld(self, eps: float):
        lo, hi = self._ends(np.array([eps], dtype=np.float64))
        return lo[0], hi[0]

    def _map_eps(self, eps, fn):
        flat, scalar = real_array("eps", eps, minimum=0.0)
        lo, hi = fn(*self._ends(flat))
        if scalar:
            return float(lo[0]), float(hi[0])
        shape = np.shape(eps)
        return lo.astype(np.float64).reshape(shape), hi.astype(np.float64).reshape(shape)

    @overload
    def delta_bracket(self, eps: float) -> tuple[float, float]: ...
    @overload
    def delta_bracket(self, eps: npt.ArrayLike) -> tuple[FloatArray, FloatArray]: ...
    def delta_bracket(self, eps: npt.ArrayLike) -> tuple[float, float] | tuple[FloatArray, FloatArray]:
        """(lower, upper) with lower <= delta(eps) <= upper for the max over both orders; vectorised
        (cumulative sums: 1e5 values of eps cost milliseconds)."""
        return self._map_eps(eps, lambda lo, hi: (lo, hi))

    @overload
    def log_delta_bracket(self, eps: float) -> tuple[float, float]: ...
    @overload
    def log_delta_bracket(self, eps: npt.ArrayLike) -> tuple[FloatArray, FloatArray]: ...
    def log_delta_bracket(self, eps: npt.ArrayLike) -> tuple[float, float] | tuple[FloatArray, FloatArray]:
        """Natural logs of :meth:`delta_bracket`, finite far below 1e-300 (long-double masses)."""
        def logs(lo, hi):
            with np.errstate(divide="ignore"):
                return np.log(lo), np.log(hi)
        return self._map_eps(eps, logs)

    @overload
    def get_delta_for_epsilon(self, eps: float) -> float: ...
    @overload
    def get_delta_for_epsilon(self, eps: npt.ArrayLike) -> FloatArray: ...
    def get_delta_for_epsilon(self, eps: npt.ArrayLike) -> float | FloatArray:
        """delta(eps): the upper end of the bracket (``pessimistic_estimate=True``) or the lower end."""
        lo, hi = self.delta_bracket(eps)
        return hi if self.pessimistic_estimate else lo

    def get_epsilon_for_delta(self, delta: float) -> float:
        """Smallest eps >= 0 whose upper bound is <= delta (inf if the infinity masses exceed delta)."""
        delta = real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False)

        def excess(e: float) -> float:   # non-increasing in e; feasible where <= 0
            return float(self._bracket_ld(e)[1]) - delta

        f0 = excess(0.0)
        if f0 <= 0:
            return 0.0
        m = self._atoms
        k_max = max(abs(m.offset), abs(m.offset + m.p.size)) + 1
        hi = (k_max + 1) * self.value_discretization_interval
        f_hi = excess(hi)
        if f_hi > 0:
            return math.inf
        return smallest_feasible(excess, 0.0, hi, f_lo=f0, f_hi=f_hi, rtol=1e-12).x

    # ------------------------------------------------------------------ composition
    def compose(self, other: "PrivacyLossDistribution", *, independent: bool | None = None) -> "PrivacyLossDistribution":
        """The PLD of running both mechanisms on independent randomness (losses add).

        Two natural-noise PLDs of the same query share their unknown rows: their noise is not
        fresh, and composing them as independent would under-report delta.  That raises
        ``ValueError``; use ``CountingQuery.repeat(k)`` for k releases of one count, or pass
        ``independent=True`` if the releases really use disjoint unknown rows.
        """
        return self._compose(other, independent=independent, truncate=True)

    def _compose(self, other: "PrivacyLossDistribution", *, independent: bool | None,
                 truncate: bool) -> "PrivacyLossDistribution":
        """compose(); ``truncate=False`` keeps the mass below the noise (for a result that is only read:
        cutting it saves time in later compositions but adds its bound to the upper end)."""
        instance("other", other, PrivacyLossDistribution, "a PrivacyLossDistribution")
        independent = _check_independent(independent)
        key = self._shared_noise_key
        if key is not None and key == other._shared_noise_key and not independent:
            raise ValueError(
                f"both PLDs describe releases of the count of the same database {key} (n, known, p): they share "
                "its unknown rows, so their natural noise is not independent and composing them would "
                "under-report delta. Use CountingQuery.repeat(k) for k releases of the same count (exact), or "
                "pass independent=True if the releases use disjoint unknown rows.")
        a, b = self, other
        while a.value_discretization_interval < b.value_discretization_interval * (1 - 1e-12):
            a = a._coarsened()
        while b.value_discretization_interval < a.value_discretization_interval * (1 - 1e-12):
            b = b._coarsened()
        if not math.isclose(a.value_discretization_interval, b.value_discretization_interval, rel_tol=1e-12):
            raise ValueError("value_discretization_interval of the two PLDs must be equal or differ by a power of 2")
        method = self.composition if self.composition == other.composition else "auto"
        bound = max(a.log_mass_truncation_bound, b.log_mass_truncation_bound)
        buckets = _compose_masses(a._buckets, b._buckets, method)
        atoms = _compose_masses(a._atoms, b._atoms, method)
        if truncate:
            buckets.truncate(bound)
            atoms.truncate(bound)
        out = PrivacyLossDistribution.__new__(PrivacyLossDistribution)
        out.value_discretization_interval = a.value_discretization_interval
        out._install(buckets=buckets, atoms=atoms,
                     infinity_mass_upper=_union(a.infinity_mass_upper, b.infinity_mass_upper),
                     infinity_mass_lower=_union(a.infinity_mass_lower, b.infinity_mass_lower),
                     pessimistic_estimate=self.pessimistic_estimate, max_buckets=max(a.max_buckets, b.max_buckets),
                     composition=method, log_mass_truncation_bound=bound,
                     shared_noise_key=key if key == other._shared_noise_key else None)
        return out

    def self_compose(self, num_times: int, *, independent: bool | None = None) -> "PrivacyLossDistribution":
        """``num_times``-fold composition with itself (binary powering: O(log k) convolutions).

        The work is bounded: when the convolutions still to do would take more than
        ``MAX_SELF_COMPOSE_WORK`` vector entries in all (about 10 s), ``ValueError`` says so before
        doing them (2^62 compositions of a PLD of a million buckets: 62 squarings of a million, a minute).
        """
        k = integer("num_times", num_times, minimum=1)
        independent = _check_independent(independent)
        result: PrivacyLossDistribution | None = None
        base = self
        work = 0
        while True:
            # the convolutions left (a squaring per higher bit, a product per set bit), each about as long
            # as the base's vectors are now: refuse before the work goes past the limit
            size = base._buckets.p.size + base._atoms.p.size
            steps = (k.bit_length() - 1) + bin(k).count("1")
            projected = work + 2 * size * steps
            if projected > MAX_SELF_COMPOSE_WORK:
                raise ValueError(
                    f"num_times = {num_times} needs about {steps} more compositions of privacy "
                    f"loss vectors of about {size:,} entries ({projected:.3g} entries in all, more than "
                    f"MAX_SELF_COMPOSE_WORK = {MAX_SELF_COMPOSE_WORK:.3g}, about 10 s): use a smaller "
                    "num_times, or fewer buckets (a larger value_discretization_interval or a smaller max_buckets)")
            if k & 1:
                if result is not None:
                    work += size + result._buckets.p.size + result._atoms.p.size
                result = base if result is None else result._compose(base, independent=independent,
                                                                      truncate=k >> 1 != 0)
            k >>= 1
            if not k:
                assert result is not None   # k >= 1 has a set bit
                return result
            # the last square is the result itself when no lower bit remains: keep its small masses
            work += 2 * (base._buckets.p.size + base._atoms.p.size)
            base = base._compose(base, independent=independent, truncate=not (k == 1 and result is None))

    # ------------------------------------------------------------------ coarsening
    def _coarsen(self) -> None:
        """Merge bucket pairs in both representations: Delta doubles."""
        self._buckets.coarsen(self.value_discretization_interval)
        self._atoms.coarsen(self.value_discretization_interval)
        self.value_discretization_interval *= 2
        self._sums = None

    def _coarsened(self) -> "PrivacyLossDistribution":
        out = PrivacyLossDistribution.__new__(PrivacyLossDistribution)
        out.__dict__.update(self.__dict__)
        out._buckets, out._atoms = self._buckets.copy(), self._atoms.copy()
        out._coarsen()
        return out

    def __repr__(self) -> str:
        return (f"PrivacyLossDistribution({self.mass_upper.size} buckets of {self.value_discretization_interval:g}, "
                f"width {self.width:.6g}, infinity masses {float(self.infinity_mass_upper):.3g}/"
                f"{float(self.infinity_mass_lower):.3g}, overflow {float(self.overflow_mass_upper):.3g}/"
                f"{float(self.overflow_mass_lower):.3g})")


def _noise_term(count, e, err_a: float, err_b: float):
    """sqrt(count) (err_a + e^eps err_b): the most that `count` entries with 2-norm errors err_a (P) and
    err_b (Q) can move sum(P) - e^eps sum(Q); 0 where no entry counts (no inf * 0)."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        scaled = np.exp(e + np.log(LD(err_b))) if err_b > 0 else np.zeros_like(e)
        term = np.sqrt(count.astype(LD)) * (LD(err_a) + scaled)
    return np.where(count > 0, term, LD(0))


class _UnsupportedSamplingError(ValueError, NotImplementedError):
    """sampling_prob < 1: a value ppk's PLDs do not take (yet).  A ValueError like any refused value,
    and a NotImplementedError as it was first raised."""


def _no_subsampling(sampling_prob: float) -> None:
    value = real("sampling_prob", sampling_prob, minimum=0.0, maximum=1.0)
    if value != 1.0:
        raise _UnsupportedSamplingError(
            f"sampling_prob must be 1: sampling_prob < 1 (Poisson subsampling) is not supported by ppk's PLDs yet, "
            f"got {value:.6g}; use dp_accounting for subsampled mechanisms")


def _check_independent(independent: object) -> bool | None:
    return None if independent is None else flag("independent", independent)


def _check_noise_key(key: object) -> tuple[int, int, float] | None:
    """None, or the (n, known, p) of the database whose unknown rows a natural-noise PLD's releases share."""
    if key is None:
        return None
    n, known, p = sequence("shared_noise_key", key, lambda name, v: v, min_length=3, max_length=3)
    return (integer("shared_noise_key[0]", n, minimum=0), integer("shared_noise_key[1]", known, minimum=0),
            real("shared_noise_key[2]", p, minimum=0.0, maximum=1.0))


def _log_pmf(name: str, value: object) -> dict[Any, float]:
    """A mapping outcome -> log probability (each <= 0, -inf for 0) whose probabilities sum to 1 within 1e-6."""
    instance(name, value, Mapping, "a mapping outcome -> log probability (a dict)")
    out: dict[Any, float] = {}
    for key, v in value.items():   # type: ignore[attr-defined]
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            raise TypeError(f"{name}[{key!r}] must be a log probability (a real number <= 0), got "
                            f"{type(v).__name__}")
        try:
            x = float(v)
        except OverflowError:
            raise ValueError(f"{name}[{key!r}] must be a log probability <= 0, got a number beyond the float "
                             "range") from None
        if math.isnan(x) or x > 1e-6:   # a log probability, up to the rounding the sum's tolerance takes
            raise ValueError(f"{name}[{key!r}] must be a log probability in [-inf, 0], got {x!r}")
        out[key] = x
    total = math.fsum(math.exp(x) for x in out.values())
    if abs(total - 1.0) > 1e-6:
        raise ValueError(f"{name} must hold log probabilities whose probabilities sum to 1 within 1e-06, "
                         f"sums to {total!r}")
    return out


def _union(a, b):
    return a + b - a * b
