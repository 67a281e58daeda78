"""Independent high-precision oracles for the privacy curve (mpmath, >= 40 digits).

Nothing here calls ppk: the binomial pmf comes from mpmath's exact binomial
coefficients, the threshold from a bisection on the privacy loss computed in
mpmath, and the noiseless curve from the definition sum_o (P1(o) - e^eps P0(o))_+.
For large N, numpy (double precision, full support) only chooses which k
carry non-negligible mass; every number that enters the result is mpmath's.
"""
from __future__ import annotations

import mpmath as mp
import numpy as np
from scipy import special, stats

DPS = 40


def _log_binom_pmf(N, p, k):
    return mp.log(mp.binomial(N, k)) + k * mp.log(p) + (N - k) * mp.log(1 - p)


def gaussian_log_delta(sigma, eps, sensitivity=1, dps=DPS):
    """Balle-Wang delta of N(0, sigma^2) with the given sensitivity, in mpmath."""
    with mp.workdps(dps):
        s, e, d = mp.mpf(sigma), mp.mpf(eps), mp.mpf(sensitivity)
        a = d / (2 * s) - e * s / d
        b = -d / (2 * s) - e * s / d
        return mp.log(mp.ncdf(a) - mp.exp(e) * mp.ncdf(b))


def _relevant_k(N, p, center, beta, span=130.0):
    """k with non-negligible weight in sum_k w_k phi((center - k)/beta) (double, full support)."""
    k = np.arange(N + 1)
    t = stats.binom.logpmf(k, N, p)
    if beta > 0:
        t = t + np.maximum(-0.5 * ((center - k) / beta) ** 2, special.log_ndtr((k - center) / beta))
    keep = np.nonzero(t > t.max() - span)[0]
    return int(keep[0]), int(keep[-1])


def noiseless_log_delta(N, p, eps, dps=DPS):
    """max over orders of sum_o (P_a(o) - e^eps P_b(o))_+, P_a = law of a + Bin(N,p)."""
    with mp.workdps(dps):
        e = mp.exp(mp.mpf(eps))
        best = mp.mpf(0)
        for pp in (mp.mpf(p), 1 - mp.mpf(p)):
            w = [mp.binomial(N, k) * pp**k * (1 - pp) ** (N - k) for k in range(N + 1)] + [mp.mpf(0)]
            total = mp.mpf(0)
            for o in range(N + 2):   # o = 1 + k for P_1, o = k for P_0
                prev = w[o - 1] if o >= 1 else mp.mpf(0)
                total += max(mp.mpf(0), prev - e * w[o])
            best = max(best, total)
        return mp.log(best)


def _double_root(N, p, beta, eps):
    """o* with L(o*) = eps to ~1e-7 relative, double precision over the full support (numpy)."""
    from scipy.optimize import brentq

    k = np.arange(N + 1)
    lw = stats.binom.logpmf(k, N, p)
    L = lambda o: (special.logsumexp(lw - 0.5 * ((o - 1 - k) / beta) ** 2)  # noqa: E731
                   - special.logsumexp(lw - 0.5 * ((o - k) / beta) ** 2) - eps)
    sd = np.sqrt(N * p * (1 - p) + beta**2)
    lo, hi = N * p - 10 * sd - 10, N * p + 10 * sd + 10 + eps * sd**2
    while L(lo) > 0:
        lo -= 10 * sd
    while L(hi) < 0:
        hi += 10 * sd
    return brentq(L, lo, hi, xtol=1e-9, rtol=1e-7)


