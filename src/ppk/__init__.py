"""ppk: differential privacy under partial background knowledge.

The attacker knows only some rows of the database; the rows they do not know act as natural
noise.  Every release ppk models is a privacy curve delta(eps) -- a count (:class:`CountingQuery`),
any natural plus any added noise (:class:`NoisyQuery`, the laws of :mod:`ppk.noise`), a histogram
(:class:`HistogramQuery`), counts over overlapping groups (:class:`OverlappingCounts`) -- and on that
one protocol ppk finds the least noise (:func:`calibrate`, one :class:`Calibration`; the thesis's
:func:`alg1` and :func:`alg2`), releases (:func:`release`), composes (:class:`PrivacyLossDistribution`,
:class:`Accountant`) and draws (:func:`plot_privacy_curve`).  docs/architecture.md shows the house.

Submodules load on first use (``ppk.baselines``, ``ppk.samplers``, ``ppk.related.risk``, ...),
so ``ppk.<module>.<function>`` works without a separate import.  The reproductions of the related
papers live in :mod:`ppk.related`.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._random import InsecureRandomnessWarning
from .algorithm1 import alg1
from .algorithm2 import alg2
from .calibration import Calibration, calibrate
from .counting import CountingQuery
from .histogram import HistogramQuery
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
         "algorithm1", "algorithm2", "records", "histogram", "overlapping")

__all__ = ["CountingQuery", "NoisyQuery", "HistogramQuery", "OverlappingCounts", "calibrate", "Calibration", "alg1",
           "alg2", "release", "Release", "PrivacyLossDistribution", "Accountant", "plot_privacy_curve",
           "InsecureRandomnessWarning", "ExposureWarning", "noise", "__version__"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
