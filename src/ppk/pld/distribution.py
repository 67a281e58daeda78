"""Privacy loss distributions (privacy buckets) with honest [lower, upper] brackets.

A :class:`PrivacyLossDistribution` describes a pair of output laws (P, Q) --
``pmf_upper`` and ``pmf_lower`` in dp_accounting's words -- through the
privacy loss L = log(P/Q) grouped into buckets of width
``value_discretization_interval`` (Delta).  Bucket k holds every outcome whose
loss lies in [(k - w) Delta, k Delta] (w = 1 when built, it grows under
composition), and stores **two** masses: its P-mass and its Q-mass.

Both masses give both ends of a bracket, lower <= delta(eps) <= upper (ppk.pld._bracket, which says
why); both orders come from the same object (L -> -L swaps the masses), and
:meth:`get_delta_for_epsilon` reports the larger, like ppk's curve (docs/method.md, "The model").

Infinities: mass where Q = 0 (P = 0) is a distinguishing event, kept apart
(``infinity_mass``); mass cut off outside the loss range when a continuous law
is bucketed is a *numerical* infinity (``overflow_mass``), counted as L = +inf
by the upper bound and as 0 by the lower bound.

The upper end comes from a second representation, the dominating pair on the grid (ppk.pld._masses).

Composition of independent mechanisms convolves the mass vectors (ppk.pld._convolution): the exact
long-double direct convolution while it is cheap, otherwise a double FFT whose rounding is bounded by
a proven formula; the bound (a 2-norm error per vector) is carried along and added to the upper end
and taken from the lower one.  Mass below ``exp(log_mass_truncation_bound)`` at either end is cut off
after each composition and counted as an infinite loss by the upper end.  Widths of the buckets add;
when a vector grows past ``max_buckets`` pairs of buckets merge (Delta doubles) instead of failing.
Masses are long doubles, so deltas far below 1e-300 stay representable (see
:meth:`log_delta_bracket`).  Builders: ppk.pld.mechanisms and ppk.pld.curves.
"""
from __future__ import annotations

import copy
import math
from typing import TYPE_CHECKING, Any, Hashable, overload

import numpy as np
import numpy.typing as npt

from .._curve import PrivacyCurve
from .._search import smallest_feasible
from .._typing import FloatArray
from .._validate import choice, flag, instance, integer, real, real_array, sequence
from . import _bracket, _composition, _convolution, curves, mechanisms
from ._composition import MAX_SELF_COMPOSE_WORK
from ._dp_names import DpAccountingNames
from ._plan import Plan
from ._rounding import _exp_down, _exp_up, _log_slack, _to_double
from ._masses import LD, MAX_BUILD_BUCKETS, _atoms_of, _check_max_buckets, _Masses, plan_cap

if TYPE_CHECKING:
    from ..counting import CountingQuery

__all__ = ["PrivacyLossDistribution", "MAX_SELF_COMPOSE_WORK"]



