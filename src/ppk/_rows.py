"""The rows of ``evaluation.csv``: their columns and the check of a list of them.

One home below both :mod:`ppk.evaluation` (which writes and reads the rows) and :mod:`ppk.figures` (which
draws them): figures imported the check from evaluation, which loads figures by name -- a circle.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._validate import instance, sequence

COLUMNS = ["n", "known_fraction", "p", "eps", "delta", "sigma_ppk", "sigma_alg2", "sigma_analytic",
           "sigma_cor32", "sigma_classic", "gain", "seconds"]


def check_rows(name: str, rows: Any) -> list[Mapping[str, Any]]:
    """``rows`` as a list of rows of ``evaluation.csv`` (mappings with every column of COLUMNS)."""
    def row(entry: str, r: Any) -> Mapping[str, Any]:
        instance(entry, r, Mapping, "a row of evaluation.csv (a dict with the keys of COLUMNS)")
        missing = [c for c in COLUMNS if c not in r]
        if missing:
            raise ValueError(f"{entry} lacks the columns {', '.join(missing)}")
        return r
    return sequence(name, rows, row)
