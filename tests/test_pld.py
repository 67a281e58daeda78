"""Privacy loss distributions: brackets contain the exact delta, shrink with the bucket width,
are never looser than privacy buckets' rounding-up bound; composition; shared natural noise."""
import math

import numpy as np
import pytest
from scipy import integrate, stats

import ppk
from ppk.baselines import analytic_gaussian_delta

PLD = ppk.PrivacyLossDistribution
REL = 1e-13   # rounding allowance when comparing with closed forms


def _contains(bracket, exact):
    lo, hi = bracket
    assert lo <= exact * (1 + REL) + 1e-300 and exact <= hi * (1 + REL) + 1e-300, (bracket, exact)


@pytest.mark.parametrize("sigma", [0.5, 2.0, 10.0])
def test_gaussian_bracket_contains_closed_form(sigma):
    pld = PLD.from_gaussian(sigma=sigma, value_discretization_interval=1e-3)
    for eps in [0.0, 0.05, 0.3, 1.0, 3.0]:
        _contains(pld.delta_bracket(eps), analytic_gaussian_delta(sigma=sigma, eps=eps))


@pytest.mark.parametrize("k", [2, 3, 8])
def test_composed_gaussian_matches_sigma_over_sqrt_k(k):
    pld = PLD.from_gaussian(sigma=3.0, value_discretization_interval=2e-3).self_compose(k)
    for eps in [0.1, 0.5, 1.5]:
        exact = analytic_gaussian_delta(sigma=3.0 / math.sqrt(k), eps=eps)
        lo, hi = pld.delta_bracket(eps)
        _contains((lo, hi), exact)
        assert hi - lo < 0.02 * exact + 1e-12


def test_brackets_shrink_with_the_interval():
    # composed Gaussians are merged into one exact Gaussian (ppk.pld._plan); the eager composition of the
    # vectors, and a plan of Laplace mechanisms, pay the discretisation, which shrinks with the interval
    for compose in (lambda dx: PLD.from_gaussian(sigma=2.0, value_discretization_interval=dx).with_composition("fft"),
                    lambda dx: PLD.from_laplace(scale=2.0, value_discretization_interval=dx)):
        widths = []
        for dx in [8e-3, 4e-3, 2e-3]:
            lo, hi = compose(dx).self_compose(2).delta_bracket(0.3)
            widths.append(hi - lo)
        assert widths[0] > widths[1] > widths[2] > 0


def test_at_least_as_tight_as_privacy_buckets_rounding_up():
    pld = PLD.from_gaussian(sigma=1.5, value_discretization_interval=1e-2).self_compose(3)
    k = np.arange(pld.offset, pld.offset + pld.mass_upper.size) * pld.value_discretization_interval
    for eps in [0.2, 1.0, 2.0]:
        # privacy buckets' upper bound: every loss rounded up to its bucket's top edge (one order; symmetric)
        pb = float((pld.mass_upper * np.maximum(-np.expm1(eps - k.astype(np.longdouble)), 0)).sum()
                   + pld.overflow_mass_upper)
        lo, hi = pld.delta_bracket(eps)
        assert hi <= pb * (1 + 2e-12)
        assert lo <= analytic_gaussian_delta(sigma=1.5 / math.sqrt(3), eps=eps) * (1 + REL) <= hi * (1 + REL)


def test_laplace_closed_form_and_its_limit():
    pld = PLD.from_laplace(scale=2.0, sensitivity=1.0, value_discretization_interval=1e-3)
    e0 = 0.5
    for eps in [0.0, 0.1, 0.3, 0.49]:
        _contains(pld.delta_bracket(eps), 1 - math.exp((eps - e0) / 2))
    assert pld.delta_bracket(0.6) == (0.0, 0.0)


def test_from_pmfs_exact_sum_and_infinities():
    p = np.array([0.5, 0.3, 0.2, 0.0])
    q = np.array([0.1, 0.3, 0.0, 0.6])
    pld = PLD.from_pmfs(p, q, value_discretization_interval=1e-3)
    assert float(pld.infinity_mass_upper) == pytest.approx(0.2)
    assert float(pld.infinity_mass_lower) == pytest.approx(0.6)
    for eps in [0.0, 0.5, 1.0, 2.0]:
        exact = max(np.sum(np.maximum(p - math.exp(eps) * q, 0)), np.sum(np.maximum(q - math.exp(eps) * p, 0)))
        _contains(pld.delta_bracket(eps), exact)
    assert pld.get_epsilon_for_delta(0.1) == math.inf      # the distinguishing events alone exceed 0.1


def test_counting_query_bracket_contains_the_kernel_delta():
    q = ppk.CountingQuery(n=2001, known=0, p=0.3, sigma=4.0)
    pld = PLD.from_counting_query(q, value_discretization_interval=2e-4)
    for eps in [0.0, 0.02, 0.08, 0.2]:
        _contains(pld.delta_bracket(eps), q.delta(eps))


