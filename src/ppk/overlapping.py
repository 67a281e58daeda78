"""Several noisy counts over overlapping groups of the same rows (docs/histograms.md, "Overlapping counts").

``k`` counting queries over subsets of binary rows, query ``j`` released with Gaussian noise
``sigmas[j]`` (counts).  The unknown rows are split into *atoms* by which queries contain them: an
atom is a membership pattern (a tuple of query indices) and the number of unknown rows with that
pattern (the challenge row is one of them).  The unknown rows are shared natural noise: composing
the k releases as independent would under-report delta (two counts that differ by one row reveal it).

For a challenge row in atom ``t`` (docs/histograms.md proves both ends):

* **upper end** -- reveal every other atom's count.  What is left is one count with natural noise
  ``Bin(|A_t| - 1, p)`` observed through the queries in ``t``; their precision-weighted mean is
  sufficient, so it is one count with noise ``(sum_{j in t} sigma_j^-2)^(-1/2)``;
* **lower end** -- any combination of the released counts that counts every atom 0 or 1 times is a
  post-processing the attacker can compute: a single count over those atoms.  ppk tries the queries
  of ``t`` pooled by identical row sets (k releases of one count) and, for ``k <= 8``, every
  combination with coefficients -1, 0, 1 (differencing).

delta is the maximum over the atoms.  Both ends coincide for k releases of one count and for disjoint
groups.  Each end is a noisy count (:class:`ppk.CountingQuery`), non-increasing in its rows and in its
noise (an extra row or extra noise is post-processing), so only the least-noisy candidates are evaluated.
"""
from __future__ import annotations

import itertools
import math
import warnings
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from ._curve import BracketedCurve
from ._typing import FloatArray
from ._validate import integer, real, real_array
from .baselines import analytic_gaussian_sigma
from .counting import CountingQuery

__all__ = ["OverlappingCounts", "ExposureWarning"]

#: Largest number of queries for which every -1/0/1 combination is tried for the lower end (3^k).
MAX_QUERIES_FOR_COMBINATIONS = 8

Pattern = tuple[int, ...]


class ExposureWarning(UserWarning):
    """A release reveals a row exactly: some combination of noiseless counts isolates it (delta = 1)."""


def _pareto(cands: Iterable[tuple[int, float]]) -> list[tuple[int, float]]:
    """The (rows, sigma) pairs not dominated by another with no more rows and no more noise."""
    out: list[tuple[int, float]] = []
    for n, s in sorted(set(cands)):
        if not out or s < out[-1][1]:
            out.append((n, s))
    return out


def _pooled_sigma(sigmas: Iterable[float]) -> float:
    """(sum sigma_j^-2)^(-1/2): the noise of the precision-weighted mean (0 if one release is noiseless)."""
    s = list(sigmas)
    if any(x == 0 for x in s):
        return 0.0
    least = min(s)   # scaled by the least, so that neither 1/x^2 nor its sum leaves the floats
    return least / math.sqrt(math.fsum((least / x) * (least / x) for x in s))


