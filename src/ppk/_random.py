"""Randomness for releases: a cryptographically secure source by default, or a
seed / ``numpy.random.Generator`` to make results reproducible in tests.

Uniforms are drawn with extra resolution near 0 (dyadic refinement), so that
tail inversions (Laplace, Gaussian) are exact in law down to 1e-300 instead
of stopping at 2^-53.
"""
from __future__ import annotations

import math
import secrets

import numpy as np

__all__ = ["RandomSource", "as_source"]


class RandomSource:
    """Random bits from ``secrets`` (rng=None) or from a numpy Generator."""

    def __init__(self, rng: np.random.Generator | None):
        self._rng = rng

    @property
    def secure(self) -> bool:
        return self._rng is None

    def bits(self, k: int) -> int:
        if self._rng is None:
            return secrets.randbits(k)
        return int(self._rng.integers(0, 1 << k, dtype=np.uint64)) if k <= 63 else \
            (self.bits(k - 32) << 32) | self.bits(32)

    def bit(self) -> int:
        return self.bits(1)

    def uniform_open(self) -> float:
        """U ~ Uniform(0, 1), never 0; below 2^-20 refined with fresh bits (exact in law to ~1e-300)."""
        scale = 1.0
        while True:
            u = (self.bits(53) + 0.5) * 2.0**-53
            if u >= 2.0**-20 or scale < 1e-290:
                return u * scale
            scale *= 2.0**-20   # u < 2^-20: the value lies in (0, 2^-20) -- draw it afresh at finer scale

    def rounded_gaussian(self, sigma: float) -> int:
        """round(sigma * Z), Z ~ N(0, 1), by inversion of the tail: |Z| = -ndtri(U/2), sign from one bit."""
        if sigma == 0:
            return 0
        from scipy.special import ndtri
        magnitude = -float(ndtri(0.5 * self.uniform_open()))
        z = magnitude if self.bit() else -magnitude
        return int(math.floor(sigma * z + 0.5))

    def laplace(self, scale: float) -> float:
        """Laplace(0, scale) by inversion: sign * scale * (-log U)."""
        magnitude = -scale * math.log(self.uniform_open())
        return magnitude if self.bit() else -magnitude


def as_source(rng) -> RandomSource:
    """None -> secure; int seed -> Generator(PCG64(seed)); Generator -> itself; a RandomSource passes through."""
    if isinstance(rng, RandomSource):
        return rng
    if rng is None:
        return RandomSource(None)
    if isinstance(rng, np.random.Generator):
        return RandomSource(rng)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return RandomSource(np.random.default_rng(int(rng)))
    raise TypeError(f"rng must be None (secure), an int seed or a numpy.random.Generator, got {type(rng).__name__}")
