"""Vectorised log-space helpers shared by the numpy-level modules."""
from __future__ import annotations

import math

import numpy as np


def log1mexp(x) -> np.ndarray:
    """log(1 - e^x) elementwise: accurate for x < 0 (Maechler's two branches); -inf where x >= 0
    or x is NaN (used for positive parts, which vanish there)."""
    x = np.asarray(x, dtype=float)
    out = np.full(x.shape, -np.inf)
    neg = x < 0
    xn = x[neg]
    with np.errstate(divide="ignore"):
        out[neg] = np.where(xn > -math.log(2), np.log(-np.expm1(xn)), np.log1p(-np.exp(xn)))
    return out


def exp_up(log_x):
    """e^log_x rounded up to the next double (an upper end of delta stays at or above the truth: numpy's exp
    is within one ulp, and below the double range a positive delta reads the least subnormal, not 0); at most 1
    (no delta exceeds it), 0 only where log_x is -inf."""
    y = np.exp(np.asarray(log_x, dtype=np.float64))
    return np.minimum(np.where(y < 1.0, np.nextafter(y, np.inf), y), np.where(np.isneginf(log_x), 0.0, 1.0))


def exp_down(log_x):
    """e^log_x rounded down to the previous double (a lower end stays at or below the truth; e^0 = 1 is exact);
    0 below the range."""
    log_x = np.asarray(log_x, dtype=np.float64)
    y = np.exp(log_x)
    return np.where(log_x == 0.0, y, np.nextafter(y, 0.0))
