"""The Laplace mechanism's certified bracket, alone and composed, contains its exact delta(eps)
(tests/oracles/make_pld_laplace.py: a tilted Irwin-Hall mixture in mpmath, 40 digits, stored in
pld_laplace.json; one stored value re-derived live).

Guards the builder's lower atom: with e0 = 1/30 off the grid of 1e-3 it was counted a bucket too low and
three runs' upper end fell ~1 % below the truth (docs/accuracy.md); the scale 25 puts e0 on the grid."""
from __future__ import annotations

import importlib.util
import os

import pytest

from oracles import load
from ppk.pld import Accountant, PrivacyLossDistribution

HERE = os.path.dirname(os.path.abspath(__file__))
STORED = load("pld_laplace")["values"]
EPS = ("0", "0.01", "0.05", "0.08")


def _generator():
    spec = importlib.util.spec_from_file_location("make_pld_laplace", os.path.join(HERE, "oracles", "make_pld_laplace.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("scale", [30, 25])
@pytest.mark.parametrize("runs", [1, 3])
def test_laplace_bracket_contains_the_exact_delta(scale, runs):
    pld = PrivacyLossDistribution.from_laplace(scale=float(scale), value_discretization_interval=1e-3)
    plan = pld.self_compose(runs) if runs > 1 else pld
    lower, upper = plan.delta_bracket([float(e) for e in EPS])
    for e, lo, hi in zip(EPS, lower, upper):
        truth = float(STORED[f"b={scale} K={runs} eps={e}"])
        assert lo <= truth * (1 + 1e-12) and hi >= truth * (1 - 1e-12), (e, lo, truth, hi)
        assert hi <= truth + 1e-6    # and close: the grid's slack at dx = 1e-3


def test_accountant_laplace_plan_is_certified():
    """The accountant's tilted plan (the path the under-report went through), eps from a target delta."""
    acc = Accountant(value_discretization_interval=1e-3).add_laplace(scale=30.0, times=3)
    truth = float(STORED["b=30 K=3 eps=0.01"])
    assert acc.delta(0.01) >= truth
    assert acc.epsilon(truth) >= 0.01 - 1e-9


def test_one_stored_value_rederived():
    assert float(_generator().compute("b=30 K=3 eps=0.01")) == pytest.approx(float(STORED["b=30 K=3 eps=0.01"]), rel=1e-25)


def test_a_loss_range_past_exp_range_answers_instead_of_overflowing():
    # scale 1e-10: the loss e0 = 1e10 coarsens the grid to steps past e^709, where the upper end's rounding
    # term overflowed (OverflowError out of `ppk compose --laplace 1e-10`); delta(1) is 1 - e^-1e10 / 2 ~ 1
    lower, upper = Accountant().add_laplace(scale=1e-10).delta_bracket(1.0)
    assert 0.99 < lower <= upper <= 1.0
