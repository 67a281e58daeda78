"""Composition at scale (docs/accuracy.md, "Composition without the floor"): the plans of issue #31, each
built, composed and asked delta(1) and eps(1e-12) -- by ppk (certified, tilted) and by dp_accounting (FFT,
uncertified: it under-reports at small delta) at the same value_discretization_interval, in the same run.
prv_accountant is timed too when installed (it refuses delta this small; its eps(1e-6) instead)."""
import math

import ppk

PLD = ppk.PrivacyLossDistribution
EPS0 = 0.1   # randomized response's local eps


def _dp_accounting():
    try:
        from dp_accounting.pld import privacy_loss_distribution as dpa
    except ImportError:
        raise NotImplementedError("dp_accounting not installed")
    return dpa


def _randomized_response(module, dx):
    pe = math.exp(EPS0) / (1 + math.exp(EPS0))
    if module is PLD:
        return PLD.from_pmfs([pe, 1 - pe], [1 - pe, pe], value_discretization_interval=dx)
    return module.from_two_probability_mass_functions({0: math.log(1 - pe), 1: math.log(pe)},
                                                      {0: math.log(pe), 1: math.log(1 - pe)},
                                                      value_discretization_interval=dx)


PLANS = {
    "gaussian_3_x100": lambda m: m.from_gaussian_mechanism(3.0, value_discretization_interval=1e-3).self_compose(100),
    "gaussian_30_x1000": lambda m: m.from_gaussian_mechanism(30.0, value_discretization_interval=1e-3
                                                             ).self_compose(1000),
    "gaussian_100_x10000": lambda m: m.from_gaussian_mechanism(100.0, value_discretization_interval=1e-3
                                                               ).self_compose(10_000),
    "gaussian_10_x200_rr_x300": lambda m: m.from_gaussian_mechanism(10.0, value_discretization_interval=1e-3
                                                                    ).self_compose(200).compose(
        _randomized_response(m, 1e-3).self_compose(300)),
    "subsampled_gaussian_2_q001_x3000": lambda m: m.from_gaussian_mechanism(
        2.0, sampling_prob=0.01, value_discretization_interval=1e-4).self_compose(3000),
}


def _ask(pld):
    pld.get_delta_for_epsilon(1.0)
    pld.get_epsilon_for_delta(1e-12)


class Plans:
    params = list(PLANS)
    param_names = ["plan"]
    timeout = 300

    def time_ppk(self, plan):
        _ask(PLANS[plan](PLD))

    def time_dp_accounting(self, plan):
        _ask(PLANS[plan](_dp_accounting()))


GAUSSIAN_RUNS = {"sigma3_x100": (3.0, 100), "sigma30_x1000": (30.0, 1000), "sigma100_x10000": (100.0, 10_000)}


class PrvAccountant:
    """The Gaussian plans through prv_accountant (eps at delta = 1e-6: it refuses 1e-12).  The parameter is a
    name: asv reads a list of tuples as several parameters."""

    params = list(GAUSSIAN_RUNS)
    param_names = ["plan"]

    def setup(self, plan):
        try:
            import prv_accountant  # noqa: F401
        except ImportError:
            raise NotImplementedError("prv_accountant not installed")

    def time_prv_accountant(self, plan):
        from prv_accountant import Accountant
        sigma, runs = GAUSSIAN_RUNS[plan]
        Accountant(noise_multiplier=sigma, sampling_probability=1.0, delta=1e-6, eps_error=0.01,
                   max_compositions=runs).compute_epsilon(num_compositions=runs)

    def time_ppk(self, plan):
        sigma, runs = GAUSSIAN_RUNS[plan]
        PLD.from_gaussian_mechanism(sigma, value_discretization_interval=1e-3).self_compose(runs).get_epsilon_for_delta(1e-6)
