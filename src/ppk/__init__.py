"""ppk: differential privacy under partial background knowledge.

The attacker knows only some rows of the database; the rows they do not know
act as natural noise.  ppk computes the exact privacy curve of a noisy count
under this model (:class:`CountingQuery`), and the noise it needs.
"""
from __future__ import annotations

from . import baselines, samplers
from ._random import InsecureRandomnessWarning
from .algorithm1 import Alg1Result, alg1
from .algorithm2 import Alg2Result, PrivateDraws, alg2
from .release import Release, release
from .counting import MAX_ROWS, CountingQuery
from .hypergeom import hypergeom_pmf
from .pld import PrivacyLossDistribution

__version__ = "0.1.0"

__all__ = ["CountingQuery", "MAX_ROWS", "hypergeom_pmf", "alg1", "Alg1Result", "alg2", "Alg2Result",
           "release", "Release", "PrivateDraws", "InsecureRandomnessWarning", "baselines", "samplers", "PrivacyLossDistribution", "__version__"]
