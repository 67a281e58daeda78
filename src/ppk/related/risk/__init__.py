"""Privacy at risk (Dandekar, Basu, Bressan, "Differential privacy at risk"; docs/related.md).

A Laplace mechanism calibrated for eps0 satisfies a smaller eps "most of the time": (eps, gamma)-privacy
at risk.  **Convention, used everywhere here: gamma is the confidence -- the probability that the
eps-level holds -- and the risk is 1 - gamma.**  (The paper's Def. 6 calls gamma the violation
probability, but every later result and number uses it as the confidence.)

What is here: the distribution T of the paper ("BesselK"), explicit randomness (gamma1, its inverse,
calibration of eps0), the *exact* worst-case probability beside the paper's gamma1 (they differ a
lot, see :func:`confidence_exact`), a Monte-Carlo estimator, the DKW tolerance of sensitivity
sampling (paper's and corrected bound), the combined gamma3 with its calibration, composition
(basic, advanced, privacy-at-risk) and the GDPR cost model.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, overload

import numpy as np
import numpy.typing as npt
from scipy import optimize, special

from ..._random import as_generator
from ..._search import log_quotient
from ..._validate import EPS_MAX_CLOSED_FORM, choice, integer, real, real_array
from ..._typing import FloatArray, RngLike

#: Most random draws (samples times dimension) one Monte-Carlo call takes: about 5 s in numpy.  The
#: standard error at this size is below 1e-4; 1e12 draws would have run for days.
MC_MAX_DRAWS = 10**8
#: Draws per block of a Monte-Carlo run: memory stays at a few of these arrays (32 MiB each), whatever
#: ``samples`` is (one array of samples x dimension took 16 bytes a draw, all at once).
_MC_BLOCK = 1 << 22

__all__ = ["MC_MAX_DRAWS", "BesselK", "confidence", "eps_for_confidence", "calibrate_eps0", "confidence_exact", "confidence_mc",
           "laplace_overlap", "dkw_alpha", "empirical_confidence", "combined_confidence",
           "calibrate_eps0_combined", "compose_privacy_at_risk",
           "crossover", "CostModel", "OptimalPaR", "eps_lower_bound_from_mae"]


class BesselK:
    """``T = |X1 - X2|``, X1, X2 i.i.d. Gamma(k, 1): the paper's "BesselK(k)" (Lemma 22, theta-free).

    Finite closed form for half-integer Bessel functions (docs/related.md): with weights
    c_i = 2 C(k-1, i) (2k-2-i)! 2^{-(2k-1-i)} / Gamma(k)^2 (positive, log-space for large k),
    pdf(t) = e^{-t} sum_i c_i t^i and cdf(x) = sum_i c_i i! P(i+1, x).  Stable for k up to hundreds.
    """

    #: largest k: the closed form has k terms, stable for k up to hundreds
    K_MAX = 1000

    def __init__(self, k: int = 1):
        self.k = integer("k", k, minimum=1, maximum=self.K_MAX)
        i = np.arange(self.k)
        self._log_c = (math.log(2) + special.gammaln(self.k) - special.gammaln(i + 1) - special.gammaln(self.k - i)
                       + special.gammaln(2 * self.k - 1 - i) - (2 * self.k - 1 - i) * math.log(2)
                       - 2 * special.gammaln(self.k))
        self._log_w = self._log_c + special.gammaln(i + 1)     # weights of the gamma cdfs, summing to 1
        self._i = i

    @overload
    def pdf(self, t: float) -> float: ...
    @overload
    def pdf(self, t: npt.ArrayLike) -> FloatArray: ...
    def pdf(self, t: npt.ArrayLike) -> float | FloatArray:
        """The density at t (a real number or an array of them, finite; 0 below 0)."""
        flat, scalar = real_array("t", t)
        ts = flat if scalar else flat.reshape(np.shape(t))
        # log t where t > 0; the columns of t <= 0 are overwritten below (log 0 = -inf times i = 0 was NaN)
        logt = np.log(np.where(ts > 0, ts, 1.0))
        terms = self._log_c[:, None] + self._i[:, None] * logt.reshape(1, -1)
        terms[:, (ts.reshape(-1) == 0)] = np.where(self._i[:, None] == 0, self._log_c[:, None], -np.inf)
        out = np.exp(special.logsumexp(terms, axis=0) - np.maximum(ts.reshape(-1), 0.0))   # e^{+1e300} overflowed
        out[ts.reshape(-1) < 0] = 0.0
        return float(out[0]) if scalar else out.reshape(ts.shape)

    @overload
    def cdf(self, x: float) -> float: ...
    @overload
    def cdf(self, x: npt.ArrayLike) -> FloatArray: ...
    def cdf(self, x: npt.ArrayLike) -> float | FloatArray:
        """P(T <= x): a mixture of regularised lower incomplete gamma functions (x finite)."""
        return self._gamma_mixture(self._points(x), special.gammainc)

    @overload
    def sf(self, x: float) -> float: ...
    @overload
    def sf(self, x: npt.ArrayLike) -> FloatArray: ...
    def sf(self, x: npt.ArrayLike) -> float | FloatArray:
        """P(T > x), formed from the upper incomplete gamma functions (no 1 - cdf cancellation; x finite)."""
        return self._gamma_mixture(self._points(x), special.gammaincc)

    @staticmethod
    def _points(x: npt.ArrayLike) -> float | FloatArray:
        """``x`` checked: a finite float, or a float array of x's shape."""
        flat, scalar = real_array("x", x)
        return float(flat[0]) if scalar else flat.reshape(np.shape(x))

    def _gamma_mixture(self, x: npt.ArrayLike, regularized: Callable[..., np.ndarray]) -> float | FloatArray:
        xs = np.maximum(np.asarray(x, dtype=float), 0.0)
        out = np.sum(np.exp(self._log_w)[:, None] * regularized(self._i[:, None] + 1, xs.reshape(1, -1)), axis=0)
        return out.reshape(xs.shape) if xs.ndim else float(out[0])

    def ppf(self, q: float) -> float:
        """The quantile: the t with cdf(t) = q (root finding to 1e-14)."""
        q = real("q", q, minimum=0.0, maximum=1.0)
        if q == 0:
            return 0.0
        if q == 1:
            return math.inf
        # the upper half from the survival function: 1 - q is exact there, sf reaches 0, so the bracket
        # search ends (the cdf, a sum of k rounded terms, may level off just below a q near 1: hi
        # doubled to inf and the loop never left)
        upper = q > 0.5
        target = 1 - q if upper else q

        def below(x: float) -> float:   # < 0 below the quantile, >= 0 from it on
            # unchecked: x is a float the search made (hi may double past the float range)
            return target - float(self._gamma_mixture(x, special.gammaincc)) if upper \
                else float(self._gamma_mixture(x, special.gammainc)) - target

        hi = 1.0
        for _ in range(1100):   # 2^1100 overflows: every double is passed by then
            if below(hi) >= 0:
                break
            hi *= 2
        else:
            raise ValueError(f"q = {q!r}: the quantile lies beyond the float range")
        return float(optimize.brentq(below, 0.0, hi, xtol=1e-14, rtol=1e-14))

    def rvs(self, size: int | tuple[int, ...] | None = None, rng: RngLike = None) -> float | FloatArray:
        """Random draws of T (a float when ``size`` is None); for simulations, not releases."""
        raw = () if size is None else tuple(size) if isinstance(size, (tuple, list)) else (size,)
        shape = tuple(integer("size", s, minimum=0) for s in raw)   # -0.0 and 3.0 become ints numpy takes
        count = 1
        for s in shape:
            count *= s
        if count > MC_MAX_DRAWS:
            raise ValueError(f"size asks for {count:.3g} draws ({3 * 8 * count:.3g} bytes in three arrays), more "
                             f"than MC_MAX_DRAWS = {MC_MAX_DRAWS:.0e}: draw in batches")
        gen = as_generator(rng)
        draws = None if size is None else shape
        return np.abs(gen.gamma(self.k, 1.0, draws) - gen.gamma(self.k, 1.0, draws))


