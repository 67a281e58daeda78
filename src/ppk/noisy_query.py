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
  ``sum_o (P(o) - e^eps Q(o))_+`` over the pmf of ``X + Z``, each value summed directly over the window
  on the outputs where the loss can cross eps, and one difference of tails beyond them.
* ``"crossings"`` -- continuous noise with natural noise that is not log-concave (mixtures, U-shaped
  beta-binomials, arbitrary pmfs): every crossing of the loss with eps is located and the intervals
  are summed.  Both noises are totally positive kernels, so the number of crossings is at most the
  number of sign changes of ``w_{k-d} - e^eps w_k``; when that many are found (or the rest of the line
  is proven negative cell by cell) the upper bound is certified, otherwise it falls back to a bound by
  post-processing.

All but the counting kernel run in C++ in long double (``ppk._family``, ``cpp/include/ppk/family/``).
Every path works on windows of the natural noise's pmf holding all values within ``e^-depth`` of its
mode; the mass left out enters the upper bound, and the depth grows until it is negligible.

Where delta is tiny (large eps sigma^2 / d) the optimal set lies far beyond the window: for the
Gaussian laws every crossing of the loss with eps lies within ``eps sigma^2 / d + d/2`` plus the
window's span (the loss is an average of the termwise ratios: ``crossing_span`` in
``ppk/family/lattice.hpp``), and the root search, the lattice sum and the crossings' grid go there;
the Laplace laws' loss is at most ``d / b``.  What holds (``log_delta_upper`` always; ``log_delta``
as stated):

* ``log_delta_upper >= log delta``, finite unless delta is exactly 0, at least ``-1.8e308``.
* ``log_delta <= log_delta_upper``, within 1e-12 relative of delta above 1e-300 and 1e-14 of
  ``|log delta|`` below (measured against 40-digit oracles from the definition on all three family
  paths) where the window's slack is negligible; a binomial's windows deepen to its whole support.
