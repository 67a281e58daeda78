"""Algorithm 2: private end-to-end calibration when the bias p is unknown (thesis Sec. 4.2, Alg. 2; proof in Sec. 4.4).

The data steward does not know the attacker's belief p.  Half of eps buys a
discrete-Laplace estimate of the count (an integer; the bias estimate is that integer
divided by n, so no floating-point artefact can carry the count: docs/release-security.md); a Chernoff-Hoeffding bound turns it into an
interval [p_lo, p_hi] that holds the generating bias except with probability
kappa2; Algorithm 1 runs at both ends (and on a grid between them, since delta
need not be monotone in p) with the other half of eps and the budget kappa4
that is left after the Laplace truncation term.  The result is never more
noise than the DP baseline: ``sigma = min(sigma_ppk, sigma_DP)``, both in counts.

Budget (thesis Thm 4.8, eq. 4.86):  delta = kappa1 + kappa2 + kappa4 + T_L,
with kappa3 = kappa4 + T_L.  kappa1 is the background-knowledge exclusion of
the thesis; under the binomial model it cannot change sigma (docs/decisions.md), so
its default is 0 and it only drives the optional diagnostics.

Deviations from the printed pseudo-code, each for a reason given in
docs/decisions.md, "Algorithm 2": everything is in counts; the interval is
the proof's estimate -+ tau, never c/n -+ ... (that reveals the count); tau
has a closed form; the diagnostics use the noisy estimate, not the count.
"""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, NamedTuple, overload

import numpy as np
import numpy.typing as npt

from ._bias_interval import HOEFFDING_METHODS, hoeffding_interval, hoeffding_t, laplace_truncation
from ._random import RandomSource, as_source, warn_if_seeded
from ._search import log_target
from ._validate import choice, flag, integer, real
from .calibration import calibrate
from .counting import MAX_ROWS, CountingQuery, log_delta_upper_over_biases
from .hypergeom import hypergeom_pmf
from .noise import ADDED_BY_NAME, Binomial
from .noisy_query import NoisyQuery
from .samplers import _discrete_laplace
from ._typing import RngLike

__all__ = ["alg2", "Alg2Result", "PrivateDraws", "hoeffding_interval", "laplace_truncation"]

BRANCH_PPK, BRANCH_FALLBACK, BRANCH_BASELINE = "ppk", "fallback", "baseline"

#: The added-noise laws Algorithm 2 calibrates (``sigma`` is the scale of the law chosen).
ADDED_NOISES = ("gaussian", "discrete_gaussian", "discrete_laplace")


class _Added:
    """The three calibrations Algorithm 2 needs, for one added-noise law.

    The continuous Gaussian uses the counting kernel, Algorithm 1 and Balle & Wang; the discrete laws
    use :class:`ppk.NoisyQuery` and :func:`ppk.calibrate` (docs/natural-noise.md).
    """

    def __init__(self, name: str):
        self.name = choice("noise", name, ADDED_NOISES)

    def query(self, N: int, p: float, scale: float) -> NoisyQuery:
        """The count with natural noise Bin(N, p) and this law at ``scale`` (none at 0)."""
        if self.name == "gaussian":
            return CountingQuery(n=N + 1, known=0, p=p, sigma=scale)
        return NoisyQuery(natural=Binomial(N, p), added=ADDED_BY_NAME[self.name](1.0)).with_scale(scale)

    def dp_scale(self, eps: float, delta: float) -> float:
        """The smallest scale that is (eps, delta)-DP without natural noise (the baseline)."""
        return self.query(0, 0.5, 1.0).dp_scale(eps=eps, delta=delta)

    def ppk_scale(self, n: int, known: int, p: float, eps: float, delta: float) -> float:
        """The smallest scale that is (eps, delta)-PPK-DP with Bin(n - known - 1, p) natural noise."""
        return calibrate(self.query(n - known - 1, p, 1.0), eps=eps, delta=delta).scale

    def log_upper_many(self, N: int, ps: np.ndarray, scale: float, eps: float, pool: ThreadPoolExecutor) -> list[float]:
        """:meth:`log_upper` at every bias in ``ps`` (the Gaussian in one C++ call)."""
        if self.name == "gaussian":
            return [float(x) for x in log_delta_upper_over_biases(N, ps, sigma=scale, eps=eps)]
        return list(pool.map(lambda p: self.log_upper(N, float(p), scale, eps), ps))

    def log_upper(self, N: int, p: float, scale: float, eps: float) -> float:
        """log of the certified upper bound on delta(eps) of the count with natural noise Bin(N, p)."""
        return float(self.query(N, p, scale).log_delta_upper(eps))


