"""delta(eps) of the natural-noise count: ppk's C++ kernel vs full-support numpy.

The numbers are in the asv report; the closing notes of the issues quote them.
Parameters are the calibration regime: half the rows known, p = 0.5, noise of
the size Algorithm 1 returns, eps = 0.01.
"""
import numpy as np

import ppk

from .reference import numpy_log_delta, numpy_noiseless_window_delta, scipy_noiseless_delta

SIGMA = 300.0
EPS = 0.01


class DeltaAtN:
    params = [10**5, 10**6, 10**7]
    param_names = ["N"]
    timeout = 600

    def setup(self, N):
        self.q = ppk.CountingQuery(n=N + 1, known=0, p=0.5, sigma=SIGMA)
        self.q.delta(EPS)  # build the pmf cache outside the timing (it is per (N, p))

    def time_ppk_delta(self, N):
        self.q.delta(EPS)

    def time_ppk_delta_cold(self, N):
        # includes building the kernel (one per (N, p), cached afterwards)
        ppk._kernels.clear_caches()
        self.q.delta(EPS)

    def time_numpy_full_support(self, N):
        numpy_log_delta(N, 0.5, SIGMA, EPS)


class DeltaCurve:
    """A whole privacy curve (200 eps values, parallel in C++)."""

    def setup(self):
        self.q = ppk.CountingQuery(n=10**6, known=0, p=0.3, sigma=100.0)
        self.eps = np.linspace(0.0, 0.2, 200)
        self.q.delta(0.0)

    def time_curve_200_eps(self):
        self.q.delta(self.eps)


class DenseCurve:
    """10^5 eps values of one curve (each root search starts from its neighbour's; at p = 0.3 the
    order that cannot be the maximum is skipped) against what a user without the vectorised call
    would write: one scalar call per eps (issue target: the 1e5 values under a second)."""
    params = [0.5, 0.3]
    param_names = ["p"]
    timeout = 300

    def setup(self, p):
        self.q = ppk.CountingQuery(n=1000, known=0, p=p, sigma=3.0)
        self.eps = np.linspace(0.0, 5.0, 100_000)
        self.q.delta(0.0)

    def time_curve_1e5_eps(self, p):
        self.q.delta(self.eps)

    def time_scalar_calls_1e3_eps(self, p):
        # a thousand of the same points one call at a time (x100 for the same 1e5 values)
        for e in self.eps[::100]:
            self.q.delta(float(e))


class DeltaAcrossSigma:
    """One delta at N = 1e7 for noise from a few counts to far above the natural noise (sd 1581):
    the cost the main job's sweep pays per point (issue target: under 5 ms for every sigma).  The
    full-support numpy reference is in DeltaAtN (sigma = 300); at these sizes it takes seconds."""
    params = ([3.0, 300.0, 2000.0, 20000.0, 1e5, 1e6], [0.01, 0.1, 1.0])
    param_names = ["sigma", "eps"]

    def setup(self, sigma, eps):
        self.q = ppk.CountingQuery(n=10**7 + 1, known=0, p=0.5, sigma=sigma)
        self.q.delta(eps)

    def time_ppk_delta(self, sigma, eps):
        self.q.delta(eps)


class Noiseless:
    """Issue #43: the noiseless count (sigma = 0; p = 0.5, no row known, eps = 10/sqrt(n), where delta is
    about 1e-10 ... 1e-8) against the same count at sigma = 1 and against the numpy/scipy references in the
    same run: scipy.stats.binom's two tails at the threshold, and the sum over a window of +-40 standard
    deviations (reference.py; both uncertified, double precision).  Warm: the query object built and one
    delta read in setup (its per-(N, p) work cached); each call then reads a new eps.  Cold: caches cleared.
    track_ records ppk's delta relative to the scipy tails (agree to ~1e-6 at n = 1e9, the reference's
    own rounding)."""
    params = [10**3, 10**6, 10**9]
    param_names = ["n"]

    def setup(self, n):
        self.eps = 10.0 / np.sqrt(n)
        self.q0 = ppk.CountingQuery(n=n, known=0, p=0.5, sigma=0.0)
        self.q1 = ppk.CountingQuery(n=n, known=0, p=0.5, sigma=1.0)
        self.q0.delta(self.eps)
        self.q1.delta(self.eps)
        self.calls = 0

    def _next_eps(self):
        # a fresh eps per call, so that no per-eps result can be reused
        self.calls += 1
        return self.eps * (1 + 1e-9 * self.calls)

    def time_ppk_sigma0(self, n):
        self.q0.delta(self._next_eps())

    def time_ppk_sigma0_cold(self, n):
        ppk._kernels.clear_caches()
        ppk.CountingQuery(n=n, known=0, p=0.5, sigma=0.0).delta(self.eps)

    def time_ppk_sigma1(self, n):
        self.q1.delta(self._next_eps())

    def time_scipy_binom_tails(self, n):
        scipy_noiseless_delta(n - 1, 0.5, self._next_eps())

    def time_numpy_window(self, n):
        numpy_noiseless_window_delta(n - 1, 0.5, self._next_eps())

    def track_ppk_over_scipy_minus_1(self, n):
        return self.q0.delta(self.eps) / scipy_noiseless_delta(n - 1, 0.5, self.eps) - 1
