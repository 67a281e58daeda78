"""NoisyQuery: every natural-noise law with every added noise against a 50-digit oracle, reductions
to closed forms and to CountingQuery, monotonicity, bounds, calibration and bad input."""
import math
import random
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noise_oracle as O
import oracles
import ppk
from ppk import noise
from ppk._search import log_target
from ppk.baselines import analytic_gaussian_log_delta

mp = pytest.importorskip("mpmath")

EPS = 0.4
GROUPS = [(4, 0.15), (5, 0.6)]
ROW = [0.2, 0.5, 0.3]
BIMODAL = [0.3, 0.05, 0.05, 0.1, 0.5]     # not log-concave

NATURAL = {   # name: (law, sensitivity); the oracle's pmfs of the same names: tests/oracles/make_noisy_query.py
    "binomial": (lambda: noise.Binomial(9, 0.3), 1),
    "poisson-binomial": (lambda: noise.PoissonBinomial(probs=[0.15] * 4 + [0.6] * 5), 1),
    "beta-binomial": (lambda: noise.BetaBinomial(9, 2.0, 3.0), 1),
    "beta-binomial U": (lambda: noise.BetaBinomial(9, 0.5, 0.5), 1),
    "mixture": (lambda: noise.BinomialMixture(9, [0.3, 0.7], [0.15, 0.8]), 1),
    "row sum": (lambda: noise.RowSum(ROW, 4), 2),
    # a row that is not log-concave; the sum of 12 is, on its window: the threshold path
    "row sum, row not log-concave": (lambda: noise.RowSum([0.5, 0.3, 0.2], 12), 2),
    "pmf": (lambda: noise.Pmf(np.log(BIMODAL), offset=0), 1),
}
ADDED = {
    "gaussian": lambda: noise.Gaussian(1.3),
    "laplace": lambda: noise.Laplace(2.0),
    "discrete gaussian": lambda: noise.DiscreteGaussian(1.3),
    "discrete laplace": lambda: noise.DiscreteLaplace(2.0),
    "none": lambda: noise.NoNoise(),
}
# 50-digit oracle values (tests/noise_oracle.py via tests/oracles/make_noisy_query.py, ~1 min to rewrite)
STORED = oracles.load("noisy_query")


@pytest.mark.parametrize("added", sorted(ADDED))
@pytest.mark.parametrize("natural", sorted(NATURAL))
def test_every_law_and_noise_agrees_with_the_oracle(natural, added):
    law, s = NATURAL[natural]
    add = ADDED[added]
    q = ppk.NoisyQuery(natural=law(), added=add(), sensitivity=s)
    stored = STORED["cases"][f"{natural}|{added}"]
    assert stored["sensitivity"] == s and STORED["eps"] == EPS
    ref = float(stored["log_delta"])
    assert q.log_delta(EPS) == pytest.approx(ref, abs=1e-9), q.path
    assert q.log_delta_upper(EPS) >= ref - 1e-13
    expected = {"none": "lattice sum"}.get(added) or (
        "threshold" if law().log_concave or law().window(64.0).log_concave
        else ("lattice sum" if add().lattice else "crossings"))
    if natural == "binomial" and added in ("gaussian", "none"):
        expected = "counting kernel"
    assert q.path == expected


def test_the_stored_oracle_values_are_rederived():
    # a corrupted file is caught: two of the cheap lattice cases (time-seeded), live with the generator's oracle
    from oracles import make_noisy_query as gen
    cheap = [f"{n}|{a}" for n in ("binomial", "beta-binomial", "mixture", "pmf") for a in ("none", "discrete gaussian")]
    for key in random.Random(int(time.time())).sample(cheap, 2):
        assert gen.log_delta(*key.split("|")) == STORED["cases"][key]["log_delta"], key


def test_exact_shifts():
    # the difference of two histogram bins: the challenge row moves the output by exactly 2
    law = noise.RowSum([0.2, 0.5, 0.3], 6)
    add = noise.DiscreteGaussian(1.3)
    q = ppk.NoisyQuery(natural=law, added=add, shifts=(2,))
    assert q.sensitivity == 2 and q.shifts == (2,) and "shifts=(2,)" in repr(q)
    assert q.log_delta(EPS) == pytest.approx(float(STORED["exact_shifts"]), abs=1e-9)
    both = ppk.NoisyQuery(natural=law, added=add, sensitivity=2)
    assert both.log_delta(EPS) >= q.log_delta(EPS)
    with pytest.raises(ValueError, match=r"shifts\[0\] must be >= 1"):
        ppk.NoisyQuery(natural=law, added=add, shifts=(0, 2))


def test_a_sum_of_rows_that_are_not_log_concave_takes_the_threshold_path():
    law = noise.RowSum([0.5, 0.3, 0.2], 12)
    assert not law.log_concave and law.window(64.0).log_concave
    assert ppk.NoisyQuery(natural=law, added=noise.Gaussian(1.3), sensitivity=2).path == "threshold"


def test_binomial_with_gaussian_noise_is_counting_query_exactly():
    for n, p, sigma, eps in [(1000, 0.3, 2.0, 0.2), (10**6, 0.5, 30.0, 0.01), (50, 0.01, 0.5, 3.0)]:
        q = ppk.NoisyQuery(natural=noise.Binomial(n, p), added=noise.Gaussian(sigma))
        ref = ppk.CountingQuery(n=n + 1, known=0, p=p, sigma=sigma)
        assert q.log_delta(eps) == pytest.approx(ref.log_delta(eps), rel=1e-14)
        assert q.log_delta_upper(eps) == pytest.approx(ref.log_delta_upper(eps), rel=1e-14)


@pytest.mark.parametrize("n, p, sigma, eps", [(1000, 0.3, 2.0, 0.2), (10**6, 0.3, 4.0, 0.01), (1000, 0.5, 2.0, 3.0),
                                              (10**5, 0.01, 0.5, 2.0)])