GRID_POINTS = 65
FINE_GRID_MAX = 4097   # most points of the lattice-resolving grid needed when sigma < 1 (docs/decisions.md, "The grid check over p")
SIGMA_FLOOR = 1.0      # counts; used instead of a finer grid (see _check_grid)


@dataclass(frozen=True)
class Diagnostics:
    """Thesis Alg. 2 lines 13-30, corrected (docs/decisions.md), from the noisy count estimate."""

    count_estimate: int           #: the private count estimate clamped to [0, n]: NOT the exact count
    classes: int                  #: background-knowledge classes h = base..top
    excluded: int                 #: classes excluded up to cumulative probability kappa1
    fraction_excluded: float
    estimated_known_count: int    #: q(Est_D'), the most atypical class that is kept


@dataclass(frozen=True)
class Alg2Result:
    """What :func:`alg2` decided.  Noise scales are standard deviations in counts."""

    sigma: float                  #: the noise to add (counts): the scale of the law ``noise``
    beta: float                   #: sigma / n
    branch: str                   #: "ppk", "fallback" (estimate unusable) or "baseline" (DP needs less)
    p_lo: float                   #: supported bias interval (nan on fallback)
    p_hi: float
    kappa1: float
    kappa2: float
    kappa3: float
    kappa4: float                 #: delta budget Algorithm 1 ran with (kappa3 - truncation_delta)
    truncation_delta: float       #: T_L, the Laplace truncation term
    tau: float                    #: half-width of the additive interval, t_hoeffding + t (nan for kl)
    t: float                      #: Laplace truncation threshold (= additive Hoeffding deviation)
    count_estimate: int           #: the eps/2-DP estimate count + Y, Y discrete Laplace (publishable)
    bias_estimate: float          #: count_estimate / n, correctly rounded: a function of the integer only
    sigma_dp: float               #: the DP baseline: analytic Gaussian sigma at (eps/2, delta)
    sigma_ppk: float              #: Algorithm 1's sigma over [p_lo, p_hi]; nan on fallback, inf when sigma_dp
                                  #: already fails kappa4 at an end (then the baseline is used, no search)
    n: int
    known: int
    eps: float
    delta: float
    hoeffding: str
    diagnostics: Diagnostics | None = None
    #: the law of the added noise: "gaussian" (released rounded), "discrete_gaussian" or "discrete_laplace"
    #: (a name, never a draw)
    law: str = "gaussian"
    #: True when the randomness was seeded: the result is reproducible and NOT private (tests only)
    insecure_for_testing: bool = False

    @property
    def eps_estimate(self) -> float:
        return self.eps / 2

    @property
    def eps_noise(self) -> float:
        return self.eps / 2

    def ledger(self) -> dict:
        """Everything that may be published: the budget split and the decisions.

        It holds no noise draw and nothing from which the exact count follows:
        the count estimate is itself an (eps/2)-DP release, and every other entry is a
        function of it and of public values.  The delta parts add
        up to ``delta``:  kappa1 + kappa2 + kappa4 + truncation_delta, each >= 0.  On the fallback whose
        truncation term exceeded kappa3 (kappa4 < 0: the reason it fell back) the parts show kappa4 = 0 and
        kappa3 as the truncation's share: the fallback's noise is the DP baseline at (eps/2, delta), which
        spends delta itself, and a negative part said nothing true.  ``notes`` says, in words, why it fell
        back and why a bias estimate outside [0, 1] is one (the count plus discrete Laplace noise).
        """
        kappa4, truncation = self.kappa4, self.truncation_delta
        if self.branch == BRANCH_FALLBACK and kappa4 < 0:
            kappa4, truncation = 0.0, self.kappa3
        return dict(
            n=self.n, known=self.known, eps=self.eps, delta=self.delta,
            eps_estimate=self.eps_estimate, eps_noise=self.eps_noise,
            delta_parts=dict(kappa1=self.kappa1, kappa2=self.kappa2, kappa4=kappa4, truncation_delta=truncation),
            notes=self._notes(),
            kappa3=self.kappa3, hoeffding=self.hoeffding, t=self.t, tau=self.tau,
            count_estimate=self.count_estimate, bias_estimate=self.bias_estimate, p_lo=self.p_lo,
            p_hi=self.p_hi, branch=self.branch, sigma=self.sigma, beta=self.beta, sigma_dp=self.sigma_dp,
            sigma_ppk=self.sigma_ppk, noise_law=self.law, insecure_for_testing=self.insecure_for_testing,
        )


    def _notes(self) -> list[str]:
        notes = []
        if self.branch == BRANCH_FALLBACK:
            notes.append(f"fallback: the truncation term T_L = {self.truncation_delta:.3g} exceeds kappa3 = "
                         f"{self.kappa3:.3g}" if self.kappa4 <= 0 else
                         "fallback: the estimate's discrete Laplace noise exceeded n t, so the estimate is not trusted")
        if not 0.0 <= self.bias_estimate <= 1.0:
            notes.append(f"the bias estimate {self.bias_estimate:.6g} lies outside [0, 1]: it is the count plus "
                         f"discrete Laplace noise of scale {2 / self.eps:.3g} (eps/2), divided by n; outside the "
                         "data's range it says only that the noise was large, and it is used only through the "
                         "interval (clipped to [0, 1]) or not at all (fallback)")
        return notes


