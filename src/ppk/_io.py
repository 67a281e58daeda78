"""Input and output of the command line: bounded, strict CSV reading and strict JSON.

A release reads real data, so reading must neither trust the file (a binary file,
``/dev/zero``, a line of gigabytes) nor guess (a duplicated header, a quote left open, a row
with a field too many).  The column is streamed: memory stays O(one line) whatever the file's
size.  When the steward asks for it, the bytes read are committed to on the way: HMAC-SHA256 under a
fresh random key that only the steward keeps, so a release can name exactly the file it was computed
from without publishing a function of the data that anyone could recompute (docs/release-security.md,
"The input commitment").  A plain SHA-256 would let whoever knows every row but one hash both
candidate files and read the hidden row.
"""
from __future__ import annotations

import csv
import hashlib
import hmac
import io
import json
import math
import os
import re
import secrets
from dataclasses import dataclass

__all__ = ["read_binary_column", "read_categories", "read_joint_categories", "count_binary_column",
           "count_categories", "ColumnRead",
           "strict_json", "MAX_LINE_CHARS", "new_commitment_key", "file_commitment", "write_private_key",
           "read_private_key", "COMMITMENT_SCHEME"]

#: Longest CSV line read (characters); a longer one is refused, so no input can exhaust memory.
MAX_LINE_CHARS = 1 << 20

#: The only cells a 0/1 column may hold (after removing spaces and tabs around them; true/false in any
#: case, as spreadsheets write TRUE/FALSE).  Nothing is parsed as a number: float() would read
#: '0.99999999999999999', '+1', '01', '1e0', '١' or '１' as 1 and '-0' or '1e-400' as 0.
_BINARY_CELLS = {"0": 0, "1": 1, "0.0": 0, "1.0": 1, "true": 1, "false": 0}
#: What surrounds a cell and is not part of it: ASCII spaces and tabs (not every Unicode space).
_BLANKS = " \t"

#: The input commitment's scheme, named in the record: HMAC-SHA256, key of 32 random bytes.
COMMITMENT_SCHEME = "hmac-sha256"
_KEY_BYTES = 32

# One line of RFC 4180 CSV: fields separated by commas, each either without quotes or wholly quoted
# (a quote inside doubled).  Python's csv module also accepts a stray quote inside an unquoted field
# ('1,0"') and a quote after spaces (' "1"'), reading them as text; a strict reader refuses both.
_FIELD = r'(?:"(?:[^"]|"")*"|[^",\r\n]*)'
_RFC4180_LINE = re.compile(rf"{_FIELD}(?:,{_FIELD})*(?:\r\n|\n|\r)?")


@dataclass(frozen=True)
class ColumnRead:
    """What reading one column of a CSV file found: the tallies, the rows and the input commitment."""

    counts: tuple[int, ...]     #: rows per value: (zeros, ones) of a 0/1 column, or one per category
    rows: int                   #: data rows read (blank lines are not rows)
    #: hex HMAC-SHA256 of every byte read under the steward's secret key, or None when no key was given
    commitment: str | None
    path: str


def _binary_cell(cell: str) -> int | None:
    """0/1 from exactly '0', '1', '0.0', '1.0', 'true', 'false' (any case; spaces and tabs around it are
    not part of the cell); None for anything else."""
    return _BINARY_CELLS.get(cell.strip(_BLANKS).lower())


def new_commitment_key() -> bytes:
    """A fresh secret key for one input commitment: 32 bytes from the operating system's CSPRNG."""
    return secrets.token_bytes(_KEY_BYTES)


def _digest_file(path: str, digest):
    """``digest`` (a hashlib or hmac object) fed the whole file, read in 1 MiB chunks."""
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
    except OSError as exc:
        raise ValueError(f"{path}: {exc.strerror}") from None
    return digest


def file_commitment(path: str, key: bytes) -> str:
    """HMAC-SHA256 of the whole file under ``key``, hex: what a reviewer given the key recomputes."""
    return _digest_file(path, hmac.new(key, digestmod=hashlib.sha256)).hexdigest()


