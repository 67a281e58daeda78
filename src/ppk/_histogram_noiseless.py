"""The exact privacy curve of a noiseless histogram's worst pair (docs/histograms.md, "sigma = 0").

At ``sigma = 0`` the attacker sees the two bins' counts, so delta is a finite sum of positive terms over
the lattice of the pair's counts: by rows of ``M``, each row the difference of two binomial tails carried
from the last row by one pmf term (the counting kernel's ``noiseless_mixture``), with a rounding bound
that makes both ends certified.
"""
from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from . import _kernels
from ._typing import FloatArray

__all__ = ["NOISELESS_MAX_ROWS", "NOISELESS_MAX_TERMS", "noiseless_pair"]

# -- sigma = 0: the exact sum -------------------------------------------------------------------
#: Rows of M the exact sigma = 0 sum of one ordered pair may walk (a few ns each, plus one direct tail sum
#: at its first row): 24 standard deviations of Bin(N, s') -- every N up to the histogram's limit fits.  A
#: larger window is bracketed by the mixture kernel to ``rtol`` instead.
NOISELESS_MAX_ROWS = 2 * 10**8
#: (kept for callers that size work by terms: one row is about one term now)
NOISELESS_MAX_TERMS = NOISELESS_MAX_ROWS
_U = 2.0 ** -53          # unit roundoff of a double
_UL = 2.0 ** -64         # of a long double (x87, 64-bit mantissa)


def _binom_logpmf(n: int, p: float, pc: float, k: npt.NDArray[np.int64]) -> FloatArray:
    """log Bin(n, p) at k with ``pc = 1 - p`` held accurately: the kernel gets the smaller of the two
    (it forms the other as 1 - it in long double, exact enough only when it is the smaller)."""
    if p <= pc:
        return _kernels.binom_logpmf(n, p, k)
    return _kernels.binom_logpmf(n, pc, n - k)


def _tail_mass_log(N: int, p: float, lo: int, hi: int) -> float:
    """log of an upper bound on P(Bin(N, p) < lo) + P(Bin(N, p) > hi) for lo <= mode <= hi - 1: each
    tail by its first term over 1 - the pmf's ratio there (the ratios fall away from the mode)."""
    out = -math.inf
    if lo > 0:
        m = lo - 1
        ratio = m * (1.0 - p) / ((N - m + 1) * p)
        out = np.logaddexp(out, float(_binom_logpmf(N, p, 1.0 - p, np.array([m]))[0]) - math.log1p(-ratio))
    if hi < N:
        m = hi + 1
        ratio = (N - m) * p / ((m + 1) * (1.0 - p))
        out = np.logaddexp(out, float(_binom_logpmf(N, p, 1.0 - p, np.array([m]))[0]) - math.log1p(-ratio))
    return float(out)


def noiseless_pair(N: int, pa: float, pb: float, rest: float, eps: float) -> tuple[float, float, int] | None:
    """(log lower, log upper, rows) of one ordered pair's delta at sigma = 0, or None past the budget.

    At sigma = 0 the attacker reads the two bins: with ``x, y`` the unknown rows in ``a`` and ``b``
    (trinomial ``T(x, y)`` with the rest), the hypotheses give ``(x + 1, y)`` and ``(x, y + 1)``, and
    ``T(x - 1, y + 1) / T(x, y) = (pi_b / pi_a) x / (y + 1)``.  So, with ``c = e^eps pi_a / pi_b``,

        delta = sum over x + 1 > c y of  T(x, y) (1 - c y / (x + 1)),

    a finite sum of positive terms.  By ``M = x + y ~ Bin(N, s)`` and ``x ~ Bin(M, q)`` given ``M``,
    row ``M`` is the noiseless count's delta ``H_M`` of ``Bin(M, q)`` (one order): the difference of two
    binomial tails, which the kernel carries from row to row by one pmf term each
    (cpp/include/ppk/counting/noiseless_mixture.hpp), with a bound on its rounding: a window of W rows
    costs O(W), whatever eps.  The rows that matter lie around the mean of the tilted law
    ``Bin(N, s')``, ``s' = s g / (1 - s + s g)``, ``g = (q_c + q e^eps) e^{-eps theta}``,
    ``theta = c / (1 + c)``: Chernoff's bound at the tilt eps gives ``P(x >= k) <= e^{eps (1 - theta)} g^M``,
    so the rows outside 12 standard deviations of ``s'`` carry at most
    ``e^{eps (1 - theta)} (1 - s + s g)^N P(Bin(N, s') outside)``, added to the upper end.
    """
    if N == 0 or pa == 0.0 or pb == 0.0:
        return 0.0, 0.0, 0   # a bin the unknown rows never reach (or none unknown): it shows the challenge row
    s = pa + pb
    q, qc = pa / s, pb / s
    LD = np.longdouble
    qL, qcL = (LD(q), LD(1) - LD(q)) if q <= qc else (LD(1) - LD(qc), LD(qc))   # as the kernel forms them
    log_qL, log_qcL = np.log(qL), np.log(qcL)
    lc = LD(eps) + log_qL - log_qcL
    if lc > np.log(LD(N)) + 1e-9:
        # c > N >= M: no x < M is in the cone (that needs (x + 1)/(M - x) > c), and x = M has weight 1, so
        # delta = sum_M P(M) q^M = (1 - s q_c)^N: the distinguishing mass (no row of the pair in b)
        log_delta = LD(N) * np.log1p(-(LD(s) * qcL))
        slack = 8 * _UL * (abs(log_delta) + 1) + 4 * _U * abs(float(log_delta))   # + s rounded from pa + pb
        return float(log_delta - slack), float(log_delta + slack), 1
    theta = 1 / (1 + np.exp(-lc))
    log_g = np.logaddexp(log_qcL, log_qL + LD(eps)) - LD(eps) * theta
    if rest == 0.0:   # two categories: every unknown row is in the pair
        lo = hi = N
        log_outside = -math.inf
    else:
        logit = np.log(LD(s)) + log_g - np.log(LD(rest))
        sp = min(max(float(1 / (1 + np.exp(-logit))), 1e-300), 1.0 - 2**-53)
        mode = min(int(math.floor((N + 1) * sp)), N)
        half = int(math.ceil(12 * math.sqrt(N * sp * (1 - sp)) + 40))
        lo, hi = max(0, mode - half), min(N, mode + half)
        log_chernoff = float(LD(eps) * (1 - theta) + LD(N) * np.logaddexp(np.log(LD(rest)), np.log(LD(s)) + log_g))
        # times 2: s' is rounded, and the identity sum P(M) g^M [M in S] = (1 - s + s g)^N P(Bin(N, s') in S) is exact
        log_outside = log_chernoff + math.log(2.0) + _tail_mass_log(N, sp, lo, hi)
    if hi - lo + 1 > NOISELESS_MAX_ROWS:
        return None
    log_lo, _, log_up, rows, _, log_cone = _kernels.counting_noiseless_mixture(N, s, rest, q, qc, eps=eps,
                                                                               m_lo=lo, m_hi=hi)
    log_lo, log_up = _widen_for_the_probabilities(N, pa, pb, rest, s, qL, qcL, eps, log_lo, log_up, log_cone,
                                                  edge=rest != 0.0 and (lo == 0 or hi == N))
    log_up = float(np.logaddexp(log_up, log_outside))
    return log_lo, min(log_up, 0.0), rows


