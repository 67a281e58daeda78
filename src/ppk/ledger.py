"""A steward's private ledger: every release of a table, and the budget they spend together (docs/ledger.md).

Each ``ppk release``/``ppk histogram`` run is a new release.  Run with ``--ledger FILE``, it is appended to
FILE -- the time, the input file's SHA-256 (the ledger is the steward's private file: it never goes into
a published record), the rows, the statistic, the noise and the (eps, delta) it spent -- and before any
noise is drawn, the release is composed with every earlier one in the ledger: when the total would exceed
the budget the ledger states, nothing is released.

How releases are composed.  Releases over the same rows share their natural noise, so their partial-knowledge
guarantees do not compose as independent ones (docs/accuracy.md, "Releases over the same unknown rows").  The
ledger therefore credits natural noise only while it holds one release: from the second on, the total is
the composition of every release's *added* noise against the attacker who knows every other row (plain DP),
which is sound whatever the releases share -- the same file again, next month's file, another column.  The
composition is ppk's certified accountant (:class:`ppk.Accountant`); each release's samplers' term is added to
delta.
"""
from __future__ import annotations

import json
import math
import os
import pathlib
import tempfile
from dataclasses import dataclass
from typing import Any, Sequence

from ._validate import real

__all__ = ["Ledger", "LedgerRefusal", "LEDGER_FORMAT"]

#: The ledger file's format marker; a file without it is not read as a ledger.
LEDGER_FORMAT = "ppk-ledger/1"
#: The accountant's grid for the plain composition (its bracket is certified on any grid).
_INTERVAL = 1e-3
#: Mechanism kinds a ledger entry may name, and what each needs.
_KINDS = {"gaussian": ("sigma", "sensitivity"), "pure": ("eps",), "discrete_gaussian": ("sigma",),
          "discrete_laplace": ("scale",), "exact": ()}


class LedgerRefusal(ValueError):
    """A release the ledger's budget cannot pay for: nothing was released."""


@dataclass(frozen=True)
class Spent:
    """The ledger's total after its releases: ``eps`` at the budget's ``delta`` and ``delta`` at the budget's
    ``eps`` (certified upper ends), over ``releases`` releases; ``method`` says how they were composed."""
    eps: float
    delta: float
    releases: int
    method: str

    def as_dict(self) -> dict:
        return dict(eps=self.eps, delta=self.delta, releases=self.releases, method=self.method)


class Ledger:
    """The releases of a steward's tables and their budget, kept in a private JSON file.

    Open one with :meth:`open`: a new file needs the budget (``eps``, ``delta``); an existing one keeps the
    budget it was created with.  :meth:`admit` composes a release with every earlier one and refuses it
    past the budget; :meth:`append` records it."""

    def __init__(self, path: str | os.PathLike, *, eps: float, delta: float, entries: Sequence[dict] = ()):
        self.path = pathlib.Path(path)
        self.eps = real("eps", eps, minimum=0.0, min_inclusive=False)
        self.delta = real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
        self.entries: list[dict] = _checked_entries("entries", entries)

    @classmethod
    def open(cls, path: str | os.PathLike, *, eps: float | None = None, delta: float | None = None) -> "Ledger":
        """The ledger in ``path``; a new one (budget ``eps``, ``delta`` required) when the file does not exist.

        An existing ledger keeps its budget: ``eps``/``delta`` given with it must match it."""
        path = pathlib.Path(path)
        if not path.exists():
            if eps is None or delta is None:
                raise ValueError(f"the ledger {str(path)!r} does not exist yet: give its budget (eps and delta) to "
                                 "create it")
            return cls(path, eps=eps, delta=delta)
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"the ledger {str(path)!r} cannot be read as a ppk ledger: {exc}") from None
        if not isinstance(doc, dict) or doc.get("format") != LEDGER_FORMAT:
            raise ValueError(f"{str(path)!r} is not a ppk ledger (no \"format\": \"{LEDGER_FORMAT}\")")
        budget = doc.get("budget", {})
        for name, given in (("eps", eps), ("delta", delta)):
            if given is not None and given != budget.get(name):
                raise ValueError(f"the ledger {str(path)!r} has the budget {name} = {budget.get(name)!r}; a ledger's "
                                 f"budget does not change (got {name} = {given!r})")
        entries = doc.get("releases", [])
        if not isinstance(entries, list):
            raise ValueError(f"the ledger {str(path)!r} has no list of releases")
        for i, entry in enumerate(entries):
            _check_entry(entry, f"release {i + 1} of {str(path)!r}")
        return cls(path, eps=budget.get("eps"), delta=budget.get("delta"), entries=entries)

    def spent(self, extra: Sequence[dict] = ()) -> Spent:
        """The total of the ledger's releases and ``extra`` (entries not yet appended)."""
        entries = [*self.entries, *_checked_entries("extra", extra)]
        if not entries:
            return Spent(eps=0.0, delta=0.0, releases=0, method="no release yet")
        if len(entries) == 1:
            e = entries[0]
            return Spent(eps=float(e["eps"]), delta=float(e["delta"]), releases=1,
                         method="the release's own guarantee (its natural noise credited)")
        return _plain_composition(entries, eps=self.eps, delta=self.delta)

    def admit(self, entry: dict) -> Spent:
        """The total with ``entry`` added; raises :class:`LedgerRefusal` (naming the numbers) past the budget."""
        _check_entry(entry, "entry (the new release)")
        total = self.spent([entry])
        if total.eps > self.eps or total.delta > self.delta:
            raise LedgerRefusal(
                f"the ledger {str(self.path)!r} cannot pay for this release: with it, its {total.releases} releases "
                f"spend eps {total.eps:.6g} at delta {self.delta:g} (delta {total.delta:.3g} at eps "
                f"{self.eps:g}), over the budget (eps {self.eps:g}, delta {self.delta:g}); {total.method}. "
                "Nothing was released.")
        return total

    def append(self, entry: dict) -> None:
        """Record ``entry`` and write the file (atomically: a crash leaves the old ledger whole)."""
        _check_entry(entry, "entry (the new release)")
        self.entries.append(dict(entry))
        doc = dict(format=LEDGER_FORMAT, budget=dict(eps=self.eps, delta=self.delta), releases=self.entries,
                   note="PRIVATE: this file holds the SHA-256 of every input; never publish it")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(doc, fh, indent=1, allow_nan=False)
                fh.write("\n")
            os.replace(tmp, self.path)
        except BaseException:
            pathlib.Path(tmp).unlink(missing_ok=True)
            raise


