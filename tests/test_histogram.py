"""HistogramQuery and OverlappingCounts against independent truths (tests/histogram_oracle.py), exact
reductions (the DP limit, k releases of one count, disjoint groups, two categories), properties of
the bracket, calibration and bad input."""
import math

import numpy as np
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import histogram_oracle as O
import ppk
from ppk.baselines import analytic_gaussian_delta, analytic_gaussian_sigma

mp = pytest.importorskip("mpmath")


# -- histograms: sigma = 0 is exact -----------------------------------------------------------
@pytest.mark.parametrize("N, probs, eps", [
    (9, [0.2, 0.2, 0.6], 0.8),   # the issue: 0.2090384060 (a bracket's upper end) against the exact 0.2090351727
    (5, [0.2, 0.3, 0.5], 0.3), (7, [0.1, 0.15, 0.25, 0.5], 0.5), (6, [0.5, 0.25, 0.25], 0.1),
    (8, [0.05, 0.9, 0.05], 1.0), (4, [0.3, 0.7], 0.2), (12, [0.2, 0.3, 0.5], 2.0), (3, [0.6, 0.1, 0.3], 0.0),
    (10, [0.2, 0.3, 0.5], 20.0),  # e^eps beyond N: the closed form (1 - pi_b)^N
    (11, [0.02, 0.9, 0.08], 0.05), (0, [0.3, 0.3, 0.4], 0.5),
])
def test_noiseless_histogram_is_exact_by_default(N, probs, eps):
    # sigma = 0 is a finite sum: with the default rtol both ends are the exact value to 1e-12.  The truth is
    # that of the probabilities over their exact sum (the doubles of [0.3, 0.7] add up to 1 - 5.6e-17)
    total = mp.fsum(mp.mpf(p) for p in probs)
    truth = O.histogram_delta_noiseless(N, [mp.mpf(p) / total for p in probs], eps)
    h = ppk.HistogramQuery(n=N + 1, known=0, probs=probs, sigma=0.0)
    lower, upper = h.log_delta_bracket(eps)
    assert h.exact
    assert float(abs(mp.e ** mp.mpf(upper) / truth - 1)) < 1e-12
    assert float(abs(mp.e ** mp.mpf(lower) / truth - 1)) < 1e-12
    assert mp.e ** mp.mpf(lower) <= truth <= mp.e ** mp.mpf(upper)
    assert h.delta(eps) == min(math.nextafter(math.exp(upper), math.inf), 1.0)   # the upper end, rounded up


@pytest.mark.parametrize("N, probs, eps", [
    (20_000, [0.2, 0.3, 0.5], 0.02), (20_000, [0.2, 0.3, 0.5], 0.3), (50_000, [0.05, 0.15, 0.8], 1.0),
    (3_000, [0.01, 0.49, 0.5], 0.1), (100_000, [0.5, 0.5], 0.05),
])
def test_noiseless_sum_agrees_with_the_kernel_refined_to_every_value_of_m(N, probs, eps):
    # the kernel's bucket bracket refined until it is exact (rtol 1e-15): independent code, same number
    h = ppk.HistogramQuery(n=N + 1, known=0, probs=probs, sigma=0.0)
    lower, upper = h.log_delta_bracket(eps)
    kernel = ppk.HistogramQuery(n=N + 1, known=0, probs=probs, sigma=0.0, rtol=1e-15, max_evaluations=10**6)
    monkey = ppk._histogram_noiseless.NOISELESS_MAX_ROWS
    try:
        ppk._histogram_noiseless.NOISELESS_MAX_ROWS = 0          # force the kernel's path
        k_lower, k_upper = kernel.log_delta_bracket(eps)
    finally:
        ppk._histogram_noiseless.NOISELESS_MAX_ROWS = monkey
    assert upper - lower < 1e-11 * max(1.0, abs(upper))
    assert k_upper - k_lower < 1e-11 * max(1.0, abs(upper))
    assert lower <= k_upper + 1e-12 and k_lower <= upper + 1e-12    # the brackets overlap


