"""The privacy-curve protocol: the one door through which everything above the queries reaches them.

A query class defines ``_curve(eps) -> (log_delta, log_delta_upper, scalar)`` -- the arrays shaped
like ``eps``, ``scalar`` true when ``eps`` was a number -- and inherits the four public views from here
(log delta, delta, and their certified upper ends).  For calibration (:func:`ppk.calibrate`) it also
names the noise scale calibration moves (:attr:`PrivacyCurve.scale`, :meth:`PrivacyCurve.with_scale`)
and plain DP's scale for the same release (:meth:`PrivacyCurve.dp_scale`).  docs/architecture.md
shows who may call whom.
"""
from __future__ import annotations

import math
from typing import ClassVar, Hashable, NamedTuple, overload

import numpy as np
import numpy.typing as npt

from ._logmath import exp_down, exp_up
from ._typing import FloatArray


#: The largest eps :meth:`PrivacyCurve.epsilon` searches; beyond it the answer is inf.
EPS_SEARCH_MAX = 1e4


class ExactLoss(NamedTuple):
    """How a query knows its privacy loss exactly (:meth:`PrivacyCurve._exact_loss`), in a form the PLD
    builders read (``ppk.PrivacyLossDistribution.from_curve``).  ``form`` is one of

    * ``"tails"``: the exact tails of the loss, :meth:`PrivacyCurve._loss_tail_logs`; ``symmetric`` when
      the reversed pair (Q, P) has the pair's law of the loss, so its tails are the forward ones;
    * ``"gaussian"``: the Gaussian mechanism N(0, sigma^2) vs N(1, sigma^2), ``sigma``;
    * ``"pmfs"``: the two output laws as pmfs on one support, ``pmfs = (P, Q)``.
    """

    form: str
    symmetric: bool = False
    sigma: float = 0.0
    pmfs: tuple[FloatArray, FloatArray] | None = None


