"""dp_accounting's DpEvent vocabulary on ppk.Accountant (docs/dpsgd.md, "DpEvent plans").

Oracles: closed forms of the Gaussian and Laplace mechanisms' delta(eps) in mpmath (40 digits), brute-force
enumeration of composed randomized response in exact rationals, and the equivalent ppk calls.  Event classes
are duck-typed: the tests build their own (same class names and fields), and the real dp_accounting ones
where it is installed.  Coarse grids keep every test cheap.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath
import pytest

import ppk

mpmath.mp.dps = 40


# -- dp_accounting's event classes, by name and fields (ppk never imports dp_accounting) -----------------
@dataclass(frozen=True)
class GaussianDpEvent:
    noise_multiplier: float


@dataclass(frozen=True)
class LaplaceDpEvent:
    noise_multiplier: float


@dataclass(frozen=True)
class RandomizedResponseDpEvent:
    noise_parameter: float
    num_buckets: int


@dataclass(frozen=True)
class PoissonSampledDpEvent:
    sampling_probability: float
    event: Any


@dataclass(frozen=True)
class SelfComposedDpEvent:
    event: Any
    count: int


@dataclass(frozen=True)
class ComposedDpEvent:
    events: list


@dataclass(frozen=True)
class NoOpDpEvent:
    pass


@dataclass(frozen=True)
class SampledWithReplacementDpEvent:
    source_dataset_size: int
    sample_size: int
    event: Any


@dataclass(frozen=True)
class NonPrivateDpEvent:
    pass


def gaussian_delta(eps: float, mu: float) -> mpmath.mpf:
    """delta(eps) of the Gaussian mechanism with sensitivity/sigma = mu (Balle and Wang's closed form)."""
    eps, mu = mpmath.mpf(eps), mpmath.mpf(mu)
    return mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu)


def _brackets(acc: ppk.Accountant, eps: list[float]) -> list[tuple[float, float]]:
    lo, hi = acc.delta_bracket(eps)
    return list(zip(lo, hi))


def test_gaussian_events_give_the_closed_form():
    """Composed([Gaussian(3) x 4, Gaussian(2)]): one Gaussian of mu^2 = 4/9 + 1/4; the bracket holds the
    closed form (mpmath) and equals add_gaussian's."""
    plan = ComposedDpEvent([SelfComposedDpEvent(GaussianDpEvent(3.0), 4), GaussianDpEvent(2.0)])
    acc = ppk.Accountant(value_discretization_interval=1e-3).add(plan)
    same = ppk.Accountant(value_discretization_interval=1e-3).add_gaussian(sigma=3.0, times=4).add_gaussian(sigma=2.0)
    eps = [0.0, 0.5, 1.0, 2.0]
    mu = math.sqrt(4 / 9 + 1 / 4)
    for e, (lo, hi) in zip(eps, _brackets(acc, eps)):
        exact = gaussian_delta(e, mu)
        assert lo <= exact <= hi and hi - lo <= 1e-3 * exact, (e, lo, float(exact), hi)
    assert acc.get_epsilon(1e-6) == same.epsilon(1e-6)


def test_replace_one_gaussian_has_sensitivity_two():
    """Under replace_one a row replaced moves the sum by twice its norm bound: mu = 2 / sigma."""
    acc = ppk.Accountant(value_discretization_interval=1e-3, neighboring_relation="replace_one")
    lo, hi = acc.add(GaussianDpEvent(4.0), times=3).delta_bracket(1.0)
    exact = gaussian_delta(1.0, 2 * math.sqrt(3) / 4)
    assert lo <= exact <= hi


def test_laplace_event_gives_the_closed_form():
    """Laplace of scale b, sensitivity 1: delta(eps) = 1 - e^{(eps - 1/b)/2} below eps = 1/b."""
    acc = ppk.Accountant(value_discretization_interval=1e-3).add(LaplaceDpEvent(2.0))
    for e, (lo, hi) in zip([0.1, 0.3], _brackets(acc, [0.1, 0.3])):
        exact = -mpmath.expm1((mpmath.mpf(e) - 0.5) / 2)
        assert lo <= exact <= hi