def test_past_its_budget_sigma_zero_is_the_kernels_certified_bracket(monkeypatch):
    h = ppk.HistogramQuery(n=5001, known=0, probs=[0.2, 0.3, 0.5], sigma=0.0)
    exact_lo, exact_up = h.log_delta_bracket(0.1)
    monkeypatch.setattr(ppk._histogram_noiseless, "NOISELESS_MAX_ROWS", 10)
    lo, up = h.log_delta_bracket(0.1)
    assert lo <= exact_lo and exact_up <= up and up - lo < 2e-3       # rtol 1e-3, certified
    assert up - lo > 1e-9                                             # (and it is the kernel's bracket)


def test_noiseless_sum_at_ten_million_rows_is_exact():
    h = ppk.HistogramQuery(n=10**7 + 1, known=0, probs=[0.2, 0.2, 0.6], sigma=0.0)
    lower, upper = h.log_delta_bracket(0.05)
    assert upper - lower < 1e-11 * abs(upper) and upper == pytest.approx(-1265.1187166955515, rel=1e-13)


def _pair_lattice_delta(N, pa, pb, rest, eps, max_m=None):
    """One ordered pair's noiseless delta by the full lattice in mpmath (50 digits): sum over the observed
    counts (u, v) of (T(u - 1, v) - e^eps T(u, v - 1))_+, T the trinomial of the unknown rows (only
    u + v <= max_m + 1 when given: for a pair that rarely holds more than a few rows)."""
    with mp.workdps(50):
        total = mp.mpf(pa) + mp.mpf(pb) + mp.mpf(rest)
        a, b, r = (mp.mpf(x) / total for x in (pa, pb, rest))
        e = mp.exp(mp.mpf(eps))
        memo = {}

        def lfact(i):
            if i not in memo:
                memo[i] = mp.loggamma(i + 1)
            return memo[i]

        def T(x, y):
            if x < 0 or y < 0 or x + y > N:
                return mp.mpf(0)
            z = N - x - y
            out = lfact(N) - lfact(x) - lfact(y) - lfact(z) + x * mp.log(a) + y * mp.log(b)
            return mp.exp(out + z * mp.log(r)) if r > 0 else (mp.exp(out) if z == 0 else mp.mpf(0))
        top = N + 2 if max_m is None else max_m + 2
        return mp.fsum(max(T(u - 1, v) - e * T(u, v - 1), 0) for u in range(top) for v in range(top - u))


@pytest.mark.parametrize("N, probs, eps", [
    (60, [0.1, 0.15, 0.75], 0.3), (60, [0.1, 0.1, 0.8], 0.0),       # eps = 0, q = 1/2: thresholds on lattice points
    (60, [0.1, 0.1, 0.8], float(math.log(3.0))),                   # c = 3: the cone's edge through lattice points
    (60, [0.05, 0.2, 0.75], 2.5), (70, [0.3, 0.3, 0.4], 4.0),       # deep: delta ~ e^-60
    (70, [0.3, 0.7], 0.4),                                         # two categories: one row, M = N
])
def test_noiseless_pair_matches_the_full_lattice_in_mpmath(N, probs, eps):
    a, b = sorted(range(len(probs)), key=lambda i: probs[i])[:2]
    rest = math.fsum(p for i, p in enumerate(probs) if i not in (a, b))
    truth = max(_pair_lattice_delta(N, probs[a], probs[b], rest, eps),
                _pair_lattice_delta(N, probs[b], probs[a], rest, eps))
    lower, upper = ppk.HistogramQuery(n=N + 1, known=0, probs=probs, sigma=0.0).log_delta_bracket(eps)
    log_truth = float(mp.log(truth))
    assert lower <= log_truth <= upper
    assert upper - lower < 1e-12 * max(1.0, abs(log_truth))


