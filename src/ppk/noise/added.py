"""The added-noise laws: the noise the mechanism adds to the query's value.

Each law gives :class:`ppk.NoisyQuery` its log density (or log pmf), its log tails and its reach (how
far from 0 its density stays within ``e^-depth`` of the peak), in double or long double as the caller
passes.  Every scale is in the units of the query (counts for a count).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import _kernels
from .._validate import _show, real
from ._arguments import _depth, _numbers
from .window import LD

__all__ = ["AddedNoise", "NoNoise", "Gaussian", "Laplace", "DiscreteGaussian", "DiscreteLaplace", "ADDED_BY_NAME",
           "MIN_SCALE"]

Floats = npt.NDArray[np.floating[Any]]   # double or long double: the added laws compute in either

#: Smallest scale of an added noise: below it the noise is no noise on integer data (use NoNoise).
MIN_SCALE = 1e-6


def _scale(name: str, value: object) -> float:
    out = real(name, value, minimum=0.0, min_inclusive=False)
    if out < MIN_SCALE:
        raise ValueError(f"{name} must be >= {MIN_SCALE:g} (a smaller noise is none on integer data: use "
                         f"NoNoise()), got {out!r}")
    return out


def _points(value: object):
    """The points ``x`` of an added law's log density, log sf or log cdf: real numbers (a scalar stays a
    scalar, an array keeps a float dtype), +-inf taken, NaN refused."""
    arr = _numbers("x", value)
    if np.any(np.isnan(arr)):
        raise ValueError(f"x must not be NaN, got {_show(value)}")
    if arr.ndim == 0 and not isinstance(value, np.ndarray):
        return arr[()] if isinstance(value, np.generic) else float(arr)
    return arr


class AddedNoise:
    """Base of the added-noise laws.  ``lattice``: integer-valued (outputs stay integers).

    The public ``log_density``, ``log_sf``, ``log_cdf`` and ``reach`` check their argument (``x``: real
    numbers, +-inf taken, NaN refused; ``depth``: finite, >= 0) and call ``_log_density``, ``_log_sf``,
    ``_log_cdf`` and ``_reach``, which a law implements and ``ppk.noisy_query`` calls directly (on
    values it formed itself: no checks in its inner loops).
    """

    lattice: bool = False
    scale: float = 0.0

    def log_density(self, x: Floats) -> Floats:
        """log pdf (continuous) or log pmf (lattice, at integers) at ``x``."""
        return self._log_density(_points(x))

    def log_sf(self, x: Floats) -> Floats:
        """``log P(Z > x)``."""
        return self._log_sf(_points(x))

    def log_cdf(self, x: Floats) -> Floats:
        """``log P(Z <= x)`` (every law here is symmetric)."""
        return self._log_cdf(_points(x))

    def _log_density(self, x: Floats) -> Floats:
        raise NotImplementedError

    def _log_sf(self, x: Floats) -> Floats:
        raise NotImplementedError

    def _log_cdf(self, x: Floats) -> Floats:
        return self._log_sf(-x - 1) if self.lattice else self._log_sf(-x)

    def reach(self, depth: float) -> float:
        """``|z|`` beyond which the density is below ``e^-depth`` of its peak (``depth`` >= 0)."""
        depth = _depth(depth)
        out = self._reach(depth)
        if not math.isfinite(out):
            raise ValueError(f"depth must be small enough that the reach, {self!r}'s |z| at depth e-folds below "
                             f"its peak, is a finite float, got {depth!r}")
        return out

    def _reach(self, depth: float) -> float:
        raise NotImplementedError

    def with_scale(self, scale: float) -> AddedNoise:
        """The same law with another scale (for calibration)."""
        raise NotImplementedError


class NoNoise(AddedNoise):
    """No added noise: the exact value is released."""

    lattice = True

    def __repr__(self) -> str:
        return "NoNoise()"

    def _log_density(self, x: Floats) -> Floats:
        return np.where(x == 0, 0.0, -np.inf)

    def _log_sf(self, x: Floats) -> Floats:
        return np.where(x < 0, 0.0, -np.inf)

    def _reach(self, depth: float) -> float:
        return 0.0

    def with_scale(self, scale: float) -> AddedNoise:
        return self


class Gaussian(AddedNoise):
    """``Z ~ N(0, sigma^2)``, ``sigma`` a standard deviation in the query's units (counts)."""

    def __init__(self, sigma: float):
        # any sigma > 0: the counting kernel is exact at every scale; NoisyQuery refuses sigma < MIN_SCALE
        # on the paths that sum in double precision
        self.sigma = self.scale = self._sigma("sigma", sigma)

    @staticmethod
    def _sigma(name: str, value: object) -> float:
        return real(name, value, minimum=0.0, min_inclusive=False)

    def __repr__(self) -> str:
        return f"Gaussian(sigma={self.sigma!r})"

    def _log_density(self, x: Floats) -> Floats:
        with np.errstate(over="ignore"):     # far out (x ~ 1e300): the density is 0, its log -inf
            z = x / self.sigma
            return -0.5 * z * z - math.log(self.sigma * math.sqrt(2 * math.pi))

    def _log_sf(self, x: Floats) -> Floats:
        with np.errstate(over="ignore"):
            z = np.asarray(x / self.sigma, dtype=float)
        return _kernels.norm_logsf(z.ravel()).reshape(z.shape)

    def _reach(self, depth: float) -> float:
        return self.sigma * math.sqrt(2 * depth)

    def with_scale(self, scale: float) -> AddedNoise:
        return Gaussian(self._sigma("scale", scale))


