"""The clone bound on shuffled randomized response (ppk.related.shuffle_clones) against independent oracles.

Oracles: the clone pair's hockey-stick divergence summed over every outcome with mpmath (50 digits),
the exact delta of shuffled binary randomized response by brute force over every split of the other
users' inputs (mpmath), and the bracket published by the reference code (apple/ml-shuffling-amplification).
"""
import math

import mpmath as mp
import pytest

from ppk.related.shuffle_clones import clone_bound_delta, clone_bound_epsilon, rr_dp_delta, rr_dp_epsilon

mp.mp.dps = 50


def _clone_p(eps0, variant):
    e0 = mp.e ** mp.mpf(eps0)
    return 1 / e0 if variant == "fmt21" else 2 / (e0 + 1)


def _pair_deltas(n, eps0, variant, eps_list):
    """Both orders of the hockey-stick divergence of P = (A + D, C - A + 1 - D), Q = (A + 1 - D, C - A + D)
    over every outcome (x, y): C ~ Bin(n - 1, p), A ~ Bin(C, 1/2), D ~ Bern(e^eps0/(e^eps0 + 1))."""
    e0 = mp.e ** mp.mpf(eps0)
    alpha, p = e0 / (e0 + 1), _clone_p(eps0, variant)
    P, Q = {}, {}
    for c in range(n):
        pc = mp.binomial(n - 1, c) * p ** c * (1 - p) ** (n - 1 - c)
        for a in range(c + 1):
            w = pc * mp.binomial(c, a) / mp.mpf(2) ** c
            # D = 1 puts the target on the first count under P and on the second under Q
            for key, wp, wq in (((a + 1, c - a), alpha, 1 - alpha), ((a, c - a + 1), 1 - alpha, alpha)):
                P[key] = P.get(key, 0) + w * wp
                Q[key] = Q.get(key, 0) + w * wq
    out = []
    for eps in eps_list:
        k = mp.e ** mp.mpf(eps)
        out.append((mp.fsum(max(0, P[s] - k * Q[s]) for s in P), mp.fsum(max(0, Q[s] - k * P[s]) for s in P)))
    return out


@pytest.mark.parametrize("variant", ["fmt21", "fmt23"])
@pytest.mark.parametrize("n,eps0", [(5, 0.5), (5, 4.0), (12, 2.0), (20, 3.0), (50, 1.0), (50, 4.0)])
def test_matches_brute_force_over_every_outcome(n, eps0, variant):
    eps_list = [0.0, 0.05 * eps0, 0.3 * eps0, 0.8 * eps0, 0.999 * eps0]
    for eps, (d_pq, d_qp) in zip(eps_list, _pair_deltas(n, eps0, variant, eps_list)):
        assert abs(d_pq - d_qp) <= mp.mpf(10) ** -40 * d_pq        # the pair is symmetric
        got = clone_bound_delta(n=n, eps0=eps0, eps=eps, variant=variant)
        assert got == pytest.approx(float(d_pq), rel=1e-10, abs=0.0), (eps, got, d_pq)


def test_anchor_bracket_at_a_million_users():
    # The reference code bisects eps 10 times below its closed-form bound (0.2016 here), so its ends are
    # multiples of 0.2016/2^10 = 1.97e-4, rounded up: its lower end 0.049416 stands for (0.049219, 0.049416].
    eps = clone_bound_epsilon(n=10**6, eps0=4.0, delta=1e-6)
    print(f"clone bound (fmt21) at n = 1e6, eps0 = 4, delta = 1e-6: eps = {eps:.9f}")
    grid = 0.20161 / 2 ** 10
    assert 0.049416 - grid < eps <= 0.050203
    assert clone_bound_delta(n=10**6, eps0=4.0, eps=eps) <= 1e-6
    assert clone_bound_delta(n=10**6, eps0=4.0, eps=eps * (1 - 1e-6)) > 1e-6
    stronger = clone_bound_epsilon(n=10**6, eps0=4.0, delta=1e-6, variant="fmt23")
    print(f"stronger clones (fmt23): eps = {stronger:.9f}")
    assert stronger < eps


@pytest.mark.parametrize("variant", ["fmt21", "fmt23"])
def test_monotone_in_eps_and_in_n(variant):
    eps_grid = [0.0, 0.01, 0.05, 0.1, 0.3, 1.0, 2.0, 2.9]
    for n in (2, 100, 10**4):
        d = [clone_bound_delta(n=n, eps0=3.0, eps=e, variant=variant) for e in eps_grid]
        assert all(x >= y for x, y in zip(d, d[1:])), d
        assert d[0] > d[-1] > 0.0
    for eps in (0.05, 0.5):
        d = [clone_bound_delta(n=n, eps0=3.0, eps=eps, variant=variant) for n in (2, 10, 100, 10**3, 10**5)]
        assert all(x >= y for x, y in zip(d, d[1:])), d
    assert clone_bound_delta(n=10**5, eps0=3.0, eps=3.0, variant=variant) == 0.0