@pytest.mark.parametrize("p, eps", [(1e-7, 0.5), (1e-300, 0.5), (5e-324, 0.0)])
def test_noiseless_pair_of_nearly_impossible_categories(p, eps):
    # the pair holds a few of a million rows at most: P(M) falls by ~e^700 a row at p = 1e-300, far past the
    # long-double range over the window, and delta is ~1 (M = 0 shows the challenge row).  (The rows' sum
    # once lost its scale there and reported e^-27868.)
    probs = [p, p, 1.0 - 2 * p]
    rest = 1.0 - 2 * p
    truth = _pair_lattice_delta(10**6, p, p, rest, eps, max_m=40)   # the rest of the lattice: < e^-400
    lower, upper = ppk.HistogramQuery(n=10**6 + 1, known=0, probs=probs, sigma=0.0).log_delta_bracket(eps)
    log_truth = float(mp.log(truth))
    assert lower <= log_truth <= upper
    assert upper - lower < 1e-10


def test_noiseless_histogram_curve_is_the_same_however_it_is_asked_for():
    # nothing carried from one eps to the next changes a number: a curve, its points one by one, in reverse
    # order and after other queries of the same law all give the same bits
    h = ppk.HistogramQuery(n=10**6, known=0, probs=[0.05] * 20, sigma=0.0)
    eps = np.array([0.0, 0.01, 0.1, 0.5, 2.0])
    lo, up = h.log_delta_bracket(eps)
    one = np.array([h.log_delta_bracket(float(e)) for e in eps[::-1]])[::-1]
    cold = ppk.HistogramQuery(n=10**6, known=0, probs=[0.05] * 20, sigma=0.0)
    again = cold.log_delta_bracket(eps)
    assert np.array_equal(one[:, 0], lo) and np.array_equal(one[:, 1], up)
    assert np.array_equal(again[0], lo) and np.array_equal(again[1], up)
    assert np.all(np.diff(up) <= 0) and np.all(up - lo < 1e-11 * np.maximum(1.0, np.abs(up)))


# -- histograms: sigma > 0 is bracketed -------------------------------------------------------
@pytest.mark.parametrize("N, probs, sigma, eps", [
    (3, [0.2, 0.3, 0.5], 1.0, 0.3), (4, [0.1, 0.3, 0.6], 0.7, 0.5), (5, [0.3, 0.3, 0.4], 2.0, 0.2),
    (2, [0.45, 0.1, 0.45], 0.5, 1.0), (6, [1 / 3, 1 / 3, 1 / 3], 1.5, 0.05),
    (4, [0.0, 0.4, 0.6], 0.8, 0.3),   # an impossible category: the pair's M is still unknown
])
def test_integrated_truth_lies_in_the_bracket(N, probs, sigma, eps):
    truth = O.histogram_delta_integrated(N, probs, sigma, eps)
    lower, upper = ppk.HistogramQuery(n=N + 1, known=0, probs=probs, sigma=sigma, rtol=1e-12).delta_bracket(eps)
    assert lower < upper   # three categories and noise: a true bracket
    assert lower * (1 - 1e-6) <= truth <= upper * (1 + 1e-6)   # 1e-6: the grid's own error


def test_dp_limit_is_the_gaussian_with_sensitivity_sqrt2():
    eps = np.array([0.0, 0.1, 0.5, 2.0])
    h = ppk.HistogramQuery(n=1000, known=999, probs=[0.2, 0.3, 0.5], sigma=3.0)
    lower, upper = h.delta_bracket(eps)
    np.testing.assert_allclose(upper, analytic_gaussian_delta(sigma=3.0, eps=eps, sensitivity=math.sqrt(2)),
                               rtol=1e-12)
    assert h.exact
    np.testing.assert_allclose(lower, upper, rtol=1e-11)


def test_two_categories_are_exact_and_match_the_one_direction_count():
    # k = 2: M = N is known, so the bracket closes; it is the count (y_a - y_b)/2 with sigma/sqrt 2
    h = ppk.HistogramQuery(n=2001, known=1000, probs=[0.3, 0.7], sigma=2.0, rtol=1e-12)
    lower, upper = h.delta_bracket(0.2)
    assert h.exact and upper == pytest.approx(lower, rel=1e-10)
    count = ppk.CountingQuery(n=2001, known=1000, p=0.3, sigma=2.0 / math.sqrt(2))
    assert upper == pytest.approx(count.delta(0.2), rel=1e-9)   # both orders of a count = both ordered pairs


