"""Composition without the floor (ppk.pld._tilted, _tilted_bracket, _plan) against independent oracles:
closed forms and exact sums in mpmath (50 digits), never the code under test.

* the k-fold Gaussian is exactly the Gaussian of mu = sqrt(k) s / sigma;
* randomized response composed with Gaussians is a binomial sum of Gaussian curves;
* a three-outcome pair composed k times is a multinomial sum.

The sums (0.1-1.5 s each at 50 digits) are stored: tests/oracles/make_pld_tilted.py writes
tests/oracles/pld_tilted.json with this module's own oracle functions, and
``test_stored_values_are_the_oracles`` recomputes a random few of them; the closed forms stay live.
"""
from __future__ import annotations

import functools
import math
import random
import time

import mpmath as mp
import numpy as np
import pytest

from ppk.pld import PrivacyLossDistribution as PLD
from ppk.pld import _enumerated
from ppk.pld._tilted_bracket import PlanCurve

mp.mp.dps = 50


@functools.lru_cache(maxsize=None)
def _stored() -> dict:
    """tests/oracles/pld_tilted.json, read on first use (its generator imports this module)."""
    from oracles import load   # tests/ is on sys.path: conftest.py

    return load("pld_tilted")


def _rr_stored(eps) -> np.ndarray:
    """The stored randomized response + Gaussian log delta at each eps (make_pld_tilted.RR)."""
    rr = _stored()["rr_gaussian"]
    return np.array([rr["log_delta"][rr["eps"].index(e)] for e in eps])


def _binary_stored(k: int) -> dict:
    return next(b for b in _stored()["binary"] if b["k"] == k)


@pytest.fixture(params=["enumerated", "tilted"])
def path(request, monkeypatch):
    """Plans of finite pairs are enumerated exactly (ppk.pld._enumerated) when their classes are few; the same
    plans through the tilted composition, which every other leaf takes."""
    if request.param == "tilted":
        monkeypatch.setattr(_enumerated, "MAX_CLASSES", 0)
    return request.param


@pytest.fixture
def tilted(monkeypatch):
    monkeypatch.setattr(_enumerated, "MAX_CLASSES", 0)


def gaussian_log_delta(mu: float, eps: float) -> float:
    """log delta(eps) of the Gaussian pair N(0,1) vs N(mu,1): Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)."""
    mu, eps = mp.mpf(mu), mp.mpf(eps)
    return float(mp.log(mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)))


def gaussian_epsilon(mu: float, delta: float) -> float:
    return float(mp.findroot(lambda e: gaussian_log_delta(mu, e) - math.log(delta), (0.0, 200.0), solver="anderson"))


@pytest.mark.parametrize("sigma, k", [(3.0, 100), (30.0, 1000)])
def test_tilted_k_fold_gaussian_contains_the_closed_form_down_to_1e_minus_300(sigma, k):
    # the tilted composition of the (unmerged) connect-the-dots pair: the plan's engine itself
    dx = 1e-3
    leaf = PLD.from_gaussian(sigma=sigma, value_discretization_interval=dx, log_mass_truncation_bound=-1000.0)
    mu = math.sqrt(k) / sigma
    eps = np.array([0.0, 0.5 * mu * mu, mu * mu, mu * mu + 3 * mu, mu * mu / 2 + 7 * mu,
                    mu * mu / 2 + 20 * mu, mu * mu / 2 + 37 * mu])
    lo, up = PlanCurve([(leaf, k)], dx).log_ends(eps)
    exact = np.array([gaussian_log_delta(mu, e) for e in eps])
    assert exact[-1] < -690                                       # delta below 1e-300 is in the grid
    assert np.all(lo <= exact) and np.all(exact <= up), (lo - exact, up - exact)
    # the bracket's width is the grid's, not round-off: the two pairs differ by about Delta^2/4 of loss
    # variance per run, against 1/sigma^2 of the loss itself, which moves log delta by that fraction of it
    width = np.expm1((up - lo).astype(float))
    assert np.all(width < 2 * (1 - exact) * dx * dx * sigma * sigma / 4)


