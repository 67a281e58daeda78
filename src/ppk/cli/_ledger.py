"""``--ledger FILE`` of the commands that release: the steward's budget across releases (docs/ledger.md).

The ledger is opened before any data is read; a release it cannot pay for is refused with rc 2 and
nothing printed but the error.  A count's calibration (Algorithm 2) depends on its private estimate, so
its admission is decided after the estimate is drawn: a refused count is recorded as spending that
estimate's eps/2 (the refusal is a function of it), and the count itself is never published.
"""
from __future__ import annotations

import argparse
import math
from typing import Any

from .._io import file_sha256
from ..ledger import Ledger, LedgerRefusal
from ..records import utc_now


def add_ledger_args(parser: argparse.ArgumentParser) -> None:
    """--ledger and --budget of a command that releases."""
    parser.add_argument("--ledger", metavar="FILE", default=None,
                        help="the steward's private ledger of releases (JSON): this release is composed with every "
                             "earlier one in FILE and refused, before anything is published, past its budget; "
                             "the record states the total (docs/ledger.md)")
    parser.add_argument("--budget", metavar="EPS,DELTA", default=None, type=_budget,
                        help="the budget of a new --ledger FILE, e.g. 2,1e-6 (an existing ledger keeps its own)")


def _budget(text: str) -> tuple[float, float]:
    try:
        eps, delta = (float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be EPS,DELTA (e.g. 2,1e-6), got {text!r}") from None
    if not (eps > 0 and math.isfinite(eps) and 0 < delta < 1):
        raise argparse.ArgumentTypeError(f"must be EPS,DELTA with EPS > 0 and DELTA in (0, 1), got {text!r}")
    return eps, delta


def open_ledger(args: argparse.Namespace) -> Ledger | None:
    """The ledger of --ledger (created with --budget when new), or None; checked before any data is read."""
    if getattr(args, "ledger", None) is None:
        if getattr(args, "budget", None) is not None:
            raise ValueError("--budget goes with --ledger FILE (the ledger it is the budget of)")
        return None
    eps, delta = args.budget if args.budget is not None else (None, None)
    try:
        return Ledger.open(args.ledger, eps=eps, delta=delta)
    except ValueError as exc:
        raise ValueError(f"--ledger: {exc}".replace("give its budget (eps and delta)", "give its budget (--budget)")) \
            from None


def source(path: str, column: str | None, rows: int) -> dict:
    """The ledger's ``input`` of a release from ``path``: its SHA-256 (the ledger is private), column and rows.
    Built once per release, and only when there is a ledger: it reads the file again."""
    return dict(file=path, sha256=file_sha256(path), column=column, rows=rows)


def entry(*, command: str, input: dict, guarantee: dict, mechanisms: list[dict], statistics: Any) -> dict:
    """A ledger entry: the time, the input (:func:`source`), what was released, the noise as mechanisms, and
    the ``guarantee``'s (eps, delta) and samplers' term (a record's ``guarantee``, or what a refusal spent)."""
    return dict(time=utc_now(), command=command, input=input, statistics=statistics, eps=float(guarantee["eps"]),
                delta=float(guarantee["delta"]), delta_sampler=float(guarantee["delta_sampler"]),
                mechanisms=mechanisms)


def settle(ledger: Ledger, new: dict, public: dict, *, refused_entry: dict | None = None) -> None:
    """Admit ``new`` into the ledger and record it, adding the total to the public record; past the budget,
    record ``refused_entry`` (what the refused attempt spent, if anything) and raise LedgerRefusal."""
    try:
        total = ledger.admit(new)
    except LedgerRefusal:
        if refused_entry is not None:
            ledger.append(refused_entry)
        raise
    ledger.append(new)
    public["record"]["ledger"] = dict(releases=total.releases, eps=total.eps, delta=total.delta,
                                      budget=dict(eps=ledger.eps, delta=ledger.delta), method=total.method)


def gaussian_mechanisms(sigma: float, sensitivity: float, *, law: str = "gaussian") -> list[dict]:
    """The added noise of one release as ledger mechanisms: none (``sigma = 0``: the exact value, which no
    finite eps covers against an attacker who knows every other row) or the law at ``sigma``."""
    if sigma == 0:
        return [dict(kind="exact")]
    if law == "discrete_laplace":
        return [dict(kind="discrete_laplace", scale=sigma)]
    if law == "discrete_gaussian":
        return [dict(kind="discrete_gaussian", sigma=sigma)]
    return [dict(kind="gaussian", sigma=sigma, sensitivity=sensitivity)]


def print_total(public: dict) -> None:
    """The ledger's line after the record."""
    total = public["record"].get("ledger")
    if total is not None:
        print(f"ledger: {total['releases']} release(s) spend eps = {total['eps']:.6g} at delta = "
              f"{total['budget']['delta']:g} (budget eps = {total['budget']['eps']:g}); {total['method']}")
