"""The family engine's 40-digit oracle and the values it gives, stored in family.json.

Run ``python tests/oracles/make_family.py`` (from the repository root) to rewrite family.json; the same
mpmath, the same file, bit for bit (every value is the str of an mpf at its case's digits, keys sorted).
tests/test_family_engine.py compares ppk against the stored values and re-derives a few of them live
with :func:`compute`, so a corrupted file is caught.

The oracle shares no code with ppk: exact pmfs of the natural laws (binomial coefficients, Beta
functions, convolutions), the added laws' densities and tails in closed form or summed, and
delta(eps) = max over shifts d and both orders of the sum (lattice) or integral (continuous) of
(P - e^eps Q)_+: every sign change of P - e^eps Q found on a grid and refined by bisection, the
positive parts integrated with the noise's tails.
"""
import math
import os
import sys

import mpmath as mp

DPS = 40
ISSUE_DPS = 50     # the issue example's oracle (test_the_issue_example_reaches_below_the_old_floor)
PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "family.json")


# -- the oracle --------------------------------------------------------------------------------------

def o_binomial(n, p):
    p = mp.mpf(p)
    return 0, [mp.binomial(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]


def o_convolve(a, b):
    out = [mp.mpf(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


def o_poisson_binomial(groups):
    pmf = [mp.mpf(1)]
    for count, p in groups:
        pmf = o_convolve(pmf, o_binomial(count, p)[1])
    return 0, pmf


def o_beta_binomial(n, a, b):
    a, b = mp.mpf(a), mp.mpf(b)
    return 0, [mp.binomial(n, k) * mp.beta(k + a, n - k + b) / mp.beta(a, b) for k in range(n + 1)]


def o_mixture(n, weights, ps):
    comps = [o_binomial(n, p)[1] for p in ps]
    return 0, [sum(mp.mpf(wt) * c[k] for wt, c in zip(weights, comps)) for k in range(n + 1)]


def o_row_sum(row, count):
    row = [mp.mpf(x) for x in row]
    total = sum(row)
    row = [x / total for x in row]
    pmf = [mp.mpf(1)]
    for _ in range(count):
        pmf = o_convolve(pmf, row)
    return 0, pmf


class OLaw:
    """An added law in mpmath: density (pmf) and P(Z > x)."""

    def __init__(self, kind, scale):
        self.kind, self.s = kind, mp.mpf(scale)
        self.lattice = kind in ("dg", "dl")
        if kind == "dg":
            total, z = mp.mpf(1), 1
            while True:
                t = 2 * mp.exp(-mp.mpf(z) ** 2 / (2 * self.s**2))
                total += t
                if t < total * mp.mpf(10) ** -(DPS + 5):
                    break
                z += 1
            self.norm = total

    def density(self, x):
        s = self.s
        if self.kind == "gauss":
            return mp.npdf(x, 0, s)
        if self.kind == "laplace":
            return mp.exp(-abs(x) / s) / (2 * s)
        if self.kind == "dg":
            return mp.exp(-mp.mpf(x) ** 2 / (2 * s**2)) / self.norm
        return mp.tanh(1 / (2 * s)) * mp.exp(-abs(mp.mpf(x)) / s)

    def sf(self, x):
        s = self.s
        if self.kind == "gauss":
            return mp.erfc(x / (s * mp.sqrt(2))) / 2
        if self.kind == "laplace":
            return mp.exp(-x / s) / 2 if x >= 0 else 1 - mp.exp(x / s) / 2
        x = int(mp.floor(x))
        if x < 0:
            return 1 - self.sf(-x - 1)
        if self.kind == "dl":
            return mp.exp(-(x + 1) / s) / (1 + mp.exp(-1 / s))
        total, z = mp.mpf(0), x + 1
        while True:
            t = self.density(z)
            total += t
            if t < total * mp.mpf(10) ** -(DPS + 5):
                return total
            z += 1


def o_hockey(w, law, d, eps):
    """sum / integral of (P - e^eps Q)_+, P the law of d + X + Z, Q of X + Z (X = offset + index of w)."""
    offset, w = w
    ks = [offset + i for i in range(len(w)) if w[i] > 0]
    ws = [w[k - offset] for k in ks]
    c = mp.exp(eps)
    if law is None:     # no added noise: the lattice sum over the natural noise's own pmf
        pmf = dict(zip(ks, ws))
        return sum(max(pmf.get(o - d, 0) - c * pmf.get(o, 0), 0) for o in range(min(ks), max(ks) + d + 1))
    s = law.s

    def g(o):
        return sum(wk * (law.density(o - d - k) - c * law.density(o - k)) for k, wk in zip(ks, ws))

    # where the loss can exceed eps: for the Gaussian laws beyond k + d/2 + eps sigma^2 / d for some k
    far = eps * s * s / d if law.kind in ("gauss", "dg") else 0
    if law.lattice:     # every output from where P - e^eps Q can be positive until P is negligible
        total, o = mp.mpf(0), min(ks) - int(60 * s) - 60
        while True:
            p = sum(wk * law.density(o - d - k) for k, wk in zip(ks, ws))
            total += max(g(o), 0)
            if o > max(ks) + d + far and (p < total * mp.mpf(10) ** -(DPS + 2) or o > max(ks) + d + far + 100 * s + 100):
                return total
            o += 1

    def mass(lo, hi, shift):   # P(lo < shift + X + Z <= hi)
        out = mp.mpf(0)
        for k, wk in zip(ks, ws):
            upper = law.sf(lo - shift - k) if lo != -mp.inf else 1
            lower = law.sf(hi - shift - k) if hi != mp.inf else 0
            out += wk * (upper - lower)
        return out

    lo, hi = min(ks) - 20 * s, max(ks) + d + far + 20 * s
    grid = [lo + (hi - lo) * i / 300 for i in range(301)]
    vals = [g(x) for x in grid]
    roots = []
    for a, b, ga, gb in zip(grid, grid[1:], vals, vals[1:]):
        if (ga > 0) != (gb > 0):
            for _ in range(115):
                m = (a + b) / 2
                if (g(m) > 0) == (ga > 0):
                    a = m
                else:
                    b = m
            roots.append((a + b) / 2)
    ends = [-mp.inf] + roots + [mp.inf]
    positive = vals[0] > 0
    total = mp.mpf(0)
    for a, b in zip(ends, ends[1:]):
        if positive:
            total += mass(a, b, d) - c * mass(a, b, 0)
        positive = not positive
    return total


def o_delta(w, law, shifts, eps):
    """max over the shifts and both orders (the mirror of X for -d: every added law is symmetric)."""
    offset, pmf = w
    mirror = (-(offset + len(pmf) - 1), pmf[::-1])
    return max(o_hockey(v, law, d, mp.mpf(eps)) for d in shifts for v in (w, mirror))



def issue_example_log_delta():
    """log delta(4) of 1e5 binomial rows (p = 0.01) plus N(0, 30^2), sensitivity 2: the root of the loss by
    bisection at 50 digits and the Gaussian tail masses summed over the binomial support there (the
    loss is monotone; the shift 2 dominates, the mirror's root is checked too)."""
    with mp.workdps(ISSUE_DPS):
        n, p, sigma, eps = 100_000, mp.mpf("0.01"), mp.mpf(30), mp.mpf(4)
        logw = {k: mp.log(mp.binomial(n, k)) + k * mp.log(p) + (n - k) * mp.log(1 - p) for k in range(0, 6000)}
        best = -mp.inf
        for d, sign in [(2, 1), (2, -1), (1, 1), (1, -1)]:
            ks = [sign * k for k in logw]
            lw = list(logw.values())

            def lse(terms):
                m = max(terms)
                return m + mp.log(sum(mp.exp(t - m) for t in terms))

            def loss(o):
                a = lse([w_ - (o - d - k) ** 2 / (2 * sigma**2) for k, w_ in zip(ks, lw)])
                b = lse([w_ - (o - k) ** 2 / (2 * sigma**2) for k, w_ in zip(ks, lw)])
                return a - b

            centre = sign * 1000 + mp.mpf(d) / 2 + eps * sigma**2 / d
            lo, hi = centre - 3000, centre + 3000
            while loss(lo) > eps:
                lo -= 3000
            while loss(hi) <= eps:
                hi += 3000
            for _ in range(48):
                mid = (lo + hi) / 2
                if loss(mid) > eps:
                    hi = mid
                else:
                    lo = mid
            t = (lo + hi) / 2

            def tail(shift):
                return lse([w_ + mp.log(mp.erfc((t - shift - k) / (sigma * mp.sqrt(2))) / 2) for k, w_ in zip(ks, lw)])
            la, lb = tail(d), eps + tail(0)
            best = max(best, la + mp.log(1 - mp.exp(lb - la)) if lb < la else -mp.inf)
        return best


# -- the grid (tests/test_family_engine.py builds the same cases in ppk from these names) -------------

NATURAL = {     # log-concave: the threshold path
    "binomial": lambda: o_binomial(30, 0.3),
    "poisson-binomial": lambda: o_poisson_binomial([(12, 0.1), (15, 0.6)]),
    "beta-binomial": lambda: o_beta_binomial(25, 2, 3),
    "row-sum": lambda: o_row_sum([0.2, 0.5, 0.3], 12),
}
NOT_LOG_CONCAVE = {     # the lattice-sum and crossings paths
    "beta-binomial U": lambda: o_beta_binomial(14, 0.5, 0.5),
    "mixture": lambda: o_mixture(14, [0.3, 0.7], [0.15, 0.8]),
}
SCALES = {"gauss": 3.0, "laplace": 0.2, "dg": 3.0, "dl": 0.2}
EPS = [(1, 0.1), (2, 1.0), (3, 5.0), (1, 20.0)]     # (sensitivity, eps) pairs
EPS_OTHER = [(1, 0.1), (2, 1.0), (3, 5.0)]
TINY = [("gauss", 12.0), ("dg", 12.0), ("laplace", 9.0), ("dl", 9.5)]     # binomial(30, 0.3), sensitivity 2
OTHER_TINY = [("beta-binomial U", "gauss"), ("mixture", "dg")]            # sensitivity 2, eps = OTHER_TINY_EPS
OTHER_TINY_EPS = 25.0
DG_SIGMAS = [0.3, 3.0, 30.0, 300.0, 2000.0]


def dg_points(sigma):
    """The x of the discrete Gaussian's tail checks: both sides of the C++ table's end (top) and beyond."""
    top = int(math.ceil(sigma * math.sqrt(3000))) + 2
    return sorted({0, 1, top // 2, top - 1, top, top + 1, 2 * top, 10 * top, -1, -3})


def key(*parts):
    return "/".join(str(p) for p in parts)


def _delta(w, added, shifts, eps):
    with mp.workdps(DPS):
        law = OLaw(added, SCALES[added]) if added != "none" else None
        return o_delta(w(), law, shifts, eps)


def _dg_log_sf(sigma, x):
    with mp.workdps(DPS):
        return mp.log(OLaw("dg", sigma).sf(x))


def cases():
    """key -> (digits, the oracle's value as a function of nothing)."""
    out = {}
    for natural, w in NATURAL.items():
        for added in SCALES:
            for s, eps in EPS:
                out[key("threshold", natural, added, s, eps)] = (
                    DPS, lambda w=w, added=added, s=s, eps=eps: _delta(w, added, range(1, s + 1), eps))
    for added, eps in TINY:
        out[key("tiny", added, eps)] = (
            DPS, lambda added=added, eps=eps: _delta(NATURAL["binomial"], added, (1, 2), eps))
    for natural, w in NOT_LOG_CONCAVE.items():
        for added in [*SCALES, "none"]:
            for s, eps in EPS_OTHER:
                out[key("other", natural, added, s, eps)] = (
                    DPS, lambda w=w, added=added, s=s, eps=eps: _delta(w, added, range(1, s + 1), eps))
    for natural, added in OTHER_TINY:
        out[key("other-tiny", natural, added, OTHER_TINY_EPS)] = (
            DPS, lambda w=NOT_LOG_CONCAVE[natural], added=added: _delta(w, added, (1, 2), OTHER_TINY_EPS))
    for sigma in DG_SIGMAS:
        for x in dg_points(sigma):
            out[key("dg-log-sf", sigma, x)] = (DPS, lambda sigma=sigma, x=x: _dg_log_sf(sigma, x))
    out["issue-example-log-delta"] = (ISSUE_DPS, issue_example_log_delta)
    return out


def compute(name):
    """The stored string of one case, recomputed."""
    digits, f = cases()[name]
    with mp.workdps(digits):
        return str(f())


def main():
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # tests/, for oracles
    from oracles import compute_and_write
    compute_and_write(PATH, {"generator": "tests/oracles/make_family.py", "dps": DPS, "issue_dps": ISSUE_DPS},
                      cases(), compute)


if __name__ == "__main__":
    main()
