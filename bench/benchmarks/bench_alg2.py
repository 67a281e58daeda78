"""Algorithm 2 end to end (Laplace estimate, interval, two Algorithm 1 runs, grid check)
at n = 1e4 ... 1e7: 30% ones, half the rows known, eps = 0.005 (noise is needed at n = 1e7)."""
import ppk


class Alg2:
    params = [10**4, 10**5, 10**6, 10**7]
    param_names = ["n"]
    timeout = 300

    def setup(self, n):
        self.kw = dict(count=3 * n // 10, n=n, known=n // 2, eps=0.005 if n >= 10**6 else 0.1, delta=1e-6, rng=1)

    def time_alg2(self, n):
        ppk.alg2(**self.kw)

    def track_branch_is_ppk(self, n):
        return int(ppk.alg2(**self.kw).branch == "ppk")
