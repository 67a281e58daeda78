"""ppk compose on plans of many options and on pure-DP plans: merged Gaussians, refusals with their estimate,
and the reason printed when no eps is certified (docs/accuracy.md, "The pure-DP cap")."""
from __future__ import annotations

import json
import math

import mpmath as mp
import pytest

from ppk.cli import main
from ppk.cli._compose import _bracket_text, _parse, compose_plan


def _gaussian_delta(mu: float, eps: float) -> mp.mpf:
    """The Gaussian mechanism's delta at s / sigma = mu (Balle & Wang), 40 digits."""
    with mp.workdps(40):
        mu, eps = mp.mpf(mu), mp.mpf(eps)
        return mp.ncdf(-eps / mu + mu / 2) - mp.e ** eps * mp.ncdf(-eps / mu - mu / 2)


def test_many_gaussian_options_are_one_gaussian(capsys):
    """50 options (sigma 10..16) are one Gaussian of 1/sigma^2 = sum 1/sigma_i^2: one leaf, not 50 (2,000 options
    took 7.9 GB and 84 s), and the bracket holds the closed form of that sum."""
    sigmas = [10 + i % 7 for i in range(50)]
    plan = [_parse("gaussian", str(s)) for s in sigmas]
    pld = compose_plan(plan, sensitivity=1.0, interval=1e-4)
    assert pld._plan is None or len(pld._plan.factors) == 1
    argv = ["compose"] + [a for s in sigmas for a in ("--gaussian", str(s))] + ["--eps", "1", "--json"]
    assert main(argv) == 0
    (row,) = json.loads(capsys.readouterr().out)["curve"]
    mu = math.fsum(1.0 / s ** 2 for s in sigmas) ** 0.5
    exact = _gaussian_delta(mu, 1.0)
    assert mp.mpf(row["delta_lower"]) <= exact <= mp.mpf(row["delta_upper"])
    assert row["delta_upper"] <= float(exact) * (1 + 1e-9)


def test_a_plan_too_large_is_refused_before_it_is_built(capsys):
    """3,000 Laplace options on a fine grid: refused at once, with the estimate and what to do instead."""
    argv = ["compose"] + [a for i in range(3000) for a in ("--laplace", str(1 + i / 1000))] + ["--interval", "1e-6",
                                                                                                "--eps", "1"]
    assert main(argv) != 0
    err = capsys.readouterr().err
    assert "loss-grid entries" in err and "GB" in err and "xK" in err and "Traceback" not in err


def test_pure_dp_plans_answer_eps_and_say_why_when_none():
    """Laplace b = 5, 24 runs: eps(1e-30) within the pure-DP cap (the CLI said 'infinite-loss mass exceeds
    delta' for a plan that has none); randomized response 1.3 x 50: no NaN at 1e-12."""
    lap = compose_plan([_parse("laplace", "5x24")], sensitivity=1.0, interval=1e-3)
    assert lap.get_epsilon_for_delta(1e-30) <= math.nextafter(4.8, math.inf)
    rr = compose_plan([_parse("randomized-response", "1.3x50")], sensitivity=1.0, interval=1e-4)
    assert 64.999999828828 <= rr.get_epsilon_for_delta(1e-12) <= 64.99999983
    numerics = _bracket_text(dict(eps=math.inf, infinite_loss_mass=0.0))
    assert "infinite-loss mass" not in numerics and "--interval" in numerics
    assert "infinite-loss mass (0.25)" in _bracket_text(dict(eps=math.inf, infinite_loss_mass=0.25))


@pytest.mark.parametrize("delta", ["1e-12", "1e-300"])
def test_randomized_response_prints_a_number(delta, capsys):
    assert main(["compose", "--randomized-response", "1.3x50", "--delta", delta]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out and "infinite-loss" not in out