def test_only_the_two_least_likely_categories_matter():
    probs = [0.4, 0.05, 0.3, 0.07, 0.18]
    h = ppk.HistogramQuery(n=5000, known=0, probs=probs, sigma=1.0)
    assert h.worst_pair() == (1, 3)
    # renaming the other categories, or merging them, changes nothing
    merged = ppk.HistogramQuery(n=5000, known=0, probs=[0.05, 0.07, 0.88], sigma=1.0)
    assert h.delta(0.1) == merged.delta(0.1)


def test_a_large_histogram_is_bracketed_tightly_at_sigma_zero():
    probs = np.random.default_rng(0).dirichlet(np.full(20, 3.0))
    h = ppk.HistogramQuery(n=10**7, known=0, probs=probs, sigma=0.0)
    lower, upper = h.delta_bracket(0.01)
    assert 0 < lower <= upper <= lower * (1 + 1.1e-3)   # the default summation rtol


def test_deep_delta_stays_finite_in_logs():
    h = ppk.HistogramQuery(n=10**6, known=0, probs=[0.1, 0.2, 0.7], sigma=1.0)
    lower, upper = h.log_delta_bracket(1.0)
    assert -1e6 < lower <= upper < -700   # far below the float range, still a bracket


@settings(max_examples=25)
@given(N=st.integers(0, 300), a=st.floats(0.01, 0.45), b=st.floats(0.01, 0.45),
       sigma=st.floats(0.0, 20.0), eps=st.floats(0.0, 3.0))
def test_bracket_is_ordered_and_monotone(N, a, b, sigma, eps):
    h = ppk.HistogramQuery(n=N + 1, known=0, probs=[a, b, 1 - a - b], sigma=sigma, rtol=1e-6)
    lower, upper = h.log_delta_bracket(eps)
    assert lower <= upper <= 0.0
    slack = math.log1p(2e-6)
    assert h.log_delta(eps + 0.1) <= upper + slack                 # non-increasing in eps
    assert h.with_sigma(sigma + 1.0).log_delta(eps) <= upper + slack   # and in sigma


def test_calibration_is_certified_and_beats_plain_dp():
    probs = [0.1, 0.15, 0.25, 0.5]
    cal = ppk.calibrate(ppk.HistogramQuery(n=2_000, known=500, probs=probs, sigma=0.0), eps=0.2, delta=1e-7)
    assert 0 < cal.scale < cal.scale_dp
    assert cal.scale_dp == pytest.approx(analytic_gaussian_sigma(eps=0.2, delta=1e-7, sensitivity=math.sqrt(2)))
    assert cal.query.delta_upper(0.2) <= 1e-7 and cal.delta_achieved <= 1e-7
    below = cal.query.with_sigma(cal.scale * (1 - 1e-4))
    assert below.delta_upper(0.2) > 1e-7   # near the least sigma, not just any private one
    assert 0 < cal.noise_saved < 1


def test_natural_noise_alone_can_suffice():
    cal = ppk.calibrate(ppk.HistogramQuery(n=10**6, known=0, probs=[0.3, 0.3, 0.4], sigma=0.0), eps=0.5, delta=1e-6)
    assert cal.scale == 0.0 and cal.delta_achieved <= 1e-6


@pytest.mark.parametrize("k", [2, 3, 5, 20])
def test_a_floor_on_the_probabilities_releases_for_any_number_of_categories(k):
    counts = [100 + 7 * i for i in range(k)]
    with pytest.warns(ppk.InsecureRandomnessWarning):
        out = ppk.release(counts=counts, known=50, min_prob=0.5 / k, eps=1.0, delta=1e-6, rng=k)
    assert len(out.values) == k and out.calibration.delta_achieved <= 1e-6
    floor = ppk.histogram.floor_probabilities(categories=k, min_prob=0.5 / k)
    if k >= 3:   # one probability per category: the probs=floor_probabilities(...) call works
        assert len(floor) == k and min(floor) == 0.5 / k
        with pytest.warns(ppk.InsecureRandomnessWarning):
            again = ppk.release(counts=counts, known=50, probs=floor, eps=1.0, delta=1e-6, rng=k)
        assert again.calibration.scale == out.calibration.scale
    else:        # two counts: the covering belief has a third category, so min_prob= is the way
        with pytest.raises(ValueError, match="min_prob="):
            ppk.release(counts=counts, known=50, probs=floor, eps=1.0, delta=1e-6)
    with pytest.raises(ValueError, match="not both"):
        ppk.release(counts=counts, known=50, probs=floor, min_prob=0.1 / k, eps=1.0, delta=1e-6)


