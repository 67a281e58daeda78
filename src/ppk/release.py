"""The noisy release itself: calibrate with Algorithm 2, then add the noise.

Why the output does not leak the count through floating point: the noise is
sampled on its own as an *integer* K = round(sigma Z) and added to the integer
count in integer arithmetic, so the released value is ``count + K`` with K
independent of the count (Mironov's attack on floating-point Laplace noise
needs the float grid of ``count + noise`` to depend on the count; here there
is no float in the output).  Rounding is post-processing of the Gaussian
mechanism, so the calibrated (eps, delta) holds for the rounded release (spec
§1.5: delta_round <= delta_continuous).  Z is drawn by inverting the normal
tail at a uniform with extra resolution near 0, exact in law down to 1e-300,
from a cryptographically secure source unless a seed/Generator is given.
"""
from __future__ import annotations

from dataclasses import dataclass

from ._random import as_source
from .algorithm2 import Alg2Result, _count_and_n, alg2

__all__ = ["release", "Release"]


@dataclass(frozen=True)
class Release:
    value: int                  #: the noisy count to publish
    calibration: Alg2Result     #: how the noise was chosen; publish ``calibration.ledger()``, never the rest

    def public(self) -> dict:
        """What may be published: the value and the ledger."""
        return dict(value=self.value, ledger=self.calibration.ledger())


def release(*, data=None, count=None, n=None, known, eps, delta, kappa1=0.0, kappa2=None, kappa3=None,
            hoeffding: str = "additive", rng=None) -> Release:
    """Release ``count + round(N(0, sigma^2))`` with sigma from :func:`ppk.alg2` (same arguments).

    ``rng=None`` (default) uses a cryptographically secure source for both the
    Laplace estimate and the Gaussian noise; a seed or Generator makes it reproducible.
    """
    c, n_rows = _count_and_n(data, count, n)
    source = as_source(rng)
    cal = alg2(count=c, n=n_rows, known=known, eps=eps, delta=delta, kappa1=kappa1, kappa2=kappa2,
               kappa3=kappa3, hoeffding=hoeffding, rng=source)
    return Release(value=c + source.rounded_gaussian(cal.sigma), calibration=cal)
