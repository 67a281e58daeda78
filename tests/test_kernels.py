"""The C++ building blocks against mpmath and scipy."""
import mpmath as mp
import numpy as np
import pytest
from scipy import stats

import ppk
from ppk import _core


def test_norm_logsf_matches_mpmath():
    xs = np.concatenate([-np.logspace(-3, 1.5, 20), [0.0], np.logspace(-3, 3.5, 60), [99.9, 100.0, 100.1, 1e5]])
    got = _core.norm_logsf(xs)
    with mp.workdps(40):
        want = [float(mp.log(mp.erfc(mp.mpf(x) / mp.sqrt(2)) / 2)) if x > 0
                else float(mp.log1p(-mp.ncdf(mp.mpf(x)))) for x in xs]
    np.testing.assert_allclose(got, want, rtol=2e-16, atol=1e-300)


def _exact(x: np.longdouble) -> mp.mpf:
    num, den = x.as_integer_ratio()
    return mp.mpf(num) / den


def test_two_sided_tail_matches_mpmath_at_long_double_precision():
    # erfc(|x| / sqrt 2) from a table of nodes i/256 and a short strip series (normal.hpp): on the
    # nodes, halfway between them (the longest strip), at random long doubles with all 64 bits set,
    # on both sides of 0, and past the table's end (40: the Mills series, to where the value leaves
    # the normal long-double range at 150.7).  erfcl with its rounded argument |x|/sqrt 2 was off by
    # 1.6e-17 at x = 15 and 4e-16 at x = 100; this is within a few ulps (5.4e-20) everywhere.
    rng = np.random.default_rng(7)
    nodes = np.arange(0, 40 * 256, 37, dtype=np.longdouble) / 256
    x = np.concatenate([nodes, nodes + np.longdouble(1) / 512, nodes - np.longdouble(1) / 512,
                        rng.uniform(0, 40, 300).astype(np.longdouble) * (1 + np.longdouble(2.0**-60)),
                        -rng.uniform(0, 40, 50).astype(np.longdouble), rng.uniform(40, 150, 100).astype(np.longdouble),
                        np.array([39.999, 40.0, 41.5, 100.0], dtype=np.longdouble)])
    got = _core.norm_two_sided_tail(x)
    assert got.dtype == np.longdouble
    worst = 0.0
    with mp.workdps(45):
        for xi, gi in zip(x, got):
            want = mp.erfc(abs(_exact(xi)) / mp.sqrt(2))
            worst = max(worst, float(abs(_exact(gi) - want) / want))
    assert worst < 5e-19, worst
    far = _core.norm_two_sided_tail(np.array([151.0, 1e300, np.inf, -np.inf], dtype=np.longdouble))
    assert np.all(far == 0) and np.isnan(_core.norm_two_sided_tail(np.array([np.nan], dtype=np.longdouble))[0])


def test_log_mills_through_norm_logsf_continuity():
    # log_sf switches method at 0, 40 and 100: no jump at the seams
    for x in [0.0, 40.0, 100.0]:
        a, b = _core.norm_logsf(np.array([np.nextafter(x, -1), np.nextafter(x, 1e9)]))
        assert abs(a - b) <= 1e-13 * max(1.0, abs(a))


@pytest.mark.parametrize("N,p", [(1, 0.3), (7, 0.5), (31, 0.01), (1000, 0.3), (10**7, 0.5), (10**9, 1e-6), (10**12, 0.25)])
def test_binom_logpmf_matches_mpmath(N, p):
    mode = int((N + 1) * p)
    sd = max(1.0, (N * p * (1 - p)) ** 0.5)
    ks = np.unique(np.clip(np.array([0, 1, 2, mode - int(30 * sd), mode - int(3 * sd), mode - 1, mode, mode + 1,
                                     mode + int(3 * sd), mode + int(30 * sd), N - 1, N]), 0, N))
    got = _core.binom_logpmf(N, p, ks)
    with mp.workdps(50):
        want = [float(mp.log(mp.binomial(N, int(k))) + k * mp.log(mp.mpf(p)) + (N - k) * mp.log(1 - mp.mpf(p)))
                for k in ks]
    # absolute error of the log = relative error of the pmf; the bound is the double rounding of the result
    err = np.abs(got - np.array(want))
    assert np.all(err <= 4e-16 * np.maximum(1.0, np.abs(want))), err


