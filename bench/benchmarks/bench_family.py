"""The family engine (ppk._family, cpp/include/ppk/family/): NoisyQuery.log_delta on the threshold path.

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
