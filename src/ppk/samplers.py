"""Exact integer noise samplers: no floating point in any sampled value.

Every sampler here turns uniform random integers (from :mod:`secrets`, or a seed /
``numpy.random.Generator`` for tests) into an integer whose law is *exactly* the one
stated, for every parameter a float can hold.  The parameters are used as the exact
rationals their floats denote (``Fraction(0.1)`` is 3602879701896397/2**55), so the
privacy guarantee is the one of that exact parameter.  Why this matters, and which
attack each sampler rules out, is in ``docs/release-security.md``.

* :func:`discrete_laplace` -- ``P(k) ∝ exp(-|k| / scale)`` on the integers (two-sided
  geometric), Canonne, Kamath & Steinke (2020), Algorithm 2.
* :func:`discrete_gaussian` -- ``P(k) ∝ exp(-k² / (2 sigma²))`` on the integers,
  Canonne, Kamath & Steinke (2020), Algorithm 3.
* :func:`rounded_gaussian` -- ``round(sigma * Z)`` with ``Z ~ N(0, 1)``, i.e.
  ``P(k) = Phi((k + 1/2)/sigma) - Phi((k - 1/2)/sigma)``: Karney's exact normal sampler
  (Karney 2016, "Sampling exactly from the normal distribution", Algorithm N) yields
  ``Z`` as an integer part plus a lazily refined binary fraction; refining it until
  ``sigma * Z`` lies inside one rounding cell gives the rounded value exactly.  This is
  the Gaussian mechanism followed by rounding (post-processing), so the privacy of the
  continuous Gaussian holds for it unchanged.

Cost: O(1) expected random draws for each sampler; :func:`rounded_gaussian` also reads
about ``log2(sigma)`` more bits of ``Z`` (the rounding cell has width ``1/sigma``).
Speed: tens of microseconds per draw in pure Python -- a release draws a handful.
"""
from __future__ import annotations

import numbers
from fractions import Fraction

from ._random import RandomSource, as_source
from ._typing import RngLike

__all__ = ["discrete_laplace", "discrete_gaussian", "rounded_gaussian", "bernoulli_exp"]

_CHUNK = 32   # bits by which a lazy uniform is refined at a time (more bits revealed early is harmless)


