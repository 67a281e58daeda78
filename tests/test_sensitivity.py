"""Sensitivity sampling: built-in queries, the C++ ridge loop against its numpy reference, DKW use."""
import numpy as np
import pytest

from ppk import _core
from ppk.related import risk
from ppk.related.risk import sensitivity as S


def test_counter_based_indices_match_between_numpy_and_cpp():
    a = S.pair_indices(m=997, rows=20, pairs=30, seed=12345)
    b = _core.pair_indices(997, 20, 30, 12345).reshape(30, 21).astype(np.int64)
    assert np.array_equal(a, b)
    assert a.min() >= 0 and a.max() < 997


def test_scalar_queries():
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2, 1000)
    s = S.sample_sensitivities(S.Count(), bits, rows=100, pairs=2000, seed=1)
    assert set(np.unique(s)) <= {0.0, 1.0} and 0.3 < s.mean() < 0.7      # differs when a != b
    vals = rng.normal(0.5, 1, 1000)
    m = S.sample_sensitivities(S.ClippedMean(0.0, 1.0), vals, rows=100, pairs=2000, seed=1)
    assert m.max() <= 1 / 100 + 1e-15
    total = S.sample_sensitivities(S.ClippedSum(0.0, 1.0), vals, rows=100, pairs=2000, seed=1)
    assert np.allclose(total, 100 * m)
    h = S.sample_sensitivities(S.Histogram((0.0, 0.5, 1.0)), vals, rows=10, pairs=500, seed=2)
    assert set(np.unique(h)) <= {0.0, 2.0}


def test_ridge_cpp_equals_numpy_reference_for_the_same_pairs():
    X, y = S.synthetic_census(5000, rng=3)
    fast = S.sample_sensitivities(S.Ridge(0.01), (X, y), rows=300, pairs=40, seed=9)
    ref = S.sample_sensitivities(S.Ridge(0.01), (X, y), rows=300, pairs=40, seed=9, backend="numpy")
    np.testing.assert_allclose(fast, ref, rtol=1e-8)
    again = S.sample_sensitivities(S.Ridge(0.01), (X, y), rows=300, pairs=40, seed=9)
    assert np.array_equal(fast, again)                          # deterministic, whatever the threads do
    assert not np.array_equal(fast, S.sample_sensitivities(S.Ridge(0.01), (X, y), rows=300, pairs=40, seed=10))


def test_synthetic_census_is_normalised_and_seeded():
    X, y = S.synthetic_census(1000, rng=5)
    assert np.allclose(np.linalg.norm(X, axis=1), 1.0) and y.min() == 0.0 and y.max() == 1.0
    X2, y2 = S.synthetic_census(1000, rng=5)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)


def test_empirical_sensitivity_quantile_and_dkw():
    e = S.EmpiricalSensitivity([5.0, 1.0, 3.0, 2.0, 4.0])
    assert e.sampled_sensitivity(0.4) == 2.0 and e.sampled_sensitivity(0.41) == 3.0 and e.max() == 5.0
    assert e.ecdf(3.0) == 0.6
    # with n = 15000 pairs and rho = 0.01, a gamma2 = 0.9 quantile holds for a fresh pair w.p. >= 0.80138
    X, y = S.synthetic_census(20000, rng=1)
    samples = S.sample_sensitivities(S.Ridge(0.01), (X, y), rows=500, pairs=15000, seed=4)
    q = S.EmpiricalSensitivity(samples).sampled_sensitivity(0.9)
    fresh = S.sample_sensitivities(S.Ridge(0.01), (X, y), rows=500, pairs=3000, seed=77)
    assert np.mean(fresh <= q) >= risk.empirical_confidence(gamma2=0.9, n=15000, rho=0.01) - 0.02


def test_bad_input():
    with pytest.raises(ValueError, match="rows"):
        S.sample_sensitivities(S.Count(), [0, 1], rows=1, pairs=3)
    with pytest.raises(ValueError, match="backend"):
        X, y = S.synthetic_census(10, rng=1)
        S.sample_sensitivities(S.Ridge(), (X, y), rows=5, pairs=2, backend="gpu")
    with pytest.raises(ValueError, match="samples"):
        S.EmpiricalSensitivity([])


def test_queries_and_data_are_checked_by_name():
    with pytest.raises(ValueError, match=r"\bhi\b"):
        S.ClippedSum(0.0, float("nan"))
    with pytest.raises(ValueError, match=r"\blo\b"):
        S.ClippedMean(2.0, 1.0)
    with pytest.raises(ValueError, match=r"\bedges\b"):
        S.Histogram((0.0, 2.0, 1.0))
    with pytest.raises(TypeError, match=r"\bquery\b"):
        S.sample_sensitivities("count", [0.0, 1.0], rows=5, pairs=2)
    with pytest.raises(TypeError, match=r"\bdata\b"):
        S.sample_sensitivities(S.Ridge(), 1.0, rows=5, pairs=2)
    with pytest.raises(ValueError, match=r"\bdata\b"):
        S.sample_sensitivities(S.Ridge(), (np.ones(5), np.ones(5)), rows=5, pairs=2)
    with pytest.raises(TypeError, match=r"\bx\b"):
        S.EmpiricalSensitivity([1.0, 2.0]).ecdf(None)
    assert S.Histogram([0, 1, 2]).edges == (0.0, 1.0, 2.0)
