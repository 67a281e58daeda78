"""The reviewer's record of an output (docs/release-security.md, "The record"): one layout for every
release and every calibration the command line prints, worded warnings, and the samplers' share of delta.
"""
from __future__ import annotations

import math
from datetime import datetime, timezone
from fractions import Fraction
from typing import TYPE_CHECKING

from .samplers import sampler_delta

if TYPE_CHECKING:
    from .algorithm2 import Alg2Result

__all__ = ["make_record", "RECORD_FORMAT", "MAX_EPS", "verify_input"]   # the rest: the releases' and the CLI's

#: The name and version of the record's layout (docs/release-security.md, "The record").
RECORD_FORMAT = "ppk-record/1"

#: The largest total eps a release takes unless the steward says otherwise (``allow_large_eps``):
#: at eps = 20 one output may be e^20 ~ 5e8 times likelier under one neighbour than under the other,
#: a guarantee that no longer says anything (docs/release-security.md, "What a release refuses").
MAX_EPS = 20.0
#: The share of the mechanism's budget left unused, so that the float rounding of its parts
#: (kappa4 = kappa3 - T_L, ...) cannot carry the total above the delta asked for.
_ROUNDING_MARGIN = Fraction(1, 10**14)


def _round_up(x: Fraction) -> float:
    """The least float >= x (so a delta is never reported below its value)."""
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def _round_down(x: Fraction) -> float:
    """The largest float <= x."""
    f = float(x)
    return f if Fraction(f) <= x else math.nextafter(f, -math.inf)


def total_delta(delta: float, delta_sampler: float) -> float:
    """delta + delta_sampler, rounded up, at most 1."""
    return min(_round_up(Fraction(delta) + Fraction(delta_sampler)), 1.0)


def release_budget(*, eps: float, delta: float, draws: int, allow_large_eps: bool = False) -> float:
    """The delta to calibrate a release's mechanism to, so that the record's total -- the mechanism's
    delta plus the samplers' term of ``draws`` draws, rounded up -- never exceeds the ``delta`` asked
    for: ``(delta - sampler_delta(eps, draws))(1 - 1e-14)``, rounded down.

    Refuses (ValueError naming the cause) a release whose promise would be empty: ``eps`` above
    :data:`MAX_EPS` unless ``allow_large_eps``, or a samplers' term that alone reaches ``delta``
    (for every eps above ~131 it is 1).  Called before any draw, so a refused release draws nothing.
    """
    if not eps > 0:
        raise ValueError(f"eps must be positive, got {eps!r}")
    if eps > MAX_EPS and not allow_large_eps:
        raise ValueError(f"eps = {eps:g} is above MAX_EPS = {MAX_EPS:g}: a likelihood ratio of e^{eps:g} between "
                         "neighbouring databases protects nothing, and the release would publish (almost) the exact "
                         "value; nothing was released (to release anyway, pass allow_large_eps (Python) or "
                         "--allow-large-eps (command line))")
    extra = sampler_delta(eps, draws)
    room = (Fraction(delta) - Fraction(extra)) * (1 - _ROUNDING_MARGIN)
    if room <= 0:
        raise ValueError(f"delta = {delta:g} cannot be met at eps = {eps:g}: the samplers' term alone, "
                         f"(1 + e^eps) {draws} 2^-190 = {extra:.3g} (docs/samplers.md), is at least delta; "
                         "nothing was released")
    return _round_down(room)


def check_total(*, delta_mechanism: float, eps: float, draws: int, delta: float) -> None:
    """Refuse a release whose total delta (as the record will state it) would exceed the ``delta`` asked for."""
    total = total_delta(delta_mechanism, sampler_delta(eps, draws))
    if total > delta:
        raise ValueError(f"delta: the mechanism's delta {delta_mechanism!r} plus the samplers' term "
                         f"{sampler_delta(eps, draws):.3g} is {total!r}, above delta = {delta!r}; leave room for the "
                         "samplers (give one of kappa2, kappa3 and ppk splits the rest); nothing was released")


