"""NoisyQuery and CountingQuery at the edges of issue #45: bounded work or a clear refusal, never a hang,
a pybind11 signature error or an OverflowError."""
import math

import pytest

import ppk
from ppk import _kernels, noise


def test_crossings_with_many_shifts_is_refused_up_front():
    # a mixture of 161 rows with Laplace noise of scale 38.9 and sensitivity 1000 ran for minutes (2000 runs of
    # the crossings path, each up to 20000 cell bounds per negative region); now its work is estimated first
    q = ppk.NoisyQuery(natural=noise.BinomialMixture(161, [0.5, 0.5], [0.2, 0.7]), added=noise.Laplace(38.9),
                       sensitivity=1000)
    with pytest.raises(ValueError, match="fewer shifts"):
        q.delta(0.0)
    # one shift is well inside the budget, and its answer is a bound of the estimate
    one = ppk.NoisyQuery(natural=noise.BinomialMixture(161, [0.5, 0.5], [0.2, 0.7]), added=noise.Laplace(38.9))
    assert one.path == "crossings" and -10 < one.log_delta(0.0) <= one.log_delta_upper(0.0) < 0


def test_a_binomial_too_wide_for_its_start_window_answers_with_a_bound(monkeypatch):
    # Bin(3e8, 0.3) with discrete Gaussian noise at eps = 0.5 (delta ~ e^-8e6) started at a window of more than
    # MAX_WINDOW values, which the engine refuses (None), and handed None to C++: "Invoked with: None, ...".
    # The same here at a small n, the engine refusing every window deeper than 256 e-folds
    real = _kernels.family_binomial_window

    def refusing(n, p, *, depth):
        if depth > 256:
            raise ValueError("the binomial window at this depth holds more than 2e7 values")
        return real(n, p, depth=depth)

    want = ppk.NoisyQuery(natural=noise.Binomial(10**6, 0.3), added=noise.DiscreteGaussian(2.0)).log_delta(0.5)
    monkeypatch.setattr(_kernels, "family_binomial_window", refusing)
    q = ppk.NoisyQuery(natural=noise.Binomial(10**6, 0.3), added=noise.DiscreteGaussian(2.0))
    lo, up = q.log_delta(0.5), q.log_delta_upper(0.5)
    assert want < -1000 and math.isfinite(up) and up >= want and lo <= up


def test_counting_query_epsilon_at_a_huge_sigma():
    # sigma ** 2 overflowed in the search's start; delta(0) = P(|Z| < 1/2)-ish = 4.0e-301 < 1e-3, so eps = 0
    q = ppk.CountingQuery(n=1000, known=500, p=0.5, sigma=1e300)
    assert q.delta(0.0) < 1e-300
    assert q.epsilon(1e-3) == 0.0
