"""CountingQuery against independent oracles, properties and bad input.

The mpmath values (tests/oracle.py, 40 digits) of the fixed cases do not depend on ppk: they are data,
stored in tests/oracles/counting.json by tests/oracles/make_counting.py (bit for bit), and a few, drawn
at random, are re-derived live on every run (test_counting_json_holds_the_oracles_values).
"""
import math
import random
import resource
import time

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import oracle
import ppk
from oracles import load
from oracles import make_counting

# log delta to 1e-9 absolute = delta to 1e-9 relative (the target)
LOG_TOL = 1e-9
STORED = load("counting")["values"]
# the cases whose oracle costs seconds (make_counting prints each case's CPU): never re-derived live
EXPENSIVE = {make_counting.key("log-delta", *case) for case in make_counting.LARGE_N_CASES} | {
    make_counting.key("quadrature-delta", *case) for case in make_counting.QUADRATURE_CASES}


def stored(*parts):
    """The oracle's value of one fixed case (counting.json) as a float."""
    with mp.workdps(60):    # (one rounding, from every stored digit to the double)
        return float(mp.mpf(STORED[make_counting.key(*parts)]))


def query(N, p, sigma, known=0):
    return ppk.CountingQuery(n=N + known + 1, known=known, p=p, sigma=sigma)


# (N, p, sigma, eps): delta from ~0.5 down to far below 1e-300, sigma from 0 to thousands
@pytest.mark.parametrize("N,p,sigma,eps", make_counting.ORACLE_CASES)
def test_log_delta_matches_mpmath_oracle(N, p, sigma, eps):
    want = stored("log-delta", N, p, sigma, eps)
    q = query(N, p, sigma)
    assert abs(q.log_delta(eps) - want) <= LOG_TOL
    assert q.log_delta_upper(eps) >= want - 1e-13
    assert q.log_delta_upper(eps) - want <= 1e-8   # the certified bound is tight


@pytest.mark.parametrize("N,p,sigma,eps", make_counting.LARGE_N_CASES)
def test_log_delta_matches_oracle_at_large_N(N, p, sigma, eps):
    # delta ~ 1e-124; ~ 1e-5515, far below the float range; ~ 2e-16, the calibration regime.  (The
    # oracle costs 4-37 s CPU each at N = 1e6, 1e7, so it is stored; ppk's part is ~0.01 s.)
    want = stored("log-delta", N, p, sigma, eps)
    q = query(N, p, sigma)
    assert abs(q.log_delta(eps) - want) <= LOG_TOL
    assert want - 1e-13 <= q.log_delta_upper(eps) <= want + 1e-8


@pytest.mark.parametrize("N,p,sigma,eps", make_counting.QUADRATURE_CASES)
def test_delta_matches_brute_force_quadrature(N, p, sigma, eps):
    want = stored("quadrature-delta", N, p, sigma, eps)
    assert query(N, p, sigma).delta(eps) == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("p", [0.0, 1.0, 0.3])
def test_no_natural_noise_is_the_analytic_gaussian(p):
    N = 0 if p == 0.3 else 40
    for sigma, eps in make_counting.GAUSSIAN_CASES:
        want = stored("gaussian-log-delta", sigma, eps)
        assert abs(query(N, p, sigma).log_delta(eps) - want) <= LOG_TOL
    assert query(N, p, 0.0).delta(0.5) == 1.0


def test_delta_far_below_1e300_is_finite_in_log_space():
    q = ppk.CountingQuery(n=100_000, known=50_000, p=0.5, sigma=3.0)
    ld = q.log_delta(1.0)
    assert ld < -5000 and math.isfinite(ld)
    assert q.delta(1.0) == 0.0          # below the float range
    assert q.log_delta(50.0) < ld       # still decreasing, still finite
    assert math.isfinite(q.log_delta(1e3))


def test_vectorised_over_eps_and_shapes():
    q = ppk.CountingQuery(n=10_000, known=1_000, p=0.4, sigma=2.0)
    eps = np.array([[0.0, 0.01], [0.1, 1.0]])
    d = q.delta(eps)
    assert d.shape == (2, 2)
    assert d[0, 1] == q.delta(0.01)
    assert isinstance(q.delta(0.1), float)
    assert np.all(np.diff(d.reshape(-1)) < 0)


@pytest.mark.parametrize("n,p,sigma", [(1000, 0.5, 3.0), (1000, 0.3, 30.0), (100_000, 0.2, 0.7), (50, 0.5, 300.0),
                                       (4, 0.3, 0.3), (3, 0.45, 0.1)])
