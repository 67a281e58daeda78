"""A 50-digit mpmath oracle for NoisyQuery, sharing no code with ppk.

delta(eps) = max over shifts d of the sum (integral) of (p_d - e^eps p_0)_+, p_a the law of a + X + Z:
lattice noise by an exact convolution and a lattice sum; continuous noise by locating every sign
change of p_d - e^eps p_0 on a fine grid (refined by bisection) and integrating between them with
the noise's cdf.
"""
import mpmath as mp

mp.mp.dps = 50


def binomial(n, p):
    p = mp.mpf(p)
    return [mp.binomial(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]


def convolve(a, b):
    out = [mp.mpf(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return out


def poisson_binomial(groups):
    pmf = [mp.mpf(1)]
    for count, p in groups:
        pmf = convolve(pmf, binomial(count, p))
    return pmf


def beta_binomial(n, a, b):
    a, b = mp.mpf(a), mp.mpf(b)
    return [mp.binomial(n, k) * mp.beta(k + a, n - k + b) / mp.beta(a, b) for k in range(n + 1)]


def mixture(n, weights, ps):
    parts = [binomial(n, p) for p in ps]
    return [sum(mp.mpf(w) * part[k] for w, part in zip(weights, parts)) for k in range(n + 1)]


def row_sum(row, count):
    pmf = [mp.mpf(1)]
    for _ in range(count):
        pmf = convolve(pmf, [mp.mpf(x) for x in row])
    return pmf


def discrete_gaussian(sigma, reach):
    s = mp.mpf(sigma)
    norm = mp.nsum(lambda z: mp.exp(-z * z / (2 * s * s)), [-mp.inf, mp.inf])
    return [mp.exp(-mp.mpf(z) ** 2 / (2 * s * s)) / norm for z in range(-reach, reach + 1)]


def discrete_laplace(t, reach):
    t = mp.mpf(t)
    c = mp.tanh(1 / (2 * t))
    return [c * mp.exp(-abs(mp.mpf(z)) / t) for z in range(-reach, reach + 1)]


def lattice_delta(pmf, eps, sensitivity, shifts=None):
    """max over d of sum_o (Y(o-d) - e^eps Y(o))_+ for the pmf Y of X + Z (any offset); d ranges over
    +-1..sensitivity, or over +-shifts when given."""
    e = mp.exp(mp.mpf(eps))
    n = len(pmf)
    best = mp.mpf(0)
    ds = range(1, sensitivity + 1) if shifts is None else shifts
    for d in [sign * s for s in ds for sign in (1, -1)]:
        total = mp.mpf(0)
        for i in range(min(0, d), n + max(0, d)):
            p = pmf[i - d] if 0 <= i - d < n else 0
            q = pmf[i] if 0 <= i < n else 0
            if p > e * q:
                total += p - e * q
        best = max(best, total)
    return best


def lattice_with_noise(pmf, noise_pmf, eps, sensitivity):
    return lattice_delta(convolve(pmf, noise_pmf), eps, sensitivity)


def continuous_delta(pmf, kind, scale, eps, sensitivity, step_fraction=40):
    """Continuous Gaussian ('gaussian', scale = sigma) or Laplace ('laplace', scale = b) noise."""
    s = mp.mpf(scale)
    if kind == "gaussian":
        def dens(x):
            return mp.npdf(x, 0, s)

        def cdf(x):
            return mp.ncdf(x / s)
    else:
        def dens(x):
            return mp.exp(-abs(x) / s) / (2 * s)

        def cdf(x):
            return mp.exp(x / s) / 2 if x < 0 else 1 - mp.exp(-x / s) / 2
    e = mp.exp(mp.mpf(eps))
    ks = [k for k, w in enumerate(pmf) if w]
    best = mp.mpf(0)
    for d in [t for t in range(-sensitivity, sensitivity + 1) if t]:
        def g(o):
            return sum(pmf[k] * (dens(o - d - k) - e * dens(o - k)) for k in ks)

        lo, hi = min(ks) - abs(d) - 40 * s, max(ks) + abs(d) + 40 * s
        h = s / step_fraction
        xs = [lo + i * h for i in range(int((hi - lo) / h) + 1)]
        vals = [g(x) for x in xs]
        cuts = [mp.ninf]
        for x0, x1, v0, v1 in zip(xs, xs[1:], vals, vals[1:]):
            if (v0 > 0) != (v1 > 0):
                a, b = x0, x1
                for _ in range(120):
                    m = (a + b) / 2
                    if (g(m) > 0) == (v0 > 0):
                        a = m
                    else:
                        b = m
                cuts.append((a + b) / 2)
        cuts.append(mp.inf)

        def mass(shift, a, b):
            return sum(pmf[k] * ((cdf(b - shift - k) if b != mp.inf else 1) -
                                 (cdf(a - shift - k) if a != mp.ninf else 0)) for k in ks)

        total, positive = mp.mpf(0), vals[0] > 0     # the regions alternate in sign
        for a, b in zip(cuts, cuts[1:]):
            if positive:
                total += mass(d, a, b) - e * mass(0, a, b)
            positive = not positive
        best = max(best, total)
    return best
