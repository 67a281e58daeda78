"""k-ary shuffled randomized response (docs/shuffle.md, "k-ary"): the certified bracket against the 50-digit
brute force of tests/oracles/shuffle_kary.json (every report histogram enumerated), at k = 3, 4 and 8."""
import math

import numpy as np
import pytest

import ppk
from ppk._shuffle_kary import _thetas, pair_log_bracket, rr_probs, standard_lower_log_delta
from oracles import load

VALUES = load("shuffle_kary")["values"]

IID = {"iid/k3_n7_e2_0.3_skew": (7, 3, 2.0, 0.3, (0.2, 0.5, 0.3)),
       "iid/k3_n6_e1_0.2_uniform": (6, 3, 1.0, 0.2, None),
       "iid/k4_n6_e2_0.5_uniform": (6, 4, 2.0, 0.5, None),
       "iid/k4_n5_e3_1.5_uniform": (5, 4, 3.0, 1.5, None),
       "iid/k8_n5_e2_0.4_uniform": (5, 8, 2.0, 0.4, None),
       "iid/k8_n4_e4_1_uniform": (4, 8, 4.0, 1.0, None)}
# n in the hundreds: every lattice point of the merged trinomial in mpmath (rows longer than one anchor block)
TRINOMIAL = {"trinomial/k3_n300_e2_0.2_skew": (300, 3, 2.0, 0.2, (0.2, 0.5, 0.3)),
             "trinomial/k4_n300_e1_0.5_uniform": (300, 4, 1.0, 0.5, None),
             "trinomial/k8_n200_e3_2.5_uniform": (200, 8, 3.0, 2.5, None),
             "trinomial/k16_n250_e2_0.3_uniform": (250, 16, 2.0, 0.3, None)}


def _pair01(n, k, eps0, eps, probs):
    """Both orders of the pair (0, 1), as the oracle."""
    p = np.full(k, 1.0 / k) if probs is None else np.array(probs)
    ends = [pair_log_bracket(n=n, k=k, eps0=eps0, theta1=t[0], theta2=t[1], theta3=t[2], eps=eps)
            for t in (_thetas(eps0, k, p, 0, 1), _thetas(eps0, k, p, 1, 0))]
    return max(a for a, _ in ends), max(b for _, b in ends)


@pytest.mark.parametrize("name", sorted(IID))
def test_iid_belief_matches_the_brute_force(name):
    n, k, eps0, eps, probs = IID[name]
    low, up = _pair01(n, k, eps0, eps, probs)
    ref = float(VALUES[name])
    assert math.exp(low) <= ref <= math.exp(up), name
    assert up - low < 2e-13, name                     # measured 7e-14 to 1.1e-13


@pytest.mark.parametrize("name", sorted(TRINOMIAL))
def test_larger_n_matches_every_lattice_point(name):
    n, k, eps0, eps, probs = TRINOMIAL[name]
    low, up = _pair01(n, k, eps0, eps, probs)
    ref = float(VALUES[name])
    assert math.exp(low) <= ref <= math.exp(up), name
    assert up - low < 2e-11, name                     # measured 1.6e-12 to 1.0e-11


def test_the_public_class_is_the_supremum_over_pairs():
    # uniform belief: every ordered pair is the same, so the class equals the pair (0, 1)
    q = ppk.ShuffledRandomizedResponse(n=6, eps0=2.0, categories=4, known=0)
    low, up = q.delta_bracket(0.5)
    assert low <= float(VALUES["iid/k4_n6_e2_0.5_uniform"]) <= up
    # a skewed belief at k = 3: the supremum over the six ordered pairs is at least the pair (0, 1)'s
    skew = ppk.ShuffledRandomizedResponse(n=7, eps0=2.0, categories=3, known=0, probs=(0.2, 0.5, 0.3))
    assert skew.delta_bracket(0.3)[1] >= float(VALUES["iid/k3_n7_e2_0.3_skew"])
    assert skew.delta(2.0) == 0.0 and skew.delta(2.5) == 0.0      # the loss never exceeds eps0