def _rational(name: str, value, *, allow_zero: bool) -> Fraction:
    """The exact rational a finite non-negative real parameter denotes."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, Fraction)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} ({value!r})")
    if isinstance(value, (Fraction, numbers.Integral)):
        out = Fraction(value)
    else:
        f = float(value)
        if f != f or f in (float("inf"), float("-inf")):
            raise ValueError(f"{name} must be finite, got {value!r}")
        out = Fraction(f)
    if out < 0 or (out == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value!r}")
    return out


# -- Bernoulli trials with exact rational probabilities ---------------------------------

def _bernoulli_exp_unit(num: int, den: int, src: RandomSource) -> bool:
    """True with probability exp(-num/den) for 0 <= num/den <= 1 (CKS Algorithm 1).

    K counts how long the trials Bernoulli(gamma/1), Bernoulli(gamma/2), ... keep succeeding;
    P(K >= k) = gamma^(k-1)/(k-1)!, so P(K odd) = sum (-gamma)^j / j! = exp(-gamma).
    """
    k = 1
    while src.below(den * k) < num:
        k += 1
    return k % 2 == 1


def bernoulli_exp(gamma: float | Fraction, *, rng: RngLike = None) -> bool:
    """True with probability ``exp(-gamma)`` exactly, for a rational ``gamma >= 0``.

    The integer part costs one ``exp(-1)`` trial per unit, each failing with probability 0.63,
    so the expected cost is O(1) whatever ``gamma`` is.
    """
    g = _rational("gamma", gamma, allow_zero=True)
    return _bernoulli_exp(g, as_source(rng))


def _bernoulli_exp(g: Fraction, src: RandomSource) -> bool:
    whole = g.numerator // g.denominator
    for _ in range(whole):
        if not _bernoulli_exp_unit(1, 1, src):
            return False
    frac = g - whole
    return _bernoulli_exp_unit(frac.numerator, frac.denominator, src)


# -- discrete Laplace and discrete Gaussian (Canonne, Kamath & Steinke 2020) -------------

def _discrete_laplace(s: int, t: int, src: RandomSource) -> int:
    """P(y) ∝ exp(-|y| t / s) for integers s, t >= 1 (scale s/t).

    U uniform on {0..s-1} kept with probability exp(-U/s) and V geometric (P ∝ e^-v) give
    X = U + s V with P(X = x) ∝ exp(-x/s); Y = floor(X/t) has P ∝ exp(-y t/s); a random sign,
    with "-0" rejected, makes it two-sided.
    """
    while True:
        u = src.below(s)
        if not _bernoulli_exp_unit(u, s, src):
            continue
        v = 0
        while _bernoulli_exp_unit(1, 1, src):
            v += 1
        y = (u + s * v) // t
        negative = src.bit()
        if negative and y == 0:
            continue
        return -y if negative else y


def discrete_laplace(scale: float | Fraction, *, rng: RngLike = None) -> int:
    """One draw of the discrete Laplace law ``P(k) = tanh(1/(2 scale)) exp(-|k|/scale)``, k in Z.

    Parameters
    ----------
    scale : float or Fraction, > 0
        In counts.  Adding it to an integer query of sensitivity 1 is ``(1/scale)``-DP.
    rng : None, int or numpy.random.Generator
        None (default) draws from the operating system's CSPRNG; a seed is for tests only.
    """
    sc = _rational("scale", scale, allow_zero=False)
    return _discrete_laplace(sc.numerator, sc.denominator, as_source(rng))


def discrete_gaussian(sigma: float | Fraction, *, rng: RngLike = None) -> int:
    """One draw of the discrete Gaussian ``P(k) ∝ exp(-k²/(2 sigma²))``, k in Z (sigma in counts).

    Rejection from the discrete Laplace of scale ``t = floor(sigma) + 1``, accepting ``y`` with
    probability ``exp(-(|y| - sigma²/t)² / (2 sigma²))`` (CKS Algorithm 3; expected < 2 rounds).
    ``sigma = 0`` returns 0.
    """
    sig = _rational("sigma", sigma, allow_zero=True)
    src = as_source(rng)
    if sig == 0:
        return 0
    var = sig * sig
    t = sig.numerator // sig.denominator + 1
    while True:
        y = _discrete_laplace(t, 1, src)
        if _bernoulli_exp((abs(y) - var / t) ** 2 / (2 * var), src):
            return y


# -- the rounded Gaussian (Karney's exact normal, then exact rounding) -------------------

class _LazyUniform:
    """x uniform on [0, 1), known so far to lie in [value / 2^nbits, (value + 1) / 2^nbits)."""

    __slots__ = ("value", "nbits")

    def __init__(self, src: RandomSource):
        self.value = src.bits(_CHUNK)
        self.nbits = _CHUNK

    def refine(self, src: RandomSource, k: int = _CHUNK) -> None:
        self.value = (self.value << k) | src.bits(k)
        self.nbits += k


def _less(a: _LazyUniform, b: _LazyUniform, src: RandomSource) -> bool:
    """a < b, revealing bits of both until they differ (they differ with probability 1)."""
    while True:
        if a.nbits < b.nbits:
            a.refine(src, b.nbits - a.nbits)
        elif b.nbits < a.nbits:
            b.refine(src, a.nbits - b.nbits)
        if a.value != b.value:
            return a.value < b.value
        a.refine(src)
        b.refine(src)


def _karney_b(k: int, x: _LazyUniform, src: RandomSource) -> bool:
    """True with probability exp(-x (2k + x) / (2k + 2)) (Karney 2016, Algorithm B).

    Counts the length n of a descending run x > z_1 > z_2 > ... in which each step also passes
    a coin of probability (2k + x)/(2k + 2); P(n >= j) = (x (2k+x)/(2k+2))^j / j!, so
    P(n even) is the stated exponential.
    """
    y, n, m = x, 0, 2 * k + 2
    while True:
        z = _LazyUniform(src)
        if not _less(z, y, src):
            break
        f = src.below(m)
        if f == m - 1:                       # probability 1/(2k+2): the coin fails
            break
        if f == m - 2:                       # probability 1/(2k+2): the coin passes iff r < x
            if not _less(_LazyUniform(src), x, src):
                break
        y, n = z, n + 1
    return n % 2 == 0


def _standard_normal(src: RandomSource) -> tuple[int, int, _LazyUniform]:
    """|Z| = k + x exactly (Karney 2016, Algorithm N); returns (negative, k, x)."""
    while True:
        k = 0
        while _bernoulli_exp_unit(1, 2, src):          # P(k) ∝ exp(-k/2)
            k += 1
        # times exp(-k(k-1)/2) makes exp(-k^2/2): k(k-1) trials of exp(-1/2)
        if not all(_bernoulli_exp_unit(1, 2, src) for _ in range(k * (k - 1))):
            continue
        x = _LazyUniform(src)
        # density of x ∝ exp(-x(2k + x)/2) = (exp(-x(2k+x)/(2k+2)))^(k+1)
        if all(_karney_b(k, x, src) for _ in range(k + 1)):
            return src.bit(), k, x


def _round_scaled(sig: Fraction, k: int, x: _LazyUniform, src: RandomSource) -> int:
    """round(sig * (k + x)), refining x until the rounding cell is decided (ties have probability 0)."""
    a, b = sig.numerator, sig.denominator
    while True:
        m, d = x.nbits, x.value
        den = (2 * b) << m
        lo = 2 * a * ((k << m) + d) + (b << m)       # (sig (k + d/2^m) + 1/2) * den
        hi = lo + 2 * a                              # same at the cell's (open) upper end
        if lo // den == (hi - 1) // den:
            return lo // den
        x.refine(src)


def rounded_gaussian(sigma: float | Fraction, *, rng: RngLike = None) -> int:
    """One draw of ``round(sigma * Z)``, ``Z ~ N(0, 1)``, exactly in law (sigma in counts).

    ``P(k) = Phi((k + 1/2)/sigma) - Phi((k - 1/2)/sigma)`` for every ``sigma`` a float can
    hold -- no float is involved, so the low bits are right even above ``2**53``.  Adding
    it to an integer count is the Gaussian mechanism followed by rounding: it has the
    privacy of the continuous Gaussian with the same ``sigma``.  ``sigma = 0`` returns 0.
    """
    sig = _rational("sigma", sigma, allow_zero=True)
    src = as_source(rng)
    if sig == 0:
        return 0
    negative, k, x = _standard_normal(src)
    j = _round_scaled(sig, k, x, src)
    return -j if negative else j