def test_a_plan_of_gaussians_is_the_exact_gaussian():
    plan = PLD.from_gaussian_mechanism(3.0, value_discretization_interval=1e-3).self_compose(100)
    eps = np.array([0.1, 5.0, 20.78, 28.47, 120.0])
    lo, up = plan.log_delta_bracket(eps)
    exact = np.array([gaussian_log_delta(10 / 3, e) for e in eps])
    assert np.all(lo <= exact) and np.all(exact <= up)
    assert np.all(up - lo < 1e-12 * (1 - exact))
    # two Gaussian mechanisms of different sigma compose to one (mu^2 adds)
    mixed = PLD.from_gaussian(sigma=2.0).self_compose(3).compose(PLD.from_gaussian(sigma=5.0, sensitivity=2.0))
    lo, up = mixed.log_delta_bracket(1.0)
    assert lo <= gaussian_log_delta(math.sqrt(3 / 4 + 4 / 25), 1.0) <= up


@pytest.mark.parametrize("sigma, k, delta", [(3.0, 100, 1e-6), (3.0, 100, 1e-12), (30.0, 1000, 1e-12),
                                             (100.0, 10_000, 1e-12), (100.0, 10_000, 1e-300)])
def test_epsilon_is_never_below_the_exact_and_within_1e_minus_3(sigma, k, delta):
    eps = PLD.from_gaussian_mechanism(sigma, value_discretization_interval=1e-3).self_compose(k).get_epsilon_for_delta(delta)
    exact = gaussian_epsilon(math.sqrt(k) / sigma, delta)
    assert exact <= eps <= exact * (1 + 1e-3)


def _rr_gaussian_log_delta(eps0: float, n_rr: int, mu: float, eps: float) -> float:
    """Randomized response eps0 (n_rr runs) composed with a Gaussian of mu: sum over the RR losses."""
    p = mp.exp(eps0) / (1 + mp.exp(eps0))
    mu = mp.mpf(mu)
    total = mp.mpf(0)
    for j in range(n_rr + 1):
        x = mp.mpf(eps) - (2 * j - n_rr) * mp.mpf(eps0)
        g = mp.ncdf(-x / mu + mu / 2) - mp.exp(x) * mp.ncdf(-x / mu - mu / 2)
        total += mp.binomial(n_rr, j) * p ** j * (1 - p) ** (n_rr - j) * g
    return float(mp.log(total))


def test_gaussian_and_randomized_response_plan(path):
    dx, eps0 = 1e-3, 0.1
    pe = math.exp(eps0) / (1 + math.exp(eps0))
    rr = PLD.from_pmfs([pe, 1 - pe], [1 - pe, pe], value_discretization_interval=dx)
    plan = PLD.from_gaussian_mechanism(10.0, value_discretization_interval=dx).self_compose(200).compose(
        rr.self_compose(300))
    assert type(plan._curve()).__name__ == {"enumerated": "EnumeratedCurve", "tilted": "PlanCurve"}[path]
    eps = np.array([1.0, 8.0, 12.55, 40.0])
    lo, up = plan.log_delta_bracket(eps)
    exact = _rr_stored(eps)           # _rr_gaussian_log_delta(eps0, 300, sqrt 2, eps)
    assert np.all(lo <= exact) and np.all(exact <= up), (lo - exact, up - exact)
    assert np.all(np.expm1(up - lo) < 1e-3)
    e6 = plan.get_epsilon_for_delta(1e-6)
    exact_e6 = _stored()["rr_gaussian"]["epsilon"]      # its root at 1e-6
    assert exact_e6 <= e6 <= exact_e6 * (1 + 1e-3)


def _binary_log_delta(p, q, k: int, eps: float) -> float:
    """Exact delta of (P, Q)^k for two outcomes: a binomial sum over how often the first occurred."""
    p, q = [mp.mpf(p[0]), 1 - mp.mpf(p[0])], [mp.mpf(q[0]), 1 - mp.mpf(q[0])]   # each law sums to 1 exactly
    l1, l0 = mp.log(p[0] / q[0]), mp.log(p[1] / q[1])
    total = mp.mpf(0)
    for a in range(k + 1):
        loss = a * l1 + (k - a) * l0
        if loss > eps:
            total += mp.binomial(k, a) * p[0] ** a * p[1] ** (k - a) * (1 - mp.exp(eps - loss))
    return float(mp.log(total)) if total > 0 else -math.inf


