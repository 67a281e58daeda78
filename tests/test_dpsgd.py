"""ppk.dpsgd_epsilon and ppk.dpsgd_noise_multiplier (docs/dpsgd.md).

Oracles: one Poisson-subsampled Gaussian step's delta(eps) in closed form (mpmath, 40 digits; both orders
of the add-or-remove pair), the equivalent Accountant and DpEvent plans, and the search's certificate
re-evaluated.  Few steps and coarse grids keep the tests cheap.
"""
from __future__ import annotations

import math

import mpmath
import pytest

import ppk

mpmath.mp.dps = 40


def one_step_delta(eps: float, sigma: float, q: float) -> mpmath.mpf:
    """delta(eps) of one step: P = (1 - q) N(0, sigma^2) + q N(-1, sigma^2) against Q = N(0, sigma^2), the
    larger of H(P || Q) and H(Q || P).  The loss log(1 - q + q e^{l(x)}), l(x) = -(2x + 1)/(2 sigma^2), is
    decreasing in x, so each order is a difference of normal tails at the one x where the loss is eps."""
    e, s, q = mpmath.exp(eps), mpmath.mpf(sigma), mpmath.mpf(q)

    def x_at(ell):   # l(x) = ell
        return -ell * s * s - mpmath.mpf(1) / 2

    def p_below(x):
        return (1 - q) * mpmath.ncdf(x / s) + q * mpmath.ncdf((x + 1) / s)

    x1 = x_at(mpmath.log((e - 1 + q) / q))          # L > eps  <=>  x < x1
    remove = p_below(x1) - e * mpmath.ncdf(x1 / s)
    add = mpmath.mpf(0)
    if 1 / e > 1 - q:                                 # L < -eps is possible
        x2 = x_at(mpmath.log((1 / e - 1 + q) / q))   # L < -eps  <=>  x > x2
        add = (1 - mpmath.ncdf(x2 / s)) - e * (1 - p_below(x2))
    return max(remove, add, mpmath.mpf(0))


@pytest.mark.parametrize("sigma, q", [(1.0, 0.2), (0.7, 0.05)])
def test_one_step_epsilon_is_certified(sigma, q):
    """One step: the eps reported has true delta <= the target (never too small), and is close."""
    delta = 1e-5
    eps = ppk.dpsgd_epsilon(noise_multiplier=sigma, sampling_rate=q, steps=1, delta=delta,
                            value_discretization_interval=1e-3)
    assert one_step_delta(eps, sigma, q) <= delta
    assert one_step_delta(eps * 0.99, sigma, q) > delta     # within 1 %: the grid's slack, not a loose bound


def test_a_tiny_delta_cuts_the_tails_deeper_and_stays_certified():
    """delta = 1e-40 is below the mass the shallowest cut (e^-50) puts at infinite loss (~1e-31 here): the
    tails are cut deeper for it (docs/dpsgd.md, "The tails"), and the eps is the closed form's to 1 %.  Fails
    if every question were answered at e^-50 (eps inf)."""
    delta = 1e-40
    eps = ppk.dpsgd_epsilon(noise_multiplier=1.0, sampling_rate=0.2, steps=1, delta=delta,
                            value_discretization_interval=1e-3)
    assert one_step_delta(eps, 1.0, 0.2) <= delta < one_step_delta(eps * 0.99, 1.0, 0.2)


def test_epsilon_is_the_accountant_and_event_plan():
    """The same number from dpsgd_epsilon, Accountant.add_subsampled_gaussian and a DpEvent-shaped plan."""
    kw = dict(noise_multiplier=1.2, sampling_rate=0.1, steps=30, delta=1e-6, value_discretization_interval=1e-2)
    eps = ppk.dpsgd_epsilon(**kw)
    acc = ppk.Accountant(value_discretization_interval=1e-2).add_subsampled_gaussian(sigma=1.2, sampling_prob=0.1,
                                                                                    times=30)
    assert eps == acc.epsilon(1e-6) and 0 < eps < math.inf
    # more steps, more loss; more noise, less
    assert ppk.dpsgd_epsilon(**{**kw, "steps": 60}) > eps > ppk.dpsgd_epsilon(**{**kw, "noise_multiplier": 2.0})


@pytest.mark.parametrize("target", [0.5, 2.0, 8.0])
def test_noise_multiplier_is_certified_and_near_minimal(target):
    """The sigma returned has certified eps <= target (re-evaluated with the same arguments), and a sigma
    2 rtol smaller does not."""
    kw = dict(delta=1e-5, sampling_rate=0.1, steps=10, value_discretization_interval=1e-2)
    sigma = ppk.dpsgd_noise_multiplier(epsilon=target, rtol=0.01, **kw)
    assert ppk.dpsgd_epsilon(noise_multiplier=sigma, **kw) <= target
    assert ppk.dpsgd_epsilon(noise_multiplier=sigma * (1 - 0.02), **kw) > target


def test_refusals_name_the_parameter():
    kw = dict(delta=1e-5, sampling_rate=0.1, steps=10, value_discretization_interval=1e-2)
    with pytest.raises(ValueError, match="epsilon"):
        ppk.dpsgd_noise_multiplier(epsilon=100.0, **kw)
    # delta above P(a row is ever sampled) = 1 - 0.9^10: no noise is needed, a refusal, not a search toward 0
    with pytest.raises(ValueError, match="delta .* ever sampled"):
        ppk.dpsgd_noise_multiplier(epsilon=1.0, **{**kw, "delta": 0.7})
    with pytest.raises(ValueError, match="sampling_rate"):
        ppk.dpsgd_epsilon(noise_multiplier=1.0, sampling_rate=1.5, steps=10, delta=1e-5)
    with pytest.raises(ValueError, match="steps"):
        ppk.dpsgd_epsilon(noise_multiplier=1.0, sampling_rate=0.1, steps=0, delta=1e-5)
    with pytest.raises(TypeError):
        ppk.dpsgd_epsilon(1.0, 0.1, 10, 1e-5)     # keyword-only
    # a run too wide for one FFT is refused at once, in this function's words
    with pytest.raises(ValueError, match="steps = 4611686018427387904"):
        ppk.dpsgd_epsilon(noise_multiplier=1.0, sampling_rate=0.1, steps=2**62, delta=1e-5)
