"""The noisy release itself, for a count and for a histogram: :func:`release`.

A count is calibrated privately by Algorithm 2 (the attacker's bias is estimated from the data); a
histogram by :func:`ppk.calibrate` on a :class:`ppk.HistogramQuery` with the belief the steward states.
Why the output cannot leak the data through floating point (docs/release-security.md): every published
number that depends on the data comes from an integer mechanism.  The count estimate that Algorithm 2
publishes is ``count + Y`` with ``Y`` discrete Laplace, and a released value is ``count + K`` with
``K = round(sigma Z)`` drawn in integer arithmetic (:func:`ppk.samplers.rounded_gaussian`: no float is
involved, so its low bits are right for every sigma; the same work for every draw, at the price of a law
within total variation 2**-190 of the stated one, which :func:`ppk.samplers.sampler_delta` books into
delta; every record's ``guarantee`` adds it as ``delta_sampler``).  Rounding is post-processing of the
Gaussian mechanism, so the calibrated (eps, delta) holds for the rounded release.  The mechanism is
calibrated to delta minus the samplers' term (:func:`ppk.records.release_budget`), so the total a record
states never exceeds the delta asked for; a release with nothing to promise (eps above
:data:`ppk.records.MAX_EPS`, or a samplers' term that alone reaches delta) is refused before any draw.
``public()`` is strict JSON: a ledger entry that is not finite is null, and ``null_means`` says why.
Randomness comes from
the operating system's CSPRNG unless a seed is given -- which warns and marks the result.  ``public()``
carries the reviewer's record (:mod:`ppk.records`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal, Sequence, overload

import numpy.typing as npt

from ._random import as_source, warn_if_seeded
from .algorithm2 import Alg2Result, PrivateDraws, run
from .calibration import Calibration, calibrate
from .histogram import MAX_CATEGORIES, MAX_HISTOGRAM_ROWS, HistogramQuery, floor_probabilities, probabilities
from .records import (SEEDED_WARNING, alg2_mechanism_delta, alg2_record, check_total, exact_warning, guarantee,
                      make_record, ppk_warning, public_ledger, release_budget, utc_now)
from .samplers import discrete_gaussian, discrete_laplace, rounded_gaussian
from ._typing import RngLike
from ._validate import flag, integer, real, sequence

__all__ = ["release", "Release", "HistogramRelease"]


@dataclass(frozen=True)
class Release:
    value: int                  #: the noisy count to publish
    calibration: Alg2Result     #: how the noise was chosen; publish ``calibration.ledger()``, never the rest
    #: when the release was made (UTC, ISO 8601); not part of equality: two seeded releases are equal
    created_utc: str = field(default_factory=utc_now, compare=False)

    @property
    def insecure_for_testing(self) -> bool:
        """True when seeded randomness was used: reproducible, hence NOT a private release."""
        return self.calibration.insecure_for_testing

    @property
    def draws(self) -> int:
        """Sampler draws behind the published numbers: the count estimate, and the noise unless sigma = 0."""
        return 1 + (self.calibration.sigma > 0)

    def public(self, *, input: dict | None = None) -> dict:
        """What may be published: the value, the noise law, the ledger, a notice when no noise was
        added, and the reviewer's ``record`` (:func:`make_record`; ``input`` names the file read, if any)."""
        law = self.calibration.law
        # "none" when sigma = 0: the value is the exact count, and the field must not suggest otherwise
        out = dict(value=self.value, noise="none" if self.calibration.sigma == 0 else
                   "rounded_gaussian" if law == "gaussian" else law, ledger=public_ledger(self.calibration))
        if self.insecure_for_testing:
            out["warning"] = SEEDED_WARNING
        if self.calibration.sigma == 0:
            out["notice"] = ("no noise was added: the value is the exact count, private only against an attacker "
                             f"who knows at most {self.calibration.known} rows (natural noise alone suffices)")
        out["record"] = alg2_record(self.calibration, draws=self.draws, created_utc=self.created_utc, input=input,
                                    value_published=True)
        return out


