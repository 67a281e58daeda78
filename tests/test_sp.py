"""Statistical privacy with random partitions: the paper's tables, exact composition vs brute force."""
import itertools
import math
from collections import defaultdict

import numpy as np
import pytest

from ppk.related import sp


def _truncate(x, digits=4):
    return math.floor(x * 10**digits) / 10**digits


@pytest.mark.parametrize("table", [sp.TABLE_I, sp.TABLE_II], ids=["I", "II"])
def test_tables_regenerate_to_the_printed_digits(table):
    for row in sp.compare_sp_dp(table):
        assert _truncate(row["sigma"]) == row["paper_sigma"]
        assert _truncate(row["delta"]) == row["paper_delta"]
        assert row["dp_queries"] == row["paper_dp_queries"]
        # the exact delta of the same releases is far smaller, and a tight DP accountant allows far more
        assert row["delta_exact"] < row["delta"] / 8
        assert row["dp_queries_exact_gaussian"] > 40 * max(1, row["dp_queries"])


def _brute_partition_delta(n, sizes, p, eps):
    """Enumerate every partition (target = row 0) and every value of the other rows."""
    S = sum(sizes)
    laws = {0: defaultdict(float), 1: defaultdict(float)}
    labels = [k for k, s in enumerate(sizes) for _ in range(s)] + [-1] * (n - S)
    assignments = set(itertools.permutations(labels))
    for a in (0, 1):
        for rows in itertools.product((0, 1), repeat=n - 1):
            pr = math.prod(p if r else 1 - p for r in rows) / len(assignments)
            data = (a,) + rows
            for asg in assignments:
                counts = tuple(sum(d for d, lab in zip(data, asg) if lab == k) for k in range(len(sizes)))
                laws[a][counts] += pr
    e = math.exp(eps)
    return max(sum(max(0.0, laws[a][o] - e * laws[b][o]) for o in set(laws[0]) | set(laws[1]))
               for a, b in ((1, 0), (0, 1)))


@pytest.mark.parametrize("n,sizes", [(6, (3, 3)), (7, (3, 2)), (7, (2, 2, 2)), (6, (2,))])
@pytest.mark.parametrize("p,eps", [(0.5, 0.1), (0.3, 0.7)])
def test_exact_composition_matches_brute_force(n, sizes, p, eps):
    want = _brute_partition_delta(n, sizes, p, eps)
    assert sp.composition_delta_exact(n=n, sizes=sizes, p=p, eps=eps) == pytest.approx(want, rel=1e-10, abs=1e-15)
    assert sp.composition_bound(n=n, sizes=sizes, p=p, eps=eps) >= want * (1 - 1e-12)


def test_known_rows_raise_the_bound_thm_5_2():
    plain = sp.composition_bound(n=1000, sizes=[250] * 4, p=0.5, eps=0.1)
    assert sp.composition_bound(n=1000, sizes=[250] * 4, p=0.5, eps=0.1, known=0) == plain
    more = sp.composition_bound(n=1000, sizes=[250] * 4, p=0.5, eps=0.1, known=600)
    assert plain < more < 1


def test_random_partition_is_a_partition_and_uniform():
    blocks = sp.random_partition(10, [3, 3, 2], rng=1)
    flat = np.concatenate(blocks)
    assert [len(b) for b in blocks] == [3, 3, 2] and len(set(flat)) == 8
    hits = np.zeros(10)
    for seed in range(3000):
        hits[sp.random_partition(10, [2], rng=seed)[0]] += 1
    assert np.allclose(hits / 3000, 0.2, atol=0.03)      # every row is in the block with probability 2/10
    with pytest.raises(ValueError, match="more than n"):
        sp.random_partition(5, [3, 3])


def test_partition_mechanism_releases_only_block_answers():
    data = np.array([1] * 30 + [0] * 70)
    answers = sp.PartitionMechanism(sizes=(50, 50)).release(data, rng=3)
    assert sum(answers) == 30 and len(answers) == 2
    noisy = sp.PartitionMechanism(sizes=(50, 50), sigma=2.0).release(data, rng=3)
    assert all(isinstance(a, int) for a in noisy)


def test_sampling_privacy_curve():
    # no knowledge: the count over the sample; full knowledge of all others: nothing unknown (delta = 1)
    s, n = 200, 1000
    assert sp.sampling_privacy_curve(n=n, sample=s, known=0, p=0.5, eps=0.1) == pytest.approx(
        sp.count_delta(N=s - 1, p=0.5, eps=0.1))
    assert sp.sampling_privacy_curve(n=n, sample=s, known=n - 1, p=0.5, eps=0.1) == pytest.approx(1.0)
    mid = sp.sampling_privacy_curve(n=n, sample=s, known=500, p=0.5, eps=0.1)
    paper = sp.sampling_privacy_curve(n=n, sample=s, known=500, p=0.5, eps=0.1, population="paper")
    assert sp.count_delta(N=s - 1, p=0.5, eps=0.1) < mid < 1 and abs(mid - paper) < 0.01 * mid
    assert sp.sampling_privacy_curve(n=n, sample=s, known=500, p=0.5, eps=0.1, conditional=False) == \
        pytest.approx(mid * s / n)


def test_adaptive_composition_with_a_fixed_policy_is_the_bound():
    est, se = sp.adaptive_composition_bound(n=64, sizes=[16] * 4, p=0.5, eps=0.2, policy=lambda k, a: 0.0,
                                            samples=20, rng=1)
    assert est == pytest.approx(sp.composition_bound(n=64, sizes=[16] * 4, p=0.5, eps=0.2)) and se < 1e-12
    # more noise on later blocks when an earlier answer is large: the estimate carries a standard error
    est2, se2 = sp.adaptive_composition_bound(n=64, sizes=[16] * 4, p=0.5, eps=0.2,
                                              policy=lambda k, a: 3.0 if a and a[0] > 8 else 0.0,
                                              samples=400, rng=2)
    assert est2 < est and se2 > 0


def test_bad_input():
    with pytest.raises(ValueError, match="sizes"):
        sp.composition_bound(n=10, sizes=[], p=0.5, eps=0.1)
    with pytest.raises(ValueError, match="population"):
        sp.sampling_privacy_curve(n=10, sample=5, known=2, p=0.5, eps=0.1, population="n")
    with pytest.raises(ValueError, match="0/1"):
        sp.PartitionMechanism(sizes=(2,)).release([0, 2, 1])
