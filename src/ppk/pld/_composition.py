"""Composition of privacy loss distributions (docs/accuracy.md, "Composition" and "Composition without the
floor").

Two ways, one result type.  PLDs that compose ``"auto"`` on one grid become a *plan* (ppk.pld._plan): no
convolution now, a certified bracket read off tilted compositions later.  ``"exact"`` and ``"fft"`` (or two
grids) convolve the vectors at once, eagerly, with their carried error bounds (ppk.pld._masses); a plan's
vectors are composed that way too, when someone asks for them.

The functions take the PLD class's instances and make new ones with ``type(a).__new__`` (this module does
not import ppk.pld.distribution: no import circle).
"""
from __future__ import annotations

import math
from typing import Any, Hashable

from .._validate import real
from ._masses import _compose_masses, _union, plan_cap as _plan_cap
from ._plan import Plan

#: Most vector entries an eager self-composition convolves in all (the sum of the lengths of the operands):
#: about 10 s on one core (3-4 million a second at a million buckets).
MAX_SELF_COMPOSE_WORK = 35_000_000


def truncation_bound(tail_mass_truncation: object) -> float | None:
    """dp_accounting's ``tail_mass_truncation`` (the mass it drops at each end of a composition, in [0, 1)) as
    a log bound for ppk's own cut-off: an eager composition moves the end masses below it into the mass at
    infinity (``_Masses.truncate``: delta only grows), on top of the PLDs' ``log_mass_truncation_bound``.  A
    plan cuts nothing (its bracket is certified from the uncut factors), so there the keyword changes nothing:
    either way the result is never less pessimistic than dp_accounting's truncation asks for.  None for 0."""
    tau = real("tail_mass_truncation", tail_mass_truncation, minimum=0.0, maximum=1.0, max_inclusive=False)
    return math.log(tau) if tau > 0 else None


def refuse_shared(a: Any, b: Any, independent: bool | None) -> Hashable | None:
    """The rows key the composition keeps; ValueError when both run on the same unknown rows."""
    key = a._shared_noise_key
    if key is not None and key == b._shared_noise_key and not independent:
        raise ValueError(
            f"both PLDs describe releases over the same unknown rows {key}: they share them, so their natural "
            "noise is not independent and composing them would under-report delta. Use CountingQuery.repeat(k) "
            "for k releases of the same count (exact), ppk.OverlappingCounts or ppk.HistogramQuery for several "
            "counts of those rows, or pass independent=True if the releases use disjoint unknown rows.")
    return key if key == b._shared_noise_key else None


def compose(a: Any, b: Any, *, independent: bool | None, truncate: bool, eager: bool,
            log_bound: float | None = None) -> Any:
    """The composition of two PLDs: a plan when both compose ``"auto"`` on one grid and not ``eager``, else
    the vectors convolved (``truncate=False`` keeps the mass below the noise, for a result only read;
    ``log_bound``: a higher cut-off than the parts', :func:`truncation_bound`)."""
    key = refuse_shared(a, b, independent)
    if not eager and a.composition == b.composition == "auto" and \
            a.value_discretization_interval == b.value_discretization_interval:
        plan = Plan.of(a).compose(Plan.of(b))
        plan.check_size()
        return planned(a, plan, b, key)
    first, second = a, b
    while first.value_discretization_interval < second.value_discretization_interval * (1 - 1e-12):
        first = first._coarsened()
    while second.value_discretization_interval < first.value_discretization_interval * (1 - 1e-12):
        second = second._coarsened()
    if not math.isclose(first.value_discretization_interval, second.value_discretization_interval, rel_tol=1e-12):
        raise ValueError("value_discretization_interval of the two PLDs must be equal or differ by a power of 2")
    method = a.composition if a.composition == b.composition else "auto"
    bound = max(first.log_mass_truncation_bound, second.log_mass_truncation_bound)
    buckets = _compose_masses(first._buckets, second._buckets, method)
    atoms = _compose_masses(first._atoms, second._atoms, method)
    if truncate:
        cut = bound if log_bound is None else max(bound, log_bound)
        buckets.truncate(cut)
        atoms.truncate(cut)
    out = object.__new__(type(a))
    out.value_discretization_interval = first.value_discretization_interval
    out._install(buckets=buckets, atoms=atoms,
                 infinity_mass_upper=_union(first.infinity_mass_upper, second.infinity_mass_upper),
                 infinity_mass_lower=_union(first.infinity_mass_lower, second.infinity_mass_lower),
                 pessimistic_estimate=a.pessimistic_estimate, max_buckets=max(first.max_buckets, second.max_buckets),
                 composition=method, log_mass_truncation_bound=bound, shared_noise_key=key,
                 runs=first._runs + second._runs, reach=max(first._reach, second._reach))
    out._one_sided = first._one_sided and second._one_sided    # one adjacency's only when both are
    # the largest losses add (each part's cap is a double >= its own): their sum, exactly, rounded up
    cap = _plan_cap([(first, 1), (second, 1)])
    out._max_loss = cap if math.isfinite(cap) else None
    return out


