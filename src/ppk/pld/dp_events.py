"""dp_accounting's ``DpEvent`` vocabulary for :class:`ppk.Accountant` (docs/dpsgd.md, "DpEvent plans").

dp_accounting, Opacus and jax_privacy describe a training run or a release plan as a tree of ``DpEvent``s.
:func:`leaves` flattens such a tree into the mechanisms ppk models exactly, each with its number of runs;
the accountant then builds each one with the same library calls as its own ``add_*`` methods (and as
``ppk compose``), so a plan gives the same certified numbers whichever way it was written.

Events are read *duck-typed*, by class name and fields: dp_accounting is not imported here (it stays an
optional dependency), and an object of another library that spells the same events works too.  Every
event ppk cannot model exactly (sampling without replacement, tree aggregation, zCDP, ...) is refused by
name: accounting it as something else could under-report delta.
"""
from __future__ import annotations

from typing import Any, NamedTuple

from .._validate import INT_MAX, integer, real

__all__: list[str] = []

#: dp_accounting's ``NeighborRel`` names ppk accounts, as the accountant stores them.
NEIGHBORING_RELATIONS = ("add_or_remove_one", "replace_one")

#: The event classes :func:`leaves` reads (the rest are refused by name).
SUPPORTED = ("GaussianDpEvent", "LaplaceDpEvent", "RandomizedResponseDpEvent", "PoissonSampledDpEvent",
             "SelfComposedDpEvent", "ComposedDpEvent", "NoOpDpEvent")

#: Nested events deeper than this are refused (a cyclic or absurd tree is not walked forever).
MAX_DEPTH = 100


class Leaf(NamedTuple):
    """One mechanism of a plan: ``kind`` in gaussian, laplace, subsampled_gaussian, subsampled_laplace,
    randomized_response; ``params`` its parameters by ppk's names; ``times`` its independent runs."""
    kind: str
    params: dict
    times: int


def neighboring_relation(value: object) -> str:
    """``"add_or_remove_one"`` or ``"replace_one"`` from a string (any case) or dp_accounting's
    ``NeighborRel`` enum (read by its ``name``); ``REPLACE_SPECIAL`` and the rest are refused by name."""
    name = getattr(value, "name", value)
    if isinstance(name, str) and name.lower() in NEIGHBORING_RELATIONS:
        return name.lower()
    raise ValueError(f"neighboring_relation must be 'add_or_remove_one' or 'replace_one' (or dp_accounting's "
                     f"NeighborRel.ADD_OR_REMOVE_ONE / REPLACE_ONE), got {value!r}")


def _field(event: Any, name: str) -> Any:
    cls = type(event).__name__
    if not hasattr(event, name):
        raise TypeError(f"event: a {cls} without the field {name!r} is not a dp_accounting {cls}")
    return getattr(event, name)


def _noise(event: Any, where: str) -> float:
    """The event's ``noise_multiplier``: > 0 (0 is dp_accounting's "not private": refused, not an eps of inf)."""
    value = real(f"{where}.noise_multiplier", _field(event, "noise_multiplier"), minimum=0.0)
    if value == 0.0:
        raise ValueError(f"{where}.noise_multiplier is 0: the mechanism adds no noise and is not differentially "
                         "private")
    return value


def _refuse(event: Any, why: str) -> ValueError:
    return ValueError(f"event: ppk cannot account a {type(event).__name__}{why}; it models exactly "
                      f"{', '.join(SUPPORTED[:-1])} (and NoOpDpEvent), with PoissonSampledDpEvent over a "
                      "Gaussian or Laplace event")


