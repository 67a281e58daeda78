"""Privacy loss distributions with certified [lower, upper] brackets, and the accountant that composes a
release plan (docs/accuracy.md, "Composition").

The modules, each importing only those listed before it (no import circle):

* ``_convolution`` -- convolution of mass vectors with a certified error bound;
* ``_masses`` -- the mass vectors of one representation: merging, truncation, the two-point split;
* ``_bracket`` -- the two ends of delta(eps) read off both representations;
* ``mechanisms`` -- builders: two pmfs, the Gaussian and Laplace mechanisms, buckets from loss tails;
* ``curves`` -- the PLD of any query's privacy curve (exact tails, or connect-the-dots);
* ``interop`` -- conversion to and from Google's dp_accounting, the privacy profile;
* ``distribution`` -- :class:`PrivacyLossDistribution`: its builders, bracket, composition;
* ``accountant`` -- :class:`Accountant`: a plan of releases composed into one curve.
"""
from __future__ import annotations

from ._convolution import EXACT_MAX_WORK, EXACT_WORK_LIMIT
from ._masses import MAX_BUILD_BUCKETS, MIN_MAX_BUCKETS
from .accountant import Accountant
from .distribution import MAX_SELF_COMPOSE_WORK, PrivacyLossDistribution

# the public classes live at the package's path (their documentation, reprs and pickles name ppk.pld)
PrivacyLossDistribution.__module__ = __name__
Accountant.__module__ = __name__

__all__ = ["PrivacyLossDistribution", "Accountant", "MAX_SELF_COMPOSE_WORK", "MAX_BUILD_BUCKETS", "MIN_MAX_BUCKETS",
           "EXACT_MAX_WORK", "EXACT_WORK_LIMIT"]
