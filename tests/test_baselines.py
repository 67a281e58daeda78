"""DP baselines: a reference table, orderings, the printed Cor. 3.2 shown unsafe, bad input."""
import math

import numpy as np
import pytest

import oracle
from ppk import baselines as bl

# reference values checked against 40-digit mpmath, sensitivity 1
TABLE = [  # eps, delta, sigma_BW, sigma_32 corrected, sigma_32 printed, sigma_DR
    (1.0, 1e-6, 4.224679, 4.856382, 4.856382, 5.298803),
    (0.5, 1e-10, 11.43624, 12.80080, 9.051534, 13.63789),
    (0.1, 1e-6, 36.30469, 47.63920, 15.06484, 52.98803),
    (0.01, 1e-6, 306.3504, 475.4476, 47.54476, 529.8803),
    (0.001, 1e-14, 6146.428, 7650.693, 241.9362, 8057.212),
]


@pytest.mark.parametrize("eps,delta,bw,c32,printed,dr", TABLE)
def test_spec_table(eps, delta, bw, c32, printed, dr):
    assert bl.analytic_gaussian_sigma(eps=eps, delta=delta) == pytest.approx(bw, rel=2e-6)
    assert bl.sufficient_gaussian_sigma(eps=eps, delta=delta) == pytest.approx(c32, rel=2e-6)
    if eps < 1:
        with pytest.warns(bl.NotDifferentiallyPrivateWarning):
            assert bl.sufficient_gaussian_sigma(eps=eps, delta=delta, variant="as_printed") == pytest.approx(printed, rel=2e-6)
    else:
        assert bl.sufficient_gaussian_sigma(eps=eps, delta=delta, variant="as_printed") == pytest.approx(printed, rel=2e-6)
    assert bl.classic_gaussian_sigma(eps=eps, delta=delta, allow_eps_ge_1=True) == pytest.approx(dr, rel=2e-6)


@pytest.mark.parametrize("eps", [1e-3, 0.01, 0.1, 0.5, 0.9, 2.0, 5.0])
@pytest.mark.parametrize("delta", [1e-14, 1e-10, 1e-6, 1e-3])
def test_ordering_analytic_le_corrected_le_classic(eps, delta):
    a = bl.analytic_gaussian_sigma(eps=eps, delta=delta)
    c = bl.sufficient_gaussian_sigma(eps=eps, delta=delta)
    assert a <= c
    if eps < 1:
        assert c <= bl.classic_gaussian_sigma(eps=eps, delta=delta)
    # each sufficient sigma is DP by the exact criterion
    assert bl.analytic_gaussian_delta(sigma=c, eps=eps) <= delta


@pytest.mark.parametrize("eps,delta", [(0.5, 1e-10), (0.1, 1e-6), (0.001, 1e-14)])
def test_printed_corollary_is_not_dp_below_eps_1(eps, delta):
    with pytest.warns(bl.NotDifferentiallyPrivateWarning):
        s = bl.sufficient_gaussian_sigma(eps=eps, delta=delta, variant="as_printed")
    assert bl.analytic_gaussian_delta(sigma=s, eps=eps) > 100 * delta


@pytest.mark.parametrize("eps,delta,sens", [(0.01, 1e-6, 1.0), (1.0, 1e-9, 2.5), (5.0, 1e-300, 1.0), (1e-3, 1e-3, 0.1)])
def test_analytic_sigma_is_exact_and_rounded_up(eps, delta, sens):
    s = bl.analytic_gaussian_sigma(eps=eps, delta=delta, sensitivity=sens)
    at = float(oracle.gaussian_log_delta(s, eps, sens))
    below = float(oracle.gaussian_log_delta(s * (1 - 1e-9), eps, sens))
    assert at <= math.log(delta) < below