def leaves(event: Any, count: int, relation: str) -> list[Leaf]:
    """The mechanisms of the event tree ``event`` run ``count`` times, under ``relation`` (one of
    :data:`NEIGHBORING_RELATIONS`), with dp_accounting's meaning of each event:

    * ``GaussianDpEvent(noise_multiplier)``: sigma = noise_multiplier in units of the sensitivity; under
      ``"replace_one"`` one row replaced moves the sum by up to twice its norm bound: sensitivity 2.
    * ``LaplaceDpEvent(noise_multiplier)``: scale = noise_multiplier (add or remove one only, as
      dp_accounting's PLD accountant).
    * ``RandomizedResponseDpEvent(noise_parameter, num_buckets)``: keep the value with probability
      1 - p, else a uniform bucket (replace one only, as dp_accounting's PLD accountant).
    * ``PoissonSampledDpEvent(sampling_probability, event)`` over a Gaussian or Laplace event: the
      Poisson-subsampled mechanism, add or remove one row (both orders, the larger reported).
    * ``SelfComposedDpEvent(event, count)``, ``ComposedDpEvent(events)``: runs and compositions.
    """
    out: list[Leaf] = []
    stack: list[tuple[Any, int, int]] = [(event, count, 0)]
    while stack:
        ev, times, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ValueError(f"event: nested more than {MAX_DEPTH} levels deep")
        cls = type(ev).__name__
        if cls == "SelfComposedDpEvent":
            k = integer("SelfComposedDpEvent.count", _field(ev, "count"), minimum=0)
            if k and times:
                stack.append((_field(ev, "event"), integer("count", times * k, minimum=1, maximum=INT_MAX),
                              depth + 1))
        elif cls == "ComposedDpEvent":
            events = _field(ev, "events")
            if isinstance(events, (str, bytes)) or not hasattr(events, "__iter__"):
                raise TypeError(f"ComposedDpEvent.events must be a list of events, got {type(events).__name__}")
            stack.extend((e, times, depth + 1) for e in reversed(list(events)))
        elif cls == "NoOpDpEvent":
            continue
        elif cls == "GaussianDpEvent":
            sensitivity = 2.0 if relation == "replace_one" else 1.0
            out.append(Leaf("gaussian", dict(sigma=_noise(ev, cls), sensitivity=sensitivity), times))
        elif cls == "LaplaceDpEvent":
            if relation != "add_or_remove_one":
                raise _refuse(ev, " under neighboring_relation='replace_one' (as dp_accounting's PLD accountant)")
            out.append(Leaf("laplace", dict(scale=_noise(ev, cls)), times))
        elif cls == "RandomizedResponseDpEvent":
            if relation != "replace_one":
                raise ValueError("event: RandomizedResponseDpEvent needs neighboring_relation='replace_one' (one "
                                 "respondent's value replaced, as in dp_accounting's PLD accountant): "
                                 "Accountant(neighboring_relation='replace_one'), or add_randomized_response")
            p = real(f"{cls}.noise_parameter", _field(ev, "noise_parameter"), minimum=0.0, maximum=1.0)
            k = integer(f"{cls}.num_buckets", _field(ev, "num_buckets"), minimum=1)
            if k > 1:     # one bucket: the output says nothing
                out.append(Leaf("randomized_response", dict(noise_parameter=p, num_buckets=k), times))
        elif cls == "PoissonSampledDpEvent":
            if relation != "add_or_remove_one":
                raise _refuse(ev, " under neighboring_relation='replace_one' (ppk models the add-or-remove pair)")
            q = real(f"{cls}.sampling_probability", _field(ev, "sampling_probability"), minimum=0.0, maximum=1.0)
            inner = _field(ev, "event")
            kind = type(inner).__name__
            if kind not in ("GaussianDpEvent", "LaplaceDpEvent"):
                raise _refuse(inner, " inside a PoissonSampledDpEvent")
            if q == 0.0:      # no row is ever sampled: nothing is released about anyone
                continue
            if kind == "GaussianDpEvent":
                out.append(Leaf("subsampled_gaussian", dict(sigma=_noise(inner, kind), sampling_prob=q), times))
            else:
                out.append(Leaf("subsampled_laplace", dict(scale=_noise(inner, kind), sampling_prob=q), times))
        else:
            raise _refuse(ev, "")
    return out


def randomized_response_pmfs(noise_parameter: float, num_buckets: int) -> tuple[list[float], list[float]]:
    """k-ary randomized response (keep the value with probability 1 - p, else a uniform one of k buckets)
    with the value x replaced by x': P = R(x), Q = R(x') on the outcomes (x, x', any other), i.e.
    P = [1 - p + p/k, p/k, (k-2) p/k] against Q = [p/k, 1 - p + p/k, (k-2) p/k] (the third only for
    k > 2; its loss is 0).  This pair dominates every other pair of inputs: the outputs other than
    x and x' have the same probability under both."""
    p, k = noise_parameter, num_buckets
    keep, other = 1.0 - p + p / k, p / k
    if k == 2:
        return [keep, other], [other, keep]
    rest = p * ((k - 2) / k)
    return [keep, other, rest], [other, keep, rest]