def _exact_shuffled_rr_delta(n, eps0, eps):
    """sup over k (others with input 1) and both orders of the hockey-stick divergence between the counts
    S0 = Bin(k, 1 - r) + Bin(n - 1 - k, r) + Bern(r) and S1 = same + Bern(1 - r), r = 1/(1 + e^eps0)."""
    r = 1 / (1 + mp.e ** mp.mpf(eps0))
    e = mp.e ** mp.mpf(eps)

    def conv(f, g):
        return [mp.fsum(f[i] * g[j - i] for i in range(max(0, j - len(g) + 1), min(j, len(f) - 1) + 1))
                for j in range(len(f) + len(g) - 1)]

    def binom(m, q):
        return [mp.binomial(m, i) * q ** i * (1 - q) ** (m - i) for i in range(m + 1)]

    best = mp.mpf(0)
    for k in range(n):
        others = conv(binom(k, 1 - r), binom(n - 1 - k, r))
        s0, s1 = conv(others, [1 - r, r]), conv(others, [r, 1 - r])
        best = max(best, mp.fsum(max(0, x - e * y) for x, y in zip(s0, s1)),
                   mp.fsum(max(0, y - e * x) for x, y in zip(s0, s1)))
    return best


@pytest.mark.parametrize("n,eps0", [(2, 1.0), (5, 0.5), (5, 3.0), (12, 2.0), (20, 3.0), (30, 1.0)])
def test_bound_is_above_exact_shuffled_randomized_response(n, eps0):
    for eps in (0.0, 0.1 * eps0, 0.5 * eps0, 0.9 * eps0):
        exact = float(_exact_shuffled_rr_delta(n, eps0, eps))
        fmt23 = clone_bound_delta(n=n, eps0=eps0, eps=eps, variant="fmt23")
        fmt21 = clone_bound_delta(n=n, eps0=eps0, eps=eps)
        assert exact <= fmt23 * (1 + 1e-12) and fmt23 <= fmt21 * (1 + 1e-12), (eps, exact, fmt23, fmt21)
        assert fmt21 <= rr_dp_delta(eps0=eps0, eps=eps) * (1 + 1e-12)     # shuffling never hurts


def test_randomized_response_alone():
    for eps0 in (0.1, 1.0, 4.0):
        for eps in (0.0, 0.5 * eps0, eps0, 2 * eps0):
            e0 = mp.e ** eps0
            want = max(0, (e0 - mp.e ** eps) / (1 + e0))
            assert rr_dp_delta(eps0=eps0, eps=eps) == pytest.approx(float(want), rel=1e-14, abs=0.0)
        for delta in (1e-9, 1e-3, 0.3):
            eps = rr_dp_epsilon(eps0=eps0, delta=delta)
            if delta < rr_dp_delta(eps0=eps0, eps=0.0):
                assert rr_dp_delta(eps0=eps0, eps=eps) == pytest.approx(delta, rel=1e-12)
            else:
                assert eps == 0.0
    assert rr_dp_epsilon(eps0=1.0, delta=0.999) == 0.0
    # n = 2 and a clone probability near 0: the pair is randomized response itself (its row C = 0)
    assert clone_bound_delta(n=2, eps0=20.0, eps=1.0) == pytest.approx(rr_dp_delta(eps0=20.0, eps=1.0), rel=1e-8)


@pytest.mark.parametrize("call,name", [
    (lambda: clone_bound_delta(n=1, eps0=1.0, eps=0.1), "n"),
    (lambda: clone_bound_delta(n=2.5, eps0=1.0, eps=0.1), "n"),
    (lambda: clone_bound_delta(n=10, eps0=0.0, eps=0.1), "eps0"),
    (lambda: clone_bound_delta(n=10, eps0=math.inf, eps=0.1), "eps0"),
    (lambda: clone_bound_delta(n=10, eps0=1.0, eps=-0.1), "eps"),
    (lambda: clone_bound_delta(n=10, eps0=1.0, eps=0.1, variant="fmt99"), "variant"),
    (lambda: clone_bound_epsilon(n=10, eps0=1.0, delta=0.0), "delta"),
    (lambda: clone_bound_epsilon(n=10, eps0=1.0, delta=1.0), "delta"),
    (lambda: rr_dp_delta(eps0=-1.0, eps=0.1), "eps0"),
    (lambda: rr_dp_epsilon(eps0=1.0, delta=1.5), "delta"),
])
def test_errors_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        call()


def test_arguments_are_keyword_only():
    with pytest.raises(TypeError):
        clone_bound_delta(10, 1.0, 0.1)     # type: ignore[misc]