@dataclass(frozen=True)
class HistogramRelease:
    """A released histogram: ``counts[i] + round(sigma Z_i)`` per bin, and how sigma was chosen."""

    values: tuple[int, ...]             #: the noisy counts to publish, one per category
    calibration: Calibration[HistogramQuery]   #: public: sigma (``scale``), the certified delta, plain DP's sigma
    insecure_for_testing: bool          #: seeded randomness: reproducible, NOT private
    eps: float = math.nan               #: the target the calibration met
    delta: float = math.nan             #: the mechanism's share: the delta asked for minus the samplers' term
    #: the steward's floor on every category's probability (``min_prob=``), or None when ``probs`` was stated
    min_prob: float | None = None
    #: when the release was made (UTC, ISO 8601); not part of equality
    created_utc: str = field(default="", compare=False)

    @property
    def known(self) -> int:
        return self.calibration.query.known

    @property
    def n(self) -> int:
        return self.calibration.query.n

    def belief(self, categories: Sequence[str] | None = None) -> str:
        """The attacker's belief about the unknown rows, in words."""
        if self.min_prob is not None:
            return (f"any belief that gives each of the {len(self.values)} categories a probability >= "
                    f"{self.min_prob:g}, stated by the steward (covered at once: the worst such belief is used)")
        probs = self.calibration.query.probs
        names = list(categories) if categories is not None else [f"#{i}" for i in range(len(probs))]
        return ("each unknown row falls in the categories independently with probabilities "
                + ", ".join(f"{c}={p:.6g}" for c, p in zip(names, probs)) + ", stated by the steward")

    @property
    def standard_dp(self) -> bool:
        """True when the noise alone is plain DP's (or the attacker knows every other row): no belief needed."""
        return self.calibration.scale >= self.calibration.scale_dp or self.calibration.query.n_unknown == 0

    def public(self, *, categories: Sequence[str] | None = None, input: dict | None = None) -> dict:
        """What may be published: the noisy counts (by category name when ``categories`` are given),
        the noise, the calibration's public numbers and the reviewer's ``record``
        (:func:`ppk.records.make_record`; ``input`` names the file read, if any)."""
        cal = self.calibration
        names = list(categories) if categories is not None else None
        if names is not None and len(names) != len(self.values):
            raise ValueError(f"categories must name the {len(self.values)} bins, got {len(names)} names")
        belief = self.belief(names)
        out: dict = dict(values=dict(zip(names, self.values)) if names is not None else list(self.values),
                         noise="none" if cal.scale == 0 else "rounded_gaussian", sigma=cal.scale, sigma_dp=cal.scale_dp,
                         delta_achieved=cal.delta_achieved, eps=self.eps, delta=self.delta, n=self.n,
                         known=self.known)
        if self.insecure_for_testing:
            out["warning"] = SEEDED_WARNING
        n_unknown = cal.query.n_unknown
        attacker = dict(rows=self.n, rows_known=self.known, rows_unknown=n_unknown, belief=belief,
                        belief_source="none" if self.standard_dp else "stated_by_steward",
                        text=("any attacker (standard DP: the noise is plain DP's for a histogram, sensitivity "
                              "sqrt 2)" if self.standard_dp else
                              f"an attacker who knows {self.known} of the {self.n} rows exactly (their categories "
                              f"and who they are), not the challenge row; the other {n_unknown} rows are natural "
                              f"noise shared by all bins: {belief}"))
        kind = "DP" if self.standard_dp else "PPK-DP"
        g = guarantee(kind=kind, eps=self.eps, delta_mechanism=self.delta,
                      draws=len(self.values) if cal.scale > 0 else 0,
                      text=f"every bin plus noise: (eps, delta)-{kind} for the whole histogram (the certified "
                           f"delta at sigma is {cal.delta_achieved:.6g} <= delta) plus the samplers' term")
        noise = dict(law="none" if cal.scale == 0 else "rounded_gaussian", scale=cal.scale, scale_name="sigma",
                     unit="counts", per="bin")
        warnings = []
        if self.insecure_for_testing:
            warnings.append(SEEDED_WARNING)
        if cal.scale == 0:
            warnings.append(exact_warning("every bin's count is", self.known))
        if not self.standard_dp:
            stated = (f"each category at least {self.min_prob:g} likely, a floor the steward stated"
                      if self.min_prob is not None else
                      "with the category probabilities the steward stated, not estimated from the data")
            warnings.append(ppk_warning(self.known, self.n, stated)
                            .replace("NOT STANDARD DP:", "STATED BELIEF, NOT STANDARD DP:"))
        out["record"] = make_record(attacker=attacker, guarantee=g, noise=noise, warnings=warnings,
                                    created_utc=self.created_utc or None, input=input)
        return out



@overload
def release(*, data: npt.ArrayLike | None = ..., count: int | None = ..., n: int | None = ...,
            counts: Sequence[int] | None = ..., known: int, eps: float, delta: float,
            probs: Sequence[float] | npt.ArrayLike | None = ..., min_prob: float | None = ..., kappa1: float = ...,
            kappa2: float | None = ..., kappa3: float | None = ..., hoeffding: str = ..., rng: RngLike = ...,
            audit: Literal[False] = ..., noise: str = ..., allow_large_eps: bool = ...) -> Release | HistogramRelease: ...
