"""Type aliases shared by the package's annotations."""
from __future__ import annotations

from typing import Union

import numpy as np
import numpy.typing as npt

from ._random import RandomSource

#: A float64 numpy array (the result of every vectorised evaluation).
FloatArray = npt.NDArray[np.float64]

#: What every random function accepts as ``rng``: None (the operating system's CSPRNG for releases,
#: fresh entropy for simulations), an integer seed, or a numpy Generator.
RngLike = Union[None, int, np.integer, np.random.Generator, RandomSource]
