"""The family engine (ppk._family, cpp/include/ppk/family/): NoisyQuery.log_delta on its three paths.

* Warm: the natural noise's windows built in setup, one delta per call (eps from a short cycle).
* The issue's tiny delta: 1e5 binomial rows, sigma = 30, sensitivity 2, eps = 4 (delta = e^-2405.55,
  below the e^-2048 the Python windows reached), cold.
"""
import itertools

import ppk
from ppk import noise


class FamilyLogDelta:
    params = ["binomial+discrete_gaussian", "beta_binomial+gaussian", "poisson_binomial+discrete_laplace"]
    param_names = ["query"]
    timeout = 120

    def setup(self, query):
        natural, added = {
            "binomial+discrete_gaussian": (noise.Binomial(10**6, 0.3), noise.DiscreteGaussian(4.0)),
            "beta_binomial+gaussian": (noise.BetaBinomial(10**5, 2.0, 3.0), noise.Gaussian(4.0)),
            "poisson_binomial+discrete_laplace": (
                noise.PoissonBinomial(groups=[(10**4, 0.003 * (i + 1)) for i in range(100)]),
                noise.DiscreteLaplace(3.0)),
        }[query]
        self.q = ppk.NoisyQuery(natural=natural, added=added, sensitivity=2)
        self.q.log_delta(0.01)
        self.eps = itertools.cycle([0.009, 0.01, 0.011, 0.012])

    def time_log_delta(self, query):
        self.q.log_delta(next(self.eps))


class FamilyTinyDelta:
    timeout = 120

    def time_issue_example(self):
        ppk.NoisyQuery(natural=noise.Binomial(100_000, 0.01), added=noise.Gaussian(30.0),
                       sensitivity=2).log_delta(4.0)


class FamilyOtherPaths:
    """The lattice-sum and crossings paths (C++): natural noise that is not log-concave, warm (the windows
    built in setup), one delta per call."""
    params = ["beta_binomial_u+discrete_gaussian", "mixture+gaussian", "mixture+none"]
    param_names = ["query"]
    timeout = 120

    def setup(self, query):
        natural, added, s = {
            "beta_binomial_u+discrete_gaussian": (noise.BetaBinomial(2000, 0.5, 0.5), noise.DiscreteGaussian(4.0), 1),
            "mixture+gaussian": (noise.BinomialMixture(1000, [0.3, 0.7], [0.15, 0.8]), noise.Gaussian(4.0), 1),
            "mixture+none": (noise.BinomialMixture(10**4, [0.3, 0.7], [0.15, 0.8]), noise.NoNoise(), 2),
        }[query]
        self.q = ppk.NoisyQuery(natural=natural, added=added, sensitivity=s)
        self.q.log_delta(1.0)
        self.eps = itertools.cycle([0.9, 1.0, 1.1, 1.2])

    def time_log_delta(self, query):
        self.q.log_delta(next(self.eps))


class FamilyLatticeFarBeyond:
    """A lattice sum far beyond the window (cold): delta = e^-7214.15, which the Python engine's convolved
    output windows could not reach (they reported the discrete Gaussian's own bound, e^-7204.30)."""
    timeout = 120

    def time_u_shaped_beta_binomial(self):
        ppk.NoisyQuery(natural=noise.BetaBinomial(40, 0.5, 0.5), added=noise.DiscreteGaussian(30.0)).log_delta(4.0)
