"""Nothing hangs or eats the machine: each call here either refuses at once with a message naming the
parameter, its value and the limit, or finishes with a finite, certified answer.  A ``signal.alarm``
guard turns a regression (an endless loop, a quadratic blow-up) into a failure instead of a hang."""
import math
import time

import numpy as np
import pytest

import ppk
from ppk import noise
from ppk.pld import _convolution
from ppk.baselines import analytic_gaussian_delta
from ppk.related import risk
from ppk.related.risk import sensitivity as S

from guards import within

PLD = ppk.PrivacyLossDistribution


# -- max_buckets too small to ever be met: the merging loop doubled Delta forever ----------------------

@pytest.mark.parametrize("build, exact", [
    (lambda mb: PLD.from_gaussian(sigma=3, value_discretization_interval=1e-2, max_buckets=mb),
     analytic_gaussian_delta(sigma=3.0, eps=0.5)),
    (lambda mb: PLD.from_laplace(scale=3, value_discretization_interval=1e-2, max_buckets=mb), None),
    (lambda mb: PLD.from_counting_query(ppk.CountingQuery(n=1001, known=0, p=0.3, sigma=3.0),
                                        value_discretization_interval=1e-2, max_buckets=mb), None),
    (lambda mb: PLD.from_pmfs([0.2, 0.8], [0.6, 0.4], value_discretization_interval=1e-3, max_buckets=mb), None),
], ids=["gaussian", "laplace", "counting", "pmfs"])
def test_max_buckets_below_three_is_refused_and_three_finishes(build, exact):
    with within(10):
        with pytest.raises(ValueError, match=r"max_buckets must be in \[3, .*got 2"):
            build(2)
        pld = build(3)
        lo, hi = pld.delta_bracket(0.5)
    assert max(pld.mass_upper.size, pld._atoms.p.size) <= 3
    assert 0 <= lo <= hi <= 1
    if exact is not None:   # on 3 buckets (interval 20.48) the bracket still holds the exact delta
        assert lo <= exact <= hi


# -- allocations estimated before they are made ------------------------------------------------------

def test_a_huge_width_is_refused_before_allocating():
    t = time.perf_counter()
    with within(5):
        with pytest.raises(ValueError, match=r"width = 1e\+12 .*bytes.*16,777,216 points"):
            PLD(interval=1e-3, offset=0, mass_upper=[0.5, 0.5], mass_lower=[0.5, 0.5], width=1e12)
    assert time.perf_counter() - t < 1


def test_a_wide_loss_range_is_built_on_a_coarser_grid_instead_of_refused():
    # sensitivity/sigma = 1e10 needs 1e15 buckets at 1e-4: built directly at the doubled interval
    with within(30):
        pld = PLD.from_gaussian(sigma=1.0, sensitivity=1e10, max_buckets=1 << 12)
        lo, hi = pld.delta_bracket([0.0, 1.0, 1e6])
    assert pld.mass_upper.size <= 1 << 12 and np.all(hi == 1.0) and np.all(lo <= hi)
    with pytest.raises(ValueError, match="sensitivity/sigma = 1e\\+200.*beyond the float range"):
        PLD.from_gaussian(sigma=1.0, sensitivity=1e200)


def test_monte_carlo_refuses_above_its_draw_limit_and_blocks_below():
    with within(5):
        with pytest.raises(ValueError, match=r"samples = 1,000,000,000,000 .*MC_MAX_DRAWS = 1e\+08"):
            risk.confidence_mc(fx=[0.0], fy=[1.0], eps=0.5, eps0=1.0, samples=10**12)
        with pytest.raises(ValueError, match=r"dimension 1,000"):
            risk.confidence_mc(fx=np.zeros(1000), fy=np.ones(1000), eps=0.5, eps0=1.0, samples=10**6)
        with pytest.raises(ValueError, match=r"size asks for 1e\+12 draws"):
            risk.BesselK(2).rvs((10**6, 10**6))
    # several blocks draw the same numbers as one array would: the estimate is the exact one's MC
    with within(30):
        est, se = risk.confidence_mc(fx=[0.0], fy=[1.0], eps=0.5, eps0=1.0, samples=5_000_000, rng=2)
    assert abs(est - risk.confidence_exact(eps=0.5, eps0=1.0)) < 5 * se


def test_besselk_quantile_ends_near_one():
    with within(10):
        for k in (1, 8, 16, 1000):   # k = 8, 16: the cdf's sum levels off below 1 - 2^-53
            x = risk.BesselK(k).ppf(1 - 2**-53)
            assert math.isfinite(x) and risk.BesselK(k).sf(x) == pytest.approx(2**-53, rel=1e-6)


def test_sensitivity_sampling_reads_only_the_rows_it_uses():
    vals = np.random.default_rng(1).random(1000)
    with within(10):
        # the scalar queries' distances need the two extra rows only: rows = 1e12 costs nothing
        s = S.sample_sensitivities(S.ClippedSum(0.0, 1.0), vals, rows=10**12, pairs=1000, seed=3)
        assert s.shape == (1000,) and np.all((0 <= s) & (s <= 1))
        with pytest.raises(ValueError, match=r"pairs must be <= 20000000"):
            S.sample_sensitivities(S.Count(), vals, rows=10, pairs=10**12)
        with pytest.raises(ValueError, match=r"MAX_INDICES"):
            S.pair_indices(m=10, rows=10**6, pairs=10**6, seed=0)
        X, y = S.synthetic_census(100, rng=0)
        with pytest.raises(ValueError, match=r"MAX_RIDGE_WORK"):
            S.sample_sensitivities(S.Ridge(0.01), (X, y), rows=10**9, pairs=10**6)
        with pytest.raises(ValueError, match=r"n must be <= 10000000"):
            S.synthetic_census(10**12)
    # the two columns are the ones of the full index matrix
    small = S.sample_sensitivities(S.ClippedSum(0.0, 1.0), vals, rows=20, pairs=50, seed=9)
    idx = S.pair_indices(m=vals.size, rows=20, pairs=50, seed=9)
    np.testing.assert_array_equal(small, np.abs(vals[idx[:, 19]] - vals[idx[:, 20]]))


