"""Sensitivity sampling: implicit randomness of privacy at risk (Dandekar et al. Sec. 4.2).

For ``pairs`` neighbouring pairs, draw p-1 common rows and two extra rows (with replacement)
from the data, evaluate the query on both datasets and record the l1 distance S_j.  The sampled
sensitivity at confidence gamma2 is the lower empirical quantile S_(ceil(n gamma2)); with the DKW
tolerance (:func:`ppk.related.risk.empirical_confidence`) it holds for a fresh pair with probability
gamma2_hat.

Built-in queries: :class:`Count` (rows with value 1), :class:`ClippedSum`, :class:`ClippedMean`,
:class:`Histogram` -- their distance depends only on the two extra rows, so they are exact and
vectorised -- and :class:`Ridge`, whose loop runs in C++ (GIL released, all cores) with a numpy
reference that uses the same counter-based row indices.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ... import _kernels
from ..._random import as_generator
from ..._validate import choice, instance, integer, real, real_array, sequence
from ..._typing import FloatArray, RngLike

__all__ = ["Count", "ClippedSum", "ClippedMean", "Histogram", "Ridge", "sample_sensitivities",
           "EmpiricalSensitivity", "synthetic_census"]

#: Most row indices :func:`pair_indices` returns (pairs x (rows + 1)): 400 MiB, a few times that while
#: hashing.  The built-in scalar queries read only the two extra rows of each pair, so their ``rows`` is
#: free and only ``pairs`` counts against :data:`MAX_PAIRS`.
MAX_INDICES = 5 * 10**7
#: Most pairs one call samples (a few arrays of this many doubles, a few seconds).
MAX_PAIRS = 2 * 10**7
#: Most multiply-adds of the ridge loop, pairs x rows x d^2 (forming each pair's Gram matrix): about
#: 10 s on two cores.
MAX_RIDGE_WORK = 2 * 10**10
#: Most rows :func:`synthetic_census` makes (about 15 arrays of this many doubles: 1.2 GB).
MAX_CENSUS_ROWS = 10**7

_M1, _M2, _GOLD = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB), np.uint64(0x9E3779B97F4A7C15)


def _splitmix(z):
    z = np.asarray(z, dtype=np.uint64) + _GOLD
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def pair_indices(*, m: int, rows: int, pairs: int, seed: int) -> np.ndarray:
    """Row indices of every pair (pairs x (rows + 1)): rows - 1 common rows, then a, then b."""
    m = integer("m", m, minimum=1)
    rows = integer("rows", rows, minimum=1)
    seed = integer("seed", seed, minimum=0, maximum=2**64 - 1)
    pairs = integer("pairs", pairs, minimum=1)
    if pairs * (rows + 1) > MAX_INDICES:
        raise ValueError(f"pairs x (rows + 1) = {pairs * (rows + 1):.3g} indices ({8 * pairs * (rows + 1):.3g} bytes), "
                         f"more than MAX_INDICES = {MAX_INDICES:.0e}: use fewer pairs or rows")
    return _columns(m=m, columns=np.arange(rows + 1, dtype=np.uint64), pairs=pairs, seed=seed)


def _columns(*, m: int, columns: np.ndarray, pairs: int, seed: int) -> np.ndarray:
    """The given columns of :func:`pair_indices` (each entry hashes only its pair and column)."""
    with np.errstate(over="ignore"):
        j = np.arange(pairs, dtype=np.uint64)[:, None]
        s = np.asarray(columns, dtype=np.uint64)[None, :]
        h = _splitmix(_splitmix(_splitmix(np.uint64(seed)) ^ j) ^ s)
    return (h % np.uint64(m)).astype(np.int64)


@dataclass(frozen=True)
class Count:
    """Number of rows equal to 1 (a 0/1 column)."""


def _clip_range(query) -> None:
    """Check (and store as floats) a clipped query's finite lo <= hi, with hi - lo a float too."""
    lo, hi = real("lo", query.lo), real("hi", query.hi)
    if lo > hi:
        raise ValueError(f"lo must be <= hi, got lo={lo!r}, hi={hi!r}")
    if not math.isfinite(hi - lo):   # the distance of two clipped rows would overflow
        raise ValueError(f"hi - lo must be within the float range, got lo={lo!r}, hi={hi!r}")
    object.__setattr__(query, "lo", lo)
    object.__setattr__(query, "hi", hi)


