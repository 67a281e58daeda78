"""A steward's release plan over one table: every count at once, natural noise kept (docs/table-plans.md).

``n`` rows, each in one category of a finite domain (the joint values of the columns the plan uses).
The attacker knows ``known`` rows; each of the other ``N = n - known - 1`` rows besides the challenge
row is an independent draw from the belief ``probs``.  The plan is a list of counts, each over a set of
categories and with its own Gaussian noise (standard deviation in counts): single counts, a histogram
of a column, a cross-tab of two columns, marginals, repeats.  The challenge row is in category ``a`` or
``b``, and

    delta(eps) = max over ordered pairs (a, b) of H_{e^eps}(P_a || P_b),

``P_a`` the law of the whole vector of released counts.  What ppk computes (docs/table-plans.md proves
each step):

* **Upper end.** Tell the attacker, besides the release, every other category's count of unknown rows
  and ``M = X_a + X_b``.  The release is then ``const + T u + Z``, ``T`` a count of natural noise
  ``Bin(M, pi_a / (pi_a + pi_b))`` shifted by the challenge row, ``u_j = [a in S_j] - [b in S_j]``; the
  whitened projection on ``u`` is sufficient, a count with Gaussian noise of standard deviation
  ``sigma_eff = 1 / sqrt(sum_j u_j^2 / sigma_j^2)``.  So each pair's delta is at most the histogram's
  pair bound (:mod:`ppk._pair_bound`) at ``sigma_eff``; pairs the plan cannot tell apart (``u = 0``) give 0.
* **Which pairs.** That bound does not decrease when ``sigma_eff`` falls and does not increase when
  ``pi_a`` or ``pi_b`` grows, so only the pairs no other pair dominates in ``(sigma_eff, pi_a, pi_b)``
  are evaluated.
* **Lower end.** Every count, or the precision-weighted mean of the counts over one set of
  categories, is a count with natural noise ``Bin(N, pi_S)``; and the upper end is exact for a pair
  whose categories hold every unknown row (the attacker knows ``M`` then) or when ``N = 0``.

:class:`ppk.HistogramQuery` is the plan of one count per category, all with one ``sigma``.
"""
from __future__ import annotations

import math
from typing import Hashable, Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from ._curve import BracketedCurve
from ._pair_bound import interruptible, pair_log_bracket, pairs_log_brackets
from ._typing import FloatArray
from ._validate import integer, real, real_array
from .histogram import MAX_HISTOGRAM_ROWS, probabilities

__all__ = ["TablePlan", "histogram_counts", "marginal_counts", "MAX_PLAN_CATEGORIES", "MAX_PLAN_COUNTS"]

#: Most categories a plan takes: its pairs are compared as a k x k table per count.
MAX_PLAN_CATEGORIES = 1000
#: Most counts a plan takes.
MAX_PLAN_COUNTS = 10_000
# The pair comparison costs (counts) x (categories)^2 steps: refused above this, with the numbers.
_MAX_PAIR_WORK = 4 * 10**8
# How many category sets give a single-count lower end: those with the least noise.
_LOWER_CANDIDATES = 3

Category = Hashable
Count = tuple[Iterable[Category], float]


def _collection(name: str, value) -> list:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable) or (
            isinstance(value, np.ndarray) and value.ndim == 0):
        raise TypeError(f"{name} must be a collection of categories (a list, tuple or dict), got {value!r}")
    return list(value)


def histogram_counts(categories: Iterable[Category], *, sigma: float) -> list[tuple[tuple[Category], float]]:
    """One count per category, each with Gaussian noise ``sigma`` (counts): a histogram, as plan counts."""
    sigma = real("sigma", sigma, minimum=0.0)
    return [((c,), sigma) for c in _collection("categories", categories)]


def marginal_counts(categories: Iterable[tuple], *, position: int, sigma: float) -> list[tuple[tuple, float]]:
    """The histogram of one column of a cross-tab: categories are tuples of the columns' values, and each
    distinct value at ``position`` gets one count over every category holding it (noise ``sigma``)."""
    sigma = real("sigma", sigma, minimum=0.0)
    position = integer("position", position, minimum=0)
    groups: dict = {}
    for c in _collection("categories", categories):
        if not isinstance(c, tuple) or position >= len(c):
            raise ValueError(f"categories must be tuples of the columns' values with an entry at position {position}, "
                             f"got {c!r}")
        groups.setdefault(c[position], []).append(c)
    return [(tuple(cats), sigma) for cats in groups.values()]