# -- compositions of huge counts ---------------------------------------------------------------------

def test_self_composing_a_trillion_times_finishes_finite():
    pld = PLD.from_gaussian(sigma=3, value_discretization_interval=1e-2, max_buckets=1 << 12)
    with within(30):
        for k in (10**12, 2**63 - 1):
            out = pld.self_compose(k)
            lo, hi = out.delta_bracket([0.0, 0.5, 1e6])
            # the losses' mean k/18 is far above every eps here: delta is 1 to double precision
            assert np.all(np.isfinite(lo)) and np.all(hi == 1.0) and np.all(lo <= hi)
            assert out.overflow_mass_upper <= 1 and math.isfinite(out._atoms.err_p)


def test_a_one_bucket_pld_composed_2_to_the_62_times_answers_at_once():
    # its width (in buckets) reached 4.6e18 and delta_bracket looped over it
    with within(10):
        out = PLD.from_pmfs([1.0], [1.0]).self_compose(2**62)
        lo, hi = out.delta_bracket([0.0, 1.0])
    assert np.all(lo == 0) and np.all(hi <= 1)


def test_the_lower_end_over_a_wide_straddle_is_quick_and_stays_a_bound():
    eps = np.array([0.0, 0.1, 0.5, 1.0])
    # 2^20-fold composition of a loss far narrower than the grid: width 2^20 buckets over ~1e4 of
    # them, each eps straddled by thousands (the loop ran over the width: a million passes)
    # (the eager composition of the vectors: a plan of Gaussians is the exact Gaussian, no straddle at all)
    with within(10):
        out = PLD.from_gaussian(sigma=1e4, value_discretization_interval=1e-3).with_composition("fft").self_compose(2**20)
        lo, hi = out.delta_bracket(eps)
    exact = analytic_gaussian_delta(sigma=1e4 / 1024, eps=eps)
    assert out.width > 1e6
    assert np.all(lo <= exact * (1 + 1e-12)) and np.all(exact <= hi * (1 + 1e-12))
    # 4096-fold at a finer grid: ~4096 buckets straddle each eps, read in 64 runs, and the lower end
    # stays close to the exact delta
    with within(60):
        out = PLD.from_gaussian(sigma=64.0, value_discretization_interval=1e-3).with_composition("fft").self_compose(4096)
        lo, hi = out.delta_bracket(eps)
    exact = analytic_gaussian_delta(sigma=1.0, eps=eps)
    assert out.width > 64
    assert np.all(lo <= exact * (1 + 1e-12)) and np.all(exact <= hi * (1 + 1e-12))
    assert np.all(lo >= 0.5 * exact)


def test_an_exact_composition_too_large_is_refused_with_its_size():
    a = PLD.from_gaussian(sigma=0.5, value_discretization_interval=1e-4).with_composition("exact")
    with within(10):
        with pytest.raises(ValueError, match=r"composition='exact' would convolve .*composition='auto'"):
            a.compose(a)
    assert _convolution.EXACT_MAX_WORK >= 1e9


def test_the_accountant_composes_a_trillion_gaussians_in_closed_form():
    with within(30):
        acc = ppk.Accountant(value_discretization_interval=1e-3).add_gaussian(sigma=3e6, times=10**12)
        lo, hi = acc.delta_bracket([0.5, 1.0])
    exact = analytic_gaussian_delta(sigma=3.0, eps=np.array([0.5, 1.0]))
    assert np.all(lo <= exact) and np.all(exact <= hi) and np.all(hi - exact <= 1e-3 * exact)
    assert "x 1000000000000" in repr(acc)


# -- natural noise: a row sum of wide rows ------------------------------------------------------------

def test_a_row_sum_beyond_the_convolution_budget_is_refused_up_front():
    law = noise.RowSum(np.full(1000, 1 / 1000), count=1000)
    q = ppk.NoisyQuery(natural=law, added=noise.Gaussian(3.0))
    t = time.perf_counter()
    with within(10):
        with pytest.raises(ValueError, match=r"RowSum\(row_pmf=<1000 values>, count=1000\).*MAX_CONVOLUTION_WORK"):
            q.delta(1.0)
    assert time.perf_counter() - t < 2


def test_a_row_sum_within_the_budget_reuses_its_whole_support():
    law = noise.RowSum(np.full(100, 1 / 100), count=20)
    with within(60):
        deep = law.window(1024.0)
        assert deep.log_dropped == -math.inf and deep.size == 20 * 99 + 1
        t = time.perf_counter()
        assert law.window(2048.0) is deep          # the whole support: not convolved again
        assert time.perf_counter() - t < 0.1
        d = ppk.NoisyQuery(natural=law, added=noise.Gaussian(3.0)).delta(1.0)
    assert 0 <= d < 1
