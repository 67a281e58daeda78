"""The noisy release itself: calibrate with Algorithm 2, then add the noise.

Why the output cannot leak the count through floating point (docs/release-security.md):
every published number that depends on the data comes from an integer mechanism.
The count estimate that Algorithm 2 publishes is ``count + Y`` with ``Y`` discrete
Laplace, and the released value is ``count + K`` with ``K = round(sigma Z)`` drawn in
integer arithmetic (:func:`ppk.samplers.rounded_gaussian`: no float is involved, so its low
bits are right for every sigma; the same work for every draw, at the price of a law within
total variation 2**-190 of the stated one, which :func:`ppk.samplers.sampler_delta` books into
delta; every record's ``guarantee`` adds it as ``delta_sampler``).
Rounding is post-processing of the Gaussian mechanism, so the calibrated (eps, delta) holds
for the rounded release.  Randomness comes from the operating system's CSPRNG unless a seed
is given -- which warns and marks the result.  ``Release.public()`` carries the reviewer's
record (:func:`make_record`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from fractions import Fraction
from typing import Literal, overload

import numpy.typing as npt

from ._random import as_source, warn_if_seeded
from .algorithm2 import Alg2Result, PrivateDraws, _Added, _run, _validated
from ._typing import RngLike
from ._validate import flag
from .samplers import discrete_gaussian, discrete_laplace, rounded_gaussian, sampler_delta

__all__ = ["release", "Release", "make_record", "RECORD_FORMAT"]

#: The name and version of the record's layout (docs/release-security.md, "The record").
RECORD_FORMAT = "ppk-record/1"


def _round_up(x: Fraction) -> float:
    """The least float >= x (so a delta is never reported below its value)."""
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def total_delta(delta: float, delta_sampler: float) -> float:
    """delta + delta_sampler, rounded up, at most 1."""
    return min(_round_up(Fraction(delta) + Fraction(delta_sampler)), 1.0)


def utc_now() -> str:
    """The current UTC time, ISO 8601 to the second: '2026-11-25T17:48:00Z'."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def make_record(*, attacker: dict | None, guarantee: dict | None, noise: dict | None, warnings: list[str],
                created_utc: str | None = None, input: dict | None = None) -> dict:
    """The reviewer's record of one output (docs/release-security.md, "The record").

    ``attacker``: whom the guarantee is against, in numbers and in words (``text``), and where the
    belief about the unknown rows came from (``belief_source``: ``"estimated_privately"``,
    ``"stated_by_steward"`` or ``"none"``).  ``guarantee``: ``kind`` ("DP" or "PPK-DP"), ``eps``,
    ``delta`` (the total: the mechanism's ``delta_mechanism`` plus the samplers' ``delta_sampler``,
    rounded up) and ``text``.  ``noise``: ``law`` and ``scale`` (counts).  ``input``: the file, its
    SHA-256, the column and the rows read (``None`` when no file was read).  ``warnings``: every
    reason the output is weaker than it may look -- exact values published, a guarantee that rests
    on a stated belief or on a bound on the attacker's knowledge rather than standard DP, seeded
    randomness.  The ppk version and the UTC time are added here.
    """
    from . import __version__
    return {"format": RECORD_FORMAT, "ppk_version": __version__, "created_utc": created_utc or utc_now(),
            "input": input, "attacker": attacker, "guarantee": guarantee, "noise": noise,
            "warnings": list(warnings)}


def guarantee(*, kind: str, eps, delta_mechanism, draws: int = 0, text: str) -> dict:
    """The ``guarantee`` of a record: for one eps (a float) or a curve (lists), with the samplers' term."""
    if isinstance(eps, (list, tuple)):
        extras = [sampler_delta(e, draws) for e in eps]
        return dict(kind=kind, eps=list(eps), delta=[total_delta(d, x) for d, x in zip(delta_mechanism, extras)],
                    delta_mechanism=list(delta_mechanism), delta_sampler=extras, text=text)
    extra = sampler_delta(eps, draws)
    return dict(kind=kind, eps=eps, delta=total_delta(delta_mechanism, extra), delta_mechanism=delta_mechanism,
                delta_sampler=extra, text=text)


#: The warnings of a record, worded once.
SEEDED_WARNING = "NOT PRIVATE: seeded randomness (for tests only); the noise can be reproduced"


def exact_warning(what: str, known: int) -> str:
    return (f"NO NOISE: {what} published exactly. The unknown rows alone (natural noise) meet (eps, delta) "
            f"only against an attacker who knows at most {known} rows; one who knows more is not covered")


def ppk_warning(known: int, n: int, belief: str) -> str:
    return (f"NOT STANDARD DP: private against an attacker who knows at most {known} of the {n} rows and for whom "
            f"the others are independent draws ({belief}); an attacker who knows more rows, or has a sharper "
            "belief about the others, is not covered")


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
                   "rounded_gaussian" if law == "gaussian" else law, ledger=self.calibration.ledger())
        if self.insecure_for_testing:
            out["warning"] = SEEDED_WARNING
        if self.calibration.sigma == 0:
            out["notice"] = ("no noise was added: the value is the exact count, private only against an attacker "
                             f"who knows at most {self.calibration.known} rows (natural noise alone suffices)")
        out["record"] = alg2_record(self.calibration, draws=self.draws, created_utc=self.created_utc, input=input,
                                    value_published=True)
        return out


