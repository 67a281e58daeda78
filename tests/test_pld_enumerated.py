"""Plans of finite pairs (and Gaussian mechanisms) composed exactly by type classes (ppk.pld._enumerated).

Oracles, none of which uses classes or the extension of the Gaussian curve to negative eps:
* brute force over every tuple of outcomes (mpmath, 50 digits), the Gaussian part by its closed form
  Phi(mu/2 - x/mu) - e^x Phi(-mu/2 - x/mu), which holds for every real x;
* the binomial sum for randomized response, searched for eps by mpmath's root finder.
"""
import itertools
import math

import mpmath as mp
import numpy as np
import pytest

import ppk
from ppk.pld import _enumerated

PLD = ppk.PrivacyLossDistribution
mp.mp.dps = 50


def _gauss_term(p, x, mu):
    """An outcome of P-mass p whose loss makes eps - loss = x, run with the Gaussian of mu: p delta_G(x) by the
    closed form (mu = 0: the step p (1 - e^x)_+)."""
    if mu == 0:
        return p * (1 - mp.exp(x)) if x < 0 else mp.mpf(0)
    mu = mp.mpf(mu)
    return p * (mp.ncdf(mu / 2 - x / mu) - mp.exp(x) * mp.ncdf(-mu / 2 - x / mu))


def _brute_log_delta(leaves, mu, eps):
    """max over both orders of log delta(eps) of the leaves' pairs, each (p, q, k), and a Gaussian of mu: every
    tuple of outcomes enumerated."""
    best = -mp.inf
    for order in (0, 1):
        runs = []
        for p, q, k in leaves:
            pp, qq = (p, q) if order == 0 else (q, p)
            runs += [list(zip(map(mp.mpf, pp), map(mp.mpf, qq)))] * k
        total = mp.mpf(0)
        for tup in itertools.product(*runs):
            pt = mp.fprod(a for a, _ in tup)
            qt = mp.fprod(b for _, b in tup)
            if pt == 0:
                continue
            if qt == 0:
                total += pt      # loss +inf: P-mass counts in full
                continue
            total += _gauss_term(pt, mp.mpf(eps) - mp.log(pt / qt), mu)
        best = max(best, mp.log(total) if total > 0 else -mp.inf)
    return float(best)


def _gaussian(mu, dx=1e-3):
    return PLD.from_gaussian_mechanism(1.0 / mu, value_discretization_interval=dx)


def test_brute_force_with_infinities_both_orders_and_a_gaussian():
    # four outcomes: two finite (asymmetric), one only P gives (+inf), one only Q gives (-inf)
    p, q = [0.5, 0.3, 0.15, 0.05], [0.2, 0.55, 0.0, 0.25]
    leaf = PLD.from_pmfs(p, q, value_discretization_interval=1e-3)
    plan = leaf.self_compose(5).compose(_gaussian(0.7))
    assert type(plan._curve()).__name__ == "EnumeratedCurve"
    eps = np.array([0.0, 0.5, 2.0, 4.0, 6.0])
    lo, up = plan.log_delta_bracket(eps)
    exact = np.array([_brute_log_delta([(p, q, 5)], 0.7, e) for e in eps])
    assert np.all(lo <= exact) and np.all(exact <= up), (lo - exact, up - exact)
    assert np.all(up - lo < 1e-11)


def test_brute_force_two_different_leaves_without_gaussian():
    rr = (0.6, 0.4)
    a = ([0.7, 0.2, 0.1], [0.1, 0.3, 0.6])
    plan = PLD.from_pmfs(list(rr), list(rr[::-1]), value_discretization_interval=1e-2).self_compose(4).compose(
        PLD.from_pmfs(*a, value_discretization_interval=1e-2).self_compose(3))
    eps = np.array([0.0, 0.3, 1.0, 3.0, 5.5])
    lo, up = plan.log_delta_bracket(eps)
    exact = np.array([_brute_log_delta([(rr, rr[::-1], 4), (a[0], a[1], 3)], 0, e) for e in eps])
    finite = np.isfinite(exact)
    assert np.all(lo[finite] <= exact[finite]) and np.all(exact[finite] <= up[finite]), (lo - exact, up - exact)
    assert np.all(up[finite] - lo[finite] < 1e-12)
    assert np.all(up[~finite] == -np.inf)     # beyond the largest loss delta is 0, both ends


def _rr_log_delta(eps0, k, mu, eps):
    """Randomized response eps0, k runs, with a Gaussian of mu: a binomial sum of Gaussian curves (symmetric
    pair: one order)."""
    pe = mp.exp(eps0) / (1 + mp.exp(eps0))
    total = mp.mpf(0)
    for a in range(k + 1):
        mass = mp.binomial(k, a) * pe ** a * (1 - pe) ** (k - a)
        total += _gauss_term(mass, mp.mpf(eps) - (2 * a - k) * mp.mpf(eps0), mu)
    return mp.log(total)


@pytest.mark.parametrize("delta", [1e-6, 1e-15, 1e-100, 1e-300])
def test_randomized_response_and_gaussians_epsilon_within_1e_minus_12(delta):
    eps0, k = 0.1, 300
    pe = math.exp(eps0) / (1 + math.exp(eps0))
    rr = PLD.from_pmfs([pe, 1 - pe], [1 - pe, pe], value_discretization_interval=1e-3)
    plan = PLD.from_gaussian_mechanism(10.0, value_discretization_interval=1e-3).self_compose(200).compose(
        rr.self_compose(k))
    got = plan.get_epsilon_for_delta(delta)
    exact = float(mp.findroot(lambda e: _rr_log_delta(eps0, k, math.sqrt(2.0), e) - mp.log(delta),
                              got, solver="secant"))
    assert exact <= got <= exact * (1 + 1e-10)
    lo, up = plan.log_delta_bracket(got)
    assert lo <= float(_rr_log_delta(eps0, k, math.sqrt(2.0), got)) <= up <= math.log(delta) + 1e-12


def test_too_many_classes_fall_back_to_the_tilted_composition():
    three = ([0.5, 0.3, 0.2], [0.2, 0.3, 0.5])
    leaf = PLD.from_pmfs(*three, value_discretization_interval=1e-3)
    small, big = leaf.self_compose(100), leaf.self_compose(400)     # C(102, 2) = 5151, C(402, 2) = 80601
    assert type(small._curve()).__name__ == "EnumeratedCurve"
    assert type(big._curve()).__name__ == "PlanCurve"
    # both certify: the exact answer of the small one lies inside the tilted bracket of the same plan
    lo_exact, up_exact = small.log_delta_bracket(5.0)
    tilted = leaf.self_compose(100)
    tilted._plan._curve = None
    original = _enumerated.MAX_CLASSES
    try:
        _enumerated.MAX_CLASSES = 0
        lo, up = tilted.log_delta_bracket(5.0)
    finally:
        _enumerated.MAX_CLASSES = original
    assert type(tilted._curve()).__name__ == "PlanCurve"
    assert lo <= lo_exact <= up_exact <= up
    assert up_exact - lo_exact < 1e-11 < up - lo


def test_a_composed_leaf_is_not_a_finite_pair():
    # vectors composed eagerly describe the grid's pair, not the outcomes: they never take the exact path
    leaf = PLD.from_pmfs([0.6, 0.4], [0.4, 0.6], value_discretization_interval=1e-3)
    eager = leaf.with_composition("exact").self_compose(3)
    assert eager._finite_pair is None
    assert _enumerated.class_count([(eager.with_composition("auto"), 2)]) is None
