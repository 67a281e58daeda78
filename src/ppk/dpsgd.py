"""DP-SGD in one call: the certified eps of a training run, and the least noise multiplier for a target eps
(docs/dpsgd.md).

A DP-SGD run of ``steps`` steps, each over a Poisson sample of the rows (each row in with probability
``sampling_rate``) with Gaussian noise of ``noise_multiplier`` times the clipping norm, is ``steps`` runs of
the Poisson-subsampled Gaussian mechanism of sensitivity 1 and sigma = ``noise_multiplier``: one
:meth:`ppk.Accountant.add_subsampled_gaussian` (the same PLD as ``ppk compose --subsampled-gaussian`` and as
a dp_accounting ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), steps)``), composed
with the certified bracket of :class:`ppk.PrivacyLossDistribution`: the eps reported is never below the
true eps of the run.
"""
from __future__ import annotations

import math

from ._search import smallest_feasible_near
from ._validate import choice, integer, real
from .pld import Accountant
from .pld.subsampled import ADJACENCIES

__all__ = ["dpsgd_epsilon", "dpsgd_noise_multiplier"]

#: The default loss grid: dp_accounting's.  At q = 0.01, 1000 steps one eps takes ~0.1 s of CPU; a finer grid
#: moves eps by less than 1e-4 relative there (docs/dpsgd.md, "The grid").
DEFAULT_INTERVAL = 1e-4
#: The search's noise multipliers lie in [MIN_SIGMA, MAX_SIGMA]: below, one step's loss spans more than the
#: builders' 2^20 buckets hold at any useful grid; above, the run is private at any eps the grid resolves.
MIN_SIGMA, MAX_SIGMA = 1e-3, 1e6
#: The largest target eps: beyond it a guarantee promises nothing, and the runs the search evaluates (small
#: noise, wide losses) take ~2 s each.  At 50, q = 0.01, 1000 steps, the search takes ~10 s of CPU.
MAX_EPSILON = 50.0
#: The grids allowed.  Wider than 1, eps is reported far above the truth (and the bracket's error terms
#: overflow far beyond it); finer than 1e-6, a step's builder coarsens the grid to its 2^20 buckets anyway
#: (at q = 0.01, sigma = 1.1 to ~3e-5) after filling them, and the search pays for it at every evaluation.
MIN_INTERVAL, MAX_INTERVAL = 1e-6, 1.0


def _run(noise_multiplier: float, sampling_rate: float, steps: int, interval: float, adjacency: str) -> Accountant:
    return Accountant(value_discretization_interval=interval).add_subsampled_gaussian(
        sigma=noise_multiplier, sampling_prob=sampling_rate, times=steps, adjacency=adjacency)


def _common(sampling_rate: object, steps: object, delta: object, interval: object,
            adjacency: object) -> tuple[float, int, float, float, str]:
    return (real("sampling_rate", sampling_rate, minimum=0.0, maximum=1.0, min_inclusive=False),
            integer("steps", steps, minimum=1),
            real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False),
            real("value_discretization_interval", interval, minimum=MIN_INTERVAL, maximum=MAX_INTERVAL),
            choice("adjacency", adjacency, ADJACENCIES))


def _epsilon(sigma: float, q: float, steps: int, delta: float, dx: float, adjacency: str) -> float:
    """The certified eps, library errors re-worded in this function's parameter names and said for the run."""
    try:
        return _run(sigma, q, steps, dx, adjacency).epsilon(delta)
    except ValueError as exc:
        message = str(exc)
        for library, ours in (("standard_deviation", "noise_multiplier"), ("sigma", "noise_multiplier"),
                              ("sampling_prob", "sampling_rate"), ("num_times", "steps"), ("times", "steps")):
            message = message.replace(library, ours)
        raise ValueError(f"the run at noise_multiplier = {sigma:g}, sampling_rate = {q:g}, steps = {steps}: "
                         f"{message}") from None


def dpsgd_epsilon(*, noise_multiplier: float, sampling_rate: float, steps: int, delta: float,
                  value_discretization_interval: float = DEFAULT_INTERVAL, adjacency: str = "add_or_remove") -> float:
    """The certified eps at ``delta`` of a DP-SGD run: ``steps`` steps, each on a Poisson sample (every row
    in with probability ``sampling_rate``) with Gaussian noise of ``noise_multiplier`` times the clipping norm.

    Never below the run's true eps (the privacy loss distribution's certified upper end, rounded up);
    ``inf`` when no eps reaches ``delta``.  ``adjacency``: ``"add_or_remove"`` (one row added or removed,
    the larger of both; as dp_accounting, Opacus and jax_privacy), ``"remove"`` or ``"add"`` alone.

    Time: about 0.1 s of CPU at sampling_rate 0.01, 1000 steps and the default grid (1e-4, dp_accounting's):
    the step's tails are cut as deep as ``delta`` needs, e^-50 (dp_accounting's cut) for every usual delta
    (docs/dpsgd.md, "The tails").  A plan whose composed loss would not fit the FFT is refused with a
    ValueError, not run for minutes.

    >>> round(dpsgd_epsilon(noise_multiplier=1.1, sampling_rate=0.01, steps=1000, delta=1e-5), 4)
    1.5154
    """
    sigma = real("noise_multiplier", noise_multiplier, minimum=0.0, min_inclusive=False)
    q, steps, delta, dx, adjacency = _common(sampling_rate, steps, delta, value_discretization_interval, adjacency)
    return _epsilon(sigma, q, steps, delta, dx, adjacency)