def _direction_log_delta(N, p, beta, eps, dps):
    """H_{e^eps}(P_1 || P_0) for X ~ Bin(N, p), beta > 0, in mpmath.

    The threshold o* solves L(o) = eps; small N: bisection in mpmath on the whole
    support; large N: a double-precision root refined by Newton steps in mpmath
    on the k that matter (H is stationary at o*, so a root error d changes H by
    O(d^2) only).
    """
    pf = float(p)
    small = N <= 300
    if small:
        lo_k, hi_k = 0, N
    else:
        o_double = _double_root(N, float(p), beta, eps)
        lo_k, hi_k = _relevant_k(N, float(p), o_double, beta, span=150.0)
    with mp.workdps(dps):
        b, e = mp.mpf(beta), mp.mpf(eps)
        ks = list(range(lo_k, hi_k + 1))
        lw = [_log_binom_pmf(N, mp.mpf(p), k) for k in ks]
        m = max(lw)

        def log_S(o, a):
            terms = [mp.exp(l - m - (o - a - k) ** 2 / (2 * b * b)) for l, k in zip(lw, ks)]
            s = mp.fsum(terms)
            mean = mp.fsum(t * k for t, k in zip(terms, ks)) / s
            return mp.log(s), mean

        def L(o):
            (l1, m1), (l0, m0) = log_S(o, 1), log_S(o, 0)
            return l1 - l0, (1 + m1 - m0) / b**2

        if small:
            sd = mp.sqrt(N * pf * (1 - pf) + b**2)
            lo, hi = -20 * sd - 10 - 2 * N, N + 20 * sd + 10 + e * sd**2
            while L(lo)[0] > e:
                lo -= abs(lo) + 10
            while L(hi)[0] < e:
                hi += abs(hi) + 10
            for _ in range(400):
                mid = (lo + hi) / 2
                if L(mid)[0] < e:
                    lo = mid
                else:
                    hi = mid
                if hi - lo < mp.mpf(10) ** (-16) * max(1, abs(mid)):  # H is stationary at o*: error O(1e-32)
                    break
            t = (lo + hi) / 2
        else:
            t = mp.mpf(o_double)
            for _ in range(8):
                val, slope = L(t)
                step = (val - e) / slope
                t -= step
                if abs(step) < mp.mpf(10) ** (-20) * max(1, abs(t)):
                    break
        sf = lambda x: mp.erfc(x / mp.sqrt(2)) / 2  # noqa: E731
        A = mp.fsum(mp.exp(l) * sf((t - 1 - k) / b) for l, k in zip(lw, ks))
        B = mp.fsum(mp.exp(l) * sf((t - k) / b) for l, k in zip(lw, ks))
        return mp.log(A - mp.exp(e) * B)


def log_delta(N, p, beta, eps, dps=DPS):
    """Natural log of delta(eps) for a + Bin(N, p) + N(0, beta^2), both orders (mpmath)."""
    if N == 0 or p in (0.0, 1.0):
        return mp.mpf(0) if beta == 0 else gaussian_log_delta(beta, eps, 1, dps)
    if beta == 0:
        return noiseless_log_delta(N, p, eps, dps)
    with mp.workdps(dps):
        # the mirrored order uses q = 1 - p exactly (mpmath), not the rounded double 1 - p
        return max(_direction_log_delta(N, mp.mpf(p), beta, eps, dps),
                   _direction_log_delta(N, 1 - mp.mpf(p), beta, eps, dps))


def quadrature_delta(N, p, beta, eps, dps=25):
    """Brute force: integrate (P_1(o) - e^eps P_0(o))_+ over R for tiny N (both orders)."""
    with mp.workdps(dps):
        b, e = mp.mpf(beta), mp.exp(mp.mpf(eps))
        best = mp.mpf(0)
        for pp in (mp.mpf(p), 1 - mp.mpf(p)):
            w = [mp.binomial(N, k) * pp**k * (1 - pp) ** (N - k) for k in range(N + 1)]
            P = lambda o, a: mp.fsum(wk * mp.npdf(o - a - k, 0, b) for k, wk in enumerate(w))  # noqa: E731
            f = lambda o: max(mp.mpf(0), P(o, 1) - e * P(o, 0))  # noqa: E731
            g = lambda o: P(o, 1) - e * P(o, 0)  # noqa: E731
            grid = [-12 * b - 1 + (N + 3 + 24 * b) * mp.mpf(i) / 200 for i in range(201)]
            pts = list(grid)
            for x0, x1 in zip(grid, grid[1:]):   # the kinks of the positive part, by bisection
                if (g(x0) > 0) != (g(x1) > 0):
                    a, c = x0, x1
                    for _ in range(100):
                        m = (a + c) / 2
                        if (g(m) > 0) == (g(a) > 0):
                            a = m
                        else:
                            c = m
                    pts.append((a + c) / 2)
            best = max(best, mp.quad(f, sorted(pts)))
        return best
