"""Argument checks shared by the public API.

Every public function validates here, before any C++ is called, so that bad
input gives a ``TypeError``/``ValueError`` that names the parameter, the value
and the allowed range.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any, Callable, Sequence, TypeVar

import numpy as np

__all__ = ["integer", "real", "real_array", "flag", "choice", "text", "sequence", "instance", "function", "INT_MAX",
           "EPS_MAX_CLOSED_FORM"]

T = TypeVar("T")


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


def flag(name: str, value) -> bool:
    """Return ``value`` as ``bool``: only True and False (Python's or numpy's) are accepted.

    Truthiness would take ``"no"`` and ``nan`` for True and fail on an array with a message that
    names no parameter.
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {type(value).__name__} ({_show(value)})")


def text(name: str, value) -> str:
    """Return ``value`` if it is a ``str``."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__} ({_show(value)})")
    return value


def choice(name: str, value, options: Sequence[str]) -> str:
    """Return ``value`` if it is one of the strings ``options``.

    The type is checked first: ``value in options`` would compare an array elementwise.
    """
    shown = ", ".join(repr(o) for o in options)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {shown}, got {type(value).__name__} ({_show(value)})")
    if value not in options:
        raise ValueError(f"{name} must be one of {shown}, got {_show(value)}")
    return value


def sequence(name: str, value, item: Callable[[str, Any], T], *, min_length: int = 0,
             max_length: int | None = None) -> list[T]:
    """Return the entries of a list, tuple, 1-d array or other iterable, each checked by
    ``item(f"{name}[i]", entry)``.

    A string, a mapping or a scalar is refused (iterating them would give characters, keys or an
    error that names no parameter).
    """
    if isinstance(value, (str, bytes, Mapping)) or (isinstance(value, np.ndarray) and value.ndim != 1) \
            or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be a list of values, got {type(value).__name__} ({_show(value)})")
    entries = list(value)
    if len(entries) < min_length:
        raise ValueError(f"{name} must hold at least {min_length} entries, got {len(entries)}")
    if max_length is not None and len(entries) > max_length:
        raise ValueError(f"{name} must hold at most {max_length} entries, got {len(entries)}")
    return [item(f"{name}[{i}]", v) for i, v in enumerate(entries)]


def instance(name: str, value, types: type | tuple[type, ...], what: str):
    """Return ``value`` if it is an instance of ``types``; ``what`` says what is expected, in words."""
    if not isinstance(value, types):
        raise TypeError(f"{name} must be {what}, got {type(value).__name__} ({_show(value)})")
    return value


def function(name: str, value) -> Callable:
    """Return ``value`` if it can be called."""
    if not callable(value):
        raise TypeError(f"{name} must be a function, got {type(value).__name__} ({_show(value)})")
    return value


def _first_bad(flat: np.ndarray, mask: np.ndarray) -> str:
    return repr(float(flat[np.argmax(mask)]))


def _check_range(name, value, minimum, maximum, min_inclusive, max_inclusive) -> None:
    if minimum is not None and (value < minimum or (not min_inclusive and value == minimum)):
        op = ">=" if min_inclusive else ">"
        raise ValueError(f"{name} must be {op} {minimum}, got {_show(value)}")
    if maximum is not None and (value > maximum or (not max_inclusive and value == maximum)):
        op = "<=" if max_inclusive else "<"
        raise ValueError(f"{name} must be {op} {maximum}, got {_show(value)}")
