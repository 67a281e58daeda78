"""Oracle values for tests/test_table_plan.py: the exact delta of small plans of counts over one table.

Independent of ppk: each ordered pair's hockey stick is computed from the definition.  With sigma > 0 the
release is a vector of Gaussian-noised counts, its law under "the challenge row is in a" the mixture over
every multinomial outcome of the unknown rows; delta_(a,b) = integral of max(p_a - e^eps p_b, 0) is
integrated numerically in two dimensions (scipy dblquad, epsabs 1e-13, over +-12 sigma of every mean).
With sigma = 0 the release is discrete and the sum over its outcomes is exact (mpmath, 50 digits).
The plan's delta is the largest over the ordered pairs.  Run `python tests/oracles/make_table_plan.py`
to rewrite tests/oracles/table_plan.json (about 1 minute); it reproduces the file bit for bit.
"""
from __future__ import annotations

import itertools
import json
import math
import pathlib

import mpmath
import numpy as np
from scipy import integrate

HERE = pathlib.Path(__file__).resolve().parent

# (name, N unknown rows besides the challenge row, probs, counts [(categories, sigma)], eps values)
CASES = [
    ("two_categories_exact", 3, {"x": 0.3, "y": 0.7}, [(["x"], 1.0), (["y"], 1.5)], [0.1, 0.5, 1.0]),
    ("nested_counts", 3, {"x": 0.2, "y": 0.3, "z": 0.5}, [(["x"], 1.0), (["x", "y"], 0.8)], [0.2, 0.8]),
    ("noiseless_nested", 6, {"x": 0.2, "y": 0.3, "z": 0.5}, [(["x"], 0.0), (["x", "y"], 0.0)], [0.0, 0.3, 1.0]),
]


def outcomes(N: int, k: int):
    """Every vector of category counts of N rows over k categories."""
    for cut in itertools.combinations(range(N + k - 1), k - 1):
        edges = (-1,) + cut + (N + k - 1,)
        yield tuple(edges[i + 1] - edges[i] - 1 for i in range(k))


def multinomial(x, probs) -> float:
    coef = math.factorial(sum(x))
    for xi in x:
        coef //= math.factorial(xi)
    return coef * math.prod(p ** xi for p, xi in zip(probs, x))


def laws(N, probs, counts):
    """For each category a of the challenge row: [(weight, mean vector of the counts)]."""
    cats = list(probs)
    p = [probs[c] for c in cats]
    out = {}
    for a in cats:
        comps = []
        for x in outcomes(N, len(cats)):
            w = multinomial(x, p)
            if w == 0:
                continue
            rows = {c: xi + (c == a) for c, xi in zip(cats, x)}
            comps.append((w, tuple(sum(rows[c] for c in s) for s, _ in counts)))
        out[a] = comps
    return out


def gaussian_pair_delta(comps_a, comps_b, sigmas, eps) -> float:
    s1, s2 = sigmas
    wa = np.array([w for w, _ in comps_a]); ma = np.array([m for _, m in comps_a], dtype=float)
    wb = np.array([w for w, _ in comps_b]); mb = np.array([m for _, m in comps_b], dtype=float)
    c = math.exp(eps)

    def density(w, m, y1, y2):
        z1 = (y1 - m[:, 0]) / s1
        z2 = (y2 - m[:, 1]) / s2
        return float(np.sum(w * np.exp(-0.5 * (z1 * z1 + z2 * z2)))) / (2 * math.pi * s1 * s2)

    def f(y2, y1):
        return max(density(wa, ma, y1, y2) - c * density(wb, mb, y1, y2), 0.0)

    allm = np.vstack([ma, mb])
    lo1, hi1 = allm[:, 0].min() - 12 * s1, allm[:, 0].max() + 12 * s1
    lo2, hi2 = allm[:, 1].min() - 12 * s2, allm[:, 1].max() + 12 * s2
    value, _ = integrate.dblquad(f, lo1, hi1, lo2, hi2, epsabs=1e-13, epsrel=1e-10)
    return value


def noiseless_pair_delta(comps_a, comps_b, eps) -> mpmath.mpf:
    mpmath.mp.dps = 50
    pa: dict = {}
    pb: dict = {}
    for w, m in comps_a:
        pa[m] = pa.get(m, 0) + mpmath.mpf(w)
    for w, m in comps_b:
        pb[m] = pb.get(m, 0) + mpmath.mpf(w)
    c = mpmath.exp(mpmath.mpf(eps))
    return sum((max(pa[y] - c * pb.get(y, 0), 0) for y in pa), mpmath.mpf(0))


def plan_delta(N, probs, counts, eps):
    law = laws(N, probs, counts)
    sigmas = [s for _, s in counts]
    best = 0.0
    for a, b in itertools.permutations(probs, 2):
        if all(s == 0 for s in sigmas):
            d = float(noiseless_pair_delta(law[a], law[b], eps))
        else:
            d = gaussian_pair_delta(law[a], law[b], sigmas, eps)
        best = max(best, d)
    return best


def main() -> None:
    cases = []
    for name, N, probs, counts, eps_values in CASES:
        deltas = [repr(plan_delta(N, probs, counts, e)) for e in eps_values]
        cases.append({"name": name, "n_unknown": N, "probs": probs, "counts": counts, "eps": eps_values,
                      "delta": deltas})
        print(name, deltas)
    doc = {"generator": "tests/oracles/make_table_plan.py",
           "method": "sigma > 0: scipy dblquad (epsabs 1e-13, epsrel 1e-10); sigma = 0: exact sum, mpmath 50 digits",
           "cases": cases}
    (HERE / "table_plan.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