def _rr_delta(eps: float, p: Fraction, k: int, runs: int) -> Fraction | float:
    """delta(eps) of ``runs`` runs of k-ary randomized response, x replaced by x', by enumeration: the
    outcomes x, x' and the k - 2 others, each run; sum over outcome tuples of (P - e^eps Q)_+."""
    keep, other = 1 - p + p / k, p / k
    P = [keep, other] + [other] * (k - 2)
    Q = [other, keep] + [other] * (k - 2)
    total = mpmath.mpf(0)
    e = mpmath.exp(eps)
    for idx in itertools.product(range(k), repeat=runs):
        pp = math.prod((P[i] for i in idx), start=Fraction(1))
        qq = math.prod((Q[i] for i in idx), start=Fraction(1))
        total += max(mpmath.mpf(pp.numerator) / pp.denominator - e * mpmath.mpf(qq.numerator) / qq.denominator, 0)
    return total


def test_randomized_response_event_is_composed_count_times():
    """SelfComposedDpEvent(RandomizedResponse(0.4, 4), 3) under replace_one: the bracket holds the brute-force
    delta of three runs (dp_accounting 0.6's PLD accountant composes a randomized-response event once,
    whatever its count)."""
    acc = ppk.Accountant(value_discretization_interval=1e-3, neighboring_relation="replace_one")
    acc.add(SelfComposedDpEvent(RandomizedResponseDpEvent(0.4, 4), 3))
    eps = [0.5, 2.0, 4.0]
    for e, (lo, hi) in zip(eps, _brackets(acc, eps)):
        exact = _rr_delta(e, Fraction(2, 5), 4, 3)
        assert lo * (1 - 1e-12) <= exact <= hi * (1 + 1e-12) and exact > 0, (e, lo, exact, hi)


def test_randomized_response_helper_forms_agree():
    """add_randomized_response(noise_parameter=p, num_buckets=2) is two-outcome randomized response of
    eps0 = log((2 - p)/p), the CLI's form; num_buckets = 1 releases nothing."""
    p = 0.3
    a = ppk.Accountant(value_discretization_interval=1e-3).add_randomized_response(noise_parameter=p, times=5)
    b = ppk.Accountant(value_discretization_interval=1e-3).add_randomized_response(eps0=math.log((2 - p) / p),
                                                                                  times=5)
    assert a.epsilon(1e-6) == pytest.approx(b.epsilon(1e-6), rel=1e-9)
    one = ppk.Accountant().add_randomized_response(noise_parameter=0.5, num_buckets=1)
    assert one.epsilon(1e-9) == 0.0
    with pytest.raises(ValueError, match="eps0"):
        ppk.Accountant().add_randomized_response(eps0=1.0, noise_parameter=0.5)


def test_poisson_sampled_plan_is_the_subsampled_call():
    """SelfComposed(PoissonSampled(q, Gaussian(sigma)), T) is add_subsampled_gaussian(times=T) and
    dpsgd_epsilon; PoissonSampled(q, Laplace(b)) is add_subsampled_laplace; q = 0, count 0 and NoOp add
    nothing."""
    dx = 1e-2
    step = PoissonSampledDpEvent(0.1, GaussianDpEvent(1.5))
    plan = ComposedDpEvent([SelfComposedDpEvent(step, 20), NoOpDpEvent(), PoissonSampledDpEvent(0.0, GaussianDpEvent(0.1)),
                            SelfComposedDpEvent(GaussianDpEvent(0.1), 0), PoissonSampledDpEvent(0.2, LaplaceDpEvent(1.0))])
    acc = ppk.Accountant(value_discretization_interval=dx).add(plan)
    same = (ppk.Accountant(value_discretization_interval=dx).add_subsampled_gaussian(sigma=1.5, sampling_prob=0.1, times=20)
            .add_subsampled_laplace(scale=1.0, sampling_prob=0.2))
    assert acc.get_epsilon(1e-5) == same.epsilon(1e-5)
    alone = ppk.Accountant(value_discretization_interval=dx).compose(SelfComposedDpEvent(step, 4), 5)
    assert alone.get_epsilon(1e-5) == ppk.dpsgd_epsilon(noise_multiplier=1.5, sampling_rate=0.1, steps=20,
                                                        delta=1e-5, value_discretization_interval=dx)