@dataclass(frozen=True)
class ClippedSum:
    lo: float
    hi: float

    def __post_init__(self):
        _clip_range(self)


@dataclass(frozen=True)
class ClippedMean:
    lo: float
    hi: float

    def __post_init__(self):
        _clip_range(self)


@dataclass(frozen=True)
class Histogram:
    edges: tuple   #: bin edges (increasing); values outside go to the first/last bin

    def __post_init__(self):
        edges = tuple(sequence("edges", self.edges, real, min_length=2))
        if any(b <= a for a, b in zip(edges, edges[1:])):
            raise ValueError(f"edges must be increasing, got {edges[:10]!r}{'...' if len(edges) > 10 else ''}")
        object.__setattr__(self, "edges", edges)


@dataclass(frozen=True)
class Ridge:
    lam: float = 0.01   #: ridge penalty on sum of squares (theta = (X^T X + lam I)^{-1} X^T y)


def sample_sensitivities(query: Count | ClippedSum | ClippedMean | Histogram | Ridge, data: Any, *, rows: int, pairs: int, seed: int = 0, backend: str = "cpp") -> np.ndarray:
    """S_1..S_pairs for datasets of ``rows`` rows drawn with replacement from ``data``.

    ``data``: a 1-d array for the scalar queries, ``(X, y)`` for :class:`Ridge`.  ``backend="numpy"``
    runs the ridge loop in numpy (the reference; same indices, same result to rounding).
    """
    query = instance("query", query, (Count, ClippedSum, ClippedMean, Histogram, Ridge),
                     "a Count, ClippedSum, ClippedMean, Histogram or Ridge")
    rows = integer("rows", rows, minimum=2)
    pairs = integer("pairs", pairs, minimum=1, maximum=MAX_PAIRS)
    seed = integer("seed", seed, minimum=0, maximum=2**64 - 1)
    backend = choice("backend", backend, ("cpp", "numpy"))
    if isinstance(query, Ridge):
        X, y = _ridge_data(data)
        lam = real("lam", query.lam, minimum=0.0, min_inclusive=False)
        d = X.shape[1]
        work = float(pairs) * rows * d * d
        if work > MAX_RIDGE_WORK:
            raise ValueError(f"the ridge loop needs pairs x rows x d^2 = {work:.3g} multiply-adds (pairs={pairs:,}, "
                             f"rows={rows:,}, d={d}), more than MAX_RIDGE_WORK = {MAX_RIDGE_WORK:.0e} (about 10 s): "
                             "use fewer pairs or rows")
        if backend == "cpp":
            out = _kernels.ridge_sensitivities(X, y, lam=lam, rows=rows, pairs=pairs, seed=seed)
        else:
            with np.errstate(over="ignore", invalid="ignore"):   # reported below, naming data
                out = _ridge_numpy(X, y, lam, rows, pairs, seed)
        if not np.all(np.isfinite(out)):
            raise ValueError("data is too large for the ridge loop: X^T X or X^T y left the float range "
                             "(scale the rows, e.g. to unit norm as synthetic_census does)")
        return out
    values, scalar = real_array("data", data)
    if scalar or np.ndim(data) != 1 or values.size == 0:
        raise ValueError(f"data must be a non-empty 1-d array for this query, got shape {np.shape(data)}")
    # only the two extra rows enter these queries' distances: hash just their columns (the whole index
    # matrix was pairs x (rows + 1), 8 TB at rows = 1e6, pairs = 1e6)
    idx = _columns(m=values.size, columns=np.array([rows - 1, rows], dtype=np.uint64), pairs=pairs, seed=seed)
    a, b = values[idx[:, 0]], values[idx[:, 1]]
    if isinstance(query, Count):
        return np.abs((a == 1).astype(float) - (b == 1).astype(float))
    if isinstance(query, (ClippedSum, ClippedMean)):
        d = np.abs(np.clip(a, query.lo, query.hi) - np.clip(b, query.lo, query.hi))
        return d / rows if isinstance(query, ClippedMean) else d
    if isinstance(query, Histogram):
        edges = np.asarray(query.edges, dtype=float)
        ba = np.clip(np.searchsorted(edges, a, side="right") - 1, 0, edges.size - 2)
        bb = np.clip(np.searchsorted(edges, b, side="right") - 1, 0, edges.size - 2)
        return 2.0 * (ba != bb)
    raise TypeError(f"unknown query {query!r}")


