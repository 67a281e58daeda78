"""TablePlan: several noisy counts over one table (docs/table-plans.md), against independent oracles.

The exact deltas of small plans are stored in tests/oracles/table_plan.json (two-dimensional integrals
and exact lattice sums of the definition: tests/oracles/make_table_plan.py, about a minute); the
noiseless case is re-derived live from the generator on every run, so a corrupted file is caught.
"""
from __future__ import annotations

import itertools
import json
import math
import pathlib
import sys

import numpy as np
import pytest

import ppk
from ppk._pair_bound import pair_log_bracket
from ppk.table_plan import TablePlan, _dominant_pairs, histogram_counts, marginal_counts

ORACLES = pathlib.Path(__file__).resolve().parent / "oracles"
STORED = json.loads((ORACLES / "table_plan.json").read_text())["cases"]


def _plan(case, **kwargs) -> TablePlan:
    return TablePlan(n=case["n_unknown"] + 1, known=0, probs=case["probs"],
                     counts=[(tuple(s), sigma) for s, sigma in case["counts"]], **kwargs)


@pytest.mark.parametrize("case", STORED, ids=[c["name"] for c in STORED])
def test_the_bracket_holds_the_exact_delta(case):
    plan = _plan(case, rtol=1e-10)
    lower, upper = plan.delta_bracket(case["eps"])
    truth = np.array([float(d) for d in case["delta"]])
    # the sigma > 0 oracle is a numerical integral good to ~1e-11 relative; the sigma = 0 one is exact
    slack = 1e-9 if any(s > 0 for _, s in case["counts"]) else 1e-13
    assert np.all(lower <= truth * (1 + slack))
    assert np.all(truth <= upper * (1 + slack))
    if plan.exact:   # two categories: the attacker knows M, and the ends meet the truth
        np.testing.assert_allclose(upper, truth, rtol=1e-9)
    if case["name"] == "noiseless_nested":   # the pair bound at sigma = 0 is this plan's delta
        np.testing.assert_allclose(upper, truth, rtol=1e-12)


def test_the_stored_noiseless_oracle_is_rederived():
    sys.path.insert(0, str(ORACLES))
    try:
        import make_table_plan as gen
    finally:
        sys.path.remove(str(ORACLES))
    case = next(c for c in STORED if c["name"] == "noiseless_nested")
    i = 1
    live = gen.plan_delta(case["n_unknown"], case["probs"], [(s, g) for s, g in case["counts"]], case["eps"][i])
    assert repr(live) == case["delta"][i]


def test_a_histogram_plan_is_the_histogram_query():
    probs = [0.5, 0.2, 0.2, 0.1]
    for sigma in (2.0, 0.0):
        h = ppk.HistogramQuery(n=2_000, known=500, probs=probs, sigma=sigma)
        plan = TablePlan.histogram(n=2_000, known=500, probs=probs, sigma=sigma)
        eps = [0.05, 0.5]
        # sigma_eff is rounded down by a few ulps for the pair sum: the plan may only be (very slightly) higher
        np.testing.assert_allclose(plan.delta_upper(eps), h.delta_upper(eps), rtol=1e-9)
        assert np.all(plan.delta_upper(eps) >= h.delta_upper(eps) * (1 - 1e-15))
        assert [{a, b} for a, b, _ in plan.pairs()] == [set(h.worst_pair())]


def _all_pairs_max(plan: TablePlan, eps: float) -> float:
    """max over EVERY pair the plan tells apart of its bound: what the pruning must reproduce."""
    best = -math.inf
    k = len(plan.categories)
    for a, b in itertools.combinations(range(k), 2):
        if plan.public is not None and plan.public[a] != plan.public[b]:
            continue   # the challenge row keeps its public part
        w = sum((math.inf if s == 0 else 1 / s**2) for c, s in zip(plan.count_sets, plan.sigmas)
                if (a in c) != (b in c))
        if w == 0:
            continue
        rest = math.fsum(p for i, p in enumerate(plan.probs) if i not in (a, b))
        _, up = pair_log_bracket(plan.n_unknown, plan.probs[a], plan.probs[b], rest,
                                 sigma_eff=0.0 if math.isinf(w) else 1 / math.sqrt(w), eps=eps, rtol=plan.rtol,
                                 max_evaluations=plan.max_evaluations)
        best = max(best, up)
    return best


@pytest.mark.parametrize("seed", range(4))
def test_the_pruned_pairs_give_the_largest_bound_of_all_pairs(seed):
    rng = np.random.default_rng(seed)
    k = 5
    probs = rng.dirichlet(np.ones(k))
    counts = []
    for _ in range(3):
        members = tuple(int(i) for i in np.flatnonzero(rng.random(k) < 0.5)) or (0,)
        counts.append((members, float(rng.choice([0.7, 1.5, 3.0]))))
    plan = TablePlan(n=400, known=100, probs=probs, counts=counts)
    assert len(plan.pairs()) <= k * (k - 1) // 2
    for eps in (0.1, 1.0):
        assert plan.log_delta_upper(eps) == pytest.approx(_all_pairs_max(plan, eps), rel=1e-3, abs=1e-12)