def _eps0(eps0) -> float:
    return real("eps0", eps0, minimum=0.0, maximum=EPS_MAX_CLOSED_FORM, min_inclusive=False)


def _eps_pair(eps, eps0):
    eps0 = _eps0(eps0)
    eps = real("eps", eps, minimum=0.0)
    if eps > eps0:
        raise ValueError(f"eps must be <= eps0 = {eps0!r}, got eps={eps!r}")
    return eps, eps0


def confidence(*, eps: float, eps0: float, k: int = 1) -> float:
    """The paper's gamma1 = F_T(eps) / F_T(eps0) (Eq. 3), 0 <= eps <= eps0.

    It follows Lemma 24's model, which treats the two Laplace sums as independent.  The exact
    probability for a worst-case pair is much smaller: see :func:`confidence_exact`.
    """
    eps, eps0 = _eps_pair(eps, eps0)
    t = BesselK(k)
    return t.cdf(eps) / t.cdf(eps0)


def eps_for_confidence(*, gamma: float, eps0: float, k: int = 1) -> float:
    """Inverse of :func:`confidence` in eps: Eq. 4 for k = 1, root finding otherwise."""
    gamma = real("gamma", gamma, minimum=0.0, maximum=1.0)
    eps0 = _eps0(eps0)
    k = integer("k", k, minimum=1)
    if k == 1:
        return -math.log1p(-gamma * -math.expm1(-eps0))
    t = BesselK(k)
    target = gamma * t.cdf(eps0)
    if gamma in (0.0, 1.0):
        return 0.0 if gamma == 0 else eps0
    return optimize.brentq(lambda e: t.cdf(e) - target, 0.0, eps0, xtol=1e-14, rtol=1e-14)