class PrivateDraws:
    """The secret noise of one release, returned only on request (``audit=True``), never stored in a result.

    Whoever holds it can compute the exact count (``count = count_estimate - laplace_noise``).
    It cannot be pickled and its ``repr`` shows no value, so it does not leave the process by accident.
    """

    __slots__ = ("laplace_noise", "gaussian_noise")

    def __init__(self, *, laplace_noise: int, gaussian_noise: int | None = None):
        self.laplace_noise = laplace_noise      #: Y, the count estimate's discrete Laplace noise
        self.gaussian_noise = gaussian_noise    #: the rounded Gaussian noise added to the released count

    def __repr__(self) -> str:
        return "PrivateDraws(<secret: never publish>)"

    def __reduce__(self):
        raise TypeError("PrivateDraws cannot be pickled: it holds the secret noise of a release")


def _split(delta: float, kappa1, kappa2, kappa3) -> tuple[float, float, float]:
    kappa1 = real("kappa1", kappa1, minimum=0.0)
    rest = delta - kappa1
    if rest <= 0:
        raise ValueError(f"kappa1 must be < delta, got kappa1={kappa1}, delta={delta}")
    if kappa2 is None and kappa3 is None:
        kappa2 = kappa3 = rest / 2
        if kappa2 == 0:
            raise ValueError(f"delta={delta!r} is too small to split into kappa2 + kappa3 (half of it underflows)")
    elif kappa2 is None:
        kappa3 = real("kappa3", kappa3, minimum=0.0, min_inclusive=False)
        kappa2 = rest - kappa3
        if kappa2 <= 0:
            raise ValueError(f"kappa3={kappa3!r} leaves nothing for kappa2 (delta - kappa1 - kappa3 is {kappa2!r}); "
                             f"choose kappa3 below delta - kappa1, which is {rest!r}")
    elif kappa3 is None:
        kappa2 = real("kappa2", kappa2, minimum=0.0, min_inclusive=False)
        kappa3 = rest - kappa2
        if kappa3 <= 0:
            raise ValueError(f"kappa2={kappa2!r} leaves nothing for kappa3 (delta - kappa1 - kappa2 is {kappa3!r}); "
                             f"choose kappa2 below delta - kappa1, which is {rest!r}")
    kappa2 = real("kappa2", kappa2, minimum=0.0, min_inclusive=False)
    kappa3 = real("kappa3", kappa3, minimum=0.0, min_inclusive=False)
    if abs(kappa1 + kappa2 + kappa3 - delta) > 1e-12 * delta:
        raise ValueError(f"kappa1 + kappa2 + kappa3 must equal delta={delta}, got {kappa1 + kappa2 + kappa3}")
    return kappa1, kappa2, kappa3