@pytest.mark.parametrize("seed", range(2))
def test_public_parts_keep_the_challenge_row_in_its_group(seed):
    """A cross-tab of a public column (region) and a private one: only pairs within a region are neighbours, the
    pruning still finds the largest of them, and a count of the public column alone tells no neighbours apart
    (delta = 0 at both ends: its lower end, a count over a region, must not be taken)."""
    rng = np.random.default_rng(10 + seed)
    cells = [(r, d) for r in "NS" for d in "abc"]
    # region S rare: a count over it alone has little natural noise (a wrong lower end would show)
    probs = dict(zip(cells, np.concatenate([0.97 * rng.dirichlet(np.ones(3)), 0.03 * rng.dirichlet(np.ones(3))])))
    region = {c: c[0] for c in cells}
    counts = histogram_counts(probs, sigma=1.5) + [(tuple(c for c in cells if c[1] == "a"), 0.8)]
    plan = TablePlan(n=400, known=100, probs=probs, counts=counts, public=region)
    assert all(a[0] == b[0] for a, b, _ in plan.pairs())
    anyone = TablePlan(n=400, known=100, probs=probs, counts=counts)
    for eps in (0.1, 1.0):
        assert plan.log_delta_upper(eps) == pytest.approx(_all_pairs_max(plan, eps), rel=1e-3, abs=1e-12)
        assert plan.log_delta_upper(eps) <= anyone.log_delta_upper(eps)
    regions = TablePlan(n=400, known=100, probs=probs, counts=marginal_counts(probs, position=0, sigma=1.0),
                        public=region)
    assert regions.pairs() == [] and regions.delta_bracket(0.0) == (0.0, 0.0)
    assert regions.with_scale(2.0).public == regions.public
    # a sharp count of a region beside the plan changes nothing: it moves with no neighbour's change
    noisy = TablePlan(n=400, known=100, probs=probs, counts=histogram_counts(probs, sigma=5.0), public=region)
    sharp = TablePlan(n=400, known=100, probs=probs, public=region,
                      counts=histogram_counts(probs, sigma=5.0) + [(tuple(c for c in cells if c[0] == "S"), 0.2)])
    np.testing.assert_allclose(sharp.log_delta_bracket([0.1, 1.0]), noisy.log_delta_bracket([0.1, 1.0]), rtol=1e-12)
    with pytest.raises(ValueError, match="public must give the public part of exactly"):
        TablePlan(n=400, known=100, probs=probs, counts=counts, public={cells[0]: "N"})
    with pytest.raises(TypeError, match=r"public\[\('N', 'a'\)\] must be a hashable public part"):
        TablePlan(n=400, known=100, probs=probs, counts=counts, public={c: [c[0]] for c in cells})
    with pytest.raises(TypeError, match="public must map"):
        TablePlan(n=400, known=100, probs=probs, counts=counts, public=["N"] * 6)


def test_pairs_the_plan_cannot_tell_apart_cost_nothing():
    # one count over {a, b}: a and b look alike, c and d too; only pairs across the count matter
    pairs = _dominant_pairs([0.1, 0.2, 0.3, 0.4], [frozenset({0, 1})], [2.0])
    assert [(a, b) for a, b, _ in pairs] == [(0, 2)]
    assert pairs[0][2] == pytest.approx(2.0, rel=1e-14) and pairs[0][2] <= 2.0
    # a noiseless count makes sigma_eff 0; a plan that moves nothing has no pair
    assert _dominant_pairs([0.5, 0.5], [frozenset({0})], [0.0]) == [(0, 1, 0.0)]
    assert _dominant_pairs([0.5, 0.5], [frozenset({0, 1})], [1.0]) == []


def test_a_count_beside_the_histogram_keeps_the_natural_noise():
    # the plan, scaled down: the count joins the histogram at a small cost in eps, where
    # accounting the two as plain DP releases lost the natural noise (docs/table-plans.md's example)
    probs = {"A": 0.4, "B": 0.3, "C": 0.15, "D": 0.1, "E": 0.05}
    hist = TablePlan.histogram(n=20_000, known=2_000, probs=probs, sigma=2.0)
    joint = TablePlan(n=20_000, known=2_000, probs=probs,
                      counts=[(("E",), 2.0)] + histogram_counts(probs, sigma=2.0))
    count = ppk.CountingQuery(n=20_000, known=2_000, p=0.05, sigma=2.0)
    single = max(hist.epsilon(1e-10), count.epsilon(1e-10))
    both = joint.epsilon(1e-10)
    assert single <= both <= 1.5 * single
    assert joint.pairs()[0][2] == pytest.approx(2.0 / math.sqrt(3.0), rel=1e-14)   # w = 1/4 + 2/4


