"""Rounding a certified end outward: long-double ends to doubles, and the allowance of a last exp or log
(docs/accuracy.md, "Rounding of the certified ends")."""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._masses import LD

__all__: list[str] = []

#: Relative rounding of one long-double operation (exp, log), doubled.
_U_LD = float(np.finfo(LD).eps)


def _to_double(x: npt.NDArray[np.longdouble], *, up: bool) -> npt.NDArray[np.float64]:
    """Long doubles as doubles rounded outward: up (an upper end) or down (a lower end), never to nearest."""
    x = np.asarray(x, dtype=LD)
    with np.errstate(over="ignore"):     # beyond the double range: inf, which nextafter leaves alone
        y = x.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        off = y.astype(LD) < x if up else y.astype(LD) > x
        return np.where(off, np.nextafter(y, np.inf if up else -np.inf), y)


def _exp_up(log_x: npt.NDArray[np.longdouble]) -> npt.NDArray[np.longdouble]:
    """e^log_x in long double, raised by the exp's rounding (an upper end stays above the truth)."""
    # (1 + 4u in long double: the same sum in Python floats is 1.0); never above 1, which no delta exceeds
    return np.minimum(np.exp(np.asarray(log_x, dtype=LD)) * (LD(1) + LD(4 * _U_LD)), LD(1))


def _exp_down(log_x: npt.NDArray[np.longdouble]) -> npt.NDArray[np.longdouble]:
    return np.exp(np.asarray(log_x, dtype=LD)) * (LD(1) - LD(4 * _U_LD))


def _log_slack(log_x: npt.NDArray[np.longdouble]) -> npt.NDArray[np.longdouble]:
    """A few ulps of a long-double log (0 where it is infinite)."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(log_x), LD(4 * _U_LD) * (np.abs(log_x) + 1), LD(0))


