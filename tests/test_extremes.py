"""The privacy curve at the edges: tiny sigma with tiny N, huge sigma, huge eps (mpmath oracle, limits, bounds).

Each case here was once wrong (an under-reported delta, a NaN, a hang or an unbounded allocation);
the expected values come from tests/oracle.py (40 digits, no ppk code) or from closed-form limits.
"""
import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mpmath as mp
import oracle
import oracles
import ppk
from ppk.baselines import analytic_gaussian_log_delta


def query(N, p, sigma):
    return ppk.CountingQuery(n=N + 1, known=0, p=p, sigma=sigma)


# sigma 0.05-0.1 with N <= 10: the loss is a near-staircase; the threshold must still be found
SMALL = [(N, p, s, e) for N in (1, 2, 5, 8) for p in (0.1, 0.5) for s in (0.053, 0.0923) for e in (1e-4, 0.5, 3.0)]


@pytest.mark.parametrize("N,p,sigma,eps", SMALL)
def test_small_sigma_small_N_matches_the_oracle(N, p, sigma, eps):
    want = float(oracle.log_delta(N, p, sigma, eps))
    q = query(N, p, sigma)
    assert q.log_delta(eps) == pytest.approx(want, abs=1e-11)
    assert want - 1e-13 <= q.log_delta_upper(eps) <= want + 1e-9


# brute-force quadrature of the definition (tests/oracles/make_extremes.py, 25 digits, ~13 s to rewrite)
QUADRATURE = oracles.load("extremes")["cases"]


def test_the_issue_examples_against_brute_force_quadrature():
    for c in QUADRATURE:
        truth = float(c["delta"])
        q = query(c["N"], c["p"], c["sigma"])
        assert q.delta(c["eps"]) == pytest.approx(truth, rel=1e-9)
        assert truth * (1 - 1e-12) <= q.delta_upper(c["eps"]) <= truth * (1 + 1e-9)


def test_the_stored_quadrature_agrees_with_the_threshold_oracle():
    # a corrupted file is caught cheaply: tests/oracle.py's threshold oracle (40 digits) is another route
    # to the same number (the live quadrature costs 2-7 s a case: the exhaustive test below)
    for c in QUADRATURE:
        live = float(mp.exp(oracle.log_delta(c["N"], c["p"], c["sigma"], c["eps"])))
        assert live == pytest.approx(float(c["delta"]), rel=1e-12)


@pytest.mark.exhaustive
def test_the_stored_quadrature_is_rederived():
    from oracles import make_extremes as gen
    c = QUADRATURE[int(time.time()) % len(QUADRATURE)]
    assert gen.delta(c["N"], c["p"], c["sigma"], c["eps"]) == c["delta"]


@pytest.mark.parametrize("N,p,sigma,eps", [(9, 0.5, 0.08, 0.0), (999, 0.01, 0.08, 0.0), (999, 0.01, 0.06, 0.0),
                                            (999, 0.01, 0.1, 1e-8), (99, 0.3, 0.06, 0.0)])
def test_a_loss_flat_at_eps_over_a_whole_step_still_gives_a_tight_bound(N, p, sigma, eps):
    # (N + 1) p integral: w_{k-1} = w_k at the mode, so at sigma < 0.1 the loss is 0 to within its
    # rounding over a whole lattice step.  The root search used to creep across it (400 Newton steps
    # ending off the root) and the bound used to be the far end of the staircase (e^0.7 above delta).
    want = float(oracle.log_delta(N, p, sigma, eps))
    q = query(N, p, sigma)
    assert q.log_delta(eps) == pytest.approx(want, abs=1e-12)
    assert want - 1e-13 <= q.log_delta_upper(eps) <= want + 1e-11


@settings(max_examples=60, deadline=None)
@given(N=st.integers(1, 9), p=st.sampled_from([0.1, 0.3, 0.5]), eps=st.sampled_from([1e-4, 0.3, 2.0]),
       sigmas=st.lists(st.floats(0.04, 0.2), min_size=2, max_size=2))
