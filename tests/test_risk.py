"""Privacy at risk: the paper's printed values and independent oracles."""
import math

import mpmath as mp
import numpy as np
import pytest

from ppk.related import dp, risk


@pytest.mark.parametrize("k", [1, 2, 3, 6, 20, 50])
def test_T_closed_form_against_the_bessel_form(k):
    t = risk.BesselK(k)
    with mp.workdps(30):
        def bessel_pdf(x):   # 2^{2-k} x^{k-1/2} K_{k-1/2}(x) / (sqrt(2 pi) Gamma(k))
            return 2 ** (2 - k) * x ** (k - mp.mpf(1) / 2) * mp.besselk(k - mp.mpf(1) / 2, x) / (
                mp.sqrt(2 * mp.pi) * mp.gamma(k))
        for x in [0.05, 0.7, 3.0, 12.0]:
            assert t.pdf(x) == pytest.approx(float(bessel_pdf(x)), rel=1e-10)
        total = mp.quad(bessel_pdf, [0, 1, 10, mp.inf])
        assert float(total) == pytest.approx(1.0, rel=1e-10)
        assert t.cdf(2.0) == pytest.approx(float(mp.quad(bessel_pdf, [0, 2])), rel=1e-10)
    assert t.cdf(5.0) + t.sf(5.0) == pytest.approx(1.0, rel=1e-14)
    assert t.cdf(t.ppf(0.3)) == pytest.approx(0.3, rel=1e-12)


def test_T_sampler_has_the_right_law():
    t = risk.BesselK(3)
    x = t.rvs(200_000, rng=1)
    assert np.mean(x <= 1.5) == pytest.approx(t.cdf(1.5), abs=4 * math.sqrt(0.25 / 200_000))


def test_paper_values_gdpr_scenario():
    assert risk.eps_lower_bound_from_mae(max_mae=2.0) == 0.5                         # R2
    model = risk.CostModel(E=5500, n_stakeholders=100)
    assert model.dp(0.5) == pytest.approx(74434.40, abs=0.01)                         # R3
    best = model.optimal(0.5)
    assert best.eps == pytest.approx(0.274, abs=5e-4)                                 # R4
    assert best.budget == pytest.approx(37805.86, abs=0.01)                           # R5
    assert best.saving == pytest.approx(36628.532, abs=0.05)                          # R6 (paper slips by 0.017)
    for eps0, (eps, gamma) in [(0.1, (0.08, 0.80)), (0.5, (0.27, 0.61)), (1.0, (0.42, 0.54))]:   # R7-R9
        o = model.optimal(eps0)
        assert o.eps == pytest.approx(eps, abs=5e-3) and o.gamma == pytest.approx(gamma, abs=5e-3)


def test_eq10_closed_form_for_k1():
    # k = 1, c = 1: 1/eps - ln(1 - (1 - e^eps)/eps^2) = 1/eps0
    for eps0 in (0.1, 0.5, 1.0, 2.0, 5.0):
        e = risk.CostModel(E=1.0).optimal(eps0).eps
        assert 1 / e - math.log(1 - (1 - math.exp(e)) / e**2) == pytest.approx(1 / eps0, rel=1e-9)


def test_explicit_randomness_and_calibration():
    assert risk.laplace_overlap(eps1=1.0, eps2=0.6) == pytest.approx(0.81, abs=5e-3)          # R1
    assert risk.calibrate_eps0(eps=0.4, gamma=0.6) == pytest.approx(0.8, abs=5e-3)            # R11
    for k in (1, 2, 5):
        e = risk.eps_for_confidence(gamma=0.7, eps0=1.0, k=k)
        assert risk.confidence(eps=e, eps0=1.0, k=k) == pytest.approx(0.7, rel=1e-12)
        e0 = risk.calibrate_eps0(eps=0.3, gamma=0.8, k=k)
        assert risk.confidence(eps=0.3, eps0=e0, k=k) == pytest.approx(0.8, rel=1e-10)
    with pytest.raises(ValueError, match="infeasible"):
        risk.calibrate_eps0(eps=0.3, gamma=risk.BesselK(1).cdf(0.3) * 0.99)


