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

Composition of independent mechanisms convolves both mass vectors exactly (the
C++ long-double convolution with compensated sums; no FFT, so no 1e-16 noise
floor); widths add; when a vector grows past ``max_buckets`` pairs of buckets
merge (Delta doubles) instead of failing.  Masses are long doubles, so deltas
far below 1e-300 stay representable (see :meth:`log_delta_bracket`).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, overload

import numpy as np
import numpy.typing as npt
from . import _kernels
from ._logmath import log1mexp
from ._search import smallest_feasible
from ._validate import integer, real, real_array

if TYPE_CHECKING:
    from .counting import CountingQuery
from ._typing import FloatArray

__all__ = ["PrivacyLossDistribution"]

LD = np.longdouble
_SLACK = 1e-9          # bucket-edge slack (in buckets) for the rounding of L / Delta
_MASS_RTOL = 1e-12     # relative rounding allowance of bucket masses, added to the bracket
#: Most buckets a builder creates (16M: 256 MiB per mass vector in long double); checked before allocating.
MAX_BUILD_BUCKETS = 1 << 24


def _check_bucket_count(count: float, what: str) -> None:
    if not count <= MAX_BUILD_BUCKETS:   # also catches inf and nan
        raise ValueError(f"{what} needs {count:.3g} buckets, more than {MAX_BUILD_BUCKETS}: use a larger "
                         "value_discretization_interval")


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