def test_calibration_keeps_the_ratios_and_certifies():
    probs = {"A": 0.5, "B": 0.3, "C": 0.2}
    plan = TablePlan(n=5_000, known=1_000, probs=probs,
                     counts=[(("A", "B"), 0.0)] + histogram_counts(probs, sigma=1.0))
    with pytest.raises(ValueError, match="no common scale"):
        plan.dp_scale(eps=0.5, delta=1e-6)
    plan = TablePlan(n=5_000, known=1_000, probs=probs, counts=[(("A", "B"), 2.0)] + histogram_counts(probs, sigma=1.0))
    cal = ppk.calibrate(plan, eps=0.05, delta=1e-8)
    ratios = np.array(cal.query.sigmas) / np.array(plan.sigmas)
    np.testing.assert_allclose(ratios, ratios[0], rtol=1e-15)
    assert cal.query.delta_upper(0.05) <= 1e-8
    assert 0 < cal.scale < cal.scale_dp
    dp = plan.with_scale(cal.scale_dp).without_natural_noise()
    assert dp.delta_upper(0.05) <= 1e-8 * (1 + 1e-9)


def test_marginals_of_a_cross_tab():
    cells = {(x, y): 1 / 6 for x in ("s", "n") for y in ("u", "v", "w")}
    counts = marginal_counts(cells, position=0, sigma=1.0)
    assert sorted(len(c) for c, _ in counts) == [3, 3]
    plan = TablePlan(n=600, known=0, probs=cells, counts=counts + histogram_counts(cells, sigma=4.0))
    # cells that differ in x are told apart by both marginals' counts and two cells: w = 2 + 2/16
    assert min(s for _, _, s in plan.pairs()) == pytest.approx(1 / math.sqrt(2 + 2 / 16), rel=1e-14)
    assert 0 < plan.delta(1.0) < 1


@pytest.mark.parametrize("kwargs, match", [
    (dict(counts=[(("Z",), 1.0)]), "category 'Z'"),
    (dict(counts=[((), 1.0)]), "counts no category"),
    (dict(counts=[(("A",), -1.0)]), r"counts\[0\]'s sigma"),
    (dict(counts=[(("A",), math.nan)]), r"counts\[0\]'s sigma"),
    (dict(counts=[("A", 1.0)]), "collection of categories"),
    (dict(counts="A"), "list of"),
    (dict(counts=[]), "1 to"),
    (dict(probs={"A": 0.5, "B": 0.6}), "sum to 1"),
    (dict(known=10), "known must be < n"),
])
def test_bad_input_names_the_parameter(kwargs, match):
    args = dict(n=10, known=2, probs={"A": 0.5, "B": 0.5}, counts=[(("A",), 1.0)])
    args.update(kwargs)
    with pytest.raises((ValueError, TypeError), match=match):
        TablePlan(**args)


def test_the_accountant_refuses_a_second_release_of_the_same_rows():
    plan = TablePlan.histogram(n=1_000, known=100, probs=[0.5, 0.5], sigma=1.0)
    count = ppk.CountingQuery(n=1_000, known=100, p=0.5, sigma=1.0)
    assert plan._rows_key == count._rows_key


def test_the_worst_case_plan_covers_every_belief_above_the_floor():
    cats = ["A", "B", "C", "D"]
    counts = [(("A", "B"), 1.0)] + histogram_counts(cats, sigma=2.0)
    worst = TablePlan.worst_case(n=3_000, known=500, categories=cats, counts=counts, min_prob=0.1)
    pair = {worst.pairs()[0][0], worst.pairs()[0][1]}
    assert pair & {"A", "B"} and pair & {"C", "D"}   # the pair the extra count separates: the least noise
    rng = np.random.default_rng(7)
    for _ in range(3):   # beliefs with every category >= 0.1
        probs = 0.1 + 0.6 * rng.dirichlet(np.ones(4))
        plan = TablePlan(n=3_000, known=500, probs=dict(zip(cats, probs)), counts=counts)
        assert plan.delta_upper(0.3) <= worst.delta_upper(0.3)
    with pytest.raises(ValueError, match="min_prob must be <= 1/categories"):
        TablePlan.worst_case(n=10, known=0, categories=cats, counts=counts, min_prob=0.3)
    with pytest.raises(ValueError, match="at least three"):
        TablePlan.worst_case(n=10, known=0, categories=["A", "B"], counts=counts[:1], min_prob=0.1)
