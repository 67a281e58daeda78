"""Measure, on this machine, whether a sampler's running time reveals the value it draws.

ppk's samplers do the same work for every draw at a given scale (same random words, same
loop iterations; ``tests/test_samplers.py`` counts them).  What remains is the machine: cache
and big-integer arithmetic whose cost may vary a little with the numbers involved.  This
module times many draws and reports Spearman's rank correlation between ``|draw|`` and the
time a draw took -- the statistic of the timing attack of Jin et al. (S&P 2022), where
rejection samplers showed 0.2-0.5 -- and between the signed draw and the time (an effect of
the sign alone is invisible to the first).  ``ppk samplers timing`` prints both (docs/samplers.md).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from . import samplers
from ._random import as_source
from ._validate import choice, integer, real
from ._typing import RngLike

__all__ = ["TimingReport", "measure_timing", "SAMPLERS", "MAX_TIMING_SCALE"]

#: The largest scale measure_timing takes.  A draw's work grows with log2(scale) (docs/samplers.md): at 1e17
#: a rounded-Gaussian draw evaluates 57 normal series (~25 ms), 2000 draws about a minute; at the samplers'
#: own MAX_SCALE = 2**128 the measurement would run for many minutes, so it is refused before any draw.
MAX_TIMING_SCALE = 2.0 ** 60

#: The samplers a release can use, by the name ``release(noise=...)`` gives them.
SAMPLERS = {"gaussian": samplers.rounded_gaussian, "discrete_gaussian": samplers.discrete_gaussian,
            "discrete_laplace": samplers.discrete_laplace}


@dataclass(frozen=True)
class TimingReport:
    noise: str
    scale: float
    draws: int
    spearman: float             #: rank correlation of abs(draw) and the draw's time, in [-1, 1]
    pvalue: float               #: two-sided p-value of spearman under independence (large-sample normal)
    spearman_signed: float      #: rank correlation of the signed draw and the draw's time
    pvalue_signed: float        #: its p-value
    median_seconds: float       #: median time of one draw
    spread: float               #: (90th - 10th percentile) / median of the draw times

    @property
    def detected(self) -> bool:
        """True when either correlation is significant at 1e-3 (each tested at 5e-4)."""
        return min(self.pvalue, self.pvalue_signed) <= 5e-4

    def summary(self) -> str:
        verdict = ("DEPENDENCE DETECTED: the time of a draw carries information about its value" if self.detected
                   else "no detectable dependence")
        return (f"{self.noise} sampler, scale {self.scale:g}, {self.draws} draws: Spearman rho(|draw|, time) = "
                f"{self.spearman:+.4f} (p = {self.pvalue:.3g}), rho(draw, time) = {self.spearman_signed:+.4f} "
                f"(p = {self.pvalue_signed:.3g}); median {self.median_seconds * 1e6:.1f} us per draw, "
                f"spread {self.spread:.2f} of the median: {verdict}")


def _ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks (ties share the mean of their positions)."""
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x))
    sorted_x = x[order]
    start = 0
    for end in range(1, len(x) + 1):
        if end == len(x) or sorted_x[end] != sorted_x[start]:
            ranks[order[start:end]] = 0.5 * (start + end - 1)
            start = end
    return ranks


def _spearman(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    ra, rb = _ranks(a), _ranks(b)
    if ra.std() == 0 or rb.std() == 0:
        return 0.0, 1.0
    rho = float(np.corrcoef(ra, rb)[0, 1])
    # under independence rho * sqrt(n - 1) is approximately standard normal
    z = abs(rho) * math.sqrt(len(a) - 1)
    return rho, math.erfc(z / math.sqrt(2))


def measure_timing(noise: str = "gaussian", *, scale: float = 3.0, draws: int = 2000,
                   rng: RngLike = None) -> TimingReport:
    """Time ``draws`` draws of one sampler and correlate the time with ``|draw|``.

    Parameters
    ----------
    noise : "gaussian" | "discrete_gaussian" | "discrete_laplace"
        The sampler, named as in :func:`ppk.release`.
    scale : float, 0 < scale <= MAX_TIMING_SCALE (2**60)
        sigma (Gaussian laws) or scale (Laplace), in counts.
    draws : int, 100 .. 1_000_000
        How many draws to time (after one untimed draw that builds the scale's tables).
    rng : None, int or numpy.random.Generator
        None (default): the CSPRNG, as a release uses.
    """
    choice("noise", noise, sorted(SAMPLERS))
    draws = integer("draws", draws, minimum=100, maximum=1_000_000)
    real("scale", scale, minimum=0.0, maximum=MAX_TIMING_SCALE, min_inclusive=False)
    sampler = SAMPLERS[noise]
    src = as_source(rng)
    sampler(scale, rng=src)                       # validates scale and builds the per-scale tables
    values = np.empty(int(draws))
    seconds = np.empty(int(draws))
    clock = time.perf_counter_ns
    for i in range(int(draws)):
        t0 = clock()
        v = sampler(scale, rng=src)
        seconds[i] = (clock() - t0) * 1e-9
        values[i] = float(v)
    rho, p = _spearman(np.abs(values), seconds)
    rho_signed, p_signed = _spearman(values, seconds)
    median = float(np.median(seconds))
    lo, hi = np.percentile(seconds, [10, 90])
    return TimingReport(noise, float(scale), int(draws), rho, p, rho_signed, p_signed, median,
                        float((hi - lo) / median))
