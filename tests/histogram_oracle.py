"""Independent truths for histograms and overlapping counts, sharing no code with ppk.

* sigma = 0: brute-force enumeration of every multinomial outcome with 50-digit mpmath, the maximum
  over *all* ordered pairs of categories (so the reduction to the two least likely ones is tested too).
* sigma > 0: the true joint densities of the released vector on a fine 2-D grid (the sum of a
  histogram's bins is the same under both hypotheses and independent of the contrasts, so a 3-bin
  histogram lives in a plane), integrated by a Riemann sum of (p_a - e^eps p_b)_+.
"""
import itertools
import math

import mpmath as mp
import numpy as np

mp.mp.dps = 50


def _multinomial(counts, probs):
    out = mp.factorial(sum(counts))
    for c, p in zip(counts, probs):
        out *= mp.mpf(p) ** c / mp.factorial(c)
    return out


def histogram_delta_noiseless(N, probs, eps):
    """max over ordered pairs (a, b) of sum_y (P_a(y) - e^eps P_b(y))_+, exactly (mpmath)."""
    k = len(probs)
    e = mp.e ** mp.mpf(eps)
    outcomes = [y for y in itertools.product(range(N + 2), repeat=k) if sum(y) == N + 1]
    best = mp.mpf(0)
    for a, b in itertools.permutations(range(k), 2):
        total = mp.mpf(0)
        for y in outcomes:
            pa = _multinomial([y[j] - (j == a) for j in range(k)], probs) if y[a] else 0
            pb = _multinomial([y[j] - (j == b) for j in range(k)], probs) if y[b] else 0
            total += max(pa - e * pb, 0)
        best = max(best, total)
    return best


def _grid_delta(means_a, means_b, weights_a, weights_b, sigmas, eps, step=1 / 40):
    """H_{e^eps} between two mixtures of 2-D Gaussians (diagonal noise ``sigmas``) on a grid."""
    means = np.vstack([means_a, means_b])
    h = [s * step for s in sigmas]
    axes = [np.arange(means[:, i].min() - 9 * sigmas[i], means[:, i].max() + 9 * sigmas[i] + h[i], h[i])
            for i in range(2)]
    X, Y = np.meshgrid(*axes, indexing="ij")

    def density(means, weights):
        out = np.zeros_like(X)
        for (mx, my), w in zip(means, weights):
            out += w * np.exp(-0.5 * (((X - mx) / sigmas[0]) ** 2 + ((Y - my) / sigmas[1]) ** 2))
        return out / (2 * math.pi * sigmas[0] * sigmas[1])

    pa, pb = density(means_a, weights_a), density(means_b, weights_b)
    return float(np.sum(np.maximum(pa - math.exp(eps) * pb, 0)) * h[0] * h[1])


def histogram_delta_integrated(N, probs, sigma, eps):
    """A 3-bin histogram with N(0, sigma^2) per bin: max over ordered pairs, by 2-D integration."""
    assert len(probs) == 3
    u1 = np.array([1, -1, 0]) / math.sqrt(2)
    u2 = np.array([1, 1, -2]) / math.sqrt(6)
    counts = [c for c in itertools.product(range(N + 1), repeat=3) if sum(c) == N]
    w = np.array([float(_multinomial(c, probs)) for c in counts])
    C = np.array(counts, dtype=float)

    def means(a):
        mu = C + np.eye(3)[a]
        return np.column_stack([mu @ u1, mu @ u2])

    return max(_grid_delta(means(a), means(b), w, w, [sigma, sigma], eps)
               for a, b in itertools.permutations(range(3), 2))


def overlapping_delta_integrated(atoms, p, sigmas, eps):
    """Two noisy counts over atoms {(0,): .., (0, 1): .., (1,): ..}: max over atoms and both orders."""
    assert len(sigmas) == 2
    live = [t for t, size in atoms.items() if size > 0 and t]
    best = 0.0
    for t in live:
        sizes = [atoms[u] - (u == t) for u in live]
        pmfs = [[math.comb(n, x) * p**x * (1 - p) ** (n - x) for x in range(n + 1)] for n in sizes]
        pts, ws = [], []
        for xs in itertools.product(*[range(n + 1) for n in sizes]):
            ws.append(math.prod(pm[x] for pm, x in zip(pmfs, xs)))
            pts.append([sum(x for u, x in zip(live, xs) if j in u) for j in range(2)])
        base = np.array(pts, dtype=float)
        shift = np.array([1.0 if j in t else 0.0 for j in range(2)])
        w = np.array(ws)
        for a, b in ((base + shift, base), (base, base + shift)):
            best = max(best, _grid_delta(a, b, w, w, sigmas, eps))
    return best
