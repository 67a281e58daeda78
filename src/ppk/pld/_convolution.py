"""Convolution of non-negative mass vectors with a certified error bound (docs/accuracy.md, "Composition").

Two methods, one contract: ``convolve(a, err_a, b, err_b)`` returns ``(c, err_c)`` where ``c`` is the
computed convolution (long double, clipped at 0) and ``err_c`` bounds the Euclidean norm of
``c - a_true * b_true`` given that ``|a - a_true|_2 <= err_a`` and ``|b - b_true|_2 <= err_b``.

* ``"exact"``: the direct long-double convolution of the C++ core (compensated sums of non-negative
  terms: each output to ~1e-19 relative).  O(len(a) len(b)).
* ``"fft"``: a double-precision FFT (scipy.fft, power-of-two lengths, both cores).  Its rounding is
  bounded with Higham's analysis of the FFT (Accuracy and Stability of Numerical Algorithms, 2nd ed.,
  Thm 24.2): a computed transform of length n has relative 2-norm error at most
  ``rho = log2(n) eta / (1 - log2(n) eta)``, ``eta = mu + gamma_4 (sqrt 2 + mu)``, ``mu`` the error of the
  twiddle factors.  Carried through two forward transforms, the pointwise product and the inverse,
  with ``|DFT(a)|_inf <= |a|_1`` and Parseval, the computed convolution satisfies
      |c - a * b|_2 <= (3 rho + 4 u) (|a|_2 |b|_1 + |a|_1 |b|_2) + u |c|_2,
  u = 2^-53.  We take ``mu = 4u`` (pocketfft's twiddles are accurate to about one ulp) and add the
  rounding of the conversions to and from double.  ``"auto"`` uses the exact method while it is cheap.

The input errors propagate by Young's inequality ``|f * g|_2 <= |f|_2 |g|_1``:
``|Da * b + a * Db + Da * Db|_2 <= err_a |b|_1 + |a|_1 err_b + err_a err_b sqrt(len(b))``.
"""
from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from .. import _kernels

__all__ = ["convolve", "fft_error_bound", "METHODS", "EXACT_WORK_LIMIT", "EXACT_MAX_WORK"]

LD = np.longdouble
U = 2.0**-53
U_LD = float(np.finfo(np.longdouble).eps) / 2
METHODS = ("auto", "exact", "fft")
#: "auto" convolves directly while len(a) * len(b) is at most this (about 10 ms on one core).
EXACT_WORK_LIMIT = 4_000_000
#: Most products one ``"exact"`` convolution may take: about 5-10 s at the 2.5e8 long-double products a
#: second measured on one core.  The direct method is quadratic: two PLDs of 1e6 buckets took an hour.
EXACT_MAX_WORK = 2_000_000_000


def _rho(n: int) -> float:
    """Higham's relative 2-norm error bound of one FFT of length n."""
    mu = 4 * U
    gamma4 = 4 * U / (1 - 4 * U)
    eta = mu + gamma4 * (math.sqrt(2) + mu)
    t = math.log2(n) * eta
    return t / (1 - t)


def fft_error_bound(norm2_a: float, norm1_a: float, norm2_b: float, norm1_b: float, norm2_c: float, n: int) -> float:
    """Bound on |computed - exact|_2 of an FFT convolution of length n of two double vectors."""
    return (3 * _rho(n) + 4 * U) * (norm2_a * norm1_b + norm1_a * norm2_b) * (1 + 1e-6) + U * norm2_c


def _norms(x: npt.NDArray) -> tuple[float, float]:
    return float(np.sqrt(np.sum(np.square(x, dtype=LD)))), float(np.sum(x, dtype=LD))


def convolve(a: npt.NDArray[np.longdouble], err_a: float, b: npt.NDArray[np.longdouble], err_b: float, *,
             method: str = "auto") -> tuple[npt.NDArray[np.longdouble], float]:
    """``(c, err_c)``: the convolution of two non-negative vectors and a bound on its 2-norm error."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    work = float(a.size) * float(b.size)
    if method == "exact" and work > EXACT_MAX_WORK:
        raise ValueError(f"composition='exact' would convolve {a.size:,} x {b.size:,} masses directly ({work:.3g} "
                         f"long-double products, about {work / 2.5e8:.0f} s), more than {EXACT_MAX_WORK:.0e}: use "
                         "composition='auto' (the certified FFT beyond small sizes), or fewer buckets (a larger "
                         "value_discretization_interval or a smaller max_buckets)")
    n2a, n1a = _norms(a)
    n2b, n1b = _norms(b)
    propagated = err_a * n1b + n1a * err_b + err_a * err_b * math.sqrt(b.size)
    if method == "exact" or (method == "auto" and a.size * b.size <= EXACT_WORK_LIMIT):
        c = _kernels.convolve_longdouble(np.ascontiguousarray(a, dtype=LD), np.ascontiguousarray(b, dtype=LD))
        # compensated sums of non-negative terms: a few ulps of long double per output
        return c, propagated + 8 * U_LD * _norms(c)[0]
    size = a.size + b.size - 1
    n = 1 << max(0, (size - 1).bit_length())
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    # conversion to double: relative u per entry, plus the subnormal floor 2^-1074 per entry
    conv_err = (U * n2a + 5e-324 * math.sqrt(a.size)) * n1b + (U * n2b + 5e-324 * math.sqrt(b.size)) * n1a
    import scipy.fft   # loaded on use: `import ppk` stays light (docs/architecture.md)

    fa = scipy.fft.rfft(a64, n, workers=-1)
    fb = fa if b is a else scipy.fft.rfft(b64, n, workers=-1)
    c64 = scipy.fft.irfft(fa * fb, n, workers=-1)[:size]
    n2c = float(np.sqrt(np.sum(np.square(c64))))
    bound = fft_error_bound(n2a, n1a, n2b, n1b, n2c, n) + conv_err + propagated
    np.maximum(c64, 0.0, out=c64)   # the exact result is >= 0: clipping only moves towards it
    return c64.astype(LD), bound
