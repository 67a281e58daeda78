"""Algorithm 1: feasible, minimal, the reason paths, monotone, and against an independent oracle."""
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import optimize

import oracle
import ppk
from ppk import baselines as bl


def _check_feasible_and_minimal(r, rel=1e-8):
    q = r.query
    assert q.delta(r.eps) <= r.delta
    assert q.delta_upper(r.eps) <= r.delta
    assert r.delta_achieved <= r.delta
    if r.scale > 0:
        # just below the bracket the target is violated (up to the few-ulp safety margin of the
        # search): sigma is within zeta of the optimum
        assert q.with_sigma(r.scale - r.zeta).delta_upper(r.eps) > r.delta * (1 - 1e-13)
        assert r.zeta <= max(rel * r.scale, 1e-300)


@pytest.mark.parametrize("N,p,eps,delta", [(5, 0.5, 0.3, 1e-3), (20, 0.2, 0.1, 1e-6), (100, 0.6, 0.05, 1e-9),
                                           (300, 0.05, 0.5, 1e-12)])
def test_sigma_matches_independent_bisection_on_the_mpmath_oracle(N, p, eps, delta):
    r = ppk.alg1(n=N + 1, known=0, p=p, eps=eps, delta=delta)
    target = math.log(delta)
    f = lambda s: float(oracle.log_delta(N, p, s, eps, dps=30)) - target  # noqa: E731
    hi = bl.analytic_gaussian_sigma(eps=eps, delta=delta)
    want = optimize.brentq(f, 1e-3, hi * 1.001, xtol=1e-12, rtol=1e-11)
    assert want * (1 - 1e-9) <= r.scale <= want * (1 + 1e-8)
    _check_feasible_and_minimal(r)


def test_natural_noise_alone():
    r = ppk.alg1(n=10**6, known=5 * 10**5, p=0.5, eps=0.01, delta=1e-6)
    assert r.scale == 0.0 and r.reason == "natural noise alone suffices" and r.evaluations == 1
    assert r.query.delta(0.01) <= 1e-6


@pytest.mark.parametrize("kwargs", [dict(n=1000, known=999, p=0.5), dict(n=1000, known=10, p=0.0),
                                    dict(n=1000, known=10, p=1.0)])
def test_no_natural_noise_gives_the_analytic_gaussian(kwargs):
    r = ppk.alg1(**kwargs, eps=0.1, delta=1e-6)
    assert r.reason.startswith("no natural noise")
    assert r.scale == pytest.approx(bl.analytic_gaussian_sigma(eps=0.1, delta=1e-6), rel=1e-9)
    _check_feasible_and_minimal(r)


@pytest.mark.parametrize("n", [10**4, 10**5, 10**6])
def test_never_above_analytic_gaussian_and_beta_in_units(n):
    r = ppk.alg1(n=n, known=n // 2, p=0.3, eps=0.01, delta=1e-8)
    assert r.scale <= bl.analytic_gaussian_sigma(eps=0.01, delta=1e-8)
    assert r.query.beta == r.scale / n
    _check_feasible_and_minimal(r)


def test_error_is_an_absolute_tolerance():
    r = ppk.alg1(n=10**4, known=5000, p=0.5, eps=0.01, delta=1e-6, error=0.5)
    assert 0 < r.zeta <= 0.5
    assert r.query.delta(0.01) <= 1e-6


def test_small_sigma_regime_is_solved_not_chased_to_zero():
    # near the flat region sigma* jumps from 0 to ~0.46 (docs/decisions.md): never a 1e-20 "solution"
    r = ppk.alg1(n=2001, known=1, p=0.4, eps=0.1741, delta=1e-6)
    assert r.scale == 0.0 or r.scale > 0.01
    _check_feasible_and_minimal(r)


@given(st.integers(10, 5000), st.floats(0.02, 0.98), st.floats(0.005, 1.0), st.floats(-12, -3))
def test_property_feasible_and_minimal(n, p, eps, log10_delta):
    r = ppk.alg1(n=n, known=n // 3, p=p, eps=eps, delta=10**log10_delta)
    _check_feasible_and_minimal(r)


@given(st.integers(10, 3000), st.floats(0.05, 0.95), st.floats(0.01, 0.5))
def test_monotone_in_delta_and_eps(n, p, eps):
    s1 = ppk.alg1(n=n, known=0, p=p, eps=eps, delta=1e-9).scale
    s2 = ppk.alg1(n=n, known=0, p=p, eps=eps, delta=1e-6).scale
    s3 = ppk.alg1(n=n, known=0, p=p, eps=2 * eps, delta=1e-6).scale
    assert s1 >= s2 * (1 - 1e-9) and s2 >= s3 * (1 - 1e-9)


@pytest.mark.parametrize("kwargs,word", [
    (dict(n=10, known=5, p=0.5, eps=0.0, delta=1e-6), "eps"),
    (dict(n=10, known=5, p=0.5, eps=0.1, delta=1.0), "delta"),
    (dict(n=10, known=10, p=0.5, eps=0.1, delta=1e-6), "known"),
    (dict(n=10, known=5, p=0.5, eps=0.1, delta=1e-6, error=-1.0), "error"),
    (dict(n=10, known=5, p=0.5, eps=0.1, delta=1e-6, rtol=0.0), "rtol"),
])
def test_bad_input(kwargs, word):
    with pytest.raises(ValueError, match=word):
        ppk.alg1(**kwargs)
