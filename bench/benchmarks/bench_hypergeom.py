"""Hypergeometric class weights (thesis Fig. 5.1): ppk vs scipy."""
import ppk

from .reference import scipy_hypergeom_loop, scipy_hypergeom_vectorised


class HypergeomSmall:
    """n = 1e4, 5e4 with half the rows known: per-element scipy loop (the thesis's baseline)."""

    params = [10**4, 5 * 10**4]
    param_names = ["n"]
    timeout = 600

    def _args(self, n):
        return dict(population=n, successes=n // 2, draws=n // 2)

    def time_ppk(self, n):
        ppk.hypergeom.hypergeom_pmf(**self._args(n))

    def time_scipy_per_element(self, n):
        a = self._args(n)
        scipy_hypergeom_loop(a["population"], a["successes"], a["draws"])

    def time_scipy_vectorised(self, n):
        a = self._args(n)
        scipy_hypergeom_vectorised(a["population"], a["successes"], a["draws"])


class HypergeomLarge:
    """n = 1e7: the whole support (5e6 values) at once."""

    timeout = 600

    def time_ppk(self):
        ppk.hypergeom.hypergeom_pmf(population=10**7, successes=5 * 10**6, draws=5 * 10**6)

    def time_scipy_vectorised(self):
        scipy_hypergeom_vectorised(10**7, 5 * 10**6, 5 * 10**6)
