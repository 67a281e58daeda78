"""PrivacyLossDistribution.from_curve: one builder for every query.  Exact for the noisy count (the tails
of its loss, bit for bit what from_counting_query built); for the others the connect-the-dots pair of the
certified upper curve, which must never report less than the truth, alone or composed."""
import itertools
import math

import numpy as np
import pytest

import ppk
from ppk import noise
from ppk.baselines import analytic_gaussian_delta

PLD = ppk.PrivacyLossDistribution
EPS = np.linspace(0.0, 4.0, 81)


def _same(a, b):
    for rep in ("_buckets", "_atoms"):
        x, y = getattr(a, rep), getattr(b, rep)
        assert (x.offset, x.width, x.overflow_p, x.overflow_q, x.err_p, x.err_q) == \
            (y.offset, y.width, y.overflow_p, y.overflow_q, y.err_p, y.err_q)
        assert np.array_equal(x.p, y.p) and np.array_equal(x.q, y.q)
    assert a.value_discretization_interval == b.value_discretization_interval
    assert a._shared_noise_key == b._shared_noise_key
    assert np.array_equal(a.delta_bracket(EPS)[1], b.delta_bracket(EPS)[1])


@pytest.mark.parametrize("n, known, p, sigma", [(1001, 0, 0.4, 3.0), (1001, 0, 0.5, 3.0), (201, 10, 0.3, 0.0),
                                                (1, 0, 0.3, 2.0), (50, 0, 1.0, 2.0)])
def test_a_count_is_built_from_its_exact_tails_as_from_counting_query_did(n, known, p, sigma):
    q = ppk.CountingQuery(n=n, known=known, p=p, sigma=sigma)
    a = PLD.from_curve(q, value_discretization_interval=1e-3)
    _same(a, PLD.from_counting_query(q, value_discretization_interval=1e-3))
    # the tails path is exact: its bracket holds the kernel's delta tightly
    lo, hi = a.delta_bracket(np.array([0.1, 0.5]))
    truth = q.delta(np.array([0.1, 0.5]))
    assert np.all(lo <= truth * (1 + 1e-9)) and np.all(truth <= hi)
    assert a._shared_noise_key == (("rows", n, known) if q.has_natural_noise else None)


def test_a_count_without_noise_of_any_kind_is_refused():
    with pytest.raises(ValueError, match="reveals the row"):
        PLD.from_curve(ppk.CountingQuery(n=1, known=0, p=0.5, sigma=0.0))


def _curve_queries():
    return {
        "noisy": ppk.NoisyQuery(natural=noise.PoissonBinomial(probs=[0.3] * 50 + [0.6] * 50), added=noise.Laplace(2.0)),
        "noisy-discrete": ppk.NoisyQuery(natural=noise.Binomial(200, 0.3), added=noise.DiscreteGaussian(sigma=2.0),
                                         sensitivity=2),
        "histogram": ppk.HistogramQuery(n=60, known=0, probs=[0.2, 0.3, 0.5], sigma=2.0),
        "overlapping": ppk.OverlappingCounts(atoms={(0,): 300, (0, 1): 200, (1,): 400}, p=0.4, sigmas=[3.0, 4.0]),
    }


@pytest.mark.parametrize("kind, points, factor", [("noisy", 1024, 1.001), ("noisy-discrete", 1024, 1.05),
                                                  ("histogram", 256, 1.25), ("overlapping", 1024, 1.01)])
def test_the_connect_the_dots_pair_is_above_the_curve_and_close_to_its_upper_end(kind, points, factor):
    q = _curve_queries()[kind]
    assert q._exact_loss() is None
    pld = PLD.from_curve(q, value_discretization_interval=1e-3, curve_points=points)
    lo, hi = pld.delta_bracket(EPS)
    # a summed bracket's PLD is built from a looser bracket (ppk.pld._knots.UPPER_RTOL) whose upper end may
    # be below the query's own (tighter) one, never below the truth: compare with the query's lower end of it
    point = np.exp(q._log_delta_ends_many(EPS, rtol=q.rtol)[0] if q._costly_curve else q.log_delta(EPS))
    upper = np.exp(q.log_delta_upper(EPS))
    assert np.all(hi >= point) and np.all(lo == 0)
    # at the knots the pair's delta is the hull of the upper curve, between them its chord: within
    # `factor` of the upper curve wherever the curve is above the truncation (e^-100) by a margin
    live = upper > 1e-30
    assert np.all(hi[live] <= upper[live] * factor)
    assert pld._shared_noise_key == q._rows_key is not None