def test_every_other_user_in_the_pair_is_exact_and_a_lower_end_of_the_supremum():
    # all other users hold value 0: their reports outside the pair are uniform there, so the two counts are
    # sufficient and the assignment's delta is exact (k = 3, 4, 8)
    for name, n, k, eps0, eps in (("assign/k3_n6_e2_0.5_all0", 6, 3, 2.0, 0.5),
                                  ("assign/k4_n6_e2_0.5_all0", 6, 4, 2.0, 0.5),
                                  ("assign/k8_n5_e2_1_all0", 5, 8, 2.0, 1.0)):
        a, b = rr_probs(eps0, k)
        ends = [pair_log_bracket(n=n, k=k, eps0=eps0, theta1=t1, theta2=t2, theta3=(k - 2) * b, eps=eps)
                for t1, t2 in ((a, b), (b, a))]
        ref = float(VALUES[name])
        assert math.exp(max(e[0] for e in ends)) <= ref <= math.exp(max(e[1] for e in ends)), name
    # the standard shuffle-DP lower end never exceeds the brute-force supremum over every assignment, and at
    # k = 3 (the third count is determined) it reaches it where an all-equal assignment is the worst
    sup = VALUES["sup/k3_n6_e2_0.5"]
    assert sup["argmax"] == [0, 0, 5]
    assert math.isclose(math.exp(standard_lower_log_delta(n=6, eps0=2.0, categories=3, eps=0.5)),
                        float(sup["delta"]), rel_tol=1e-12)
    for key, k, eps in (("sup/k3_n6_e2_1.4", 3, 1.4), ("sup/k4_n5_e2_0.5", 4, 0.5)):
        n = 6 if k == 3 else 5
        assert math.exp(standard_lower_log_delta(n=n, eps0=2.0, categories=k, eps=eps)) <= float(VALUES[key]["delta"])


def test_the_counts_outside_the_pair_inform_when_known_values_lie_outside_it():
    # k = 4, every other user holds value 2: the attacker reading only the pair's counts gets less than the
    # whole histogram gives (which is why the worst case over known values is not claimed exact), and the
    # split of those users over 2 and 3 changes delta (the counts are not sufficient)
    whole = float(VALUES["assign/k4_n6_e2_0.5_all2"])
    split = float(VALUES["assign/k4_n6_e2_0.5_split23"])
    a, b = rr_probs(2.0, 4)
    pair_only = pair_log_bracket(n=6, k=4, eps0=2.0, theta1=b, theta2=b, theta3=a + b, eps=0.5)
    assert math.exp(pair_only[0]) <= split and whole / math.exp(pair_only[1]) - 1 > 3e-4   # measured 3.7e-4
    assert whole / split - 1 > 3e-4


def test_standard_bracket_holds_the_brute_force_supremum():
    # every assignment of the other users' values enumerated (oracle): inside [all-equal assignments, clones
    # that keep their coins], and the upper end below the stronger clone bound (FMT23), which reveals more
    from ppk.related.shuffle_clones import clone_bound_delta
    for key, n, k, eps0, eps in (("sup/k3_n6_e2_0.5", 6, 3, 2.0, 0.5), ("sup/k3_n6_e2_1.4", 6, 3, 2.0, 1.4),
                                 ("sup/k4_n5_e2_0.5", 5, 4, 2.0, 0.5), ("sup/k8_n4_e2_0.5", 4, 8, 2.0, 0.5),
                                 ("sup/k8_n4_e3_2", 4, 8, 3.0, 2.0)):
        q = ppk.ShuffledRandomizedResponse(n=n, eps0=eps0, categories=k)
        low, up = q.delta_bracket(eps)
        assert low <= float(VALUES[key]["delta"]) <= up <= clone_bound_delta(n=n, eps0=eps0, eps=eps, variant="fmt23"), key
    # n = 3000, eps0 = 4: at eps = 0.3 the bracket is 0.31 % wide and FMT23 4.2 % above its upper end; at
    # eps = 0.8 (delta ~ 1.3e-6) 3.9 % and 17 %
    q = ppk.ShuffledRandomizedResponse(n=3000, eps0=4.0, categories=3)
    for eps, width, fmt in ((0.3, 1.005, 1.03), (0.8, 1.05, 1.15)):
        low, up = q.delta_bracket(eps)
        assert 0 < low <= up <= width * low and clone_bound_delta(n=3000, eps0=4.0, eps=eps, variant="fmt23") > fmt * up