def test_dense_curve_starts_each_root_search_from_the_last_and_agrees_with_single_calls(n, p, sigma):
    # a curve's evaluations start from the previous eps's root (and may stop Newton one step
    # early), and skip the order whose bound from an earlier eps is below the other's delta: the
    # numbers must agree with cold single calls, in any order of the eps values.  The last two laws
    # change their larger order inside the range (N = 3, p = 0.3, sigma = 0.3 at eps ~ 0.34; N = 2,
    # p = 0.45, sigma = 0.1 at eps ~ 0.01 and ~ 0.67).
    q = ppk.CountingQuery(n=n, known=0, p=p, sigma=sigma)
    eps = np.linspace(0.0, 6.0, 257)
    single = np.array([q.log_delta(e) for e in eps])
    single_upper = np.array([q.log_delta_upper(e) for e in eps])
    for grid in (eps, eps[::-1]):
        order = slice(None) if grid is eps else slice(None, None, -1)
        dense, dense_upper = q.log_delta(grid)[order], q.log_delta_upper(grid)[order]
        np.testing.assert_allclose(dense, single, rtol=1e-13, atol=1e-13)
        assert np.all(dense_upper >= single - 1e-13 * np.abs(single))
        np.testing.assert_allclose(dense_upper, single_upper, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("sigma", [1e-20, 1e-12, 1e-6, 1e-3, 0.02])
def test_tiny_sigma_equals_noiseless_without_a_noise_floor(sigma):
    for N, p, eps in [(4999, 0.5, 0.12), (1000, 0.3, 1.0), (200, 0.1, 0.0)]:
        d0 = query(N, p, 0.0).log_delta(eps)
        assert abs(query(N, p, sigma).log_delta(eps) - d0) <= 1e-12


def test_flat_region_ends_continuously():
    # the flat region (docs/method.md): identical to sigma = 0 for sigma <= ~0.07, then a smooth drop
    N, p, eps = 4999, 0.5, 0.12
    d0 = query(N, p, 0.0).delta(eps)
    assert query(N, p, 0.07).delta(eps) == pytest.approx(d0, rel=1e-10)
    d15 = query(N, p, 0.15).delta(eps)
    assert 0 < (d0 - d15) / d0 < 1e-4


def test_large_n_needs_no_linear_memory():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    q = ppk.CountingQuery(n=10**9, known=0, p=0.5, sigma=100.0)
    assert 0 < q.delta(1e-4) < 1
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mib < 100


def test_beta_and_counts():
    q = ppk.CountingQuery(n=1000, known=200, p=0.5, sigma=5.0)
    assert q.beta == 0.005
    assert q.n_unknown == 799
    assert "sigma=5.0" in repr(q)


def test_epsilon_inverts_the_curve_and_rounds_up():
    q = ppk.CountingQuery(n=100_000, known=50_000, p=0.5, sigma=3.0)
    for target in [1e-3, 1e-6, 1e-12]:
        eps = q.epsilon(target)
        assert q.delta_upper(eps) <= target
        assert q.delta(eps * (1 - 1e-9)) > target * (1 - 1e-6)
    assert q.epsilon(1.0) == 0.0
    # noiseless: delta never drops below max(p, 1-p)^N, so no eps reaches smaller targets
    tiny = ppk.CountingQuery(n=5, known=0, p=0.5, sigma=0.0)
    assert tiny.epsilon(0.5**4 / 2) == math.inf


@pytest.mark.parametrize("n,known,p,sigma,target", [
    (10**12, 5 * 10**11, 0.5, 3.0, 1e-9),   # the Gaussian start is within 1e-10: four evaluations
    (100, 0, 0.1, 1.0, 1e-5),               # the start is 40% low: the bracket grows from it
    (1000, 500, 0.5, 0.0, 1e-3),            # noiseless
    (10**9, 0, 1e-6, 2.0, 1e-9),            # one expected 1 among the unknown rows
])
def test_epsilon_from_the_gaussian_start_is_certified_and_tight(n, known, p, sigma, target):
    q = ppk.CountingQuery(n=n, known=known, p=p, sigma=sigma)
    eps = q.epsilon(target)
    assert q.delta_upper(eps) <= target < q.delta_upper(eps * (1 - 1e-11))


# ---------------------------------------------------------------- properties
ns = st.integers(min_value=0, max_value=3000)
ps = st.floats(min_value=0.01, max_value=0.99)
sigmas = st.one_of(st.just(0.0), st.floats(min_value=1e-9, max_value=300.0))
epss = st.floats(min_value=0.0, max_value=3.0)


@given(ns, ps, sigmas, epss)
def test_symmetry_in_p(N, p, sigma, eps):
    a, b = query(N, p, sigma).log_delta(eps), query(N, 1 - p, sigma).log_delta(eps)
    assert abs(a - b) <= 1e-9 * max(1.0, abs(a))


@given(ns, ps, sigmas, epss, st.floats(min_value=1e-6, max_value=50.0))
def test_non_increasing_in_sigma(N, p, sigma, eps, extra):
    lo, hi = query(N, p, sigma).log_delta(eps), query(N, p, sigma + extra).log_delta(eps)
    assert hi <= lo + 1e-11 * max(1.0, abs(lo))


@given(ns, ps, sigmas, epss, st.floats(min_value=1e-6, max_value=2.0))
def test_non_increasing_in_eps(N, p, sigma, eps, extra):
    q = query(N, p, sigma)
    lo, hi = q.log_delta(eps), q.log_delta(eps + extra)
    assert hi <= lo + 1e-11 * max(1.0, abs(lo))


@given(ns, ps, sigmas, epss)
def test_delta_at_most_delta_upper_and_both_below_gaussian(N, p, sigma, eps):
    q = query(N, p, sigma)
    ld, lu = q.log_delta(eps), q.log_delta_upper(eps)
    # tight: within 1e-9 relative, plus the long-double rounding of |log delta| (deep tails)
    assert ld <= lu <= ld + 1e-9 + 1e-12 * abs(ld)
    if sigma > 1e-3:  # post-processing of the Gaussian mechanism (mpmath overflows for tinier sigma)
        g = float(oracle.gaussian_log_delta(sigma, eps, dps=30))
        assert ld <= g + 1e-9 * max(1.0, abs(g))


@given(st.integers(min_value=1, max_value=300), ps, epss)
def test_continuity_into_sigma_zero(N, p, eps):
    d0 = query(N, p, 0.0).delta(eps)
    assert query(N, p, 1e-9).delta(eps) == pytest.approx(d0, rel=1e-12, abs=1e-300)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs,exc,word", [
    (dict(n=10, known=10, p=0.5, sigma=1.0), ValueError, "known"),
    (dict(n=10, known=11, p=0.5, sigma=1.0), ValueError, "known"),
    (dict(n=0, known=0, p=0.5, sigma=1.0), ValueError, "n"),
    (dict(n=10, known=-1, p=0.5, sigma=1.0), ValueError, "known"),
    (dict(n=10, known=2, p=1.5, sigma=1.0), ValueError, "p"),
    (dict(n=10, known=2, p=-0.1, sigma=1.0), ValueError, "p"),
    (dict(n=10, known=2, p=float("nan"), sigma=1.0), ValueError, "p"),
    (dict(n=10, known=2, p=0.5, sigma=-1.0), ValueError, "sigma"),
    (dict(n=10, known=2, p=0.5, sigma=float("inf")), ValueError, "sigma"),
    (dict(n=10.5, known=2, p=0.5, sigma=1.0), ValueError, "n"),
    (dict(n="10", known=2, p=0.5, sigma=1.0), TypeError, "n"),
    (dict(n=10, known=2.2, p=0.5, sigma=1.0), ValueError, "known"),
    (dict(n=10, known=True, p=0.5, sigma=1.0), TypeError, "known"),
    (dict(n=10**13, known=0, p=0.5, sigma=1.0), ValueError, "n"),
    (dict(n=10, known=2, p="0.5", sigma=1.0), TypeError, "p"),
])
def test_bad_query_arguments(kwargs, exc, word):
    with pytest.raises(exc, match=rf"\b{word}\b"):
        ppk.CountingQuery(**kwargs)