def test_paper_confidence_is_not_the_exact_probability():
    # Lemma 24's model (independent gamma sums) reproduces gamma1 by Monte Carlo...
    rng = np.random.default_rng(5)
    x = np.abs(rng.exponential(1.0, 400_000) - rng.exponential(1.0, 400_000))   # T for k = 1, theta = 1/eps0 = 1
    model = np.mean(x[x <= 1.0] <= 0.5)
    assert model == pytest.approx(risk.confidence(eps=0.5, eps0=1.0), abs=4e-3)
    # ...but the privacy loss of a worst-case pair is far less often within eps
    exact = risk.confidence_exact(eps=0.5, eps0=1.0)
    assert exact == pytest.approx(0.1532, abs=1e-4)
    est, se = risk.confidence_mc(fx=[0.0], fy=[1.0], eps=0.5, eps0=1.0, samples=200_000, rng=2)
    assert abs(est - exact) < 4 * se
    assert risk.confidence_exact(eps=1.0, eps0=1.0) == 1.0


def test_sensitivity_sampling_tolerance():
    assert risk.dkw_alpha(n=15000, rho=0.01) == pytest.approx(0.9, abs=1e-3)                     # R12
    assert risk.empirical_confidence(gamma2=0.9, n=15000, rho=0.01, bound="paper") == pytest.approx(0.81038, abs=1e-5)
    assert risk.empirical_confidence(gamma2=0.9, n=15000, rho=0.01) == pytest.approx(0.80138, abs=1e-5)


def test_combined_example_is_reported_infeasible():
    with pytest.raises(ValueError, match="0.351989"):
        risk.calibrate_eps0_combined(eps=0.4, gamma3_hat=0.9, gamma2=0.9, eta=1.0, alpha=0.9)
    e0 = risk.calibrate_eps0_combined(eps=0.4, gamma3_hat=0.5, gamma2=0.9, eta=1.0, alpha=0.9)
    assert risk.combined_confidence(eps=0.4, eps0=e0, gamma2=0.9, eta=1.0) * 0.9 == pytest.approx(0.5, rel=1e-10)


def _advanced(eps0, n, delta=1e-5):
    return dp.compose_advanced(eps=eps0, delta=0.0, k=n, delta_prime=delta)[0]


def _basic(eps0, n):
    return dp.compose_basic([eps0] * n)[0]


def test_composition():
    assert _advanced(0.1, 100) == pytest.approx(0.1 * math.sqrt(200 * math.log(1e5)) + 100 * 0.1 * math.expm1(0.1))
    for n in (10, 100, 1000, 10000):
        par = risk.compose_privacy_at_risk(eps0=0.5, eps=0.27, gamma=0.61, n=n, delta=1e-5)
        assert par <= _advanced(0.5, n)
        # gamma = 0 is advanced composition: one formula, two names
        assert risk.compose_privacy_at_risk(eps0=0.5, eps=0.5, gamma=0.0, n=n, delta=1e-5) == pytest.approx(
            _advanced(0.5, n), rel=1e-15)
    n_star = risk.crossover(eps0=0.1, delta=1e-5)
    assert _advanced(0.1, n_star) < _basic(0.1, n_star)
    assert _advanced(0.1, n_star - 1) >= _basic(0.1, n_star - 1)
    assert risk.crossover(eps0=1.0, delta=1e-5) == math.inf      # e^eps0 >= 2: advanced never wins


def test_budget_upper_bound():
    m = risk.CostModel(E=5500, n_stakeholders=100)
    e = m.eps_upper_bound(budget=40000, gamma=0.6, eps0=0.5)
    assert m.par(e, 0.6, 0.5) == pytest.approx(40000, rel=1e-10)


