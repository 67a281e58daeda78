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

__all__ = ["make_record", "RECORD_FORMAT"]   # the parts below are the releases' and the CLI's

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
