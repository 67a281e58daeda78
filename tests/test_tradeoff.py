"""Certified trade-off curves (ppk.tradeoff, docs/tradeoff.md): the bracket on the best attack's power
1 - beta(alpha) holds the closed forms -- the Gaussian's from tests/oracles/tradeoff.json (mpmath, 60
digits), randomized response, Laplace and the one-order subsampled Gaussian in mpmath here -- and is as
narrow as the delta bracket allows where beta is within 1e-9 of 1."""
from __future__ import annotations

import csv
import json
import math

import mpmath as mp
import numpy as np
import pytest

import ppk
from ppk.pld import PrivacyLossDistribution as PLD
from ppk.tradeoff import power_bracket, tradeoff_functions, tradeoff_table, write_tradeoff

from oracles import load

GAUSS = load("tradeoff")["cases"]


def _inside(lo, up, truth, rel):
    """lower <= truth <= upper (compared in mpmath), and the bracket within ``rel`` of the truth."""
    truth = mp.mpf(truth)
    assert mp.mpf(lo) <= truth <= mp.mpf(up), (lo, up, truth)
    assert (mp.mpf(up) - mp.mpf(lo)) <= rel * truth, (lo, up, truth)


@pytest.mark.parametrize("mu", ["0.5", "1", "3"])
def test_gaussian_pld_brackets_the_closed_form_within_1e9(mu):
    cases = [c for c in GAUSS if c["mu"] == mu]
    pld = PLD.from_gaussian(sigma=1.0 / float(mu), value_discretization_interval=1e-2)
    lo, up = pld.power_bracket(np.array([float(c["alpha"]) for c in cases]))
    for c, l, u in zip(cases, lo, up):
        _inside(l, u, c["power"], 1e-9)


def test_done_criterion_gaussian_mu_1_at_1e9_and_1e12():
    """The issue's numbers: exact power 2.8993e-7 at alpha = 1e-9 and 7.9736e-10 at 1e-12 (riskcal: ~5.6e-14)."""
    pld = PLD.from_gaussian(sigma=1.0, value_discretization_interval=1e-2)
    for alpha in ("1e-9", "1e-12"):
        truth = next(c["power"] for c in GAUSS if c["mu"] == "1" and c["alpha"] == alpha)
        _inside(*power_bracket(pld, float(alpha)), truth, 1e-9)
    # beta, within 1e-9 of 1, brackets 1 - power too (the table rounds outward)
    row = tradeoff_table(pld, alpha_min=1e-12, points=2)[0]
    truth = 1 - mp.mpf(next(c["power"] for c in GAUSS if c["mu"] == "1" and c["alpha"] == "1e-12"))
    assert row["beta_lower"] <= truth <= row["beta_upper"] and row["beta_upper"] < 1


def test_accountant_and_estimate_curve_read_the_gaussian():
    """Four runs of sigma = 2 are mu = 1 (the Accountant's Gaussian plan, in closed form); a count whose every
    other row is known is the Gaussian mechanism: its lower end rests on the estimate (docs/tradeoff.md)."""
    cases = [c for c in GAUSS if c["mu"] == "1" and c["alpha"] in ("1e-9", "0.1")]
    alpha = [float(c["alpha"]) for c in cases]
    acc = ppk.Accountant(value_discretization_interval=1e-2).add_gaussian(sigma=2.0, times=4)
    count = ppk.CountingQuery(n=10, known=9, p=0.3, sigma=1.0)
    for obj, rel in ((acc, 1e-9), (count, 1e-8)):
        lo, up = power_bracket(obj, alpha)
        for c, l, u in zip(cases, lo, up):
            _inside(l, u, c["power"], rel)
    assert count.power_bracket(1e-9) == tuple(x[0] for x in power_bracket(count, [1e-9]))


def _rr_power(eps0, alpha):
    """Randomized response P = (e, 1)/(1 + e), Q = (1, e)/(1 + e), e = e^eps0: the ROC through (0, 0),
    (Q0, P0) = (1/(1+e), e/(1+e)) and (1, 1)."""
    e = mp.exp(eps0)
    q0, p0 = 1 / (1 + e), e / (1 + e)
    a = mp.mpf(alpha)
    return a * e if a <= q0 else p0 + (a - q0) / e


def _laplace_power(b, alpha):
    """Lap(0, b) vs Lap(1, b), eps = 1/b: 1 - beta = e^eps alpha below e^-eps / 2, 1 - e^-eps/(4 alpha) up to
    1/2, 1 - e^-eps (1 - alpha) above (Dong, Roth and Su 2022, the Laplace trade-off function)."""
    eps, a = 1 / mp.mpf(b), mp.mpf(alpha)
    if a < mp.exp(-eps) / 2:
        return mp.exp(eps) * a
    if a <= mp.mpf(1) / 2:
        return 1 - mp.exp(-eps) / (4 * a)
    return 1 - mp.exp(-eps) * (1 - a)