class PrivacyLossDistribution(DpAccountingNames):
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
        rows_key = _check_noise_key(shared_noise_key)
        self._install(buckets=buckets,
                      atoms=_atoms if _atoms is not None else _atoms_of(buckets, self.value_discretization_interval),
                      infinity_mass_upper=probability("infinity_mass_upper", infinity_mass_upper),
                      infinity_mass_lower=probability("infinity_mass_lower", infinity_mass_lower),
                      pessimistic_estimate=pessimistic_estimate,
                      max_buckets=max_buckets,
                      composition=composition,
                      log_mass_truncation_bound=real("log_mass_truncation_bound", log_mass_truncation_bound,
                                                     maximum=-1.0),
                      shared_noise_key=rows_key)

    def _install(self, *, buckets: _Masses, atoms: _Masses, infinity_mass_upper: np.longdouble,
                 infinity_mass_lower: np.longdouble, pessimistic_estimate: bool, max_buckets: int, composition: str,
                 log_mass_truncation_bound: float, shared_noise_key: Hashable | None, runs: int = 1,
                 reach: int | None = None) -> None:
        """Every field but the interval, from validated parts (the constructor and compose share it);
        vectors longer than ``max_buckets`` are coarsened.  ``runs`` and ``reach``: how many built PLDs the
        vectors compose and how far below eps their rounding reaches (ppk.pld._bracket.mass_error); by default
        a built one's, whose buckets span ceil(width) steps (1 up to the builders' slack)."""
        self.infinity_mass_upper = infinity_mass_upper   # loss +inf
        self.infinity_mass_lower = infinity_mass_lower   # loss -inf
        self._buckets_v, self._atoms_v = buckets, atoms
        self._plan: Plan | None = None            # a composition kept as its factors (ppk.pld._plan)
        self._gaussian_mu: float | None = None    # a Gaussian mechanism's s / sigma (plans merge them exactly)
        self._finite_pair: tuple[Any, Any] | None = None   # a finite pair's (p, q) where both > 0 (from_pmfs)
        self._finite_rtol = 0.0    # the relative error of each of those masses (a query's computed pmfs; 0: given)
        # a bound (>= the truth) on |loss| of the pair where it is finite, for a pure-DP mechanism (None: none), whose
        # delta is 0 beyond it when no mass sits at an infinite loss (docs/accuracy.md, "The pure-DP cap")
        self._max_loss: float | None = None
        # True: the pair is one adjacency's ("remove" or "add" alone) and only H(P || Q) is reported; else the
        # larger of both orders (add or remove, the default)
        self._one_sided = False
        self.pessimistic_estimate = pessimistic_estimate
        self.max_buckets = max_buckets
        self.composition = composition
        self.log_mass_truncation_bound = log_mass_truncation_bound
        self._shared_noise_key = shared_noise_key
        #: from_curve's connect-the-dots pair only: how far its delta may be above the query's (docs/accuracy.md,
        #: "Any query"); None for any other PLD
        self.curve_looseness: float | None = None
        self._sums: tuple | None = None
        if reach is None:
            width = buckets.width if buckets is not None else 1.0
            reach = 1 if width <= 1 + 1e-6 else math.ceil(width)
        self._runs, self._reach = runs, reach
        while buckets is not None and max(self._buckets.p.size, self._atoms.p.size) > self.max_buckets:
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

    # the two representations; a plan's are composed the first time they are asked for
    @property
    def _buckets(self) -> _Masses:
        if self._buckets_v is None:
            self._materialize()
        return self._buckets_v

    @_buckets.setter
    def _buckets(self, value: _Masses) -> None:
        self._buckets_v = value

    @property
    def _atoms(self) -> _Masses:
        if self._atoms_v is None:
            self._materialize()
        return self._atoms_v

    @_atoms.setter
    def _atoms(self, value: _Masses) -> None:
        self._atoms_v = value

    def _materialize(self) -> None:
        """Compose a plan's vectors (ppk.pld._composition.materialize)."""
        self._buckets_v, self._atoms_v, self.value_discretization_interval = _composition.materialize(self)

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

    # ------------------------------------------------------------------ builders (ppk.pld.mechanisms, ppk.pld.curves)
    @classmethod
    def from_pmfs(cls, pmf_upper: npt.ArrayLike, pmf_lower: npt.ArrayLike, *, value_discretization_interval: float = 1e-4,
                  pessimistic_estimate: bool = True, tolerance: float = 1e-9, max_buckets: int = 1 << 20) -> PrivacyLossDistribution:
        """From two pmfs on a common support: ``P = pmf_upper``, ``Q = pmf_lower``; loss log(P/Q).

        Each outcome goes to the bucket k = ceil(L / Delta), i.e. L in [(k-1) Delta, k Delta].
        The discretisation error of the reported bound is at most the P-mass of the one bucket
        that straddles eps (per order); :meth:`delta_bracket` gives both ends.
        """
        return mechanisms.from_pmfs(cls, pmf_upper, pmf_lower, value_discretization_interval=value_discretization_interval,
                                    pessimistic_estimate=pessimistic_estimate, tolerance=tolerance,
                                    max_buckets=max_buckets)

    @classmethod
    def from_gaussian(cls, *, sigma: float, sensitivity: float = 1.0, value_discretization_interval: float = 1e-4,
                      log_mass_truncation_bound: float = -100.0, pessimistic_estimate: bool = True,
                      max_buckets: int = 1 << 20) -> PrivacyLossDistribution:
        """Gaussian mechanism N(0, sigma^2) vs N(sensitivity, sigma^2): L ~ N(+-mu, 2 mu), mu = s^2/(2 sigma^2).

        Bucket masses are exact normal-CDF differences; mass beyond the loss range where the
        tails fall below ``exp(log_mass_truncation_bound)`` goes to the overflow (infinity) bucket.
        """
        return mechanisms.gaussian(cls, sigma, sensitivity, value_discretization_interval, log_mass_truncation_bound,
                                   pessimistic_estimate, max_buckets, "sigma")

    @classmethod
    def from_laplace(cls, *, scale: float, sensitivity: float = 1.0, value_discretization_interval: float = 1e-4,
                     pessimistic_estimate: bool = True, max_buckets: int = 1 << 20) -> PrivacyLossDistribution:
        """Laplace mechanism Lap(0, b) vs Lap(sensitivity, b): L in [-s/b, s/b], atoms at both ends."""
        return mechanisms.laplace(cls, scale, sensitivity, value_discretization_interval, pessimistic_estimate,
                                  max_buckets, "scale")

    @classmethod
    def from_curve(cls, curve: PrivacyCurve, *, value_discretization_interval: float = 1e-4,
                   log_mass_truncation_bound: float = -100.0, pessimistic_estimate: bool = True,
                   max_buckets: int = 1 << 20, curve_points: int = 1024) -> PrivacyLossDistribution:
        """The PLD of any query (CountingQuery, NoisyQuery, HistogramQuery, OverlappingCounts): exact when
        the query knows its loss (a noisy count: the tails of its loss from the C++ kernel), otherwise the
        connect-the-dots pair of Doroshenko et al. (PETS 2022) from its certified upper curve on
        at most ``curve_points`` values of eps, which dominates the query (docs/accuracy.md, "Any query"; the
        proof in ppk.pld.curves): its upper end never under-reports delta, composed or not; its lower end is 0;
        its ``curve_looseness`` says how far above the query's delta it may be.
        It keeps the query's unknown rows (:meth:`compose` refuses two releases over the same ones)."""
        instance("curve", curve, PrivacyCurve, "a ppk query (CountingQuery, NoisyQuery, HistogramQuery, "
                 "OverlappingCounts)")
        dx = real("value_discretization_interval", value_discretization_interval, minimum=0.0, min_inclusive=False)
        bound = real("log_mass_truncation_bound", log_mass_truncation_bound, maximum=-1.0)
        pessimistic_estimate = flag("pessimistic_estimate", pessimistic_estimate)
        max_buckets = _check_max_buckets(max_buckets)
        curve_points = integer("curve_points", curve_points, minimum=2, maximum=MAX_BUILD_BUCKETS)
        exact = curve._exact_loss()
        if exact is not None:
            out = curves.from_exact_loss(cls, curve, exact, dx=dx, bound=bound,
                                         pessimistic_estimate=pessimistic_estimate, max_buckets=max_buckets)
        else:
            out = curves.connect_the_dots(cls, curve, dx=dx, bound=bound, pessimistic_estimate=pessimistic_estimate,
                                          max_buckets=max_buckets, curve_points=curve_points)
        out._shared_noise_key = curve._rows_key
        return out

    @classmethod
    def from_counting_query(cls, query: CountingQuery, *, value_discretization_interval: float = 1e-4, log_mass_truncation_bound: float = -100.0,
                            pessimistic_estimate: bool = True, max_buckets: int = 1 << 20) -> PrivacyLossDistribution:
        """The natural-noise count a + Bin(N, p) + N(0, sigma^2), P = challenge row 1, Q = row 0:
        :meth:`from_curve` of a :class:`~ppk.CountingQuery` (exact)."""
        from ..counting import CountingQuery
        if not isinstance(query, CountingQuery):
            raise TypeError(f"query must be a ppk.CountingQuery, got {type(query).__name__}")
        return cls.from_curve(query, value_discretization_interval=value_discretization_interval,
                              log_mass_truncation_bound=log_mass_truncation_bound,
                              pessimistic_estimate=pessimistic_estimate, max_buckets=max_buckets)

    # ------------------------------------------------------------------ delta (ppk.pld._bracket)
    def _ends(self, eps: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.longdouble], npt.NDArray[np.longdouble]]:
        """(lower, upper) of max over both orders of delta at every eps (long double), vectorised."""
        curve = self._curve()
        if curve is not None:
            lo, up = curve.log_ends(eps)
            lo, up = _exp_down(lo), _exp_up(up)
        else:
            if self._sums is None:
                self._sums = _bracket.prefix_sums(self._atoms, self._buckets)
            lo, up = _bracket.ends(eps, self.value_discretization_interval, self._atoms, self._buckets, self._sums,
                                   self.infinity_mass_upper, self.infinity_mass_lower,
                                   orders=(0,) if self._one_sided else (0, 1), runs=self._runs, reach=self._reach)
        beyond = eps >= self._cap()      # pure DP: delta is 0 past the largest loss
        return np.where(beyond, LD(0), lo), np.where(beyond, LD(0), up)

    def _cap(self) -> float:
        """The pure-DP cap: a double >= the pair's largest |loss| when every part has a finite one and no mass
        sits at an infinite loss (delta(eps) = 0 for eps >= it, eps(delta) <= it); inf otherwise."""
        if self.infinity_mass_upper > 0 or self.infinity_mass_lower > 0:
            return math.inf
        return plan_cap([(self, 1)])

    def _curve(self) -> Any:
        """A plan's reader (ppk.pld._plan; a Gaussian mechanism's closed form), None for other leaves."""
        if self._plan is None and self._gaussian_mu is None:
            return None
        return Plan.of(self).curve(PrivacyLossDistribution)

    def _upper_ld(self, eps: float) -> np.longdouble:   # a plan reads only its atoms' tilts
        curve = self._curve()
        if eps >= self._cap():
            return LD(0)
        if curve is not None:
            return _exp_up(curve.log_upper(np.array([eps], dtype=np.float64)))[0]
        return self._ends(np.array([eps], dtype=np.float64))[1][0]

    def _map_eps(self, eps, fn):
        """fn(lower, upper) of the long-double ends, each rounded outward to double (lower down, upper up)."""
        flat, scalar = real_array("eps", eps, minimum=0.0)
        lo, hi = fn(*self._ends(flat))
        lo, hi = _to_double(lo, up=False), _to_double(hi, up=True)
        if scalar:
            return float(lo[0]), float(hi[0])
        shape = np.shape(eps)
        return lo.reshape(shape), hi.reshape(shape)

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
        curve = self._curve()
        if curve is not None:     # logs all the way (e^-22462 is 0 even in long double)
            flat, scalar = real_array("eps", eps, minimum=0.0)
            lo, hi = curve.log_ends(flat)
            beyond = flat >= self._cap()
            lo = np.where(beyond, -np.inf, _to_double(lo - _log_slack(lo), up=False))
            hi = np.where(beyond, -np.inf, _to_double(hi + _log_slack(hi), up=True))
            return (float(lo[0]), float(hi[0])) if scalar else (lo.reshape(np.shape(eps)), hi.reshape(np.shape(eps)))
        with np.errstate(divide="ignore", invalid="ignore"):
            # the long-double log rounds: a few of its ulps outward, then outward to double
            return self._map_eps(eps, lambda lo, hi: (np.log(lo) - _log_slack(np.log(lo)),
                                                      np.log(hi) + _log_slack(np.log(hi))))

    @overload
    def get_delta_for_epsilon(self, eps: float) -> float: ...
    @overload
    def get_delta_for_epsilon(self, eps: npt.ArrayLike) -> FloatArray: ...
    def get_delta_for_epsilon(self, eps: npt.ArrayLike) -> float | FloatArray:
        """delta(eps): the upper end of the bracket (``pessimistic_estimate=True``) or the lower end."""
        curve = self._curve()
        if curve is not None and self.pessimistic_estimate:   # a plan reads only its atoms' tilts
            flat, scalar = real_array("eps", eps, minimum=0.0)
            up = np.where(flat >= self._cap(), 0.0, _to_double(_exp_up(curve.log_upper(flat)), up=True))
            return float(up[0]) if scalar else up.reshape(np.shape(eps))
        lo, hi = self.delta_bracket(eps)
        return hi if self.pessimistic_estimate else lo

    def power_bracket(self, alpha: npt.ArrayLike) -> tuple[float, float] | tuple[FloatArray, FloatArray]:
        """Certified ``(lower, upper)`` on the best attack's power 1 - beta(alpha) at false-positive rate alpha
        (vectorised): :func:`ppk.tradeoff.power_bracket`, docs/tradeoff.md."""
        from .. import _power     # delta is H(P || Q) alone for a PLD of one adjacency
        return _power.bracket(lambda e: self.log_delta_bracket(e), not self._one_sided, alpha)

    def get_epsilon_for_delta(self, delta: float) -> float:
        """Smallest eps >= 0 whose upper bound is <= delta (inf if the infinity masses, or the bound's own error
        terms, exceed delta at every eps); never NaN, and never above the pure-DP cap of a plan whose every part
        has a bounded loss (docs/accuracy.md, "The pure-DP cap")."""
        delta = real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False)
        # pure DP: delta(eps) = 0 from the cap on, so the answer is at most the cap (a double >= the largest loss)
        return min(self._search_epsilon(delta), self._cap())

    def _search_epsilon(self, delta: float) -> float:
        target = LD(delta)

        def excess(e: float) -> float:   # non-increasing in e; feasible where <= 0
            # compared in long double: the upper end rounded to double could pass where it exceeds delta
            d = self._upper_ld(e) - target
            return float(d) if d <= 0 or float(d) > 0 else 5e-324

        lo, curve = 0.0, self._curve()
        if curve is None:
            f0 = excess(0.0)
            if f0 <= 0:
                return 0.0
            m = self._atoms
            k_max = max(abs(m.offset), abs(m.offset + m.p.size)) + 1
            hi = (k_max + 1) * self.value_discretization_interval
        else:   # a plan's losses reach far: its curve brackets eps (0 included) from a guess, or in closed form
            lo, hi = curve.epsilon_bracket(math.log(delta))
            if hi == math.inf:     # the curve's mass at +inf alone exceeds delta
                return math.inf
            f0 = excess(lo)
            if hi == 0.0 or f0 <= 0:   # (a subnormal delta: both ends evaluate feasible; the smaller is)
                return lo
        f_hi = excess(hi)
        if f_hi > 0:
            return math.inf
        return smallest_feasible(excess, lo, hi, f_lo=f0, f_hi=f_hi, rtol=1e-12).x

    # ------------------------------------------------------------------ composition
    def compose(self, other: "PrivacyLossDistribution", *, independent: bool | None = None,
                tail_mass_truncation: float = 0.0) -> "PrivacyLossDistribution":
        """The PLD of running both mechanisms on independent randomness (losses add).  Two natural-noise PLDs
        over the same unknown rows share them (their noise is not fresh): ``ValueError``, unless
        ``independent=True`` says the releases really use disjoint unknown rows.  ``tail_mass_truncation``:
        dp_accounting's keyword (ppk.pld._composition.truncation_bound: never less pessimistic)."""
        bound = _composition.truncation_bound(tail_mass_truncation)
        instance("other", other, PrivacyLossDistribution, "a PrivacyLossDistribution")
        return _composition.compose(self, other, independent=_check_independent(independent), truncate=True,
                                    eager=False, log_bound=bound)

    def _compose(self, other: "PrivacyLossDistribution", *, independent: bool | None,
                 truncate: bool, eager: bool = False) -> "PrivacyLossDistribution":
        instance("other", other, PrivacyLossDistribution, "a PrivacyLossDistribution")
        return _composition.compose(self, other, independent=_check_independent(independent), truncate=truncate,
                                    eager=eager)

    def self_compose(self, num_times: int, *, independent: bool | None = None,
                     tail_mass_truncation: float = 0.0) -> "PrivacyLossDistribution":
        """``num_times``-fold composition with itself: a plan (``composition="auto"``, no work now; ValueError
        if its composed loss would not fit one FFT), or binary powering of the vectors (``"exact"``,
        ``"fft"``: O(log k) convolutions; ValueError before more than ``MAX_SELF_COMPOSE_WORK`` entries).
        ``tail_mass_truncation``: as in :meth:`compose`."""
        bound = _composition.truncation_bound(tail_mass_truncation)
        k = integer("num_times", num_times, minimum=1)
        return _composition.self_compose(self, k, independent=_check_independent(independent), log_bound=bound)

    # ------------------------------------------------------------------ coarsening
    def _coarsen(self) -> None:
        """Merge bucket pairs in both representations: Delta doubles (a plan's vectors composed first)."""
        if self._plan is not None:
            cap = plan_cap(self._plan.factors)     # the plan's cap outlives it
            self._max_loss = cap if math.isfinite(cap) else None
        self._plan = None
        self._buckets.coarsen(self.value_discretization_interval)
        self._atoms.coarsen(self.value_discretization_interval)
        self.value_discretization_interval *= 2
        self._reach = max(1, math.ceil((self._reach + 1) / 2))
        self._sums = None

    def _coarsened(self) -> "PrivacyLossDistribution":
        out = PrivacyLossDistribution.__new__(PrivacyLossDistribution)
        out.__dict__.update(self.__dict__)
        out._buckets, out._atoms = self._buckets.copy(), self._atoms.copy()
        out._plan = None
        out._coarsen()
        return out

    def __repr__(self) -> str:
        if self._plan is not None and self._buckets_v is None:
            return f"PrivacyLossDistribution(composed: {self._plan!r})"
        return (f"PrivacyLossDistribution({self.mass_upper.size} buckets of {self.value_discretization_interval:g}, "
                f"width {self.width:.6g}, infinity masses {float(self.infinity_mass_upper):.3g}/"
                f"{float(self.infinity_mass_lower):.3g}, overflow {float(self.overflow_mass_upper):.3g}/"
                f"{float(self.overflow_mass_lower):.3g})")



def _check_independent(independent: object) -> bool | None:
    return None if independent is None else flag("independent", independent)


def _check_noise_key(key: object) -> tuple[str, int, int] | None:
    """None, or the rows key ``("rows", n, known)`` of the (n, known, p) given: the table whose unknown rows a
    natural-noise PLD's releases share (CountingQuery._rows_key)."""
    if key is None:
        return None
    n, known, p = sequence("shared_noise_key", key, lambda name, v: v, min_length=3, max_length=3)
    real("shared_noise_key[2]", p, minimum=0.0, maximum=1.0)
    return ("rows", integer("shared_noise_key[0]", n, minimum=0), integer("shared_noise_key[1]", known, minimum=0))