@pytest.mark.parametrize("event, words", [
    (SampledWithReplacementDpEvent(100, 10, GaussianDpEvent(1.0)), "SampledWithReplacementDpEvent"),
    (NonPrivateDpEvent(), "NonPrivateDpEvent"),
    (PoissonSampledDpEvent(0.1, RandomizedResponseDpEvent(0.5, 2)), "RandomizedResponseDpEvent inside"),
    (PoissonSampledDpEvent(0.1, SelfComposedDpEvent(GaussianDpEvent(1.0), 2)), "SelfComposedDpEvent inside"),
    (RandomizedResponseDpEvent(0.5, 2), "replace_one"),
    (GaussianDpEvent(0.0), "noise_multiplier is 0"),
    (SelfComposedDpEvent(GaussianDpEvent(1.0), -1), "count"),
])
def test_other_events_are_refused_by_name(event, words):
    """Anything ppk cannot model exactly is refused, by name, and the plan is left as it was."""
    acc = ppk.Accountant(value_discretization_interval=1e-2).add_gaussian(sigma=3.0)
    with pytest.raises(ValueError, match=words):
        acc.add(ComposedDpEvent([GaussianDpEvent(2.0), event]))
    assert len(acc._plan) == 1


def test_replace_one_refuses_what_it_cannot_model():
    acc = ppk.Accountant(neighboring_relation="replace_one")
    for event in (LaplaceDpEvent(1.0), PoissonSampledDpEvent(0.1, GaussianDpEvent(1.0))):
        with pytest.raises(ValueError, match="replace_one"):
            acc.add(event)
    with pytest.raises(ValueError, match="neighboring_relation"):
        ppk.Accountant(neighboring_relation="replace_special")
    with pytest.raises(TypeError, match="event"):
        ppk.Accountant().compose(3.0)


def test_epsilon_keyword_is_eps():
    acc = ppk.Accountant(value_discretization_interval=1e-2).add_gaussian(sigma=2.0)
    assert acc.delta(epsilon=0.5) == acc.delta(0.5) == acc.get_delta(0.5)
    assert acc.delta_bracket(epsilon=[0.5, 1.0])[1].tolist() == acc.delta_bracket([0.5, 1.0])[1].tolist()
    assert acc.get_epsilon(1e-6) == acc.epsilon(1e-6)
    with pytest.raises(TypeError, match="not both"):
        acc.delta(0.5, epsilon=0.5)
    with pytest.raises(TypeError, match="eps"):
        acc.delta()
    with pytest.raises(ValueError, match="epsilon"):
        acc.delta(epsilon=-1.0)


def test_dp_accounting_events_and_numbers():
    """The real dp_accounting classes and its NeighborRel are accepted, and its PLD accountant agrees with
    ppk on a DP-SGD plan (to its own discretisation: it does not certify its numbers)."""
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting import dp_event

    step = dp_event.PoissonSampledDpEvent(0.05, dp_event.GaussianDpEvent(1.0))
    plan = dp_event.SelfComposedDpEvent(step, 50)
    relation = dp_accounting.privacy_accountant.NeighboringRelation.ADD_OR_REMOVE_ONE
    ours = ppk.Accountant(value_discretization_interval=1e-3, neighboring_relation=relation).add(plan).get_epsilon(1e-5)
    theirs = dp_accounting.pld.PLDAccountant(relation, value_discretization_interval=1e-3)
    theirs.compose(plan)
    assert ours == pytest.approx(theirs.get_epsilon(1e-5), rel=2e-3)
    rr = dp_event.RandomizedResponseDpEvent(0.3, 5)
    mine = ppk.Accountant(neighboring_relation=dp_accounting.privacy_accountant.NeighboringRelation.REPLACE_ONE)
    assert mine.add(rr).get_epsilon(1e-12) == pytest.approx(math.log(1 + 5 * 0.7 / 0.3), rel=1e-6)
