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
