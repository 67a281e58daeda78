"""Argument checks the natural and the added laws share (the rest live in ``ppk._validate``).

Two things ``ppk._validate`` does not do: a ``depth`` (the e-folds below a peak that a window or a
reach spans), and real numbers kept at their own precision -- a long-double log-pmf must not be
rounded to double on its way in, and a law's points ``x`` may be +-inf.
"""
from __future__ import annotations

import numbers

import numpy as np

from .._validate import _show, real


def _depth(value: object) -> float:
    """A window's or a reach's ``depth`` (e-folds below the peak): finite and >= 0."""
    return real("depth", value, minimum=0.0)


def _numbers(name: str, value: object) -> np.ndarray:
    """``value`` (a real number, a list or an array of them) as an array: float arrays keep their dtype
    (long double stays long double), integer ones become float64.  Infinities and NaN pass: the caller
    says which it takes."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a real number or an array of them, got a bool ({value!r})")
    if isinstance(value, numbers.Real) and not isinstance(value, (np.ndarray, np.generic)):
        try:        # a Python int or a Fraction beyond the doubles
            value = float(value)
        except OverflowError:
            raise ValueError(f"{name} must be real numbers within the float range, got {_show(value)}") from None
    try:
        arr = np.asarray(value)
    except (OverflowError, ValueError, TypeError):
        raise ValueError(f"{name} must be real numbers within the float range, got {_show(value)}") from None
    if arr.dtype == object:
        raise TypeError(f"{name} must be real numbers within the float range, got {_show(value)}")
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be real (float or int), got {type(value).__name__} ({_show(value)}) of "
                        f"dtype {arr.dtype}")
    return arr.astype(np.float64) if arr.dtype.kind in "iu" else arr

