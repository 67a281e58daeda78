"""A natural-noise law's pmf on a window of consecutive integers, and how a log-concave law finds its window.

Every natural law hands :class:`ppk.NoisyQuery` a :class:`Window`: the values within ``e^-depth`` of
the mode, in long double logs, and a bound on the mass left out (``log_dropped``), which the privacy
bounds add.  A log-concave law (``Binomial``) finds its window by galloping out from the mode and
bounds its two tails by geometric series; the convolved laws trim theirs in ``ppk.noise._convolve``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import numpy.typing as npt

__all__ = ["Window", "MAX_WINDOW"]

LD = np.longdouble
LDArray = npt.NDArray[np.longdouble]

#: Most integers a natural-noise window may hold (memory: 16 bytes each, a few copies).
MAX_WINDOW = 20_000_000


@dataclass(frozen=True)
class Window:
    """The natural noise's pmf on a window of consecutive integers.

    ``log_pmf[i]`` is ``log P(X = offset + i)`` (long double).  ``exp(log_dropped)`` bounds the mass
    the window leaves out, or its total-variation distance from the law (so every privacy number
    computed from the window is within ``(1 + e^eps) exp(log_dropped)`` of the exact one); in logs,
    because it reaches far below the double range.  ``log_concave``: whether the
    pmf is log-concave (then the privacy loss is monotone in the output).
    """

    offset: int
    log_pmf: LDArray
    log_dropped: float
    log_concave: bool

    @property
    def size(self) -> int:
        return int(self.log_pmf.size)

    def mirrored(self) -> Window:
        """The window of ``-X``."""
        return Window(-(self.offset + self.size - 1), self.log_pmf[::-1].copy(), self.log_dropped, self.log_concave)


def _check_size(size: int, what: str) -> None:
    if size > MAX_WINDOW:
        raise ValueError(f"{what} needs {size:,} support points, more than MAX_WINDOW={MAX_WINDOW:,}; "
                         "a natural noise this wide makes delta negligible -- use a smaller one, or Pmf")


def _log_add(a: float, b: float) -> float:
    return float(np.logaddexp(a, b))


def _log_geometric_tail(log_a: float, log_b: float) -> float:
    """log of a mass bound of a log-concave tail whose first two terms (outwards) have logs ``log_a``, ``log_b``."""
    if log_a == -math.inf:
        return -math.inf
    step = log_b - log_a
    if not step < 0:
        return math.inf
    return log_a - math.log(-math.expm1(step))


def _log_concave_window(logpmf: Callable[[np.ndarray], np.ndarray], lo: int, hi: int, mode: int, depth: float,
                        log_concave: bool = True) -> Window:
    """Window of a log-concave pmf on ``lo..hi``: every value within ``e^-depth`` of the mode's, with
    the two tails outside bounded by geometric series (log-concavity makes their ratios decrease)."""
    top = float(logpmf(np.array([mode]))[0])

    def edge(direction: int) -> int:
        limit = hi if direction > 0 else lo
        step, last_in = 1, mode
        while True:     # gallop outwards, then bisect: logpmf is monotone on each side of the mode
            k = mode + direction * step
            if (k - limit) * direction >= 0:
                k = limit
            if float(logpmf(np.array([k]))[0]) < top - depth:
                a, b = last_in, k
                break
            if k == limit:
                return limit
            last_in, step = k, 2 * step
        while abs(b - a) > 1:
            m = (a + b) // 2
            if float(logpmf(np.array([m]))[0]) < top - depth:
                b = m
            else:
                a = m
        return a

    left, right = edge(-1), edge(+1)
    _check_size(right - left + 1, "the natural noise")
    values = np.asarray(logpmf(np.arange(left, right + 1)), dtype=LD)
    log_dropped = -math.inf
    if right < hi:
        pair = logpmf(np.array([right + 1, min(right + 2, hi)]))
        log_dropped = _log_add(log_dropped, _log_geometric_tail(float(pair[0]), float(pair[1]))
                               if right + 2 <= hi else float(pair[0]))
    if left > lo:
        pair = logpmf(np.array([left - 1, max(left - 2, lo)]))
        log_dropped = _log_add(log_dropped, _log_geometric_tail(float(pair[0]), float(pair[1]))
                               if left - 2 >= lo else float(pair[0]))
    return Window(left, values, log_dropped, log_concave)


def _is_log_concave(log_pmf: np.ndarray) -> bool:
    """No interior zeros and ``w_k^2 >= w_{k-1} w_{k+1}`` (to a relative 1e-12)."""
    finite = np.isfinite(log_pmf)
    idx = np.nonzero(finite)[0]
    if idx.size == 0 or not np.all(finite[idx[0]:idx[-1] + 1]):
        return False
    lw = np.asarray(log_pmf[idx[0]:idx[-1] + 1], dtype=float)
    return bool(np.all(2 * lw[1:-1] >= lw[:-2] + lw[2:] - 1e-12 * (1 + np.abs(lw[1:-1]))))
