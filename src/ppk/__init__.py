"""ppk: differential privacy under partial background knowledge.

The attacker knows only some rows of the database; the rows they do not know act as natural
noise.  ppk computes the exact privacy curve of a noisy count under this model
(:class:`CountingQuery`; any natural and added noise: :class:`NoisyQuery` with the laws of
:mod:`ppk.noise`; histograms and overlapping counts with shared natural noise: :class:`HistogramQuery`,
:class:`OverlappingCounts`), the noise it needs (:func:`alg1`, :func:`alg2`, :func:`calibrate`), a secure release
(:func:`release`) and privacy-loss distributions for composition
(:class:`PrivacyLossDistribution`).

Submodules load on first use (``ppk.baselines``, ``ppk.samplers``, ``ppk.related.risk``, ...),
so ``import ppk`` stays fast and ``ppk.<module>.<function>`` works without a separate import.
The reproductions of the related papers live in :mod:`ppk.related`.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._random import InsecureRandomnessWarning
from .algorithm1 import Alg1Result, alg1
from .algorithm2 import Alg2Result, PrivateDraws, alg2
from .counting import MAX_ROWS, CountingQuery
from .histogram import HistogramQuery, calibrate_histogram, release_histogram
from .hypergeom import hypergeom_pmf
from .calibration import Calibration, calibrate
from .noisy_query import NoisyQuery
from .overlapping import ExposureWarning, OverlappingCounts
from .plotting import plot_privacy_curve
from .pld import Accountant, PrivacyLossDistribution
from .release import Release, release

if TYPE_CHECKING:   # for type checkers and IDEs; at run time these load lazily (PEP 562)
    from . import baselines, evaluation, figures, noise, related, samplers

__version__ = "0.1.0"

#: Submodules loaded on first attribute access.
_LAZY = ("baselines", "samplers", "noise", "related", "evaluation", "figures", "hypergeom", "pld", "counting",
         "algorithm1", "algorithm2")

__all__ = ["CountingQuery", "MAX_ROWS", "hypergeom_pmf", "alg1", "Alg1Result", "alg2", "Alg2Result",
           "release", "Release", "PrivateDraws", "InsecureRandomnessWarning", "PrivacyLossDistribution", "Accountant",
           "NoisyQuery", "calibrate", "Calibration", "HistogramQuery", "calibrate_histogram", "release_histogram",
           "OverlappingCounts", "ExposureWarning", "plot_privacy_curve", "noise", "baselines", "samplers", "related", "__version__"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