def _widen_for_the_probabilities(N: int, pa: float, pb: float, rest: float, s: float, qL: np.longdouble,
                                 qcL: np.longdouble, eps: float, log_lo: float, log_up: float, log_cone: float,
                                 edge: bool) -> tuple[float, float]:
    """From the kernel's bracket to the user's probabilities, read as ``pa, pb, rest`` over their exact sum.

    The kernel sums the lattice of ``Bin(N, s)`` rows of ``Bin(M, q)`` (``s = pa + pb`` rounded, ``q = pa / s``
    rounded with the smaller of ``q, q_c`` exact and the other 1 minus it; one row ``M = N`` when
    ``rest = 0``) by Loader's log pmf, which at ``0 < k < n`` is the binomial of the normalised pair
    ``p / (p + q)`` times ``e^(n (1 - t + log t))``, ``t = p + q``: a factor within ``n (t - 1)^2`` of 1 (its
    end points ``k = 0, n`` are normalised otherwise: within ``2 |t - 1|`` a category, ``edge`` when a window
    of ``M`` reaches them).  So each lattice term of both hypotheses is within ``(1 + 2 m)^N`` (times that
    second-order factor) of the user's, ``m`` the largest relative difference of a normalised category
    (exact, in rationals: 0 when every rounding was exact, as for ``[0.2, 0.2, 0.6]``), and the two
    hypotheses' factors differ by ``|alpha - beta|``, which moves each term's difference by that times its
    ``e^eps P_b`` -- at most ``(2 + e^eps)`` times the cone's mass with the point just outside each row's
    cone.  Both ends move apart by that."""
    from fractions import Fraction
    fq, fqc = (Fraction(*v.as_integer_ratio()) for v in (qL, qcL))   # the long doubles exactly
    tau = fq + fqc
    fr = Fraction(rest)
    sigma = Fraction(s) + fr if rest != 0.0 else Fraction(1)
    s_eff = Fraction(s) if rest != 0.0 else Fraction(1)
    user = Fraction(pa) + Fraction(pb) + fr
    alpha = (s_eff * fq / (sigma * tau)) / (Fraction(pa) / user) - 1
    beta = (s_eff * fqc / (sigma * tau)) / (Fraction(pb) / user) - 1
    rho = (fr / sigma) / (fr / user) - 1 if rest != 0.0 else Fraction(0)
    ends = 2 * abs(tau - 1) + (2 * abs(sigma - 1) if edge else 0)
    m = float(max(abs(alpha), abs(beta), abs(rho)) + ends) * 1.001
    second = float(N * ((sigma - 1) ** 2 + (tau - 1) ** 2)) * 1.001
    if m == 0.0 and second == 0.0:
        return log_lo, log_up
    rel = math.expm1(N * math.log1p(2 * m)) * (1 + 1e-12) + second * (1 + 1e-12)
    cancel = float(abs(alpha - beta)) * (1 + rel) * (2 + math.exp(eps)) * 1.001
    up = log_up + math.log1p(rel)
    if cancel > 0 and log_cone > -math.inf:
        up = float(np.logaddexp(up, math.log(cancel) + log_cone))
    lo = -math.inf
    if log_lo > -math.inf:
        shrink = 1 - rel - (cancel * math.exp(log_cone - log_lo) if cancel > 0 else 0.0)
        lo = log_lo + math.log(shrink) if shrink > 0 else -math.inf
    return lo, up
