"""Integer noise samplers whose work does not depend on the value they draw.

A sampler that loops "until accepted" runs longer for some outputs than for others; whoever
can time a release then learns ``|noise|`` and, with the published value, the count (Jin et
al., S&P 2022).  Every sampler here does a fixed amount of work for a given scale: the same
number of random bits, drawn in the same calls, and the same number of loop iterations,
whatever value comes out (``tests/test_samplers.py`` counts both over many draws).  The
method and its error analysis are in ``docs/samplers.md``; in short:

* :func:`rounded_gaussian` inverts the CDF ``F(k) = Phi((k + 1/2)/sigma)``: one uniform
  integer ``U`` of ``B`` bits, then a binary search with exactly ``m`` steps over the integers
  ``[-T, T]`` (``2T + 1 = 2**m - 1``) for the least ``k`` with ``U < floor(2**B F(k))``.  Its
  first steps are one full scan of a table (which entry decides must not show in the memory
  read); the others evaluate ``Phi`` by a fixed series (:mod:`ppk._fixedpoint`).  Mass beyond
  ``±T`` is put on ``±T`` (censored).
* :func:`discrete_laplace` is ``G1 - G2`` for two geometric variables, each drawn digit by digit:
  the binary digits of a geometric variable are independent Bernoulli variables, so ``m``
  comparisons of a uniform with a threshold make one (the digits from ``m`` on are dropped).
* :func:`discrete_gaussian` runs a fixed number ``M`` of rounds of Canonne, Kamath & Steinke's
  rejection sampler (2020, Algorithm 3) -- every round, always -- with the discrete Laplace
  above as proposal and a comparison with ``floor(2**B e^{-g})`` as the acceptance coin; the
  first accepted proposal is the draw.  ``M`` makes "no round accepted" rarer than ``2**-200``.
* :func:`bernoulli_exp` is one ``B``-bit comparison.

Exactness is traded for constant work, and the trade is booked: each draw's law is within
total-variation distance :data:`TV_BOUND` (``2**-190``) of the law it states, for every scale
up to :data:`MAX_SCALE` (``2**128`` counts).  A mechanism that is (eps, delta)-DP with the exact law is
(eps, delta + (1 + e^eps) TV_BOUND)-DP per draw with these samplers; :func:`sampler_delta`
gives that term, and releases add it to the delta they report.

Parameters are used as the exact rationals they denote (``Fraction(0.1)`` is
3602879701896397/2**55), numpy scalars included.  Randomness: ``rng=None`` draws from the
operating system's CSPRNG (:mod:`secrets`); a seed or ``numpy.random.Generator`` is for tests.
Cost (``m ≈ log2(scale) + 9``, ``B ≈ 210 + m`` bits): discrete Laplace ``2m`` comparisons, tens of
microseconds; rounded Gaussian a table scan up to sigma ~ 7, then ``m - 9`` series of a few hundred
terms (~0.5 ms each: ~3 ms at sigma = 1e3, ~25 ms at 1e17), the first draw at a new scale ~0.3 s
more for the table; discrete Gaussian ``M`` rounds (``M`` between 99 and 251), 10-50 ms.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from typing import Any, Callable

import numpy as np

from ._fixedpoint import fixed_exp, fixed_normal_cdf, working_precision
from ._random import RandomSource, as_source
from ._validate import integer, real
from ._typing import RngLike

__all__ = ["discrete_laplace", "discrete_gaussian", "rounded_gaussian", "bernoulli_exp", "TV_BOUND",
           "MAX_SCALE", "sampler_delta"]

#: Each censored tail and each grid's rounding contribute at most 2**-_TAIL_BITS per draw.
_TAIL_BITS = 200
#: Per draw, the total-variation distance between a sampler's law and the law it states (docs/samplers.md).
TV_BOUND = 2.0 ** -190
#: The largest scale (sigma, or the Laplace scale) a sampler takes, in counts.  Beyond it the noise
#: would swamp any count ppk can describe (at most 10**12 rows) by 26 orders of magnitude, and a
#: draw would take seconds (its work grows with log2(scale); docs/samplers.md).
MAX_SCALE = 2.0 ** 128
#: ln 2 rounded up: the tails are cut no earlier than where 2**-_TAIL_BITS is certain.
_LN2_UP = Fraction(6932, 10000)


@lru_cache(maxsize=None)
def _mp() -> Any:
    """A private mpmath context for the per-scale tables (the user's mpmath.mp precision never changes a
    draw), made on first use so that ``import ppk`` loads no mpmath (docs/architecture.md)."""
    import mpmath
    return mpmath.MPContext()


def sampler_delta(eps: float, draws: int = 1) -> float:
    """What ``draws`` draws of these samplers add to delta: ``(1 + e^eps) draws TV_BOUND``, rounded up.

    If every exact-law mechanism of a release is (eps, delta)-DP, the release made with these
    samplers is (eps, delta + sampler_delta(eps, draws))-DP (docs/samplers.md).  Capped at 1.
    """
    eps = real("eps", eps, minimum=0.0)
    draws = integer("draws", draws, minimum=0)
    if draws == 0:
        return 0.0
    log_term = math.log(draws) + math.log(TV_BOUND) + eps + math.log1p(math.exp(-eps))
    return min(1.0, math.nextafter(math.exp(log_term) * (1 + 1e-12), math.inf)) if log_term < 1 else 1.0


#: The largest numerator or denominator (in bits) a parameter may have: every float fits (2**-1074 has
#: a 1,075-bit denominator); longer fractions would make every draw's integer arithmetic slow.
_MAX_TERM_BITS = 2100


def _describe(value) -> str:
    text = repr(value) if not isinstance(value, int) or value.bit_length() < 1000 else f"an int of {value.bit_length()} bits"
    return text if len(text) < 80 else text[:60] + "..."


def _rational(name: str, value, *, allow_zero: bool, bounded: bool = True) -> Fraction:
    """The exact rational a finite non-negative real parameter denotes (numpy scalars included)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} ({value!r})")
    if isinstance(value, Decimal) and value.is_finite() and value != 0 and not -1100 < value.adjusted() < 1100:
        # decided before the exact conversion, which would build a number of ~3.3 bits per digit of exponent
        raise ValueError(f"{name} must be a finite number between 1e-1100 and 1e1100 in magnitude, got "
                         f"{_describe(value)}")
    if isinstance(value, numbers.Integral):
        out = Fraction(int(value))
    elif isinstance(value, numbers.Rational):
        out = Fraction(int(value.numerator), int(value.denominator))
    elif isinstance(value, (numbers.Real, Decimal)) and hasattr(value, "as_integer_ratio"):
        try:
            num, den = value.as_integer_ratio()        # exact, for float, numpy floats (long double too), Decimal
        except (OverflowError, ValueError):
            raise ValueError(f"{name} must be finite, got {value!r}") from None
        out = Fraction(int(num), int(den))
    else:
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} ({_describe(value)})")
    if out < 0 or (out == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {_describe(value)}")
    if bounded and out > MAX_SCALE:
        raise ValueError(f"{name} must be <= {MAX_SCALE:.4g} (2**128) counts, got {_describe(value)}: noise that "
                         "large carries no information about any count; publish nothing instead")
    long_terms = max(out.numerator.bit_length(), out.denominator.bit_length()) > _MAX_TERM_BITS
    # below 2**-20 every sampler returns 0 without arithmetic; gamma is capped at 1000 by its caller
    if bounded and long_terms and out > Fraction(1, 1 << 20):
        raise ValueError(f"{name} as a fraction must have a numerator and denominator of at most {_MAX_TERM_BITS} "
                         f"bits (every float does), got {_describe(value)}: round it to a float")
    return out


def _at_most(a: int, b: int, bits: int) -> int:
    """1 if a <= b else 0, for 0 <= a, b <= 2**bits, by arithmetic on integers of a constant size.

    Comparing Python integers stops at the first differing digit, a negative difference takes
    another path through CPython's subtraction, and a branch or ``sum`` of booleans adds work for
    some outcomes: here every call adds, subtracts (always from the larger number) and shifts
    (bits + 2)-bit numbers.  b + 2**(bits + 1) - a lies in [2**bits, 3 2**bits], so its bit
    bits + 1 is set exactly when b >= a.
    """
    return ((b + (1 << (bits + 1)) - a) >> (bits + 1)) & 1


# -- inversion with a fixed number of steps ----------------------------------------------

_OFFSET = 1 << 64

#: The first steps of every search are read from a table of 2**_COARSE_STEPS - 1 values per scale.
_COARSE_STEPS = 9


@dataclass(frozen=True)
class _Inversion:
    """Inverse-CDF sampling of an integer law on [-half, half] (tails censored) in ``steps`` steps.

    ``cdf(k)`` returns about 2**prec P(X <= k) (an integer, within 2**10 of it), with prec >=
    ubits + 64.  The grid and rounding error is below 2**-tail_bits in total variation because
    ``ubits`` exceeds ``tail_bits`` by the number of steps plus 3 (docs/samplers.md).

    The first ``min(steps, _COARSE_STEPS)`` steps of the binary search can only probe the
    points of a coarse grid; their values are a table, and *all* of it is compared with the
    uniform (a full scan: which entries decide the draw must not show in which memory is read).
    The remaining steps evaluate ``cdf``, whose work does not depend on its argument.
    """

    cdf: Callable[[int], int]
    prec: int
    half: int
    steps: int
    ubits: int
    coarse: tuple[int, ...]         # scaled_cdf at the coarse grid, increasing

    @classmethod
    def of(cls, cdf: Callable[[int], int], prec: int, reach: int, tail_bits: int) -> _Inversion:
        steps = (2 * reach + 1).bit_length()            # 2**(steps-1) <= 2 reach + 1 < 2**steps
        out = cls(cdf, prec, (1 << (steps - 1)) - 1, steps, tail_bits + steps + 3, ())
        fine = out.fine_steps
        grid = range(-out.half + (1 << fine) - 1, out.half + 1, 1 << fine)
        return cls(cdf, prec, out.half, steps, out.ubits, tuple(out.scaled_cdf(k) for k in grid))

    @property
    def fine_steps(self) -> int:
        return max(0, self.steps - _COARSE_STEPS)

    def scaled_cdf(self, k: int) -> int:
        """floor(2**ubits P(X <= k)) up to one unit, with everything beyond +half counted at +half."""
        g = self.cdf(k) >> (self.prec - self.ubits)
        top = 1 << self.ubits
        # after the evaluation, so the censored end costs what any other step costs
        return top if k == self.half else min(max(g, 0), top)

    def draw(self, src: RandomSource) -> int:
        u = src.bits(self.ubits)
        fine = self.fine_steps
        # how many k (from -half up) have F(k) <= u / 2**ubits: first to the coarse grid's resolution
        ubits = self.ubits
        # counted from a large offset: CPython keeps the integers up to 256 preallocated, so a count
        # crossing 256 (a positive draw) would otherwise allocate at every later step
        below = _OFFSET
        for g in self.coarse:                       # every entry, whatever u is
            below += _at_most(g, u, ubits)
        below = (below - _OFFSET) << fine
        for b in range(fine - 1, -1, -1):
            # no branch: the same additions for every draw (a step costs ~0.5 ms; one integer's
            # allocation more or less is not visible there)
            below += _at_most(self.scaled_cdf(-self.half + below + (1 << b) - 1), u, ubits) << b
        return -self.half + below


def _ceil(q: Fraction) -> int:
    return -((-q.numerator) // q.denominator)


@lru_cache(maxsize=64)
def _gaussian_inversion(sigma: Fraction, tail_bits: int) -> _Inversion:
    """round(sigma Z) by inversion of P(round(sigma Z) <= k) = Phi((k + 1/2)/sigma) (ties have probability 0)."""
    # P(|round(sigma Z)| > T) <= 2 Phibar((T + 1/2)/sigma) <= e^{-T^2/(2 sigma^2)} <= 2**-tail_bits
    # once T >= sigma sqrt(2 tail_bits ln 2); the square root is rounded up.
    c = Fraction(math.isqrt(_ceil(2 * tail_bits * _LN2_UP * 10**8)) + 1, 10**4)
    reach = _ceil(sigma * c)
    phi = fixed_normal_cdf(tail_bits + (2 * reach + 1).bit_length() + 3)
    prec = phi.prec
    num, den = sigma.numerator, sigma.denominator
    width = (2 * reach + 1).bit_length() + 2          # |2k + 1| < 2**width on the search's range
    one = 1 << prec

    def cdf(k: int) -> int:
        # Phi((k + 1/2)/sigma) = 1 - Phi(|k + 1/2|/sigma) for k < 0: the series only ever sees non-negative
        # numbers.  CPython takes other paths for negative integers (floor division, the right shift of
        # the density), which made a negative draw slower than a positive one at sigma >= 117 (issue #44).
        m = 2 * k + 1
        neg = 1 - ((m + (1 << width)) >> width)        # 1 when k < 0, by arithmetic (no branch)
        p = phi(((m * (1 - 2 * neg) * den) << prec) // (2 * num))     # floor(|k + 1/2|/sigma 2**prec)
        return (p, one - p)[neg]                       # both formed for every k
    return _Inversion.of(cdf, prec, reach, tail_bits)


@dataclass(frozen=True)
class _Geometric:
    """P(G = g) = (1 - r) r^g on g >= 0 from independent binary digits, truncated to ``digits`` digits.

    (1 - r) = prod_i 1/(1 + r^{2^i}), so P(G = sum_i b_i 2^i) = prod_i r^{2^i b_i}/(1 + r^{2^i}): the
    digits are independent, digit i is 1 with probability r^{2^i}/(1 + r^{2^i}).  Each digit is one
    comparison of a ``ubits``-bit uniform with floor(2**ubits q_i); the digits from ``digits`` on
    are dropped (G mod 2**digits), which changes the law by at most P(G >= 2**digits) = r^{2**digits}.
    """

    thresholds: tuple[int, ...]
    ubits: int

    @classmethod
    def of(cls, scale: Fraction, tail_bits: int) -> _Geometric:
        """r = e^{-1/scale}; r^{2**digits} <= 2**-(tail_bits + 1) and each threshold off by < 2**-ubits."""
        digits = max(1, (_ceil(scale * (tail_bits + 1) * _LN2_UP) - 1).bit_length())
        ubits = tail_bits + digits.bit_length() + 2
        mp = _mp()
        with mp.workprec(ubits + 64):
            s = mp.mpf(scale.numerator) / scale.denominator
            thresholds = []
            for i in range(digits):
                p = mp.exp(-mp.ldexp(1, i) / s)                    # r^{2^i}
                thresholds.append(int(mp.floor(mp.ldexp(p / (1 + p), ubits))))
        return cls(tuple(thresholds), ubits)

    def draw(self, src: RandomSource) -> int:
        """(G + 2**(digits+1) - 2) 2**_GUARD + 2**80: offsets that :func:`_draw_laplace` cancels.

        They keep every integer formed a large one whatever the digits are (CPython keeps the
        integers below 257 preallocated, so forming them costs less)."""
        g = 1 << 80
        for i, threshold in enumerate(self.thresholds):
            digit = 1 - _at_most(threshold, src.bits(self.ubits), self.ubits)    # u < threshold
            g += (digit + 2) << (i + _GUARD)       # 2 or 3 times 2**(i + 9): a large integer either way
        return g


@lru_cache(maxsize=64)
def _laplace(scale: Fraction, tail_bits: int) -> _Geometric:
    # a difference of two independent geometrics of ratio r is discrete Laplace: sum_j r^j r^{j+|k|} ∝ r^{|k|};
    # each of the two is within 2**-tail_bits of its law in total variation
    return _Geometric.of(scale, tail_bits + 1)


_GUARD = 9


def _draw_laplace(geometric: _Geometric, src: RandomSource) -> int:
    return (geometric.draw(src) - geometric.draw(src)) >> _GUARD        # the offsets cancel exactly


# -- public samplers ----------------------------------------------------------------------

def _discrete_laplace(s: int, t: int, src: RandomSource) -> int:
    """P(y) ∝ exp(-|y| t / s) for integers s, t >= 1 (scale s/t), within TV_BOUND of that law."""
    return _draw_laplace(_laplace(Fraction(s, t), _TAIL_BITS), src)


#: Below these scales the law is 0 with probability above 1 - 2**-360 (discrete Laplace: 2 e^{-256};
#: rounded Gaussian: 2 Phibar(32); discrete Gaussian: about 2 e^{-2048}): 0 is returned without a draw.
_POINT_MASS_SCALE = Fraction(1, 256)
_POINT_MASS_SIGMA = Fraction(1, 64)


def discrete_laplace(scale: float | Fraction, *, rng: RngLike = None) -> int:
    """One draw of the discrete Laplace law ``P(k) = tanh(1/(2 scale)) exp(-|k|/scale)``, k in Z.

    Constant work: ``G1 - G2`` for two geometric variables of ratio ``e^{-1/scale}``, each from
    ``m`` independent binary digits (``m`` comparisons of a uniform with a threshold), for every
    draw at this scale; within total variation :data:`TV_BOUND` of the stated law (the digits
    from ``m = log2(139 scale) + 1`` on are dropped; docs/samplers.md).  ``scale <= 1/256``
    returns 0 (the law is 0 with probability above ``1 - 2 e^{-256}``).

    Parameters
    ----------
    scale : float, int or Fraction, > 0
        In counts, as the exact rational it denotes.  Adding it to an integer query of
        sensitivity 1 is ``(1/scale, sampler_delta(1/scale))``-DP.
    rng : None, int or numpy.random.Generator
        None (default) draws from the operating system's CSPRNG; a seed is for tests only.
    """
    sc = _rational("scale", scale, allow_zero=False)
    src = as_source(rng)
    if sc <= _POINT_MASS_SCALE:
        return 0
    return _draw_laplace(_laplace(sc, _TAIL_BITS), src)


def rounded_gaussian(sigma: float | Fraction, *, rng: RngLike = None) -> int:
    """One draw of ``round(sigma * Z)``, ``Z ~ N(0, 1)``: ``P(k) = Phi((k + 1/2)/sigma) - Phi((k - 1/2)/sigma)``.

    Constant work (one uniform, a full scan of a table of up to 511 values of the CDF, then
    ``m - 9`` evaluations of ``Phi`` by a fixed series at ~``B + 30`` bits), within total
    variation :data:`TV_BOUND` of the stated law for every sigma up to :data:`MAX_SCALE` (no
    double rounding shapes the value: the low bits are right above ``2**53``).  Adding it
    to an integer count is the Gaussian mechanism followed by rounding, so it has the privacy
    of the continuous Gaussian with the same sigma, plus :func:`sampler_delta`.
    ``sigma <= 1/64`` returns 0 (then ``P(K != 0) < 2 Phibar(32)``).  sigma is in counts.
    """
    sig = _rational("sigma", sigma, allow_zero=True)
    src = as_source(rng)
    if sig <= _POINT_MASS_SIGMA:
        return 0
    return _gaussian_inversion(sig, _TAIL_BITS).draw(src)


@dataclass(frozen=True)
class _GaussianRejection:
    """CKS Algorithm 3 with a fixed number of rounds; see :func:`discrete_gaussian`."""

    sigma: Fraction
    t: int                     # the proposal's scale, floor(sigma) + 1
    rounds: int
    proposal: _Geometric       # the discrete Laplace of scale t is the difference of two draws
    coin_bits: int
    prec: int                  # of the coin's e^{-g}
    gap_scale: int             # b^2 t and a^2, sigma = a/b: (|y| - sigma^2/t) b^2 t = |y| gap_scale - gap_shift
    gap_shift: int
    gap_denominator: int       # 2 a^2 b^2 t^2: g = ((|y| - sigma^2/t) b^2 t)^2 / gap_denominator

    @classmethod
    def of(cls, sigma: Fraction, tail_bits: int) -> _GaussianRejection:
        t = sigma.numerator // sigma.denominator + 1
        rounds = _rejection_rounds(sigma, t, tail_bits)
        # per round: proposal <= 2**-inner_bits, coin <= 2 2**-inner_bits; rounds 4 2**-inner_bits <= 2**-tail_bits
        inner_bits = tail_bits + (rounds - 1).bit_length() + 2
        a, b = sigma.numerator, sigma.denominator
        return cls(sigma, t, rounds, _laplace(Fraction(t), inner_bits), inner_bits, working_precision(inner_bits),
                   b * b * t, a * a, 2 * a * a * b * b * t * t)

    def coin(self, y: int) -> int:
        """floor(2**coin_bits exp(-(|y| - sigma^2/t)^2 / (2 sigma^2))) up to one unit: accept y below it."""
        gap = abs(y) * self.gap_scale - self.gap_shift
        g = ((gap * gap) << self.prec) // self.gap_denominator
        return fixed_exp(self.prec)(g) >> (self.prec - self.coin_bits)

    def draw(self, src: RandomSource) -> int:
        out = _OFFSET                               # a large integer whatever is added (see _Inversion.draw)
        pending = 1                                 # 1 until a round accepts
        for _ in range(self.rounds):               # every round, always: the same work for every draw
            y = _draw_laplace(self.proposal, src)
            take = pending * (1 - _at_most(self.coin(y), src.bits(self.coin_bits), self.coin_bits))
            out += take * y
            pending -= take
        return out - _OFFSET


def _rejection_rounds(sigma: Fraction, t: int, tail_bits: int) -> int:
    """Rounds after which no acceptance has probability <= 2**-tail_bits.

    One round accepts with probability C e^{-sigma^2/(2 t^2)} Z, C = tanh(1/(2t)), Z = sum_k
    e^{-k^2/(2 sigma^2)} (the proposal times the coin is e^{-sigma^2/(2t^2)} C e^{-k^2/(2 sigma^2)});
    Z >= sqrt(2 pi) sigma (Poisson summation: the other terms are positive) and Z >= 1 (the k = 0 term).
    """
    s = float(sigma)
    z = max(math.sqrt(2 * math.pi) * s, 1.0)
    accept = math.tanh(0.5 / t) * math.exp(-0.5 * (s / t) ** 2) * z * (1 - 1e-9)   # rounded down
    return math.ceil(tail_bits * math.log(2) / -math.log1p(-accept) * (1 + 1e-9)) + 1


@lru_cache(maxsize=64)
def _gaussian_rejection(sigma: Fraction, tail_bits: int) -> _GaussianRejection:
    return _GaussianRejection.of(sigma, tail_bits)


def discrete_gaussian(sigma: float | Fraction, *, rng: RngLike = None) -> int:
    """One draw of the discrete Gaussian ``P(k) ∝ exp(-k²/(2 sigma²))``, k in Z (sigma in counts).

    Canonne, Kamath & Steinke's rejection from the discrete Laplace of scale ``floor(sigma) + 1``
    (2020, Algorithm 3), run for a fixed number of rounds whatever happens (about 100 for
    large sigma, up to 251 near sigma = 0.4): the work does not depend on the draw, and the law
    is within total variation :data:`TV_BOUND` of the stated one (docs/samplers.md).
    ``sigma <= 1/64`` returns 0 (then ``P(K != 0)`` is about ``2 e^{-2048}``).
    """
    sig = _rational("sigma", sigma, allow_zero=True)
    src = as_source(rng)
    if sig <= _POINT_MASS_SIGMA:
        return 0
    return _gaussian_rejection(sig, _TAIL_BITS).draw(src)


def bernoulli_exp(gamma: float | Fraction, *, rng: RngLike = None) -> bool:
    """True with probability ``exp(-gamma)`` for a rational ``gamma >= 0``, up to ``2**-200``.

    One uniform of 200 bits compared with ``floor(2**200 exp(-gamma))``: the same work for
    every outcome.
    """
    g = min(_rational("gamma", gamma, allow_zero=True, bounded=False), Fraction(1000))   # e^-1000: threshold 0 anyway
    src = as_source(rng)
    prec = working_precision(_TAIL_BITS)
    threshold = fixed_exp(prec)((g.numerator << prec) // g.denominator) >> (prec - _TAIL_BITS)
    return not _at_most(threshold, src.bits(_TAIL_BITS), _TAIL_BITS)
