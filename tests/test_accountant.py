"""ppk.Accountant: a plan of releases composed with a certified bracket; shared natural noise refused."""
import math

import numpy as np
import pytest

import ppk
from ppk.baselines import analytic_gaussian_delta


def test_a_plan_of_gaussians_is_the_gaussian_with_the_pooled_sigma():
    acc = ppk.Accountant(value_discretization_interval=1e-3).add_gaussian(sigma=2.0, times=3).add_gaussian(sigma=4.0)
    pooled = 1 / math.sqrt(3 / 4 + 1 / 16)
    eps = np.array([0.1, 0.5, 1.0, 2.0])
    lo, hi = acc.delta_bracket(eps)
    exact = analytic_gaussian_delta(sigma=pooled, eps=eps)
    assert np.all(lo <= exact) and np.all(exact <= hi) and np.all(hi <= exact * 1.01)
    assert acc.delta(1.0) == hi[2]
    e = acc.epsilon(1e-4)
    assert acc.delta(e) <= 1e-4 < acc.delta(e * 0.999)


def test_counting_queries_of_one_database_are_refused():
    q = ppk.CountingQuery(n=1001, known=0, p=0.4, sigma=3.0)
    acc = ppk.Accountant(value_discretization_interval=1e-3).add(q)
    with pytest.raises(ValueError, match="repeat"):
        acc.add(q.with_sigma(5.0))
    with pytest.raises(ValueError, match="not fresh"):
        ppk.Accountant().add(q, times=2)
    other = ppk.CountingQuery(n=1001, known=10, p=0.4, sigma=3.0)   # another attacker: another model
    assert acc.add(other).delta(0.5) >= ppk.Accountant(value_discretization_interval=1e-3).add(q).delta(0.5)


def test_releases_that_are_not_queries_are_refused_clearly():
    # every query has a PLD (PrivacyLossDistribution.from_curve): what is refused is what is not a release
    with pytest.raises(TypeError, match=r"HistogramQuery, OverlappingCounts\), got str.*add_gaussian"):
        ppk.Accountant().add("gaussian")
    with pytest.raises(ValueError, match="empty"):
        ppk.Accountant().delta(1.0)


def _queries():
    from ppk import noise
    return {
        "count": ppk.CountingQuery(n=1001, known=0, p=0.4, sigma=3.0),
        "noisy": ppk.NoisyQuery(natural=noise.PoissonBinomial(probs=[0.3] * 20 + [0.6] * 20), added=noise.Laplace(2.0)),
        "histogram": ppk.HistogramQuery(n=60, known=0, probs=[0.2, 0.3, 0.5], sigma=2.0),
        "overlapping": ppk.OverlappingCounts(atoms={(0,): 300, (0, 1): 200, (1,): 400}, p=0.4, sigmas=[3.0, 4.0]),
    }


@pytest.fixture
def coarse_curves(monkeypatch):
    """The accountant's PLDs of queries from 64 points of their curves instead of 1,024 (a histogram's costs
    ~3 s): these tests are about the plan (composition, refusals), not the PLD's resolution, and a coarser
    curve is still pessimistic (PrivacyLossDistribution.from_curve)."""
    PLD = ppk.PrivacyLossDistribution
    build = PLD.from_curve
    monkeypatch.setattr(PLD, "from_curve", classmethod(lambda cls, curve, **kw: build(curve, **{"curve_points": 64,
                                                                                                 **kw})))


@pytest.mark.usefixtures("coarse_curves")
def test_every_query_type_composes_in_a_plan():
    acc = ppk.Accountant(value_discretization_interval=1e-2).add_gaussian(sigma=5.0)
    alone = acc.delta(0.5)
    for q in _queries().values():
        acc.add(q)
    lo, hi = acc.delta_bracket(0.5)
    # composing more releases never lowers delta; the certified upper end is above each release's delta
    assert alone <= hi <= 1 and lo <= hi
    assert all(hi >= q.delta(0.5) for q in _queries().values())
    assert len(acc._plan) == 5


@pytest.mark.usefixtures("coarse_curves")
@pytest.mark.parametrize("kind", ["count", "noisy", "histogram", "overlapping"])
def test_releases_over_the_same_unknown_rows_are_refused_for_every_query_type(kind):
    q = _queries()[kind]
    acc = ppk.Accountant(value_discretization_interval=1e-2).add(q)
    with pytest.raises(ValueError, match="shares its unknown rows.*repeat"):
        acc.add(q)
    with pytest.raises(ValueError, match="times must be 1.*not fresh"):
        ppk.Accountant(value_discretization_interval=1e-2).add(q, times=2)
    # a PLD over the same rows is refused too (it carries them), and so is composing two of them directly
    pld = ppk.PrivacyLossDistribution.from_curve(q, value_discretization_interval=1e-2, curve_points=64)
    with pytest.raises(ValueError, match="shares its unknown rows"):
        acc.add(pld)
    with pytest.raises(ValueError, match="not independent"):
        pld.compose(pld)