def test_delta_is_non_increasing_in_sigma(N, p, eps, sigmas):
    lo, hi = sorted(sigmas)
    # more noise is post-processing: delta cannot grow (up to the stated accuracy)
    assert query(N, p, hi).log_delta(eps) <= query(N, p, lo).log_delta_upper(eps) + 1e-12


@pytest.mark.parametrize("N,p,sigma,eps,slack", [(10, 0.5, 1e4, 20.0, 1e-9), (1, 0.5, 1e5, 1.0, 1e-9),
                                                 (1000, 0.3, 300.0, 5.0, 1e-9),
                                                 # A and e^eps B agree to 1e-12 here: delta is summed term by
                                                 # term (docs/method.md, "Cancellation"); the bound was 2.4e-4
                                                 # above delta when it carried rho (A + e^eps B)
                                                 (10, 0.5, 1e8, 1e-4, 1e-7),
                                                 # x ~ 100 at the threshold: tails from Mills ratios (was 1.4e-8 off)
                                                 (1, 0.5, 1e6, 1e-4, 1e-7), (30, 0.3, 1e6, 1e-4, 1e-7)])
def test_huge_sigma_matches_the_oracle(N, p, sigma, eps, slack):
    want = float(oracle.log_delta(N, p, sigma, eps))
    q = query(N, p, sigma)
    # a few ulps of |log delta| (the stated accuracy where |log delta| is large)
    tol = 1e-11 + 4e-16 * abs(want)
    assert abs(q.log_delta(eps) - want) <= tol
    assert want - tol <= q.log_delta_upper(eps) <= want + slack + 1e-15 * abs(want)


@settings(max_examples=80, deadline=None)
@given(N=st.integers(1, 10**6), p=st.floats(0.01, 0.99), log_sigma=st.floats(-1, 8), log_eps=st.floats(-4, 2))
def test_never_above_the_gaussian_mechanism(N, p, log_sigma, log_eps):
    sigma, eps = 10.0 ** log_sigma, 10.0 ** log_eps
    # the unknown rows are independent of the challenge: adding them is post-processing
    bw = analytic_gaussian_log_delta(sigma=sigma, eps=eps)
    got = query(N, p, sigma).log_delta(eps)
    # to the stated accuracy: 1e-12, or 20 units in the last place of |log delta| where it is huge
    assert got <= bw + 1e-12 + 20 * 2.0**-52 * abs(bw)


def test_eps_to_infinity_tends_to_the_distinguishing_mass():
    q = ppk.CountingQuery(n=1000, known=500, p=0.5, sigma=0.0)
    # sigma = 0: output N + 1 has no P_0 mass; delta -> p^N = 2^-499 as eps -> inf
    for eps in (1e4, 1e5, 1e20, 1e300):
        assert q.log_delta(eps) == pytest.approx(499 * math.log(0.5), rel=1e-15)
    q = ppk.CountingQuery(n=1000, known=0, p=0.3, sigma=0.0)
    assert q.log_delta(1e9) == pytest.approx(999 * math.log(0.7), rel=1e-15)   # the larger endpoint mass


def test_huge_eps_with_noise_is_finite_and_decreasing():
    q = ppk.CountingQuery(n=100_000, known=50_000, p=0.5, sigma=3.0)
    eps = np.array([1.0, 1e3, 1e6, 1e9, 1e15, 1e20, 1e300])
    logs, ups = q.log_delta(eps), q.log_delta_upper(eps)
    assert np.all(np.isfinite(logs)) and np.all(np.isfinite(ups)) and np.all(ups >= logs)
    assert np.all(np.diff(logs) < 0)
    # delta (the exact value, to nearest) underflows to 0.0; the certified upper end is rounded up, to the least
    # subnormal, since the truth there is positive (e^log_delta)
    assert np.all(q.delta(eps[2:]) == 0.0) and np.all(q.delta_upper(eps[2:]) == 5e-324)
    # sigma <= 1/2 with huge eps (once a hang): far below the noiseless curve, never NaN
    tiny = ppk.CountingQuery(n=100_000, known=0, p=0.3, sigma=0.4)
    assert ppk.CountingQuery(n=100_000, known=0, p=0.3, sigma=0.0).log_delta(3e4) >= tiny.log_delta(3e4) > -1e308


