"""The family engine's three paths (C++, cpp/include/ppk/family/) against an mpmath oracle.

The oracle shares no code with ppk: exact pmfs of the natural laws (binomial coefficients, Beta
functions, convolutions), the added laws' densities and tails in closed form or summed, and
delta(eps) = max over shifts d and both orders of the sum (lattice) or integral (continuous) of
(P - e^eps Q)_+: every sign change of P - e^eps Q found on a grid and refined by bisection, the
positive parts integrated with the noise's tails.  The threshold path on log-concave natural noise; the
lattice-sum path (no added noise, or discrete noise over natural noise that is not log-concave: a
U-shaped beta-binomial, a mixture of binomials) and the crossings path (continuous noise over those).
Promise checked (docs/natural-noise.md, "Accuracy"): the estimate
within 1e-12 relative of delta where delta > 1e-300, within 1e-14 of |log delta| below, and the
certified upper bound never below delta.
"""
import math

import mpmath as mp
import numpy as np
import pytest

import ppk
from ppk import _kernels, noise

DPS = 40


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


# -- the grid --------------------------------------------------------------------------------------

NATURAL = {
    "binomial": (lambda: noise.Binomial(30, 0.3), lambda: o_binomial(30, 0.3)),
    "poisson-binomial": (lambda: noise.PoissonBinomial(groups=[(12, 0.1), (15, 0.6)]),
                         lambda: o_poisson_binomial([(12, 0.1), (15, 0.6)])),
    "beta-binomial": (lambda: noise.BetaBinomial(25, 2.0, 3.0), lambda: o_beta_binomial(25, 2, 3)),
    "row-sum": (lambda: noise.RowSum([0.2, 0.5, 0.3], 12), lambda: o_row_sum([0.2, 0.5, 0.3], 12)),
}
ADDED = {
    "gauss": lambda: noise.Gaussian(3.0),
    "laplace": lambda: noise.Laplace(0.2),
    "dg": lambda: noise.DiscreteGaussian(3.0),
    "dl": lambda: noise.DiscreteLaplace(0.2),
}
SCALES = {"gauss": 3.0, "laplace": 0.2, "dg": 3.0, "dl": 0.2}
EPS = [(1, 0.1), (2, 1.0), (3, 5.0), (1, 20.0)]     # (sensitivity, eps) pairs


def check(q, ref, eps):
    est, up = q.log_delta(eps), q.log_delta_upper(eps)
    if ref == 0:
        assert est == up == -math.inf
        return
    log_ref = mp.log(ref)
    assert mp.mpf(up) >= log_ref, (up, log_ref)
    tol = 1e-12 if log_ref > math.log(1e-300) else 1e-14 * abs(float(log_ref))
    assert abs(est - float(log_ref)) <= tol, (est, float(log_ref), est - float(log_ref))


@pytest.mark.parametrize("natural", sorted(NATURAL))
@pytest.mark.parametrize("added", sorted(ADDED))
def test_threshold_path_against_the_oracle(natural, added):
    make, oracle = NATURAL[natural]
    with mp.workdps(DPS):
        w, law = oracle(), OLaw(added, SCALES[added])
        for s, eps in EPS:
            q = ppk.NoisyQuery(natural=make(), added=ADDED[added](), sensitivity=s)
            assert q.path in ("threshold", "counting kernel")   # (the kernel: binomial, Gaussian, s = 1)
            check(q, o_delta(w, law, range(1, s + 1), eps), eps)


@pytest.mark.parametrize("added,eps", [("gauss", 12.0), ("dg", 12.0), ("laplace", 9.0), ("dl", 9.5)])
def test_tiny_deltas_against_the_oracle(added, eps):
    # beyond 1e-300 (Gaussian laws: eps sigma^2 / d = 108 beyond the support)
    with mp.workdps(DPS):
        w, law = o_binomial(30, 0.3), OLaw(added, SCALES[added])
        q = ppk.NoisyQuery(natural=noise.Binomial(30, 0.3), added=ADDED[added](), sensitivity=2)
        ref = o_delta(w, law, (1, 2), eps)
        check(q, ref, eps)


def test_the_issue_example_reaches_below_the_old_floor():
    # 1e5 binomial rows, sigma = 30, sensitivity 2, eps = 4: delta = e^-2405.55 (the Python engine's
    # windows stopped at e^-2048 and reported a bound of e^-2049.08).  Oracle: the root of the loss by
    # bisection at 50 digits and the Gaussian tail masses summed over the binomial support there (the
    # loss is monotone; the shift 2 dominates, the mirror's root is checked too)
    q = ppk.NoisyQuery(natural=noise.Binomial(100_000, 0.01), added=noise.Gaussian(30.0), sensitivity=2)
    est, up = q.log_delta(4.0), q.log_delta_upper(4.0)
    with mp.workdps(50):
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
        assert abs(est - float(best)) <= 1e-14 * abs(float(best)), (est, best)
        assert mp.mpf(up) >= best
        assert float(best) == pytest.approx(-2405.5527, abs=1e-3)