def test_the_threshold_path_reproduces_counting_query(n, p, sigma, eps):
    # a Poisson-binomial with one probability is the binomial, computed by the general threshold path
    q = ppk.NoisyQuery(natural=noise.PoissonBinomial(groups=[(n, p)]), added=noise.Gaussian(sigma))
    assert q.path == "threshold"
    ref = ppk.CountingQuery(n=n + 1, known=0, p=p, sigma=sigma)
    assert q.log_delta(eps) == pytest.approx(ref.log_delta(eps), abs=1e-9)      # also far below 1e-300
    assert q.log_delta_upper(eps) >= ref.log_delta(eps)


def test_the_lattice_path_reproduces_the_noiseless_count():
    q = ppk.NoisyQuery(natural=noise.PoissonBinomial(groups=[(5000, 0.2)]), added=noise.NoNoise())
    ref = ppk.CountingQuery(n=5001, known=0, p=0.2, sigma=0.0)
    for eps in (0.0, 0.05, 0.5):
        assert q.log_delta(eps) == pytest.approx(ref.log_delta(eps), abs=1e-9)


def test_beta_binomial_tends_to_the_binomial_as_the_prior_concentrates():
    binom = ppk.NoisyQuery(natural=noise.Binomial(200, 0.3), added=noise.DiscreteGaussian(2.0)).delta(0.3)
    gaps = [abs(ppk.NoisyQuery(natural=noise.BetaBinomial(200, 0.3 * c, 0.7 * c), added=noise.DiscreteGaussian(2.0))
                .delta(0.3) / binom - 1) for c in (1e2, 1e4, 1e6)]
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 1e-3


@pytest.mark.parametrize("eps", [0.0, 0.1, 0.7, 2.0])
def test_without_natural_noise_the_closed_forms(eps):
    point = noise.Pmf([0.0])
    g = ppk.NoisyQuery(natural=point, added=noise.Gaussian(1.7)).log_delta(eps)
    assert g == pytest.approx(analytic_gaussian_log_delta(sigma=1.7, eps=eps), abs=1e-9)
    b, t = 2.0, 2.0
    lap = ppk.NoisyQuery(natural=point, added=noise.Laplace(b)).delta(eps)
    assert lap == pytest.approx(max(0.0, -math.expm1((eps - 1 / b) / 2)), abs=1e-15)
    dlap = ppk.NoisyQuery(natural=point, added=noise.DiscreteLaplace(t)).delta(eps)
    assert dlap == pytest.approx(max(0.0, -math.expm1(eps - 1 / t)) / (1 + math.exp(-1 / t)), rel=1e-12, abs=1e-300)


def test_poisson_binomial_with_equal_probabilities_is_the_binomial():
    a = ppk.NoisyQuery(natural=noise.PoissonBinomial(probs=[0.35] * 300), added=noise.DiscreteLaplace(1.5))
    b = ppk.NoisyQuery(natural=noise.Binomial(300, 0.35), added=noise.DiscreteLaplace(1.5))
    assert a.log_delta(0.3) == pytest.approx(b.log_delta(0.3), abs=1e-12)


def test_poisson_binomial_tails_stay_exact_where_scipy_underflows():
    # its pmf at 1e4 rows, deep in the tail (scipy's poisson_binom gives -inf for masses like these)
    rng = np.random.default_rng(3)
    probs = rng.uniform(0.05, 0.95, 10_000)
    w = noise.PoissonBinomial(probs=probs).window(2048.0)
    assert np.all(np.isfinite(np.asarray(w.log_pmf, dtype=float)))
    assert float(w.log_pmf.min()) < -1500
    total = float(np.exp(w.log_pmf).sum())
    assert total == pytest.approx(1.0, abs=1e-13)   # 1e4 products of double-precision factors


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 60), p=st.floats(0.01, 0.99), scale=st.floats(0.3, 5.0), law=st.sampled_from(sorted(ADDED)),
       eps=st.lists(st.floats(0.0, 3.0), min_size=2, max_size=4))
