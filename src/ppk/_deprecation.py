"""Old import paths that keep working for one release, with a DeprecationWarning.

ppk 0.1 had the reproductions of the related papers in its top-level namespace (``ppk.risk``,
``ppk.dp``, ...); they now live in :mod:`ppk.related`.  Each old module file is a two-line shim
that calls :func:`moved_module`: the old name becomes the new module itself (same objects, so
``isinstance`` and identity checks keep working), and the warning names the new path.
"""
from __future__ import annotations

import importlib
import sys
import warnings
from types import FrameType

#: The release in which the old paths disappear.
REMOVED_IN = "0.3"


def _caller_stacklevel() -> int:
    # The stacklevel of the first frame outside ppk and the import machinery: the user's import
    # statement, so that Python's default filters show the warning to the code that uses the old
    # path.  warnings.warn does not count the import system's frozen frames, so neither do we.
    frame: FrameType | None = sys._getframe(1)    # moved_module's frame: stacklevel 1
    level = 1
    while frame is not None:
        filename = frame.f_code.co_filename
        if "importlib" in filename and "_bootstrap" in filename:
            frame = frame.f_back
            continue
        name = frame.f_globals.get("__name__", "")
        if not (name == "ppk" or name.startswith("ppk.") or name.startswith("importlib")):
            return level
        frame, level = frame.f_back, level + 1
    return 2


def moved_module(old: str, new: str) -> None:
    """Make module ``old`` an alias of ``new`` and warn that ``old`` is deprecated."""
    warnings.warn(f"{old} has moved to {new}; the old path will be removed in ppk {REMOVED_IN}",
                  DeprecationWarning, stacklevel=_caller_stacklevel())
    sys.modules[old] = importlib.import_module(new)