def test_positional_arguments_are_rejected():
    with pytest.raises(TypeError):
        ppk.CountingQuery(10, 2, 0.5, 1.0)


def test_bad_eps_and_delta():
    q = ppk.CountingQuery(n=10, known=2, p=0.5, sigma=1.0)
    for bad in [-0.1, float("nan"), float("inf"), [0.1, -1.0]]:
        with pytest.raises(ValueError, match="eps"):
            q.delta(bad)
    with pytest.raises(TypeError, match="eps"):
        q.delta("0.1")
    for bad in [0.0, -1e-3, 1.5, float("nan")]:
        with pytest.raises(ValueError, match="delta"):
            q.epsilon(bad)


def test_integral_floats_are_accepted():
    q = ppk.CountingQuery(n=1e5, known=5e4, p=0.5, sigma=3)
    assert q.n == 100_000 and isinstance(q.n, int)


def test_mills_ratio_matches_mpmath():
    from ppk import _core
    for sigma, eps in make_counting.MILLS_CASES:
        want = stored("gaussian-log-delta", sigma, eps, make_counting.MILLS_DPS)
        ld, lu, _ = _core.gaussian_log_delta(sigma, np.array([eps]), 1.0)
        assert abs(ld[0] - want) <= 1e-12 * max(1.0, abs(want))
        assert want - 1e-13 * max(1.0, abs(want)) <= lu[0] <= want + 1e-9 + 1e-12 * abs(want)


def test_mpmath_oracle_is_really_independent():
    # guard: the oracle must not import ppk (it would then test ppk against itself)
    import inspect
    for module in (oracle, make_counting):
        src = inspect.getsource(module)
        assert "import ppk" not in src and "from ppk" not in src


def test_counting_json_holds_the_oracles_values():
    # every case the generator knows is stored (and nothing else); three drawn at random, from the cases
    # whose oracle costs under ~0.6 s CPU, are recomputed live and must agree to every digit: a
    # corrupted or stale counting.json is caught.  A seed per day: reproducible, and the draws cover
    # the file over the days (printed on failure).
    cases = make_counting.cases()
    assert set(STORED) == set(cases)
    seed = int(time.time() // 86400)
    cheap = sorted(k for k in cases if k not in EXPENSIVE)
    for name in random.Random(seed).sample(cheap, 3):
        assert make_counting.compute(name) == STORED[name], (seed, name)