@pytest.mark.parametrize("call,word", [
    (lambda: risk.confidence(eps=0.6, eps0=0.5), "eps"),
    (lambda: risk.confidence(eps=0.1, eps0=0.5, k=0), "k"),
    (lambda: risk.eps_for_confidence(gamma=1.5, eps0=1.0), "gamma"),
    (lambda: risk.dkw_alpha(n=0, rho=0.1), "n"),
    (lambda: risk.CostModel(E=-1.0), "E"),
    (lambda: risk.empirical_confidence(gamma2=0.9, n=10, rho=0.1, bound="x"), "bound"),
])
def test_bad_input(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_figure_12_setting_composition():
    # R10: delta = 1e-5, eps0 in {0.1, 0.5, 1.0}, privacy at risk at the cost-optimal (eps, gamma)
    model = risk.CostModel(E=5500, n_stakeholders=100)
    for eps0 in (0.1, 0.5, 1.0):
        o = model.optimal(eps0)
        mu = o.gamma * o.eps * math.expm1(o.eps) + (1 - o.gamma) * eps0 * math.expm1(eps0)
        for n in (1, 50, 1000):
            want = eps0 * math.sqrt(2 * n * math.log(1e5)) + n * mu
            got = risk.compose_privacy_at_risk(eps0=eps0, eps=o.eps, gamma=o.gamma, n=n, delta=1e-5)
            assert got == pytest.approx(want, rel=1e-9)


def test_risk_figures_are_drawn(tmp_path):
    pytest.importorskip("matplotlib")
    from ppk.related.risk.figures import draw_all
    names = draw_all(str(tmp_path))
    assert len(names) == 7 and all((tmp_path / n).stat().st_size > 10_000 for n in names)


def test_tiny_delta_and_bounds_stay_finite_or_refuse():
    # log(1 / 5e-324) was log(inf): the bound and the crossover are finite
    assert math.isfinite(risk.compose_privacy_at_risk(eps0=1.0, eps=0.5, gamma=0.6, n=10, delta=5e-324))
    assert math.isfinite(risk.crossover(eps0=0.1, delta=5e-324))
    with pytest.raises(ValueError, match=r"\bmax_mae\b"):
        risk.eps_lower_bound_from_mae(max_mae=5e-324)
    with pytest.raises(ValueError, match=r"\beta\b"):
        risk.calibrate_eps0_combined(eps=0.4, gamma3_hat=0.5, gamma2=0.9, eta=5e-324, alpha=0.9)
    with pytest.raises(ValueError, match=r"\beps0_max\b"):
        risk.calibrate_eps0(eps=0.4, gamma=0.6, eps0_max=1e300)     # did not converge (RuntimeError)


def test_besselk_refuses_non_finite_points_and_has_no_warning_at_zero():
    t = risk.BesselK(2)
    for method, name in ((t.pdf, "t"), (t.cdf, "x"), (t.sf, "x")):
        with pytest.raises(ValueError, match=rf"\b{name}\b"):
            method(math.nan)
        with pytest.raises(TypeError, match=rf"\b{name}\b"):
            method(None)
    with np.errstate(all="raise"):   # log 0 times 0 was NaN, e^{1e300} overflowed
        assert t.pdf(np.array([0.0, -1.0, -1e300])).tolist() == [t.pdf(0.0), 0.0, 0.0]
    assert t.rvs(size=-0.0).shape == (0,)


def test_figures_name_their_parameters(tmp_path):
    pytest.importorskip("matplotlib")
    from ppk.related.risk import figures as rf
    with pytest.raises(TypeError, match=r"\beps0s\b"):
        rf.fig2_eps_vs_confidence_eps0(str(tmp_path), eps0s=0.5)
    with pytest.raises(TypeError, match=r"\bmodel\b"):
        rf.fig_budget(str(tmp_path), 1.0, "b.png", model=1.0)
    with pytest.raises(ValueError, match=r"\bdelta\b"):
        rf.fig12_composition(str(tmp_path), delta=0.0)
    assert rf.fig12_composition(str(tmp_path), eps0s=[0.5]) == "risk_fig12_composition.png"   # one panel
