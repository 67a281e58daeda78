"""The four views every privacy curve offers (log delta, delta, and their certified upper bounds).

A query class defines ``_curve(eps) -> (log_delta, log_delta_upper, scalar)`` -- the arrays shaped
like ``eps``, ``scalar`` true when ``eps`` was a number -- and inherits the public methods from here.
"""
from __future__ import annotations

from typing import overload

import numpy as np
import numpy.typing as npt

from ._typing import FloatArray


class PrivacyCurve:
    """delta(eps) of a release: ``log_delta``, ``delta``, ``log_delta_upper``, ``delta_upper``."""

    __slots__ = ()

    def _curve(self, eps: npt.ArrayLike) -> tuple[FloatArray, FloatArray, bool]:
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
        """delta(eps) as a float (0.0 where it is below the float range; use :meth:`log_delta`)."""
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
        return float(np.exp(log_u)) if scalar else np.exp(log_u)


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
            return float(np.exp(lower)), float(np.exp(upper))
        return np.exp(lower), np.exp(upper)