def test_lattice_pair_composed_by_exact_enumeration_far_into_the_tail(path):
    # losses log 3.5 and log 0.375, off the grid and asymmetric: both orders, both ends, down to e^-294
    p, q = [0.7, 0.3], [0.2, 0.8]
    k = 1500
    plan = PLD.from_pmfs(p, q, value_discretization_interval=1e-3).self_compose(k)
    assert type(plan._curve()).__name__ == {"enumerated": "EnumeratedCurve", "tilted": "PlanCurve"}[path]
    eps = np.array([300.0, 600.0, 1000.0, 1400.0, 1700.0])
    lo, up = plan.log_delta_bracket(eps)
    # ppk reports the larger of the two orders (Q || P: the mirrored pair)
    b = _binary_stored(k)             # _binary_log_delta(p, q, k, eps) and (q, p, ...)
    assert b["p"] == p and b["q"] == q and b["eps"] == list(eps)
    exact = np.maximum(b["log_delta"], b["log_delta_mirror"])
    assert exact[-1] < -290
    assert np.all(lo <= exact) and np.all(exact <= up), (lo - exact, up - exact)
    assert np.all(np.expm1(up - lo) < 0.05)


def _rr_plan(dx: float) -> PLD:
    eps0 = 0.1
    pe = math.exp(eps0) / (1 + math.exp(eps0))
    rr = PLD.from_pmfs([pe, 1 - pe], [1 - pe, pe], value_discretization_interval=dx)
    return PLD.from_gaussian_mechanism(10.0, value_discretization_interval=dx).self_compose(200).compose(
        rr.self_compose(300))


def test_a_fine_grid_changes_nothing_certified(tilted):
    # the merged Gaussian leaf needs more than a million buckets at Delta = 1e-4 (it reaches e^-800): it must
    # stay on the plan's grid (it was once built on 2e-4 and read as 1e-4: delta(1) 0.511 for 0.589).
    # One plan, one eps (3 s: the leaf and the tilts at 1e-4); the order of questions is tested on 1e-3 below
    plan = _rr_plan(1e-4)
    eps = np.array([1.0])
    lo, up = plan.log_delta_bracket(eps)
    exact = _rr_stored(eps)
    assert np.all(lo <= exact) and np.all(exact <= up), (lo - exact, up - exact)


def test_the_order_of_questions_changes_nothing(tilted):
    # every eps reads the tilt on a fixed grid of tilt centres (multiples of a few deviations, whatever
    # Delta): the same answer whatever was asked before.  Delta = 1e-3: 1 s for both plans
    fresh = _rr_plan(1e-3).get_epsilon_for_delta(1e-6)
    asked = _rr_plan(1e-3)
    asked.delta_bracket(20.0)
    asked.delta_bracket(np.linspace(0.0, 30.0, 7))
    assert asked.get_epsilon_for_delta(1e-6) == fresh


def test_atoms_on_bucket_edges_keep_the_lower_end_tight(tilted):
    # losses +-0.01 sit on the edges of their buckets (as a Laplace mechanism's ends do): a composed label is
    # within a step of its loss, not half a bucket per run, and the lower end's tilt must be centred there
    # (it once assumed half a bucket per run: 5000 steps, 12 deviations, off here, and brackets e^700 wide)
    eps0, k, dx = 0.01, 10_000, 2.5e-3
    pe = math.exp(eps0) / (1 + math.exp(eps0))
    p, q = [pe, 1 - pe], [1 - pe, pe]
    plan = PLD.from_pmfs(p, q, value_discretization_interval=dx).self_compose(k)
    assert type(plan._curve()).__name__ == "PlanCurve"
    eps = np.array([4.0, 9.0, 15.0])
    lo, up = plan.log_delta_bracket(eps)
    b = _binary_stored(k)             # _binary_log_delta(p, q, k, eps)
    assert b["p"] == p and b["q"] == q and b["eps"] == list(eps)
    exact = np.array(b["log_delta"])
    assert exact[-1] < -100
    assert np.all(lo <= exact) and np.all(exact <= up), (lo - exact, up - exact)
    assert np.all(up - lo < math.log1p(0.01)), up - lo


def test_a_delta_below_the_mass_at_infinity_is_refused_without_a_search():
    # the subsampled leaf's tails beyond e^-50 count as infinite loss: 3000 runs put ~e^-57 there, so no eps
    # reaches 1e-50 -- answered from that mass (no tilt built; it once walked out over a dozen tilts)
    plan = PLD.from_gaussian_mechanism(2.0, sampling_prob=0.01, value_discretization_interval=1e-3).self_compose(3000)
    assert plan.get_epsilon_for_delta(1e-50) == math.inf
    curve = plan._curve()
    assert all(not o.upper_tilts for o in curve.orders)
    assert max(float(o.log_inf_up) for o in curve.orders) > math.log(1e-50)
    assert plan.log_delta_bracket(40.0)[1] > math.log(1e-50)        # the upper end there says the same


