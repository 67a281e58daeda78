"""The family engine's Python side: the glue from :class:`ppk.NoisyQuery` to its C++ paths
(``cpp/include/ppk/family/``), and the discrete Gaussian's exact tail its caps use.

Every path other than the counting kernel runs in C++ in long double (``docs/natural-noise.md``): the
natural noise's window goes to ``ppk._core.FamilyWindow`` once per depth, the added law to
``ppk._core.FamilyLaw`` once per query, and each eps is one call, the shifts' two directions on both
cores.  "threshold": a log-concave window, the loss monotone; "lattice sum": no added noise or a lattice
law over any window, summed over the outputs where the loss can cross eps and a tail beyond them (no
output window, so no depth floor of its own); "crossings": a continuous law over any window, every
crossing located and certified.  A binomial natural noise is windowed in C++ from the counting kernel's
own pmf, to any depth (:data:`BINOMIAL_DEPTH_MAX`), so its delta is resolved far below the e^-2048 of
the other laws' windows.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from . import _kernels
from .noise import (AddedNoise, Binomial, DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace, NaturalNoise, NoNoise,
                    Window)

DEPTH_START = 64.0     # windows first hold every value within e^-64 of the mode ...
DEPTH_MAX = 2048.0     # ... and deepen (doubling) while the mass they leave out matters
#: A binomial's windows (built in C++) deepen up to this many e-folds, or until they hold its support
BINOMIAL_DEPTH_MAX = 2.0 ** 22
#: Absolute error allowed each log-pmf value of a window from ppk.noise: the laws' own rounding (a row
#: sum of 1e5 rows 2e-15 relative, docs/natural-noise.md) lies inside it, times 1 + the largest |log w|
WINDOW_LOG_ERROR = 4e-16
_KIND = ((Gaussian, 0), (Laplace, 1), (DiscreteGaussian, 2), (DiscreteLaplace, 3))


def _dg_log_sf(noise: DiscreteGaussian, x: np.ndarray) -> np.ndarray:
    """log P(Z > x) for the discrete Gaussian, exact at the end of its tail table and beyond too.

    Beyond the table (x >= top = sigma sqrt(3000) + 2, the tail below e^-1500) DiscreteGaussian.log_sf
    gives the geometric bound pmf(x + 1) / (1 - r), r = pmf(x + 2) / pmf(x + 1), above the tail by a
    relative 4e-5 at the table's edge for sigma = 30, 3e-4 for sigma = 300; and the table's own last
    entries sum the pmf only up to top + 1, below the tail by up to 1.2 in log at x = top - 1 for
    sigma = 300 (5.2 for sigma = 2e4: the terms beyond top + 1 are left out).  A threshold's delta
    A - e^eps B is a difference of two such tails: it was 4e-4 above the truth in log, its bound with
    it (e^-1567: 70 rows, sigma = 30, eps = 1.85; now 4e-10).  Here, wherever the terms
    beyond top + 1 are not below e^-45 of the tail (x >= top - 45 sigma^2 / (top + 2)) and beyond:
    pmf(m) sum_{j < J} e^{-(2 m j + j^2) / (2 sigma^2)}, m = x + 1, with J terms until the rest -- at
    most the J-th over 1 - its ratio to the next, added -- is below e^-40 of the sum (J is about
    40 sigma^2 / m: 0.8 sigma near the table's end, 40 far beyond it).  Against 40-digit sums: within
    1e-13 in log (of logs -1500 and below) for sigma = 3 ... 2e4."""
    out = np.array(noise._log_sf(x), dtype=float)
    xi = np.asarray(x).astype(np.int64)      # (as log_sf: the lattice points)
    top = noise._tail_table().size - 1
    far = xi >= top - int(math.ceil(45.0 * noise.sigma * noise.sigma / (top + 2)))
    if not np.any(far):
        return out
    u, inv = np.unique(xi[far] + 1, return_inverse=True)
    s2 = 2.0 * noise.sigma * noise.sigma
    vals = np.empty(u.size)
    i = 0
    while i < u.size:     # ascending m: the first of each chunk needs the most terms
        a = (2.0 * float(u[i]) + 1.0) / s2     # -log of the first ratio, the largest
        J = int(math.ceil((40.0 - math.log(-math.expm1(-a))) / a)) + 1
        rows = max(1, int(4e6 // J))
        m = u[i:i + rows].astype(float)[:, None]
        j = np.arange(J, dtype=float)[None, :]
        total = np.exp(-(2.0 * m * j + j * j) / s2).sum(axis=1)
        m1 = m[:, 0]
        rest = np.exp(-(2.0 * m1 * J + J * J) / s2) / -np.expm1(-(2.0 * m1 + 2.0 * J + 1.0) / s2)
        vals[i:i + rows] = noise._log_density(m1) + np.log(total + rest)
        i += rows
    out[far] = vals[inv.ravel()]
    return out


@dataclass(frozen=True)
class _Result:
    log_delta: float
    log_upper: float


class FamilyQuery(Protocol):
    """What the engine reads and fills of a query (ppk.NoisyQuery is one): the engine below does not import
    the query above it.  The caches are filled under ``_lock``."""

    natural: NaturalNoise
    added: AddedNoise
    shifts: tuple[int, ...]
    _lock: Any
    _family_law: Any
    _family_windows: dict[Any, Any]


def _law(query: FamilyQuery) -> Any:
    """The query's added law in C++ (the discrete Gaussian's tail table built once per query)."""
    with query._lock:
        if query._family_law is None:
            kind = next(code for cls, code in _KIND if isinstance(query.added, cls))
            query._family_law = _kernels.family_law(kind, float(query.added.scale))
        return query._family_law


def binomial_window(query: FamilyQuery, depth: float) -> Any:
    """The binomial natural noise's C++ window at ``depth`` (cached per depth); None when it would hold
    more values than ppk.noise.MAX_WINDOW (then the deepening stops at the last one)."""
    assert isinstance(query.natural, Binomial)
    with query._lock:
        if depth not in query._family_windows:
            try:
                query._family_windows[depth] = _kernels.family_binomial_window(query.natural.n, query.natural.p,
                                                                               depth=depth)
            except ValueError:
                query._family_windows[depth] = None
        return query._family_windows[depth]


def _max_abs_finite(lw: np.ndarray) -> float:
    """The largest |v| over the finite values of lw (0 when none), as the window's error allowance needs it.
    When the least value is finite and <= -1e-9 it is |that value|: every value the C++ window accepts is
    <= 1e-9 (it refuses the others, whatever the allowance), so none is larger in size.  One reduction
    instead of a mask, a copy and |.| over a window of 1e6 long doubles."""
    low = lw.min() if lw.size else np.longdouble(0)
    if np.isfinite(low) and low <= -1e-9:
        return float(-low)
    return float(np.max(np.abs(lw[np.isfinite(lw)]), initial=0.0))


def _cpp_window(query: FamilyQuery, w: Any) -> Any:
    if not isinstance(w, Window):
        return w      # (already a C++ window: a binomial's)
    # keyed by id, the entry holding the window itself: its id cannot pass to another window while cached
    key = ("id", id(w))
    with query._lock:
        entry = query._family_windows.get(key)
        if entry is None or entry[0] is not w:
            lw = np.asarray(w.log_pmf, dtype=np.longdouble)
            err = WINDOW_LOG_ERROR * (1.0 + _max_abs_finite(lw))
            entry = (w, _kernels.family_window(w.offset, lw, log_dropped=w.log_dropped, log_error=err))
            query._family_windows[key] = entry
        return entry[1]


def threshold(query: FamilyQuery, w: Any, eps: float) -> _Result:
    """delta on the threshold path for one window (a ppk.noise.Window or a binomial's C++ window): the
    largest over the query's shifts, in both directions, computed in C++."""
    est, up = _kernels.family_threshold(_cpp_window(query, w), _law(query), scale=float(query.added.scale),
                                        shifts=query.shifts, eps=eps)
    return _Result(est, up)


def variance(query: FamilyQuery, w: Any) -> float:
    """The variance of a window (for the first depth of the threshold path)."""
    return float(_cpp_window(query, w).variance)


def lattice(query: FamilyQuery, w: Any, eps: float) -> _Result:
    """delta on the lattice-sum path for one window of the natural noise (no added noise, or a lattice law):
    the largest over the query's shifts, in both directions, computed in C++."""
    cw = _cpp_window(query, w)
    if isinstance(query.added, NoNoise):
        est, up = _kernels.family_noiseless(cw, shifts=query.shifts, eps=eps)
    else:
        est, up = _kernels.family_lattice(cw, _law(query), scale=float(query.added.scale), shifts=query.shifts,
                                          eps=eps)
    return _Result(est, up)


def crossings(query: FamilyQuery, w: Any, eps: float) -> _Result:
    """delta on the crossings path for one window (a continuous law over any natural noise), in C++; the
    upper end is inf when a crossing may have been missed (the query's caps then bound delta)."""
    est, up, certified = _kernels.family_crossings(_cpp_window(query, w), _law(query), scale=float(query.added.scale),
                                                   shifts=query.shifts, eps=eps)
    return _Result(est, up if certified else math.inf)
