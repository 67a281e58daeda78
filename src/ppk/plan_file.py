"""A release plan written down: the TOML file ``ppk plan`` reads (docs/table-plans.md, "The plan file").

::

    known = 10000          # rows the attacker may know
    eps = 0.5              # the whole plan's target: one calibration for every statistic
    delta = 1e-6
    min_prob = 0.01        # every joint category has probability >= min_prob for an unknown row
                           # (or a [belief.<column>] table per column: the belief is their product)

    [columns]              # the public domain of each column the plan uses, in order
    smoker = ["0", "1"]
    region = ["north", "south", "east", "west"]

    [[statistics]]
    name = "smokers"
    count = { smoker = "1" }          # rows whose columns take these values
    [[statistics]]
    name = "regions"
    histogram = "region"              # one count per value of the column
    [[statistics]]
    name = "smoking by region"
    crosstab = ["smoker", "region"]   # one count per pair of values
    noise = 2.0                       # this statistic's sigma relative to the others' (default 1)

A row's category is the tuple of its values in the columns of ``[columns]``; every released number is
the count of the rows in a set of categories, so the plan is a :class:`ppk.TablePlan`.  Every error
names the file and the key.
"""
from __future__ import annotations

import itertools
import math
import sys
from dataclasses import dataclass
from typing import Any, Hashable

from ._validate import real
from .table_plan import TablePlan

__all__ = ["PlanFile", "read_plan"]

if sys.version_info >= (3, 11):
    import tomllib
else:   # pragma: no cover - the tomli backport, a dependency on these versions
    import tomli as tomllib

#: Most joint categories a plan file may describe (the product of its columns' domains).
MAX_JOINT_CATEGORIES = 1000
_TOP_KEYS = {"known", "eps", "delta", "min_prob", "columns", "belief", "statistics"}
_STAT_KINDS = ("count", "histogram", "crosstab")


@dataclass(frozen=True)
class Statistic:
    """One statistic of the plan: its name and the released counts, each a tuple of joint categories
    with a label (``"smoker=1"``, ``"region=north"``, ...)."""
    name: str
    labels: tuple[str, ...]
    cells: tuple[tuple[tuple[str, ...], ...], ...]
    noise: float


@dataclass(frozen=True)
class PlanFile:
    """A plan file, checked: the attacker, the target, the domain, the belief and the statistics."""
    path: str
    known: int
    eps: float
    delta: float
    columns: tuple[tuple[str, tuple[str, ...]], ...]
    min_prob: float | None
    marginals: dict | None
    statistics: tuple[Statistic, ...]

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.columns)

    @property
    def categories(self) -> list[tuple[str, ...]]:
        """Every joint category: a tuple of values, one per column, in the order of ``[columns]``."""
        return list(itertools.product(*(values for _, values in self.columns)))

    def counts(self, *, sigma: float = 1.0) -> list[tuple[tuple, float]]:
        """The plan's counts for :class:`ppk.TablePlan`, each statistic's noise ``sigma`` times its ``noise``."""
        sigma = real("sigma", sigma, minimum=0.0, maximum=1e300)
        return [(cell, sigma * stat.noise) for stat in self.statistics for cell in stat.cells]

    def table_plan(self, *, n: int, sigma: float = 1.0) -> TablePlan:
        """The :class:`ppk.TablePlan` of this plan over ``n`` rows (with ``min_prob``: the plan that covers every
        belief above the floor, :meth:`ppk.TablePlan.worst_case`)."""
        if self.min_prob is not None:
            return TablePlan.worst_case(n=n, known=self.known, categories=self.categories,
                                        counts=self.counts(sigma=sigma), min_prob=self.min_prob)
        assert self.marginals is not None
        probs: dict[Hashable, float] = {c: math.prod(self.marginals[col][v] for col, v in zip(self.column_names, c))
                 for c in self.categories}
        return TablePlan(n=n, known=self.known, probs=probs, counts=self.counts(sigma=sigma))


def _fail(path: str, what: str) -> ValueError:
    return ValueError(f"{path}: {what}")


def _number(path: str, key: str, value: Any, *, low: float, high: float, integer: bool = False) -> Any:
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or not math.isfinite(value) or not low <= value <= high:
        kind = "a whole number" if integer else "a number"
        raise _fail(path, f"{key} must be {kind} in [{low:g}, {high:g}], got {value!r}")
    return value


