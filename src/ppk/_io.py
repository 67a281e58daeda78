"""Input and output of the command line: bounded, strict CSV reading and strict JSON.

A release reads real data, so reading must neither trust the file (a binary file,
``/dev/zero``, a line of gigabytes) nor guess (a duplicated header, a quote left open, a row
with a field too many).  The column is streamed: memory stays O(one line) whatever the file's
size.  The bytes read are hashed on the way (SHA-256), so a release can name exactly the file
it was computed from.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
from dataclasses import dataclass

__all__ = ["read_binary_column", "read_categories", "count_binary_column", "count_categories", "ColumnRead",
           "strict_json", "MAX_LINE_CHARS"]

#: Longest CSV line read (characters); a longer one is refused, so no input can exhaust memory.
MAX_LINE_CHARS = 1 << 20

_TRUE, _FALSE = ("1", "true"), ("0", "false")

# One line of RFC 4180 CSV: fields separated by commas, each either without quotes or wholly quoted
# (a quote inside doubled).  Python's csv module also accepts a stray quote inside an unquoted field
# ('1,0"') and a quote after spaces (' "1"'), reading them as text; a strict reader refuses both.
_FIELD = r'(?:"(?:[^"]|"")*"|[^",\r\n]*)'
_RFC4180_LINE = re.compile(rf"{_FIELD}(?:,{_FIELD})*(?:\r\n|\n|\r)?")


@dataclass(frozen=True)
class ColumnRead:
    """What reading one column of a CSV file found: the tallies, the rows and the file's SHA-256."""

    counts: tuple[int, ...]     #: rows per value: (zeros, ones) of a 0/1 column, or one per category
    rows: int                   #: data rows read (blank lines are not rows)
    sha256: str                 #: hex SHA-256 of every byte read -- the whole file, as it was parsed
    path: str


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


class _HashingRaw(io.RawIOBase):
    """A raw binary file that hashes every byte read through it."""

    def __init__(self, raw):
        self._raw = raw
        self.sha256 = hashlib.sha256()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = self._raw.readinto(buffer)
        if n:
            self.sha256.update(memoryview(buffer)[:n])
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


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
        yield number, line


def _record(path: str, number: int, line: str) -> list[str]:
    """The fields of one physical line, strictly: one record per line (a quoted field may not span
    lines, so every line number is the record's), quotes only around whole fields, no NUL byte."""
    if "\0" in line:
        raise ValueError(f"{path}, line {number}: contains a NUL byte; is it a CSV file? nothing was released")
    if '"' not in line:   # no quoting: the fields are the text between commas, as csv reads them
        return line.rstrip("\r\n").split(",")
    if _RFC4180_LINE.fullmatch(line) is None:
        raise ValueError(f"{path}, line {number}: malformed quoting (a quote left open, a quote inside an unquoted "
                         "field, or text after a closing quote); ppk reads one record per line, with quotes only "
                         "around whole fields; nothing was released")
    try:
        records = list(csv.reader([line], strict=True))
    except csv.Error as exc:   # the pattern above should have caught it; never guess
        raise ValueError(f"{path}, line {number}: not a readable CSV line ({exc}); nothing was released") from None
    if len(records) != 1:
        raise ValueError(f"{path}, line {number}: not a single CSV record; nothing was released")
    return records[0]


