"""The PLD of a histogram or table plan (issue #41): the pair bound at many eps in one kernel call, knots
placed by the curve's drop, and the looseness the PLD states (docs/accuracy.md, "Any query")."""
import math

import numpy as np
import pytest

import ppk
from ppk import _kernels
from ppk.baselines import analytic_gaussian_delta
from ppk.pld import PrivacyLossDistribution as PLD

EPS = np.array([0.0, 0.05, 0.1, 0.3, 0.6, 1.0])


@pytest.mark.parametrize("q, sigma", [(0.5, 1.5), (0.3, 0.4), (0.2, 0.0)])
def test_the_many_eps_kernel_brackets_the_one_eps_kernels_value(q, sigma):
    # the same certified quantity: each many-eps bracket overlaps the one-eps bracket, and its width is the rtol's
    args = dict(n_unknown=400, s=0.4, s_rest=0.6, q=q, q_rest=1 - q, sigma=sigma)
    lo, up, ev = _kernels.mixture_log_delta_brackets(**args, eps=EPS[::-1], rtol=1e-2, max_evaluations=2000)
    for e, l, u in zip(EPS[::-1], lo, up):
        l1, u1, _ = _kernels.mixture_log_delta_bracket(**args, eps=float(e), rtol=1e-6, max_evaluations=2000)
        assert l <= u1 + 1e-12 and l1 <= u + 1e-12        # both hold the truth
        assert u >= u1 - 1e-6 * abs(u1) - 1e-12            # never below the tight bracket's truth
        assert u - l <= math.log1p(1e-2) * max(1, -l / 50) + 1e-12
    assert np.all(ev >= 1)


def _ratio(pld, query, eps):
    """The PLD's delta over the query's own certified upper delta, where that is above e^-100."""
    hi = pld.delta_bracket(eps)[1]
    own = query.delta_bracket(eps)[1]
    live = own > math.exp(-100)
    return hi[live] / own[live], hi, query


def test_a_histograms_pld_is_within_its_stated_looseness_of_the_histograms_upper_curve():
    h = ppk.HistogramQuery(n=300, known=200, probs=[0.2] * 5, sigma=0.7)
    pld = PLD.from_curve(h, value_discretization_interval=1e-3)
    eps = np.array([0.01, 0.05, 0.2, 0.5, 1.0, 1.7])
    ratio, hi, _ = _ratio(pld, h, eps)
    lower = np.exp(h._log_delta_ends_many(eps, rtol=1e-4)[0])   # the pair bound's lower end: below its truth
    assert np.all(hi >= lower)
    assert pld.curve_looseness is not None and 0 <= pld.curve_looseness < 0.2
    assert np.all(ratio <= 1 + pld.curve_looseness + 2e-3)
    assert np.all(ratio <= 1.01)


def test_a_table_plans_pld_is_above_its_pair_bound_and_close_to_its_upper_curve():
    plan = ppk.TablePlan(n=300, known=200, probs=[0.25, 0.25, 0.5],
                         counts=[([0, 1, 2], 1.0)] + ppk.table_plan.histogram_counts([0, 1, 2], sigma=1.0))
    pld = PLD.from_curve(plan, value_discretization_interval=1e-3)
    eps = np.array([0.02, 0.1, 0.4, 0.9])
    ratio, hi, _ = _ratio(pld, plan, eps)
    assert np.all(hi >= np.exp(plan._log_delta_ends_many(eps, rtol=1e-4)[0]))
    assert np.all(ratio <= 1.01)


def test_a_plan_composed_with_gaussians_is_close_above_the_same_release_as_an_exact_count():
    # a histogram of two categories holding every unknown row: the release is, exactly, the count of one of
    # them with noise sigma / sqrt 2 (the sum of the two is public noise; docs/table-plans.md), whose PLD is
    # exact (its loss tails): composed with the same Gaussians, its lower end is below the plan's true delta
    plan = ppk.TablePlan.histogram(n=200, known=150, probs=[0.5, 0.5], sigma=1.0)
    count = ppk.CountingQuery(n=200, known=150, p=0.5, sigma=1.0 / math.sqrt(2.0))

    def composed(release):
        acc = ppk.Accountant(value_discretization_interval=1e-3).add(release).add_gaussian(sigma=3.0)
        return acc.add_subsampled_gaussian(sigma=2.0, sampling_prob=0.05)

    eps = np.array([0.5, 1.5])   # few: each eps of a composed plan costs its own tilted composition
    delta = composed(plan).delta(eps)
    exact_lo, exact_hi = composed(count).delta_bracket(eps)
    assert np.all(delta >= exact_lo)
    assert np.all(delta <= exact_hi * 1.01)
    assert np.all(delta >= analytic_gaussian_delta(sigma=3.0, eps=eps))


def test_orders_left_out_by_the_first_pass_leave_the_maximum_as_it_was():
    # two pairs and two orders each; the maximum with parts left out where another is certainly larger holds
    # every part's truth (above each part's own lower end) and is not above the full maximum's upper end
    from ppk import _pair_bound
    pairs = [(0.05, 0.1, 0.85, 1.4), (0.05, 0.3, 0.65, 1.1)]
    eps = np.linspace(0.0, 1.5, 40)
    lo, up = _pair_bound.pairs_log_brackets(150, pairs, eps=eps, rtol=1e-3, max_evaluations=2000)
    parts = [_pair_bound.pairs_log_brackets(150, [p], eps=eps, rtol=1e-3, max_evaluations=2000) for p in pairs]
    full_lo = np.max([p[0] for p in parts], axis=0)
    full_up = np.max([p[1] for p in parts], axis=0)
    assert np.all(up >= full_lo) and np.all(lo <= full_up)
    assert np.all(up <= full_up + 2e-3) and np.all(lo >= full_lo - 2e-3)


def test_the_stated_looseness_bounds_the_pair_over_a_convex_curve_between_the_knots():
    # the Gaussian mechanism as a cheap curve on few knots: its delta (closed form, convex in e^eps) is
    # below the pair's everywhere, and the pair is at most 1 + curve_looseness times it wherever it counts
    from ppk import noise
    q = ppk.NoisyQuery(natural=noise.Binomial(0, 0.5), added=noise.Gaussian(2.0))
    pld = PLD.from_curve(q, value_discretization_interval=1e-3, curve_points=400)
    eps = np.linspace(0.0, 8.0, 801)
    exact = analytic_gaussian_delta(sigma=2.0, eps=eps)
    hi = pld.delta_bracket(eps)[1]
    live = exact > 1e-30
    ratio = hi[live] / exact[live] - 1
    assert np.all(ratio >= -1e-9)
    assert 0.01 < ratio.max() <= pld.curve_looseness + 1e-9
    assert pld.curve_looseness < 10 * ratio.max()


def test_the_many_eps_kernel_refuses_bad_arguments_by_name():
    from ppk import _core
    args = (100, 0.4, 0.6, 0.5, 0.5, 1.0)
    with pytest.raises(ValueError, match="eps"):
        _core.binomial_mixture_delta_many(*args, np.array([0.1, np.nan]), 1e-3, 100, 16)
    with pytest.raises(ValueError, match="block"):
        _core.binomial_mixture_delta_many(*args, np.array([0.1]), 1e-3, 100, 0)
    lo, up, ev = _core.binomial_mixture_delta_many(*args, np.array([], dtype=np.float64), 1e-3, 100, 16)
    assert lo.size == up.size == ev.size == 0