def test_the_floor_belief_has_the_upper_end_of_two_categories_at_the_floor():
    m = 0.04
    three = ppk.HistogramQuery(n=20_000, known=1000, probs=[m, m, 1 - 2 * m], sigma=2.0)
    for k in (3, 6, 25):
        h = ppk.HistogramQuery(n=20_000, known=1000, probs=ppk.histogram.floor_probabilities(categories=k,
                                                                                          min_prob=m), sigma=2.0)
        assert h.log_delta_bracket(0.3)[1] == pytest.approx(three.log_delta_bracket(0.3)[1], rel=1e-12)


def _strict(text):
    import json
    def refuse(token):
        raise AssertionError(f"non-standard JSON token {token}")
    return json.loads(text, parse_constant=refuse)


def test_histogram_release_record_warns_when_counts_are_exact_and_the_belief_is_stated():
    from ppk._io import strict_json
    exact = ppk.release(counts=[3000, 3000, 4000], known=10, probs=[0.3, 0.3, 0.4], eps=1.0, delta=1e-6)
    assert exact.calibration.scale == 0
    public = _strict(strict_json(exact.public(categories=["a", "b", "c"])))
    assert public["values"] == {"a": 3000, "b": 3000, "c": 4000} and public["noise"] == "none"
    record = public["record"]
    assert record["noise"]["law"] == "none" and record["attacker"]["belief_source"] == "stated_by_steward"
    assert [w.split(":")[0] for w in record["warnings"]] == ["NO NOISE", "STATED BELIEF, NOT STANDARD DP"]
    assert record["guarantee"]["delta_sampler"] == 0.0 and 0.999999e-6 < record["guarantee"]["delta"] <= 1e-6  # no draw
    noisy = ppk.release(counts=[30, 30, 40], known=10, probs=[0.3, 0.3, 0.4], eps=1.0, delta=1e-6)
    g = noisy.public()["record"]["guarantee"]
    assert noisy.calibration.scale > 0 and g["delta_sampler"] == ppk.samplers.sampler_delta(1.0, 3) > 0
    # the samplers' term, added and rounded up (never under-reported), inside the delta asked for
    assert Fraction(g["delta"]) >= Fraction(g["delta_mechanism"]) + Fraction(g["delta_sampler"]) and g["delta"] <= 1e-6


def test_release_histogram_adds_noise_to_every_bin():
    with pytest.warns(ppk.InsecureRandomnessWarning):
        out = ppk.release(counts=[500, 300, 200], known=990, probs=[0.5, 0.3, 0.2], eps=0.5,
                                    delta=1e-6, rng=1)
    assert len(out.values) == 3 and out.insecure_for_testing
    assert out.calibration.scale > 0 and out.values != (500, 300, 200)


@pytest.mark.parametrize("kwargs, match", [
    (dict(probs=[0.5, 0.4]), "probs must sum to 1"),
    (dict(probs=[1.0]), "probs must list at least 2"),
    (dict(probs=[0.5, -0.1, 0.6]), "probs must be >= 0"),
    (dict(probs=[0.5, float("nan"), 0.5]), "probs must be finite"),
    (dict(n=10**11), "n must be <= 10000000000"),
    (dict(known=100), "known must be < n"),
    (dict(sigma=-1.0), "sigma must be >= 0"),
])
def test_histogram_bad_input_names_the_parameter(kwargs, match):
    args = dict(n=100, known=10, probs=[0.2, 0.3, 0.5], sigma=1.0) | kwargs
    with pytest.raises((ValueError, TypeError), match=match):
        ppk.HistogramQuery(**args)


