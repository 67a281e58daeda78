"""Privacy loss distributions: building (1e4-1e6 buckets) and composing (certified FFT or exact
long-double direct convolution, both representations) against numpy.convolve (double, one vector)
and dp_accounting (FFT, uncertified; timed when installed) in the same run."""
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


def _dp_accounting():
    try:
        from dp_accounting.pld import privacy_loss_distribution as dpa
    except ImportError:
        raise NotImplementedError("dp_accounting not installed")
    return dpa


class GaussianSelfCompose:
    """The table of the PLD issue: Gaussian sigma = 3, delta at eps = 0.5, build + compose + read,
    ppk and dp_accounting in the same run; track_* report the relative excess over the closed form."""
    params = ([1e-2, 1e-3], [2, 8])
    param_names = ["interval", "times"]
    timeout = 300

    def _exact(self, times):
        from ppk.baselines import analytic_gaussian_delta
        return analytic_gaussian_delta(sigma=3.0 / np.sqrt(times), eps=0.5)

    def time_ppk(self, interval, times):
        PLD.from_gaussian(sigma=3.0, value_discretization_interval=interval).self_compose(times).delta_bracket(0.5)

    def time_dp_accounting(self, interval, times):
        dpa = _dp_accounting()
        dpa.from_gaussian_mechanism(3.0, value_discretization_interval=interval).self_compose(
            times).get_delta_for_epsilon(0.5)

    def track_ppk_upper_excess(self, interval, times):
        hi = PLD.from_gaussian(sigma=3.0, value_discretization_interval=interval).self_compose(times).delta_bracket(0.5)[1]
        return hi / self._exact(times) - 1

    def track_dp_accounting_excess(self, interval, times):
        dpa = _dp_accounting()
        d = dpa.from_gaussian_mechanism(3.0, value_discretization_interval=interval).self_compose(
            times).get_delta_for_epsilon(0.5)
        return d / self._exact(times) - 1


class ThousandFold:
    timeout = 300

    def time_ppk_gaussian_1000_fold_interval_1e4(self):
        PLD.from_gaussian(sigma=30.0, value_discretization_interval=1e-4).self_compose(1000).delta_bracket(0.5)

    def time_dp_accounting_gaussian_1000_fold_interval_1e4(self):
        _dp_accounting().from_gaussian_mechanism(30.0, value_discretization_interval=1e-4).self_compose(
            1000).get_delta_for_epsilon(0.5)


class ManyEps:
    def setup(self):
        self.pld = PLD.from_gaussian(sigma=2.0, value_discretization_interval=1e-3).self_compose(4)
        self.eps = np.linspace(0.0, 5.0, 100_000)

    def time_ppk_bracket_1e5_eps(self):
        self.pld.delta_bracket(self.eps)