def test_releases_without_natural_noise_compose_freely():
    from ppk import noise
    q = ppk.NoisyQuery(natural=noise.Binomial(0, 0.5), added=noise.Gaussian(2.0))   # the Gaussian mechanism
    acc = ppk.Accountant(value_discretization_interval=1e-3).add(q, times=4)
    exact = analytic_gaussian_delta(sigma=1.0, eps=np.array([0.5, 1.0, 2.0]))
    lo, hi = acc.delta_bracket(np.array([0.5, 1.0, 2.0]))
    assert np.all(hi >= exact) and np.all(hi <= exact * 1.001)


def test_progress_is_reported(capsys):
    ppk.Accountant(value_discretization_interval=1e-2, progress=True).add_laplace(scale=5.0, times=3).delta(0.5)
    assert "composing 1/1" in capsys.readouterr().err


def test_arguments_are_checked_by_name():
    from fractions import Fraction
    with pytest.raises(ValueError, match=r"\bcomposition\b"):
        ppk.Accountant(composition="fast")
    with pytest.raises(TypeError, match=r"\bprogress\b"):
        ppk.Accountant(progress=np.array([1.0, 2.0]))
    acc = ppk.Accountant(value_discretization_interval=1e-2)
    with pytest.raises(TypeError, match=r"\bname\b"):
        acc.add_gaussian(sigma=3.0).add(acc.pld(), name=math.nan)
    with pytest.raises(ValueError, match=r"\btimes\b"):
        acc.add(ppk.CountingQuery(n=201, known=0, p=0.3, sigma=3.0), times=2)
    # a Fraction is a valid real number: the names format its float
    acc.add_gaussian(sigma=3.0, sensitivity=Fraction(1, 3)).add_laplace(scale=Fraction(1, 3), sensitivity=Fraction(1, 3))
    assert "sensitivity=0.333333" in repr(acc)


def test_a_count_and_a_histogram_of_one_table():
    # one table (n rows, the attacker knows `known`): a count of one attribute and a histogram of another
    # draw on the same unknown rows, which ppk has no joint model of -- refused by default, with the way out
    count = ppk.CountingQuery(n=2000, known=1000, p=0.3, sigma=4.0)
    hist = ppk.HistogramQuery(n=2000, known=1000, probs=[0.5, 0.3, 0.2], sigma=4.0)
    acc = ppk.Accountant(value_discretization_interval=1e-3).add(count)
    with pytest.raises(ValueError, match="shared_rows='plain'"):
        acc.add(hist)
    # shared_rows="plain": both at their added noise alone (plain DP: sound whatever they share), reported
    acc.add(hist, shared_rows="plain")
    assert len(acc.notes) == 2 and "added noise alone" in acc.notes[0]
    plain = ppk.Accountant(value_discretization_interval=1e-3).add(count.without_natural_noise()).add(
        hist.without_natural_noise())
    eps = np.array([0.5, 1.0, 2.0])
    assert np.array_equal(acc.delta(eps), plain.delta(eps))
    # the combined guarantee is above each release's own (natural-noise) delta, as a sound one must be
    assert np.all(acc.delta(eps) >= count.delta_upper(eps)) and np.all(acc.delta(eps) >= hist.delta_upper(eps))
    # a count of another table (other n) is independent
    ppk.Accountant(value_discretization_interval=1e-3).add(count).add(ppk.CountingQuery(n=3000, known=1000, p=0.3,
                                                                                        sigma=4.0))


def test_a_plan_of_one_bracketed_query_answers_from_its_own_bracket():
    """One query released once: the plan's delta and eps are the query's own certified bracket (two-sided,
    no truncation: delta(1) far below the PLD's e^-100 overflow), and the PLD is built only when a second release
    joins.  Fails if the accountant answers from the connect-the-dots PLD (lower end 0, delta(1) ~ 1e-48)."""
    hist = ppk.HistogramQuery(n=300, known=30, probs=[0.3, 0.3, 0.4], sigma=1.0)
    acc = ppk.Accountant().add(hist)
    eps = np.array([0.05, 0.3, 10.0])
    lo, up = acc.delta_bracket(eps)
    want_lo, want_up = hist.delta_bracket(eps)
    np.testing.assert_array_equal(lo, want_lo)
    np.testing.assert_array_equal(up, want_up)
    assert lo[0] > 0 and up[2] < 1e-50   # the PLD would carry its overflow mass, ~1e-48
    assert acc._plan[0][1] is None   # no PLD built
    assert acc.epsilon(1e-6) == hist.epsilon(1e-6) == acc.get_epsilon(1e-6)
    # a second release composes through the PLDs, never below either part's own upper end
    acc.add_gaussian(sigma=30.0)
    _, composed_up = acc.delta_bracket(eps)
    assert np.all(composed_up >= want_up)
    assert acc._plan[0][1] is not None