class _ColumnReader:
    """Iterates (line number, cell) of one named column; ``sha256`` is the file's hash once exhausted.

    Every reading failure is a ValueError that names the file, the line and what to do: a missing or
    unreadable file, a file that is not UTF-8 text, an empty file, a missing or duplicated column, a
    line that is too long, malformed quoting, a NUL byte, or a row whose field count is not the
    header's.  A UTF-8 byte-order mark (as spreadsheets save CSV) is skipped.
    """

    def __init__(self, path: str, column: str):
        self.path, self.column = path, column
        self.sha256: str | None = None

    def __iter__(self):
        path, column = self.path, self.column
        try:
            raw = open(path, "rb", buffering=0)
        except FileNotFoundError:
            raise ValueError(f"{path}: no such file") from None
        except IsADirectoryError:
            raise ValueError(f"{path} is a directory, not a CSV file") from None
        except PermissionError:
            raise ValueError(f"{path}: permission denied") from None
        hashing = _HashingRaw(raw)
        number = 0
        with io.TextIOWrapper(io.BufferedReader(hashing), encoding="utf-8-sig", newline="") as fh:
            try:
                lines = _bounded_lines(fh, path)
                header = None
                for number, line in lines:
                    header = _record(path, number, line)
                    break
                if header is None:
                    raise ValueError(f"{path} is empty: the first line must name the columns")
                names = [h.strip() for h in header]
                hits = names.count(column)
                if hits == 0:
                    raise ValueError(f"{path}: no column {column!r}; the header names {names}")
                if hits > 1:
                    raise ValueError(f"{path}: column {column!r} appears {hits} times in the header; rename the others")
                index, width = names.index(column), len(names)
                for number, line in lines:
                    if '"' in line or "\0" in line:
                        record = _record(path, number, line)
                    else:               # the common case, inlined: _record's split
                        text = line.rstrip("\r\n")
                        if not text:    # a blank line is not a row
                            continue
                        record = text.split(",")
                    if len(record) != width:
                        raise ValueError(f"{path}, line {number}: {len(record)} fields, but the header has "
                                         f"{width}; nothing was released")
                    yield number, record[index]
            except UnicodeDecodeError:
                raise ValueError(f"{path}, line {number + 1}: not UTF-8 text; is it a CSV file? nothing was "
                                 "released") from None
        self.sha256 = hashing.sha256.hexdigest()


def _column_cells(path: str, column: str):
    """(line number, cell) of one named CSV column, streamed and strict (:class:`_ColumnReader`)."""
    return iter(_ColumnReader(path, column))


def read_binary_column(path: str, column: str) -> ColumnRead:
    """Tallies of one 0/1 CSV column, read as a stream: ``counts = (zeros, ones)``, and the file's SHA-256.

    Raises ValueError with the file, the line and what to do for any reading failure
    (:class:`_ColumnReader`) and any cell that is not 0/1 (also 0.0/1.0, true/false).
    """
    reader = _ColumnReader(path, column)
    ones = rows = 0
    for line, cell in reader:
        value = _binary_cell(cell)
        if value is None:
            raise ValueError(f"{path}, line {line}: column {column!r} must be 0 or 1"
                             f" (or 0.0/1.0, true/false), got {cell!r}; nothing was released")
        ones += value
        rows += 1
    if rows < 2:
        raise ValueError(f"{path}: need at least 2 rows, got {rows}")
    assert reader.sha256 is not None
    return ColumnRead(counts=(rows - ones, ones), rows=rows, sha256=reader.sha256, path=path)


def read_categories(path: str, column: str, categories: list[str]) -> ColumnRead:
    """Rows per category (in the order of ``categories``) of one CSV column, read as a stream, and the
    file's SHA-256.

    Cells are compared after stripping spaces.  A cell outside ``categories`` is an error naming
    its line: the list of categories is public, and a value outside it would be released by its
    absence from every bin.
    """
    reader = _ColumnReader(path, column)
    index = {c: i for i, c in enumerate(categories)}
    counts = [0] * len(categories)
    for line, cell in reader:
        i = index.get(cell.strip())
        if i is None:
            raise ValueError(f"{path}, line {line}: column {column!r} has {cell!r}, which is not one of the "
                             f"categories {categories}; nothing was released")
        counts[i] += 1
    if sum(counts) < 2:
        raise ValueError(f"{path}: need at least 2 rows, got {sum(counts)}")
    assert reader.sha256 is not None
    return ColumnRead(counts=tuple(counts), rows=sum(counts), sha256=reader.sha256, path=path)


def count_binary_column(path: str, column: str) -> tuple[int, int]:
    """(number of 1s, number of rows) of one 0/1 CSV column: :func:`read_binary_column` without the hash."""
    read = read_binary_column(path, column)
    return read.counts[1], read.rows


def count_categories(path: str, column: str, categories: list[str]) -> list[int]:
    """Rows per category of one CSV column: :func:`read_categories` without the hash."""
    return list(read_categories(path, column, categories).counts)


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