def test_symmetric_count_takes_its_lower_tails_from_the_upper_ones():
    # p = 1/2 builds the lower tails from the upper ones (the mirror pair is the pair itself); a
    # bias off 1/2 by 1e-12 takes the mirrored kernel pass, and must give the same buckets to rounding
    dx = 1e-3
    sym = PLD.from_counting_query(ppk.CountingQuery(n=41, known=0, p=0.5, sigma=1.5), value_discretization_interval=dx)
    off = PLD.from_counting_query(ppk.CountingQuery(n=41, known=0, p=0.5 + 1e-12, sigma=1.5),
                                  value_discretization_interval=dx)
    assert (sym.offset, sym.mass_upper.size) == (off.offset, off.mass_upper.size)
    np.testing.assert_allclose(sym.mass_upper.astype(float), off.mass_upper.astype(float), rtol=1e-8, atol=1e-300)
    np.testing.assert_allclose(sym.mass_lower.astype(float), off.mass_lower.astype(float), rtol=1e-8, atol=1e-300)
    q = ppk.CountingQuery(n=41, known=0, p=0.5, sigma=1.5)
    for eps in [0.0, 0.1, 0.4, 1.0]:
        _contains(sym.delta_bracket(eps), q.delta(eps))


@pytest.mark.slow
def test_counting_query_bracket_at_N_1e6():
    q = ppk.CountingQuery(n=10**6 + 1, known=0, p=0.4, sigma=100.0)
    pld = PLD.from_counting_query(q, value_discretization_interval=5e-4)
    for eps in [0.0, 0.005, 0.01]:
        _contains(pld.delta_bracket(eps), q.delta(eps))


def test_noiseless_counting_query_uses_the_lattice():
    q = ppk.CountingQuery(n=301, known=0, p=0.5, sigma=0.0)
    pld = PLD.from_counting_query(q, value_discretization_interval=1e-3)
    for eps in [0.0, 0.1, 0.5]:
        _contains(pld.delta_bracket(eps), q.delta(eps))


def test_log_delta_below_1e300():
    pld = PLD.from_gaussian(sigma=0.2, value_discretization_interval=2e-2, log_mass_truncation_bound=-2000.0)
    lo, hi = pld.log_delta_bracket(200.0)
    exact = ppk.baselines.analytic_gaussian_log_delta(sigma=0.2, eps=200.0)
    assert exact < -700 and lo <= exact + 1e-9 and exact <= hi + 1e-9 and math.isfinite(lo)


def test_epsilon_for_delta_inverts_the_upper_bound():
    pld = PLD.from_gaussian(sigma=2.0, value_discretization_interval=1e-3)
    eps = pld.get_epsilon_for_delta(1e-4)
    assert pld.get_delta_for_epsilon(eps) <= 1e-4 < pld.get_delta_for_epsilon(eps * 0.999)


def test_coarsening_instead_of_failing():
    pld = PLD.from_gaussian(sigma=1.0, value_discretization_interval=1e-3, max_buckets=4096)
    assert pld.mass_upper.size <= 4096 and pld.value_discretization_interval > 1e-3
    _contains(pld.delta_bracket(0.5), analytic_gaussian_delta(sigma=1.0, eps=0.5))
    a = PLD.from_gaussian(sigma=1.0, value_discretization_interval=1e-3)
    b = PLD.from_gaussian(sigma=2.0, value_discretization_interval=4e-3)
    _contains(a.compose(b).delta_bracket(0.5), analytic_gaussian_delta(sigma=1 / math.sqrt(1 + 1 / 4), eps=0.5))


def test_a_counting_query_with_a_wide_loss_range_is_built_at_the_coarsened_interval():
    # sigma = 0.057: losses reach ~400, 4e6 buckets at 1e-4.  They would be merged down to max_buckets
    # right after being built, so the builder computes the merged (coarser) buckets directly.
    q = ppk.CountingQuery(n=3, known=0, p=0.5, sigma=0.057)
    fine = PLD.from_counting_query(q, max_buckets=1 << 14)
    assert fine.mass_upper.size <= 1 << 14 and fine.value_discretization_interval >= 1e-4 * 2 ** 8
    for eps in [0.0, 0.5, 3.0]:
        _contains(fine.delta_bracket(eps), q.delta(eps))
    coarse = PLD.from_counting_query(q, value_discretization_interval=fine.value_discretization_interval,
                                     max_buckets=1 << 14)
    np.testing.assert_allclose(coarse.delta_bracket(0.5), fine.delta_bracket(0.5), rtol=1e-12)