class PrivacyCurve:
    """delta(eps) of a release: ``log_delta``, ``delta``, ``log_delta_upper``, ``delta_upper``."""

    __slots__ = ()

    #: Defaults of :func:`ppk.calibrate` for this kind of query: the relative width of the final bracket
    #: on the scale, and the factor ``1 + grow`` by which a scale private in exact arithmetic is raised
    #: while the rounding allowance of its certified bound keeps it from certifying.
    _calibration_rtol: ClassVar[float] = 1e-8
    _calibration_grow: ClassVar[float] = 1e-12

    def _calibration_scale_cap(self) -> float:
        """The largest scale the search may evaluate (:func:`ppk.calibrate`; inf: every scale the law takes)."""
        return math.inf

    def _curve(self, eps: npt.ArrayLike) -> tuple[FloatArray, FloatArray, bool]:
        raise NotImplementedError

    # -- the calibration protocol
    @property
    def scale(self) -> float:
        """The noise scale calibration moves, in the query's units (:attr:`scale_name`); 0 for no added noise."""
        raise NotImplementedError

    @property
    def scale_name(self) -> str:
        """What :attr:`scale` is: ``"sigma"`` (a standard deviation in counts) or ``"scale"`` (a Laplace scale)."""
        return "sigma"

    def with_scale(self, scale: float) -> "PrivacyCurve":
        """The same release with the added noise at another scale (0: no added noise)."""
        raise NotImplementedError

    @property
    def has_natural_noise(self) -> bool:
        """False when no row is unknown to the attacker beyond the challenge row: the curve is plain DP's."""
        return True

    def dp_scale(self, *, eps: float, delta: float) -> float:
        """The least scale with which the release is (eps, delta)-DP against an attacker who knows every other
        row (no natural noise).  By post-processing it is private for this query too: calibration's start."""
        raise NotImplementedError

    def without_natural_noise(self) -> "PrivacyCurve":
        """The same release against an attacker who knows every other row: plain DP's curve of this noise."""
        raise NotImplementedError

    def epsilon(self, delta: float, *, rtol: float = 1e-10) -> float:
        """Smallest eps with ``delta_upper(eps) <= delta``, rounded up (``inf`` if no eps up to 1e4 reaches it)."""
        from ._search import log_target, smallest_feasible_near
        from ._validate import real
        target = log_target(real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False))
        rtol = real("rtol", rtol, minimum=0.0, min_inclusive=False)
        root_target = math.sqrt(-target)
        cache: dict[float, float] = {}

        def excess(e: float) -> float:
            # -log delta grows like eps^2 var / 2, so the difference of square roots is nearly linear in eps
            # (delta = 0 counts as e^-1e300)
            if e not in cache:
                cache[e] = root_target - math.sqrt(-min(max(self._log_delta_upper_at(e), -1e300), 0.0))
            return cache[e]

        guess, step = self._epsilon_start(delta, root_target, excess)
        found = smallest_feasible_near(excess, guess, step, upper=EPS_SEARCH_MAX, rtol=rtol)
        return math.inf if found is None else found.x

    def _epsilon_start(self, delta: float, root_target: float, excess) -> tuple[float, float]:
        """Where :meth:`epsilon` starts its search and its first step: eps = 1, step 1, unless a query
        knows a better model of its curve."""
        return 1.0, 1.0

    def _log_delta_upper_at(self, eps: float) -> float:
        """``log_delta_upper(eps)`` at one eps, the calibration search's question; a query may answer it more
        cheaply than the whole curve (a bracketed query need not compute the lower end)."""
        return float(self._curve(eps)[1])

    # -- the privacy loss distribution protocol (ppk.PrivacyLossDistribution.from_curve, ppk.Accountant)
    @property
    def _rows_key(self) -> Hashable | None:
        """What names the unknown rows whose natural noise the release draws on; None when it shares none
        (no natural noise).  Two releases with one key share those rows: their noise is not fresh, so
        composing them as independent would under-report delta, and the accountant refuses it."""
        return None

    def _log_delta_ends_many(self, eps: FloatArray, *, rtol: float) -> tuple[FloatArray, FloatArray]:
        """``(lower, upper)``, logs, at every eps of an array, for ``connect_the_dots`` (ppk.pld.curves): ``upper``
        is the certified upper curve; ``lower`` a lower end of some delta curve convex in e^eps that lies below it
        (the query's own delta, or the bound it certifies), which only measures how loose the PLD is.  ``rtol``:
        how narrow the pair may be (a query that brackets by summation may stop there; an upper end of a wider
        bracket is still an upper end).  By default the upper curve as both (a query without this hook is
        measured against its own upper curve)."""
        log_u = np.asarray(self.log_delta_upper(eps), dtype=np.float64)
        return log_u, log_u

    #: True for a query whose upper curve costs a summation per eps (HistogramQuery, TablePlan): a PLD built
    #: from it places its knots by the curve's drop (ppk.pld._knots); a cheap curve is read on a uniform grid.
    _costly_curve: ClassVar[bool] = False

    def _exact_loss(self) -> ExactLoss | None:
        """How the query knows its privacy loss exactly, or None (the default): then
        ``PrivacyLossDistribution.from_curve`` builds a dominating pair from the certified upper curve alone."""
        return None

    def _loss_tail_logs(self, eps: FloatArray, *, mirrored: bool) -> tuple[FloatArray, FloatArray]:
        """Exact tails of the privacy loss ``L = log(P/Q)``, P and Q the output's laws with and without the
        challenge row: ``(log P(L > eps), log Q(L > eps))`` for each ``eps >= 0``; with ``mirrored``, the
        same for the reversed pair (Q, P), whose loss is ``-L``: ``(log Q(L <= -eps), log P(L <= -eps))``.
        A query offers them when :meth:`_exact_loss` says ``"tails"``; by default it has none."""
        raise NotImplementedError

    @overload
    def log_delta(self, eps: float) -> float: ...
    @overload
    def log_delta(self, eps: npt.ArrayLike) -> FloatArray: ...
    def log_delta(self, eps: npt.ArrayLike) -> float | FloatArray:
        """Natural log of delta(eps): finite far below 1e-308, ``-inf`` only where delta is 0.

        ``eps`` is a float or an array (vectorised).  The accuracy of each query class is stated in
        its documentation (docs/accuracy.md, docs/natural-noise.md).
        """
        log_d, _, scalar = self._curve(eps)
        return float(log_d) if scalar else log_d

    @overload
    def delta(self, eps: float) -> float: ...
    @overload
    def delta(self, eps: npt.ArrayLike) -> FloatArray: ...
    def delta(self, eps: npt.ArrayLike) -> float | FloatArray:
        """delta(eps) as a float (0.0 where it is below the float range; use :meth:`log_delta`; the certified
        ends, rounded outward, are :meth:`delta_upper` and ``delta_bracket``)."""
        log_d, _, scalar = self._curve(eps)
        return float(np.exp(log_d)) if scalar else np.exp(log_d)

    @overload
    def log_delta_upper(self, eps: float) -> float: ...
    @overload
    def log_delta_upper(self, eps: npt.ArrayLike) -> FloatArray: ...
    def log_delta_upper(self, eps: npt.ArrayLike) -> float | FloatArray:
        """Natural log of :meth:`delta_upper`."""
        _, log_u, scalar = self._curve(eps)
        return float(log_u) if scalar else log_u

    @overload
    def delta_upper(self, eps: float) -> float: ...
    @overload
    def delta_upper(self, eps: npt.ArrayLike) -> FloatArray: ...
    def delta_upper(self, eps: npt.ArrayLike) -> float | FloatArray:
        """A certified upper bound on delta(eps): it includes bounds on rounding, on truncated sums and
        on the threshold search, so ``delta <= delta_upper`` always.  Calibrations use it, so the noise
        they return is never too small."""
        _, log_u, scalar = self._curve(eps)
        return float(exp_up(log_u)) if scalar else exp_up(log_u)

    def power_bracket(self, alpha: npt.ArrayLike) -> tuple[float, float] | tuple[FloatArray, FloatArray]:
        """Certified ``(lower, upper)`` on the best attack's power 1 - beta(alpha) at false-positive rate alpha
        (vectorised): :func:`ppk.tradeoff.power_bracket`, docs/tradeoff.md."""
        from . import _power
        return _power.bracket(_power.estimate_ends(self.log_delta, self.log_delta_upper), True, alpha)