def _ridge_data(data) -> tuple[np.ndarray, np.ndarray]:
    """``data`` of a ridge query: (X, y), X an (m, d) array and y an (m,) array of finite values, m >= 1."""
    X, y = sequence("data", data, lambda name, v: v, min_length=2, max_length=2)
    x_flat, _ = real_array("data[0] (X)", X)
    y_flat, _ = real_array("data[1] (y)", y)
    shape = np.shape(X)
    if len(shape) != 2 or shape[0] < 1 or shape[1] < 1 or np.shape(y) != (shape[0],):
        raise ValueError(f"data must be (X, y) with X of shape (m, d) and y of shape (m,), m, d >= 1; got X of "
                         f"shape {shape} and y of shape {np.shape(y)}")
    return np.ascontiguousarray(x_flat.reshape(shape)), np.ascontiguousarray(y_flat)


def _ridge_numpy(X, y, lam, rows, pairs, seed):
    idx = pair_indices(m=X.shape[0], rows=rows, pairs=pairs, seed=seed)
    out = np.empty(pairs)
    eye = lam * np.eye(X.shape[1])
    for j in range(pairs):
        common = idx[j, : rows - 1]
        G = X[common].T @ X[common] + eye
        bvec = X[common].T @ y[common]
        thetas = []
        for r in idx[j, rows - 1:]:
            x = X[r]
            thetas.append(np.linalg.solve(G + np.outer(x, x), bvec + x * y[r]))
        out[j] = np.abs(thetas[0] - thetas[1]).sum()
    return out


class EmpiricalSensitivity:
    """The empirical distribution of sampled sensitivities (Def. 14)."""

    def __init__(self, samples: npt.ArrayLike):
        try:
            s = np.asarray(samples, dtype=float)
        except (TypeError, ValueError, OverflowError):
            raise TypeError(f"samples must be a non-empty 1-d array of finite real values, got {type(samples).__name__}") \
                from None
        if s.ndim != 1 or s.size == 0 or not np.all(np.isfinite(s)):
            raise ValueError(f"samples must be a non-empty 1-d array of finite values, got shape {s.shape}")
        self.samples = np.sort(s)

    def ecdf(self, x: float) -> float:
        x = real("x", x)
        return float(np.searchsorted(self.samples, x, side="right") / self.samples.size)

    def sampled_sensitivity(self, gamma2: float) -> float:
        """The lower gamma2-quantile S_(ceil(n gamma2)): the smallest s with ECDF(s) >= gamma2."""
        gamma2 = real("gamma2", gamma2, minimum=0.0, maximum=1.0, min_inclusive=False)
        return float(self.samples[max(0, math.ceil(self.samples.size * gamma2) - 1)])

    def max(self) -> float:
        return float(self.samples[-1])


def synthetic_census(n: int, *, rng: RngLike = None) -> tuple[FloatArray, FloatArray]:
    """A seeded census-like table (the paper's IPUMS data cannot be shipped): (X, y).

    Attributes age, gender, race, marital status, education predict income.  As in the paper's
    Sec. 6, income is scaled to [0, 1] and each feature row to unit l2 norm.
    """
    n = integer("n", n, minimum=1, maximum=MAX_CENSUS_ROWS)
    gen = as_generator(rng)
    age = np.clip(gen.normal(45, 14, n), 18, 90)
    gender = gen.integers(0, 2, n).astype(float)
    race = gen.choice(6, n, p=[0.72, 0.12, 0.08, 0.04, 0.02, 0.02]).astype(float)
    marital = gen.choice(5, n, p=[0.55, 0.1, 0.13, 0.06, 0.16]).astype(float)
    education = np.clip(np.round(gen.normal(10 + 0.03 * (age - 45), 3, n)), 0, 16)
    log_income = 9.5 + 0.12 * education + 0.015 * (age - 18) - 0.0002 * (age - 45) ** 2 + 0.25 * gender \
        - 0.05 * race + 0.08 * (marital == 0) + gen.normal(0, 0.6, n)
    income = np.exp(log_income)
    y = (income - income.min()) / (income.max() - income.min())
    X = np.column_stack([age, gender + 1, race + 1, marital + 1, education + 1])
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    return X, y