def test_composing_shared_natural_noise_is_refused():
    q = ppk.CountingQuery(n=501, known=0, p=0.5, sigma=3.0)
    pld = PLD.from_counting_query(q, value_discretization_interval=1e-3)
    with pytest.raises(ValueError, match="repeat"):
        pld.compose(pld)
    with pytest.raises(ValueError, match="not independent"):
        pld.self_compose(2)
    assert pld.self_compose(2, independent=True).get_delta_for_epsilon(0.1) > 0


def test_repeat_matches_the_exact_joint_model():
    # two releases of the same count (N = 2 shared unknown rows, fresh noise each): integrate the joint
    # densities of (y1, y2) directly and compare with repeat(2)
    N, p, sigma, eps = 2, 0.4, 0.8, 0.3
    w = stats.binom.pmf(np.arange(N + 1), N, p)

    norm = 1 / (2 * math.pi * sigma * sigma)

    def joint(a, y1, y2):   # plain math: scipy.stats per call would make dblquad take a minute
        return norm * sum(wk * math.exp(-((y1 - a - k) ** 2 + (y2 - a - k) ** 2) / (2 * sigma * sigma))
                          for k, wk in enumerate(w))

    def positive(order):
        a, b = order
        f = lambda y2, y1: max(0.0, joint(a, y1, y2) - math.exp(eps) * joint(b, y1, y2))  # noqa: E731
        return integrate.dblquad(f, -6, N + 7, -6, N + 7, epsabs=1e-11, epsrel=1e-9)[0]

    exact = max(positive((1, 0)), positive((0, 1)))
    q = ppk.CountingQuery(n=N + 1, known=0, p=p, sigma=sigma)
    assert q.repeat(2).delta(eps) == pytest.approx(exact, rel=1e-6)
    assert q.repeat(2).sigma == pytest.approx(sigma / math.sqrt(2))
    assert q.repeat(1).sigma == sigma


@pytest.mark.parametrize("bad,word", [
    (([0.5, 0.6], [0.5, 0.5]), "sum to 1"),
    (([0.5, -0.5, 1.0], [0.5, 0.25, 0.25]), "negative"),
    (([0.5, 0.5], [0.5, 0.25, 0.25]), "same length"),
    (([0.5, float("nan")], [0.5, 0.5]), "non-finite"),
    (([], []), "non-empty"),
])
def test_bad_pmfs(bad, word):
    with pytest.raises(ValueError, match=word):
        PLD.from_pmfs(*bad)


def test_bad_arguments():
    with pytest.raises(ValueError, match="value_discretization_interval"):
        PLD.from_gaussian(sigma=1.0, value_discretization_interval=0.0)
    with pytest.raises(ValueError, match="sigma"):
        PLD.from_gaussian(sigma=-1.0)
    with pytest.raises(TypeError):
        PLD.from_gaussian(sigma=1.0).compose("x")
    with pytest.raises(ValueError, match="eps"):
        PLD.from_gaussian(sigma=1.0).get_delta_for_epsilon(-1.0)


# -- argument checks (tests/test_public_api_fuzz.py) ---------------------------------------------------

def test_a_huge_self_composition_is_refused_at_once_with_its_limit():
    import time
    from ppk import pld as pld_module
    pld = ppk.PrivacyLossDistribution.from_gaussian(sigma=3.0, value_discretization_interval=1e-2)
    t = time.perf_counter()
    with pytest.raises(ValueError, match=r"num_times = 4611686018427387904 .*MAX_SELF_COMPOSE_WORK"):
        pld.with_composition("fft").self_compose(np.int64(2**62))
    # a plan ("auto") refuses when its composed loss would not fit one FFT
    with pytest.raises(ValueError, match=r"spreads over .* grid points"):
        ppk.PrivacyLossDistribution.from_laplace(scale=3.0, value_discretization_interval=1e-2).self_compose(2**62)
    assert time.perf_counter() - t < 5
    # 2^62 Gaussian runs are one Gaussian mechanism (mu = 2^31 / 3): delta is 1 to double precision at eps = 1
    lo, hi = pld.self_compose(2**62).delta_bracket(1.0)
    assert lo <= hi == pytest.approx(1.0)
    assert pld_module.MAX_SELF_COMPOSE_WORK >= 3e7
    # a PLD that stays small composes any number of times
    lo, hi = ppk.PrivacyLossDistribution.from_pmfs([1.0], [1.0]).self_compose(2**62).delta_bracket(1.0)
    assert lo == 0 and hi <= 1


