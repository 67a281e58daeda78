"""The natural-noise family (ppk.noise, ppk.NoisyQuery) against the alternatives a user would pick.

* The Poisson-binomial pmf: ppk's exact grouped convolution vs scipy.stats.poisson_binom and a numpy
  direct convolution of the rows' Bernoulli pmfs (exact too, O(n^2)).
* One delta(eps) of each family member at 1e4, 1e6 and 1e7 unknown rows, cold (the pmf is built
  inside the timing).
"""
import numpy as np
from scipy import stats

import ppk
from ppk import noise

EPS = 0.01


def _groups(n, count=100, seed=1):
    ps = np.random.default_rng(seed).uniform(0.01, 0.99, count)
    return [(n // count, float(p)) for p in ps]


class PoissonBinomialPmf:
    params = [10**3, 10**4]
    param_names = ["n"]
    timeout = 300

    def setup(self, n):
        self.probs = np.random.default_rng(2).uniform(0.01, 0.99, n)

    def time_ppk_window(self, n):
        noise.PoissonBinomial(probs=self.probs).window(64.0)

    def time_scipy_poisson_binom(self, n):
        stats.poisson_binom(self.probs).pmf(np.arange(n + 1))

    def time_numpy_direct_convolution(self, n):
        pmf = np.ones(1)
        for p in self.probs:
            pmf = np.convolve(pmf, [1 - p, p])


class FamilyDelta:
    params = ([10**4, 10**6, 10**7],
              ["binomial+discrete_gaussian", "poisson_binomial(100 groups)+gaussian", "beta_binomial(2,3)+gaussian",
               "row_sum+discrete_laplace", "binomial+laplace"])
    param_names = ["rows", "law"]
    timeout = 600

    def setup(self, rows, law):
        if law.startswith("beta") and rows > 10**6:
            raise NotImplementedError   # BetaBinomial holds its whole support: 1e7 is beyond the benchmark
        natural = {"binomial+discrete_gaussian": lambda: noise.Binomial(rows, 0.3),
                   "poisson_binomial(100 groups)+gaussian": lambda: noise.PoissonBinomial(groups=_groups(rows)),
                   "beta_binomial(2,3)+gaussian": lambda: noise.BetaBinomial(rows, 2.0, 3.0),
                   "row_sum+discrete_laplace": lambda: noise.RowSum([0.2, 0.5, 0.3], rows),
                   "binomial+laplace": lambda: noise.Binomial(rows, 0.3)}[law]
        added = {"discrete_gaussian": noise.DiscreteGaussian(4.0), "gaussian": noise.Gaussian(4.0),
                 "discrete_laplace": noise.DiscreteLaplace(4.0), "laplace": noise.Laplace(4.0)}[law.split("+")[1]]
        self.make = lambda: ppk.NoisyQuery(natural=natural(), added=added)

    def time_delta_cold(self, rows, law):
        self.make().delta(EPS)