@pytest.mark.parametrize("call, error, match", [
    (lambda: ppk.HistogramQuery(n=100, known=10, probs=[0.2, 0.8], sigma=1.0, lower=np.array(["auto"])), TypeError,
     "lower must be one of"),
    (lambda: ppk.HistogramQuery.worst_case(n=100, known=10, categories=2**62, min_prob=0.1, sigma=1.0), ValueError,
     "categories must be <= 1000000"),
    (lambda: ppk.histogram.floor_probabilities(categories=4, min_prob=0.3), ValueError,
     r"min_prob must be <= 1/categories = 0\.25"),
    (lambda: ppk.calibrate(ppk.HistogramQuery(n=100, known=10, probs=[0.2, 0.8], sigma=0.0, rtol=0.0), eps=1.0,
                           delta=1e-6), ValueError, "rtol must be >= 1e-15"),
    (lambda: ppk.histogram.probabilities("probs", [0.2, 0.8], minimum_length=None), TypeError,
     "minimum_length must be an integer"),
    (lambda: ppk.histogram.probabilities("probs", [0.2, 0.8], minimum_length=3), ValueError,
     "probs must list at least 3 probabilities, got 2"),
    (lambda: ppk.release(counts=5, known=1, probs=[0.2, 0.8], eps=1.0, delta=1e-6), TypeError,
     "counts must be a list"),
    (lambda: ppk.release(counts=[2**62, 2**62], known=1, probs=[0.2, 0.8], eps=1.0, delta=1e-6),
     ValueError, "counts must add up to at most MAX_HISTOGRAM_ROWS"),
    (lambda: ppk.release(count=10, n=100, known=10, eps=1.0, delta=1e-6, audit=np.array([1.0, 2.0])), TypeError,
     "audit must be True or False"),
    (lambda: ppk.samplers.sampler_delta(eps=10**400, draws=1), ValueError, "eps must be finite"),
    (lambda: ppk.samplers.sampler_delta(eps=1.0, draws=None), TypeError, "draws must be an integer"),
])
def test_histogram_and_release_helpers_name_the_bad_parameter(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_the_difference_lower_end_is_dropped_when_its_window_is_refused():
    # N near 1e8 at a small eps: noise.py refuses the difference's window (MAX_CONVOLUTION_WORK); the single
    # bins' lower end stands alone instead of the whole bracket failing
    h = ppk.HistogramQuery(n=10**8, known=0, probs=[0.2, 0.3, 0.5], sigma=1.0, lower="difference")
    lower, upper = h.log_delta_bracket(1e-3)
    single = h._single_bin_lower(np.array([1e-3]))[0]
    assert lower == single and -50 < lower <= upper <= 0


# -- overlapping counts -------------------------------------------------------------------------
def test_k_releases_of_one_count_are_exact():
    o = ppk.OverlappingCounts(atoms={(0, 1, 2): 1000}, p=0.3, sigmas=[2.0, 2.0, 2.0])
    eps = np.array([0.05, 0.2, 1.0])
    lower, upper = o.delta_bracket(eps)
    repeat = ppk.CountingQuery(n=1000, known=0, p=0.3, sigma=2.0).repeat(3).delta(eps)
    assert o.exact
    np.testing.assert_allclose(lower, repeat, rtol=1e-13)
    np.testing.assert_allclose(upper, repeat, rtol=1e-9)


def test_disjoint_groups_are_exact():
    o = ppk.OverlappingCounts(atoms={(0,): 100, (1,): 50}, p=0.3, sigmas=[1.0, 2.0])
    truth = max(ppk.CountingQuery(n=100, known=0, p=0.3, sigma=1.0).delta(0.3),
                ppk.CountingQuery(n=50, known=0, p=0.3, sigma=2.0).delta(0.3))
    lower, upper = o.delta_bracket(0.3)
    assert o.exact and lower == pytest.approx(truth, rel=1e-13) and upper == pytest.approx(truth, rel=1e-9)


def test_a_differencing_pair_is_flagged_and_gives_delta_one():
    with pytest.warns(ppk.ExposureWarning, match=r"\(0,\)"):
        o = ppk.OverlappingCounts(atoms={(0,): 1, (0, 1): 500}, p=0.3, sigmas=[0.0, 0.0])
    assert o.exposed_atoms == [(0,)]
    assert o.delta_bracket(5.0) == (1.0, 1.0)


@pytest.mark.parametrize("atoms, p, sigmas, eps", [
    ({(0,): 2, (0, 1): 2, (1,): 1}, 0.4, [1.0, 1.5], 0.3),
    ({(0,): 1, (0, 1): 3, (1,): 2}, 0.5, [0.8, 0.8], 0.5),
    ({(0,): 3, (0, 1): 1}, 0.2, [1.2, 0.6], 0.1),
])
def test_overlapping_truth_lies_in_the_bracket(atoms, p, sigmas, eps):
    truth = O.overlapping_delta_integrated(atoms, p, sigmas, eps)
    lower, upper = ppk.OverlappingCounts(atoms=atoms, p=p, sigmas=sigmas).delta_bracket(eps)
    assert lower * (1 - 1e-6) <= truth <= upper * (1 + 1e-6)


def test_worst_atom_and_calibration():
    o = ppk.OverlappingCounts(atoms={(0,): 5000, (0, 1): 2000, (1,): 3000}, p=0.3, sigmas=[2.0, 3.0])
    assert o.worst_atom(0.1) == (0, 1)
    cal = ppk.calibrate(o.with_sigmas([1.0, 2.0]), eps=0.1, delta=1e-9)
    assert cal.query.sigmas[1] == pytest.approx(2 * cal.query.sigmas[0]) and cal.scale == cal.query.sigmas[1]
    assert cal.delta_achieved <= 1e-9 and cal.query.delta_upper(0.1) <= 1e-9
    tighter = o.with_sigmas([s * (1 - 1e-6) for s in cal.query.sigmas])
    assert tighter.delta_upper(0.1) > 1e-9


def test_from_membership_counts_the_unknown_rows_by_pattern():
    m = np.array([[1, 0], [1, 1], [1, 1], [0, 1], [0, 0], [1, 0]], dtype=bool)
    o = ppk.OverlappingCounts.from_membership(m, known_rows=[5], p=0.5, sigmas=[1.0, 1.0])
    assert o.atoms == {(0,): 1, (0, 1): 2, (1,): 1, (): 1}
    mask = np.array([False] * 5 + [True])
    assert ppk.OverlappingCounts.from_membership(m, known_rows=mask, p=0.5, sigmas=[1.0, 1.0]).atoms == o.atoms


@pytest.mark.parametrize("call, match", [
    (lambda: ppk.OverlappingCounts.from_membership(np.array([[1, 2]]), p=0.5, sigmas=[1, 1]),
     r"matrix must be boolean .* got 2 at row 0, query 1"),
    (lambda: ppk.OverlappingCounts.from_membership(np.array([True, False]), p=0.5, sigmas=[1, 1]),
     "matrix must be 2-d"),
    (lambda: ppk.OverlappingCounts.from_membership(np.ones((3, 2), bool), known_rows=[7], p=0.5, sigmas=[1, 1]),
     "known_rows must be row indices in"),
    (lambda: ppk.OverlappingCounts(atoms={(0, 2): 5}, p=0.5, sigmas=[1.0, 1.0]), "atoms pattern entry must be <= 1"),
    (lambda: ppk.OverlappingCounts(atoms={(0,): -5}, p=0.5, sigmas=[1.0]), r"atoms\[\(0,\)\] must be >= 0"),
    (lambda: ppk.OverlappingCounts(atoms={(0, 1): 5, (1, 0): 2}, p=0.5, sigmas=[1.0, 1.0]), "twice"),
    (lambda: ppk.OverlappingCounts(atoms={(0,): 5}, p=1.5, sigmas=[1.0]), "p must be <= 1"),
    (lambda: ppk.OverlappingCounts(atoms={(0,): 5}, p=0.5, sigmas=[-1.0]), "sigmas must be >= 0"),
])
def test_overlapping_bad_input_names_the_parameter(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


# -- the command line ---------------------------------------------------------------------------
def _csv(tmp_path, cells):
    path = tmp_path / "data.csv"
    path.write_text("id,color\n" + "".join(f"{i},{c}\n" for i, c in enumerate(cells)))
    return str(path)


def test_cli_histogram_curve_matches_the_api(capsys):
    from ppk.cli import main
    import json
    assert main(["histogram", "--probs", "0.5,0.3,0.2", "--n", "10000", "--known", "5000", "--sigma", "2",
                 "--eps", "0.1", "0.5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    lower, upper = ppk.HistogramQuery(n=10000, known=5000, probs=[0.5, 0.3, 0.2], sigma=2.0).delta_bracket([0.1, 0.5])
    assert [r["delta_upper"] for r in out["curve"]] == pytest.approx(list(upper), rel=1e-12)
    assert [r["delta_lower"] for r in out["curve"]] == pytest.approx(list(lower), rel=1e-12)


def test_cli_histogram_release_is_certified_and_names_bad_rows(tmp_path, capsys):
    from ppk.cli import main
    import json
    path = _csv(tmp_path, ["red", "blue", "green", "red"] * 30)
    argv = ["histogram", "--csv", path, "--column", "color", "--known", "100", "--eps", "1", "--delta", "1e-6",
            "--probs", "red=0.4,blue=0.35,green=0.25", "--seed", "3", "--insecure-for-testing", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["values"]) == {"red", "blue", "green"} and out["delta_achieved"] <= 1e-6
    assert out["sigma"] > 0 and "NOT PRIVATE" in out["warning"]
    bad = _csv(tmp_path, ["red", "blue", "purple", "red"])
    assert main(["histogram", "--csv", bad, "--column", "color", "--known", "0", "--eps", "1", "--delta", "1e-6",
                 "--probs", "red=0.5,blue=0.5"]) == 2
    err = capsys.readouterr()
    assert "line 4" in err.err and "'purple'" in err.err and "nothing was released" in err.err and not err.out


def test_cli_min_prob_release_of_five_age_bands(tmp_path, capsys):
    from ppk.cli import main
    bands = ["0-17", "18-34", "35-54", "55-74", "75+"]
    path = tmp_path / "ages.csv"
    path.write_text("id,age\n" + "".join(f"{i},{bands[i % 5]}\n" for i in range(400)))
    argv = ["histogram", "--csv", str(path), "--column", "age", "--categories", ",".join(bands),
            "--min-prob", "0.05", "--known", "100", "--eps", "1", "--delta", "1e-6"]
    assert main(argv + ["--json"]) == 0           # was: "got 5 counts and 3 probabilities"
    out = _strict(capsys.readouterr().out)
    assert list(out["values"]) == bands and out["record"]["input"]["column"] == "age"
    assert "0.05" in out["record"]["attacker"]["belief"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "released histogram of 'age'" in text and "WARNING: STATED BELIEF" in text


@pytest.mark.parametrize("argv, match", [
    (["--n", "100", "--sigma", "1"], "say what the attacker believes"),
    (["--n", "100", "--sigma", "1", "--probs", "0.5,0.4"], "--probs must sum to 1"),
    (["--n", "100", "--sigma", "1", "--min-prob", "0.1"], "--min-prob needs --categories"),
    (["--n", "100", "--probs", "0.5,0.5"], "--sigma .* is required"),
    (["--csv", "x.csv", "--column", "c", "--eps", "1", "--delta", "1e-6", "--probs", "0.5,0.5"],
     "needs the public list of categories"),
    (["--csv", "x.csv", "--column", "c", "--eps", "1", "--delta", "1e-6", "--categories", "a,b,a", "--min-prob",
      "0.1"], "--categories names 'a' more than once"),
])
def test_cli_histogram_bad_input(argv, match, capsys):
    from ppk.cli import main
    assert main(["histogram", "--known", "0", *argv]) == 2
    import re
    assert re.search(match, capsys.readouterr().err)
