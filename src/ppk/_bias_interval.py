"""The bias interval of Algorithm 2 (thesis Sec. 4.2; docs/decisions.md, "Algorithm 2"): the Chernoff-Hoeffding
deviation, the Laplace truncation term T_L, and the interval [p_lo, p_hi] that holds the generating bias
except with probability kappa2.
"""
from __future__ import annotations

import math
from fractions import Fraction

from ._search import log_quotient
from ._validate import choice, integer, real

__all__ = ["hoeffding_t", "laplace_truncation", "hoeffding_interval", "HOEFFDING_METHODS"]

#: The bias intervals: the closed-form additive Hoeffding bound and the narrower Chernoff-KL one.
HOEFFDING_METHODS = ("additive", "kl")


def hoeffding_t(*, kappa2: float, m: int) -> float:
    """Additive Chernoff-Hoeffding deviation t with 2 exp(-2 m t^2) = kappa2 (inf when m = 0)."""
    kappa2 = real("kappa2", kappa2, minimum=0.0, maximum=1.0, min_inclusive=False)
    m = integer("m", m, minimum=0)
    return math.inf if m == 0 else math.sqrt(log_quotient(2.0, kappa2) / (2.0 * m))


def laplace_truncation(*, n: int, t: float, eps_estimate: float) -> float:
    """T_L: the probability that the count estimate's noise Y exceeds n t - 1 in size, rounded up.

    Y is discrete Laplace, ``P(y) ∝ exp(-eps_estimate |y|)``.  The fallback fires when
    ``|Y| > n t``; on a neighbouring database (count +- 1) the same estimate needs noise
    ``Y -+ 1``, so the bias interval can fail for it when ``|Y| > n t - 1``, i.e.
    ``|Y| >= m = floor(n t)``:  ``T_L = 2 exp(-eps_estimate m) / (1 + exp(-eps_estimate))``
    (1 when m <= 0).  The continuous Laplace of the thesis gives ``exp(-eps_estimate (n t - 1))``;
    the two differ by less than a factor ``2 / (1 + exp(-eps_estimate))`` (docs/release-security.md).
    """
    n = integer("n", n, minimum=1)
    eps_estimate = real("eps_estimate", eps_estimate, minimum=0.0, min_inclusive=False)
    if isinstance(t, float) and t == math.inf:       # no known rows: the interval is [0, 1] and cannot fail
        return 0.0
    t = real("t", t, minimum=0.0)
    m = math.floor(Fraction(n) * Fraction(t))
    if m <= 0:
        return 1.0
    log_tl = math.log(2.0) - eps_estimate * m - math.log1p(math.exp(-eps_estimate))
    return min(1.0, math.exp(log_tl) * (1 + 1e-14))   # rounded up: T_L is subtracted from kappa3


def _kl(a: float, b: float) -> float:
    """KL(Bern(a) || Bern(b))."""
    out = 0.0
    if a > 0:
        out += a * math.log(a / b)
    if a < 1:
        out += (1 - a) * math.log((1 - a) / (1 - b))
    return out


def hoeffding_interval(*, estimate: float, t_laplace: float, kappa2: float, m: int, method: str = "additive") -> tuple[float, float]:
    """Interval for the generating bias around a noisy estimate (``|estimate - c/n| <= t_laplace``).

    ``additive``: ``estimate -+ (t_hoeffding + t_laplace)`` (thesis Alg. 2 line 9; tau = 2t when the two t agree).
    ``kl``: the Chernoff-KL interval ``{theta : m KL(x || theta) <= ln(2/kappa2)}`` for the extreme x
    within t_laplace of the estimate; narrower (Pinsker), solved by root finding.
    Returns ``(p_lo, p_hi)`` clipped to [0, 1].
    """
    estimate = real("estimate", estimate)
    if not (isinstance(t_laplace, float) and t_laplace == math.inf):
        t_laplace = real("t_laplace", t_laplace, minimum=0.0)
    kappa2 = real("kappa2", kappa2, minimum=0.0, maximum=1.0, min_inclusive=False)
    m = integer("m", m, minimum=0)
    if choice("method", method, HOEFFDING_METHODS) == "additive":
        tau = hoeffding_t(kappa2=kappa2, m=m) + t_laplace
        return max(0.0, estimate - tau), min(1.0, estimate + tau)
    if m == 0:
        return 0.0, 1.0
    from scipy import optimize   # loaded on use: `import ppk` stays light (docs/architecture.md)

    level = log_quotient(2.0, kappa2) / m
    x_lo = min(1.0, max(0.0, estimate - t_laplace))
    x_hi = min(1.0, max(0.0, estimate + t_laplace))
    if x_lo <= 0 or _kl(x_lo, 1e-300) <= level:
        lo = 0.0
    else:
        lo = optimize.brentq(lambda th: _kl(x_lo, th) - level, 1e-300, x_lo, xtol=1e-300, rtol=1e-15)
    if x_hi >= 1 or _kl(x_hi, 1 - 1e-16) <= level:
        hi = 1.0
    else:
        hi = optimize.brentq(lambda th: _kl(x_hi, th) - level, x_hi, 1 - 1e-16, xtol=1e-16, rtol=1e-15)
    return lo, hi