class BracketedCurve(PrivacyCurve):
    """A curve known between two certified ends: the class defines ``_log_bracket(eps) -> (log_lower,
    log_upper, scalar)``; ``delta`` and ``log_delta`` report the upper end (never under-reported), and
    ``delta_bracket`` / ``log_delta_bracket`` give both."""

    __slots__ = ()

    def _log_bracket(self, eps: npt.ArrayLike) -> tuple[FloatArray, FloatArray, bool]:
        raise NotImplementedError

    def _curve(self, eps: npt.ArrayLike) -> tuple[FloatArray, FloatArray, bool]:
        _, upper, scalar = self._log_bracket(eps)
        return upper, upper, scalar

    @overload
    def delta(self, eps: float) -> float: ...
    @overload
    def delta(self, eps: npt.ArrayLike) -> FloatArray: ...
    def delta(self, eps: npt.ArrayLike) -> float | FloatArray:
        """The certified upper end of delta(eps), rounded up (:meth:`delta_upper`; the least subnormal where
        it is below the float range: use :meth:`log_delta` there)."""
        return self.delta_upper(eps)

    def _log_delta_ends_many(self, eps: FloatArray, *, rtol: float) -> tuple[FloatArray, FloatArray]:
        lower, upper, _ = self._log_bracket(eps)
        return np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)

    @overload
    def log_delta_bracket(self, eps: float) -> tuple[float, float]: ...
    @overload
    def log_delta_bracket(self, eps: npt.ArrayLike) -> tuple[FloatArray, FloatArray]: ...
    def log_delta_bracket(self, eps: npt.ArrayLike) -> tuple[float, float] | tuple[FloatArray, FloatArray]:
        """Natural logs of :meth:`delta_bracket`."""
        lower, upper, scalar = self._log_bracket(eps)
        return (float(lower), float(upper)) if scalar else (lower, upper)

    @overload
    def delta_bracket(self, eps: float) -> tuple[float, float]: ...
    @overload
    def delta_bracket(self, eps: npt.ArrayLike) -> tuple[FloatArray, FloatArray]: ...
    def delta_bracket(self, eps: npt.ArrayLike) -> tuple[float, float] | tuple[FloatArray, FloatArray]:
        """``(lower, upper)``: certified ends between which delta(eps) lies (vectorised over eps)."""
        lower, upper, scalar = self._log_bracket(eps)
        if scalar:
            return float(exp_down(lower)), float(exp_up(upper))
        return exp_down(lower), exp_up(upper)

    def power_bracket(self, alpha: npt.ArrayLike) -> tuple[float, float] | tuple[FloatArray, FloatArray]:
        """Certified ``(lower, upper)`` on the best attack's power 1 - beta(alpha) at false-positive rate alpha
        (vectorised), from both certified ends of delta: :func:`ppk.tradeoff.power_bracket`."""
        from . import _power
        return _power.bracket(lambda e: self.log_delta_bracket(e), True, alpha)