def _precision(sigma: float) -> float:
    """``1 / sigma^2``; ``inf`` for no noise, and for a sigma so small that its square underflows (less noise
    than the double range holds: counted as none, which is pessimistic)."""
    square = sigma * sigma
    return math.inf if square == 0 else 1.0 / square


class TablePlan(BracketedCurve):
    """Several noisy counts over one table, against an attacker who knows ``known`` rows (docs/table-plans.md).

    :meth:`delta` and :meth:`log_delta` report the certified upper end; :meth:`delta_bracket` gives both
    ends.  It implements the curve protocol: ``epsilon``, ``ppk.calibrate`` (which scales every count's
    noise by one factor, keeping their ratios: :attr:`scale` is the largest ``sigma``) and plots.

    Parameters
    ----------
    n : int
        Rows in the table, ``1 <= n <= 1e10``.
    known : int
        Rows the attacker knows, ``0 <= known <= n - 1``.
    probs : mapping or sequence of float
        The attacker's belief: ``{category: probability}`` for an unknown row (sums to 1); a sequence
        names the categories ``0, 1, ...``.  Categories are any hashable values (tuples for cross-tabs).
        The challenge row may be in any category listed, including those of probability 0.
    counts : sequence of (categories, sigma)
        The released counts: each the number of rows in a set of categories, plus Gaussian noise of
        standard deviation ``sigma`` (counts).  :func:`histogram_counts` and :func:`marginal_counts`
        build the usual ones.
    public : mapping, optional
        ``{category: public part}`` for every category: a part of the row the attacker sees for the challenge
        row (a region, a group), so its move stays within its public part -- only pairs of categories with
        equal public parts are neighbours (docs/table-plans.md, "Public parts").  The other unknown rows stay
        draws from ``probs``, public parts included.  None (the default): any two categories.
    rtol, max_evaluations
        As for :class:`ppk.HistogramQuery`: the relative width to which each pair's sum over ``M`` is
        refined, and the budget of values of ``M`` per pair.

    Examples
    --------
    >>> from ppk.table_plan import TablePlan, histogram_counts
    >>> probs = {"a": 0.4, "b": 0.3, "c": 0.2, "d": 0.1}
    >>> plan = TablePlan(n=10_000, known=1_000, probs=probs,
    ...                  counts=[(("a", "b"), 2.0)] + histogram_counts(probs, sigma=2.0))
    >>> lower, upper = plan.delta_bracket(0.5)
    >>> bool(0 < lower <= upper < 1e-3)
    True
    """

    __slots__ = ("n", "known", "categories", "probs", "count_sets", "sigmas", "public", "rtol", "max_evaluations",
                 "_pairs")

    def __init__(self, *, n: int, known: int, probs: Mapping[Category, float] | Sequence[float],
                 counts: Sequence[Count], public: Mapping[Category, Hashable] | None = None, rtol: float = 1e-3,
                 max_evaluations: int = 2000):
        self.n = integer("n", n, minimum=1, maximum=MAX_HISTOGRAM_ROWS)
        self.known = integer("known", known, minimum=0)
        if self.known >= self.n:
            raise ValueError(f"known must be < n (the challenge row is unknown), got known={self.known}, n={self.n}")
        self.categories, self.probs = _belief(probs)
        index = {c: i for i, c in enumerate(self.categories)}
        if isinstance(counts, (str, bytes)) or not isinstance(counts, Sequence):
            raise TypeError("counts must be a list of (categories, sigma) pairs")
        if not 1 <= len(counts) <= MAX_PLAN_COUNTS:
            raise ValueError(f"counts must list 1 to {MAX_PLAN_COUNTS} counts, got {len(counts)}")
        sets, sigmas = [], []
        for j, item in enumerate(counts):
            if not (isinstance(item, Sequence) and len(item) == 2) or isinstance(item, (str, bytes)):
                raise TypeError(f"counts[{j}] must be a (categories, sigma) pair, got {item!r}")
            cats, sigma = item
            if isinstance(cats, (str, bytes)) or not isinstance(cats, Iterable):
                raise TypeError(f"counts[{j}]'s categories must be a collection of categories (a tuple or list), "
                                f"got {cats!r}")
            members = set()
            for c in cats:
                if c not in index:
                    raise ValueError(f"counts[{j}] names category {c!r}, which probs does not list")
                members.add(index[c])
            if not members:
                raise ValueError(f"counts[{j}] counts no category")
            sets.append(frozenset(members))
            sigmas.append(real(f"counts[{j}]'s sigma", sigma, minimum=0.0))
        k, m = len(self.categories), len(sets)
        if m * k * k > _MAX_PAIR_WORK:
            raise ValueError(f"a plan of {m} counts over {k} categories compares {m * k * k:.2g} pairs of counts, "
                             f"more than the {_MAX_PAIR_WORK:.0e} ppk takes: merge categories or counts")
        self.count_sets: tuple[frozenset, ...] = tuple(sets)
        self.sigmas: tuple[float, ...] = tuple(sigmas)
        self.rtol = real("rtol", rtol, minimum=1e-15, maximum=1.0)
        self.max_evaluations = integer("max_evaluations", max_evaluations, minimum=2, maximum=10**6)
        self.public: tuple[Hashable, ...] | None = _public_parts(public, self.categories)
        self._pairs = _dominant_pairs(self.probs, self.count_sets, self.sigmas, self.public)

    @classmethod
    def histogram(cls, *, n: int, known: int, probs: Mapping[Category, float] | Sequence[float], sigma: float,
                  rtol: float = 1e-3) -> "TablePlan":
        """The plan of one count per category, each with noise ``sigma``: :class:`ppk.HistogramQuery`'s release."""
        categories, _ = _belief(probs)
        return cls(n=n, known=known, probs=probs, counts=histogram_counts(categories, sigma=sigma), rtol=rtol)

    @classmethod
    def worst_case(cls, *, n: int, known: int, categories: Sequence[Category], counts: Sequence[Count],
                   min_prob: float, rtol: float = 1e-3) -> "TablePlan":
        """The plan whose upper end covers **every** belief giving each category at least ``min_prob``.

        Each pair's bound does not increase when either of its probabilities grows (docs/table-plans.md), so
        over all such beliefs it is at most its value at ``(min_prob, min_prob)``, and the largest of those is
        the pair the plan tells apart best (the largest ``w``).  The plan returned gives that pair exactly
        ``min_prob`` each and the other categories an equal share of the rest (at least ``min_prob``); its
        lower end describes that belief only.  ``min_prob = 0`` is plain DP."""
        names = _collection("categories", categories)
        if len(names) < 3 or len(set(names)) != len(names):
            raise ValueError(f"categories must list at least three distinct categories (with two, their beliefs add "
                             f"to 1: state them as probs), got {categories!r}")
        k = len(names)
        floor = real("min_prob", min_prob, minimum=0.0, maximum=0.5)
        if floor > 1.0 / k:
            raise ValueError(f"min_prob must be <= 1/categories = {1.0 / k!r} (no belief gives each of {k} categories "
                             f"more), got {floor!r}")
        uniform = cls(n=n, known=known, probs={c: 1.0 / k for c in names}, counts=counts, rtol=rtol)
        if not uniform._pairs:   # the plan tells no two categories apart
            return uniform
        a, b, _ = min(uniform._pairs, key=lambda pair: pair[2])   # the smallest sigma_eff: the largest w
        # max(., floor): 1 - 2m rounded and divided can land an ulp below m when m = 1/k
        rest = max((1.0 - 2.0 * floor) / (k - 2), floor)
        probs = {c: (floor if i in (a, b) else rest) for i, c in enumerate(names)}
        return cls(n=n, known=known, probs=probs, counts=counts, rtol=rtol)

    def __repr__(self) -> str:
        # short enough for a plot's legend and the accountant's names; the parts are the attributes
        lo, hi = min(self.sigmas), max(self.sigmas)
        noise = f"sigma={lo:g}" if lo == hi else f"sigma={lo:g}..{hi:g}"
        return (f"TablePlan(n={self.n}, known={self.known}, {len(self.categories)} categories, "
                f"{len(self.sigmas)} counts, {noise})")

    @property
    def n_unknown(self) -> int:
        """``N = n - known - 1``: the unknown rows other than the challenge row."""
        return self.n - self.known - 1

    def pairs(self) -> list[tuple[Category, Category, float]]:
        """The pairs of categories whose bound is evaluated (no other pair dominates them), each with its
        effective noise ``sigma_eff`` (counts): ``(a, b, sigma_eff)``."""
        return [(self.categories[a], self.categories[b], s) for a, b, s in self._pairs]

    @property
    def exact(self) -> bool:
        """True when the two ends coincide to the summation's ``rtol``: ``N = 0``, or every evaluated pair's
        categories hold every unknown row (the attacker knows ``M`` anyway)."""
        return self.n_unknown == 0 or all(self._rest(a, b) == 0 for a, b, _ in self._pairs)

    def _rest(self, a: int, b: int) -> float:
        return math.fsum(p for i, p in enumerate(self.probs) if i not in (a, b))

    # -- the calibration protocol (ppk.calibrate): one factor on every count's sigma
    _calibration_rtol = 1e-6
    _calibration_grow = 1e-6

    @property
    def scale(self) -> float:
        """The largest count's ``sigma`` (counts); :meth:`with_scale` moves every ``sigma`` in proportion."""
        return max(self.sigmas)

    def with_scale(self, scale: float) -> "TablePlan":
        """The same plan with every count's ``sigma`` multiplied by ``scale / self.scale`` (all ``scale`` when
        every ``sigma`` is 0)."""
        scale = real("scale", scale, minimum=0.0)
        top = self.scale
        sigmas = [scale * (s / top) if top > 0 else scale for s in self.sigmas]
        return self._with_sigmas(sigmas, n=self.n)

    def _with_sigmas(self, sigmas: Sequence[float], *, n: int) -> "TablePlan":
        counts = [([self.categories[i] for i in sorted(s)], sigma) for s, sigma in zip(self.count_sets, sigmas)]
        public = None if self.public is None else dict(zip(self.categories, self.public))
        return TablePlan(n=n, known=self.known, probs=dict(zip(self.categories, self.probs)), counts=counts,
                         public=public, rtol=self.rtol, max_evaluations=self.max_evaluations)

    @property
    def has_natural_noise(self) -> bool:
        return self.n_unknown > 0

    @property
    def _rows_key(self) -> tuple[str, int, int] | None:
        """``("rows", n, known)``: the plan shares its table's unknown rows with every other release of it."""
        return ("rows", self.n, self.known) if self.has_natural_noise else None

    def without_natural_noise(self) -> "TablePlan":
        """The same plan against an attacker who knows every other row (``N = 0``): plain DP's curve."""
        return self._with_sigmas(self.sigmas, n=self.known + 1)

    def dp_scale(self, *, eps: float, delta: float) -> float:
        """Plain DP's :attr:`scale`: the analytic Gaussian mechanism whose sensitivity is the plan's largest
        ``sqrt(sum_j u_j^2 / r_j^2)`` over pairs, ``r_j = sigma_j / scale`` the fixed ratios."""
        from .baselines import analytic_gaussian_sigma
        top = self.scale
        ratios = [s / top if top > 0 else 1.0 for s in self.sigmas]
        pairs = _dominant_pairs(self.probs, self.count_sets, tuple(ratios), self.public)
        if not pairs:
            return 0.0
        smallest = min(s for _, _, s in pairs)
        if smallest == 0:
            raise ValueError("a count with sigma 0 tells two categories apart: no common scale of the noise makes "
                             "this plan private; give that count noise of its own")
        # sigma_eff at scale 1 is `smallest`; the sensitivity 1 / smallest is rounded up (pessimistic)
        return analytic_gaussian_sigma(eps=eps, delta=delta, sensitivity=(1.0 / smallest) * (1 + 1e-15))

    def _log_delta_upper_at(self, eps: float) -> float:
        return max((b[1] for b in self._pair_brackets(float(eps))), default=-math.inf)

    def _pair_brackets(self, eps: float) -> list[tuple[float, float, bool]]:
        """(log lower, log upper, exact) of each evaluated pair's bound at one eps."""
        out = []
        with interruptible():   # Ctrl-C from any thread stops the next pair's kernel (docs/limits.md)
            for a, b, sigma_eff in self._pairs:
                rest = self._rest(a, b)
                lo, up = pair_log_bracket(self.n_unknown, self.probs[a], self.probs[b], rest, sigma_eff=sigma_eff,
                                          eps=eps, rtol=self.rtol, max_evaluations=self.max_evaluations)
                out.append((lo, up, self.n_unknown == 0 or rest == 0))
        return out

    _costly_curve = True

    def _log_delta_ends_many(self, eps: FloatArray, *, rtol: float) -> tuple[FloatArray, FloatArray]:
        """Max over the pairs of their bounds' brackets at every eps (connect_the_dots): ppk._pair_bound.pairs_log_brackets."""
        pairs = [(self.probs[a], self.probs[b], self._rest(a, b), sigma_eff) for a, b, sigma_eff in self._pairs]
        lower, upper = pairs_log_brackets(self.n_unknown, pairs, eps=eps, rtol=rtol, max_evaluations=self.max_evaluations)
        upper = np.minimum(upper, 0.0)
        return np.minimum(lower, upper), upper

    def _count_lower(self, eps: FloatArray) -> FloatArray:
        """max over a few category sets S of the delta of the precision-weighted mean of the counts over S: a
        count with natural noise Bin(N, pi_S), a post-processing of the release."""
        from .counting import CountingQuery
        k = len(self.categories)
        precision: dict[frozenset, float] = {}
        for s, sigma in zip(self.count_sets, self.sigmas):
            if self._separates_a_pair(s):   # a count that holds both or neither of every pair never moves
                if sigma > 0 and sigma * sigma == 0:
                    continue   # counted as noiseless for the upper end; a lower end may leave it out
                precision[s] = precision.get(s, 0.0) + _precision(sigma)
        candidates = []
        for s, prec in precision.items():
            p = min(math.fsum(self.probs[i] for i in s), 1.0)
            # sigma rounded up (a lower end may be loose, never high)
            sigma = 0.0 if math.isinf(prec) else (1.0 / math.sqrt(prec)) * (1 + 1e-15)
            candidates.append((sigma, min(p, 1.0 - p), p))
        out = np.full(eps.shape, -np.inf)
        for sigma, _, p in sorted(candidates)[:_LOWER_CANDIDATES]:
            query = CountingQuery(n=self.n_unknown + 1, known=0, p=p, sigma=sigma)
            out = np.maximum(out, np.asarray(query.log_delta(eps), dtype=np.float64).reshape(eps.shape))
        return out

    def _separates_a_pair(self, members: frozenset) -> bool:
        """Whether the count over ``members`` holds one category of some pair the challenge row may be in (any
        two categories, or two of one public part)."""
        if self.public is None:
            return len(members) < len(self.categories)
        inside = {self.public[i] for i in members}
        outside = {self.public[i] for i in range(len(self.categories)) if i not in members}
        return bool(inside & outside)

    def _log_bracket(self, eps: npt.ArrayLike) -> tuple[FloatArray, FloatArray, bool]:
        flat, scalar = real_array("eps", eps, minimum=0.0)
        lower = np.full(flat.shape, -np.inf)
        upper = np.full(flat.shape, -np.inf)
        with interruptible():
            brackets = [self._pair_brackets(float(e)) for e in flat]
        for i, pairs in enumerate(brackets):
            for lo, up, exact in pairs:
                upper[i] = max(upper[i], up)
                if exact:
                    lower[i] = max(lower[i], lo)
        if self._pairs:
            lower = np.maximum(lower, self._count_lower(flat))
        upper = np.minimum(upper, 0.0)   # delta <= 1 (the bound's rounding slack can reach past it)
        lower = np.minimum(lower, upper)
        shape = np.shape(eps)
        return lower.reshape(shape), upper.reshape(shape), scalar


