"""Progress of a long shuffled-randomized-response search (docs/shuffle.md, "Progress").

``ShuffledRandomizedResponse.progress`` is ``None`` or ``False`` (quiet, the default), ``True`` (a bar on stderr
when stderr is a terminal -- tqdm's when tqdm is installed, else a line of text -- and nothing otherwise), or a
callable ``progress(fraction, stage)`` called with the fraction done of the current stage (0 to 1) and its name
(``"cover"``: the branch and bound over the splits; ``"epsilon"``: the ranges' own eps).  Reports are at most
ten a second, and one at the end of each stage.  A callback that raises stops the computation with its error.
"""
from __future__ import annotations

import sys
import time
from typing import Any, Callable

#: seconds between two reports of one stage
INTERVAL = 0.1


def _check(progress: Any) -> Any:
    """``progress`` as given, after checking it is one of the accepted kinds (the error names the parameter)."""
    if progress is None or isinstance(progress, bool) or callable(progress):
        return progress
    raise ValueError(f"progress must be None, True, False or a callable(fraction, stage), not {progress!r}")


class _Bar:
    """A bar on a terminal: tqdm's when installed, else one rewritten line of text."""

    def __init__(self) -> None:
        self.stage: str | None = None
        self.tqdm: Any = None
        try:
            from tqdm import tqdm  # type: ignore[import-untyped,unused-ignore]   # optional
        except ImportError:
            tqdm = None
        self._make = tqdm

    def __call__(self, fraction: float, stage: str) -> None:
        pct = int(round(100 * min(max(fraction, 0.0), 1.0)))
        if self._make is not None:
            if stage != self.stage:
                self.close()
                self.tqdm = self._make(total=100, desc=f"shuffle {stage}", unit="%", leave=False, file=sys.stderr)
            self.tqdm.update(pct - self.tqdm.n)
        else:
            bar = "#" * (pct * 30 // 100) + "." * (30 - pct * 30 // 100)
            print(f"\rshuffle {stage:<7} [{bar}] {pct:3d}%", end="", file=sys.stderr, flush=True)
        self.stage = stage

    def close(self) -> None:
        if self.tqdm is not None:
            self.tqdm.close()
            self.tqdm = None
        elif self._make is None and self.stage is not None:
            print("\r" + " " * 60 + "\r", end="", file=sys.stderr, flush=True)   # leave the line clean
        self.stage = None


class Reporter:
    """Throttled reports of one computation to ``progress`` (see the module docstring); a no-op when quiet."""

    def __init__(self, progress: Any):
        progress = _check(progress)
        self._bar: _Bar | None = None
        self._fn: Callable[[float, str], Any] | None = None
        if progress is True:
            if sys.stderr is not None and sys.stderr.isatty():
                self._bar = _Bar()
                self._fn = self._bar
        elif callable(progress):
            self._fn = progress
        self._last = -1.0

    @property
    def active(self) -> bool:
        return self._fn is not None

    def due(self) -> bool:
        """Whether a report is due (the caller then computes the fraction and calls :meth:`report`)."""
        return self._fn is not None and time.monotonic() - self._last >= INTERVAL

    def report(self, fraction: float, stage: str) -> None:
        if self._fn is not None:
            self._last = time.monotonic()
            self._fn(float(fraction), stage)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()

    def __enter__(self) -> "Reporter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