def test_stored_values_are_the_oracles():
    """Three stored sums recomputed by this module's oracle functions (as make_pld_tilted.py calls them), drawn
    by a seed that changes daily (printed on failure): a corrupted file or a changed oracle fails some day."""
    seed = int(time.time()) // 86400
    rng = random.Random(seed)
    rr = _stored()["rr_gaussian"]
    entries = [("rr", i) for i in range(len(rr["eps"]))]
    entries += [("binary", (j, i, side)) for j, b in enumerate(_stored()["binary"]) if b["k"] <= 1500
                for i in range(len(b["eps"])) for side in ("log_delta", "log_delta_mirror")]
    for kind, i in rng.sample(entries, 3):
        if kind == "rr":
            stored = rr["log_delta"][i]
            got = _rr_gaussian_log_delta(rr["eps0"], rr["n_rr"], math.sqrt(rr["mu2"]), rr["eps"][i])
        else:
            j, i, side = i
            b = _stored()["binary"][j]
            stored = b[side][i]
            p, q = (b["p"], b["q"]) if side == "log_delta" else (b["q"], b["p"])
            got = _binary_log_delta(p, q, b["k"], b["eps"][i])
        # logs of delta: near delta = 1 (log 0) an absolute 1e-13 is the same 1e-13 relative in delta
        assert got == stored or math.isclose(got, stored, rel_tol=1e-13, abs_tol=1e-13), (seed, kind, i, got, stored)


def test_a_plan_of_symmetric_mechanisms_reads_one_order():
    # Laplace and Gaussian pairs have one delta(eps) in both orders (a reflection swaps P and Q), so a plan of
    # them reads the first order only (half the tilts).  What the skipped order says is still a bracket of the
    # same delta: the two orders' brackets overlap.
    lap = PLD.from_laplace(scale=1.0, value_discretization_interval=1e-2).self_compose(100)
    plan = lap.compose(PLD.from_gaussian(sigma=20.0, value_discretization_interval=1e-2))
    curve = plan._curve()
    assert type(curve).__name__ == "PlanCurve" and [o.order for o in curve.orders] == [0]
    eps = np.array([5.0, 20.0, 50.0])
    lo, hi = curve.log_ends(eps)
    mirror = PlanCurve(plan._plan.evaluated(PLD), 1e-2, orders=(1,))
    lo1, hi1 = mirror.log_ends(eps)
    assert np.all(lo <= hi) and np.all(np.maximum(lo, lo1) <= np.minimum(hi, hi1))


def _upper_tilt(t: float, s_lo: int, n: int, dx: float):
    """An _UpperTilt over a made-up window of n masses (a bump at its middle) at tilt t."""
    from ppk.pld import _tilted
    from ppk.pld._tilted_bracket import _UpperTilt
    c = np.exp(-0.5 * ((np.arange(n) - n / 3) / (n / 10)) ** 2)
    tl = _tilted.Tilted(t, np.longdouble(0), s_lo, c, 1e-16, 0.0, 0.0, 0.0, 0.0, float(s_lo + n / 3), n / 10)
    return _UpperTilt(tl, dx)


@pytest.mark.parametrize("dx, s_lo", [(1e-4, -123_457), (1e-3, 5), (0.1, -3), (0.7, 10**7), (1e-7, 0)])
def test_upper_tilt_finds_the_first_atom_above_eps_without_keeping_the_losses(dx, s_lo):
    """The count of atoms with loss <= eps (the losses not kept) is searchsorted's on the losses made as the
    window's did, at every edge, a hair either side of it, between them, and beyond both ends."""
    n = 500
    up = _upper_tilt(1e-3, s_lo, n, dx)
    edges = (s_lo + np.arange(n)).astype(np.float64) * dx
    rng = np.random.default_rng(7)
    eps = np.concatenate([edges, np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf),
                          rng.uniform(edges[0] - 5 * dx, edges[-1] + 5 * dx, 300), [np.inf, -np.inf, 1e300, -1e300]])
    assert np.array_equal(up._first_above(eps), np.searchsorted(edges, eps, side="right"))


