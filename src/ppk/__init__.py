"""ppk: differential privacy under partial background knowledge.

The attacker knows only some rows of the database; the rows they do not know act as natural
noise.  Every release ppk models is a privacy curve delta(eps) -- a count (:class:`CountingQuery`),
any natural plus any added noise (:class:`NoisyQuery`, the laws of :mod:`ppk.noise`), a histogram
(:class:`HistogramQuery`), counts over overlapping groups (:class:`OverlappingCounts`), a whole plan of
counts over one table (:class:`TablePlan`) -- and on that
one protocol ppk finds the least noise (:func:`calibrate`, one :class:`Calibration`; the thesis's
:func:`alg1` and :func:`alg2`), releases (:func:`release`), composes (:class:`PrivacyLossDistribution`,
:class:`Accountant`) and draws (:func:`plot_privacy_curve`).  docs/architecture.md shows the house.

The names above and the submodules (``ppk.baselines``, ``ppk.samplers``, ``ppk.related.risk``, ...)
load on first use, so ``import ppk`` is quick and ``ppk.<module>.<function>`` works without a separate
import.  The reproductions of the related papers live in :mod:`ppk.related`.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:   # for type checkers and IDEs; at run time these load on first use (PEP 562)
    from . import baselines, evaluation, figures, noise, related, samplers
    from ._random import InsecureRandomnessWarning
    from .algorithm1 import alg1
    from .algorithm2 import alg2
    from .calibration import Calibration, calibrate
    from .counting import CountingQuery
    from .dpsgd import dpsgd_epsilon, dpsgd_noise_multiplier
    from .histogram import HistogramQuery
    from .noisy_query import NoisyQuery
    from .overlapping import ExposureWarning, OverlappingCounts
    from .plotting import plot_privacy_curve
    from .pld import Accountant, PrivacyLossDistribution
    from .release import Release, release
    from .shuffle import ShuffledRandomizedResponse
    from .table_plan import TablePlan

#: Each public name -> the submodule that defines it.  Nothing loads before a name is used, so
#: ``import ppk`` and ``ppk --version`` load neither numpy nor the C++ core (docs/architecture.md).
#: A new export: an entry here and its import above (tests/test_import_light.py checks they agree).
_EXPORTS = {
    "CountingQuery": "counting", "NoisyQuery": "noisy_query", "HistogramQuery": "histogram",
    "OverlappingCounts": "overlapping", "calibrate": "calibration", "Calibration": "calibration",
    "alg1": "algorithm1", "alg2": "algorithm2", "release": "release", "Release": "release",
    "PrivacyLossDistribution": "pld", "Accountant": "pld", "plot_privacy_curve": "plotting",
    "InsecureRandomnessWarning": "_random", "ExposureWarning": "overlapping",
    "ShuffledRandomizedResponse": "shuffle", "TablePlan": "table_plan",
    "dpsgd_epsilon": "dpsgd", "dpsgd_noise_multiplier": "dpsgd",
}

__all__ = [*_EXPORTS, "noise", "__version__"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
        globals()[name] = value     # bound: later uses skip this function
        return value
    # any submodule (ppk.baselines, ppk.samplers, ppk.related, ...) loads on first attribute access
    if name.isidentifier() and not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}"):
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    import pkgutil
    submodules = {m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")}
    return sorted(set(globals()) | set(_EXPORTS) | submodules)


class _Package(types.ModuleType):
    """ppk's module type.  Importing a submodule binds it on the package; ``ppk.release`` names the
    function, not the submodule ppk.release that defines it, whichever of the two loads first."""

    def __setattr__(self, name: str, value: Any) -> None:
        if not (name in _EXPORTS and isinstance(value, types.ModuleType)):
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
