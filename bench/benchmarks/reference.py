"""The obvious alternatives ppk is measured against (numpy/scipy, full support).

`numpy_log_delta` evaluates the same threshold formula (docs/method.md) that ppk's C++
kernel uses, but straightforwardly: the binomial log-pmf over the whole
support 0..N with scipy, log-sum-exp in numpy for the privacy loss, brentq for
the threshold.  It is what one would write first; its accuracy is that of
double-precision log-sum-exp (no certified bound).
"""
from __future__ import annotations

import math

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


# -- the noiseless count (sigma = 0): a + Bin(N, p), the challenge row adding 0 or 1 -----------------------
# The loss log P1(y)/P0(y) = log(y (1-p) / ((N-y+1) p)) increases in y, so each order's delta is a difference
# of two binomial tails at the threshold (docs/method.md, "The model").  Straightforward double precision:
# it cancels where the threshold's ratio is near e^eps, and reads 0 below 1e-308 (no certified bound).

def _noiseless_thresholds(N: int, p: float, eps: float) -> tuple[int, int]:
    def crossing(e: float) -> float:    # the y where the loss equals e
        return math.exp(e) * (N + 1) * p / ((1 - p) + math.exp(e) * p)
    return math.floor(crossing(eps)) + 1, math.ceil(crossing(-eps)) - 1


def scipy_noiseless_delta(N: int, p: float, eps: float) -> float:
    """delta(eps) of the noiseless count from scipy.stats.binom's tails, both orders."""
    t, s = _noiseless_thresholds(N, p, eps)
    up = stats.binom.sf(t - 2, N, p) - math.exp(eps) * stats.binom.sf(t - 1, N, p)   # loss > eps: y >= t
    down = stats.binom.cdf(s, N, p) - math.exp(eps) * stats.binom.cdf(s - 1, N, p)  # loss < -eps: y <= s
    return max(up, down, 0.0)


def numpy_noiseless_window_delta(N: int, p: float, eps: float, *, sds: float = 40.0) -> float:
    """delta(eps) of the noiseless count summed over a window of +-``sds`` standard deviations: P0's pmf times
    the positive parts of r - e^eps and 1 - e^eps r, r = P1/P0 in closed form (no difference of pmfs), plus
    the two outcomes only one side has (y = 0 without the row, y = N + 1 with it)."""
    mean, sd = N * p, math.sqrt(N * p * (1 - p))
    y = np.arange(max(1, math.floor(mean - sds * sd)), min(N, math.ceil(mean + sds * sd)) + 1)
    p0 = np.exp(stats.binom.logpmf(y, N, p))
    loss = np.log(y * (1 - p)) - np.log((N - y + 1) * p)
    up = (p0 * np.exp(eps) * np.expm1(np.maximum(loss - eps, 0.0))).sum() + p ** N
    down = (p0 * -np.expm1(np.minimum(loss + eps, 0.0))).sum() + (1 - p) ** N
    return float(max(up, down))