def read_plan(path: str) -> PlanFile:
    """The plan file at ``path``, checked; a ValueError names the file and the key of any mistake."""
    try:
        with open(path, "rb") as fh:
            doc = tomllib.load(fh)
    except FileNotFoundError:
        raise _fail(path, "no such file") from None
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise _fail(path, f"not a readable TOML plan file: {exc}") from None
    unknown = sorted(set(doc) - _TOP_KEYS)
    if unknown:
        raise _fail(path, f"unknown keys {unknown}; a plan file has {sorted(_TOP_KEYS)}")
    for key in ("known", "eps", "delta", "columns", "statistics"):
        if key not in doc:
            raise _fail(path, f"missing {key!r}")
    known = _number(path, "known", doc["known"], low=0, high=10**10, integer=True)
    eps = _number(path, "eps", doc["eps"], low=1e-6, high=1e4)
    delta = _number(path, "delta", doc["delta"], low=1e-300, high=0.5)
    if not (delta > 0):
        raise _fail(path, "delta must be > 0")

    columns_doc = doc["columns"]
    if not isinstance(columns_doc, dict) or not columns_doc:
        raise _fail(path, "[columns] must map each column to the list of its values")
    columns = []
    size = 1
    for name, values in columns_doc.items():
        if not isinstance(values, list) or len(values) < 2 or not all(isinstance(v, str) for v in values):
            raise _fail(path, f"columns.{name} must list at least two values as strings, got {values!r}")
        if len(set(values)) != len(values):
            raise _fail(path, f"columns.{name} lists a value twice")
        size *= len(values)
        if size > MAX_JOINT_CATEGORIES:
            raise _fail(path, f"the columns' domains make more than {MAX_JOINT_CATEGORIES} joint categories")
        columns.append((name, tuple(values)))
    domain = dict(columns)
    names = [name for name, _ in columns]

    min_prob, marginals = doc.get("min_prob"), doc.get("belief")
    if (min_prob is None) == (marginals is None):
        raise _fail(path, "say what the attacker believes about the unknown rows: min_prob (a floor on every joint "
                          "category) or a [belief.<column>] table for every column, not both")
    if min_prob is not None:
        min_prob = _number(path, "min_prob", min_prob, low=0.0, high=1.0 / size)
    else:
        if not isinstance(marginals, dict) or set(marginals) != set(names):
            raise _fail(path, f"[belief] must have a table for each column {names}")
        for name in names:
            table = marginals[name]
            if not isinstance(table, dict) or set(table) != set(domain[name]):
                raise _fail(path, f"belief.{name} must give a probability to each value {list(domain[name])}")
            for value, p in table.items():
                _number(path, f"belief.{name}.{value}", p, low=0.0, high=1.0)
            if abs(math.fsum(table.values()) - 1.0) > 1e-9:
                raise _fail(path, f"belief.{name} must sum to 1, got {math.fsum(table.values())!r}")

    stats_doc = doc["statistics"]
    if not isinstance(stats_doc, list) or not stats_doc:
        raise _fail(path, "[[statistics]] must list at least one statistic")
    categories = list(itertools.product(*(values for _, values in columns)))
    statistics = []
    seen = set()
    for i, stat in enumerate(stats_doc):
        where = f"statistics[{i}]"
        if not isinstance(stat, dict):
            raise _fail(path, f"{where} must be a table")
        name = stat.get("name", f"statistic {i + 1}")
        if not isinstance(name, str) or name in seen:
            raise _fail(path, f"{where}.name must be a string no other statistic has, got {name!r}")
        seen.add(name)
        kinds = [k for k in _STAT_KINDS if k in stat]
        extra = sorted(set(stat) - {"name", "noise", *_STAT_KINDS})
        if len(kinds) != 1 or extra:
            raise _fail(path, f"{where} must have exactly one of {list(_STAT_KINDS)} (and name, noise), got "
                              f"{sorted(stat)}")
        noise = _number(path, f"{where}.noise", stat.get("noise", 1.0), low=1e-6, high=1e6)
        kind, given = kinds[0], stat[kinds[0]]
        if kind == "count":
            if not isinstance(given, dict) or not given or not set(given) <= set(names):
                raise _fail(path, f"{where}.count must map columns of [columns] to values, got {given!r}")
            for col, value in given.items():
                if value not in domain[col]:
                    raise _fail(path, f"{where}.count: {value!r} is not a value of column {col!r}")
            cell = tuple(c for c in categories if all(c[names.index(col)] == v for col, v in given.items()))
            labels: tuple[str, ...] = (",".join(f"{col}={v}" for col, v in given.items()),)
            cells: tuple = (cell,)
        else:
            cols = [given] if kind == "histogram" else given
            if not isinstance(cols, list) or not cols or not all(isinstance(c, str) and c in domain for c in cols) \
                    or len(set(cols)) != len(cols):
                raise _fail(path, f"{where}.{kind} must name {'a column' if kind == 'histogram' else 'columns'} of "
                                  f"[columns], got {given!r}")
            groups = list(itertools.product(*(domain[c] for c in cols)))
            labels = tuple(",".join(f"{col}={v}" for col, v in zip(cols, g)) for g in groups)
            cells = tuple(tuple(c for c in categories if all(c[names.index(col)] == v for col, v in zip(cols, g)))
                          for g in groups)
        statistics.append(Statistic(name=name, labels=labels, cells=cells, noise=float(noise)))
    return PlanFile(path=path, known=known, eps=float(eps), delta=float(delta), columns=tuple(columns),
                    min_prob=None if min_prob is None else float(min_prob), marginals=marginals,
                    statistics=tuple(statistics))