def test_refusals_name_the_parameter():
    with pytest.raises(ValueError, match="known"):
        ppk.ShuffledRandomizedResponse(n=100, eps0=1.0, categories=3, known=50)
    with pytest.raises(ValueError, match="probs"):
        ppk.ShuffledRandomizedResponse(n=100, eps0=1.0, categories=4, known=0, probs=(0.1, 0.2, 0.3, 0.4))
    with pytest.raises(ValueError, match="probs"):
        ppk.ShuffledRandomizedResponse(n=100, eps0=1.0, categories=3, probs=(0.1, 0.2, 0.7))
    with pytest.raises(ValueError, match="categories"):
        ppk.ShuffledRandomizedResponse(n=100, eps0=1.0, categories=17, known=0)
    with pytest.raises(ValueError, match="n=1000000 with eps0=0.5"):      # 755,073 clones: too many curves
        ppk.ShuffledRandomizedResponse(n=1_000_000, eps0=0.5, categories=3)
    with pytest.raises(ValueError, match="p"):
        ppk.ShuffledRandomizedResponse(n=100, eps0=1.0, categories=3, known=0, p=0.5)
    assert ppk.ShuffledRandomizedResponse(n=100, eps0=1.0, categories=2).delta(0.5) > 0   # binary unchanged


def test_extremes_are_finite():
    q = ppk.ShuffledRandomizedResponse(n=1, eps0=3.0, categories=5, known=0)     # the challenge user alone
    a, b = rr_probs(3.0, 5)
    assert math.isclose(q.delta(0.5), a - math.exp(0.5) * b, rel_tol=1e-12)
    assert ppk.ShuffledRandomizedResponse(n=50, eps0=0.0, categories=3, known=0).delta(0.0) == 0.0
    assert ppk.ShuffledRandomizedResponse(n=50, eps0=0.0, categories=3).delta(0.0) == 0.0
    alone = ppk.ShuffledRandomizedResponse(n=1, eps0=3.0, categories=5).delta_bracket(0.5)
    assert math.isclose(alone[1], a - math.exp(0.5) * b, rel_tol=1e-9) and alone[0] <= alone[1]
    big = ppk.ShuffledRandomizedResponse(n=200, eps0=700.0, categories=16, known=0).delta_bracket(1.0)
    assert all(math.isfinite(v) for v in big) and big[0] <= big[1]


def test_calibration_moves_the_other_value_probability():
    # more probability on the other values is more noise (k-ary randomized response composed with another is
    # k-ary randomized response); the calibrated query reaches delta, plain DP's needs more noise
    q = ppk.ShuffledRandomizedResponse(n=100, eps0=1.0, categories=4)
    cal = ppk.calibrate(q, eps=0.5, delta=1e-6, rtol=1e-3)
    assert cal.reason == "search" and 0 < cal.scale < cal.scale_dp < 0.25
    assert cal.query.delta(0.5) <= 1e-6 < q.with_scale(cal.scale * 0.999).delta(0.5)
    a, b = rr_probs(0.5, 4)
    assert math.isclose(q.dp_scale(eps=0.5, delta=1e-6), (1 - 1e-6) / (3 + math.exp(0.5)), rel_tol=1e-15)
    assert q.without_natural_noise().n == 1