* Where the windows cannot resolve delta -- the deepest (``e^-DEPTH_MAX``) leaves out more than
  delta of a natural noise other than the binomial -- or ``|log delta| > 5e11``, ``log_delta`` is
  reported equal to the bound (pessimistic; the closed-form caps of :meth:`NoisyQuery._cap` keep it
  near the added noise's own delta).
"""
from __future__ import annotations

import math
import sys
import threading
from fractions import Fraction
from typing import Any, Sequence

import numpy as np
import numpy.typing as npt

from . import _family, _kernels
from ._family import DEPTH_MAX, DEPTH_START, BINOMIAL_DEPTH_MAX, _dg_log_sf, _Result
from ._curve import EPS_SEARCH_MAX, PrivacyCurve
from ._logmath import log1mexp
from ._search import log_target
from .baselines import (analytic_gaussian_epsilon, analytic_gaussian_log_delta, analytic_gaussian_log_delta_upper,
                        analytic_gaussian_sigma)
from ._typing import FloatArray
from ._validate import integer, real, real_array, sequence
from .noise import (MAX_WINDOW, MIN_SCALE, AddedNoise, Binomial, DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace,
                    NaturalNoise, NoNoise, Window)

__all__ = ["NoisyQuery", "PATHS"]

#: The computation paths (see the module docstring).
PATHS = ("counting kernel", "threshold", "lattice sum", "crossings")

MAX_SENSITIVITY = 10_000
LATTICE_BUDGET = 3e9       # most multiply-adds of a lattice sum with added noise
CROSSINGS_BUDGET = 2e10    # most terms (window value times added law) the crossings path may evaluate
_CROSSINGS_GRID_MAX, _CROSSINGS_CELLS = 20000, 20000   # ppk/family/crossings.hpp: kMaxGrid, kCellBudget
_LOG_TINY_RELATIVE = math.log(1e-11)   # the window's slack is negligible below this fraction of delta
_LOG_TIGHT = 1e-3      # an upper bound within this (in log) of the estimate: the noiseless cap, >= delta, cannot help


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
    unless delta is exactly 0); ``log_delta`` never exceeds it and is within 1e-12 relative of delta
    above 1e-300, 1e-14 of ``|log delta|`` below, where the windows resolve it (the module's docstring
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
            # the counting kernel is exact at every sigma > 0; the other paths scan and bracket the output
            # line at the noise's scale, and a smaller noise is none on integer data
            raise ValueError(f"sigma must be >= {MIN_SCALE:g} for this natural noise and sensitivity (a smaller "
                             f"noise is none on integer data: use NoNoise()), got {added.sigma!r}")
        self._init_caches()

    def _init_caches(self) -> None:
        # Every cache below is filled once, under the query's lock, and never replaced: a query shared by
        # threads gives the serial results bit for bit.  (Unlocked, two threads built the same window twice;
        # the first copy was freed, its id reused by a deeper window, and the C++ windows -- keyed by id --
        # answered that one with the shallower window's: a looser bound, 47 of 312 calls from 8 threads.)
        # The C++ calls run outside the lock, the GIL released.
        self._lock = threading.RLock()
        self._windows: dict[float, Window] = {}
        self._variance: float | None = None     # of the natural noise's first window
        self._family_law: Any = None                     # the added law in C++ (ppk._family)
        self._family_windows: dict[Any, Any] = {}        # C++ windows: a binomial's by depth, others' by id
        self._noiseless: NoisyQuery | None = None

    def __getstate__(self) -> dict[str, Any]:
        # the laws and shifts only: the lock and the C++ windows do not pickle, and the caches refill
        return {"natural": self.natural, "added": self.added, "shifts": self.shifts, "sensitivity": self.sensitivity}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._init_caches()

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
        scale = real("scale", scale, minimum=0.0)
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

        # (no smaller scale than MIN_SCALE exists in the law: at a huge eps that one may already be private)
        hi = max(s * (math.sqrt(2 * math.log(1.25 / delta)) + 1) / eps, MIN_SCALE)
        if excess(hi) <= 0 and hi == MIN_SCALE:
            return hi
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
        with self._lock:
            if depth not in self._windows:
                self._windows[depth] = self.natural.window(depth)
            return self._windows[depth]

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
        # a binomial's windows are built in C++ from the counting kernel's pmf, to any depth (its lattice sum
        # without added noise, sensitivity > 1, too)
        binomial = path in ("threshold", "lattice sum") and isinstance(self.natural, Binomial)
        depth_max = BINOMIAL_DEPTH_MAX if binomial else DEPTH_MAX
        depth, last_dropped = self._start_depth(eps, path, depth_max, binomial), math.inf     # (logs)
        while True:
            w = _family.binomial_window(self, depth) if binomial else self._window(depth)
            here = path
            if here == "threshold" and not (self.natural.log_concave or w.log_concave):
                here = self._path_without_log_concavity()   # this deeper window is not log-concave
            res = self._evaluate_window(w, eps, here)
            slack = w.log_dropped + float(np.logaddexp(0.0, eps))          # (1 + e^eps) D
            upper = float(np.logaddexp(res.log_upper, slack))
            negligible = slack <= res.log_delta + _LOG_TINY_RELATIVE or res.log_delta == -math.inf
            if negligible or depth >= depth_max or w.log_dropped >= last_dropped - 0.7:
                break      # (the last: a deeper window leaves out no less -- the law's rounding floor)
            deeper = _family.binomial_window(self, 2 * depth) if binomial else self._window(2 * depth)
            if deeper is None:
                break      # (a binomial window beyond ppk.noise.MAX_WINDOW values: report the bound)
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

    def _start_depth(self, eps: float, path: str, depth_max: float = DEPTH_MAX, binomial: bool = False) -> float:
        """The first window's depth: on the threshold path, the rung of the doubling ladder
        DEPTH_START * 2^j just below the depth the slack would need if delta were that of a Gaussian of
        the same variance (noise variance taken as 2 scale^2, at least that of every added law here: a
        larger variance means a larger delta, a shallower start); else DEPTH_START.  Only a start:
        deepening continues from it until the slack is negligible.  (A shallow window's own estimate
        cannot guide it: its root sits at the window's edge.)"""
        first = _family.binomial_window(self, DEPTH_START) if binomial else self._window(DEPTH_START)
        if path != "threshold" or first.log_dropped == -math.inf or not self.added.scale < math.inf:
            return DEPTH_START      # (a window holding the whole support: no deeper one differs)
        with self._lock:
            if self._variance is None:
                self._variance = _family.variance(self, first)
        sd = math.sqrt(self._variance + 2 * self.added.scale ** 2)
        if not sd > 0:
            return DEPTH_START
        log_delta = float(analytic_gaussian_log_delta(sigma=sd, eps=eps, sensitivity=float(self.sensitivity)))
        need = -log_delta - _LOG_TINY_RELATIVE
        depth = DEPTH_START
        while 2 * depth <= min(need, depth_max):
            depth *= 2
        # a binomial's window at that depth may hold more than ppk.noise.MAX_WINDOW values (None): start at the
        # deepest that does, and report its bound (Bin(3e8, 0.3) with sigma = 2 at eps = 0.5, delta ~ e^-8e6,
        # passed None to the engine)
        if binomial:      # (its width ~ 2 sqrt(2 depth N p q): the windows far too wide are not built to be refused)
            assert isinstance(self.natural, Binomial)
            npq = self.natural.n * self.natural.p * (1 - self.natural.p)
            while depth > DEPTH_START and 2 * math.sqrt(2 * depth * npq) > 1.5 * MAX_WINDOW:
                depth /= 2
            while depth > DEPTH_START and _family.binomial_window(self, depth) is None:
                depth /= 2
        return depth

    def _evaluate_window(self, w: Any, eps: float, path: str) -> _Result:
        """delta for one window on one path, in C++ (ppk._family): the largest over the shifts, both ways."""
        if path == "threshold":
            return _family.threshold(self, w, eps)
        if path == "lattice sum":
            self._check_lattice_work(w)
            return _family.lattice(self, w, eps)
        self._check_crossings_work(w)
        return _family.crossings(self, w, eps)

    def _check_crossings_work(self, w: Any) -> None:
        """The crossings path runs once per shift and direction (ppk/family/crossings.hpp): a grid of G points
        of spacing scale/4 over the window, the shift and the law's reach both ways (G <= 20000), at worst a
        root bisected (~80 losses) between every two of them, and up to G + 2 * 20000 cell bounds; each
        loss or cell bound sums the n values of the window twice.  Refused beyond CROSSINGS_BUDGET terms (a
        mixture of 161 rows with Laplace noise of scale 38.9 and sensitivity 1000 ran for minutes)."""
        h = self.added.scale / 4
        reach = 2 * self.added._reach(74.0)
        work = 0.0
        for d in self.shifts:
            grid = min((w.size + d + reach) / h + 2, _CROSSINGS_GRID_MAX)
            work += 2 * (82 * grid + 2 * _CROSSINGS_CELLS) * 2 * w.size
        if work > CROSSINGS_BUDGET:
            raise ValueError(f"the crossings path for {len(self.shifts)} shift(s) over a window of {w.size} values of "
                             f"the natural noise may evaluate {work:.2g} terms, more than {CROSSINGS_BUDGET:.0e}: use "
                             "fewer shifts (a smaller sensitivity, or shifts=), a log-concave natural noise (the "
                             "threshold path) or a discrete added noise (the lattice sum)")

    def _check_lattice_work(self, w: Any) -> None:
        """A lattice law over a window of n values sums about n + s outputs, each of up to min(n, 2 R + 1)
        terms (R the law's reach) twice: refused beyond LATTICE_BUDGET."""
        if isinstance(self.added, NoNoise):
            return
        reach = 2 * math.ceil(self.added._reach(94.0)) + 1
        work = 2.0 * (w.size + self.sensitivity + 2) * min(w.size, reach) * len(self.shifts)
        if work > LATTICE_BUDGET:
            raise ValueError(f"the lattice sum of the natural plus the added noise needs {work:,.0f} multiply-adds, "
                             "too many: use a smaller added-noise scale or a log-concave natural noise (then the "
                             "threshold path sums around its peaks only)")

    def _cap(self, eps: float) -> float:
        """Upper bounds by post-processing, in closed form: the added noise alone (the natural noise alone,
        a lattice sum, is :meth:`_noiseless_cap`)."""
        caps = [0.0]
        s = float(self.sensitivity)
        if isinstance(self.added, Gaussian):
            caps.append(analytic_gaussian_log_delta_upper(sigma=self.added.sigma, eps=eps, sensitivity=s))
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
            if not t / sigma <= 2e6:     # the Chernoff bound, as in ppk/family/lattice.hpp (crossing_span)
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
        with self._lock:
            if self._noiseless is None:
                noiseless = NoisyQuery(natural=self.natural, added=NoNoise(), shifts=self.shifts)
                noiseless._windows, noiseless._lock = self._windows, self._lock    # (one dict, one lock)
                self._noiseless = noiseless
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

    def _log_delta_upper_at(self, eps: float) -> float:
        return self._evaluate(eps).log_upper

    def _epsilon_start(self, delta: float, root_target: float, excess) -> tuple[float, float]:
        """On the counting kernel's path, where one Gaussian of the total variance (natural plus added) reaches
        ``delta`` (docs/decisions.md, "The Gaussian approximation is not a certificate"), with a step from the
        model's slope there; elsewhere eps = 1."""
        if not self._counting_kernel:
            return 1.0, 1.0
        n, p, sigma = self._kernel_args
        s_eff = math.hypot(sigma, math.sqrt(n * p * (1.0 - p)))     # (sigma ** 2 overflowed at sigma = 1e300)
        if not s_eff > 0:
            return 1.0, 1.0
        guess = min(analytic_gaussian_epsilon(sigma=s_eff, delta=delta, rtol=1e-13), EPS_SEARCH_MAX)
        step = 0.25 * guess + 1e-12
        if guess > 0:   # the model's distance to the root, from its slope at the guess
            h = 1e-6 * guess

            def model(e: float) -> float:
                return root_target - math.sqrt(-min(analytic_gaussian_log_delta_upper(sigma=s_eff, eps=e), 0.0))

            slope = (model(guess + h) - model(guess - h)) / (2.0 * h)
            if slope < 0 and math.isfinite(slope):
                step = 1.5 * abs(excess(guess) / slope)
        return guess, step