def alg2_record(cal: Alg2Result, *, draws: int, created_utc: str | None = None, input: dict | None = None,
                value_published: bool) -> dict:
    """The record of an Algorithm 2 calibration (``value_published=False``: the ledger alone, whose count
    estimate is itself a release) or of a release."""
    n, known = cal.n, cal.known
    interval = ("none (the estimate was unusable: the DP baseline is used)" if cal.branch == "fallback"
                else f"p in [{cal.p_lo:.6g}, {cal.p_hi:.6g}]")
    belief = ("each unknown row is 1 with the same probability p, independently; "
              f"{interval}, estimated privately from the data (eps/2 = {cal.eps_estimate:g} of the budget buys a "
              f"discrete-Laplace count estimate, {cal.hoeffding} Hoeffding interval failing with probability "
              f"kappa2 = {cal.kappa2:.3g}, inside delta)")
    standard = cal.branch in ("baseline", "fallback") or n - known - 1 == 0
    attacker = dict(rows=n, rows_known=known, rows_unknown=n - known - 1, belief=belief,
                    belief_source="none" if standard else "estimated_privately",
                    text=("any attacker (standard DP: the noise is the DP baseline's, at (eps/2, delta), and the "
                          "count estimate is eps/2-DP)" if standard else
                          f"an attacker who knows {known} of the {n} rows exactly (their values and who they are), "
                          f"not the challenge row; the other {n - known - 1} rows are natural noise: {belief}"))
    law = {"gaussian": "rounded_gaussian"}.get(cal.law, cal.law)
    scale_name = "scale" if cal.law == "discrete_laplace" else "sigma"
    what = "a count plus noise" if value_published else "the ledger's count estimate (the value is not drawn here)"
    g = guarantee(kind="DP" if standard else "PPK-DP", eps=cal.eps, delta_mechanism=cal.delta, draws=draws,
                  text=f"{what}: (eps, delta)-{'DP' if standard else 'PPK-DP'}; delta = kappa1 + kappa2 + kappa4 + "
                       "T_L (the ledger's delta_parts) plus the samplers' term")
    noise = dict(law="none" if cal.sigma == 0 else law, scale=cal.sigma, scale_name=scale_name, unit="counts",
                 per="value", count_estimate_law="discrete_laplace", count_estimate_eps=cal.eps_estimate)
    warnings = []
    if cal.insecure_for_testing:
        warnings.append(SEEDED_WARNING)
    if cal.sigma == 0:
        warnings.append(exact_warning("the count is" if value_published else "a release would publish the count",
                                      known))
    if not standard:
        warnings.append(ppk_warning(known, n, "the same probability p for every unknown row, estimated privately"))
    return make_record(attacker=attacker, guarantee=g, noise=noise, warnings=warnings, created_utc=created_utc,
                       input=input)


@overload
def release(*, data: npt.ArrayLike | None = ..., count: int | None = ..., n: int | None = ..., known: int, eps: float,
            delta: float, kappa1: float = ..., kappa2: float | None = ..., kappa3: float | None = ...,
            hoeffding: str = ..., rng: RngLike = ..., audit: Literal[False] = ..., noise: str = ...) -> Release: ...
@overload
def release(*, data: npt.ArrayLike | None = ..., count: int | None = ..., n: int | None = ..., known: int, eps: float,
            delta: float, kappa1: float = ..., kappa2: float | None = ..., kappa3: float | None = ...,
            hoeffding: str = ..., rng: RngLike = ..., audit: Literal[True],
            noise: str = ...) -> tuple[Release, PrivateDraws]: ...
def release(*, data: npt.ArrayLike | None = None, count: int | None = None, n: int | None = None, known: int,
            eps: float, delta: float, kappa1: float = 0.0, kappa2: float | None = None, kappa3: float | None = None,
            hoeffding: str = "additive", rng: RngLike = None, audit: bool = False,
            noise: str = "gaussian") -> Release | tuple[Release, PrivateDraws]:
    """Release ``count + round(sigma Z)`` with sigma from :func:`ppk.alg2` (same arguments).

    ``noise="discrete_gaussian"`` or ``"discrete_laplace"`` adds that law instead, with the scale
    Algorithm 2 calibrates for it, drawn by the exact integer samplers of :mod:`ppk.samplers`.

    ``rng=None`` (default) uses a cryptographically secure source for both the count
    estimate and the Gaussian noise; a seed or Generator makes it reproducible, warns
    (:class:`ppk.InsecureRandomnessWarning`) and marks the result as not private.
    ``audit=True`` returns ``(Release, PrivateDraws)``; the Release never holds the noise.
    """
    args = _validated(data, count, n, known, eps, delta, kappa1, kappa2, kappa3, hoeffding)
    _Added(noise)
    audit = flag("audit", audit)
    source = as_source(rng)
    warn_if_seeded(source, "release")
    cal, laplace_noise = _run(source, *args, hoeffding, False, noise)
    sampler = {"gaussian": rounded_gaussian, "discrete_gaussian": discrete_gaussian,
               "discrete_laplace": discrete_laplace}[noise]
    gaussian_noise = sampler(cal.sigma, rng=source) if cal.sigma > 0 else 0
    out = Release(value=args[0] + gaussian_noise, calibration=cal)
    return (out, PrivateDraws(laplace_noise=laplace_noise, gaussian_noise=gaussian_noise)) if audit else out