@pytest.mark.parametrize("sigma,delta,sens", [(3.0, 1e-6, 1.0), (0.5, 1e-9, 2.5), (1e4, 1e-300, 1.0), (1e-3, 0.3, 1.0)])
def test_analytic_epsilon_is_exact_and_rounded_up(sigma, delta, sens):
    e = bl.analytic_gaussian_epsilon(sigma=sigma, delta=delta, sensitivity=sens)
    at = float(oracle.gaussian_log_delta(sigma, e, sens))
    below = float(oracle.gaussian_log_delta(sigma, e * (1 - 1e-9), sens))
    assert at <= math.log(delta) < below
    # the converse calibration gives sigma back
    assert bl.analytic_gaussian_sigma(eps=e, delta=delta, sensitivity=sens) == pytest.approx(sigma, rel=1e-9)


def test_analytic_epsilon_ends():
    assert bl.analytic_gaussian_epsilon(sigma=0.0, delta=0.5) == math.inf      # the exact answer: delta = 1
    assert bl.analytic_gaussian_epsilon(sigma=1e-200, delta=0.5) == math.inf   # eps beyond the float range
    assert bl.analytic_gaussian_epsilon(sigma=1e6, delta=1e-3) == 0.0          # delta(0) ~ 4e-7 already


def test_analytic_delta_matches_oracle_and_vectorises():
    eps = np.array([0.0, 0.1, 1.0, 10.0])
    got = bl.analytic_gaussian_log_delta(sigma=3.0, eps=eps, sensitivity=1.0)
    want = [float(oracle.gaussian_log_delta(3.0, e)) for e in eps]
    np.testing.assert_allclose(got, want, rtol=1e-13)
    assert isinstance(bl.analytic_gaussian_delta(sigma=3.0, eps=0.1), float)


def test_composition_scales_with_sqrt_c():
    one = bl.sufficient_gaussian_sigma(eps=0.5, delta=1e-6)
    assert bl.sufficient_gaussian_sigma(eps=0.5, delta=1e-6, compositions=4) == pytest.approx(2 * one)


def test_laplace_scale():
    assert bl.laplace_scale(eps=0.5) == 2.0
    assert bl.laplace_scale(eps=0.5, sensitivity=3.0) == 6.0


@pytest.mark.parametrize("call,word", [
    (lambda: bl.classic_gaussian_sigma(eps=1.0, delta=1e-6), "eps"),
    (lambda: bl.classic_gaussian_sigma(eps=0.5, delta=0.0), "delta"),
    (lambda: bl.sufficient_gaussian_sigma(eps=0.5, delta=0.3), "delta"),
    (lambda: bl.sufficient_gaussian_sigma(eps=0.5, delta=1e-6, variant="nope"), "variant"),
    (lambda: bl.sufficient_gaussian_sigma(eps=0.5, delta=1e-6, compositions=0), "compositions"),
    (lambda: bl.analytic_gaussian_sigma(eps=0.0, delta=1e-6), "eps"),
    (lambda: bl.analytic_gaussian_sigma(eps=0.1, delta=1.0), "delta"),
    (lambda: bl.analytic_gaussian_sigma(eps=0.1, delta=1e-6, sensitivity=-1), "sensitivity"),
    (lambda: bl.analytic_gaussian_delta(sigma=-1.0, eps=0.1), "sigma"),
    (lambda: bl.laplace_scale(eps=float("nan")), "eps"),
    (lambda: bl.analytic_gaussian_epsilon(sigma=-1.0, delta=1e-6), "sigma"),
    (lambda: bl.analytic_gaussian_epsilon(sigma=1.0, delta=0.0), "delta"),
    (lambda: bl.analytic_gaussian_epsilon(sigma=1.0, delta=1e-6, sensitivity=0.0), "sensitivity"),
    (lambda: bl.analytic_gaussian_epsilon(sigma=1.0, delta=1e-6, rtol=float("nan")), "rtol"),
])
def test_bad_input(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_no_old_name_of_the_sufficient_sigma():
    # optimal_gaussian_sigma was a deprecated alias for a version never released: the bound is sufficient
    assert not hasattr(bl, "optimal_gaussian_sigma")
