"""e^{-g} and the normal CDF in fixed point, with the same operations for every argument.

The samplers (:mod:`ppk.samplers`) must do the same work whatever value they draw, so the
functions they evaluate along the way cannot branch on the argument the way mpmath's do
(series here, asymptotic expansion there), nor read a table entry chosen by it (which memory
is read shows in the cache).  Each function below sums a series of a fixed number of terms by
Horner's rule on Python integers holding ``prec`` fractional bits, reading the same
coefficients for every argument, and multiplies only operands of a constant size
(:func:`_mul_shift`).  Accuracy (docs/samplers.md; tested against mpmath): e^{-g} within 16
units of 2**-prec, Phi within 2**-(bits + 8).
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=None)
def _mp() -> Any:
    """A private mpmath context for the constants, made on first use: mpmath loads only when a
    sampler first needs a table, so ``import ppk`` stays light (docs/architecture.md)."""
    import mpmath
    return mpmath.MPContext()


def _to_fixed(x, prec: int) -> int:
    mp = _mp()
    return int(mp.nint(mp.ldexp(x, prec)))


def _mul_shift(a: int, b: int, prec: int, a_bits: int, b_bits: int) -> int:
    """floor(a b / 2**prec) for |a| < 2**(prec + a_bits - 1), |b| < 2**(prec + b_bits - 1), a_bits, b_bits >= 1.

    CPython multiplies short integers faster (and 0 fastest), so a * b would cost less when a
    factor happens to be small -- near 0, or in a far tail -- and the time would depend on the
    argument.  With A = 3 2**(prec + a_bits - 1) the factor a + A lies strictly between
    2**(prec + a_bits) and 2**(prec + a_bits + 1) for either sign of a: always prec + a_bits + 1
    bits (likewise b + B).  (a + A)(b + B) = ab + aB + bA + AB and the last three are multiples of
    2**prec, so the identity below is exact.
    """
    big_a, big_b = 3 << (prec + a_bits - 1), 3 << (prec + b_bits - 1)
    a_pad, b_pad = a + big_a, b + big_b
    # the corrections 3a 2**(b_bits-1) and 3b 2**(a_bits-1) formed from the padded factors too, whose lengths do
    # not depend on a or b: 3a 2**k = 3 (a + A) 2**k - 3 A 2**k, and likewise for b
    return (((a_pad * b_pad) >> prec) - ((3 * a_pad) << (b_bits - 1)) - ((3 * b_pad) << (a_bits - 1))
            + (9 << (prec + a_bits + b_bits - 2)))


def _terms_needed(prec: int, step_log2: float, factorial_power: float) -> int:
    """Least N with the remainder of a Taylor series of terms <= |t|^n / (n!)^power below 2**-(prec + 8).

    ``step_log2`` is log2 |t|max; for e^{-r} the terms are r^n/n! (power 1).  The remainder after
    N terms is then at most twice the first omitted term (the ratio of terms is below 1/2 from
    there on).
    """
    n = 1
    while n * step_log2 - factorial_power * math.lgamma(n + 1) / math.log(2) > -(prec + 10):
        n += 1
    return n


class FixedExp:
    """e^{-g} for g >= 0 given as floor(g 2**prec); returns about e^{-g} 2**prec (0 beyond g = prec ln 2 + 8)."""

    def __init__(self, prec: int):
        self.prec = prec
        mp = _mp()
        with mp.workprec(prec + 64):
            self.ln2 = _to_fixed(mp.ln2, prec)
            terms = _terms_needed(prec, math.log2(math.log(2)), 1.0)
            # e^{-r} = sum (-r)^n / n!: signed coefficients, highest degree first
            self.coeffs = tuple(_to_fixed((-1) ** n / mp.factorial(n), prec) for n in range(terms, -1, -1))
        self.gmax = (prec + 8) * self.ln2               # e^{-gmax} < 2**-(prec + 8): clamped there
        self.pad_n = 1 << (prec + 16).bit_length() + 1  # pad = pad_n ln 2 > 2 gmax: g + pad has a fixed length
        self.pad = self.pad_n * self.ln2

    def split(self, g_fixed: int) -> tuple[int, int]:
        """(m, n) with e^{-g} ~ m 2**-prec 2**-n, 2**(prec-1) < m <= 2**prec: full relative precision."""
        g = min(g_fixed, self.gmax)
        # g = n ln 2 + r, 0 <= r < ln 2; divided with a fixed multiple of ln 2 added, so that the dividend's
        # length (and the division's work) does not depend on g
        n = (g + self.pad) // self.ln2 - self.pad_n
        r = g - n * self.ln2
        s = 0
        for c in self.coeffs:                           # partial sums stay below 2 in magnitude
            s = c + _mul_shift(s, r, self.prec, 2, 1)
        return s, n

    def __call__(self, g_fixed: int) -> int:
        mantissa, shift = self.split(g_fixed)
        return mantissa >> shift


class FixedNormalCdf:
    """Phi(x) to ``bits`` bits for x given as floor(x 2**prec); returns about Phi(x) 2**prec.

    Phi(x) = 1/2 + phi(x) S(x), S(x) = sum_{n>=0} x^{2n+1}/(2n+1)!! = x (1 + y/3 (1 + y/5 (1 + ...))),
    y = x^2 (the series converges for every x; it is odd, so no branch on the sign), summed to a
    fixed number of terms for every x, with |x| clamped at ``xmax`` where Phi's tail is below
    2**-(bits + 8).  No table: every argument runs the same operations on the same data.
    phi(x) S(x) is formed as e^{-r} S(x) / sqrt(2 pi) shifted right by n (y/2 = n ln 2 + r), so
    S's large values (up to 2**(xmax^2 / (2 ln 2))) never meet a phi rounded to absolute precision.
    Error: a truncation of 2**-prec in S at any step is multiplied by the later factors y/(2j+1),
    at most S(x)/x in all, and then by phi(x) <= 1/(2 S(x)/x): below terms 2**-prec in Phi.
    """

    def __init__(self, bits: int):
        self.bits = bits
        self.xmax_float = math.sqrt(2 * (bits + 8) * math.log(2))
        y_max = self.xmax_float ** 2
        self.terms = self._terms(bits, y_max)
        self.prec = prec = working_precision(bits + self.terms.bit_length() + 8)
        self.one = 1 << prec
        self.xmax = int(self.xmax_float * (1 << 30)) << (prec - 30)
        self.inv_odd = tuple((1 << prec) // (2 * n + 1) for n in range(self.terms, 0, -1))
        mp = _mp()
        with mp.workprec(prec + 64):
            self.inv_sqrt_2pi = _to_fixed(1 / mp.sqrt(2 * mp.pi), prec)
        self.exp = fixed_exp(prec)
        # constant offsets for _mul_shift: S < 2**(prec + s_bits), y < 2**(prec + y_bits)
        self.s_bits = int(y_max / (2 * math.log(2))) + 8
        self.y_bits = int(math.log2(y_max)) + 2

    @staticmethod
    def _terms(bits: int, y_max: float) -> int:
        """Terms after which the rest of phi(x) S(x) is below 2**-(bits + 16) for |x| <= sqrt(y_max).

        The omitted terms from n = N on are at most t_N / (1 - y/(2N+3)), t_N = x^{2N+1}/(2N+1)!!,
        largest at the largest x; times phi(x) = e^{-y/2}/sqrt(2 pi)."""
        n, log_t = 0, 0.5 * math.log(y_max)                     # log t_0 = log x
        log_phi = -0.5 * y_max - 0.5 * math.log(2 * math.pi)
        while True:
            n += 1
            log_t += math.log(y_max) - math.log(2 * n + 1)
            ratio = y_max / (2 * n + 3)
            if ratio < 0.5 and (log_t + log_phi + math.log(2)) / math.log(2) < -(bits + 16):
                return n + 1

    def __call__(self, x_fixed: int) -> int:
        prec = self.prec
        x = max(-self.xmax, min(x_fixed, self.xmax))
        y = _mul_shift(x, x, prec, self.y_bits, self.y_bits)
        s = self.one
        for inv in self.inv_odd:                               # s = 1 + y/(2n+1) s, n = terms .. 1
            s = self.one + _mul_shift(_mul_shift(s, y, prec, self.s_bits, self.y_bits), inv, prec,
                                      self.s_bits + self.y_bits, 1)
        s = _mul_shift(s, x, prec, self.s_bits, self.y_bits)          # S(x)
        mantissa, shift = self.exp.split(y >> 1)                      # e^{-y/2} = mantissa 2**-prec 2**-shift
        density = _mul_shift(mantissa, self.inv_sqrt_2pi, prec, 2, 2)
        return (self.one >> 1) + (_mul_shift(density, s, prec, 2, self.s_bits) >> shift)


@lru_cache(maxsize=8)
def fixed_exp(prec: int) -> FixedExp:
    return FixedExp(prec)


@lru_cache(maxsize=8)
def fixed_normal_cdf(bits: int) -> FixedNormalCdf:
    return FixedNormalCdf(bits)


def working_precision(bits: int) -> int:
    """The table precision for results needed to ``bits`` bits: 64 guard bits, rounded up to a multiple of 60.

    Rounding up lets scales share the coefficients (:func:`fixed_exp` is cached by precision).
    """
    return -(-(bits + 64) // 60) * 60