def test_sigma_beyond_every_range_is_finite_and_pessimistic():
    q = ppk.CountingQuery(n=10**6, known=0, p=0.5, sigma=1e300)
    # log delta ~ -(eps sigma)^2 / 2 = -5e595: below the double range, reported as -DBL_MAX (larger: safe)
    assert q.log_delta(0.01) == -np.finfo(float).max == q.log_delta_upper(0.01)
    assert q.delta(0.01) == 0.0
    assert ppk.CountingQuery(n=10**9, known=0, p=0.5, sigma=1e8).log_delta(50.0) <= \
        analytic_gaussian_log_delta(sigma=1e8, eps=50.0)


@pytest.mark.parametrize("sigma", [150.0, 1e5, 1e12, 1e20, 1e50, 1e100, 1e300])
@pytest.mark.parametrize("eps_sigma", [0.0, 1e-12, 0.3, 0.9, 1.5])
def test_gaussian_mechanism_at_huge_sigma_matches_a_700_digit_oracle(sigma, eps_sigma):
    # once: the central region (eps sigma < 1) was a difference of two numbers ~1/2 that agree to
    # 1/sigma, so from sigma ~ 1e18 on it reported the rounding floor, delta ~ 1e-16 (85 orders high)
    mpmath = pytest.importorskip("mpmath")
    eps = eps_sigma / sigma
    with mpmath.workdps(700):
        s, e = mpmath.mpf(sigma), mpmath.mpf(eps)
        ref = float(mpmath.log(mpmath.ncdf(1 / (2 * s) - e * s) - mpmath.exp(e) * mpmath.ncdf(-e * s - 1 / (2 * s))))
    got = analytic_gaussian_log_delta(sigma=sigma, eps=eps)
    assert got == pytest.approx(ref, rel=1e-14, abs=1e-14)
    assert ppk._kernels.gaussian_log_delta_upper(sigma=sigma, eps=eps) >= ref


def test_huge_sigma_with_a_vanishing_natural_noise_is_fast_and_the_gaussian_curve():
    # found by the fuzzer: N = 4.8e7, p = 2.4e-242, sigma = 1e100 walked all N terms (29 s) because a
    # reference scale of -1e166 swallowed the walk's increments; X is 0 with probability 1 - 1e-234
    q = ppk.CountingQuery(n=96_406_930, known=48_203_465, p=2.4001077453423136e-242, sigma=1e100)
    assert q.log_delta(0.0) == pytest.approx(analytic_gaussian_log_delta(sigma=1e100, eps=0.0), rel=1e-15)
    assert q.log_delta_upper(0.0) >= q.log_delta(0.0)


def test_far_tail_at_a_trillion_rows_is_bounded_in_memory():
    # once: the per-call memo grew by doubling until std::bad_alloc (6.1 GiB)
    q = ppk.CountingQuery(n=10**12, known=5 * 10**11, p=0.5, sigma=3.0)
    up = q.log_delta_upper(1.0)
    assert math.isfinite(up) and up >= q.log_delta(1.0) and up < -5e10


def test_ctrl_c_interrupts_a_long_computation():
    import signal
    import subprocess
    import sys
    import time
    # the child gets Python's own Ctrl-C handler: a shell starts background jobs with SIGINT ignored,
    # and a child would inherit that (an interactive Python never has it)
    code = ("import faulthandler, signal, numpy as np, ppk\n"
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "faulthandler.register(signal.SIGUSR1)\n"
            "q = ppk.CountingQuery(n=10**12, known=0, p=0.5, sigma=3.0)\n"
            "q.log_delta(1e-3)   # builds the kernel's pmf cache (1-2 s, not interruptible)\n"
            "print('started', flush=True)\n"
            "q.log_delta(np.linspace(1e-7, 1e-5, 400))   # minutes of C++ work on both cores\n"
            "print('finished', flush=True)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "started"
        time.sleep(1.0)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGUSR1)       # where is it stuck?
            time.sleep(1.0)
            proc.kill()
            out, err = proc.communicate()
            pytest.fail(f"Ctrl-C did not stop the kernels within 20 s; stderr:\n{err[-3000:]}")
        waited = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "KeyboardInterrupt" in err and "finished" not in out
    assert waited < 5, f"Ctrl-C took {waited:.1f} s to stop the kernels"


