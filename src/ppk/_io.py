"""Input and output of the command line: bounded CSV reading and strict JSON.

A release reads real data, so reading must neither trust the file (a binary file,
``/dev/zero``, a line of gigabytes) nor guess (a duplicated header).  The column is
streamed: memory stays O(one line) whatever the file's size.
"""
from __future__ import annotations

import csv
import json
import math

__all__ = ["count_binary_column", "count_categories", "strict_json", "MAX_LINE_CHARS"]

#: Longest CSV line read (characters); a longer one is refused, so no input can exhaust memory.
MAX_LINE_CHARS = 1 << 20

_TRUE, _FALSE = ("1", "true"), ("0", "false")


def _binary_cell(cell: str) -> int | None:
    """0/1 from '0', '1', '0.0', '1.0', 'true', 'false' (any case) -- what ``release(data=...)`` takes."""
    text = cell.strip().lower()
    if text in _TRUE:
        return 1
    if text in _FALSE:
        return 0
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if value in (0.0, 1.0) else None


def _bounded_lines(fh, path: str):
    number = 0
    while True:
        line = fh.readline(MAX_LINE_CHARS + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_LINE_CHARS:
            raise ValueError(f"{path}, line {number}: longer than {MAX_LINE_CHARS} characters; is it a CSV file?"
                             " nothing was released")
        yield line


def _column_cells(path: str, column: str):
    """(line number, cell) of one named CSV column, streamed; every reading failure is a ValueError
    that names the file, the line and what to do: a missing or unreadable file, a file that is not
    UTF-8 text, an empty file, a missing or duplicated column, a line that is too long."""
    try:
        fh = open(path, newline="", encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ValueError(f"{path} is a directory, not a CSV file") from None
    except PermissionError:
        raise ValueError(f"{path}: permission denied") from None
    reader = None
    try:
        with fh:
            reader = csv.reader(_bounded_lines(fh, path))
            header = next(reader, None)
            if header is None:
                raise ValueError(f"{path} is empty: the first line must name the columns")
            names = [h.strip() for h in header]
            hits = names.count(column)
            if hits == 0:
                raise ValueError(f"{path}: no column {column!r}; the header names {names}")
            if hits > 1:
                raise ValueError(f"{path}: column {column!r} appears {hits} times in the header; rename the others")
            index = names.index(column)
            for record in reader:
                if not record:          # blank line
                    continue
                yield reader.line_num, record[index] if index < len(record) else ""
    except UnicodeDecodeError:
        line = reader.line_num + 1 if reader is not None else 1
        raise ValueError(f"{path}, line {line}: not UTF-8 text; is it a CSV file? nothing was released") from None
    except csv.Error as exc:
        line = reader.line_num if reader is not None else 1
        raise ValueError(f"{path}, line {line}: not a readable CSV line ({exc}); nothing was released") from None


def count_binary_column(path: str, column: str) -> tuple[int, int]:
    """(number of 1s, number of rows) of one 0/1 CSV column, read as a stream.

    Raises ValueError with the file, the line and what to do for any reading failure
    (:func:`_column_cells`) and any cell that is not 0/1 (also 0.0/1.0, true/false).
    """
    ones = rows = 0
    for line, cell in _column_cells(path, column):
        value = _binary_cell(cell)
        if value is None:
            raise ValueError(f"{path}, line {line}: column {column!r} must be 0 or 1"
                             f" (or 0.0/1.0, true/false), got {cell!r}; nothing was released")
        ones += value
        rows += 1
    if rows < 2:
        raise ValueError(f"{path}: need at least 2 rows, got {rows}")
    return ones, rows


def count_categories(path: str, column: str, categories: list[str]) -> list[int]:
    """Rows per category (in the order of ``categories``) of one CSV column, read as a stream.

    Cells are compared after stripping spaces.  A cell outside ``categories`` is an error naming
    its line: the list of categories is public, and a value outside it would be released by its
    absence from every bin.
    """
    index = {c: i for i, c in enumerate(categories)}
    counts = [0] * len(categories)
    for line, cell in _column_cells(path, column):
        i = index.get(cell.strip())
        if i is None:
            raise ValueError(f"{path}, line {line}: column {column!r} has {cell!r}, which is not one of the "
                             f"categories {categories}; nothing was released")
        counts[i] += 1
    if sum(counts) < 2:
        raise ValueError(f"{path}: need at least 2 rows, got {sum(counts)}")
    return counts


def _finite(obj):
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def strict_json(obj) -> str:
    """JSON that every parser reads: non-finite floats become ``null`` (never bare NaN/Infinity)."""
    return json.dumps(_finite(obj), allow_nan=False)
