"""Shuffled randomized response (issue #32): ppk's exact, certified eps(delta) against the alternative users
pick, the Feldman-McMillan-Talwar clone bound (FOCS 2021, the bound of apple/ml-shuffling-amplification,
in ppk's own code: ppk.related.shuffle_clones), at eps0 = 4, delta = 1e-6, standard shuffle DP.

Both are timed cold: a fresh ShuffledRandomizedResponse each time (its curves are cached per object) and
the clone bound's cache of binomial rows cleared.  n = 1e8 is left out: the exact eps(1e-6) took more than
4 minutes there (df27ae7, the C++ split; n = 1e7: 15 s).  The track_ benchmarks record the values, so a
change of either engine that moves them shows in the report.
"""
import ppk
from ppk.related import shuffle_clones

EPS0 = 4.0
DELTA = 1e-6


def _exact(n):
    return ppk.ShuffledRandomizedResponse(n=n, eps0=EPS0).epsilon(DELTA)


def _clone(n, variant):
    shuffle_clones._rows.cache_clear()
    return shuffle_clones.clone_bound_epsilon(n=n, eps0=EPS0, delta=DELTA, variant=variant)


class EpsilonAtN:
    params = [10**4, 10**6]
    param_names = ["n"]
    timeout = 600

    def time_ppk_exact(self, n):
        _exact(n)

    def time_clone_bound_fmt21(self, n):
        _clone(n, "fmt21")

    def time_clone_bound_fmt23(self, n):
        _clone(n, "fmt23")

    def track_eps_ppk_exact(self, n):
        return _exact(n)

    track_eps_ppk_exact.unit = "nats"

    def track_eps_clone_bound_fmt21(self, n):
        return _clone(n, "fmt21")

    track_eps_clone_bound_fmt21.unit = "nats"

    def track_eps_clone_bound_fmt23(self, n):
        return _clone(n, "fmt23")

    track_eps_clone_bound_fmt23.unit = "nats"