class Laplace(AddedNoise):
    """``Z ~ Laplace(0, scale)``: density ``e^{-|z|/scale} / (2 scale)``."""

    def __init__(self, scale: float):
        self.scale = _scale("scale", scale)

    def __repr__(self) -> str:
        return f"Laplace(scale={self.scale!r})"

    def _log_density(self, x: Floats) -> Floats:
        with np.errstate(over="ignore"):
            return -np.abs(x) / self.scale - math.log(2 * self.scale)

    def _log_sf(self, x: Floats) -> Floats:
        with np.errstate(over="ignore"):
            t = x / self.scale
            return np.where(t >= 0, -math.log(2) - t, np.log1p(-0.5 * np.exp(np.minimum(t, 0))))

    def _reach(self, depth: float) -> float:
        return self.scale * depth

    def with_scale(self, scale: float) -> AddedNoise:
        return Laplace(scale)


class DiscreteGaussian(AddedNoise):
    """Integer ``Z`` with ``P(Z = z)`` proportional to ``exp(-z^2 / (2 sigma^2))`` (Canonne, Kamath, Steinke).

    ``sigma`` is the parameter of the law (its standard deviation is slightly below ``sigma`` for
    ``sigma < 1`` and equal to it to double precision above).
    """

    lattice = True
    #: Largest sigma: the exact tail table holds sigma * sqrt(3000) entries (1.1 million at the cap).
    SIGMA_MAX = 2e4
    #: Depth of the tail table: P(Z > x) is exact down to e^-1500 of the peak, bounded beyond.
    TABLE_DEPTH = 1500.0

    def __init__(self, sigma: float):
        self.sigma = self.scale = self._sigma("sigma", sigma)
        s = self.sigma
        if s >= 1:   # Poisson summation: sum_z e^{-z^2/2s^2} = s sqrt(2 pi) (1 + 2 sum_m e^{-2 pi^2 s^2 m^2})
            m = np.arange(1, 4, dtype=LD)
            self._log_norm = float(LD(math.log(s * math.sqrt(2 * math.pi))) + np.log1p(
                2 * np.exp(-2 * LD(math.pi) ** 2 * LD(s) ** 2 * m * m).sum()))
        else:        # a few terms reach every term above e^-800
            z = np.arange(1, int(40 * s) + 40, dtype=LD)
            self._log_norm = float(np.log1p(2 * np.exp(-0.5 * (z / LD(s)) ** 2).sum()))
        self._sf_cache: dict[int, npt.NDArray[np.float64]] = {}

    @classmethod
    def _sigma(cls, name: str, value: object) -> float:
        out = _scale(name, value)
        if out > cls.SIGMA_MAX:
            raise ValueError(f"{name} must be <= {cls.SIGMA_MAX:g} for the discrete Gaussian (its tail table "
                             f"grows with sigma; use Gaussian for wider noise), got {out!r}")
        return out

    def __repr__(self) -> str:
        return f"DiscreteGaussian(sigma={self.sigma!r})"

    def _log_density(self, x: Floats) -> Floats:
        with np.errstate(over="ignore"):     # far out (x ~ 1e300): the pmf is 0, its log -inf
            z = x / self.sigma          # (x / sigma)^2, not x^2 / sigma^2: sigma^2 underflows for tiny sigma
            return -0.5 * z * z - self._log_norm

    def _log_sf(self, x: Floats) -> Floats:
        # P(Z > x) = sum_{z > x} pmf(z): a table of the upper tail (log space, summed from the far end
        # inwards so that every partial sum is formed from smaller terms), symmetric for x < 0.
        # The lattice points (x truncated towards 0) in float: int64 holds neither +-inf nor 1e300.
        xt = np.trunc(np.asarray(x, dtype=float))
        table = self._tail_table()
        top = table.size - 1
        out = np.empty(xt.shape)
        pos = xt >= 0
        idx = np.minimum(xt[pos], top).astype(np.int64)
        out[pos] = table[idx]
        far = xt[pos] >= top
        if np.any(far):   # beyond the table: the Gaussian tail bound sum_{z > x} <= pmf(x+1) / (1 - ratio)
            xf = xt[pos][far] + 1
            out_pos = out[pos]
            with np.errstate(over="ignore"):
                out_pos[far] = self._log_density(xf) - np.log(-np.expm1(-(2 * xf + 1) / (2 * self.sigma) / self.sigma))
            out[pos] = out_pos
        neg = ~pos
        if np.any(neg):   # P(Z > x) = 1 - P(Z <= x) = 1 - P(Z > -x - 1), x < 0
            mirror = np.minimum(-xt[neg] - 1, top).astype(np.int64)
            out[neg] = np.log1p(-np.exp(table[mirror]))
        return out

    def _tail_table(self) -> npt.NDArray[np.float64]:
        if 0 not in self._sf_cache:
            zmax = int(math.ceil(self.sigma * math.sqrt(2 * self.TABLE_DEPTH))) + 2
            z = np.arange(zmax + 2, dtype=LD)
            log_p = -0.5 * (z / LD(self.sigma)) ** 2 - LD(self._log_norm)
            # log P(Z > x) for x = 0..zmax: logsumexp of log_p[x+1:], accumulated from the far end
            rev = np.logaddexp.accumulate(log_p[::-1])[::-1]
            self._sf_cache[0] = np.asarray(rev[1:zmax + 2], dtype=float)
        return self._sf_cache[0]

    def _reach(self, depth: float) -> float:
        return self.sigma * math.sqrt(2 * depth) + 1

    def with_scale(self, scale: float) -> AddedNoise:
        return DiscreteGaussian(self._sigma("scale", scale))


