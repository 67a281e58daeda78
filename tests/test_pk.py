"""Passive vs active partial knowledge: brute force, the paper's identities, the headline example."""
import itertools
import math

import mpmath as mp
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ppk
from ppk.related import pk


def _brute(mech, eps):
    """(PPK, APK) by enumerating every value of the known and the unknown rows (definitions 6, 7)."""
    n, p, known = mech.n, mech.p, mech.known
    N = n - known - 1

    def out(count):
        if isinstance(mech, pk.ThresholdCount):
            released = count > mech.threshold if mech.strict else count >= mech.threshold
            return count if released else mech.fill
        return count

    def law(a, known_ones):
        dist = {}
        for rows in itertools.product((0, 1), repeat=N):
            pr = math.prod(p if r else 1 - p for r in rows)
            o = out(known_ones + a + sum(rows))
            dist[o] = dist.get(o, 0.0) + pr
        return dist

    def h(P, Q):
        return sum(max(0.0, P.get(o, 0.0) - math.exp(eps) * Q.get(o, 0.0)) for o in set(P) | set(Q))

    ppk_by_order = {(1, 0): 0.0, (0, 1): 0.0}
    apk = 0.0
    for known_rows in itertools.product((0, 1), repeat=known):
        pr = math.prod(p if r else 1 - p for r in known_rows)
        laws = {a: law(a, sum(known_rows)) for a in (0, 1)}
        for a, b in ppk_by_order:
            hb = h(laws[a], laws[b])
            ppk_by_order[(a, b)] += pr * hb
            if pr > 0:
                apk = max(apk, hb)
    return max(ppk_by_order.values()), apk


@pytest.mark.parametrize("mech", [
    pk.ThresholdCount(n=9, p=0.3, known=3, threshold=4),
    pk.ThresholdCount(n=9, p=0.6, known=4, threshold=3, strict=False, fill=-1),
    pk.ThresholdCount(n=8, p=0.1, known=2, threshold=2),
    pk.Count(n=9, p=0.3, known=3),
])
@pytest.mark.parametrize("eps", [0.0, 0.2, 1.0])
def test_against_brute_force(mech, eps):
    want_ppk, want_apk = _brute(mech, eps)
    assert pk.ppk_delta(mech, eps=eps).delta == pytest.approx(want_ppk, rel=1e-12, abs=1e-300)
    assert pk.apk_delta(mech, eps=eps).delta == pytest.approx(want_apk, rel=1e-12, abs=1e-300)


def test_headline_thresholding_example():
    # n = 1000 voters, P(yes) = 1e-6, count released only above 100, attacker knows 100 votes
    m = pk.ThresholdCount(n=1000, p=1e-6, known=100, threshold=100)
    passive, active = pk.ppk_delta(m, eps=0.1), pk.apk_delta(m, eps=0.1)
    assert passive.delta == 0.0 and -462 * math.log(10) < passive.log_delta < -459 * math.log(10)
    # independent high-precision check of the passive delta: the sum over b and outputs in mpmath
    with mp.workdps(30):
        pp, e = mp.mpf("1e-6"), mp.exp(mp.mpf("0.1"))
        N = 899

        def w(k):
            return mp.binomial(N, k) * pp**k * (1 - pp) ** (N - k) if 0 <= k <= N else mp.mpf(0)
        total = mp.mpf(0)
        for b in range(101):
            pb = mp.binomial(100, b) * pp**b * (1 - pp) ** (100 - b)
            hb = mp.fsum(max(mp.mpf(0), w(o - b - 1) - e * w(o - b)) for o in range(101, 101 + b + 30))
            total += pb * hb
        assert abs(passive.log_delta - float(mp.log(total))) < 1e-9 * abs(passive.log_delta)
    # active: plant 100 yes votes; "no" then gives O = 0 with probability (1 - 1e-6)^899, "yes" never
    assert active.worst_known == 100
    assert active.delta == pytest.approx((1 - 1e-6) ** 899, rel=1e-12)


@given(st.integers(2, 60), st.floats(0.01, 0.99), st.data(), st.floats(0.0, 2.0), st.booleans())
def test_passive_never_exceeds_active(n, p, data, eps, strict):
    known = data.draw(st.integers(0, n - 1))
    threshold = data.draw(st.integers(0, n))
    m = pk.ThresholdCount(n=n, p=p, known=known, threshold=threshold, strict=strict, fill=-1)
    assert pk.ppk_delta(m, eps=eps).log_delta <= pk.apk_delta(m, eps=eps).log_delta + 1e-12


@pytest.mark.parametrize("n,known,p", [(50, 10, 0.3), (200, 0, 0.5), (1000, 999, 0.2)])
def test_without_threshold_passive_equals_active_equals_the_count(n, known, p):
    count = ppk.CountingQuery(n=n, known=known, p=p, sigma=0.0).log_delta(0.3)
    no_threshold = pk.ThresholdCount(n=n, p=p, known=known, threshold=-1, fill=-1)
    for mech in (pk.Count(n=n, p=p, known=known), no_threshold):
        assert pk.ppk_delta(mech, eps=0.3).log_delta == pytest.approx(count, abs=1e-9)
        assert pk.apk_delta(mech, eps=0.3).log_delta == pytest.approx(count, abs=1e-9)
    noisy = pk.NoisyCount(n=n, p=p, known=known, sigma=2.0)
    want = ppk.CountingQuery(n=n, known=known, p=p, sigma=2.0).log_delta(0.3)
    assert pk.ppk_delta(noisy, eps=0.3).log_delta == pytest.approx(want) == pk.apk_delta(noisy, eps=0.3).log_delta


def test_no_knowledge_is_statistical_privacy():
    m = pk.ThresholdCount(n=40, p=0.2, known=0, threshold=5)
    assert pk.ppk_delta(m, eps=0.5).log_delta == pytest.approx(pk.apk_delta(m, eps=0.5).log_delta, abs=1e-12)


@pytest.mark.parametrize("make,word", [
    (lambda: pk.Count(n=10, p=0.5, known=10), "known"),
    (lambda: pk.Count(n=10, p=1.5, known=1), "p"),
    (lambda: pk.ThresholdCount(n=10, p=0.5, known=1, threshold=3, fill=5), "fill"),
    (lambda: pk.NoisyCount(n=10, p=0.5, known=1, sigma=-1.0), "sigma"),
    (lambda: pk.ppk_delta(pk.Count(n=10, p=0.5, known=1), eps=-1.0), "eps"),
])
def test_bad_input(make, word):
    with pytest.raises(ValueError, match=word):
        make()