@overload
def release(*, data: npt.ArrayLike | None = ..., count: int | None = ..., n: int | None = ...,
            counts: Sequence[int] | None = ..., known: int, eps: float, delta: float,
            probs: Sequence[float] | npt.ArrayLike | None = ..., min_prob: float | None = ..., kappa1: float = ...,
            kappa2: float | None = ..., kappa3: float | None = ..., hoeffding: str = ..., rng: RngLike = ...,
            audit: Literal[True], noise: str = ..., allow_large_eps: bool = ...) -> tuple[Release, PrivateDraws]: ...
def release(*, data: npt.ArrayLike | None = None, count: int | None = None, n: int | None = None,
            counts: Sequence[int] | None = None, known: int, eps: float, delta: float,
            probs: Sequence[float] | npt.ArrayLike | None = None, min_prob: float | None = None, kappa1: float = 0.0,
            kappa2: float | None = None, kappa3: float | None = None, hoeffding: str = "additive", rng: RngLike = None,
            audit: bool = False, noise: str = "gaussian",
            allow_large_eps: bool = False) -> Release | HistogramRelease | tuple[Release, PrivateDraws]:
    """Release a count or a histogram with the least noise that makes it private.

    **A count** (``data``, or ``count`` and ``n``): ``count + round(sigma Z)`` with sigma from
    :func:`ppk.alg2` (the same arguments: ``kappa1``, ``kappa2``, ``kappa3``, ``hoeffding``);
    ``noise="discrete_gaussian"`` or ``"discrete_laplace"`` adds that law instead, drawn by the exact
    integer samplers of :mod:`ppk.samplers`.  Returns a :class:`Release`; ``audit=True`` returns
    ``(Release, PrivateDraws)`` -- the Release never holds the noise.

    **A histogram** (``counts``: the true count of each category, their sum ``n`` public): every bin plus
    rounded Gaussian noise, sigma from :func:`ppk.calibrate` on a :class:`ppk.HistogramQuery`.  The
    attacker's belief is ``probs`` (one probability per category) or, instead, ``min_prob``: every belief
    that gives each category at least that probability, covered at once
    (:func:`ppk.histogram.floor_probabilities`).  Returns a :class:`HistogramRelease`.

    ``rng=None`` (default) uses a cryptographically secure source; a seed or Generator makes the release
    reproducible, warns (:class:`ppk.InsecureRandomnessWarning`) and marks the result as not private.

    **The promise.** The mechanism is calibrated to ``delta`` minus the samplers' term
    (:func:`ppk.records.release_budget`), so the total delta the record states is at most ``delta``.
    Refused with a ValueError, before any draw: ``eps`` above :data:`ppk.records.MAX_EPS` (20) unless
    ``allow_large_eps=True``, and a ``delta`` that the samplers' term alone reaches.
    """
    eps = real("eps", eps, minimum=0.0, min_inclusive=False)
    delta = real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    allow_large_eps = flag("allow_large_eps", allow_large_eps)
    if counts is not None:
        if data is not None or count is not None or n is not None:
            raise ValueError("give counts (a histogram) or data / count and n (a count), not both")
        unused = [name for name, value, default in (
            ("kappa1", kappa1, 0.0), ("kappa2", kappa2, None), ("kappa3", kappa3, None), ("hoeffding", hoeffding,
            "additive"), ("audit", audit, False), ("noise", noise, "gaussian")) if value != default]
        if unused:
            raise ValueError(f"{', '.join(unused)} apply to a count's release (Algorithm 2), not to a histogram's")
        return _release_histogram(counts=counts, known=known, probs=probs, eps=eps, delta=delta, rng=rng,
                                  min_prob=min_prob, allow_large_eps=allow_large_eps)
    if probs is not None or min_prob is not None:
        raise ValueError("probs and min_prob state the belief for a histogram's release (counts=); a count's "
                         "release estimates the bias privately")
    return _release_count(data=data, count=count, n=n, known=known, eps=eps, delta=delta, kappa1=kappa1,
                          kappa2=kappa2, kappa3=kappa3, hoeffding=hoeffding, rng=rng, audit=audit, noise=noise,
                          allow_large_eps=allow_large_eps)


#: The draws a count's release may make: the count estimate and the noise (the budget is set before
#: sigma is known, so it reserves both; with sigma = 0 the record books one and states less).
_COUNT_DRAWS = 2