def _deepest(q, times, dx, **kw):
    """The subsampled Gaussian run cut at e^-800 (the accountant's only cut before issue #42)."""
    return ppk.PrivacyLossDistribution.from_gaussian_mechanism(
        1.1, sampling_prob=q, value_discretization_interval=dx, log_mass_truncation_bound=-800.0, **kw).self_compose(times)


def test_eps_cuts_the_subsampled_tails_only_as_deep_as_its_delta_needs():
    """eps at delta cuts where runs x the cut mass is <= 1e-3 delta (docs/dpsgd.md, "The tails"): e^-50 at 1e-5,
    deeper at 1e-60 (e^-50 cuts ~1e-29 there: eps would be inf), one composition per depth, and each eps agrees
    with the e^-800 one to within either's bracket.  Fails on the single e^-800 cut (no depth below -50 kept)."""
    acc = ppk.Accountant(value_discretization_interval=1e-2).add_subsampled_gaussian(sigma=1.1, sampling_prob=0.01,
                                                                                      times=1000)
    deep = _deepest(0.01, 1000, 1e-2)
    e5 = acc.epsilon(1e-5)
    assert set(acc._composed) == {-50.0}
    shallow = acc._composed[-50.0]
    assert acc.epsilon(1e-10) > e5 and acc._composed[-50.0] is shallow and set(acc._composed) == {-50.0}
    e60 = acc.epsilon(1e-60)
    assert -800.0 < min(acc._composed) < -50.0 and math.isfinite(e60)
    assert shallow.get_epsilon_for_delta(1e-60) == math.inf   # the shallow cut alone certifies nothing there
    for delta, eps in ((1e-5, e5), (1e-60, e60)):
        deep_eps = deep.get_epsilon_for_delta(delta)
        assert deep.delta_bracket(eps)[0] <= delta and acc.delta_bracket(deep_eps)[0] <= delta
        assert eps == pytest.approx(deep_eps, rel=1e-6)


@pytest.mark.parametrize("composition", ["auto", "exact"])
def test_delta_and_power_deepen_until_the_cut_mass_is_negligible(composition):
    """delta(eps) and the power start at e^-50 and cut deeper only where the mass cut is not 1e-3 of the answer's
    upper end: both ends stay within the e^-800 bracket (upper within 0.1 % above it).  Fails on the single e^-800
    cut (no shallower composition), and with e^-50 alone (delta(30) ~ 2e-66 would read ~1e-31)."""
    times = 1000 if composition == "auto" else 16
    acc = ppk.Accountant(value_discretization_interval=1e-2, composition=composition).add_subsampled_gaussian(
        sigma=1.1, sampling_prob=0.01, times=times)
    deep = _deepest(0.01, times, 1e-2) if composition == "auto" else acc.pld()   # (exact: composed at e^-800)
    eps = np.array([1.0, 3.0, 30.0])
    lo, hi = acc.delta_bracket(eps)
    deep_lo, deep_hi = deep.delta_bracket(eps)
    assert np.all(lo <= deep_hi) and np.all(deep_lo <= hi) and np.all(hi <= deep_hi * (1 + 1e-3))
    if composition == "auto":
        assert -800.0 < min(acc._composed) < -50.0 and -50.0 in acc._composed
        assert acc._composed[-50.0].delta_bracket(30.0)[1] > 1e3 * deep_hi[2]   # the shallow cut alone is far off
    else:   # vectors composed eagerly: their rounding bound (~1e-15), not the cut, is the upper end's floor
        assert acc._composed[-50.0].delta_bracket(30.0)[1] <= deep_hi[2] and -100.0 not in acc._composed
    alpha = np.array([1e-9, 0.01])
    p_lo, p_hi = acc.power_bracket(alpha)
    deep_p_lo, deep_p_hi = deep.power_bracket(alpha)
    assert np.all(p_lo <= deep_p_hi) and np.all(deep_p_lo <= p_hi) and np.all(p_hi <= deep_p_hi * (1 + 1e-3))
    assert acc.pld() is acc._composed[-800.0]     # the composed PLD handed out is the deepest cut's (cached)
