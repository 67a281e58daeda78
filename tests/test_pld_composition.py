"""Fast certified composition of PLDs: the FFT error bound against the exact long-double convolution,
brackets of many-fold compositions against closed forms and 50-digit brute force, the connect-the-dots
upper end, vectorised eps, and (when installed) the comparison with dp_accounting."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ppk
from ppk.pld import _convolution
from ppk.baselines import analytic_gaussian_delta

PLD = ppk.PrivacyLossDistribution
mp = pytest.importorskip("mpmath")


def _random_masses(rng, n, span):
    """Non-negative masses summing to 1 whose sizes spread over `span` orders of magnitude."""
    x = rng.random(n) * 10.0 ** (-rng.random(n) * span)
    return (x / x.sum()).astype(np.longdouble)


@pytest.mark.parametrize("span", [0, 30, 300])
def test_fft_error_bound_holds_against_the_exact_convolution(span):
    rng = np.random.default_rng(span)
    for _ in range(12):
        a = _random_masses(rng, int(rng.integers(50, 4000)), span)
        b = _random_masses(rng, int(rng.integers(50, 4000)), span)
        exact, exact_err = _convolution.convolve(a, 0.0, b, 0.0, method="exact")
        fast, bound = _convolution.convolve(a, 0.0, b, 0.0, method="fft")
        actual = float(np.sqrt(np.sum((fast - exact) ** 2)))
        assert actual <= bound and exact_err < 1e-17
        assert np.all(fast >= 0)


def test_input_errors_propagate():
    rng = np.random.default_rng(7)
    a, b = _random_masses(rng, 500, 5), _random_masses(rng, 700, 5)
    noise = rng.normal(scale=1e-9, size=a.size)
    a_noisy = np.clip(a + noise, 0, None).astype(np.longdouble)
    err_a = float(np.sqrt(np.sum((a_noisy - a) ** 2)))
    truth, _ = _convolution.convolve(a, 0.0, b, 0.0, method="exact")
    for method in ("exact", "fft"):
        c, bound = _convolution.convolve(a_noisy, err_a, b, 0.0, method=method)
        assert float(np.sqrt(np.sum((c - truth) ** 2))) <= bound


@pytest.mark.parametrize("k, dx, method", [(2, 1e-3, "fft"), (8, 1e-3, "fft"), (8, 1e-3, "exact"),
                                           (100, 1e-3, "auto"), (1000, 2e-3, "auto")])
def test_gaussian_compositions_are_bracketed(k, dx, method):
    sigma = 3.0 if k <= 8 else 30.0
    pld = PLD.from_gaussian(sigma=sigma, value_discretization_interval=dx)
    pld.composition = method
    out = pld.self_compose(k)
    eps = np.array([0.0, 0.1, 0.5, 1.0, 2.0])
    lo, hi = out.delta_bracket(eps)
    exact = analytic_gaussian_delta(sigma=sigma / math.sqrt(k), eps=eps)
    assert np.all(lo <= exact * (1 + 1e-12)) and np.all(exact <= hi * (1 + 1e-12))
    # and tight: the discretisation, plus the FFT's rounding floor (~1e-11 absolute) where it was used
    floor = 1e-12 if method == "exact" else 3e-11
    assert np.all(hi - exact <= (1e-3 if k <= 8 else 1e-2) * exact + floor)


def _brute_composed(pairs, eps):
    """max over both orders of sum over joint outcomes of (P - e^eps Q)_+, 50 digits."""
    mp.mp.dps = 50
    e = mp.e ** mp.mpf(eps)
    best = mp.mpf(0)
    for order in (0, 1):
        total = mp.mpf(0)
        for combo in itertools.product(*[range(len(p)) for p, _ in pairs]):
            P = mp.fprod(mp.mpf(float(pairs[i][order][j])) for i, j in enumerate(combo))
            Q = mp.fprod(mp.mpf(float(pairs[i][1 - order][j])) for i, j in enumerate(combo))
            total += max(P - e * Q, 0)
        best = max(best, total)
    return best


@settings(max_examples=15)
@given(seed=st.integers(0, 10**6), times=st.integers(2, 4), eps=st.floats(0.0, 2.0))
def test_composed_random_pmfs_are_bracketed(seed, times, eps):
    rng = np.random.default_rng(seed)
    p, q = rng.dirichlet(np.ones(4)), rng.dirichlet(np.ones(4))
    pld = PLD.from_pmfs(p, q, value_discretization_interval=1e-3).self_compose(times)
    lo, hi = pld.delta_bracket(eps)
    truth = float(_brute_composed([(p, q)] * times, eps))
    assert lo <= truth * (1 + 1e-9) + 1e-15 and truth <= hi * (1 + 1e-9) + 1e-15


def test_upper_end_equals_the_exact_delta_of_the_buckets_on_the_grid():
    # connect-the-dots: at eps on the grid the dominating pair adds nothing to the bucketed pair's delta
    dx = 1e-2
    pld = PLD.from_gaussian(sigma=2.0, value_discretization_interval=dx)
    grid = np.arange(0, 150) * dx
    lo, hi = pld.delta_bracket(grid)
    np.testing.assert_allclose(hi, lo, rtol=1e-9, atol=1e-300)


def test_vectorised_eps_matches_scalar_calls():
    pld = PLD.from_gaussian(sigma=2.0, value_discretization_interval=1e-3).self_compose(4)
    eps = np.linspace(0.0, 5.0, 100_001)
    lo, hi = pld.delta_bracket(eps)
    for i in (0, 1234, 50_000, 100_000):
        assert pld.delta_bracket(float(eps[i])) == (lo[i], hi[i])
    assert np.all(np.diff(hi) <= 1e-15)   # non-increasing in eps


def test_at_least_as_tight_as_dp_accounting():
    pldlib = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    exact = analytic_gaussian_delta(sigma=3.0 / math.sqrt(8), eps=0.5)
    theirs = pldlib.from_gaussian_mechanism(3.0, value_discretization_interval=1e-3).self_compose(8)
    ours = PLD.from_gaussian(sigma=3.0, value_discretization_interval=1e-3).self_compose(8)
    lo, hi = ours.delta_bracket(0.5)
    assert lo <= exact <= hi
    # the same discretisation (connect-the-dots): the same excess, plus ppk's certified rounding bounds
    assert hi - exact <= (theirs.get_delta_for_epsilon(0.5) - exact) * (1 + 1e-4)


def test_round_trip_through_dp_accounting():
    pytest.importorskip("dp_accounting")
    eps = np.linspace(0.0, 4.0, 41)
    ours = PLD.from_gaussian_mechanism(3.0, value_discretization_interval=1e-3).self_compose(8)
    exported = ours.to_dp_accounting()
    theirs = np.array([exported.get_delta_for_epsilon(float(e)) for e in eps])
    lo, hi = ours.delta_bracket(eps)
    exact = analytic_gaussian_delta(sigma=3.0 / math.sqrt(8), eps=eps)
    assert np.all(theirs >= exact) and np.all(theirs >= lo) and np.all(theirs <= hi + 1e-9)
    back = PLD.from_dp_accounting(exported)
    np.testing.assert_allclose(back.delta_bracket(eps)[1], theirs, rtol=1e-6, atol=1e-12)


def test_dp_accounting_names_port_code():
    lib = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    ours = PLD.from_gaussian_mechanism(standard_deviation=2.0, sensitivity=1.0, value_discretization_interval=1e-3)
    theirs = lib.from_gaussian_mechanism(standard_deviation=2.0, sensitivity=1.0, value_discretization_interval=1e-3)
    assert ours.self_compose(num_times=3).get_delta_for_epsilon(0.5) == pytest.approx(
        theirs.self_compose(num_times=3).get_delta_for_epsilon(0.5), rel=1e-6)
    lap = PLD.from_laplace_mechanism(parameter=2.0, value_discretization_interval=1e-3)
    assert lap.get_delta_for_epsilon(0.2) == pytest.approx(
        lib.from_laplace_mechanism(parameter=2.0, value_discretization_interval=1e-3).get_delta_for_epsilon(0.2),
        rel=1e-6)
    # two pmfs: ppk reports the larger order, as everywhere; dp_accounting (symmetric=True) one of them
    lower, upper = {1: math.log(0.3), 2: math.log(0.7)}, {1: math.log(0.6), 2: math.log(0.4)}
    two = PLD.from_two_probability_mass_functions(lower, upper, value_discretization_interval=1e-4)
    assert two.delta_bracket(0.1)[0] <= 0.6 - math.exp(0.1) * 0.3 <= two.delta_bracket(0.1)[1]
    profile = two.privacy_profile()
    assert profile(0.1) == two.delta_bracket(0.1)[1]
    # Poisson subsampling (ppk.pld.subsampled; its oracle tests are in test_pld_subsampling.py)
    lo, hi = PLD.from_gaussian_mechanism(standard_deviation=2.0, sampling_prob=0.1).delta_bracket(0.1)
    assert 0 < lo <= hi < PLD.from_gaussian_mechanism(standard_deviation=2.0).delta_bracket(0.1)[0]


@pytest.mark.parametrize("eps", [0.3, 0.8, 1.2])
def test_two_fold_laplace_against_integrated_densities(eps):
    from scipy import integrate
    b = 1.5
    p = lambda x: math.exp(-abs(x) / b) / (2 * b)          # noqa: E731
    q = lambda x: math.exp(-abs(x - 1) / b) / (2 * b)      # noqa: E731

    def positive(first, second):
        f = lambda y, x: max(0.0, first(x) * first(y) - math.exp(eps) * second(x) * second(y))  # noqa: E731
        # the integrand has kinks at 0 and 1 on each axis: integrate piecewise
        edges = [-40.0, 0.0, 1.0, 41.0]
        return sum(integrate.dblquad(f, edges[i], edges[i + 1], edges[j], edges[j + 1], epsabs=1e-13,
                                     epsrel=1e-11)[0] for i in range(3) for j in range(3))

    exact = max(positive(p, q), positive(q, p))
    lo, hi = PLD.from_laplace(scale=b, value_discretization_interval=1e-3).self_compose(2).delta_bracket(eps)
    assert lo <= exact * (1 + 1e-8) and exact <= hi * (1 + 1e-8) and hi - lo < 0.01 * exact


def test_tail_mass_truncation_is_dp_accountings_keyword_and_only_adds_delta():
    """dp_accounting's ``tail_mass_truncation=``: an eager composition cuts the end masses below it into the
    mass at infinity (delta only grows, and still contains the closed form); a plan cuts nothing."""
    sigma, k = 3.0, 8
    pld = PLD.from_gaussian(sigma=sigma, value_discretization_interval=1e-3)
    pld.composition = "fft"
    eps = np.array([0.0, 0.5, 1.0, 2.0, 3.0])
    plain = pld.self_compose(k)
    cut = pld.self_compose(k, tail_mass_truncation=1e-6)
    lo, hi = cut.delta_bracket(eps)
    exact = analytic_gaussian_delta(sigma=sigma / math.sqrt(k), eps=eps)
    assert np.all(lo <= exact * (1 + 1e-12)) and np.all(exact <= hi * (1 + 1e-12))
    assert np.all(hi >= plain.delta_bracket(eps)[1])
    assert cut.overflow_mass_upper > 1e-7 > plain.overflow_mass_upper     # the cut tails went to +inf
    two = pld.compose(pld, tail_mass_truncation=1e-6)
    assert two.overflow_mass_upper > 1e-7 and np.all(two.delta_bracket(eps)[1] >= pld.compose(pld).delta_bracket(eps)[1])
    auto = PLD.from_gaussian(sigma=30.0, value_discretization_interval=2e-3)
    assert np.array_equal(auto.self_compose(100, tail_mass_truncation=1e-15).delta_bracket(eps),
                          auto.self_compose(100).delta_bracket(eps))
    for bad in (-1e-9, 1.0, math.nan, "1e-15"):
        with pytest.raises((ValueError, TypeError), match="tail_mass_truncation"):
            pld.self_compose(2, tail_mass_truncation=bad)