def calibrate_eps0(*, eps: float, gamma: float, k: int = 1, eps0_max: float = 50.0) -> float:
    """The eps0 whose Laplace mechanism is (eps, gamma)-private at risk: gamma F_T(eps0) = F_T(eps).

    Feasible iff F_T(eps) < gamma <= 1 (as eps0 grows, gamma1 falls to F_T(eps)); otherwise ValueError.
    """
    eps = real("eps", eps, minimum=0.0, min_inclusive=False)
    gamma = real("gamma", gamma, minimum=0.0, maximum=1.0)
    # at most EPS_MAX_CLOSED_FORM: the root search from eps0_max = 1e300 did not converge (and F_T is 1
    # to double precision long before)
    eps0_max = real("eps0_max", eps0_max, minimum=0.0, maximum=EPS_MAX_CLOSED_FORM, min_inclusive=False)
    t = BesselK(k)
    floor = t.cdf(eps)
    if gamma <= floor:
        raise ValueError(f"infeasible: gamma = {gamma} must exceed F_T(eps)={floor:.6g}, the confidence that any "
                         f"eps0 >= eps gives at level eps={eps}")
    if gamma == 1:
        return eps
    target = floor / gamma
    if t.cdf(eps0_max) < target:
        raise ValueError(f"infeasible below eps0_max={eps0_max}")
    return optimize.brentq(lambda e0: t.cdf(e0) - target, eps, eps0_max, xtol=1e-14, rtol=1e-14)


def confidence_exact(*, eps: float, eps0: float) -> float:
    """``P(|privacy loss| <= eps)`` exactly, Laplace mechanism eps0, worst-case pair, k = 1.

    See docs/related.md, "gamma1 is not the exact probability".

    The loss has atoms at +-eps0 (mass 1/2 + e^{-eps0}/2) and is uniform-like in between, so for
    eps < eps0 the probability is e^{-eps0/2} sinh(eps/2) < 1/2 -- e.g. 0.1532 at (0.5, 1) where the
    paper's gamma1 is 0.6225.  1 at eps = eps0.
    """
    eps, eps0 = _eps_pair(eps, eps0)
    return 1.0 if eps >= eps0 else math.exp(-eps0 / 2) * math.sinh(eps / 2)