def _release_count(*, data, count, n, known, eps, delta, kappa1, kappa2, kappa3, hoeffding, rng, audit,
                   noise, allow_large_eps) -> Release | tuple[Release, PrivateDraws]:
    audit = flag("audit", audit)
    budget = release_budget(eps=eps, delta=delta, draws=_COUNT_DRAWS, allow_large_eps=allow_large_eps)
    if kappa2 is not None and kappa3 is not None:
        # both fixed (they add up to delta): the samplers' share comes out of kappa3
        kappa3 = real("kappa3", kappa3, minimum=0.0, min_inclusive=False)
        room = Fraction(kappa3) - (Fraction(delta) - Fraction(budget))
        if room <= 0:
            raise ValueError(f"kappa3 = {kappa3!r} leaves no room for the samplers' term "
                             f"({float(Fraction(delta) - Fraction(budget)):.3g}); choose a larger kappa3")
        kappa3 = float(room) if Fraction(float(room)) <= room else math.nextafter(float(room), 0.0)
    source = as_source(rng)
    out = run(source, data=data, count=count, n=n, known=known, eps=eps, delta=budget, kappa1=kappa1, kappa2=kappa2,
              kappa3=kappa3, hoeffding=hoeffding, diagnostics=False, noise=noise)
    warn_if_seeded(source, "release")
    cal = out.result
    # kappas the caller fixed may add up to more than the budget (the split allows 1e-12): no draw yet
    check_total(delta_mechanism=alg2_mechanism_delta(cal), eps=eps, draws=_COUNT_DRAWS, delta=delta)
    sampler = {"gaussian": rounded_gaussian, "discrete_gaussian": discrete_gaussian,
               "discrete_laplace": discrete_laplace}[cal.law]
    added = sampler(cal.sigma, rng=source) if cal.sigma > 0 else 0
    value = Release(value=out.exact_count + added, calibration=cal)
    return (value, PrivateDraws(laplace_noise=out.laplace_noise, gaussian_noise=added)) if audit else value


def _release_histogram(*, counts: Sequence[int], known: int, probs: Sequence[float] | npt.ArrayLike | None,
                       eps: float, delta: float, rng: RngLike, min_prob: float | None,
                       allow_large_eps: bool) -> HistogramRelease:
    """Release every bin's count plus rounded Gaussian noise, sigma from :func:`ppk.calibrate`.

    ``counts`` are the true counts per category (their sum is ``n``, which is public).  The attacker's
    belief is ``probs`` (one probability per category) or, instead, ``min_prob``: every belief that
    gives each category at least that probability, covered at once (:func:`floor_probabilities`).
    The noise is drawn by the integer sampler :func:`ppk.samplers.rounded_gaussian` (within
    ``TV_BOUND`` of its law, booked by ``sampler_delta`` in the record) from a cryptographically
    secure source unless ``rng`` is given (then it warns and marks the result as not private).
    Rounding each bin is post-processing, so the calibrated (eps, delta) holds for the integers released.
    """
    values = sequence("counts", counts, lambda name, c: integer(name, c, minimum=0), max_length=MAX_CATEGORIES)
    if (probs is None) == (min_prob is None):
        raise ValueError("give the attacker's belief as probs (one probability per category) or min_prob "
                         "(a floor on every category's probability), not both and not neither")
    if min_prob is not None:
        if len(values) < 2:
            raise ValueError(f"counts must list at least 2 categories, got {len(values)}")
        floor = real("min_prob", min_prob, minimum=0.0, maximum=1.0 / len(values))
        probs_t = probabilities("probs", floor_probabilities(categories=len(values), min_prob=floor))
    else:
        assert probs is not None   # one of the two was given (checked above)
        probs_t = probabilities("probs", probs)
        if len(values) != len(probs_t):
            hint = (" (a floor on two categories' probabilities is min_prob=, not probs=floor_probabilities(...))"
                    if len(values) == 2 and len(probs_t) == 3 else "")
            raise ValueError(f"counts and probs must have one entry per category, got {len(values)} counts and "
                             f"{len(probs_t)} probabilities{hint}")
    n = sum(values)
    if n < 1:
        raise ValueError("counts must hold at least one row")
    if n > MAX_HISTOGRAM_ROWS:
        raise ValueError(f"counts must add up to at most MAX_HISTOGRAM_ROWS = {MAX_HISTOGRAM_ROWS} rows, got {n}")
    # one draw per bin; calibrated to what the samplers leave of delta
    budget = release_budget(eps=eps, delta=delta, draws=len(values), allow_large_eps=allow_large_eps)
    cal = calibrate(HistogramQuery(n=n, known=known, probs=probs_t, sigma=0.0), eps=eps, delta=budget)
    source = as_source(rng)
    warn_if_seeded(source, "release")
    noisy = tuple(c + (rounded_gaussian(cal.scale, rng=source) if cal.scale > 0 else 0) for c in values)
    return HistogramRelease(values=noisy, calibration=cal, insecure_for_testing=not source.secure,
                            eps=float(eps), delta=budget, min_prob=None if min_prob is None else float(min_prob),
                            created_utc=utc_now())