ALPHAS = [1e-12, 1e-6, 0.01, 0.2, 0.5, 0.8, 0.99]


@pytest.mark.parametrize("eps0", [math.log(3.0), 2.0])
def test_randomized_response_exact(eps0):
    e = math.exp(-eps0)
    pld = PLD.from_pmfs([1 / (1 + e), e / (1 + e)], [e / (1 + e), 1 / (1 + e)], value_discretization_interval=1e-4)
    lo, up = pld.power_bracket(ALPHAS)
    for a, l, u in zip(ALPHAS, lo, up):
        _inside(l, u, _rr_power(eps0, a), 1e-3)


def test_laplace_exact():
    pld = PLD.from_laplace(scale=1.0, value_discretization_interval=1e-4)
    lo, up = pld.power_bracket(ALPHAS)
    for a, l, u in zip(ALPHAS, lo, up):
        _inside(l, u, _laplace_power(1, a), 1e-3)


def test_one_order_pair_subsampled_gaussian():
    """adjacency="remove": delta = H(P || Q) alone, P = 0.9 N(0, 1) + 0.1 N(1, 1), Q = N(0, 1); the loss is
    monotone in x, so the best test is x > z and 1 - beta = 0.9 alpha + 0.1 Phi(1 - z).  At small alpha
    the bracket is tight; at large alpha only G >= max(1 - a, delta(0)) stands for the missing order."""
    pld = PLD.from_gaussian_mechanism(1.0, sampling_prob=0.1, adjacency="remove", value_discretization_interval=1e-3)
    for alpha, rel in ((1e-6, 1e-5), (0.01, 1e-5), (0.5, 0.05), (0.9, 0.05)):
        z = mp.sqrt(2) * mp.erfinv(1 - 2 * mp.mpf(alpha))
        _inside(*pld.power_bracket(alpha), 0.9 * mp.mpf(alpha) + 0.1 * mp.ncdf(1 - z), rel)


def test_shapes_ends_and_bad_input():
    pld = PLD.from_gaussian(sigma=1.0, value_discretization_interval=1e-2)
    lo, up = pld.power_bracket([[1e-3, 0.5], [0.0, 1.0]])
    assert lo.shape == up.shape == (2, 2)
    assert lo[1, 0] == 0.0 and up[1, 1] == 1.0 and lo[1, 1] == 1.0
    tiny = pld.power_bracket(1e-300)     # below the floor: [alpha, the upper end at 1e-250]
    assert tiny[0] == 1e-300 and 1e-250 < tiny[1] < 1e-200
    assert power_bracket(pld, []) [0].shape == (0,)
    with pytest.raises(ValueError, match="alpha"):
        power_bracket(pld, 1.5)
    with pytest.raises(ValueError, match="alpha"):
        power_bracket(pld, math.nan)
    with pytest.raises(TypeError, match="obj"):
        power_bracket(object(), 0.1)


def test_table_export_and_callables(tmp_path):
    pld = PLD.from_gaussian(sigma=1.0, value_discretization_interval=1e-2)
    rows = tradeoff_table(pld, alpha_min=1e-12, points=25)
    alpha = [r["alpha"] for r in rows]
    assert alpha[0] == 1e-12 and alpha[-1] == 1.0 and np.all(np.diff(alpha) > 0)
    assert all(r["beta_lower"] <= r["beta_upper"] and r["power_lower"] <= r["power_upper"] for r in rows)
    assert np.all(np.diff([r["beta_upper"] for r in rows]) <= 0)       # beta is non-increasing
    write_tradeoff(rows, str(tmp_path / "t.csv"))
    write_tradeoff(rows, str(tmp_path / "t.json"))
    with open(tmp_path / "t.csv") as f:
        back = list(csv.DictReader(f))
    assert [float(r["beta_lower"]) for r in back] == [r["beta_lower"] for r in rows]   # 17 digits round-trip
    assert json.loads((tmp_path / "t.json").read_text())["rows"] == rows
    with pytest.raises(ValueError, match="format"):
        write_tradeoff(rows, str(tmp_path / "t.txt"), format="xml")
    with pytest.raises(ValueError, match="alpha_min"):
        tradeoff_table(pld, alpha_min=0.0)
    beta_lower, beta_upper = tradeoff_functions(pld)
    b = beta_lower(np.array([1e-9, 0.5]))
    assert np.all(b <= beta_upper(np.array([1e-9, 0.5]))) and b[1] == pytest.approx(1 - 0.841344746068543)
