"""Random bits for releases: a cryptographically secure source by default, or a
seed / ``numpy.random.Generator`` to make results reproducible in tests.

Only *integers* leave this module: the exact samplers in :mod:`ppk.samplers`
turn uniform random integers into noise with rational arithmetic, so no
floating-point rounding ever shapes a released value (docs/release-security.md).
"""
from __future__ import annotations

import secrets
import warnings

import numpy as np

__all__ = ["RandomSource", "as_source", "as_generator", "InsecureRandomnessWarning"]


class InsecureRandomnessWarning(UserWarning):
    """A release was made with seeded (reproducible, hence guessable) randomness.

    A seeded release is for tests and simulations only: whoever can guess the seed can
    subtract the noise.  ppk marks such results (``ledger()['insecure_for_testing']``).
    """


class RandomSource:
    """Uniform random integers from ``secrets`` (rng=None) or from a numpy Generator."""

    __slots__ = ("_rng",)

    def __init__(self, rng: np.random.Generator | None):
        self._rng = rng

    @property
    def secure(self) -> bool:
        """True when the bits come from the operating system's CSPRNG (``secrets``)."""
        return self._rng is None

    def bits(self, k: int) -> int:
        """A uniform integer in ``[0, 2**k)``."""
        if k <= 0:
            return 0
        if self._rng is None:
            return secrets.randbits(k)
        if k <= 63:
            return int(self._rng.integers(0, 1 << k, dtype=np.uint64))
        return (self.bits(k - 63) << 63) | self.bits(63)

    def below(self, m: int) -> int:
        """A uniform integer in ``[0, m)`` for an integer ``m >= 1`` (exact: rejection, no modulo bias)."""
        if m == 1:
            return 0
        if self._rng is None:
            return secrets.randbelow(m)
        k = (m - 1).bit_length()
        while True:
            r = self.bits(k)
            if r < m:
                return r

    def bit(self) -> int:
        return self.bits(1)


def as_source(rng) -> RandomSource:
    """None -> secure; int seed -> Generator(PCG64(seed)); Generator -> itself; a RandomSource passes through."""
    if isinstance(rng, RandomSource):
        return rng
    if rng is None:
        return RandomSource(None)
    if isinstance(rng, np.random.Generator):
        return RandomSource(rng)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, (bool, np.bool_)):
        if int(rng) < 0:
            raise ValueError(f"rng must be a non-negative integer seed, got {int(rng)}")
        return RandomSource(np.random.default_rng(int(rng)))
    raise TypeError(f"rng must be None (secure), an int seed or a numpy.random.Generator, got {type(rng).__name__}")


def as_generator(rng) -> np.random.Generator:
    """A numpy Generator for simulations (Monte Carlo estimates, synthetic data) -- never for releases.

    None -> a Generator seeded from the operating system's entropy; int seed -> Generator(PCG64(seed));
    Generator -> itself.
    """
    if rng is None or isinstance(rng, np.random.Generator):
        return np.random.default_rng(rng)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, (bool, np.bool_)):
        if int(rng) < 0:
            raise ValueError(f"rng must be a non-negative integer seed, got {int(rng)}")
        return np.random.default_rng(int(rng))
    raise TypeError(f"rng must be None, an int seed or a numpy.random.Generator, got {type(rng).__name__}")


def warn_if_seeded(source: RandomSource, what: str) -> None:
    """Warn (InsecureRandomnessWarning) when a release is about to use reproducible randomness."""
    if not source.secure:
        warnings.warn(f"{what} with a seed or Generator is reproducible and NOT private: use it for tests only "
                      "(rng=None uses a cryptographically secure source)", InsecureRandomnessWarning, stacklevel=3)