def _count_and_n(data, count, n) -> tuple[int, int]:
    if (data is None) == (count is None):
        raise ValueError("give exactly one of data (a 0/1 array) or count together with n")
    if data is not None:
        if n is not None:
            raise ValueError("n is taken from data; do not pass n with data")
        arr = np.asarray(data)
        # two rows at least, as for n: the challenge row and one the attacker may know
        if arr.ndim != 1 or not 2 <= arr.size <= MAX_ROWS:
            raise ValueError(f"data must be a 1-d array of 2 to {MAX_ROWS} 0/1 values, got shape {arr.shape}")
        if arr.dtype.kind not in "biuf" or not np.all((arr == 0) | (arr == 1)):
            bad = np.nonzero(~((arr == 0) | (arr == 1)))[0] if arr.dtype.kind in "biuf" else [0]
            raise ValueError(f"data must contain only 0 and 1; entry {int(bad[0])} is {arr[bad[0]]!r}")
        return int(arr.sum()), int(arr.size)
    if n is None:
        raise ValueError("n (the number of rows) is required with count")
    n = integer("n", n, minimum=2, maximum=MAX_ROWS)
    return integer("count", count, minimum=0, maximum=n), n


def _grid(p_lo: float, p_hi: float, N: int, sigma: float) -> tuple[np.ndarray, float]:
    """Check points over [p_lo, p_hi] and the sigma they certify (docs/decisions.md, "The grid check over p")."""
    points = GRID_POINTS
    if sigma < 1.0:
        fine = int(math.ceil(4 * (N + 1) * (p_hi - p_lo))) + 1
        if fine > FINE_GRID_MAX:
            # Resolving the binomial lattice would take `fine` evaluations; one count of noise
            # smooths it instead (its Fourier factor e^{-2 pi^2} ~ 3e-9), at no visible cost.
            sigma = SIGMA_FLOOR
        else:
            points = max(points, fine)
    grid = np.linspace(p_lo, p_hi, points)
    if p_lo < 0.5 < p_hi:
        grid = np.sort(np.append(grid, 0.5))
    return grid, sigma


def _ppk_sigma(n: int, known: int, p_lo: float, p_hi: float, eps: float, kappa4: float, sigma_dp: float,
               added: _Added) -> float:
    """max of Alg. 1 at both ends, then raised until every grid point meets kappa4 (C++ releases the GIL).

    The grid can only raise sigma and the caller takes min(sigma, sigma_dp): once sigma >= sigma_dp the
    answer is the baseline and the (costly) grid check is skipped.
    """
    N = n - known - 1
    target = log_target(kappa4)
    with ThreadPoolExecutor(max_workers=2) as pool:
        # one evaluation per end first: if sigma_dp does not meet kappa4 there, Algorithm 1 would
        # return more than sigma_dp and the baseline wins -- no search needed
        if max(pool.map(lambda p: added.log_upper(N, p, sigma_dp, eps), (p_lo, p_hi))) > target:
            return math.inf
        ends = list(pool.map(lambda p: added.ppk_scale(n, known, p, eps, kappa4), (p_lo, p_hi)))
        sigma = max(ends)
        # delta is non-increasing in sigma (adding noise is post-processing): a grid point that met
        # kappa4 at some sigma meets it at every larger one, so each pass checks only the points not yet met
        met: set[float] = set()
        while sigma < sigma_dp:
            grid, sigma = _grid(p_lo, p_hi, N, sigma)
            todo = np.array([p for p in grid if float(p) not in met])
            if todo.size == 0:
                return sigma
            logs = np.asarray(added.log_upper_many(N, todo, sigma, eps, pool))
            met.update(float(p) for p in todo[logs <= target])
            worst = int(np.argmax(logs))
            if logs[worst] <= target:
                return sigma
            sigma = max(sigma, added.ppk_scale(n, known, float(todo[worst]), eps, kappa4))
        return sigma