@pytest.mark.parametrize("sigma", [0.3, 3.0, 30.0, 300.0, 2000.0])
def test_discrete_gaussian_tail_in_cpp(sigma):
    # the C++ law's table and its series beyond, against sums at 40 digits
    law = _kernels.family_law(2, sigma)
    top = int(math.ceil(sigma * math.sqrt(3000))) + 2
    xs = sorted({0, 1, top // 2, top - 1, top, top + 1, 2 * top, 10 * top, -1, -3})
    got = law.log_sf(np.array(xs, dtype=np.longdouble))
    with mp.workdps(DPS):
        ref_law = OLaw("dg", sigma)
        for x, g in zip(xs, got):
            ref = mp.log(ref_law.sf(x))
            got_ = mp.mpf(np.format_float_scientific(g, unique=True))    # (every digit of the long double)
            assert abs(got_ - ref) <= 1e-17 * abs(ref) + 1e-17, (x, g, ref)


def test_binomial_windows_reach_any_depth_and_bound_what_they_leave_out():
    shallow = _kernels.family_binomial_window(100_000, 0.01, depth=64.0)
    deep = _kernels.family_binomial_window(100_000, 0.01, depth=8192.0)
    assert deep.offset == 0 and deep.size > shallow.size
    with mp.workdps(30):    # P(X > last) and P(X < first) of the shallow window, bounded by log_dropped
        n, p = 100_000, mp.mpf("0.01")
        first, last = shallow.offset, shallow.offset + shallow.size - 1
        upper = mp.betainc(last + 1, n - last, 0, p, regularized=True)
        lower = mp.betainc(first, n - first + 1, p, 1, regularized=True)
        assert mp.log(upper + lower) <= shallow.log_dropped <= mp.log(upper + lower) + 1.0


def test_the_threshold_path_is_interruptible_and_refuses_bad_input():
    law = _kernels.family_law(0, 3.0)
    w = _kernels.family_binomial_window(50, 0.3, depth=64.0)
    with pytest.raises(ValueError, match="eps"):
        _kernels.family_threshold(w, law, scale=3.0, shifts=(1,), eps=float("nan"))
    with pytest.raises(ValueError, match="scale"):
        _kernels.family_threshold(w, law, scale=4.0, shifts=(1,), eps=1.0)
    with pytest.raises(ValueError, match="log_pmf"):
        _kernels.family_window(0, np.array([np.nan], dtype=np.longdouble), log_dropped=-np.inf, log_error=0.0)


# -- the lattice-sum and crossings paths: natural noise that is not log-concave -------------------------

NOT_LOG_CONCAVE = {
    "beta-binomial U": (lambda: noise.BetaBinomial(14, 0.5, 0.5), lambda: o_beta_binomial(14, 0.5, 0.5)),
    "mixture": (lambda: noise.BinomialMixture(14, [0.3, 0.7], [0.15, 0.8]),
                lambda: o_mixture(14, [0.3, 0.7], [0.15, 0.8])),
}
ADDED_ALL = {**ADDED, "none": lambda: noise.NoNoise()}
EPS_OTHER = [(1, 0.1), (2, 1.0), (3, 5.0)]


@pytest.mark.parametrize("natural", sorted(NOT_LOG_CONCAVE))
@pytest.mark.parametrize("added", sorted(ADDED_ALL))
def test_lattice_sum_and_crossings_paths_against_the_oracle(natural, added):
    make, oracle = NOT_LOG_CONCAVE[natural]
    with mp.workdps(DPS):
        w, law = oracle(), (OLaw(added, SCALES[added]) if added != "none" else None)
        for s, eps in EPS_OTHER:
            q = ppk.NoisyQuery(natural=make(), added=ADDED_ALL[added](), sensitivity=s)
            assert q.path == ("crossings" if added in ("gauss", "laplace") else "lattice sum")
            check(q, o_delta(w, law, range(1, s + 1), eps), eps)


@pytest.mark.parametrize("natural,added", [("beta-binomial U", "gauss"), ("mixture", "dg")])
def test_tiny_deltas_of_the_other_paths_against_the_oracle(natural, added):
    # beyond 1e-300 (e^-700), sensitivity 2: the crossings eps sigma^2 / d = 112 beyond the support.  (With
    # the Laplace laws delta is at least about (s/b - eps)/2 here, as these laws' edges are not rare.)
    eps = 25.0
    make, oracle = NOT_LOG_CONCAVE[natural]
    with mp.workdps(DPS):
        q = ppk.NoisyQuery(natural=make(), added=ADDED[added](), sensitivity=2)
        ref = o_delta(oracle(), OLaw(added, SCALES[added]), (1, 2), eps)
        assert ref < mp.mpf("1e-300")
        check(q, ref, eps)