@pytest.mark.parametrize("t", [0.0, 1e-7, 2e-3, 0.05, 1.3])
def test_upper_tilt_weight_norm_bound_holds_and_is_tight(t):
    """The closed-form bound on sum_{i >= j} w_i^2 (w_i = e^{clip(t (peak - s_i), +-350)}) against the sum in
    mpmath at 50 digits: never below it, and within 1.6x of it (the geometric tail past the window's end)."""
    n = 4000
    up = _upper_tilt(t, -1000, n, 1e-3)
    mp.mp.dps = 50
    xs = [min(max(t * (up.peak - (up.s_lo + i)), -350.0), 350.0) for i in range(n)]
    w2 = [mp.e ** (2 * mp.mpf(x)) for x in xs]
    suffix = [mp.mpf(0)] * (n + 1)
    for i in range(n - 1, -1, -1):
        suffix[i] = suffix[i + 1] + w2[i]
    js = np.array([j for j in range(up.huge_end, n + 1, 37)] + [n], dtype=np.int64)
    got = up._root_w2(js)
    for j, g in zip(js, got):
        exact = mp.sqrt(suffix[int(j)])
        assert mp.mpf(float(g)) >= exact, (t, j)
        assert mp.mpf(float(g)) <= 1.6 * exact + mp.mpf(1e-300), (t, j)


def test_laplace_thousand_fold_composes_on_half_a_million_points():
    """A near-normal tilted law needs ~19.3 deviations for the tail mass TAIL = 1e-20 a window may leave out
    (certified apart, and 1e4 below the FFT's own error); 1e-30 took 23.6, just past 2^19 points, and every
    Laplace b = 1 x 1000 window (Delta 1e-3, deviation ~25,000 steps) doubled to 2^20.  0.15 s."""
    pld = PLD.from_laplace_mechanism(1.0, value_discretization_interval=1e-3).self_compose(1000)
    e5 = pld.get_epsilon_for_delta(1e-5)
    windows = [t.size for o in pld._curve().orders for t in o.upper_tilts.values()]
    assert windows and max(windows) <= 1 << 19
    lo, hi = pld.log_delta_bracket(e5)
    assert lo <= math.log(1e-5) and hi - lo < 1e-3       # the bracket stays tight on the smaller window


@pytest.mark.parametrize("drop_log", [80.0, 3.0])
def test_a_dropped_spectrum_is_counted_in_the_error_bound(monkeypatch, drop_log):
    """The spectral entries below e^-DROP_LOG are set to 0 before the inverse transform; err2 counts them.
    Oracle: a two-point factor (0.7 at 0, 0.3 at 1) taken 200 times and tilted by e^{t j} is a binomial, summed
    exactly in mpmath on a window holding its whole support (no aliasing).  DROP_LOG = 3 drops most of the
    spectrum (an error far above the transforms' rounding, which the bound must still cover); 80 (the
    default) keeps it within the rounding.  A few ms."""
    from ppk.pld import _tilted
    monkeypatch.setattr(_tilted, "DROP_LOG", drop_log)
    k, t = 200, 0.5
    f = _tilted.Factor(np.array([0.7, 0.3], dtype=np.longdouble), 0, k)
    tl = _tilted.compose([f], t=t, rtol=0.0, window=(0, 256))
    log_z = mp.mpf(float(tl.log_z)) + mp.mpf(float(tl.log_z - np.longdouble(float(tl.log_z))))
    exact = [mp.binomial(k, s) * mp.mpf(0.7) ** (k - s) * mp.mpf(0.3) ** s * mp.exp(t * s - log_z) if s <= k
             else mp.mpf(0) for s in range(256)]
    err = mp.sqrt(mp.fsum((mp.mpf(float(c)) - e) ** 2 for c, e in zip(tl.c, exact)))
    norm = mp.sqrt(mp.fsum(e ** 2 for e in exact))
    assert err <= tl.err2 + tl.rel * norm
    if drop_log < 10:      # it mattered: the rounding alone is bounded by ~1.5e-12 here, the error is ~4e-3
        assert err > 1e-6


def test_numpy_and_scipy_transforms_compose_alike(monkeypatch):
    """numpy (2.0 on) transforms into buffers the composition already holds; scipy.fft (numpy 1.x) makes its
    own.  Both are pocketfft's transforms: the same composition to the last bit, the same certified errors."""
    from ppk.pld import _tilted
    f = _tilted.Factor(np.array([0.5, 0.2, 0.3], dtype=np.longdouble), -1, 300)
    got = []
    for numpy_out in (True, False):
        monkeypatch.setattr(_tilted, "_NUMPY_OUT", numpy_out)
        got.append(_tilted.compose([f], t=0.01, rtol=0.0))
    assert np.array_equal(got[0].c, got[1].c) and got[0].err2 == got[1].err2 and got[0].s_lo == got[1].s_lo