def _belief(probs) -> tuple[tuple, tuple[float, ...]]:
    """(categories, probabilities) of ``probs``: a mapping's keys, or ``0, 1, ...`` for a sequence."""
    if isinstance(probs, Mapping):
        if len(probs) > MAX_PLAN_CATEGORIES:
            raise ValueError(f"probs lists {len(probs)} categories; a plan takes at most {MAX_PLAN_CATEGORIES}")
        return tuple(probs.keys()), probabilities("probs", list(probs.values()))
    values = probabilities("probs", probs)
    if len(values) > MAX_PLAN_CATEGORIES:
        raise ValueError(f"probs lists {len(values)} categories; a plan takes at most {MAX_PLAN_CATEGORIES}")
    return tuple(range(len(values))), values


def _public_parts(public: Mapping[Category, Hashable] | None, categories: tuple) -> tuple[Hashable, ...] | None:
    """Each category's public part, in the order of ``categories`` (None: no public parts)."""
    if public is None:
        return None
    if not isinstance(public, Mapping):
        raise TypeError(f"public must map each category to its public part (a dict), got {type(public).__name__}")
    missing = [c for c in categories if c not in public]
    extra = [c for c in public if c not in set(categories)]
    if missing or extra:
        raise ValueError(f"public must give the public part of exactly the categories probs lists: "
                         f"{'missing ' + repr(missing[:5]) if missing else ''}{' ' if missing and extra else ''}"
                         f"{'not in probs ' + repr(extra[:5]) if extra else ''}")
    parts = tuple(public[c] for c in categories)
    for c, part in zip(categories, parts):
        try:
            hash(part)
        except TypeError:
            raise TypeError(f"public[{c!r}] must be a hashable public part (a string, number or tuple), got "
                            f"{type(part).__name__}") from None
        if part != part:
            raise ValueError(f"public[{c!r}] is NaN: a public part must equal itself")
    return parts