def confidence_mc(*, fx: npt.ArrayLike, fy: npt.ArrayLike, eps: float, eps0: float, sensitivity: float = 1.0,
                  samples: int = 100_000, rng: RngLike = None) -> tuple[float, float]:
    """Monte-Carlo estimate of ``P(|privacy loss| <= eps)`` for outputs f(x), f(y) (any dimension k).

    ``z = f(x) + Laplace(sensitivity/eps0)^k``, ``loss = (eps0/sensitivity) sum_i (|z_i - f(y)_i| - |z_i - f(x)_i|)``.
    Returns (estimate, standard error).
    """
    x, _ = real_array("fx", fx)
    y, _ = real_array("fy", fy)
    if x.shape != y.shape:
        raise ValueError(f"fx and fy must have the same number of values, got {x.size} and {y.size}")
    if x.size == 0:
        raise ValueError("fx and fy must hold at least one value (one per dimension), got none")
    eps, eps0 = _eps_pair(eps, eps0)
    s = real("sensitivity", sensitivity, minimum=0.0, min_inclusive=False)
    samples = integer("samples", samples, minimum=2)
    if samples * x.size > MC_MAX_DRAWS:
        raise ValueError(f"samples = {samples:,} in dimension {x.size:,} needs {samples * x.size:.3g} Laplace draws, "
                         f"more than MC_MAX_DRAWS = {MC_MAX_DRAWS:.0e} (about 5 s); at {MC_MAX_DRAWS // x.size:,} "
                         "samples the standard error is already below 1e-4 -- for the exact value in one "
                         "dimension use confidence_exact")
    gen = as_generator(rng)
    # in blocks of rows: the draws come off the generator in the same order as one (samples, k) array
    # would, so the estimate is the same, in bounded memory
    rows = max(1, _MC_BLOCK // x.size)
    hits = 0
    for start in range(0, samples, rows):
        z = x + gen.laplace(0.0, s / eps0, size=(min(rows, samples - start), x.size))
        loss = eps0 / s * (np.abs(z - y) - np.abs(z - x)).sum(axis=1)
        hits += int(np.count_nonzero(np.abs(loss) <= eps))
    mean = hits / samples
    # the sample standard deviation of the 0/1 hits, as hit.std(ddof=1) gave it
    sd = math.sqrt(max(mean * (1 - mean), 0.0) * samples / (samples - 1))
    return float(mean), sd / math.sqrt(samples)


def laplace_overlap(*, eps1: float, eps2: float, sensitivity: float = 1.0) -> float:
    """Overlap of Lap(s/eps1) and Lap(s/eps2), eps2 < eps1 (Lemma 18)."""
    eps1 = real("eps1", eps1, minimum=0.0, min_inclusive=False)
    eps2 = real("eps2", eps2, minimum=0.0, min_inclusive=False)
    if eps2 >= eps1:
        raise ValueError(f"eps2 must be < eps1, got eps1={eps1}, eps2={eps2}")
    s = real("sensitivity", sensitivity, minimum=0.0, min_inclusive=False)
    m = s * math.log(eps1 / eps2) / (eps1 - eps2)
    return 1 - (math.exp(-m * eps2 / s) - math.exp(-m * eps1 / s))


def dkw_alpha(*, n: int, rho: float) -> float:
    """DKW (Massart): ``P(sup |F_n - F| <= rho) >= alpha`` = 1 - 2 exp(-2 rho^2 n) (Eq. 13)."""
    n = integer("n", n, minimum=1)
    rho = real("rho", rho, minimum=0.0, min_inclusive=False)
    return 1 - 2 * math.exp(-2 * rho * rho * n)


def empirical_confidence(*, gamma2: float, n: int, rho: float, bound: str = "corrected") -> float:
    """gamma2_hat of sensitivity sampling (Thm 13): paper gamma2 alpha, corrected max(gamma2 - rho, 0) alpha.

    The paper's proof uses F(Delta_S) >= gamma2 on the DKW event, which only gives gamma2 - rho
    (docs/related.md, "The sensitivity-sampling bound"); the corrected bound is the safe one and the default.
    """
    gamma2 = real("gamma2", gamma2, minimum=0.0, maximum=1.0)
    alpha = dkw_alpha(n=n, rho=rho)
    bound = choice("bound", bound, ("paper", "corrected"))
    if bound == "paper":
        return gamma2 * alpha
    return max(gamma2 - rho, 0.0) * alpha


def combined_confidence(*, eps: float, eps0: float, gamma2: float, eta: float, k: int = 1) -> float:
    """gamma3 = F_T(eps) / F_T(eta eps0) * gamma2 (Eq. 7), eta = true / sampled sensitivity."""
    eta = real("eta", eta, minimum=0.0, min_inclusive=False)
    eps, eps0 = _eps_pair(eps, eps0)
    gamma2 = real("gamma2", gamma2, minimum=0.0, maximum=1.0)
    if eps > eta * eps0:
        raise ValueError(f"eps must be <= eta * eps0 = {eta * eps0}")
    t = BesselK(k)
    return t.cdf(eps) / t.cdf(eta * eps0) * gamma2


def calibrate_eps0_combined(*, eps: float, gamma3_hat: float, gamma2: float, eta: float, alpha: float, k: int = 1) -> float:
    """Solve gamma3_hat F_T(eta eps0) = alpha gamma2 F_T(eps) for eps0 (Sec. 6); ValueError when infeasible.

    The paper's worked example (eps=0.4, gamma3_hat=0.9, gamma2=0.9, alpha=0.9, eta>=1) is infeasible:
    it forces eta eps0 ~ 0.352 < eps (docs/related.md, "An infeasible example").
    """
    eps = real("eps", eps, minimum=0.0, min_inclusive=False)
    g3 = real("gamma3_hat", gamma3_hat, minimum=0.0, maximum=1.0, min_inclusive=False)
    g2 = real("gamma2", gamma2, minimum=0.0, maximum=1.0)
    eta = real("eta", eta, minimum=0.0, min_inclusive=False)
    alpha = real("alpha", alpha, minimum=0.0, maximum=1.0)
    t = BesselK(k)
    target = alpha * g2 * t.cdf(eps) / g3
    if target >= 1:
        raise ValueError("infeasible: alpha gamma2 F_T(eps) / gamma3_hat >= 1")
    x = t.ppf(target)                      # = eta * eps0
    if x < eps:
        raise ValueError(f"infeasible: the solution has eta*eps0 = {x:.6g} < eps = {eps} (gamma3_hat is too "
                         "high for these gamma2 and alpha; the mechanism cannot be that confident)")
    eps0 = x / eta
    if not math.isfinite(eps0):
        raise ValueError(f"eta = {eta!r} is too small: eps0 = {x:.6g} / eta overflows the float range")
    return eps0


def _mu(eps0, eps, gamma):
    return gamma * eps * math.expm1(eps) + (1 - gamma) * eps0 * math.expm1(eps0)


def compose_privacy_at_risk(*, eps0: float, eps: float, gamma: float, n: int, delta: float) -> float:
    """Thm 9: eps' = eps0 sqrt(2 n ln(1/delta)) + n mu, mu = gamma eps (e^eps - 1) + (1-gamma) eps0 (e^eps0 - 1).

    Assumes independent, non-adaptive runs (as the theorem does); gamma = 0 is advanced composition,
    :func:`ppk.related.dp.compose_advanced` with ``k = n``, ``delta = 0``, ``delta_prime = delta``.
    """
    eps, eps0 = _eps_pair(eps, eps0)
    gamma = real("gamma", gamma, minimum=0.0, maximum=1.0)
    n = integer("n", n, minimum=1)
    delta = real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    # log_quotient: log(1 / 5e-324) is log(inf), the bound is finite
    out = eps0 * math.sqrt(2 * n * log_quotient(1.0, delta)) + n * _mu(eps0, eps, gamma)
    if not math.isfinite(out):
        raise ValueError(f"eps' overflows the float range at eps0 = {eps0!r}, eps = {eps!r}, gamma = {gamma!r}, "
                         f"n = {n}: n (e^eps0 - 1) eps0 is beyond the floats")
    return out


def crossover(*, eps0: float, delta: float, eps: float | None = None, gamma: float = 0.0) -> float:
    """Smallest n from which advanced (gamma=0) or privacy-at-risk composition beats basic n eps0.

    eps0 sqrt(2 n ln(1/delta)) + n mu < n eps0  <=>  n > 2 eps0^2 ln(1/delta) / (eps0 - mu)^2  (needs mu < eps0);
    inf when mu >= eps0 (never).
    """
    eps0 = _eps0(eps0)
    eps = eps0 if eps is None else eps
    eps, eps0 = _eps_pair(eps, eps0)
    delta = real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    mu = _mu(eps0, eps, real("gamma", gamma, minimum=0.0, maximum=1.0))
    if mu >= eps0:
        return math.inf
    n = 2 * eps0**2 * log_quotient(1.0, delta) / (eps0 - mu) ** 2 if eps0 - mu > 1e-150 else math.inf
    return math.floor(n) + 1 if n < 2.0**63 else math.inf


def eps_lower_bound_from_mae(*, max_mae: float, sensitivity: float = 1.0) -> float:
    """Laplace's mean absolute error is sensitivity/eps0 (Eq. 12): MAE <= T needs eps0 >= sensitivity/T."""
    sensitivity = real("sensitivity", sensitivity, minimum=0.0, min_inclusive=False)
    max_mae = real("max_mae", max_mae, minimum=0.0, min_inclusive=False)
    out = sensitivity / max_mae
    if not math.isfinite(out):
        raise ValueError(f"max_mae = {max_mae!r} is too small for sensitivity = {sensitivity!r}: "
                         "sensitivity / max_mae overflows the float range")
    return out


@dataclass(frozen=True)
class OptimalPaR:
    eps: float          #: the privacy-at-risk level that minimises the compensation
    gamma: float        #: its confidence gamma1(eps; eps0)
    budget: float       #: total compensation at (eps, gamma) for all stakeholders
    budget_dp: float    #: total compensation for plain eps0-DP
    saving: float       #: budget_dp - budget


@dataclass(frozen=True)
class CostModel:
    """Compensation per stakeholder E_dp(eps) = E_min + E exp(-c/eps) (Eq. 8); privacy at risk
    E_par = gamma E_dp(eps) + (1 - gamma) E_dp(eps0) (Eq. 9); totals are times ``n_stakeholders``."""

    E: float
    c: float = 1.0
    E_min: float = 0.0
    n_stakeholders: int = 1

    def __post_init__(self):
        real("E", self.E, minimum=0.0, min_inclusive=False)
        real("c", self.c, minimum=0.0, min_inclusive=False)
        real("E_min", self.E_min, minimum=0.0)
        integer("n_stakeholders", self.n_stakeholders, minimum=1)

    def dp(self, eps: float) -> float:
        eps = real("eps", eps, minimum=0.0, min_inclusive=False)
        return self.n_stakeholders * (self.E_min + self.E * math.exp(-self.c / eps))

    def par(self, eps: float, gamma: float, eps0: float) -> float:
        eps, eps0 = _eps_pair(eps, eps0)
        gamma = real("gamma", gamma, minimum=0.0, maximum=1.0)
        return gamma * self.dp(eps) + (1 - gamma) * self.dp(eps0) if eps > 0 else (1 - gamma) * self.dp(eps0) + \
            gamma * self.n_stakeholders * self.E_min

    def optimal(self, eps0: float, k: int = 1) -> OptimalPaR:
        """Minimise E_par(eps, gamma1(eps; eps0, k)) over eps in (0, eps0] (Eq. 10 and its general-k form).

        Root of f_T(eps)(e^{-c/eps} - e^{-c/eps0}) + F_T(eps) c e^{-c/eps}/eps^2 by bracketed root finding,
        cross-checked with bounded minimisation (the paper's convexity claim fails for eps0 >= 2, docs/related.md).
        """
        # below 1e-9 the slope's e^{-c/eps} underflows long before eps reaches 0
        eps0 = real("eps0", eps0, minimum=1e-9, maximum=EPS_MAX_CLOSED_FORM)
        t = BesselK(k)
        c = self.c

        def slope(e):
            return t.pdf(e) * (math.exp(-c / e) - math.exp(-c / eps0)) + t.cdf(e) * c * math.exp(-c / e) / (e * e)

        lo = eps0 * 1e-3
        while slope(lo) >= 0 and lo > 1e-12:
            lo /= 10
        eps = optimize.brentq(slope, lo, eps0, xtol=1e-14, rtol=1e-14)

        def cost(e):
            return self.par(e, confidence(eps=e, eps0=eps0, k=k), eps0)
        check = optimize.minimize_scalar(cost, bounds=(lo, eps0), method="bounded", options=dict(xatol=1e-10))
        if cost(check.x) < cost(eps) * (1 - 1e-9):   # a second, lower local minimum: take it
            eps = float(check.x)
        gamma = confidence(eps=eps, eps0=eps0, k=k)
        budget, budget_dp = cost(eps), self.dp(eps0)
        return OptimalPaR(eps=eps, gamma=gamma, budget=budget, budget_dp=budget_dp, saving=budget_dp - budget)

    def eps_upper_bound(self, *, budget: float, gamma: float, eps0: float) -> float:
        """Largest eps with E_par(eps, gamma; eps0) <= budget (Eq. 11, general c and E_min); inf if any eps fits."""
        budget = real("budget", budget, minimum=0.0)
        gamma = real("gamma", gamma, minimum=0.0, maximum=1.0, min_inclusive=False)
        eps0 = real("eps0", eps0, minimum=0.0, min_inclusive=False)
        per = budget / self.n_stakeholders
        room = per - (1 - gamma) * (self.E_min + self.E * math.exp(-self.c / eps0)) - gamma * self.E_min
        if room <= 0:
            raise ValueError("infeasible: the budget does not even cover the eps0 part")
        arg = gamma * self.E / room
        return math.inf if arg <= 1 else self.c / math.log(arg)