def alg2_mechanism_delta(cal: "Alg2Result") -> float:
    """Algorithm 2's delta: on its own branch, its published parts kappa1 + kappa2 + kappa4 + T_L added
    exactly and rounded up (float rounding of kappa4 = kappa3 - T_L may carry them above the budget);
    never below the budget.  The baseline and the fallback spend the budget on the DP baseline."""
    if cal.branch in ("baseline", "fallback"):
        return cal.delta
    parts = sum((Fraction(x) for x in (cal.kappa1, cal.kappa2, cal.kappa4, cal.truncation_delta)), Fraction(0))
    return max(cal.delta, _round_up(parts))


#: What a null in a public ledger means (JSON has no infinity or NaN; docs/release-security.md).
_NULL_MEANS = {
    "sigma_ppk": {"inf": "not searched: the DP baseline's sigma already fails kappa4 at an end of the bias "
                         "interval, so no smaller sigma can do, and the baseline is used",
                  "nan": "not computed: the fallback branch uses the DP baseline"},
    "p_lo": {"nan": "no bias interval: the fallback branch uses the DP baseline"},
    "p_hi": {"nan": "no bias interval: the fallback branch uses the DP baseline"},
    "tau": {"nan": "no interval width: the Chernoff-KL interval has none, or the fallback branch built none"},
}


def public_ledger(cal: "Alg2Result") -> dict:
    """Algorithm 2's ledger as strict JSON: every number that is not finite becomes null, and
    ``null_means`` says, for each such key, what it stands for (an infinite sigma_ppk: not searched)."""
    ledger = cal.ledger()
    notes = {}
    for key, value in ledger.items():
        if isinstance(value, float) and not math.isfinite(value):
            kind = "nan" if math.isnan(value) else "inf"
            notes[key] = _NULL_MEANS.get(key, {}).get(kind, f"not a finite number ({kind})")
            ledger[key] = None
    ledger["null_means"] = notes
    return ledger


def verify_input(path: str, *, key: bytes | str, commitment: str) -> bool:
    """Does the file at ``path`` match a record's ``input.commitment``?  ``key`` is the steward's secret
    (the bytes, or the hex line of the key file).  For a reviewer the steward has shown the key to;
    the same as ``openssl dgst -sha256 -mac HMAC -macopt hexkey:KEY FILE``."""
    import hmac as _hmac

    from ._io import file_commitment
    raw = bytes.fromhex(key.strip()) if isinstance(key, str) else bytes(key)
    return _hmac.compare_digest(file_commitment(path, raw), commitment.strip().lower())


def utc_now() -> str:
    """The current UTC time, ISO 8601 to the second: '2026-11-25T17:48:00Z'."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def make_record(*, attacker: dict | None, guarantee: dict | None, noise: dict | None, warnings: list[str],
                created_utc: str | None = None, input: dict | None = None) -> dict:
    """The reviewer's record of one output (docs/release-security.md, "The record").

    ``attacker``: whom the guarantee is against, in numbers and in words (``text``), and where the
    belief about the unknown rows came from (``belief_source``: ``"estimated_privately"``,
    ``"stated_by_steward"``, ``"ppk_default"`` (a CLI default nobody stated) or ``"none"``).  ``guarantee``: ``kind`` ("DP" or "PPK-DP"), ``eps``,
    ``delta`` (the total: the mechanism's ``delta_mechanism`` plus the samplers' ``delta_sampler``,
    rounded up) and ``text``.  ``noise``: ``law`` and ``scale`` (counts).  ``input``: the file, the
    commitment to its bytes (HMAC-SHA256 under the steward's secret key, or None), the column and the
    rows read (``None`` when no file was read): never a function of the data anyone could recompute.  ``warnings``: every
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


def alg2_record(cal: "Alg2Result", *, draws: int, created_utc: str | None = None, input: dict | None = None,
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
    g = guarantee(kind="DP" if standard else "PPK-DP", eps=cal.eps, delta_mechanism=alg2_mechanism_delta(cal),
                  draws=draws,
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
