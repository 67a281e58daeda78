"""Histograms and overlapping counts (ppk.HistogramQuery, ppk.OverlappingCounts).

What a user would otherwise pick: plain DP for a histogram (the analytic Gaussian with sensitivity
sqrt 2, no natural noise) -- timed beside, and its sigma tracked against ppk's -- and one count's
curve (CountingQuery), the building block, at the same number of rows.
"""
import math

import numpy as np

import ppk
from ppk import _kernels
from ppk.baselines import analytic_gaussian_sigma

PROBS20 = list(np.random.default_rng(0).dirichlet(np.full(20, 3.0)))


class HistogramDelta:
    params = ([10**5, 10**7], [0.0, 3.0])
    param_names = ["n", "sigma"]
    timeout = 300

    def setup(self, n, sigma):
        self.h = ppk.HistogramQuery(n=n, known=0, probs=PROBS20, sigma=sigma)

    def time_histogram_bracket_k20_cold(self, n, sigma):
        _kernels.clear_caches()
        self.h.delta_bracket(0.01)

    def time_one_count_cold(self, n, sigma):
        _kernels.clear_caches()
        ppk.CountingQuery(n=n, known=0, p=min(PROBS20), sigma=sigma).delta(0.01)


class HistogramCalibration:
    timeout = 600

    def time_ppk_calibrate_n1e6_k20(self):
        ppk.calibrate(ppk.HistogramQuery(n=10**6, known=0, probs=PROBS20, sigma=0.0), eps=0.02, delta=1e-8)

    def time_plain_dp_sigma(self):
        analytic_gaussian_sigma(eps=0.02, delta=1e-8, sensitivity=math.sqrt(2))

    def track_noise_saved_percent(self):
        cal = ppk.calibrate(ppk.HistogramQuery(n=10**6, known=0, probs=PROBS20, sigma=0.0), eps=0.02, delta=1e-8)
        return 100 * cal.noise_saved

    track_noise_saved_percent.unit = "%"


class Overlapping:
    timeout = 300

    def setup(self):
        rng = np.random.default_rng(3)
        self.matrix = rng.random((200_000, 6)) < 0.3

    def time_from_membership_and_bracket(self):
        o = ppk.OverlappingCounts.from_membership(self.matrix, known_rows=np.arange(0, 200_000, 2), p=0.4,
                                                  sigmas=[2.0] * 6)
        o.delta_bracket(0.05)


class HistogramPerEps:
    """Issue #43: a 20-category histogram of n = 1e7 rows, delta_bracket per eps, noiseless (sigma = 0)
    against the same histogram at sigma = 3 in the same run.  Cold: caches cleared and a fresh query; warm:
    the query has read one eps (in setup) and each call reads a new one, so only what does not depend on eps
    can be reused.  The calibration is HistogramCalibration's."""
    params = [0.0, 3.0]
    param_names = ["sigma"]
    timeout = 300

    def setup(self, sigma):
        self.h = ppk.HistogramQuery(n=10**7, known=0, probs=PROBS20, sigma=sigma)
        self.h.delta_bracket(0.01)
        self.calls = 0

    def time_cold(self, sigma):
        _kernels.clear_caches()
        ppk.HistogramQuery(n=10**7, known=0, probs=PROBS20, sigma=sigma).delta_bracket(0.01)

    def time_warm_new_eps(self, sigma):
        self.calls += 1     # a fresh eps per call: no per-eps result can be reused
        self.h.delta_bracket(0.01 * (1 + 1e-9 * self.calls))
