"""Statistical privacy with random partitions (Breutigam & Reischuk; docs/related.md).

The curator splits the n rows by a secret uniform random partition into blocks of the given
sizes, answers one count per block and releases only the answers.  The unknown rows are i.i.d.
Bernoulli(p), the noiseless count's curve is ``delta(eps; N, p)`` (ppk's kernel at
sigma = 0), and:

* :func:`composition_bound` -- the paper's Thm 5.1 (i.i.d. entries): sum_k (n_k/n) delta(eps; n_k - 1, p).
  An upper bound (a convex split over the target's block).
* :func:`composition_delta_exact` -- the exact delta for same-predicate counts: the answers'
  likelihood ratio depends only on their total, so it is the count over the union of the blocks,
  mixed with "target not sampled" when the blocks do not cover all rows (docs/related.md).
* :func:`sampling_privacy_curve` -- Ex. 1: one sampled count when the attacker knows some rows,
  with hypergeometric weights from the C++ kernel.
* :func:`compare_sp_dp` -- regenerates Tables I and II and adds the exact SP delta and the number
  of queries a tight DP accountant (exact Gaussian composition) allows at the same accuracy.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import numpy.typing as npt
from scipy import special

from ..noise import Binomial
from .._logmath import log1mexp
from .._random import as_generator, as_source, warn_if_seeded
from .._validate import EPS_MAX_CLOSED_FORM, choice, flag, function, instance, integer, real, sequence
from ..baselines import analytic_gaussian_log_delta_upper
from ..samplers import rounded_gaussian
from ..counting import MAX_ROWS, CountingQuery
from ..hypergeom import hypergeom_pmf
from .._typing import RngLike

__all__ = ["random_partition", "PartitionMechanism", "count_delta", "composition_bound",
           "composition_delta_exact", "sampling_privacy_curve", "adaptive_composition_bound",
           "compare_sp_dp", "TABLE_I", "TABLE_II"]


#: Largest database the O(n) routines here take (a permutation or a pmf of n + 1 entries).
MAX_N = 10**7
#: Most Monte Carlo histories :func:`adaptive_composition_bound` draws (each costs one curve
#: evaluation a block: 10^6 of them take minutes).
MAX_SAMPLES = 10**6


def _block_sizes(sizes) -> list[int]:
    return sequence("sizes", sizes, lambda name, s: integer(name, s, minimum=1, maximum=MAX_N), min_length=1)


def _sizes(n, sizes) -> tuple[int, list[int]]:
    n = integer("n", n, minimum=1, maximum=MAX_N)
    sizes = _block_sizes(sizes)
    if sum(sizes) > n:
        raise ValueError(f"the blocks of sizes hold {sum(sizes)} rows, more than n={n}")
    return n, sizes


def random_partition(n: int, sizes: Sequence[int], rng: RngLike = None) -> list[np.ndarray]:
    """Secret blocks: a uniform random permutation of range(n) cut into consecutive pieces of ``sizes``.

    ``rng``: None (cryptographically secure), an int seed or a numpy Generator.
    """
    n, sizes = _sizes(n, sizes)
    src = as_source(rng)
    perm = np.arange(n)
    for i in range(n - 1, 0, -1):   # Fisher-Yates with the source's unbiased integers
        j = src.below(i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    cuts = np.cumsum([0] + sizes)
    return [perm[cuts[k]:cuts[k + 1]].copy() for k in range(len(sizes))]


@dataclass(frozen=True)
class PartitionMechanism:
    """Answer the count of 1s in each secret block (plus optional rounded Gaussian noise, sigma in counts)."""

    sizes: tuple
    sigma: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "sizes", tuple(_block_sizes(self.sizes)))   # frozen: stored as checked
        object.__setattr__(self, "sigma", real("sigma", self.sigma, minimum=0.0))

    def release(self, data: npt.ArrayLike, rng: RngLike = None) -> list[int]:
        arr = np.asarray(data)
        if arr.ndim != 1 or arr.dtype.kind not in "biuf" or not np.all((arr == 0) | (arr == 1)):
            raise ValueError("data must be a 1-d array of 0/1 values")
        if arr.size < sum(self.sizes):
            raise ValueError(f"data must hold the {sum(self.sizes)} rows of the blocks, got {arr.size} rows")
        src = as_source(rng)
        warn_if_seeded(src, "PartitionMechanism.release")
        blocks = random_partition(arr.size, list(self.sizes), src)
        return [int(arr[b].sum()) + rounded_gaussian(self.sigma, rng=src) for b in blocks]


def count_delta(*, N: int, p: float, eps: float) -> float:
    """delta(eps) of the noiseless count a + Bin(N, p), both orders (docs/method.md, "σ = 0")."""
    eps = real("eps", eps, minimum=0.0)
    return CountingQuery(n=integer("N", N, minimum=0, maximum=MAX_ROWS - 1) + 1, known=0, p=p, sigma=0.0).delta(eps)


def composition_bound(*, n: int, sizes: Sequence[int], p: float, eps: float, known: int = 0) -> float:
    """Thm 5.1 (i.i.d.): sum_k (n_k / n) delta(eps; n_k - 1, p) -- an upper bound.

    With ``known > 0`` rows known to the attacker (non-identical entries: point masses), Thm 5.2 with
    the Ex. 1 sampling curves: sum_k (n_k / n) sampling_privacy_curve(n, n_k, known, p, eps).
    """
    eps = real("eps", eps, minimum=0.0)
    n, sizes = _sizes(n, sizes)
    known = integer("known", known, minimum=0, maximum=n - 1)
    if known == 0:
        return float(sum(s / n * count_delta(N=s - 1, p=p, eps=eps) for s in sizes))
    return float(sum(s / n * sampling_privacy_curve(n=n, sample=s, known=known, p=p, eps=eps) for s in sizes))


def composition_delta_exact(*, n: int, sizes: Sequence[int], p: float, eps: float) -> float:
    """Exact delta of same-predicate counts on a secret partition (docs/related.md).

    With S = sum of the sizes and lam = S/n: the answers are as informative as their total, whose law
    under target value a is lam (a + Bin(S-1, p)) + (1 - lam) Bin(S, p).  Covering all rows gives the
    single count on n rows, whatever the number of blocks.
    """
    n, sizes = _sizes(n, sizes)
    p = real("p", p, minimum=0.0, maximum=1.0)
    eps = real("eps", eps, minimum=0.0)
    S = sum(sizes)
    if S == n:
        return count_delta(N=n - 1, p=p, eps=eps)
    lam = S / n
    c = np.arange(S + 1)
    inner = np.asarray(Binomial(S - 1, p).log_pmf(c))
    inner1 = np.concatenate([[-np.inf], inner[:-1]])
    outer = np.asarray(Binomial(S, p).log_pmf(c))
    logp = {a: np.logaddexp(math.log(lam) + (inner1 if a else inner), math.log1p(-lam) + outer) for a in (0, 1)}
    best = -math.inf
    for a, b in ((1, 0), (0, 1)):
        # (P_a - e^eps P_b)_+ = P_a (1 - e^{eps + log P_b - log P_a})_+ : positive terms only, in logs
        with np.errstate(invalid="ignore"):    # -inf - -inf where both pmfs vanish: no term
            d = eps + logp[b] - logp[a]
            keep = d < 0
        if np.any(keep):
            best = max(best, float(special.logsumexp(logp[a][keep] + log1mexp(d[keep]))))
    return math.exp(best)


def sampling_privacy_curve(*, n: int, sample: int, known: int, p: float, eps: float, population: str = "corrected", conditional: bool = True) -> float:
    """Ex. 1: one count over a uniform sample of ``sample`` rows that contains the target, when the
    attacker knows ``known`` rows: sum_z HG(z) delta(eps; sample - 1 - z, p), z = known rows sampled.

    ``population="corrected"`` draws the other sample - 1 rows from the n - 1 non-target rows (the
    paper writes n; docs/related.md); ``conditional=False`` multiplies by sample/n (Def. 3.3's unconditional SPC).
    """
    eps = real("eps", eps, minimum=0.0)
    n = integer("n", n, minimum=2)
    s = integer("sample", sample, minimum=1, maximum=n)
    v = integer("known", known, minimum=0, maximum=n - 1)
    pop = n - 1 if choice("population", population, ("corrected", "paper")) == "corrected" else n
    conditional = flag("conditional", conditional)
    z, w = hypergeom_pmf(population=pop, successes=v, draws=s - 1)
    curve = np.array([count_delta(N=max(s - 1 - int(zz), 0), p=p, eps=eps) for zz in z])
    out = float(np.dot(w, curve))
    return out if conditional else out * s / n


def adaptive_composition_bound(*, n: int, sizes: Sequence[int], p: float, eps: float, policy: Callable[[int, tuple[int, ...]], float], samples: int = 2000, rng: RngLike = None) -> tuple[float, float]:
    """Thm 5.3 (i.i.d., adaptive): sum_k (n_k/n) E[delta of block k's query given the earlier answers].

    ``policy(k, answers)`` returns the noise sigma (counts) for block k's count given the answers
    so far.  The expectation is estimated by Monte Carlo over answer histories drawn from the model;
    returns (estimate, standard error).
    """
    n, sizes = _sizes(n, sizes)
    p = real("p", p, minimum=0.0, maximum=1.0)
    eps = real("eps", eps, minimum=0.0)
    policy = function("policy", policy)
    samples = integer("samples", samples, minimum=2, maximum=MAX_SAMPLES)
    gen = as_generator(rng)
    draws = np.empty(samples)
    for t in range(samples):
        answers: list[int] = []
        total = 0.0
        for k, s in enumerate(sizes):
            sigma = real("policy sigma", policy(k, tuple(answers)), minimum=0.0)
            total += s / n * CountingQuery(n=s, known=0, p=p, sigma=sigma).delta(eps)
            answers.append(int(gen.binomial(s, p)) + (int(round(gen.normal(0, sigma))) if sigma else 0))
        draws[t] = total
    return float(draws.mean()), float(draws.std(ddof=1) / math.sqrt(samples))


# Tables I and II of the paper, as printed (truncated to 4 decimals; the .0.0711 typo read as .0711)
TABLE_I = dict(n=2**15, p=0.5, eps=(0.005, 0.01, 0.02), rows=[
    (32, .0153, (.0225, .0203, .0163), (0, 3, 9)),
    (64, .0219, (.0329, .0306, .0264), (1, 6, 20)),
    (128, .0311, (.0475, .0452, .0409), (3, 12, 44)),
    (256, .0441, (.0682, .0660, .0617), (6, 25, 93)),
    (512, .0624, (.0973, .0953, .0912), (12, 50, 194))])
TABLE_II = dict(n=2**10, p=0.5, eps=(0.05, 0.1, 0.2), rows=[
    (32, .0869, (.1214, .1020, .0711), (2, 7, 23)),
    (64, .1240, (.1808, .1644, .1291), (4, 16, 55)),
    (128, .1760, (.2618, .2496, .2232), (9, 35, 126))])


def _kov_queries(sigma, eps, delta, n, rounding):
    """The paper's #DP, reconstructed (docs/related.md, "The DP comparison"): sigma^2 eps^2 / (8 Delta^2 ln(e + eps/delta)), Delta = 1/n."""
    if delta == 0:   # ln(e + eps/delta) = inf: no query at delta = 0
        return 0
    x = sigma**2 * eps**2 * n**2 / (8 * math.log(math.e + eps / delta))
    return math.floor(x) if rounding == "floor" else int(round(x))


def _gaussian_queries(sigma, eps, delta, n):
    """Largest k with which k Gaussian releases of the mean (noise sigma, Delta = 1/n) are (eps, delta)-DP.

    k-fold composition of the Gaussian mechanism is the Gaussian mechanism with sigma / sqrt(k), i.e.
    ``n sigma / sqrt(k)`` in counts; its exact (Balle-Wang) delta grows with k, so the largest k is found
    by doubling and integer bisection on the certified upper bound (never more queries than allowed).
    """
    if delta == 0:   # no Gaussian release has delta = 0
        return 0
    target = math.log(delta)

    def private(k: int) -> bool:
        return analytic_gaussian_log_delta_upper(sigma=n * sigma / math.sqrt(k), eps=eps) <= target

    if not private(1):
        return 0
    lo, hi = 1, 2
    while private(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if private(mid) else (lo, mid)
    return lo


def compare_sp_dp(table: dict[str, Any] | None = None, *, n: int | None = None, p: float = 0.5,
                  eps_list: Sequence[float] | None = None,
                  n_sp_list: Sequence[int] | None = None) -> list[dict[str, Any]]:
    """Rows (n_sp, sigma, eps, paper delta, delta Thm 5.1, exact delta, #DP paper-style, #DP exact Gaussian).

    With ``table=TABLE_I`` or ``TABLE_II`` the paper's printed values are included for comparison.
    sigma = sqrt(p(1-p)(1/n_k - 1/n)) is the accuracy loss of answering from a block of n_k = n/#SP rows.
    """
    if table is not None:
        instance("table", table, dict, "TABLE_I, TABLE_II or a dict like them")
        if not {"n", "p", "eps", "rows"} <= set(table):
            raise ValueError(f"table must have the keys n, p, eps and rows of TABLE_I, got {sorted(table)}")
        n, p, eps_list = table["n"], table["p"], table["eps"]
        printed = {row[0]: row for row in table["rows"]}
        n_sp_list = list(printed)
    if n is None or eps_list is None or n_sp_list is None:
        raise ValueError("give table=TABLE_I or TABLE_II, or all of n, eps_list and n_sp_list")
    n = integer("n", n, minimum=2, maximum=MAX_N)
    # p in {0, 1}: no natural noise, delta = 1 and the DP count of queries has no bound
    p = real("p", p, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    # eps^2 n^2 of the #DP formula stays finite up to the closed forms' cap
    eps_list = sequence("eps_list", eps_list,
                        lambda name, e: real(name, e, minimum=0.0, maximum=EPS_MAX_CLOSED_FORM, min_inclusive=False))
    n_sp_list = sequence("n_sp_list", n_sp_list, lambda name, k: integer(name, k, minimum=1, maximum=n))
    rows = []
    for n_sp in n_sp_list:
        nk = n // n_sp
        sigma = math.sqrt(p * (1 - p) * (1 / nk - 1 / n))
        for i, eps in enumerate(eps_list):
            bound = composition_bound(n=n, sizes=[nk] * n_sp, p=p, eps=eps)
            if bound >= 1:   # every number of Gaussian queries meets delta = 1: the count would be unbounded
                raise ValueError(f"with p={p!r} and eps={eps!r} the SP delta is 1 (too little natural noise), so "
                                 "the number of DP queries has no bound; choose p further from 0 and 1, or a larger eps")
            exact = composition_delta_exact(n=n, sizes=[nk] * n_sp, p=p, eps=eps)
            rounding = "round" if table is TABLE_I and eps == 0.01 else "floor"   # the table's own exception
            row = dict(n_sp=n_sp, sigma=sigma, eps=eps, delta=bound, delta_exact=exact,
                       dp_queries=_kov_queries(sigma, eps, bound, n, rounding),
                       dp_queries_exact_gaussian=_gaussian_queries(sigma, eps, bound, n))
            if table is not None:
                row.update(paper_sigma=printed[n_sp][1], paper_delta=printed[n_sp][2][i],
                           paper_dp_queries=printed[n_sp][3][i])
            rows.append(row)
    return rows