def test_large_eps0_stays_finite_on_both_attackers():
    # a = 1 - 3e-18 rounds to 1: the kernel gets the complement (formed without cancellation)
    for eps0 in (40.0, 700.0):
        for kw in ({"known": 0}, {}):
            low, up = ppk.ShuffledRandomizedResponse(n=1000, eps0=eps0, categories=4, **kw).delta_bracket(1.0)
            assert 0 < low <= up <= 1.0 and math.isfinite(low)
    # a uniform belief keeps natural noise with no coins at all (the values themselves are unknown)
    low, up = ppk.ShuffledRandomizedResponse(n=1000, eps0=700.0, categories=4, known=0).delta_bracket(1.0)
    assert up < 1e-26


def test_the_buckets_bound_the_sum_over_every_clone_count():
    # the standard upper end sums P(C) delta_iid(C + 1) over the clones' number in buckets; against the sum
    # over every C (each curve's upper end) it is above and within its rtol (1e-2 by default)
    from ppk._kernels import binom_logpmf
    from ppk._shuffle_kary_standard import clone_coins_log_delta
    n, eps0, k, eps = 2000, 4.0, 3, 0.6
    a, b = rr_probs(eps0, k)
    logw = binom_logpmf(n - 1, 2 * b / (a + b), np.arange(n))
    full = -math.inf
    for c in np.nonzero(logw > logw.max() - 50)[0]:
        up = pair_log_bracket(n=int(c) + 1, k=k, eps0=eps0, theta1=(a + b) / 2, theta2=(a + b) / 2,
                              theta3=(k - 2) * b, eps=eps)[1]
        full = float(np.logaddexp(full, logw[c] + up))
    assert full <= clone_coins_log_delta(n=n, eps0=eps0, categories=k, eps=eps) <= full + 1.1e-2
    assert full <= clone_coins_log_delta(n=n, eps0=eps0, categories=k, eps=eps, rtol=1e-3) <= full + 1.1e-3


def _lattice_log_delta(n, k, eps0, eps, th):
    """Every lattice point (h1, h2) of the merged trinomial in float64 (log space, lgamma): the definition of the
    pair's sum, independent of the kernel's walks and bounds, ~1e-12 relative."""
    a, b = rr_probs(eps0, k)
    alpha, beta, gamma = a - math.exp(eps) * b, b - math.exp(eps) * a, math.expm1(eps) * (k - 2) * b
    h1, h2 = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    h3 = n - h1 - h2
    ok = h3 >= 0
    h1, h2, h3 = h1[ok], h2[ok], h3[ok]
    L = alpha * h1 / th[0] + beta * h2 / th[1] - gamma * h3 / th[2]
    lg = np.vectorize(math.lgamma)
    logm = (math.lgamma(n + 1) - lg(h1 + 1.0) - lg(h2 + 1.0) - lg(h3 + 1.0) + h1 * math.log(th[0])
            + h2 * math.log(th[1]) + h3 * math.log(th[2]) - math.log(n))
    v = logm[L > 0] + np.log(L[L > 0])
    return float(np.logaddexp.reduce(v))


@pytest.mark.parametrize("n, k, eps0, eps, kind", [(150, 4, 3.0, 1.6, "x'"), (120, 3, 2.0, 1.2, "third"),
                                                   (150, 8, 1.0, 0.3, "clone"), (100, 16, 4.0, 0.5, "x")])
def test_the_pieces_left_out_are_bounded(n, k, eps0, eps, kind):
    # the kernel leaves to bounds what lies below e^-depth of the sum: the rows' crude bounds (L <= c1 h1, and the
    # geometric series over the rows beyond one) and the walks' geometric tails (docs/shuffle.md, k-ary); a negative
    # depth leaves most of the sum to them, so each must hold for the upper end to stay above every lattice point's
    # sum.  Mutation check: dropping the walks' tails, or the rows beyond, or the factor h1 of the crude bound, fails.
    a, b = rr_probs(eps0, k)
    th = {"x": (a, b, (k - 2) * b), "x'": (b, a, (k - 2) * b), "third": (b, b, a + (k - 3) * b),
          "clone": ((a + b) / 2, (a + b) / 2, (k - 2) * b)}[kind]
    ref = _lattice_log_delta(n, k, eps0, eps, th)
    for depth in (-8.0, -3.0, 0.0, 40.0):
        low, up = pair_log_bracket(n=n, k=k, eps0=eps0, theta1=th[0], theta2=th[1], theta3=th[2], eps=eps,
                                   depth=depth)
        assert low - 1e-11 <= ref <= up + 1e-11, (depth, low - ref, up - ref)
    assert up - low < 1e-11                                               # depth 40: the whole sum, exact


