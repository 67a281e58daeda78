"""Parts of the record (:func:`ppk.records.make_record`) that several commands fill the same way."""
from __future__ import annotations

import argparse
from typing import Any, Callable

from .._io import COMMITMENT_SCHEME, ColumnRead, check_new_file, new_commitment_key, write_private_key
from ..records import ppk_warning


def file_input(read: ColumnRead, column: str) -> dict:
    """The record's ``input``: the file as named on the command line, the commitment to its bytes (or
    None: never a plain hash, which whoever knows all rows but one could recompute for both candidate
    files; docs/release-security.md), the column, the rows."""
    commitment = None if read.commitment is None else dict(scheme=COMMITMENT_SCHEME, value=read.commitment)
    return dict(file=read.path, commitment=commitment, column=column, rows=read.rows)


def add_commitment_arg(parser: argparse.ArgumentParser) -> None:
    """--commitment-key of a release from a file."""
    parser.add_argument("--commitment-key", metavar="KEYFILE", default=None,
                        help="commit to the input file: draw a fresh secret key, write it to the new file KEYFILE "
                             "(mode 0600; the steward keeps it private) and publish HMAC-SHA256(key, file) in the "
                             "record; a reviewer shown the key checks the file with 'ppk verify-input'")


def add_large_eps_flag(parser: argparse.ArgumentParser) -> None:
    """--allow-large-eps of a command that releases: eps above MAX_EPS is refused without it."""
    parser.add_argument("--allow-large-eps", action="store_true",
                        help="accept eps above 20 (MAX_EPS: a guarantee that says almost nothing)")


def committed_release(args: argparse.Namespace, read: Callable[[bytes | None], ColumnRead],
                      draw: Callable[[ColumnRead], Any]) -> tuple[ColumnRead, Any]:
    """Read the file (committing to it under a fresh key when --commitment-key names a new file), draw
    the release, and only then write the key: a refused release leaves no key file, and a key file that
    cannot be written stops the release before anything is printed."""
    path = args.commitment_key
    if path is not None:
        check_new_file(path)
    key = new_commitment_key() if path is not None else None
    data = read(key)
    out = draw(data)
    if path is not None:
        assert key is not None
        write_private_key(path, key)
    return data, out


def stated_warning(known: int, n: int, flag: str, *, stated: bool = True) -> str:
    """The warning of a guarantee that rests on a belief the steward stated with ``flag`` (``stated=False``:
    ``flag``'s default, which nobody stated)."""
    if stated:
        return ppk_warning(known, n, f"as stated with {flag}, not estimated from the data").replace(
            "NOT STANDARD DP:", "STATED BELIEF, NOT STANDARD DP:")
    return ppk_warning(known, n, f"as {flag}'s default assumes: never stated by the steward, nor estimated from "
                                 f"the data; give {flag}").replace("NOT STANDARD DP:", "ASSUMED BELIEF, NOT STANDARD DP:")
