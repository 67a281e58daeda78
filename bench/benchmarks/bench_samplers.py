"""The release samplers: time per draw, and the timing side channel they are built to close.

* ``time_*``: one draw of each constant-work sampler (ppk.samplers), against numpy's float
  samplers (fast, but neither exact in law nor constant in work) -- what a user would otherwise pick.
* ``track_timing_correlation``: Spearman's rho between |draw| and the draw's time over 1,000 draws
  (ppk.sampler_timing); the rejection samplers ppk used before showed 0.20-0.47.  Near 0 is the goal.
"""
import numpy as np

from ppk import samplers
from ppk.sampler_timing import measure_timing

SCALES = [3.0, 1000.0, 1e9]


class Draw:
    params = [SCALES]
    param_names = ["scale"]
    timeout = 300

    def setup(self, scale):
        for sampler in (samplers.discrete_laplace, samplers.rounded_gaussian, samplers.discrete_gaussian):
            sampler(scale)                        # per-scale tables are built once, outside the timing
        self.rng = np.random.default_rng(1)

    def time_discrete_laplace(self, scale):
        samplers.discrete_laplace(scale)

    def time_rounded_gaussian(self, scale):
        samplers.rounded_gaussian(scale)

    def time_discrete_gaussian(self, scale):
        samplers.discrete_gaussian(scale)

    def time_numpy_float_gaussian_rounded(self, scale):
        int(np.rint(scale * self.rng.standard_normal()))

    def time_numpy_float_laplace_rounded(self, scale):
        int(np.rint(self.rng.laplace(0.0, scale)))


class TimingCorrelation:
    params = [["discrete_laplace", "gaussian", "discrete_gaussian"], [3.0, 1000.0]]
    param_names = ["noise", "scale"]
    timeout = 900
    unit = "Spearman rho"

    def track_timing_correlation(self, noise, scale):
        draws = 300 if noise == "discrete_gaussian" else 1000
        return measure_timing(noise, scale=scale, draws=draws).spearman