def _dominant_pairs(probs: Sequence[float], sets: Sequence[frozenset], sigmas: Sequence[float],
                    public: Sequence[Hashable] | None = None) -> list[tuple[int, int, float]]:
    """The pairs ``(a, b, sigma_eff)`` with ``a < b`` that the plan tells apart and no other pair dominates.

    ``w_ab = sum_j [count j separates a and b] / sigma_j^2`` (``inf`` when a separating count has no noise);
    ``sigma_eff = 1 / sqrt(w)``, rounded down (less noise: pessimistic) by more than the sum's rounding.
    Pair P dominates Q when ``w_P >= w_Q`` and P's two probabilities, sorted, are at most Q's: its bound
    is at least Q's (docs/table-plans.md), so Q need not be evaluated."""
    k = len(probs)
    w = np.zeros((k, k))
    for s, sigma in zip(sets, sigmas):
        inside = np.zeros(k, dtype=bool)
        inside[list(s)] = True
        separates = inside[:, None] != inside[None, :]
        w[separates] += _precision(sigma)
    a_idx, b_idx = np.triu_indices(k, 1)
    weights = w[a_idx, b_idx]
    told = weights > 0
    if public is not None:   # the challenge row's public part is known: it moves within it only
        told &= np.array([public[int(a)] == public[int(b)] for a, b in zip(a_idx, b_idx)], dtype=np.bool_)
    a_idx, b_idx, weights = a_idx[told], b_idx[told], weights[told]
    if weights.size == 0:
        return []
    p = np.asarray(probs)
    lo = np.minimum(p[a_idx], p[b_idx])
    hi = np.maximum(p[a_idx], p[b_idx])
    order = np.lexsort((hi, lo, -weights))
    a_idx, b_idx, weights, lo, hi = a_idx[order], b_idx[order], weights[order], lo[order], hi[order]
    alive = np.ones(weights.size, dtype=bool)
    kept = []
    while alive.any():
        i = int(np.argmax(alive))   # first alive in the order: no alive pair dominates it
        kept.append(i)
        alive &= ~((weights <= weights[i]) & (lo >= lo[i]) & (hi >= hi[i]))
    slack = 1 - (len(sets) + 4) * 2.3e-16   # the sum's rounding (one ulp a term) and the root's
    out = []
    for i in kept:
        sigma_eff = 0.0 if math.isinf(weights[i]) else slack / math.sqrt(float(weights[i]))
        out.append((int(a_idx[i]), int(b_idx[i]), sigma_eff))
    return out
