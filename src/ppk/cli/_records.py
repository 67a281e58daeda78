"""Parts of the record (:func:`ppk.records.make_record`) that several commands fill the same way."""
from __future__ import annotations

from .._io import ColumnRead
from ..records import ppk_warning


def file_input(read: ColumnRead, column: str) -> dict:
    """The record's ``input``: the file as named on the command line, its SHA-256, the column, the rows."""
    return dict(file=read.path, sha256=read.sha256, column=column, rows=read.rows)


def stated_warning(known: int, n: int, flag: str) -> str:
    """The warning of a guarantee that rests on a belief the steward stated with ``flag``."""
    return ppk_warning(known, n, f"as stated with {flag}, not estimated from the data").replace(
        "NOT STANDARD DP:", "STATED BELIEF, NOT STANDARD DP:")
