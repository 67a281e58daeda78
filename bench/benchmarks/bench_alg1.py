"""Algorithm 1 (minimal sigma) at n = 1e4 ... 1e7, half the rows known, eps small enough that
noise is needed; next to it the Balle-Wang sigma (the DP baseline, O(1) per evaluation)."""
import ppk


class Alg1:
    params = [10**4, 10**5, 10**6, 10**7]
    param_names = ["n"]
    timeout = 300

    def setup(self, n):
        self.kw = dict(n=n, known=n // 2, p=0.5, eps=0.001, delta=1e-9)
        ppk.alg1(**self.kw)   # warm the per-(N, p) pmf cache, as a sweep would

    def time_alg1(self, n):
        ppk.alg1(**self.kw)

    def time_analytic_gaussian_sigma(self, n):
        ppk.baselines.analytic_gaussian_sigma(eps=0.001, delta=1e-9)

    def track_alg1_evaluations(self, n):
        return ppk.alg1(**self.kw).evaluations
