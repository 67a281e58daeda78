"""Hypergeometric probabilities over the whole support (thesis Lemma 5.1, Cor. 5.2)."""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

from . import _kernels
from ._validate import flag, integer
from ._typing import FloatArray

__all__ = ["hypergeom_pmf", "MAX_SUPPORT"]

#: Largest support returned at once (1.6 GB of float64).
MAX_SUPPORT = 200_000_000


def hypergeom_pmf(*, population: int, successes: int, draws: int, log: bool = False) -> tuple[npt.NDArray[np.int64], FloatArray]:
    """The hypergeometric pmf over its whole support at once.

    ``h`` successes in ``draws`` draws without replacement from ``population``
    items of which ``successes`` are successes: ``C(successes, h) C(population -
    successes, draws - h) / C(population, draws)`` -- in scipy's terms
    ``scipy.stats.hypergeom(M=population, n=successes, N=draws)``.

    Returns ``(support, pmf)`` (or ``(support, logpmf)`` with ``log=True``):
    ``support`` is the int64 array ``max(0, draws - population + successes) ...
    min(draws, successes)``.  Method: Loader's saddle-point form anchors blocks
    of 128 values and the exact ratio recurrence fills them, in long double, on
    all cores: ~1e-16 relative accuracy, one ``log`` per value.
    """
    population = integer("population", population, minimum=1)
    successes = integer("successes", successes, minimum=0, maximum=population)
    draws = integer("draws", draws, minimum=0, maximum=population)
    log = flag("log", log)
    size = min(draws, successes) - max(0, draws - (population - successes)) + 1
    if size > MAX_SUPPORT:
        raise ValueError(f"the support has {size} values, more than MAX_SUPPORT={MAX_SUPPORT}; "
                         "evaluate a part of it with scipy.stats.hypergeom instead")
    first, logpmf = _kernels.hypergeom_logpmf(population, successes, draws)
    support = np.arange(first, first + logpmf.size, dtype=np.int64)
    return support, (logpmf if log else np.exp(logpmf))
