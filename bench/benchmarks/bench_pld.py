"""Privacy loss distributions: building (1e4-1e6 buckets) and composing (exact long-double direct
convolution, both mass vectors) against numpy.convolve (double, one vector) in the same run.
dp_accounting (FFT, optional) is timed when installed."""
import numpy as np

import ppk

PLD = ppk.PrivacyLossDistribution


def _interval_for(buckets):
    # the Gaussian PLD with sigma = 1 spans about +-16.5 in loss at the default truncation
    return 33.0 / buckets


class Build:
    params = [10**4, 10**5, 10**6]
    param_names = ["buckets"]

    def time_from_gaussian(self, buckets):
        PLD.from_gaussian(sigma=1.0, value_discretization_interval=_interval_for(buckets), max_buckets=2 * buckets)


class Compose:
    params = [10**4, 3 * 10**4]
    param_names = ["buckets"]
    timeout = 300

    def setup(self, buckets):
        self.pld = PLD.from_gaussian(sigma=1.0, value_discretization_interval=_interval_for(buckets),
                                     max_buckets=4 * buckets)
        self.a = self.pld.mass_upper.astype(float)

    def time_ppk_compose(self, buckets):
        self.pld.compose(self.pld)

    def time_numpy_convolve_one_vector(self, buckets):
        np.convolve(self.a, self.a)


class DpAccounting:
    params = [10**4, 3 * 10**4]
    param_names = ["buckets"]

    def setup(self, buckets):
        try:
            from dp_accounting.pld import privacy_loss_distribution as dpa
        except ImportError:
            raise NotImplementedError("dp_accounting not installed")
        self.pld = dpa.from_gaussian_mechanism(1.0, value_discretization_interval=_interval_for(buckets))

    def time_dp_accounting_compose(self, buckets):
        self.pld.compose(self.pld)