def exclusion_order(n: int, known: int, c_hat: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The background classes q(D') by decreasing pointwise loss: (support, order, cumulative probability).

    Excluding the first k classes of ``order`` removes probability ``cum[k - 1]``; kappa1 excludes the
    classes whose cumulative probability stays below it.
    """
    b = min(1 - 1e-12, max(1e-12, c_hat / n))
    support, prb = hypergeom_pmf(population=n, successes=c_hat, draws=known)
    h = support.astype(float)
    with np.errstate(divide="ignore"):
        loss = np.abs(np.log((known - h + 1) * b) - np.log(h * (1 - b)))   # Lemma 5.3 with n' (docs/decisions.md)
    loss[h == 0] = np.inf
    order = np.argsort(-loss, kind="stable")
    return support, order, np.cumsum(prb[order])


def _diagnostics(n: int, known: int, count_estimate: int, kappa1: float) -> Diagnostics:
    c_hat = min(n, max(0, count_estimate))
    support, order, cum = exclusion_order(n, known, c_hat)
    excluded = int(np.searchsorted(cum, kappa1, side="left"))   # classes with cumulative prob < kappa1
    excluded = min(excluded, support.size - 1)
    return Diagnostics(count_estimate=c_hat, classes=int(support.size), excluded=excluded,
                       fraction_excluded=excluded / support.size,
                       estimated_known_count=int(support[order[excluded]]))


def calibrate_from_estimate(*, n: int, known: int, eps: float, delta: float, kappa1: float, kappa2: float,
                            kappa3: float, count_estimate: int, laplace_exceeds_t: bool,
                            hoeffding: str = "additive", diagnostics: bool = False,
                            insecure_for_testing: bool = False, noise: str = "gaussian") -> Alg2Result:
    """Algorithm 2 after the Laplace draw: a function of public values, the DP estimate and one bit.

    The bit ``laplace_exceeds_t`` (|Y| > n t) depends on the noise only, not on the count.  Everything
    :func:`alg2` returns is computed here -- which is why its ledger cannot reveal the count.
    """
    eps_half = eps / 2
    bias_estimate = _ratio(count_estimate, n)
    t = hoeffding_t(kappa2=kappa2, m=known)
    t_l = laplace_truncation(n=n, t=t, eps_estimate=eps_half)
    kappa4 = kappa3 - t_l
    added = _Added(noise)
    sigma_dp = added.dp_scale(eps_half, delta)
    diag = _diagnostics(n, known, count_estimate, kappa1) if diagnostics else None

    def result(*, sigma: float, branch: str, p_lo: float, p_hi: float, tau: float, sigma_ppk: float) -> Alg2Result:
        return Alg2Result(sigma=sigma, beta=sigma / n, branch=branch, p_lo=p_lo, p_hi=p_hi, tau=tau,
                          sigma_ppk=sigma_ppk, diagnostics=diag, kappa1=kappa1, kappa2=kappa2, kappa3=kappa3,
                          kappa4=kappa4, truncation_delta=t_l, t=t, count_estimate=count_estimate,
                          bias_estimate=bias_estimate, sigma_dp=sigma_dp, n=n, known=known, eps=eps, delta=delta,
                          hoeffding=hoeffding, insecure_for_testing=insecure_for_testing, law=noise)

    if laplace_exceeds_t or kappa4 <= 0:
        return result(sigma=sigma_dp, branch=BRANCH_FALLBACK, p_lo=math.nan, p_hi=math.nan, tau=math.nan,
                      sigma_ppk=math.nan)
    p_lo, p_hi = hoeffding_interval(estimate=bias_estimate, t_laplace=t, kappa2=kappa2, m=known, method=hoeffding)
    tau = 2 * t if hoeffding == "additive" else math.nan
    sigma_ppk = _ppk_sigma(n, known, p_lo, p_hi, eps_half, kappa4, sigma_dp, added)
    sigma = min(sigma_ppk, sigma_dp)
    branch = BRANCH_PPK if sigma_ppk <= sigma_dp else BRANCH_BASELINE
    return result(sigma=sigma, branch=branch, p_lo=p_lo, p_hi=p_hi, tau=tau, sigma_ppk=sigma_ppk)


def _ratio(count_estimate: int, n: int) -> float:
    """count_estimate / n as the correctly rounded float: a function of the integer alone."""
    return float(Fraction(count_estimate, n))


#: Smallest total eps Algorithm 2 takes: below it the DP baseline's sigma leaves the float range.
EPS_MIN = 1e-300


def _validated(data: object, count: object, n: object, known: object, eps: object, delta: object, kappa1: object,
               kappa2: object, kappa3: object,
               hoeffding: object) -> tuple[int, int, int, float, float, float, float, float]:
    c, n = _count_and_n(data, count, n)
    known = integer("known", known, minimum=0)
    if known >= n:
        rows = "n" if data is None else "the rows of data"
        raise ValueError(f"known must be < {rows} (the challenge row is unknown), got known={known}, n={n}")
    eps = real("eps", eps, minimum=EPS_MIN)
    delta = real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    kappa1, kappa2, kappa3 = _split(delta, kappa1, kappa2, kappa3)
    choice("hoeffding", hoeffding, HOEFFDING_METHODS)
    return c, n, known, eps, delta, kappa1, kappa2, kappa3


def estimate_noise(source: RandomSource, eps: float) -> int:
    """Y, the noise of the count estimate ``count + Y``: discrete Laplace of scale 2/eps.

    The count has sensitivity 1, so this is exactly (eps/2)-DP for the float eps as the
    rational it denotes; Y is an integer, so nothing published can depend on the count
    through rounding.
    """
    scale = 2 / Fraction(eps)
    return _discrete_laplace(scale.numerator, scale.denominator, source)


class Run(NamedTuple):
    """One run of Algorithm 2 with its secrets: what a release needs beside the public result."""

    result: Alg2Result
    exact_count: int       #: the count itself (secret)
    laplace_noise: int     #: Y, the count estimate's noise (secret)


def run(source: RandomSource, *, data: object, count: object, n: object, known: object, eps: object, delta: object,
        kappa1: object, kappa2: object, kappa3: object, hoeffding: object, diagnostics: bool,
        noise: object) -> Run:
    """Algorithm 2 drawing from ``source``, which the caller holds (a release draws its noise from the same
    one): validates the arguments, returns the result and the secrets (never stored in the result).

    ``noise`` names the law the release will add; Y is the count estimate's discrete Laplace draw."""
    c, n, known, eps, delta, kappa1, kappa2, kappa3 = _validated(data, count, n, known, eps, delta, kappa1, kappa2,
                                                                 kappa3, hoeffding)
    noise = choice("noise", noise, ADDED_NOISES)
    y = estimate_noise(source, eps)
    t = hoeffding_t(kappa2=kappa2, m=known)
    exceeds = not math.isinf(t) and abs(y) > Fraction(n) * Fraction(t)   # depends on the noise only
    result = calibrate_from_estimate(n=n, known=known, eps=eps, delta=delta, kappa1=kappa1, kappa2=kappa2,
                                     kappa3=kappa3, count_estimate=c + y, laplace_exceeds_t=exceeds,
                                     hoeffding=str(hoeffding), diagnostics=diagnostics,
                                     insecure_for_testing=not source.secure, noise=noise)
    return Run(result, c, y)


@overload
def alg2(*, data: npt.ArrayLike | None = ..., count: int | None = ..., n: int | None = ..., known: int, eps: float,
         delta: float, kappa1: float = ..., kappa2: float | None = ..., kappa3: float | None = ..., hoeffding: str = ...,
         diagnostics: bool = ..., rng: RngLike = ..., audit: Literal[False] = ..., noise: str = ...) -> Alg2Result: ...
@overload
def alg2(*, data: npt.ArrayLike | None = ..., count: int | None = ..., n: int | None = ..., known: int, eps: float,
         delta: float, kappa1: float = ..., kappa2: float | None = ..., kappa3: float | None = ..., hoeffding: str = ...,
         diagnostics: bool = ..., rng: RngLike = ..., audit: Literal[True],
         noise: str = ...) -> tuple[Alg2Result, PrivateDraws]: ...
def alg2(*, data: npt.ArrayLike | None = None, count: int | None = None, n: int | None = None, known: int, eps: float,
         delta: float, kappa1: float = 0.0, kappa2: float | None = None, kappa3: float | None = None,
         hoeffding: str = "additive", diagnostics: bool = False, rng: RngLike = None,
         audit: bool = False, noise: str = "gaussian") -> Alg2Result | tuple[Alg2Result, PrivateDraws]:
    """Private end-to-end noise calibration for a count when the attacker's bias is unknown.

    Parameters
    ----------
    data : array-like of 0/1, optional
        The database column; or give ``count`` and ``n`` instead.
    count, n : int, optional
        Number of 1s and number of rows.
    known : int
        Rows the attacker knows (public), ``0 <= known <= n - 1``; also the
        Hoeffding sample size (Def. 4.20: the conservative choice).
    eps, delta :
        Total budget, ``eps >= 1e-300``, ``0 < delta < 1``.  eps/2 estimates the count,
        eps/2 goes to the Gaussian noise.
    kappa1, kappa2, kappa3 :
        Split of delta (``kappa1 + kappa2 + kappa3 = delta``): kappa1 background-knowledge
        exclusion (default 0, it cannot change sigma), kappa2 failure of the bias
        interval, kappa3 Laplace truncation + Algorithm 1.  Unset kappa2/kappa3
        share what kappa1 leaves equally.
    hoeffding : "additive" | "kl"
        Closed-form additive bound (default) or the narrower Chernoff-KL interval.
    diagnostics : bool
        Also compute the thesis's background-knowledge class statistics (O(known)).
    rng : None | int | numpy.random.Generator
        None (default) draws the noise from a cryptographically secure source.  A seed
        makes the result reproducible and therefore NOT private: it warns
        (:class:`ppk.InsecureRandomnessWarning`) and the ledger says ``insecure_for_testing``.
    audit : bool
        Also return the secret noise, as ``(result, PrivateDraws)``.  The result itself never
        holds it.
    noise : "gaussian" | "discrete_gaussian" | "discrete_laplace"
        The law the release adds (``sigma`` is its scale): the Gaussian (released rounded), or an
        exact discrete law, calibrated with :class:`ppk.NoisyQuery` (slower: seconds at 1e6 rows).

    Returns
    -------
    Alg2Result
        ``sigma`` never exceeds the DP baseline ``sigma_dp`` and, on the "ppk"
        branch, meets kappa4 at every bias in [p_lo, p_hi] by the certified bound.
    """
    diagnostics, audit = flag("diagnostics", diagnostics), flag("audit", audit)
    source = as_source(rng)
    warn_if_seeded(source, "alg2")
    out = run(source, data=data, count=count, n=n, known=known, eps=eps, delta=delta, kappa1=kappa1, kappa2=kappa2,
              kappa3=kappa3, hoeffding=hoeffding, diagnostics=diagnostics, noise=noise)
    return (out.result, PrivateDraws(laplace_noise=out.laplace_noise)) if audit else out.result
