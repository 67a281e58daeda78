"""The obvious alternatives ppk is measured against (numpy/scipy, full support).

`numpy_log_delta` evaluates the same threshold formula (docs/method.md) that ppk's C++
kernel uses, but straightforwardly: the binomial log-pmf over the whole
support 0..N with scipy, log-sum-exp in numpy for the privacy loss, brentq for
the threshold.  It is what one would write first; its accuracy is that of
double-precision log-sum-exp (no certified bound).
"""
from __future__ import annotations

import numpy as np
from scipy import optimize, special, stats


def _direction(N: int, p: float, sigma: float, eps: float) -> float:
    k = np.arange(N + 1)
    lw = stats.binom.logpmf(k, N, p)

    def loss(o: float) -> float:
        return (special.logsumexp(lw - 0.5 * ((o - 1 - k) / sigma) ** 2)
                - special.logsumexp(lw - 0.5 * ((o - k) / sigma) ** 2) - eps)

    sd = np.sqrt(N * p * (1 - p) + sigma**2)
    lo, hi = N * p - 10 * sd - 10, N * p + 10 * sd + 10 + eps * sd**2
    while loss(lo) > 0:
        lo -= 10 * sd
    while loss(hi) < 0:
        hi += 10 * sd
    o = optimize.brentq(loss, lo, hi, xtol=1e-10, rtol=1e-14)
    log_a = special.logsumexp(lw + special.log_ndtr((k + 1 - o) / sigma))
    log_b = special.logsumexp(lw + special.log_ndtr((k - o) / sigma))
    return log_a + np.log1p(-np.exp(eps + log_b - log_a))


def numpy_log_delta(N: int, p: float, sigma: float, eps: float) -> float:
    """log delta(eps) of a + Bin(N, p) + N(0, sigma^2), both orders, full support."""
    if p == 0.5:
        return _direction(N, p, sigma, eps)
    return max(_direction(N, p, sigma, eps), _direction(N, 1 - p, sigma, eps))


def scipy_hypergeom_loop(population: int, successes: int, draws: int) -> np.ndarray:
    """One scipy call per support value (how the thesis computed class weights)."""
    lo, hi = max(0, draws - population + successes), min(draws, successes)
    dist = stats.hypergeom(M=population, n=successes, N=draws)
    return np.array([dist.pmf(h) for h in range(lo, hi + 1)])


def scipy_hypergeom_vectorised(population: int, successes: int, draws: int) -> np.ndarray:
    lo, hi = max(0, draws - population + successes), min(draws, successes)
    return stats.hypergeom(M=population, n=successes, N=draws).pmf(np.arange(lo, hi + 1))