def test_delta_is_below_its_bound_and_non_increasing_in_eps(n, p, scale, law, eps):
    added = {"gaussian": noise.Gaussian, "laplace": noise.Laplace, "discrete gaussian": noise.DiscreteGaussian,
             "discrete laplace": noise.DiscreteLaplace, "none": lambda s: noise.NoNoise()}[law](scale)
    q = ppk.NoisyQuery(natural=noise.PoissonBinomial(groups=[(n, p), (n // 2 + 1, 1 - p / 2)]), added=added)
    e = np.sort(np.array(eps))
    d, u = q.log_delta(e), q.log_delta_upper(e)
    assert np.all(d <= u + 1e-12)
    assert np.all(d[1:] <= d[:-1] + 1e-9)


def test_delta_is_non_increasing_in_the_scale():
    nat = noise.BinomialMixture(40, [0.5, 0.5], [0.2, 0.7])
    for law in (noise.Gaussian, noise.DiscreteGaussian, noise.Laplace, noise.DiscreteLaplace):
        values = [ppk.NoisyQuery(natural=nat, added=law(s)).delta(0.2) for s in (0.5, 1.0, 2.0, 4.0)]
        assert all(a >= b - 1e-15 for a, b in zip(values, values[1:])), law


def test_calibrate_returns_a_certified_scale():
    nat = noise.PoissonBinomial(groups=[(3000, 0.02), (2000, 0.3)])
    for law in (noise.Gaussian, noise.DiscreteGaussian, noise.Laplace, noise.DiscreteLaplace):
        c = ppk.calibrate(ppk.NoisyQuery(natural=nat, added=law(1.0)), eps=0.05, delta=1e-9)
        assert c.reason == "search" and c.scale > 0
        assert c.delta_achieved <= 1e-9
        q = ppk.NoisyQuery(natural=nat, added=c.query.added)
        assert isinstance(q.added, law) and q.delta_upper(0.05) <= 1e-9
        assert ppk.NoisyQuery(natural=nat, added=law(c.scale * (1 - 1e-6))).delta_upper(0.05) > 1e-9


def test_calibrate_agrees_with_algorithm_1_for_the_binomial_count():
    c = ppk.calibrate(ppk.NoisyQuery(natural=noise.Binomial(100_000, 0.5), added=noise.Gaussian(1.0)), eps=0.02,
                      delta=1e-6, rtol=1e-10)
    a = ppk.alg1(n=100_001, known=0, p=0.5, eps=0.02, delta=1e-6)
    assert c.scale == pytest.approx(a.scale, rel=1e-8)


def test_calibrate_knows_when_the_natural_noise_suffices():
    c = ppk.calibrate(ppk.NoisyQuery(natural=noise.Binomial(100_000, 0.5), added=noise.DiscreteLaplace(1.0)), eps=1.0,
                      delta=1e-6)
    assert c.scale == 0.0 and c.reason == "natural noise alone suffices" and isinstance(c.query.added, noise.NoNoise)


@pytest.mark.parametrize("make, name", [
    (lambda: noise.Binomial(10, 1.5), "p"),
    (lambda: noise.PoissonBinomial(probs=[0.2, -0.1]), "probs"),
    (lambda: noise.PoissonBinomial(groups=[(10, 2.0)]), "groups"),
    (lambda: noise.PoissonBinomial(groups=[(10, 0.2)], probs=[0.1]), "exactly one"),
    (lambda: noise.BetaBinomial(10, -1.0, 2.0), "a"),
    (lambda: noise.BinomialMixture(10, [0.5, 0.6], [0.1, 0.2]), "weights"),
    (lambda: noise.BinomialMixture(10, [0.5, 0.5], [0.1, 1.2]), "ps"),
    (lambda: noise.RowSum([0.5, 0.6], 3), "row_pmf"),
    (lambda: noise.Pmf(np.log([0.5, 0.4])), "log_pmf"),
    (lambda: noise.Gaussian(-1.0), "sigma"),
    (lambda: noise.Laplace(0.0), "scale"),
    (lambda: noise.DiscreteGaussian(float("nan")), "sigma"),
    (lambda: noise.DiscreteGaussian(1e9), "sigma"),
    (lambda: noise.DiscreteLaplace(-2.0), "scale"),
    (lambda: ppk.NoisyQuery(natural=noise.Binomial(10, 0.5), added=noise.NoNoise(), sensitivity=0), "sensitivity"),
    (lambda: ppk.NoisyQuery(natural=noise.Binomial(10, 0.5), added="gaussian"), "added"),
    (lambda: ppk.NoisyQuery(natural=0.5, added=noise.NoNoise()), "natural"),
    (lambda: ppk.calibrate("uniform", eps=1.0, delta=1e-6), "query"),
    (lambda: ppk.calibrate(ppk.NoisyQuery(natural=noise.Binomial(10, 0.5), added=noise.NoNoise()), eps=1.0,
                           delta=1e-6), "added"),
    (lambda: ppk.calibrate(ppk.NoisyQuery(natural=noise.Binomial(10, 0.5), added=noise.Gaussian(1.0)), eps=0.0,
                           delta=1e-6), "eps"),
])
def test_bad_input_names_the_parameter(make, name):
    with pytest.raises((ValueError, TypeError), match=name):
        make()


def test_summing_around_the_peak_changes_nothing():
    # the threshold path sums each term sequence of a wide log-concave window around its peak only;
    # against the full sums of the other paths (every term of the window) on the same window
    from ppk import _family
    cases = [(noise.BetaBinomial(100_000, 2.0, 3.0), noise.Gaussian(4.0), 0.001, _family.crossings),
             (noise.PoissonBinomial(groups=[(10**7, 0.3)]), noise.DiscreteGaussian(3.0), 0.01, _family.lattice)]
    for natural, added, eps, full_sums in cases:
        q = ppk.NoisyQuery(natural=natural, added=added)
        w = q._window(_family.DEPTH_START)
        assert w.size > 20_000
        got = _family.threshold(q, w, eps).log_delta
        full = full_sums(q, w, eps).log_delta
        assert got == pytest.approx(full, abs=1e-11)


def test_the_peak_path_at_ten_million_rows_reproduces_counting_query():
    q = ppk.NoisyQuery(natural=noise.PoissonBinomial(groups=[(10**7, 0.3)]), added=noise.Gaussian(40.0))
    ref = ppk.CountingQuery(n=10**7 + 1, known=0, p=0.3, sigma=40.0)
    assert q.log_delta(0.005) == pytest.approx(ref.log_delta(0.005), abs=1e-9)


@pytest.mark.parametrize("law", ["discrete_gaussian", "discrete_laplace"])
def test_release_with_discrete_noise_is_calibrated_for_that_law(law):
    out, draws = ppk.release(count=30_000, n=100_000, known=50_000, eps=0.05, delta=1e-6, rng=7, noise=law,
                             audit=True)
    cal = out.calibration
    assert out.public()["noise"] == law and cal.ledger()["noise_law"] == law == cal.law
    assert isinstance(out.value, int) and out.value == 30_000 + draws.gaussian_noise
    assert cal.branch == "ppk" and 0 < cal.sigma <= cal.sigma_dp
    added = noise.ADDED_BY_NAME[law]
    N = cal.n - cal.known - 1
    for p in (cal.p_lo, cal.p_hi, 0.5 * (cal.p_lo + cal.p_hi)):
        q = ppk.NoisyQuery(natural=noise.Binomial(N, p), added=added(cal.sigma))
        assert q.delta_upper(cal.eps / 2) <= cal.kappa4
    # the baseline: the smallest scale that is (eps/2, delta)-DP for the law alone
    alone = ppk.NoisyQuery(natural=noise.Pmf([0.0]), added=added(cal.sigma_dp))
    assert alone.delta_upper(cal.eps / 2) <= cal.delta
    assert ppk.NoisyQuery(natural=noise.Pmf([0.0]), added=added(cal.sigma_dp * 0.999)).delta_upper(cal.eps / 2) > cal.delta


def test_release_refuses_an_unknown_noise_law():
    with pytest.raises(ValueError, match="noise"):
        ppk.release(count=300, n=1000, known=500, eps=0.5, delta=1e-6, noise="laplace")


# ---------------------------------------------------------------- CountingQuery and alg1 as cases

def test_counting_query_is_the_binomial_gaussian_case():
    q = ppk.CountingQuery(n=5000, known=1000, p=0.3, sigma=2.5)
    assert isinstance(q, ppk.NoisyQuery) and q.path == "counting kernel"
    assert repr(q.natural) == "Binomial(n=3999, p=0.3)" and repr(q.added) == "Gaussian(sigma=2.5)"
    same = ppk.NoisyQuery(natural=noise.Binomial(3999, 0.3), added=noise.Gaussian(2.5))
    eps = np.linspace(0.0, 2.0, 300)
    np.testing.assert_array_equal(q.log_delta(eps), same.log_delta(eps))
    # the vectorised curve (roots started from their neighbours) agrees with one eps at a time
    one_by_one = np.array([same._evaluate(float(e)).log_delta for e in eps])
    np.testing.assert_allclose(q.log_delta(eps), one_by_one, rtol=1e-13, atol=1e-13)
    assert isinstance(ppk.CountingQuery(n=10, known=0, p=0.5, sigma=0.0).added, noise.NoNoise)


def test_tiny_gaussian_noise_only_where_the_counting_kernel_resolves_it():
    q = ppk.NoisyQuery(natural=noise.Binomial(100, 0.5), added=noise.Gaussian(1e-9))
    assert q.delta(0.1) == ppk.CountingQuery(n=101, known=0, p=0.5, sigma=1e-9).delta(0.1) > 0
    with pytest.raises(ValueError, match="sigma must be >= 1e-06"):
        ppk.NoisyQuery(natural=noise.PoissonBinomial(probs=[0.2, 0.5]), added=noise.Gaussian(1e-9))
    with pytest.raises(ValueError, match="sigma must be >= 1e-06"):
        ppk.NoisyQuery(natural=noise.Binomial(100, 0.5), added=noise.Gaussian(1e-9), sensitivity=2)


@pytest.mark.parametrize("n,known,p,eps,delta", [(1000, 0, 0.5, 0.1, 1e-9), (10_000, 9_000, 0.3, 0.05, 1e-9),
                                                 (3, 0, 0.3, 0.5, 0.49 * (1 - 1e-11))])
def test_alg1_is_calibrate_on_the_binomial(n, known, p, eps, delta):
    r = ppk.alg1(n=n, known=known, p=p, eps=eps, delta=delta)
    c = ppk.calibrate(ppk.NoisyQuery(natural=noise.Binomial(n - known - 1, p), added=noise.Gaussian(1.0)), eps=eps,
                      delta=delta, rtol=1e-10)
    assert (r.scale, r.scale - r.zeta, r.reason, r.evaluations) == (c.scale, c.lower, c.reason, c.evaluations)
    # the bracket's ends: scale certified private; lower not (against the search's target, a few ulps
    # below log delta so that the bound also passes in floats: ppk._search.log_target)
    q = ppk.CountingQuery(n=n, known=known, p=p, sigma=c.scale)
    assert 0 < c.lower < c.scale and q.delta_upper(eps) <= delta
    assert q.with_sigma(c.lower).log_delta_upper(eps) > log_target(delta)


@pytest.mark.parametrize("added", ["laplace", "discrete_gaussian", "discrete_laplace"])
def test_calibrate_brackets_the_least_scale(added):
    natural = noise.BetaBinomial(2000, 3.0, 7.0)
    law = noise.ADDED_BY_NAME[added]
    c = ppk.calibrate(ppk.NoisyQuery(natural=natural, added=law(1.0)), eps=0.2, delta=1e-6)
    assert c.reason == ppk.calibration.REASON_SEARCH and 0 < c.lower < c.scale <= c.lower * (1 + 2e-8)
    assert ppk.NoisyQuery(natural=natural, added=law(c.lower)).log_delta_upper(0.2) > log_target(1e-6)
    assert c.delta_achieved <= 1e-6


def test_calibrate_without_natural_noise_says_so():
    c = ppk.calibrate(ppk.NoisyQuery(natural=noise.Binomial(0, 0.5), added=noise.Gaussian(1.0)), eps=0.5, delta=1e-6)
    assert c.reason == ppk.calibration.REASON_NO_NATURAL
    assert c.scale == pytest.approx(ppk.baselines.analytic_gaussian_sigma(eps=0.5, delta=1e-6), rel=1e-9)


def test_beta_binomial_pmf_within_the_engines_allowance_at_full_size():
    # the engine allows every log-pmf value 4e-16 (1 + max |log w|) (docs/natural-noise.md, "Accuracy");
    # BetaBinomial's values are a running sum of 1e6 long-double log-ratios: measure them against mpmath
    import mpmath as mp
    n = 10**6
    for a, b in ((2.0, 3.0), (0.3, 5.5)):   # (0.3, 5.5): the log of the rounded ratio drifted by 1.2e-14 there
        law = noise.BetaBinomial(n, a, b)
        lw = law._log_pmf()
        allowance = 4e-16 * (1 + float(np.max(np.abs(lw.astype(float)))))
        with mp.workdps(40):
            A, B = mp.mpf(a), mp.mpf(b)

            def exact(k):
                return mp.log(mp.binomial(n, k)) + mp.log(mp.beta(k + A, n - k + B)) - mp.log(mp.beta(A, B))
            worst = max(abs(float(mp.mpf(str(lw[k])) - exact(k)))
                        for k in (0, 7, 1000, 250_000, 333_333, 600_000, 999_999, n))
        assert worst < 1e-16 < allowance / 100
    # the window over the whole support leaves nothing out
    assert noise.BetaBinomial(n, 2.0, 3.0).window(64.0).log_dropped == -math.inf


def test_deep_windows_are_trimmed_at_their_depth():
    # a window deeper than e^-745 (where a double's exp(-depth) is 0) still holds only values within
    # e^-depth of its mode; it once kept the whole support, and deep deltas took minutes
    law = noise.RowSum([0.2, 0.5, 0.3], 4096)
    w = law.window(1000.0)
    lw = np.asarray(w.log_pmf, dtype=float)
    assert w.size < 2 * 4096 + 1
    assert lw.min() >= lw.max() - 1000.0 - 2 * math.log(4097) - 10 - 1e-6
    assert -1100 < w.log_dropped < -990


def test_row_sum_pmf_against_exact_multinomial_sums():
    # X = sum of 1,000 rows in 0..2: log P(X = s) as a 40-digit multinomial sum.  In the bulk the window
    # is within rounding (a row's relative error grows count-fold in the sum: once 4e-14 here); near its
    # edge a value misses the contributions of trimmed input tails -- a deficit the window's log_dropped
    # covers (the engine's upper bound adds it), never an excess.
    import mpmath as mp
    n, row = 1000, [0.2, 0.5, 0.3]
    w = noise.RowSum(row, n).window(64.0)
    with mp.workdps(40):
        lp = [mp.log(mp.mpf(x)) for x in row]

        def exact(s):
            terms = [mp.loggamma(n + 1) - mp.loggamma(n - s + c + 1) - mp.loggamma(s - 2 * c + 1) - mp.loggamma(c + 1)
                     + (n - s + c) * lp[0] + (s - 2 * c) * lp[1] + c * lp[2]
                     for c in range(max(0, s - n), s // 2 + 1)]
            top = max(terms)
            return top + mp.log(mp.fsum(mp.exp(t - top) for t in terms))

        def error(s):
            return float(mp.mpf(str(w.log_pmf[s - w.offset])) - exact(s))
        bulk = [error(s) for s in (878, 1097, 1300)]
        assert max(abs(e) for e in bulk) < 5e-15, bulk
        e = error(w.offset)
        assert e <= 1e-15                                   # a deficit, not an excess
        deficit = -math.expm1(e) * math.exp(float(w.log_pmf[0]))
        assert deficit <= math.exp(w.log_dropped)


# ---------------------------------------------------------------- tiny delta against an independent oracle
#
# At large eps sigma^2 / d the optimal set of a Gaussian's release lies eps sigma^2 / d beyond the natural
# noise's support, and delta is e^-1000 ... e^-300000.  The oracle below computes it at 50 digits from the
# definition, sharing nothing with ppk but this fact about Gaussians: log f(o - d - k) / f(o - k) =
# (2 d (o - k) - d^2) / (2 sigma^2), and p_d / p_0 is an average of these ratios over k, so every crossing
# of p_d = e^eps p_0 lies between the two outputs where the extreme k's ratios equal e^eps; beyond them
# p_d - e^eps p_0 has the sign of d on the right.  Continuous noise: the crossings are located on a grid of
# sigma/4 over that range (bisected) and the hockey-stick integral is summed in closed form (normal
# tails, each from its nearer side); discrete noise: the sum over the range is explicit and the rest is
# tails of the pmf, summed from the far end.

def _tiny_oracle(pmf, kind, sigma, eps, shifts=(1,)):
    """50-digit log delta = log max over d in +-shifts of H_{e^eps}(d + X + Z || X + Z), X ~ pmf on 0..,
    Z Gaussian(sigma) (kind "gaussian") or discrete Gaussian(sigma) ("discrete")."""
    with mp.workdps(50):
        s, E = mp.mpf(sigma), mp.exp(mp.mpf(eps))
        h = -1 / (2 * s * s)
        if kind == "gaussian":
            c = 1 / (s * mp.sqrt(2 * mp.pi))
        else:    # Poisson summation: sum_z e^{-z^2 / 2 s^2} = s sqrt(2 pi) (1 + 2 sum_m e^{-2 pi^2 s^2 m^2})
            c = 1 / (s * mp.sqrt(2 * mp.pi) * (1 + 2 * mp.nsum(lambda m: mp.exp(-2 * mp.pi ** 2 * s * s * m * m),
                                                                [1, mp.inf])))

        def dens(x):
            return c * mp.exp(h * x * x)
        ks = [k for k, w in enumerate(pmf) if w > 0]
        ws = [mp.mpf(pmf[k]) for k in ks]
        lws = [float(mp.log(w)) for w in ws]
        best = mp.ninf
        for d in [t * sign for t in shifts for sign in (1, -1)]:
            def g(x):   # p_d(x) - e^eps p_0(x); terms e^-250 below the largest (far below 50 digits) left out
                xf = float(x)
                ls = [lw - min((xf - d - k) ** 2, (xf - k) ** 2) / (2 * sigma * sigma) for lw, k in zip(lws, ks)]
                top = max(ls)
                return mp.fsum(w * (dens(x - d - k) - E * dens(x - k)) for w, k, l in zip(ws, ks, ls) if l > top - 250)
            lo, hi = sorted([ks[0] + mp.mpf(d) / 2 + mp.mpf(eps) * s * s / d, ks[-1] + mp.mpf(d) / 2 + mp.mpf(eps) * s * s / d])
            total = mp.mpf(0)
            if kind == "discrete":
                o0, o1 = int(mp.floor(lo)) - 1, int(mp.ceil(hi)) + 1
                total += mp.fsum(v for v in (g(o) for o in range(o0, o1 + 1)) if v > 0)
                # beyond the range every term is positive: sum_k w_k (P(Z >= a_k) - e^eps P(Z >= b_k))
                args = ([(o1 + 1 - d - k, o1 + 1 - k) for k in ks] if d > 0 else
                        [(k + d - o0 + 1, k - o0 + 1) for k in ks])     # (o < o0 by symmetry)
                xs = [x for pair in args for x in pair]
                tail, z = mp.mpf(0), max(xs) + 1
                while True:
                    t = dens(z)
                    tail += t
                    if t < tail * mp.mpf(10) ** -60:
                        break
                    z += 1
                T = {max(xs) + 1: tail}
                for x in range(max(xs), min(xs) - 1, -1):
                    T[x] = T[x + 1] + dens(x)
                total += mp.fsum(w * (T[a] - E * T[b]) for w, (a, b) in zip(ws, args))
            else:
                count = int((hi - lo) / (s / 4)) + 2
                xs = [lo + (hi - lo) * i / count for i in range(count + 1)]
                vals = [g(x) for x in xs]
                cuts = []
                for x0, x1, v0, v1 in zip(xs, xs[1:], vals, vals[1:]):
                    if (v0 > 0) != (v1 > 0):
                        a, b = x0, x1
                        for _ in range(64):     # (H is stationary at a crossing: 2^-64 of a cell is ample)
                            m = (a + b) / 2
                            a, b = (m, b) if (g(m) > 0) == (v0 > 0) else (a, m)
                        cuts.append((a + b) / 2)

                def mass(shift, a, b):   # P(a < shift + X + Z <= b), each term from its nearer tail
                    def one(k):
                        za, zb = (a - shift - k) / s, (b - shift - k) / s
                        if za >= 0:
                            return mp.ncdf(-za) - mp.ncdf(-zb)
                        if zb <= 0:
                            return mp.ncdf(zb) - mp.ncdf(za)
                        return 1 - mp.ncdf(za) - mp.ncdf(-zb)
                    return mp.fsum(w * one(k) for w, k in zip(ws, ks))
                positive = d < 0      # the sign left of the range
                for a, b in zip([mp.ninf] + cuts, cuts + [mp.inf]):
                    if positive:
                        total += mass(d, a, b) - E * mass(0, a, b)
                    positive = not positive
            best = max(best, mp.log(total) if total > 0 else mp.ninf)
        return float(best)


def _assert_tiny(q, eps, ref):
    est, up = q.log_delta(eps), q.log_delta_upper(eps)
    assert math.isfinite(est) and math.isfinite(up) and up >= ref, (est, up, ref)
    # the estimate: within 1e-9 where double-precision tails resolve it; beyond (|log delta| in the
    # thousands) within the gap to the bound, which holds the tails' rounding (NoisyQuery's docstring)
    assert abs(est - ref) <= (1e-9 if abs(ref) < 1000 else 1e-9 + (up - est)), (est, up, ref)


REPORTED_QUERY_LOG_DELTA = -7815.01410829216    # _tiny_oracle's value: test_the_reported_querys_oracle_value


def test_tiny_delta_of_the_reported_query():
    # a binomial of 1,000 rows with sigma = 30 at eps = 4: delta = e^-7815, reported -inf (bound and
    # estimate): the root search gave up a fixed distance from its start, 3,600 short of the root
    q = ppk.NoisyQuery(natural=noise.PoissonBinomial(groups=[(1000, 0.5)]), added=noise.Gaussian(30.0))
    ref = REPORTED_QUERY_LOG_DELTA
    _assert_tiny(q, 4.0, ref)
    assert q.log_delta(4.0) == pytest.approx(ref, rel=1e-12)      # (2e-9: the tails' logs are ~ -7800)


@pytest.mark.exhaustive
def test_the_reported_querys_oracle_value():
    # _tiny_oracle over 1,001 terms (~2 s CPU): the value stored above
    ref = _tiny_oracle([mp.binomial(1000, k) / mp.mpf(2) ** 1000 for k in range(1001)], "gaussian", 30.0, 4.0)
    assert ref == pytest.approx(REPORTED_QUERY_LOG_DELTA, abs=1e-9)


TINY = {   # name: (law, exact pmf, sensitivity, added, kind, sigma, eps)
    # the threshold path, its root beyond the old search's reach (every one gave -inf)
    "poisson-binomial, sigma 30": (lambda: noise.PoissonBinomial(groups=[(40, 0.5), (30, 0.2)]),
                                   lambda: O.poisson_binomial([(40, 0.5), (30, 0.2)]), 1, "gaussian", 30.0, 16.0),
    "binomial, sensitivity 2": (lambda: noise.Binomial(60, 0.3), lambda: O.binomial(60, 0.3), 2, "gaussian", 30.0, 16.0),
    "row sum, sigma 300": (lambda: noise.RowSum([0.2, 0.5, 0.3], 30), lambda: O.row_sum([0.2, 0.5, 0.3], 30), 2,
                           "gaussian", 300.0, 1.0),
    "beta-binomial, discrete": (lambda: noise.BetaBinomial(60, 2.0, 3.0), lambda: O.beta_binomial(60, 2, 3), 1,
                                "discrete", 30.0, 4.0),
    # eps sigma^2 / d an integer: L = eps within rounding at the root's neighbour, whose threshold's value
    # A - e^eps B is 3e-12 of A: the bound once took the rounding of the next threshold (e^4.5 below delta)
    "binomial, discrete, sensitivity 2": (lambda: noise.Binomial(60, 0.3), lambda: O.binomial(60, 0.3), 2,
                                          "discrete", 30.0, 50.0),
    # the discrete Gaussian's tail near the end of its table (tails there once 4e-4 above the truth)
    "poisson-binomial, table's end": (lambda: noise.PoissonBinomial(groups=[(40, 0.5), (30, 0.2)]),
                                      lambda: O.poisson_binomial([(40, 0.5), (30, 0.2)]), 1, "discrete", 30.0, 1.85),
    # the crossings path: the grid once missed the crossings (estimate -inf), or could not certify that
    # there was no other (bound the Gaussian cap); and a mixture whose first window leaves out e^-77
    # though it spans the support (the depth search stopped there and reported its bound, e^-77.0)
    "beta-binomial U": (lambda: noise.BetaBinomial(40, 0.5, 0.5), lambda: O.beta_binomial(40, 0.5, 0.5), 1,
                        "gaussian", 3.0, 16.0),
    "pmf, sigma 30": (lambda: noise.Pmf(np.log(BIMODAL), offset=0), lambda: [mp.mpf(x) for x in BIMODAL], 1,
                      "gaussian", 30.0, 1.0),
    "mixture": (lambda: noise.BinomialMixture(40, [0.3, 0.7], [0.15, 0.8]), lambda: O.mixture(40, [0.3, 0.7], [0.15, 0.8]),
                1, "gaussian", 3.0, 4.0),
}


@pytest.mark.parametrize("case", sorted(TINY))
def test_tiny_delta_against_the_oracle(case):
    law, pmf, s, kind, sigma, eps = TINY[case]
    added = noise.Gaussian(sigma) if kind == "gaussian" else noise.DiscreteGaussian(sigma)
    q = ppk.NoisyQuery(natural=law(), added=added, sensitivity=s)
    _assert_tiny(q, eps, _tiny_oracle(pmf(), kind, sigma, eps, tuple(range(1, s + 1))))


def test_a_laplace_loss_flat_at_eps_is_bounded_by_the_ratio():
    # eps = 1/3 = d/b for d = 1 (in floats): the loss of that shift tends to eps within its rounding, so
    # its root cannot be certified; p_1 <= e^{1/b} p_0 bounds its delta by 1/b - eps (exactly), and the
    # bound is that of the shift 2 -- it was the caps, 0.92 above delta in log
    q = ppk.NoisyQuery(natural=noise.Binomial(40, 0.3), added=noise.Laplace(3.0), sensitivity=2)
    ref = float(STORED["laplace_flat"])
    assert q.log_delta(1 / 3) == pytest.approx(ref, abs=1e-9)
    assert ref <= q.log_delta_upper(1 / 3) <= ref + 1e-9


@pytest.mark.parametrize("sigma", [30.0, 300.0, 2e4])
def test_discrete_gaussian_tails_exact_at_the_tables_end_and_beyond(sigma):
    # DiscreteGaussian.log_sf sums its table only up to its end (its last entries below the tail, by 1.2
    # in log for sigma = 300) and beyond it gives a geometric bound (above, by 3e-4): the engine's tails
    from ppk._family import _dg_log_sf
    z = noise.DiscreteGaussian(sigma)
    top = z._tail_table().size - 1
    xs = [top - int(sigma), top - 1, top, top + 1, 2 * top, 10 * top]
    got = _dg_log_sf(z, np.array(xs, dtype=float))
    with mp.workdps(40):
        s2 = 2 * mp.mpf(sigma) ** 2
        norm = mp.sqrt(mp.pi * s2)      # (1 + 2 e^{-2 pi^2 sigma^2} ...: 1 to far below 40 digits here)

        def tail(x):   # P(Z > x), summed until the terms are below 1e-45 of the sum
            # term by term from its predecessor: t(z+1) = t(z) r(z), r(z) = e^{-(2z+1)/s2}, r(z+1) = r(z) e^{-2/s2}
            # (two products a term, not an exp: sigma = 2e4 sums ~3e5 terms; the rounding, ~3e5 ulps at 40
            # digits, is far below the 1e-15 compared)
            zz = x + 1
            t, r, step = mp.exp(-mp.mpf(zz) ** 2 / s2), mp.exp(-(2 * mp.mpf(zz) + 1) / s2), mp.exp(-2 / s2)
            total, small = mp.mpf(0), mp.mpf(10) ** -45
            while True:
                total += t
                if t < total * small:
                    return mp.log(total / norm)
                t *= r
                r *= step
        for x, g in zip(xs, got):
            ref = tail(x)
            assert abs(g - float(ref)) <= 1e-15 * abs(float(ref)), (x, g, ref)


def test_the_lattice_sum_resolves_delta_far_beyond_the_window():
    # a natural noise that is not log-concave with discrete noise, delta where the loss crosses eps
    # sigma^2 = 3,600 beyond the support: the lattice sum runs there (its convolved output windows could
    # not, and it reported the discrete Gaussian's own bound, e^-7204.30, where the window's slack had
    # given e^-2058); now exact
    q = ppk.NoisyQuery(natural=noise.BetaBinomial(40, 0.5, 0.5), added=noise.DiscreteGaussian(30.0))
    ref = _tiny_oracle(O.beta_binomial(40, 0.5, 0.5), "discrete", 30.0, 4.0)
    assert q.path == "lattice sum"
    assert ref <= q.log_delta_upper(4.0) <= ref + 1e-9
    assert abs(q.log_delta(4.0) - ref) <= 1e-14 * abs(ref)


@pytest.mark.parametrize("natural, added", [
    (lambda: noise.PoissonBinomial(groups=[(40, 0.2), (30, 0.7)]), lambda: noise.DiscreteGaussian(2.0)),
    (lambda: noise.PoissonBinomial(groups=[(40, 0.2), (30, 0.7)]), lambda: noise.Gaussian(2.0)),
    (lambda: noise.BetaBinomial(40, 0.5, 0.5), lambda: noise.Gaussian(2.0)),
    (lambda: noise.BetaBinomial(40, 0.5, 0.5), lambda: noise.DiscreteGaussian(2.0)),
], ids=["threshold, discrete", "threshold", "crossings", "lattice sum"])
def test_delta_beyond_the_doubles_is_bounded_not_zero(natural, added):
    # log delta ~ -(eps sigma)^2 / 2 is below -1.8e308 at eps = 1e300: the bound is the smallest double
    # (as the counting kernel's), never -inf (delta > 0); at eps = 1e6 the closed-form bound -(x/sigma)^2/2
    import warnings
    q = ppk.NoisyQuery(natural=natural(), added=added())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert q.log_delta_upper(1e300) == q.log_delta(1e300) == -1.7976931348623157e308
        up = q.log_delta_upper(1e6)
    assert -2.01e12 < up < -1.99e12


def test_discrete_laplace_delta_vanishes_exactly_from_s_over_t():
    # p_d <= e^{d/t} p_0: delta = 0 for eps >= s/t (it was the natural noise's delta alone), and for eps
    # below s/t by less than the rounding of a float (1/3 < 1/3.0 ... exactly) positive
    for natural in (noise.BetaBinomial(40, 0.5, 0.5), noise.Binomial(40, 0.3)):
        q = ppk.NoisyQuery(natural=natural, added=noise.DiscreteLaplace(3.0))
        assert q.log_delta_upper(0.34) == -math.inf
        assert -50 < q.log_delta_upper(1 / 3) < -30


@pytest.mark.parametrize("law", [noise.Gaussian(2.0), noise.Laplace(2.0), noise.DiscreteGaussian(2.0),
                                 noise.DiscreteLaplace(2.0), noise.NoNoise()], ids=repr)
def test_the_added_laws_check_x_and_depth_and_take_the_ends_of_the_line(law):
    for method in (law.log_density, law.log_sf, law.log_cdf):
        for x in (math.nan, np.array([0.0, math.nan])):
            with pytest.raises(ValueError, match=r"\bx\b"):
                method(x)
        for x in ("1", None, 1j, [1j], {}, True, np.array([True])):
            with pytest.raises(TypeError, match=r"\bx\b"):
                method(x)
        with pytest.raises(ValueError, match=r"\bx\b"):
            method(10**400)
        assert method([1, 2]).shape == (2,)                 # a list, as an array
        assert np.asarray(method(np.array([], dtype=float))).shape == (0,)
    # the ends of the line: sf and cdf exactly 0 or 1 in logs, no warning, no NaN (int64 held neither)
    with np.errstate(over="raise", invalid="raise"):
        assert law.log_sf(math.inf) == -math.inf and law.log_sf(-math.inf) == 0.0
        assert law.log_cdf(math.inf) == 0.0 and law.log_cdf(-math.inf) == -math.inf
        far = law.log_density(np.array([1e300, -math.inf]))
        assert far[0] < -1e299 and far[1] == -math.inf
        assert law.log_sf(1e300) < -1e299 and law.log_cdf(-1e300) < -1e299
    for depth in (math.nan, math.inf, -1.0, 10**400):
        with pytest.raises(ValueError, match=r"\bdepth\b"):
            law.reach(depth)
    with pytest.raises(TypeError, match=r"\bdepth\b"):
        law.reach("1")


def test_a_huge_reach_is_refused_and_with_scale_names_scale():
    with pytest.raises(ValueError, match=r"\bdepth\b.*finite"):
        noise.Laplace(1e300).reach(1e10)
    with pytest.raises(ValueError, match=r"^scale must be <= 20000"):
        noise.DiscreteGaussian(2.0).with_scale(1e5)
    with pytest.raises(ValueError, match=r"^scale must be > 0"):
        noise.Gaussian(2.0).with_scale(0.0)
    assert noise.Gaussian(2.0).with_scale(3.0).sigma == 3.0


@pytest.mark.parametrize("law", [noise.Binomial(20, 0.3), noise.PoissonBinomial(groups=[(4, 0.2), (5, 0.7)]),
                                 noise.BetaBinomial(20, 2.0, 3.0), noise.BinomialMixture(20, [0.5, 0.5], [0.2, 0.8]),
                                 noise.RowSum(ROW, 5), noise.Pmf(np.log(BIMODAL))], ids=repr)
def test_the_natural_laws_check_depth(law):
    for depth in (math.nan, -math.inf, -1.0, 10**400):
        with pytest.raises(ValueError, match=r"\bdepth\b"):
            law.window(depth)
    for depth in (None, "1", [1.0], np.array([1.0, 2.0])):
        with pytest.raises(TypeError, match=r"\bdepth\b"):
            law.window(depth)
    assert law.window(0.0).size >= 1 and law.window(1e300).size >= law.window(64.0).size


def test_list_parameters_are_named_whole():
    with pytest.raises(TypeError, match=r"\bgroups\b"):
        noise.PoissonBinomial(groups=0.5)
    with pytest.raises(ValueError, match=r"groups\[1\] must be a pair"):
        noise.PoissonBinomial(groups=[(3, 0.2), 5])
    assert noise.PoissonBinomial(groups=np.array([[3, 0.2], [4, 0.5]])).groups == ((3, 0.2), (4, 0.5))
    for kw in (dict(weights=10**400), dict(ps={})):
        with pytest.raises((TypeError, ValueError), match=rf"\b{next(iter(kw))}\b"):
            noise.BinomialMixture(9, **{**dict(weights=[0.5, 0.5], ps=[0.1, 0.9]), **kw})
    with pytest.raises(TypeError, match=r"\bprobs\b"):
        noise.PoissonBinomial(probs=1j)
    with pytest.raises(TypeError, match=r"\brow_pmf\b"):
        noise.RowSum(object(), 3)
    with pytest.raises(TypeError, match=r"\blog_pmf\b"):
        noise.Pmf({})
    with pytest.raises(TypeError, match=r"\bshifts\b"):
        ppk.NoisyQuery(natural=noise.Binomial(9, 0.3), added=noise.Laplace(2.0), shifts=2)