def _curve_point(args):
    n, known, p, sigma, eps = args
    q = ppk.CountingQuery(n=n, known=known, p=p, sigma=sigma)
    return q.log_delta(eps), q.log_delta_upper(eps)


POINTS = [(n, n // 2, p, s, e) for n in (11, 10_001, 1_000_001) for p in (0.1, 0.5) for s in (0.07, 3.0, 300.0)
          for e in (0.01, 1.0)]


def test_threads_and_processes_give_the_serial_results():
    from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
    serial = [_curve_point(a) for a in POINTS]
    with ThreadPoolExecutor(max_workers=8) as pool:   # the kernels release the GIL and share caches
        assert list(pool.map(_curve_point, POINTS)) == serial
    with ProcessPoolExecutor(max_workers=2) as pool:
        assert list(pool.map(_curve_point, POINTS)) == serial


def _noiseless_far_tail_oracle(N, p, eps, terms=400):
    """log sum_{j >= j0} (w_{j-1} - e^eps w_j) in mpmath for large N: only the ~hundred terms past j0 matter
    (they fall geometrically), each from log-gamma at 50 digits."""
    import mpmath as mp
    with mp.workdps(50):
        p, e = mp.mpf(p), mp.exp(mp.mpf(eps))
        q = 1 - p
        x = e * p * (N + 1) / (q + e * p)
        j0 = int(mp.floor(x)) + 1
        def w(k):
            return mp.exp(mp.loggamma(N + 1) - mp.loggamma(k + 1) - mp.loggamma(N - k + 1) + k * mp.log(p)
                          + (N - k) * mp.log(q))
        total = mp.fsum(w(j - 1) - e * w(j) for j in range(j0, j0 + terms))
        return float(mp.log(total))


@pytest.mark.parametrize("N,p,sigma,eps", [(5, 0.5, 0.0923, 1e-4), (99_998, 0.5, 0.5, 20.0), (10, 0.5, 1e4, 20.0),
                                           (0, 0.5, 3.0, 0.5), (0, 0.5, 1e5, 1.0), (2_999, 0.05, 3.0, 8.0),
                                           (0, 0.5, 1e8, 100.0),    # once -inf: two Mills ratios equal to 1e-18
                                           (0, 0.5, 9.873228288758605e17, 1e-17)])   # once NaN, ya in [1, 10)
def test_certified_bound_is_above_the_truth_at_the_last_bit(N, p, sigma, eps):
    # round-up(x) >= round-to-nearest(x): the bound, rounded up, can never be below the oracle's double
    want = float(oracle.log_delta(N, p, sigma, eps))
    assert query(N, p, sigma).log_delta_upper(eps) >= want


def test_certified_bound_at_a_billion_rows_noiseless():
    # once 7.1e-9 (half an ulp of |log delta| = 7.4e7) below the truth
    want = max(_noiseless_far_tail_oracle(10**9, 0.3, 1.0), _noiseless_far_tail_oracle(10**9, 0.7, 1.0))
    q = query(10**9, 0.3, 0.0)
    assert q.log_delta_upper(1.0) >= want
    assert abs(q.log_delta(1.0) - want) <= 4e-16 * abs(want)


def test_where_the_root_cannot_be_resolved_the_noiseless_curve_bounds_it():
    # n = 5e11, sigma = 3, eps = 1: the loss is ~1e10 in size at the threshold and its rounding moves the
    # root by ~1000 counts; ppk then reports delta(0), an exact upper bound (noise is post-processing).
    # Once the estimate here was e^9300 BELOW the truth.
    N = 499_999_999_999
    want0 = _noiseless_far_tail_oracle(N, 0.5, 1.0)     # p = 1/2: both orders are the same sum
    noisy = query(N, 0.5, 3.0)
    assert noisy.log_delta_upper(1.0) >= noisy.log_delta(1.0) >= want0 - 4e-16 * abs(want0)
    assert noisy.log_delta_upper(1.0) <= want0 + 4e-16 * abs(want0)
