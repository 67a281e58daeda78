"""Certified ends are never below the truth, to the last ulp (docs/accuracy.md, "Rounding").

Oracles: exact privacy curves of lattice plans (noiseless counts, finite pairs, randomized response), enumerated
in rational arithmetic and evaluated at 50 digits by tests/oracles/make_pld_lattice.py into
tests/oracles/pld_lattice.json (two stored values are re-derived here, live); the subsampled Gaussian's
one-step curve in closed form (mpmath, 40 digits).
"""
from __future__ import annotations

import importlib.util
import json
import math
import os
import random

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ppk
from ppk import PrivacyLossDistribution as PLD

HERE = os.path.dirname(os.path.abspath(__file__))
ORACLE = os.path.join(HERE, "oracles", "pld_lattice.json")
DX = 1e-3


def _generator():
    spec = importlib.util.spec_from_file_location("make_pld_lattice", os.path.join(HERE, "oracles", "make_pld_lattice.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


with open(ORACLE) as _fh:
    ROWS = json.load(_fh)["rows"]


def _plan(case: dict, composition: str = "auto", dx: float = DX) -> PLD:
    """The plan the oracle row describes, as a user builds it."""
    def runs(pld: PLD, k: int) -> PLD:
        pld = pld.with_composition(composition)
        return pld.self_compose(k, independent=True) if k > 1 else pld
    if case["kind"] == "count":
        query = ppk.CountingQuery(n=case["n_unknown"] + 11, known=10, p=case["p"], sigma=0.0)
        return runs(PLD.from_counting_query(query, value_discretization_interval=dx), case["k"])
    gen_rr = _generator().rr_pmfs if case["kind"] in ("rr", "mixed") else None
    if case["kind"] == "rr":
        p, q = gen_rr(case["eps0"])
        return runs(PLD.from_pmfs(p, q, value_discretization_interval=dx), case["k"])
    pair = runs(PLD.from_pmfs(case["p"], case["q"], value_discretization_interval=dx), case["k"])
    if case["kind"] == "pair":
        return pair
    p, q = gen_rr(case["eps0"])
    return runs(PLD.from_pmfs(p, q, value_discretization_interval=dx), case["k_rr"]).compose(pair)


def _ids(rows):
    return [",".join(f"{k}={v}" for k, v in row["case"].items()) for row in rows]


@pytest.mark.parametrize("row", ROWS, ids=_ids(ROWS))
def test_lattice_brackets_hold_the_exact_delta_to_the_ulp(row):
    """lower <= exact <= upper as doubles (no ulp below), in logs too, and the enumerated plans' upper end within
    1e-9 relative of the truth (the builders' 1e-12 per mass, compounded over the runs)."""
    mp.mp.dps = 50
    pld = _plan(row["case"])
    eps = [float(e) for e in row["delta"]]
    # min(., 1): pmfs given as doubles may sum to a hair above 1 (randomized response's do), and then 40 runs of
    # them have sum (P - Q)_+ above 1; delta of a pair of probability laws is at most 1, and ppk caps it there
    exact = [min(mp.mpf(v), 1) for v in row["delta"].values()]
    lo, hi = pld.delta_bracket(eps)
    log_lo, log_hi = pld.log_delta_bracket(eps)
    up = pld.get_delta_for_epsilon(eps)
    for e, x, a, b, la, lb, u in zip(eps, exact, lo, hi, log_lo, log_hi, up):
        assert mp.mpf(float(a)) <= x <= mp.mpf(float(b)), (e, float(a), x, float(b))
        assert x <= mp.mpf(float(u)), (e, x, float(u))
        if x > 0:
            assert mp.mpf(float(la)) <= mp.log(x) <= mp.mpf(float(lb)), (e, float(la), mp.log(x), float(lb))
        if row["case"]["k"] > 1 or row["case"]["kind"] == "mixed":     # the plan, read exactly by classes
            assert mp.mpf(float(b)) - x <= 1e-9 * x + mp.mpf(1e-300), (e, x, float(b))


@pytest.mark.parametrize("row", [r for r in ROWS if r["case"]["k"] <= 12 and r["case"]["kind"] != "mixed"],
                         ids=_ids([r for r in ROWS if r["case"]["k"] <= 12 and r["case"]["kind"] != "mixed"]))
def test_lattice_brackets_of_vectors_composed_eagerly(row):
    """The same plans composed as vectors (composition="exact", read by ppk.pld._bracket): the bracket holds."""
    mp.mp.dps = 50
    pld = _plan(row["case"], "exact", dx=1e-2)
    eps = [float(e) for e in row["delta"]]
    lo, hi = pld.delta_bracket(eps)
    for e, v, a, b in zip(eps, row["delta"].values(), lo, hi):
        assert mp.mpf(float(a)) <= min(mp.mpf(v), 1) <= mp.mpf(float(b)), (e, float(a), v, float(b))


EPS_ROWS = [r for r in ROWS if "epsilon" in r]


@pytest.mark.parametrize("row", EPS_ROWS, ids=_ids(EPS_ROWS))
def test_lattice_epsilon_is_never_nan_never_below_and_close(row):
    """eps(delta) down to 1e-300: a number (never NaN), never below the exact one, within 1e-9 of it (one run, read
    off the grid: within two steps); inf only where the exact one is (mass at an infinite loss above delta)."""
    mp.mp.dps = 50
    pld = _plan(row["case"])
    for d, v in row["epsilon"].items():
        got = pld.get_epsilon_for_delta(float(d))
        assert not math.isnan(got), d
        if "inf" in v:
            assert got == math.inf, (d, got)
            continue
        x = mp.mpf(v)
        assert mp.mpf(got) >= x, (d, got, v)
        close = 1e-9 * max(x, 1) + 1e-12 if row["case"]["k"] > 1 else 2 * DX
        assert mp.mpf(got) - x <= close, (d, got, v)


def test_two_stored_values_re_derived_live():
    """The oracle file is what its generator computes: two stored values of cheap plans, recomputed."""
    gen = _generator()
    mp.mp.dps = gen.DPS
    cheap = [r for r in ROWS if r["case"]["k"] <= 9 and r["case"]["kind"] != "mixed"]
    for row in random.Random(20261129).sample(cheap, 2):
        curve = gen.Curve(gen.composed(gen.pairs_of(row["case"])))
        e, stored = random.Random(str(row["case"])).choice(list(row["delta"].items()))
        assert mp.almosteq(curve.delta(float(e)), mp.mpf(stored), rel_eps=mp.mpf(10) ** -38), (row["case"], e)


# ------------------------------------------------------------------ the subsampled Gaussian, one step
def _subsampled_exact(sigma: float, q: float, eps: float, adjacency: str) -> mp.mpf:
    """delta of one Poisson-subsampled Gaussian step, 40 digits, for the mixture M = (1 - q) N(0, s^2) + q N(1, s^2)
    and N = N(0, s^2): "add" is H(N || M), "remove" H(M || N) (ppk.pld.subsampled), "add_or_remove" the larger.

    H(N || M) = int (phi(x) (1 - e^eps (1 - q)) - e^eps q phi(x - 1))_+ : positive left of x0 where
    e^((2 x - 1)/(2 s^2)) = a/(e^eps q), a = 1 - e^eps (1 - q) > 0 (else 0), giving a Phi(x0/s) - e^eps q Phi((x0 - 1)/s).
    H(M || N) = int ((1 - q - e^eps) phi(x) + q phi(x - 1))_+ : positive right of x1 where
    e^((2 x - 1)/(2 s^2)) = c/q, c = e^eps - (1 - q) > 0, giving q Phi((1 - x1)/s) - c Phi(-x1/s)."""
    with mp.workdps(40):
        s, q_, ee = mp.mpf(sigma), mp.mpf(q), mp.e ** mp.mpf(eps)
        add = mp.mpf(0)
        a = 1 - ee * (1 - q_)
        if a > 0:
            x0 = (2 * s ** 2 * mp.log(a / (ee * q_)) + 1) / 2
            add = a * mp.ncdf(x0 / s) - ee * q_ * mp.ncdf((x0 - 1) / s)
        c = ee - (1 - q_)
        x1 = (2 * s ** 2 * mp.log(c / q_) + 1) / 2
        remove = q_ * mp.ncdf((1 - x1) / s) - c * mp.ncdf(-x1 / s)
        return {"add": add, "remove": remove, "add_or_remove": max(add, remove)}[adjacency]


def test_the_subsampled_step_of_issue_45():
    """sigma 0.3, q 1e-4, add, eps 1e-4: the upper end was 3.0413206422e-10, 1.5e-8 below the exact
    3.0413206870604e-10 (the two-point split amplifies the masses' rounding ~1/Delta; docs/accuracy.md)."""
    lo, hi = PLD.from_gaussian_mechanism(0.3, sampling_prob=1e-4, adjacency="add").delta_bracket(1e-4)
    exact = _subsampled_exact(0.3, 1e-4, 1e-4, "add")
    assert mp.mpf(lo) <= exact <= mp.mpf(hi), (lo, exact, hi)


@settings(max_examples=12, deadline=None)
@given(sigma=st.floats(0.2, 5.0), log_q=st.floats(-5.0, -0.5), eps_frac=st.floats(0.0, 1.0),
       adjacency=st.sampled_from(["add", "remove", "add_or_remove"]))
def test_subsampled_gaussian_step_brackets_the_closed_form(sigma, log_q, eps_frac, adjacency):
    """One step against the closed form, eps anywhere from 0 to past the add order's largest loss -log(1 - q)."""
    q = 10.0 ** log_q
    eps = eps_frac * 2 * -math.log1p(-q)
    lo, hi = PLD.from_gaussian_mechanism(sigma, sampling_prob=q, adjacency=adjacency,
                                         value_discretization_interval=1e-3).delta_bracket(eps)
    exact = _subsampled_exact(sigma, q, eps, adjacency)
    assert mp.mpf(lo) <= exact <= mp.mpf(hi), (lo, exact, hi)


# ------------------------------------------------------------------ the pure-DP cap
def test_laplace_composed_carries_its_pure_dp_cap():
    """24 runs of Laplace b = 5: eps(1e-30) was inf (the upper end's rounding floor stays above 1e-30 to
    eps = 5), now at most the least double >= 24/5; delta is 0 from there on.  10 runs of b = 1: eps(1e-10)
    at most 10 (it was 10.0009 at Delta = 1e-3)."""
    plan = PLD.from_laplace(scale=5.0, value_discretization_interval=1e-3).self_compose(24)
    eps = plan.get_epsilon_for_delta(1e-30)
    assert math.isfinite(eps) and eps <= math.nextafter(4.8, math.inf), eps
    assert plan.delta_bracket(eps)[1] == 0.0 and plan.get_delta_for_epsilon(10.0) == 0.0
    assert plan.log_delta_bracket(eps)[1] == -math.inf
    for dx in (1e-3, 1e-4):
        assert PLD.from_laplace(scale=1.0, value_discretization_interval=dx).self_compose(10).get_epsilon_for_delta(
            1e-10) <= 10.0
    eager = PLD.from_laplace(scale=1.0, value_discretization_interval=1e-3).with_composition("fft").self_compose(10)
    assert eager.get_epsilon_for_delta(1e-10) <= 10.0 and eager.delta_bracket(10.0)[1] == 0.0


def test_no_cap_where_mass_sits_at_an_infinite_loss_or_the_loss_is_unbounded():
    pair = PLD.from_pmfs([0.6, 0.4, 0.0], [0.5, 0.3, 0.2]).self_compose(3)
    assert pair.get_epsilon_for_delta(1e-3) == math.inf          # 1 - 0.8^3 sits at an infinite loss
    mixed = PLD.from_gaussian(sigma=1.0, value_discretization_interval=1e-2).compose(
        PLD.from_laplace(scale=1.0, value_discretization_interval=1e-2))
    assert mixed._cap() == math.inf and mixed.delta_bracket(3.0)[0] > 0     # a Gaussian's loss is unbounded


# ------------------------------------------------------------------ refused up front
def test_a_plan_that_would_take_minutes_is_refused_with_its_estimate():
    """Subsampled Gaussian sigma 1, q 0.001, 10^9 steps: its window is 2^24 points, and one eps took 67 s; now
    self_compose refuses at once and says how long it would take."""
    one = PLD.from_gaussian_mechanism(1.0, sampling_prob=0.001)
    with pytest.raises(ValueError, match=r"s per tilt and \d+ s per eps searched"):
        one.self_compose(10**9)
    one.self_compose(10**6)     # a window of ~2^21 points is evaluated as before


def test_an_eps_inside_a_clamped_tilt_reads_the_next_tilt_too():
    # Laplace b 2 x3: the tilt nearest eps 1.2 is clamped at the support's end (all three at +0.5) and steep
    # there; its upper end read 1.0 at eps 1.2 and 0.345 at 1.25 between tight neighbours
    from ppk import Accountant
    acc = Accountant(value_discretization_interval=1e-3).add_laplace(scale=2.0, times=3)
    lower, upper = acc.delta_bracket(np.array([1.15, 1.2, 1.25, 1.3]))
    assert np.all(upper <= lower * 1.01)