def test_epsilon_never_exceeds_eps0():
    # delta = 0 from eps0 on, so the certified eps is at most eps0 (the search's start is capped there: started
    # past it, the search returned 8.00001 at eps0 = 8)
    q = ppk.ShuffledRandomizedResponse(n=1000, eps0=8.0, categories=3)
    assert q.epsilon(1e-6) <= 8.0


def test_huge_coefficients_of_L_stay_certified():
    # a theta near b ~ e^-eps0 makes L's coefficients e^(eps + eps0): L's rounding is bounded at each cell (16u of
    # c1 h1 + |c2| h2 + c3 h3, not of its largest value on the row) and past 1e300 L is summed scaled.  Every other
    # user on x' or on a third value: delta = 1 - O((n + 1) e^(eps - eps0)), log delta within 1e-11 of 0.  (main:
    # (-9800, +119.9) at eps0 = 200 and (-inf, -inf) at eps0 = 700)
    for eps0, eps in ((200.0, 150.0), (700.0, 350.0)):
        a, b = rr_probs(eps0, 4)
        for th in ((b, a, 2 * b), (b, b, a + b)):
            low, up = pair_log_bracket(n=50, k=4, eps0=eps0, theta1=th[0], theta2=th[1], theta3=th[2], eps=eps)
            assert -1e-11 < low <= up < 1e-11, (eps0, th, low, up)


def test_far_in_the_tails_the_clone_sum_stays_near_the_sum_over_every_clone_count():
    # below lo = mean - 12 sd the clone counts were bounded by P(C < lo) times the curve at C = 0, which far in the
    # tails was most of the upper end (main: e^-86.7 here); a ladder of buckets below lo bounds them by P(C < e)
    # times the curve at the next rung (docs/shuffle.md, k-ary).  Reference: every C in buckets of 25, each
    # bucket's mass times the curve (non-increasing in C) at its ends.
    from ppk._kernels import binom_logpmf
    from ppk._shuffle_kary_standard import clone_coins_log_delta
    n, eps0, k, eps = 3000, 2.0, 4, 1.0
    a, b = rr_probs(eps0, k)
    logw = binom_logpmf(n - 1, 2 * b / (a + b), np.arange(n))
    grid = list(range(0, n, 25)) + [n]
    lower = upper = -math.inf
    for g0, g1 in zip(grid, grid[1:]):
        w = float(np.logaddexp.reduce(logw[g0:g1]))
        ends = [pair_log_bracket(n=g + 1, k=k, eps0=eps0, theta1=(a + b) / 2, theta2=(a + b) / 2, theta3=(k - 2) * b,
                                 eps=eps) for g in (g0, min(g1, n - 1))]
        lower = float(np.logaddexp(lower, w + ends[1][0])) if g1 < n else lower
        upper = float(np.logaddexp(upper, w + ends[0][1]))
    got = clone_coins_log_delta(n=n, eps0=eps0, categories=k, eps=eps)
    assert lower <= got <= upper, (lower, got, upper)       # measured -171.3 <= -169.4 <= -165.1


def test_the_user_limit_says_it_is_the_k_ary_one():
    # "n must be <= 1000000" read as the shuffle's limit; binary reports take up to 10^9
    with pytest.raises(ValueError, match=r"n=1000001 is more users than the k-ary search takes .* binary reports"):
        ppk.ShuffledRandomizedResponse(n=10 ** 6 + 1, eps0=2.0, categories=4)
