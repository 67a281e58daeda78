"""The noisy release itself: calibrate with Algorithm 2, then add the noise.

Why the output cannot leak the count through floating point (docs/release-security.md):
every published number that depends on the data comes from an exact integer mechanism.
The count estimate that Algorithm 2 publishes is ``count + Y`` with ``Y`` discrete
Laplace, and the released value is ``count + K`` with ``K = round(sigma Z)`` drawn
*exactly* (:func:`ppk.samplers.rounded_gaussian`: no float is involved, so its low bits
are right for every sigma).  Rounding is post-processing of the Gaussian mechanism, so
the calibrated (eps, delta) holds for the rounded release.  Randomness comes from the
operating system's CSPRNG unless a seed is given -- which warns and marks the result.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, overload

import numpy.typing as npt

from ._random import as_source, warn_if_seeded
from .algorithm2 import Alg2Result, PrivateDraws, _Added, _run, _validated
from ._typing import RngLike
from .samplers import discrete_gaussian, discrete_laplace, rounded_gaussian

__all__ = ["release", "Release"]


@dataclass(frozen=True)
class Release:
    value: int                  #: the noisy count to publish
    calibration: Alg2Result     #: how the noise was chosen; publish ``calibration.ledger()``, never the rest

    @property
    def insecure_for_testing(self) -> bool:
        """True when seeded randomness was used: reproducible, hence NOT a private release."""
        return self.calibration.insecure_for_testing

    def public(self) -> dict:
        """What may be published: the value, the noise law, the ledger, and a notice when no noise was added."""
        law = self.calibration.law
        out = dict(value=self.value, noise="rounded_gaussian" if law == "gaussian" else law,
                   ledger=self.calibration.ledger())
        if self.insecure_for_testing:
            out["warning"] = "NOT PRIVATE: seeded randomness (for tests only); the noise can be reproduced"
        if self.calibration.sigma == 0:
            out["notice"] = ("no noise was added: the value is the exact count, private only against an attacker "
                             f"who knows at most {self.calibration.known} rows (natural noise alone suffices)")
        return out


@overload
def release(*, data: npt.ArrayLike | None = ..., count: int | None = ..., n: int | None = ..., known: int, eps: float,
            delta: float, kappa1: float = ..., kappa2: float | None = ..., kappa3: float | None = ...,
            hoeffding: str = ..., rng: RngLike = ..., audit: Literal[False] = ..., noise: str = ...) -> Release: ...
@overload
def release(*, data: npt.ArrayLike | None = ..., count: int | None = ..., n: int | None = ..., known: int, eps: float,
            delta: float, kappa1: float = ..., kappa2: float | None = ..., kappa3: float | None = ...,
            hoeffding: str = ..., rng: RngLike = ..., audit: Literal[True],
            noise: str = ...) -> tuple[Release, PrivateDraws]: ...
def release(*, data: npt.ArrayLike | None = None, count: int | None = None, n: int | None = None, known: int,
            eps: float, delta: float, kappa1: float = 0.0, kappa2: float | None = None, kappa3: float | None = None,
            hoeffding: str = "additive", rng: RngLike = None, audit: bool = False,
            noise: str = "gaussian") -> Release | tuple[Release, PrivateDraws]:
    """Release ``count + round(sigma Z)`` with sigma from :func:`ppk.alg2` (same arguments).

    ``noise="discrete_gaussian"`` or ``"discrete_laplace"`` adds that law instead, with the scale
    Algorithm 2 calibrates for it, drawn by the exact integer samplers of :mod:`ppk.samplers`.

    ``rng=None`` (default) uses a cryptographically secure source for both the count
    estimate and the Gaussian noise; a seed or Generator makes it reproducible, warns
    (:class:`ppk.InsecureRandomnessWarning`) and marks the result as not private.
    ``audit=True`` returns ``(Release, PrivateDraws)``; the Release never holds the noise.
    """
    args = _validated(data, count, n, known, eps, delta, kappa1, kappa2, kappa3, hoeffding)
    _Added(noise)
    source = as_source(rng)
    warn_if_seeded(source, "release")
    cal, laplace_noise = _run(source, *args, hoeffding, False, noise)
    sampler = {"gaussian": rounded_gaussian, "discrete_gaussian": discrete_gaussian,
               "discrete_laplace": discrete_laplace}[noise]
    gaussian_noise = sampler(cal.sigma, rng=source) if cal.sigma > 0 else 0
    out = Release(value=args[0] + gaussian_noise, calibration=cal)
    return (out, PrivateDraws(laplace_noise=laplace_noise, gaussian_noise=gaussian_noise)) if audit else out
