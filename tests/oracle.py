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
    """o* with L(o*) = eps in double precision over the full support (numpy/scipy)."""
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
    return brentq(L, lo, hi, xtol=1e-12, rtol=1e-15)


def _direction_log_delta(N, p, beta, eps, dps):
    """H_{e^eps}(P_1 || P_0) for X ~ Bin(N, p), beta > 0, in mpmath."""
    if N <= 3000:
        lo_k, hi_k = 0, N
        sd = float(np.sqrt(N * p * (1 - p) + beta**2))
        guess_lo, guess_hi = -20 * sd - 10 - 2 * N, N + 20 * sd + 10 + eps * sd**2
    else:
        o = _double_root(N, p, beta, eps)
        lo_k, hi_k = _relevant_k(N, p, o, beta, span=150.0)
        guess_lo, guess_hi = o - 1e-3 * max(1.0, abs(o)), o + 1e-3 * max(1.0, abs(o))
    with mp.workdps(dps):
        b, e = mp.mpf(beta), mp.mpf(eps)
        ks = list(range(lo_k, hi_k + 1))
        lw = [_log_binom_pmf(N, mp.mpf(p), k) for k in ks]
        m = max(lw)

        def log_S(o, a):
            return mp.log(mp.fsum(mp.exp(l - m - (o - a - k) ** 2 / (2 * b * b)) for l, k in zip(lw, ks)))

        def L(o):
            return log_S(o, 1) - log_S(o, 0)

        lo, hi = mp.mpf(guess_lo), mp.mpf(guess_hi)
        while L(lo) > e:
            lo -= abs(lo) + 10
        while L(hi) < e:
            hi += abs(hi) + 10
        # bisection to ~1e-25 relative; H is flat at the optimum, so this is plenty
        for _ in range(400):
            mid = (lo + hi) / 2
            if L(mid) < e:
                lo = mid
            else:
                hi = mid
            if hi - lo < mp.mpf(10) ** (-25) * max(1, abs(mid)):
                break
        t = (lo + hi) / 2
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
        return max(_direction_log_delta(N, p, beta, eps, dps), _direction_log_delta(N, 1 - p, beta, eps, dps))


def quadrature_delta(N, p, beta, eps, dps=30):
    """Brute force: integrate (P_1(o) - e^eps P_0(o))_+ over R for tiny N (both orders)."""
    with mp.workdps(dps):
        b, e = mp.mpf(beta), mp.exp(mp.mpf(eps))
        best = mp.mpf(0)
        for pp in (mp.mpf(p), 1 - mp.mpf(p)):
            w = [mp.binomial(N, k) * pp**k * (1 - pp) ** (N - k) for k in range(N + 1)]
            P = lambda o, a: mp.fsum(wk * mp.npdf(o - a - k, 0, b) for k, wk in enumerate(w))  # noqa: E731
            f = lambda o: max(mp.mpf(0), P(o, 1) - e * P(o, 0))  # noqa: E731
            pts = [-12 * b - 1] + [mp.mpf(k) / 2 for k in range(-1, 2 * N + 4)] + [N + 2 + 12 * b]
            best = max(best, mp.quad(f, pts))
        return best