class OverlappingCounts(BracketedCurve):
    """k noisy counts over overlapping groups of rows with shared natural noise; delta bracketed.

    :meth:`delta` and :meth:`log_delta` report the certified upper end; :meth:`delta_bracket` gives
    both ends and :meth:`worst_atom` the membership pattern that attains the upper end.

    Parameters
    ----------
    atoms : mapping of tuple of int to int
        Membership pattern (the indices of the queries that contain the rows) -> number of unknown
        rows with that pattern, the challenge row among them.  Rows in no query may be listed under
        ``()``; they cannot be exposed.
    p : float
        Probability that an unknown row is 1.
    sigmas : sequence of float
        Standard deviation of the Gaussian noise of each query, in counts (0: released exactly).

    Examples
    --------
    >>> o = OverlappingCounts(atoms={(0,): 5000, (0, 1): 2000, (1,): 3000}, p=0.3, sigmas=[2.0, 3.0])
    >>> lower, upper = o.delta_bracket(0.1)
    >>> bool(lower <= upper < 1e-3), o.worst_atom(0.1)
    (True, (0, 1))
    """

    __slots__ = ("atoms", "p", "sigmas", "_upper", "_lower")

    def __init__(self, *, atoms: Mapping[Any, int], p: float, sigmas: Sequence[float] | npt.ArrayLike):
        flat, scalar = real_array("sigmas", sigmas, minimum=0.0)
        if scalar or flat.size == 0:
            raise ValueError(f"sigmas must list one noise level per query, got {sigmas!r}")
        self.sigmas: tuple[float, ...] = tuple(float(x) for x in flat)
        self.p = real("p", p, minimum=0.0, maximum=1.0)
        self.atoms: dict[Pattern, int] = self._validated_atoms(atoms, len(self.sigmas))
        self._upper, self._lower = self._candidates()
        exposed = self.exposed_atoms
        if exposed:
            warnings.warn(f"the counts reveal a row exactly (delta = 1 at every eps): atoms {exposed} can be "
                          "isolated by a combination of noiseless counts; add noise to those queries",
                          ExposureWarning, stacklevel=2)

    @staticmethod
    def _validated_atoms(atoms: Mapping[Any, int], k: int) -> dict[Pattern, int]:
        if not isinstance(atoms, Mapping):
            raise TypeError(f"atoms must be a mapping from membership pattern to row count, got "
                            f"{type(atoms).__name__}")
        out: dict[Pattern, int] = {}
        for key, size in atoms.items():
            members = (key,) if isinstance(key, (int, np.integer)) else tuple(key)
            pattern = tuple(sorted(integer("atoms pattern entry", j, minimum=0) for j in members))
            if pattern and pattern[-1] >= k:   # a query without a noise level: sigmas is short, or the key wrong
                raise ValueError(f"atoms pattern entry must be <= {k - 1} (sigmas lists {k} queries), got "
                                 f"{pattern[-1]} in {key!r}")
            if len(set(pattern)) != len(pattern):
                raise ValueError(f"atoms pattern {key!r} names a query twice")
            if pattern in out:
                raise ValueError(f"atoms lists the pattern {pattern} twice")
            out[pattern] = integer(f"atoms[{pattern}]", size, minimum=0)
        if not any(size > 0 and pattern for pattern, size in out.items()):
            raise ValueError("atoms must hold at least one unknown row in some query")
        return out

    @classmethod
    def from_membership(cls, matrix: npt.ArrayLike, *, known_rows: Sequence[int] | npt.ArrayLike = (),
                        p: float, sigmas: Sequence[float] | npt.ArrayLike) -> "OverlappingCounts":
        """Atoms from a boolean membership matrix (rows x queries) and the rows the attacker knows.

        ``known_rows`` is a sequence of row indices or a boolean mask over the rows.
        """
        m = np.asarray(matrix)
        if m.ndim != 2:
            raise ValueError(f"matrix must be 2-d (rows x queries), got shape {m.shape}")
        if m.dtype != bool:
            if m.dtype.kind not in "iuf":
                raise TypeError(f"matrix must be boolean (True where a row is in a query) or 0/1, got dtype {m.dtype}")
            bad = np.argwhere((m != 0) & (m != 1))
            if len(bad):
                row, col = (int(x) for x in bad[0])
                raise ValueError(f"matrix must be boolean (True where a row is in a query) or 0/1, got "
                                 f"{m[row, col].item()!r} at row {row}, query {col}")
            m = m.astype(bool)
        rows, k = m.shape
        flat, scalar = real_array("sigmas", sigmas, minimum=0.0)
        if scalar or flat.size != k:
            raise ValueError(f"sigmas must have one entry per query (matrix has {k} columns), got "
                             f"{'a number' if scalar else flat.size}")
        known = np.asarray(known_rows)
        mask = np.zeros(rows, dtype=bool)
        if known.dtype == bool:
            if known.shape != (rows,):
                raise ValueError(f"known_rows as a mask must have one entry per row ({rows}), got shape {known.shape}")
            mask = known.copy()
        elif known.size:
            if known.dtype.kind not in "iu" or known.ndim != 1:
                raise TypeError("known_rows must be row indices (integers) or a boolean mask")
            if known.min() < 0 or known.max() >= rows:
                raise ValueError(f"known_rows must be row indices in [0, {rows - 1}], got {int(known.min())} .. "
                                 f"{int(known.max())}")
            mask[known] = True
        unknown = m[~mask]
        if unknown.shape[0] == 0:
            raise ValueError("every row is known: there is no challenge row")
        patterns, counts = np.unique(unknown, axis=0, return_counts=True)
        atoms = {tuple(int(j) for j in np.flatnonzero(row)): int(c) for row, c in zip(patterns, counts)}
        return cls(atoms=atoms, p=p, sigmas=flat)

    def __repr__(self) -> str:
        return f"OverlappingCounts(atoms={self.atoms!r}, p={self.p!r}, sigmas={list(self.sigmas)!r})"

    # -- candidates ----------------------------------------------------------------------------
    def _candidates(self) -> tuple[dict[Pattern, tuple[int, float]], dict[Pattern, list[tuple[int, float]]]]:
        """Per atom: the upper end's (rows, sigma) and the lower end's Pareto candidates."""
        live = [pat for pat, size in self.atoms.items() if size > 0 and pat]
        upper = {t: (self.atoms[t] - 1, _pooled_sigma(self.sigmas[j] for j in t)) for t in live}
        support = {j: frozenset(u for u in live if j in u) for j in range(len(self.sigmas))}
        combos = self._combinations(live)
        lower: dict[Pattern, list[tuple[int, float]]] = {}
        for t in live:
            cands = []
            groups: dict[frozenset, list[int]] = {}
            for j in t:
                groups.setdefault(support[j], []).append(j)
            for rows_of, members in groups.items():
                cands.append((sum(self.atoms[u] for u in rows_of) - 1, _pooled_sigma(self.sigmas[j] for j in members)))
            cands.extend(combos.get(t, []))
            lower[t] = _pareto(cands)
        return upper, lower

    def _combinations(self, live: list[Pattern]) -> dict[Pattern, list[tuple[int, float]]]:
        """Every -1/0/1 combination of the queries that counts each atom 0 or 1 times, by the atom it
        isolates a challenge row in (k <= 8)."""
        k = len(self.sigmas)
        out: dict[Pattern, list[tuple[int, float]]] = {}
        if k > MAX_QUERIES_FOR_COMBINATIONS:
            return out
        member = np.array([[j in u for j in range(k)] for u in live], dtype=np.int64)   # atoms x queries
        sizes = np.array([self.atoms[u] for u in live], dtype=np.int64)
        with np.errstate(over="ignore"):   # sigmas near the float limit: hypot below
            var = np.array(self.sigmas) ** 2
        for c in itertools.product((-1, 0, 1), repeat=k):
            coef = member @ np.array(c)
            if not np.all((coef == 0) | (coef == 1)) or not coef.any():
                continue
            rows = int(sizes[coef == 1].sum())
            sigma = math.sqrt(math.fsum(v for v, cj in zip(var, c) if cj))
            if not math.isfinite(sigma):
                sigma = math.hypot(*(x for x, cj in zip(self.sigmas, c) if cj))
            for i in np.flatnonzero(coef == 1):
                out.setdefault(live[i], []).append((rows - 1, sigma))
        return out

    @property
    def exposed_atoms(self) -> list[Pattern]:
        """Atoms whose rows some combination of noiseless counts reveals exactly (delta = 1)."""
        no_natural = self.p in (0.0, 1.0)
        return sorted(t for t, cands in self._lower.items()
                      if any(s == 0 and (n == 0 or no_natural) for n, s in cands))

    # -- the curve -----------------------------------------------------------------------------
    def _count_log_delta(self, rows: int, sigma: float, eps: FloatArray) -> tuple[FloatArray, FloatArray]:
        log_delta, log_upper, _ = CountingQuery(n=rows + 1, known=0, p=self.p, sigma=sigma)._curve(eps)
        return log_delta, log_upper

    def _by_atom(self, eps: FloatArray, *, lower: bool = True) -> tuple[dict[Pattern, FloatArray],
                                                                         dict[Pattern, FloatArray]]:
        """(lower end, upper end) per atom that can attain the maximum; ``lower=False`` skips the
        lower end's counts."""
        cache: dict[tuple[int, float], tuple[FloatArray, FloatArray]] = {}

        def count(c: tuple[int, float]) -> tuple[FloatArray, FloatArray]:
            if c not in cache:
                cache[c] = self._count_log_delta(c[0], c[1], eps)
            return cache[c]

        worst_upper = set(_pareto(self._upper.values()))
        upper = {t: count(c)[1] for t, c in self._upper.items() if c in worst_upper}
        if not lower:
            return {}, upper
        worst_lower = set(_pareto(c for cands in self._lower.values() for c in cands))
        lows = {t: np.max([count(c)[0] for c in cands if c in worst_lower], axis=0)
                for t, cands in self._lower.items() if any(c in worst_lower for c in cands)}
        return lows, upper

    def _log_bracket(self, eps: npt.ArrayLike) -> tuple[FloatArray, FloatArray, bool]:
        flat, scalar = real_array("eps", eps, minimum=0.0)
        lower, upper = self._by_atom(flat)
        lo = np.max(list(lower.values()), axis=0)
        up = np.max(list(upper.values()), axis=0)
        shape = np.shape(eps)
        return np.minimum(lo, up).reshape(shape), up.reshape(shape), scalar

    def worst_atom(self, eps: float) -> Pattern:
        """The membership pattern whose challenge row attains the upper end at ``eps``."""
        e = real("eps", eps, minimum=0.0)
        _, upper = self._by_atom(np.array([e]), lower=False)
        return max(upper, key=lambda t: (float(upper[t][0]), t))

    @property
    def exact(self) -> bool:
        """True when the two ends coincide at every eps (k releases of one count, disjoint groups, ...):
        every atom has a lower candidate with no more rows and no more noise than its upper end."""
        return all(any(n <= up[0] and s <= up[1] for n, s in self._lower[t]) for t, up in self._upper.items())

    # -- calibration ---------------------------------------------------------------------------
    def with_sigmas(self, sigmas: Sequence[float] | npt.ArrayLike) -> "OverlappingCounts":
        """The same groups with other noise levels."""
        return OverlappingCounts(atoms=self.atoms, p=self.p, sigmas=sigmas)

    # -- the calibration protocol (ppk.calibrate): the sigmas move together, keeping their ratios
    _calibration_rtol = 1e-10   # an evaluation is a few counting-kernel curves

    @property
    def scale(self) -> float:
        """The largest of :attr:`sigmas`: calibration scales every sigma by one factor."""
        return max(self.sigmas)

    def _ratios(self) -> np.ndarray:
        top = max(self.sigmas)
        return np.array(self.sigmas) / top if top > 0 else np.ones(len(self.sigmas))

    def with_scale(self, scale: float) -> "OverlappingCounts":
        """The same groups with ``sigmas`` in the same ratios, the largest equal to ``scale`` (all 1:1 when
        every sigma is 0).  No ExposureWarning: a calibration tries scale 0 on purpose."""
        scale = real("scale", scale, minimum=0.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ExposureWarning)
            return self.with_sigmas(scale * self._ratios())

    @property
    def has_natural_noise(self) -> bool:
        return self.p not in (0.0, 1.0) and any(rows > 0 for rows, _ in self._upper.values())

    @property
    def _rows_key(self) -> tuple[str, tuple[tuple[Pattern, int], ...], float] | None:
        """``(atoms, p)``: counts over one set of atoms against one attacker share its unknown rows."""
        return ("OverlappingCounts", tuple(sorted(self.atoms.items())), self.p) if self.has_natural_noise else None

    def without_natural_noise(self) -> "OverlappingCounts":
        """The same noise against an attacker who knows every other row (``p = 0``: no unknown row varies)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ExposureWarning)
            return OverlappingCounts(atoms=self.atoms, p=0.0, sigmas=self.sigmas)

    def dp_scale(self, *, eps: float, delta: float) -> float:
        """Plain DP's scale: a row of atom ``t`` shifts the queries of ``t`` by one each, a Gaussian mechanism
        of noise ``c r_t`` (``r_t`` the pooled ratios of ``t``), so ``c = max_t sigma_BW(eps, delta) / r_t``."""
        ratios = self._ratios()
        if not np.all(ratios > 0):
            raise ValueError(f"sigmas must all be > 0 for a calibration, which keeps their ratios (got {list(self.sigmas)}): "
                             "a query released exactly keeps its rows' counts exact at every scale")
        sigma_bw = analytic_gaussian_sigma(eps=eps, delta=delta, rtol=1e-12)
        return max(sigma_bw / _pooled_sigma(ratios[j] for j in t) for t in self._upper)

    def _log_delta_upper_at(self, eps: float) -> float:
        _, upper = self._by_atom(np.array([float(eps)]), lower=False)
        return float(np.max(list(upper.values())))