def test_the_pair_is_a_pair_of_probability_laws_mirror_images_of_each_other():
    q = _curve_queries()["noisy-discrete"]
    pld = PLD.from_curve(q, value_discretization_interval=1e-3, curve_points=300)
    m = pld._atoms
    assert math.isclose(float(m.p.sum() + m.overflow_p), 1.0, abs_tol=1e-15)
    assert math.isclose(float(m.q.sum() + m.overflow_q), 1.0, abs_tol=1e-15)
    assert np.all(m.p >= 0) and np.all(m.q >= 0)
    # symmetric: the loss under Q is minus the loss under P, so both orders report the same delta
    assert m.offset == -(m.offset + m.p.size - 1) and np.array_equal(m.p, m.q[::-1])


@pytest.mark.parametrize("k", [1, 2, 5, 16])
def test_composed_copies_of_a_gaussian_curve_stay_above_the_gaussian_with_the_pooled_sigma(k):
    # no natural noise and Gaussian noise: the Gaussian mechanism, whose k-fold composition is the
    # Gaussian mechanism with sigma / sqrt(k) (closed form, Balle & Wang)
    q = ppk.NoisyQuery(natural=noise.Binomial(0, 0.5), added=noise.Gaussian(2.0))
    assert q._exact_loss() is None and q._rows_key is None
    pld = PLD.from_curve(q, value_discretization_interval=1e-3)
    composed = pld if k == 1 else pld.self_compose(k)
    eps = np.array([0.0, 0.25, 0.5, 1.0, 2.0, 4.0])
    lo, hi = composed.delta_bracket(eps)
    exact = analytic_gaussian_delta(sigma=2.0 / math.sqrt(k), eps=eps)
    assert np.all(hi >= exact)
    assert np.all(hi <= exact * 1.01)


def _brute_force_delta(P, Q, k, eps):
    """max over every choice of neighbour order per release of H_{e^eps} of the k-fold product."""
    best = 0.0
    for orders in itertools.product((0, 1), repeat=k):
        p, q = np.ones(1), np.ones(1)
        for o in orders:
            a, b = (P, Q) if o == 0 else (Q, P)
            p, q = np.outer(p, a).ravel(), np.outer(q, b).ravel()
        best = max(best, float(np.maximum(p - math.exp(eps) * q, 0.0).sum()))
    return best


@pytest.mark.parametrize("k", [1, 2, 3])
def test_composition_stays_above_the_brute_force_delta_of_a_tiny_discrete_release(k):
    # a noiseless count over 3 unknown rows: outputs 1 + X vs X, X ~ Bin(3, 0.4) (infinite losses included)
    q = ppk.NoisyQuery(natural=noise.Binomial(3, 0.4), added=noise.NoNoise())
    w = np.array([math.comb(3, j) * 0.4**j * 0.6**(3 - j) for j in range(4)])
    P, Q = np.append(0.0, w), np.append(w, 0.0)
    pld = PLD.from_curve(q, value_discretization_interval=1e-3)
    composed = pld if k == 1 else pld.self_compose(k, independent=True)
    for eps in (0.0, 0.3, 1.0, 2.0):
        truth = _brute_force_delta(P, Q, k, eps)
        hi = composed.delta_bracket(eps)[1]
        assert truth <= hi <= truth + 0.05


def test_the_curve_is_evaluated_once_over_the_grid():
    calls = []

    class Counted(ppk.NoisyQuery):
        def log_delta_upper(self, eps):
            calls.append(np.size(eps))
            return super().log_delta_upper(eps)

    q = Counted(natural=noise.Binomial(0, 0.5), added=noise.Gaussian(1.0))
    PLD.from_curve(q, value_discretization_interval=1e-3, curve_points=100)
    assert len(calls) == 1 and 2 <= calls[0] <= 100


def test_arguments_are_checked_by_name():
    q = ppk.NoisyQuery(natural=noise.Binomial(0, 0.5), added=noise.Gaussian(1.0))
    with pytest.raises(TypeError, match=r"\bcurve\b.*a ppk query"):
        PLD.from_curve("a curve")
    with pytest.raises(ValueError, match=r"\bcurve_points\b"):
        PLD.from_curve(q, curve_points=1)
    with pytest.raises(ValueError, match=r"\blog_mass_truncation_bound\b"):
        PLD.from_curve(q, log_mass_truncation_bound=0.0)
    with pytest.raises(ValueError, match=r"\bvalue_discretization_interval\b"):
        PLD.from_curve(q, value_discretization_interval=0.0)