def _checked_entries(name: str, entries: Any) -> list[dict]:
    if isinstance(entries, (str, bytes, dict)) or not isinstance(entries, (list, tuple)):
        raise TypeError(f"{name} must be a list of ledger entries (dicts), got {entries!r}")
    for i, entry in enumerate(entries):
        _check_entry(entry, f"{name}[{i}]")
    return [dict(e) for e in entries]


def _check_entry(entry: Any, where: str) -> None:
    if not isinstance(entry, dict):
        raise ValueError(f"{where} is not a ledger entry (a JSON object)")
    for key in ("eps", "delta", "mechanisms", "delta_sampler"):
        if key not in entry:
            raise ValueError(f"{where} lacks {key!r}")
    for key in ("eps", "delta", "delta_sampler"):
        value = entry[key]
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value < math.inf:
            raise ValueError(f"{where}: {key} must be a finite number >= 0, got {value!r}")
    mechanisms = entry["mechanisms"]
    if not isinstance(mechanisms, list):
        raise ValueError(f"{where}: 'mechanisms' must be a list")
    for m in mechanisms:
        if not isinstance(m, dict) or m.get("kind") not in _KINDS:
            raise ValueError(f"{where}: a mechanism must be one of {sorted(_KINDS)}, got {m!r}")
        for key in _KINDS[m["kind"]]:
            value = m.get(key)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or value <= 0:
                raise ValueError(f"{where}: its {m['kind']} mechanism needs a positive {key}, got {value!r}")


def _plain_composition(entries: Sequence[dict], *, eps: float, delta: float) -> Spent:
    """Every entry's added noise against the attacker who knows every other row, composed by the accountant."""
    from . import noise
    from .noisy_query import NoisyQuery
    from .pld import Accountant, PrivacyLossDistribution
    from .pld.mechanisms import randomized_response_pmfs

    method = ("the releases' added noise composed against an attacker who knows every other row (plain DP: natural "
              "noise is not credited across releases of shared rows)")
    if any(m["kind"] == "exact" for e in entries for m in e["mechanisms"]):
        return Spent(eps=math.inf, delta=1.0, releases=len(entries),
                     method=method + "; a release without noise gives such an attacker its exact value")
    acc = Accountant(value_discretization_interval=_INTERVAL)
    sampler = math.fsum(float(e["delta_sampler"]) for e in entries)
    for e in entries:
        for m in e["mechanisms"]:
            kind = m["kind"]
            if kind == "gaussian":
                acc = acc.add_gaussian(sigma=float(m["sigma"]), sensitivity=float(m["sensitivity"]))
            elif kind == "pure":
                # an eps0-DP count estimate by the discrete Laplace: its loss takes the two values +-eps0, with
                # the masses of randomized response (docs/ledger.md)
                p, q = randomized_response_pmfs(float(m["eps"]))
                acc = acc.add(PrivacyLossDistribution.from_pmfs(p, q, value_discretization_interval=_INTERVAL))
            else:
                law = noise.DiscreteGaussian(float(m["sigma"])) if kind == "discrete_gaussian" else \
                    noise.DiscreteLaplace(float(m["scale"]))
                acc = acc.add(NoisyQuery(natural=noise.Binomial(0, 0.5), added=law))
    total_eps = acc.epsilon(max(delta - sampler, 0.0)) if delta > sampler else math.inf
    _, total_delta = acc.delta_bracket(eps)
    return Spent(eps=total_eps, delta=min(float(total_delta) + sampler, 1.0), releases=len(entries), method=method)