@pytest.mark.parametrize("M,K,d", [(10, 4, 3), (100, 50, 50), (1000, 3, 999), (10_000, 2_000, 5_000), (50_000, 10_000, 20_000)])
def test_hypergeom_matches_scipy(M, K, d):
    support, pmf = ppk.hypergeom.hypergeom_pmf(population=M, successes=K, draws=d)
    ref = stats.hypergeom(M=M, n=K, N=d)
    np.testing.assert_array_equal(support, np.arange(max(0, d - (M - K)), min(d, K) + 1))
    big = pmf > 1e-250
    np.testing.assert_allclose(pmf[big], ref.pmf(support[big]), rtol=1e-12)
    assert abs(pmf.sum() - 1) < 1e-12


@pytest.mark.parametrize("M,K,d", [(60, 20, 30), (10**7, 4 * 10**6, 10**4)])
def test_hypergeom_log_matches_mpmath(M, K, d):
    support, logpmf = ppk.hypergeom.hypergeom_pmf(population=M, successes=K, draws=d, log=True)
    idx = np.unique(np.linspace(0, support.size - 1, 25).astype(int))
    with mp.workdps(50):
        want = [float(mp.log(mp.binomial(K, int(h)) * mp.binomial(M - K, d - int(h)) / mp.binomial(M, d)))
                for h in support[idx]]
    np.testing.assert_allclose(logpmf[idx], want, rtol=1e-15, atol=1e-13)
    assert np.all(np.isfinite(logpmf))  # the extreme tails are representable in log space


def test_hypergeom_degenerate_and_bad_input():
    s, p = ppk.hypergeom.hypergeom_pmf(population=5, successes=5, draws=3)
    assert list(s) == [3] and p[0] == 1.0
    s, p = ppk.hypergeom.hypergeom_pmf(population=5, successes=2, draws=0)
    assert list(s) == [0] and p[0] == 1.0
    with pytest.raises(ValueError, match="successes"):
        ppk.hypergeom.hypergeom_pmf(population=5, successes=6, draws=1)
    with pytest.raises(ValueError, match="draws"):
        ppk.hypergeom.hypergeom_pmf(population=5, successes=2, draws=-1)
    with pytest.raises(TypeError, match="population"):
        ppk.hypergeom.hypergeom_pmf(population="5", successes=2, draws=1)
    with pytest.raises(ValueError, match="MAX_SUPPORT"):
        ppk.hypergeom.hypergeom_pmf(population=10**10, successes=5 * 10**9, draws=5 * 10**9)


def test_convolve_exact_and_small_values_survive():
    rng = np.random.default_rng(1)
    a = rng.random(300) * np.logspace(0, -250, 300)
    b = rng.random(200) * np.logspace(-5, -40, 200)
    got = _core.convolve(a, b)
    with mp.workdps(40):
        A, B = [mp.mpf(x) for x in a], [mp.mpf(x) for x in b]
        for k in (0, 7, 150, 400, 498):
            want = mp.fsum(A[i] * B[k - i] for i in range(max(0, k - 199), min(k, 299) + 1))
            assert abs(got[k] - float(want)) <= 1e-15 * float(want)
    # numpy agrees where values are large, while FFT-free values far below 1e-16*max stay exact
    np.testing.assert_allclose(got[:50], np.convolve(a, b)[:50], rtol=1e-13)


def test_log_convolve_spans_thousands_of_orders():
    la = np.array([0.0, -3000.0, -6000.0])
    lb = np.array([-1.0, -2.0])
    got = _core.log_convolve(la, lb)
    np.testing.assert_allclose(got[0], -1.0)
    np.testing.assert_allclose(got[1], np.logaddexp(-2.0, -3001.0))
    np.testing.assert_allclose(got[3], -6002.0)
    with pytest.raises(ValueError):
        _core.log_convolve(np.array([np.nan]), lb)