def self_compose(pld: Any, k: int, *, independent: bool | None, log_bound: float | None = None) -> Any:
    """``k``-fold composition: a plan (``"auto"``) or binary powering of the vectors (each product cut at
    ``log_bound`` as well, :func:`truncation_bound`)."""
    if pld.composition != "auto":
        return eager_self_compose(pld, k, independent=independent, log_bound=log_bound)
    if k == 1:
        return pld
    key = refuse_shared(pld, pld, independent)
    plan = Plan.of(pld).times(k)
    plan.check_size()
    return planned(pld, plan, pld, key)


def planned(a: Any, plan: Plan, b: Any, key: Hashable | None) -> Any:
    """A composed PLD kept as ``plan`` (its vectors composed only when asked for: :func:`materialize`)."""
    out = object.__new__(type(a))
    out.value_discretization_interval = plan.dx
    inf_upper, inf_lower = plan.infinity_masses()
    out._install(buckets=None, atoms=None, infinity_mass_upper=inf_upper, infinity_mass_lower=inf_lower,
                 pessimistic_estimate=a.pessimistic_estimate, max_buckets=max(a.max_buckets, b.max_buckets),
                 composition="auto", log_mass_truncation_bound=max(a.log_mass_truncation_bound,
                                                                   b.log_mass_truncation_bound),
                 shared_noise_key=key)
    out._plan = plan
    out._one_sided = plan.one_sided
    return out


def materialize(pld: Any) -> tuple[Any, Any, float]:
    """A plan's (buckets, atoms, interval), composed eagerly from the factors its bracket uses (the Gaussian
    runs merged into one mechanism)."""
    out = None
    for leaf, k in pld._plan.evaluated(type(pld), on_grid=False):
        part = eager_self_compose(leaf, k, independent=True)
        out = part if out is None else compose(out, part, independent=True, truncate=True, eager=True)
    assert out is not None
    return out._buckets, out._atoms, out.value_discretization_interval


def eager_self_compose(pld: Any, num_times: int, *, independent: bool | None, log_bound: float | None = None) -> Any:
    """Binary powering of the vectors: O(log k) convolutions.  The work is bounded: when the convolutions
    still to do would take more than MAX_SELF_COMPOSE_WORK vector entries in all (about 10 s), ValueError
    says so before doing them (2^62 compositions of a PLD of a million buckets: a minute)."""
    k = num_times
    result = None
    base = pld
    work = 0
    while True:
        # the convolutions left (a squaring per higher bit, a product per set bit), each about as long
        # as the base's vectors are now: refuse before the work goes past the limit
        size = base._buckets.p.size + base._atoms.p.size
        steps = (k.bit_length() - 1) + bin(k).count("1")
        projected = work + 2 * size * steps
        if projected > MAX_SELF_COMPOSE_WORK:
            raise ValueError(
                f"num_times = {num_times} needs about {steps} more compositions of privacy "
                f"loss vectors of about {size:,} entries ({projected:.3g} entries in all, more than "
                f"MAX_SELF_COMPOSE_WORK = {MAX_SELF_COMPOSE_WORK:.3g}, about 10 s): use a smaller "
                "num_times, or fewer buckets (a larger value_discretization_interval or a smaller max_buckets)")
        if k & 1:
            if result is not None:
                work += size + result._buckets.p.size + result._atoms.p.size
            result = base if result is None else compose(result, base, independent=independent,
                                                         truncate=k >> 1 != 0 or log_bound is not None, eager=True,
                                                         log_bound=log_bound)
        k >>= 1
        if not k:
            assert result is not None   # k >= 1 has a set bit
            return result
        # the last square is the result itself when no lower bit remains: keep its small masses
        work += 2 * (base._buckets.p.size + base._atoms.p.size)
        base = compose(base, base, independent=independent,
                       truncate=not (k == 1 and result is None) or log_bound is not None, eager=True, log_bound=log_bound)
