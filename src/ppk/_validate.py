"""Argument checks shared by the public API.

Every public function validates here, before any C++ is called, so that bad
input gives a ``TypeError``/``ValueError`` that names the parameter, the value
and the allowed range.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["integer", "real", "real_array", "INT_MAX", "EPS_MAX_CLOSED_FORM"]


#: Largest eps the closed-form composition formulas take: e^eps overflows a double beyond ~709,
#: and an eps of hundreds promises nothing anyway.
EPS_MAX_CLOSED_FORM = 700.0

#: Largest integer any parameter takes: the C++ core counts in signed 64-bit integers.
INT_MAX = 2**63 - 1


def _show(value) -> str:
    """repr of a value for an error message, short even for a 400-digit integer."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"


def integer(name: str, value, *, minimum: int | None = None, maximum: int | None = INT_MAX) -> int:
    """Return ``value`` as ``int``; integral floats (``1e5``) are accepted."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got a bool ({value!r})")
    if isinstance(value, numbers.Integral):
        out = int(value)
    elif isinstance(value, numbers.Real):
        try:
            v = float(value)
        except OverflowError:
            raise ValueError(f"{name} must be a whole number within the float range, got {_show(value)}") from None
        if not math.isfinite(v) or v != math.floor(v):
            raise ValueError(f"{name} must be a whole number, got {_show(value)}")
        out = int(v)
    else:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} ({_show(value)})")
    _check_range(name, out, minimum, maximum, True, True)
    return out


def real(name: str, value, *, minimum: float | None = None, maximum: float | None = None,
         min_inclusive: bool = True, max_inclusive: bool = True) -> float:
    """Return ``value`` as a finite ``float`` within the given range."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} ({_show(value)})")
    try:
        out = float(value)
    except OverflowError:
        raise ValueError(f"{name} must be finite (within the float range), got {_show(value)}") from None
    if not math.isfinite(out):
        raise ValueError(f"{name} must be finite, got {_show(value)}")
    _check_range(name, out, minimum, maximum, min_inclusive, max_inclusive)
    return out


def real_array(name: str, value, *, minimum: float | None = None, maximum: float | None = None,
               min_inclusive: bool = True) -> tuple[np.ndarray, bool]:
    """Return (1-d float64 array, was_scalar); every entry finite and in range."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a real number or an array of them, got a bool")
    try:
        arr = np.asarray(value)
    except (OverflowError, ValueError):
        raise ValueError(f"{name} must be real numbers within the float range, got {_show(value)}") from None
    if arr.dtype == object:
        raise TypeError(f"{name} must be real numbers within the float range, got {_show(value)}")
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be real (float or int), got dtype {arr.dtype}")
    scalar = arr.ndim == 0
    flat = np.ascontiguousarray(arr, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(flat)):
        raise ValueError(f"{name} must be finite, got {_first_bad(flat, ~np.isfinite(flat))}")
    if minimum is not None:
        bad = flat < minimum if min_inclusive else flat <= minimum
        if np.any(bad):
            op = ">=" if min_inclusive else ">"
            raise ValueError(f"{name} must be {op} {minimum}, got {_first_bad(flat, bad)}")
    if maximum is not None and np.any(flat > maximum):
        raise ValueError(f"{name} must be <= {maximum}, got {_first_bad(flat, flat > maximum)}")
    return flat, scalar


def _first_bad(flat: np.ndarray, mask: np.ndarray) -> str:
    return repr(float(flat[np.argmax(mask)]))


def _check_range(name, value, minimum, maximum, min_inclusive, max_inclusive) -> None:
    if minimum is not None and (value < minimum or (not min_inclusive and value == minimum)):
        op = ">=" if min_inclusive else ">"
        raise ValueError(f"{name} must be {op} {minimum}, got {_show(value)}")
    if maximum is not None and (value > maximum or (not max_inclusive and value == maximum)):
        op = "<=" if max_inclusive else "<"
        raise ValueError(f"{name} must be {op} {maximum}, got {_show(value)}")