class PrivacyLossDistribution:
    """Bucketed privacy loss of a pair (P, Q) with both masses per bucket.  Build it with a ``from_*``."""

    def __init__(self, *, interval: float, offset: int, mass_upper: npt.ArrayLike, mass_lower: npt.ArrayLike, width: float = 1.0,
                 infinity_mass_upper: float = 0.0, infinity_mass_lower: float = 0.0, overflow_mass_upper: float = 0.0,
                 overflow_mass_lower: float = 0.0, pessimistic_estimate: bool = True, max_buckets: int = 1 << 16,
                 shared_noise_key: tuple[int, int, float] | None = None):
        self.value_discretization_interval = real("interval", interval, minimum=0.0, min_inclusive=False)
        self.offset = integer("offset", offset, minimum=-(2**62), maximum=2**62)
        self.mass_upper = self._masses("mass_upper", mass_upper)
        self.mass_lower = self._masses("mass_lower", mass_lower)
        if self.mass_upper.shape != self.mass_lower.shape:
            raise ValueError(f"mass_upper and mass_lower must have the same length, got {self.mass_upper.size} "
                             f"and {self.mass_lower.size}")
        self.width = real("width", width, minimum=1.0)

        def probability(name: str, value: object) -> np.longdouble:
            return LD(real(name, value, minimum=0.0, maximum=1.0 + 1e-9))

        self.infinity_mass_upper = probability("infinity_mass_upper", infinity_mass_upper)  # loss +inf
        self.infinity_mass_lower = probability("infinity_mass_lower", infinity_mass_lower)  # loss -inf
        self.overflow_mass_upper = probability("overflow_mass_upper", overflow_mass_upper)  # cut off
        self.overflow_mass_lower = probability("overflow_mass_lower", overflow_mass_lower)  # cut off
        self.pessimistic_estimate = bool(pessimistic_estimate)
        self.max_buckets = integer("max_buckets", max_buckets, minimum=2, maximum=MAX_BUILD_BUCKETS)
        self._shared_noise_key = shared_noise_key
        while self.mass_upper.size > self.max_buckets:
            self._coarsen()

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
                  pessimistic_estimate: bool = True, tolerance: float = 1e-9, max_buckets: int = 1 << 16) -> PrivacyLossDistribution:
        """From two pmfs on a common support: ``P = pmf_upper``, ``Q = pmf_lower``; loss log(P/Q).

        Each outcome goes to the bucket k = ceil(L / Delta), i.e. L in [(k-1) Delta, k Delta].
        The discretisation error of the reported bound is at most the P-mass of the one bucket
        that straddles eps (per order); :meth:`delta_bracket` gives both ends.
        """
        p, q = (cls._check_pmf(name, v, tolerance) for name, v in (("pmf_upper", pmf_upper),
                                                                   ("pmf_lower", pmf_lower)))
        if p.shape != q.shape:
            raise ValueError(f"pmf_upper and pmf_lower must have the same length, got {p.size} and {q.size}")
        dx = real("value_discretization_interval", value_discretization_interval, minimum=0.0, min_inclusive=False)
        both = (p > 0) & (q > 0)
        with np.errstate(over="ignore"):
            x = (np.log(p[both]) - np.log(q[both])) / dx
        if x.size:
            _check_bucket_count(float(np.max(x)) - float(np.min(x)) + 3, "the loss range of the pmfs")
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
                      max_buckets: int = 1 << 16) -> PrivacyLossDistribution:
        """Gaussian mechanism N(0, sigma^2) vs N(sensitivity, sigma^2): L ~ N(+-mu, 2 mu), mu = s^2/(2 sigma^2).

        Bucket masses are exact normal-CDF differences; mass beyond the loss range where the
        tails fall below ``exp(log_mass_truncation_bound)`` goes to the overflow (infinity) bucket.
        """
        sigma = real("sigma", sigma, minimum=0.0, min_inclusive=False)
        s = real("sensitivity", sensitivity, minimum=0.0, min_inclusive=False)
        dx = real("value_discretization_interval", value_discretization_interval, minimum=0.0, min_inclusive=False)
        bound = real("log_mass_truncation_bound", log_mass_truncation_bound, maximum=-1.0)
        ratio = s / sigma
        mu = 0.5 * ratio * ratio
        if mu < 1e-300:     # the two laws coincide to the float range: all mass at loss 0
            return cls(interval=dx, offset=0, mass_upper=[1.0], mass_lower=[1.0],
                       pessimistic_estimate=pessimistic_estimate, max_buckets=max_buckets)
        sd = math.sqrt(2 * mu) if math.isfinite(mu) else math.inf
        z = math.sqrt(-2 * bound) + 2
        _check_bucket_count(2 * (mu + z * sd) / dx + 2, f"sensitivity/sigma = {ratio:.3g}")
        k_lo, k_hi = math.floor((-mu - z * sd) / dx), math.ceil((mu + z * sd) / dx)
        edges = np.arange(k_lo, k_hi + 1) * dx
        zp, zq = (edges - mu) / sd, (edges + mu) / sd
        logsf = _kernels.norm_logsf   # log P(Z > x); log P(Z <= x) = logsf(-x)
        return cls._from_tails(dx, k_lo, k_hi, logsf(zp), logsf(-zp), logsf(zq), logsf(-zq),
                               pessimistic_estimate=pessimistic_estimate, max_buckets=max_buckets)

    @classmethod
    def from_laplace(cls, *, scale: float, sensitivity: float = 1.0, value_discretization_interval: float = 1e-4,
                     pessimistic_estimate: bool = True, max_buckets: int = 1 << 16) -> PrivacyLossDistribution:
        """Laplace mechanism Lap(0, b) vs Lap(sensitivity, b): L in [-s/b, s/b], atoms at both ends."""
        b = real("scale", scale, minimum=0.0, min_inclusive=False)
        s = real("sensitivity", sensitivity, minimum=0.0, min_inclusive=False)
        dx = real("value_discretization_interval", value_discretization_interval, minimum=0.0, min_inclusive=False)
        e0 = s / b
        _check_bucket_count(2 * e0 / dx + 3, f"sensitivity/scale = {e0:.3g}")
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
                            pessimistic_estimate: bool = True, max_buckets: int = 1 << 16) -> PrivacyLossDistribution:
        """The natural-noise count a + Bin(N, p) + N(0, sigma^2), P = challenge row 1, Q = row 0.

        Its loss is monotone in the output (docs/method.md), so bucket k's masses are the masses of the
        output interval between the thresholds where the loss is (k-1) Delta and k Delta: two tail
        evaluations of the C++ kernel per edge, no output grid.  sigma = 0 uses the lattice pmfs;
        no natural noise (N = 0, p in {0, 1}) is the Gaussian PLD.
        """
        from .counting import CountingQuery
        if not isinstance(query, CountingQuery):
            raise TypeError(f"query must be a ppk.CountingQuery, got {type(query).__name__}")
        dx = real("value_discretization_interval", value_discretization_interval, minimum=0.0, min_inclusive=False)
        bound = real("log_mass_truncation_bound", log_mass_truncation_bound, maximum=-1.0)
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
            raise ValueError(f"the loss range of {query!r} needs more than {MAX_BUILD_BUCKETS} buckets: use a "
                             "larger value_discretization_interval")
        k_hi, k_lo = reach(False), reach(True)
        up = np.arange(0, k_hi + 1) * dx
        down = np.arange(1, k_lo + 1) * dx                     # losses -dx, -2dx, ... via the mirror pair
        la, lb = tails(up, False)                             # P(L > e), Q(L > e), e >= 0
        ma, mb = tails(down, True)                           # mirror: P(L <= -e) = B', Q(L <= -e) = A'
        log_p_up = np.concatenate([log1mexp(mb[::-1]), la])
        log_p_down = np.concatenate([mb[::-1], log1mexp(la)])
        log_q_up = np.concatenate([log1mexp(ma[::-1]), lb])
        log_q_down = np.concatenate([ma[::-1], log1mexp(lb)])
        out = cls._from_tails(dx, -k_lo, k_hi, log_p_up, log_p_down, log_q_up, log_q_down,
                              pessimistic_estimate=pessimistic_estimate, max_buckets=max_buckets)
        out._shared_noise_key = key
        return out

    # ------------------------------------------------------------------ delta
    def _orders(self):
        """(k, w, P-mass, Q-mass, P-infinity, P-overflow) for H(P||Q) and for H(Q||P)."""
        k = np.arange(self.offset, self.offset + self.mass_upper.size)
        yield k.astype(LD), self.mass_upper, self.mass_lower, self.infinity_mass_upper, self.overflow_mass_upper
        # mirror: -L lies in [-k Delta, -(k - w) Delta], i.e. bucket k' = -(k - w) with the masses swapped
        yield (-(k - self.width)).astype(LD), self.mass_lower, self.mass_upper, self.infinity_mass_lower, \
            self.overflow_mass_lower

    def _bracket_one(self, eps: float, k, mp_, mq_, p_inf, p_over):
        dx = LD(self.value_discretization_interval)
        hi_edge, lo_edge = k * dx, (k - LD(self.width)) * dx
        full = lo_edge >= eps
        strad = ~full & (hi_edge > eps)
        exact = _positive_part(mp_[full], mq_[full], eps).sum()
        # straddling bucket, loss in [lo, hi]: with u = e^{-L}, its contribution is the P-expectation of
        # the convex (1 - e^eps u)_+ at fixed mean E[u] = Q-mass / P-mass, maximal when the mass sits
        # at the two ends u = e^{-hi}, e^{-lo}: weight at L = hi is (P - Q e^lo) / (1 - e^{lo - hi}).
        lo_s, hi_s = lo_edge[strad], hi_edge[strad]
        at_hi = np.clip((mp_[strad] - mq_[strad] * np.exp(lo_s)) / -np.expm1(lo_s - hi_s), 0, mp_[strad])
        upper = exact + (at_hi * -np.expm1(LD(eps) - hi_s)).sum() + p_inf + p_over
        lower = exact + _positive_part(mp_[strad], mq_[strad], eps).sum() + p_inf
        # the masses carry rounding (tails from double-precision logs), which the difference
        # P - e^eps Q can amplify: widen by _MASS_RTOL times the magnitudes that entered
        # (in a bucket above eps, e^eps Q-mass <= P-mass)
        slack = LD(_MASS_RTOL) * (2 * mp_[full].sum() + mp_[strad].sum() + p_inf)
        return max(lower - slack, LD(0)), min(upper + slack, LD(1))

    def _bracket_ld(self, eps: float):
        lo, hi = LD(0), LD(0)
        for order in self._orders():
            a, b = self._bracket_one(eps, *order)
            lo, hi = max(lo, a), max(hi, b)
        return lo, hi

    def _map_eps(self, eps, fn):
        flat, scalar = real_array("eps", eps, minimum=0.0)
        out = [fn(float(e)) for e in flat]
        if scalar:
            return out[0]
        return tuple(np.array([o[i] for o in out]).reshape(np.shape(eps)) for i in range(len(out[0])))

    @overload
    def delta_bracket(self, eps: float) -> tuple[float, float]: ...
    @overload
    def delta_bracket(self, eps: npt.ArrayLike) -> tuple[FloatArray, FloatArray]: ...
    def delta_bracket(self, eps: npt.ArrayLike) -> tuple[float, float] | tuple[FloatArray, FloatArray]:
        """(lower, upper) with lower <= delta(eps) <= upper for the max over both orders; vectorised."""
        return self._map_eps(eps, lambda e: tuple(float(v) for v in self._bracket_ld(e)))

    @overload
    def log_delta_bracket(self, eps: float) -> tuple[float, float]: ...
    @overload
    def log_delta_bracket(self, eps: npt.ArrayLike) -> tuple[FloatArray, FloatArray]: ...
    def log_delta_bracket(self, eps: npt.ArrayLike) -> tuple[float, float] | tuple[FloatArray, FloatArray]:
        """Natural logs of :meth:`delta_bracket`, finite far below 1e-300 (long-double masses)."""
        def logs(e):
            lo, hi = self._bracket_ld(e)
            with np.errstate(divide="ignore"):
                return float(np.log(lo)), float(np.log(hi))
        return self._map_eps(eps, logs)

    @overload
    def get_delta_for_epsilon(self, eps: float) -> float: ...
    @overload
    def get_delta_for_epsilon(self, eps: npt.ArrayLike) -> FloatArray: ...
    def get_delta_for_epsilon(self, eps: npt.ArrayLike) -> float | FloatArray:
        """delta(eps): the upper end of the bracket (``pessimistic_estimate=True``) or the lower end."""
        end = 1 if self.pessimistic_estimate else 0
        flat, scalar = real_array("eps", eps, minimum=0.0)
        vals = np.array([float(self._bracket_ld(float(e))[end]) for e in flat])
        return float(vals[0]) if scalar else vals.reshape(np.shape(eps))

    def get_epsilon_for_delta(self, delta: float) -> float:
        """Smallest eps >= 0 whose upper bound is <= delta (inf if the infinity masses exceed delta)."""
        delta = real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False)

        def excess(e: float) -> float:   # non-increasing in e; feasible where <= 0
            return float(self._bracket_ld(e)[1]) - delta

        f0 = excess(0.0)
        if f0 <= 0:
            return 0.0
        k_max = max(self.offset + self.mass_upper.size, -(self.offset - self.width) + 1)
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
        if not isinstance(other, PrivacyLossDistribution):
            raise TypeError(f"can only compose with a PrivacyLossDistribution, got {type(other).__name__}")
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
        mp_ = _kernels.convolve_longdouble(a.mass_upper, b.mass_upper)
        mq_ = _kernels.convolve_longdouble(a.mass_lower, b.mass_lower)
        sa, sb = a.mass_upper.sum(), b.mass_upper.sum()
        qa, qb = a.mass_lower.sum(), b.mass_lower.sum()
        return PrivacyLossDistribution(
            interval=a.value_discretization_interval, offset=a.offset + b.offset, mass_upper=mp_, mass_lower=mq_,
            width=a.width + b.width,
            infinity_mass_upper=_union(a.infinity_mass_upper, b.infinity_mass_upper),
            infinity_mass_lower=_union(a.infinity_mass_lower, b.infinity_mass_lower),
            overflow_mass_upper=a.overflow_mass_upper * (sb + b.overflow_mass_upper) + sa * b.overflow_mass_upper,
            overflow_mass_lower=a.overflow_mass_lower * (qb + b.overflow_mass_lower) + qa * b.overflow_mass_lower,
            pessimistic_estimate=self.pessimistic_estimate, max_buckets=max(a.max_buckets, b.max_buckets),
            shared_noise_key=key if key == other._shared_noise_key else None)

    def self_compose(self, k: int, *, independent: bool | None = None) -> "PrivacyLossDistribution":
        """k-fold composition with itself (binary powering: O(log k) convolutions)."""
        k = integer("k", k, minimum=1)
        result: PrivacyLossDistribution | None = None
        base = self
        while True:
            if k & 1:
                result = base if result is None else result.compose(base, independent=independent)
            k >>= 1
            if not k:
                assert result is not None   # k >= 1 has a set bit
                return result
            base = base.compose(base, independent=independent)

    # ------------------------------------------------------------------ coarsening
    def _coarsen(self) -> None:
        """Merge bucket pairs: Delta doubles, bucket k goes to ceil(k/2) (losses are rounded up)."""
        k = np.arange(self.offset, self.offset + self.mass_upper.size)
        new_k = -((-k) // 2)
        off = int(new_k[0])
        size = int(new_k[-1]) - off + 1
        mp_, mq_ = np.zeros(size, dtype=LD), np.zeros(size, dtype=LD)
        np.add.at(mp_, new_k - off, self.mass_upper)
        np.add.at(mq_, new_k - off, self.mass_lower)
        self.mass_upper, self.mass_lower, self.offset = mp_, mq_, off
        self.width = (self.width + 1) / 2
        self.value_discretization_interval *= 2

    def _coarsened(self) -> "PrivacyLossDistribution":
        out = PrivacyLossDistribution.__new__(PrivacyLossDistribution)
        out.__dict__.update(self.__dict__)
        out._coarsen()
        return out

    def __repr__(self) -> str:
        return (f"PrivacyLossDistribution({self.mass_upper.size} buckets of {self.value_discretization_interval:g}, "
                f"width {self.width:.6g}, infinity masses {float(self.infinity_mass_upper):.3g}/"
                f"{float(self.infinity_mass_lower):.3g}, overflow {float(self.overflow_mass_upper):.3g}/"
                f"{float(self.overflow_mass_lower):.3g})")


def _union(a, b):
    return a + b - a * b
