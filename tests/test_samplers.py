"""The exact samplers: their laws (chi-square against the pmf), their cost, and their input checks."""
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import special, stats

from ppk import samplers
from ppk._random import RandomSource, as_source


def _chi_square_pvalue(draws, pmf, support):
    """Chi-square of the draws against pmf on `support`, the rest pooled into one cell."""
    draws = np.asarray(draws, dtype=object)
    expected = np.array([pmf(k) for k in support], dtype=float)
    observed = np.array([np.sum(draws == k) for k in support], dtype=float)
    rest_p = 1.0 - expected.sum()
    expected = np.append(expected, max(rest_p, 0.0)) * len(draws)
    observed = np.append(observed, len(draws) - observed.sum())
    keep = expected > 5
    pooled_e, pooled_o = expected[~keep].sum(), observed[~keep].sum()
    chi2 = np.sum((observed[keep] - expected[keep]) ** 2 / expected[keep])
    if pooled_e > 0:
        chi2 += (pooled_o - pooled_e) ** 2 / pooled_e
    return stats.chi2.sf(chi2, keep.sum())


DRAWS = 60_000   # per case: ~3 s; detects a pmf error of ~2% in a cell of probability 0.05


@pytest.mark.parametrize("sigma", [0.4, 1.0, 3.7])
def test_rounded_gaussian_law(sigma):
    src = as_source(11)
    draws = [samplers.rounded_gaussian(sigma, rng=src) for _ in range(DRAWS)]
    def pmf(k):
        return special.ndtr((k + 0.5) / sigma) - special.ndtr((k - 0.5) / sigma)
    assert _chi_square_pvalue(draws, pmf, range(-int(5 * sigma) - 1, int(5 * sigma) + 2)) > 1e-4


@pytest.mark.parametrize("sigma", [0.4, 1.0, 3.7])
def test_discrete_gaussian_law(sigma):
    src = as_source(12)
    draws = [samplers.discrete_gaussian(sigma, rng=src) for _ in range(DRAWS)]
    ks = np.arange(-200, 201)
    norm = np.exp(-ks.astype(float) ** 2 / (2 * sigma ** 2)).sum()
    def pmf(k):
        return math.exp(-k * k / (2 * sigma ** 2)) / norm
    assert _chi_square_pvalue(draws, pmf, range(-int(5 * sigma) - 1, int(5 * sigma) + 2)) > 1e-4


@pytest.mark.parametrize("scale", [0.3, 1.0, 7.5])
def test_discrete_laplace_law(scale):
    src = as_source(13)
    draws = [samplers.discrete_laplace(scale, rng=src) for _ in range(DRAWS)]
    def pmf(k):
        return math.tanh(1 / (2 * scale)) * math.exp(-abs(k) / scale)
    assert _chi_square_pvalue(draws, pmf, range(-int(6 * scale) - 1, int(6 * scale) + 2)) > 1e-4


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(5, 2)])
def test_bernoulli_exp(gamma):
    src = as_source(14)
    hits = sum(samplers.bernoulli_exp(gamma, rng=src) for _ in range(40_000))
    assert stats.binomtest(hits, 40_000, math.exp(-gamma)).pvalue > 1e-4


def test_large_sigma_keeps_the_moments_and_the_low_bits():
    src = as_source(15)
    for sigma in (1e9, 1e17, 1e300):
        draws = [samplers.rounded_gaussian(sigma, rng=src) for _ in range(2000)]
        z = np.array([float(Fraction(k) / Fraction(sigma)) for k in draws])
        assert stats.kstest(z, "norm").pvalue > 1e-4
        assert stats.chisquare(np.bincount([k % 4 for k in draws], minlength=4)).pvalue > 1e-4


class _CountingSource(RandomSource):
    """Counts the calls for random integers (each is O(1) words of random bits)."""

    __slots__ = ("calls",)

    def __init__(self, seed):
        super().__init__(np.random.default_rng(seed))
        self.calls = 0

    def bits(self, k):
        self.calls += 1
        return super().bits(k)

    def below(self, m):
        self.calls += 1
        return super().below(m)


@pytest.mark.parametrize("sampler,scale", [(samplers.discrete_laplace, 0.01), (samplers.discrete_laplace, 1e12),
                                           (samplers.discrete_gaussian, 0.01), (samplers.discrete_gaussian, 1e12),
                                           (samplers.rounded_gaussian, 0.01), (samplers.rounded_gaussian, 1e12)])
def test_expected_cost_is_a_constant(sampler, scale):
    src = _CountingSource(16)
    for _ in range(2000):
        sampler(scale, rng=src)
    # O(1) expected random integers per draw, whatever the scale: measured 15-46 calls per draw for
    # scales 0.01 to 1e12 (a call returns one machine word; rounded_gaussian reads log2(sigma)/32 more)
    assert src.calls / 2000 < 60


def test_zero_scale_and_bad_input():
    assert samplers.rounded_gaussian(0.0) == 0 and samplers.discrete_gaussian(0) == 0
    for bad, exc in [(-1.0, ValueError), (math.nan, ValueError), (math.inf, ValueError), ("1", TypeError),
                     (True, TypeError), (None, TypeError)]:
        with pytest.raises(exc, match="sigma"):
            samplers.rounded_gaussian(bad)
        with pytest.raises(exc, match="scale"):
            samplers.discrete_laplace(bad)
    with pytest.raises(ValueError, match="scale"):
        samplers.discrete_laplace(0.0)
    with pytest.raises(ValueError, match="rng"):
        samplers.discrete_laplace(1.0, rng=-3)