class DiscreteLaplace(AddedNoise):
    """Integer ``Z`` with ``P(Z = z) = tanh(1 / (2 scale)) e^{-|z| / scale}`` (two-sided geometric)."""

    lattice = True

    def __init__(self, scale: float):
        self.scale = _scale("scale", scale)
        self._log_c = math.log(math.tanh(0.5 / self.scale))

    def __repr__(self) -> str:
        return f"DiscreteLaplace(scale={self.scale!r})"

    def _log_density(self, x: Floats) -> Floats:
        with np.errstate(over="ignore"):
            return -np.abs(x) / self.scale + self._log_c

    def _log_sf(self, x: Floats) -> Floats:
        # z > x >= 0: sum_{z >= x+1} c e^{-z/t} = e^{-(x+1)/t} / (1 + e^{-1/t});  x < 0: 1 - P(Z > -x - 1)
        t = self.scale
        xi = np.asarray(x, dtype=float)
        log_den = np.log1p(np.exp(-1 / t))
        with np.errstate(over="ignore"):
            upper = -(np.abs(xi) + 1) / t - log_den                      # log P(Z > |x|) (and the mirror)
            mirror = -np.abs(xi) / t - log_den                           # log P(Z > -x - 1) for x < 0
        with np.errstate(divide="ignore"):
            return np.where(xi >= 0, upper, np.log1p(-np.exp(mirror)))

    def _reach(self, depth: float) -> float:
        return self.scale * depth + 1

    def with_scale(self, scale: float) -> AddedNoise:
        return DiscreteLaplace(scale)


#: The added-noise laws by the names :func:`ppk.calibrate` and the command line use.
ADDED_BY_NAME = {"gaussian": Gaussian, "laplace": Laplace, "discrete_gaussian": DiscreteGaussian,
                 "discrete_laplace": DiscreteLaplace}