def test_dp_accounting_signatures_name_their_own_parameters():
    PLD = ppk.PrivacyLossDistribution
    with pytest.raises(ValueError, match=r"\bstandard_deviation\b"):
        PLD.from_gaussian_mechanism(standard_deviation=-1.0)
    with pytest.raises(ValueError, match=r"\bstandard_deviation\b"):
        PLD.from_gaussian_mechanism(standard_deviation=5e-324)
    with pytest.raises(ValueError, match=r"\bparameter\b"):
        PLD.from_laplace_mechanism(parameter=0.0)
    # sampling_prob outside (0, 1] and unknown adjacencies: refused, naming the parameter
    with pytest.raises(ValueError, match="sampling_prob"):
        PLD.from_laplace_mechanism(parameter=1.0, sampling_prob=1.5)
    with pytest.raises(ValueError, match="sampling_prob"):
        PLD.from_gaussian_mechanism(1.0, sampling_prob=0.0)
    with pytest.raises(ValueError, match="adjacency"):
        PLD.from_gaussian_mechanism(1.0, sampling_prob=0.5, adjacency="replace")
    with pytest.raises(TypeError, match=r"\blog_probability_mass_function_upper\b"):
        PLD.from_two_probability_mass_functions({0: 0.0}, [0.0])
    with pytest.raises(ValueError, match=r"\blog_probability_mass_function_lower\b"):
        PLD.from_two_probability_mass_functions({}, {0: 0.0})
    with pytest.raises(ValueError, match=r"log_probability_mass_function_upper\[1\]"):
        PLD.from_two_probability_mass_functions({0: 0.0}, {1: math.nan})
    # valid mappings give the from_pmfs answer
    a = PLD.from_two_probability_mass_functions({0: math.log(0.5), 1: math.log(0.5)},
                                                {0: math.log(0.7), 1: math.log(0.3)})
    b = PLD.from_pmfs([0.7, 0.3], [0.5, 0.5], tolerance=1e-6)
    assert a.delta_bracket(0.1) == b.delta_bracket(0.1)


def test_a_subnormal_interval_fits_the_grid_instead_of_overflowing():
    PLD = ppk.PrivacyLossDistribution
    for pld in (PLD.from_gaussian(sigma=3.0, value_discretization_interval=5e-324, max_buckets=1 << 12),
                PLD.from_laplace(scale=2.0, value_discretization_interval=5e-324, max_buckets=1 << 12),
                PLD.from_pmfs([0.7, 0.3], [0.5, 0.5], value_discretization_interval=5e-324)):
        lo, hi = pld.delta_bracket(0.1)
        assert 0 <= lo <= hi <= 1 and pld.value_discretization_interval > 0


def test_flags_choices_and_keys_are_checked_by_name():
    PLD = ppk.PrivacyLossDistribution
    base = dict(interval=0.1, offset=-1, mass_upper=[0.2, 0.3, 0.5], mass_lower=[0.5, 0.3, 0.2])
    with pytest.raises(TypeError, match=r"\bpessimistic_estimate\b"):
        PLD(**base, pessimistic_estimate=np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match=r"\bcomposition\b"):
        PLD(**base, composition=np.array([]))
    with pytest.raises(ValueError, match=r"shared_noise_key\[2\]"):
        PLD(**base, shared_noise_key=(10, 0, math.nan))
    assert PLD(**base, shared_noise_key=(10, 0, 0.5))._shared_noise_key == ("rows", 10, 0)   # the table's rows
    pld = PLD(**base)
    with pytest.raises(TypeError, match=r"\bother\b"):
        pld.compose(0.5)
    with pytest.raises(TypeError, match=r"\bcomposition\b"):
        pld.with_composition(np.array([1.0, 2.0]))


@pytest.mark.parametrize("sigma, dx", [(6.32, 1e-3), (1.0, 1e-3), (0.3, 0.5), (100.0, 2.0)])
def test_gaussian_masses_read_each_tail_only_where_it_is_the_smaller(sigma, dx):
    """The Gaussian builder evaluates each normal tail only near and beyond the middle (half the kernel calls):
    its masses are those made from both tails at every edge, bit for bit (grids of a fraction of a deviation,
    and coarser than one).  A few ms."""
    from ppk.pld import mechanisms
    got = ppk.pld.PrivacyLossDistribution.from_gaussian(sigma=sigma, value_discretization_interval=dx,
                                                        log_mass_truncation_bound=-200.0)
    ratio = 1.0 / sigma                # the builder's own arithmetic: the same edges to the bit
    mu = 0.5 * ratio * ratio
    sd = math.sqrt(2 * mu)
    edges = np.arange(got.offset - 1, got.offset + len(got.mass_upper)) * got.value_discretization_interval
    zp, zq = (edges - mu) / sd, (edges + mu) / sd
    full = mechanisms.from_tails(lambda **kw: kw, got.value_discretization_interval, got.offset - 1,
                                 got.offset + len(got.mass_upper) - 1, ppk._kernels.norm_logsf(zp),
                                 ppk._kernels.norm_logsf(-zp), ppk._kernels.norm_logsf(zq), ppk._kernels.norm_logsf(-zq))
    assert np.array_equal(full["mass_upper"], got.mass_upper) and np.array_equal(full["mass_lower"], got.mass_lower)