def file_sha256(path: str) -> str:
    """The plain SHA-256 of the whole file, hex: for the steward's private ledger only (docs/ledger.md), never for
    a published record, where it would give a hidden row away (docs/release-security.md)."""
    return _digest_file(path, hashlib.sha256()).hexdigest()


def write_private_key(path: str, key: bytes) -> None:
    """Write the key as one line of hex to a new file only its owner can read (0600); an existing file
    is never overwritten (a key of another release would be lost)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise ValueError(f"--commitment-key {path!r} exists; name a new file (a key is never overwritten)") from None
    except OSError as exc:
        raise ValueError(f"--commitment-key {path!r} cannot be written: {exc.strerror}") from None
    with os.fdopen(fd, "w") as fh:
        fh.write(key.hex() + "\n")


def read_private_key(path: str) -> bytes:
    """The key written by :func:`write_private_key` (one line of 64 hex digits)."""
    try:
        with open(path) as fh:
            text = fh.read(4 * _KEY_BYTES).strip()
    except OSError as exc:
        raise ValueError(f"key {path!r} cannot be read: {exc.strerror}") from None
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != _KEY_BYTES:
        raise ValueError(f"key {path!r} must hold {2 * _KEY_BYTES} hex digits (the file ppk wrote)")
    return key


def check_new_file(path: str) -> None:
    """Refuse at once, before any data is read, a key file that exists or whose directory does not."""
    if os.path.lexists(path):
        raise ValueError(f"--commitment-key {path!r} exists; name a new file (a key is never overwritten)")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"--commitment-key {path!r}: no directory {folder!r}")


class _HashingRaw(io.RawIOBase):
    """A raw binary file that feeds every byte read through it to an HMAC (or to nothing, without a key)."""

    def __init__(self, raw, key: bytes | None):
        self._raw = raw
        self.mac = None if key is None else hmac.new(key, digestmod=hashlib.sha256)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = self._raw.readinto(buffer)
        if n and self.mac is not None:
            self.mac.update(memoryview(buffer)[:n])
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
    """Iterates (line number, cell) of one named column -- (line number, tuple of cells) of a tuple of
    columns; ``commitment`` is the file's HMAC under ``key`` once exhausted (None without a key).

    Every reading failure is a ValueError that names the file, the line and what to do: a missing or
    unreadable file, a file that is not UTF-8 text, an empty file, a missing or duplicated column, a
    line that is too long, malformed quoting, a NUL byte, or a row whose field count is not the
    header's.  A UTF-8 byte-order mark (as spreadsheets save CSV) is skipped.
    """

    def __init__(self, path: str, column: str | tuple[str, ...], key: bytes | None = None):
        self.path, self.column, self._key = path, column, key
        self.commitment: str | None = None
        self.done = False

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
        hashing = _HashingRaw(raw, self._key)
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
                names = [h.strip(_BLANKS) for h in header]
                for wanted in ((column,) if isinstance(column, str) else column):
                    hits = names.count(wanted)
                    if hits == 0:
                        raise ValueError(f"{path}: no column {wanted!r}; the header names {names}")
                    if hits > 1:
                        raise ValueError(f"{path}: column {wanted!r} appears {hits} times in the header; rename "
                                         "the others")
                width = len(names)
                single = isinstance(column, str)
                indices = [names.index(c) for c in ((column,) if isinstance(column, str) else column)]
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
                    yield number, (record[indices[0]] if single else tuple(record[i] for i in indices))
            except UnicodeDecodeError:
                raise ValueError(f"{path}, line {number + 1}: not UTF-8 text; is it a CSV file? nothing was "
                                 "released") from None
        self.commitment = None if hashing.mac is None else hashing.mac.hexdigest()
        self.done = True


def _column_cells(path: str, column: str):
    """(line number, cell) of one named CSV column, streamed and strict (:class:`_ColumnReader`)."""
    return iter(_ColumnReader(path, column))


def read_binary_column(path: str, column: str, *, key: bytes | None = None) -> ColumnRead:
    """Tallies of one 0/1 CSV column, read as a stream: ``counts = (zeros, ones)``, and the input
    commitment under ``key`` (:func:`new_commitment_key`; None without one).

    Raises ValueError with the file, the line and what to do for any reading failure
    (:class:`_ColumnReader`) and any cell that is not exactly 0/1, 0.0/1.0 or true/false.
    """
    reader = _ColumnReader(path, column, key)
    ones = rows = 0
    for line, cell in reader:
        value = _binary_cell(cell)
        if value is None:
            raise ValueError(f"{path}, line {line}: column {column!r} must be 0 or 1"
                             f" (or 0.0/1.0, true/false), exactly, got {cell!r}; nothing was released")
        ones += value
        rows += 1
    if rows < 2:
        raise ValueError(f"{path}: need at least 2 rows, got {rows}")
    assert reader.done
    return ColumnRead(counts=(rows - ones, ones), rows=rows, commitment=reader.commitment, path=path)


def read_categories(path: str, column: str, categories: list[str], *, key: bytes | None = None) -> ColumnRead:
    """Rows per category (in the order of ``categories``) of one CSV column, read as a stream, and the
    input commitment under ``key`` (None without one).

    A cell matches a category when it equals it exactly, once spaces and tabs around both are removed
    (no case folding, no Unicode normalisation, no number parsing: '01' is not '1').  A cell outside
    ``categories`` is an error naming its line: the list of categories is public, and a value outside
    it would be released by its absence from every bin.
    """
    reader = _ColumnReader(path, column, key)
    index = {c.strip(_BLANKS): i for i, c in enumerate(categories)}
    if len(index) != len(categories):
        raise ValueError(f"categories must be distinct, got {categories}")
    counts = [0] * len(categories)
    for line, cell in reader:
        i = index.get(cell.strip(_BLANKS))
        if i is None:
            raise ValueError(f"{path}, line {line}: column {column!r} has {cell!r}, which is not one of the "
                             f"categories {categories}; nothing was released")
        counts[i] += 1
    if sum(counts) < 2:
        raise ValueError(f"{path}: need at least 2 rows, got {sum(counts)}")
    assert reader.done
    return ColumnRead(counts=tuple(counts), rows=sum(counts), commitment=reader.commitment, path=path)


def read_joint_categories(path: str, domains: dict[str, list[str]], *, key: bytes | None = None) -> ColumnRead:
    """Rows per joint category of several CSV columns, read as a stream: ``counts`` in the order of the
    product of the ``domains`` (column -> its public values, in order), and the input commitment under
    ``key``.  Cells match as in :func:`read_categories`; a cell outside its column's values is an error
    naming its line, and nothing is released."""
    columns = tuple(domains)
    reader = _ColumnReader(path, columns, key)
    index = [{v.strip(_BLANKS): i for i, v in enumerate(domains[c])} for c in columns]
    sizes = [len(domains[c]) for c in columns]
    counts = [0] * math.prod(sizes)
    for line, cells in reader:
        flat = 0
        for column, cell, lookup, size in zip(columns, cells, index, sizes):
            i = lookup.get(cell.strip(_BLANKS))
            if i is None:
                raise ValueError(f"{path}, line {line}: column {column!r} has {cell!r}, which is not one of its "
                                 f"values {domains[column]}; nothing was released")
            flat = flat * size + i
        counts[flat] += 1
    if sum(counts) < 2:
        raise ValueError(f"{path}: need at least 2 rows, got {sum(counts)}")
    assert reader.done
    return ColumnRead(counts=tuple(counts), rows=sum(counts), commitment=reader.commitment, path=path)


def count_binary_column(path: str, column: str) -> tuple[int, int]:
    """(number of 1s, number of rows) of one 0/1 CSV column: :func:`read_binary_column` without a commitment."""
    read = read_binary_column(path, column)
    return read.counts[1], read.rows


def count_categories(path: str, column: str, categories: list[str]) -> list[int]:
    """Rows per category of one CSV column: :func:`read_categories` without a commitment."""
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
