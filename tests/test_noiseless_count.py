"""The noiseless count (sigma = 0) against 40-digit mpmath sums (docs/method.md, "sigma = 0").

The values are stored in tests/oracles/noiseless_count.json by tests/oracles/make_noiseless_count.py, which
writes delta as the difference of two binomial tails at 90 digits (a different form from the kernel's sum
of positive terms): from delta ~ 1e-3 down to e^-5000, N up to 1e9, and at the thresholds (eps at a
lattice point's loss and one ulp either side), where the two tails cancel the most.
"""
import mpmath as mp
import numpy as np
import pytest

import ppk
from oracles import load
from oracles import make_noiseless_count as make

STORED = load("noiseless_count")["values"]


def stored(N, p, eps):
    with mp.workdps(60):
        return float(mp.mpf(STORED[make.key(N, p, eps)]))


def all_cases():
    return [make.cases()[k] for k in sorted(make.cases())]


def tolerance(want):
    # measured: within two ulps of the double log (4.4e-16 |log delta|) and 4e-15 relative on delta
    return 4e-15 + 4.5e-16 * abs(want)


@pytest.mark.parametrize("N,p,eps", all_cases())
def test_noiseless_count_matches_mpmath_tails(N, p, eps):
    want = stored(N, p, eps)
    q = ppk.CountingQuery(n=N + 1, known=0, p=p, sigma=0.0)
    got, up = q.log_delta(eps), q.log_delta_upper(eps)
    assert abs(got - want) <= tolerance(want)
    assert up >= want                          # certified: never below the truth
    assert up - want <= 1e-12 + 4.5e-16 * abs(want)   # and tight: 1e-12 relative on delta (x's rounding, at N = 1e9)


def test_noiseless_count_reaches_e_minus_5000_in_log_space():
    q = ppk.CountingQuery(n=10**9 + 1, known=0, p=0.3, sigma=0.0)
    want = stored(10**9, 0.3, 0.006893)
    assert want < -4999 and q.delta(0.006893) == 0.0
    assert abs(q.log_delta(0.006893) - want) <= tolerance(want)


def test_noiseless_count_json_holds_the_generators_value():
    # one cheap case re-derived live: a corrupted file is caught
    name = make.key(1000, 0.3, 0.888324)
    assert make.compute(name) == STORED[name]


def test_noiseless_curve_is_vectorised_like_single_points():
    q = ppk.CountingQuery(n=10**6 + 1, known=0, p=0.3, sigma=0.0)
    eps = np.array([0.0, 1e-4, 0.02343, 0.081729])
    many = q.log_delta(eps)
    assert np.array_equal(many, [q.log_delta(float(e)) for e in eps])


def test_noiseless_pld_keeps_only_the_lattice_a_double_can_hold(monkeypatch):
    # the lattice PLD of a noiseless count reads Bin(N, p) where its pmf is >= e^-750: every other value is
    # 0.0 in double anyway, so the PLD is the one over 0..N, without N + 1 values in memory
    q = ppk.CountingQuery(n=20_001, known=0, p=0.3, sigma=0.0)
    window = ppk.PrivacyLossDistribution.from_curve(q)
    monkeypatch.setattr(ppk.counting, "_lattice_window", lambda N, p: (0, N))
    full = ppk.PrivacyLossDistribution.from_curve(q)
    eps = [0.0, 0.01, 0.05, 0.2]
    assert [window.get_delta_for_epsilon(e) for e in eps] == [full.get_delta_for_epsilon(e) for e in eps]
    assert ppk.counting._lattice_window.__name__ == "<lambda>"   # (the patch took)


def test_noiseless_pld_of_a_huge_lattice_is_refused_up_front():
    # 1e12 unknown rows: 3.8e7 lattice values above e^-750 -- a clear error naming sigma, not 8 TB of arrays
    q = ppk.CountingQuery(n=10**12, known=0, p=0.5, sigma=0.0)
    with pytest.raises(ValueError, match="sigma"):
        ppk.PrivacyLossDistribution.from_curve(q)
    lo, hi = ppk.counting._lattice_window(10**9, 0.3)
    assert (lo, hi) == (299_442_793, 300_557_404)
    # the window's edges against mpmath's log pmf: inside >= -750, the next value out below
    with mp.workdps(40):
        def log_pmf(k):
            N, p = 10**9, mp.mpf(0.3)
            return mp.loggamma(N + 1) - mp.loggamma(k + 1) - mp.loggamma(N - k + 1) + k * mp.log(p) + (N - k) * mp.log(1 - p)
        assert log_pmf(lo) >= -750 > log_pmf(lo - 1) and log_pmf(hi) >= -750 > log_pmf(hi + 1)