def _gdp_guess(epsilon: float, delta: float, q: float, steps: int) -> float:
    """A first noise multiplier from the central limit theorem (Dong, Roth and Su's mu-GDP of Poisson-
    subsampled Gaussian steps, mu = q sqrt(T (e^{1/sigma^2} - 1))): only where the search starts, never
    the answer (every answer's eps is evaluated with the certified bracket)."""
    def gdp_delta(mu: float) -> float:    # delta(eps) of mu-GDP, increasing in mu
        def phi(x: float) -> float:
            return 0.5 * math.erfc(-x / math.sqrt(2.0))
        a = phi(-epsilon / mu + mu / 2)
        b = math.exp(min(epsilon, 700.0)) * phi(-epsilon / mu - mu / 2)
        return a - b
    lo, hi = 1e-6, 1e3
    for _ in range(100):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if gdp_delta(mid) < delta else (lo, mid)
    x = (lo / q) ** 2 / steps
    guess = 1.0 / math.sqrt(math.log1p(x)) if x > 0 else MAX_SIGMA
    return min(max(guess, MIN_SIGMA), MAX_SIGMA)


def dpsgd_noise_multiplier(*, epsilon: float, delta: float, sampling_rate: float, steps: int,
                           value_discretization_interval: float = DEFAULT_INTERVAL, rtol: float = 1e-3,
                           adjacency: str = "add_or_remove") -> float:
    """The smallest noise multiplier (to ``rtol``, relative) whose DP-SGD run (``steps`` steps at
    ``sampling_rate``, as :func:`dpsgd_epsilon`) is (``epsilon``, ``delta``)-DP, certified: the value
    returned had its certified eps evaluated (:func:`dpsgd_epsilon` with the same arguments) and found
    <= ``epsilon``, so it is never below the noise the target needs; it exceeds the least such noise by
    at most ``rtol`` relative (and by the grid's slack).

    The search (ppk._search: regula falsi safeguarded by bisection) starts from the central limit
    theorem's estimate and evaluates about 6 runs, all at one delta (so one tail cut, docs/dpsgd.md "The
    tails"): 0.3-0.8 s of CPU at sampling_rate 0.01, 1000 steps, eps 1-1.5 and the default grid (2 s at eps 8,
    ~10 s at 50, whose runs have wider losses).  ``epsilon`` above 50 is
    refused (it promises nothing), and so is a target no noise multiplier up to 1e6 certifies.

    >>> sigma = dpsgd_noise_multiplier(epsilon=2.0, delta=1e-5, sampling_rate=0.01, steps=100)
    >>> dpsgd_epsilon(noise_multiplier=sigma, sampling_rate=0.01, steps=100, delta=1e-5) <= 2.0
    True
    """
    target = real("epsilon", epsilon, minimum=0.0, maximum=MAX_EPSILON, min_inclusive=False)
    q, steps, delta, dx, adjacency = _common(sampling_rate, steps, delta, value_discretization_interval, adjacency)
    rtol = real("rtol", rtol, minimum=1e-12, maximum=0.5)
    # with no noise at all the run reveals only whether the row was ever sampled: delta(0) is that
    # probability, 1 - (1 - q)^steps, so at a delta above it every noise multiplier, however small, qualifies
    ever_sampled = -math.expm1(steps * math.log1p(-q)) if q < 1.0 else 1.0
    if delta >= ever_sampled * (1 + 1e-12):
        raise ValueError(f"delta = {delta:g} is at least the probability {ever_sampled:.6g} that a row is ever "
                         f"sampled in {steps} steps at sampling_rate {q:g}: any noise multiplier, however small, "
                         "meets it (no noise is needed); a smaller delta")

    refusals: list[str] = []

    def excess(sigma: float) -> float:   # non-increasing in sigma; feasible where <= 0
        if sigma < MIN_SIGMA:
            return 1e300        # below the search's range: counted infeasible (the answer only moves up)
        try:
            e = _epsilon(sigma, q, steps, delta, dx, adjacency)
        except ValueError as exc:   # a loss too wide for the grid or the FFT: infeasible here, never returned
            refusals.append(f"at noise_multiplier {sigma:.4g}: {exc}")
            return 1e300
        return e - target if math.isfinite(e) else 1e300

    guess = _gdp_guess(target, delta, q, steps)
    found = smallest_feasible_near(excess, guess, 0.05 * guess, upper=MAX_SIGMA, rtol=rtol)
    if found is None or found.x < MIN_SIGMA:
        why = (f"the run was refused {refusals[-1]}" if refusals and refusals[-1].startswith(f"at noise_multiplier "
               f"{MAX_SIGMA:.4g}") else "the grid's own slack exceeds it; a finer value_discretization_interval or "
               "a larger epsilon")
        raise ValueError(f"epsilon = {target:g}: no noise multiplier up to {MAX_SIGMA:g} certifies it at delta = "
                         f"{delta:g} with steps = {steps} on the grid value_discretization_interval = {dx:g}: {why}")
    return found.x
