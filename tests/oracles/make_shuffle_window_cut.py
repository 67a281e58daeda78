"""Oracle for tests/test_shuffle_window_cut.py: the window cut's true deficit (docs/shuffle.md, "The window cut to
the varying users' spread"), by brute force in mpmath (60 digits), independently of ppk.

For an instance (m, i, r, lam, frac = theta's fractional part, W) with K the law of D = Bin(i, 1 - r) + Bin(m - i, r)
(the docs' varying users of split first + i), the unit-slope lines l_+(x) = (theta - x) e^(lam (x - theta)) on
x <= theta and l_-(x) = (x - theta) e^(lam (x - theta)) on x > theta, and their cuts to [theta - W, theta] and
(theta, theta + W], it writes
  true   = sum_s min(A, B) - min(A_W, B_W)       (A = l_+ * K, B = l_- * K, A_W, B_W the cut lines' convolutions)
  loose  = sum_s min(B, T_+) + min(A, T_-)       (T_+ = A - A_W, T_- = B - B_W)
  moment = 3 E[D^2 e^(2 lam |D|); |D| >= W/2]    (D shifted by an integer so that E D lies in [0, 1))
each as a decimal string (they reach e^-60).  Run from the repository root:
    python tests/oracles/make_shuffle_window_cut.py
"""
import os
import random

import mpmath as mp

mp.mp.dps = 60


def binom_pmf(n, p):
    return [mp.binomial(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]


def law(m, i, r):
    a, b = binom_pmf(i, 1 - r), binom_pmf(m - i, r)
    out = [mp.mpf(0)] * (m + 1)
    for x, px in enumerate(a):
        for y, py in enumerate(b):
            out[x + y] += px * py
    return out


def deficit(m, i, r, lam, frac, W):
    """(true, loose, moment) for one instance; theta = frac (the sums are invariant under integer shifts)."""
    r, lam, frac = mp.mpf(r), mp.mpf(lam), mp.mpf(frac)
    K = law(m, i, r)
    theta = frac
    # line values at the integers n = s - d, n in theta - m - 2 .. theta + m + 2 (enough: min(A, B) > 0 only for
    # s in (theta, theta + m], so s - d lies in (theta - m, theta + m])
    lo, hi = -m - 3, m + 3
    lp, lm, lpw, lmw = {}, {}, {}, {}
    for n in range(lo, hi + 1):
        x = mp.mpf(n) - theta
        lp[n] = -x * mp.exp(lam * x) if x <= 0 else mp.mpf(0)
        lm[n] = x * mp.exp(lam * x) if x > 0 else mp.mpf(0)
        lpw[n] = lp[n] if -x <= W else mp.mpf(0)
        lmw[n] = lm[n] if x <= W else mp.mpf(0)
    true, loose = mp.mpf(0), mp.mpf(0)
    for s in range(-1, m + 3):
        A = mp.fsum(K[d] * lp[s - d] for d in range(m + 1))
        B = mp.fsum(K[d] * lm[s - d] for d in range(m + 1))
        Tp = mp.fsum(K[d] * (lp[s - d] - lpw[s - d]) for d in range(m + 1))
        Tm = mp.fsum(K[d] * (lm[s - d] - lmw[s - d]) for d in range(m + 1))
        # min(A, B) - min(A - T+, B - T-) = max(T+ - (A - B)_+, T- - (B - A)_+), with no cancellation of T's
        true += max(Tp - max(A - B, 0), Tm - max(B - A, 0))
        loose += min(B, Tp) + min(A, Tm)
    mean = i * (1 - r) + (m - i) * r
    c = int(mp.floor(mean))
    moment = 3 * mp.fsum(K[d] * (d - c) ** 2 * mp.exp(2 * lam * abs(d - c))
                         for d in range(m + 1) if abs(d - c) >= mp.mpf(W) / 2)
    return true, loose, moment


def ladder_parts(m, i, r, lam, frac, Ws, kaps):
    """(lad, full, [true_j]): lad = sum_s min(A_lad, B_lad) for the ladder of lines sum_j (kap_j - kap_(j+1)) l^(W_j)
    (kap non-increasing, kap past the last rung 0), full = sum_s min(A, B) for the uncut unit lines, true_j the unit
    cut deficit of rung j.  The docs claim lad >= kap_1 full - sum_j (kap_j - kap_(j+1)) true_j (superadditivity)."""
    lines_p, lines_m = {}, {}
    theta = mp.mpf(frac)
    kaps = [mp.mpf(k) for k in kaps] + [mp.mpf(0)]
    for n in range(-m - 3, m + 4):
        x = mp.mpf(n) - theta
        base_p = -x * mp.exp(lam * x) if x <= 0 else mp.mpf(0)
        base_m = x * mp.exp(lam * x) if x > 0 else mp.mpf(0)
        # the narrowest rung holding x: its slope
        k = next((kaps[j] for j, W in enumerate(Ws) if abs(x) <= W), mp.mpf(0))
        lines_p[n], lines_m[n] = k * base_p, k * base_m
    K = law(m, i, mp.mpf(r))
    lad = mp.mpf(0)
    for s in range(-1, m + 3):
        A = mp.fsum(K[d] * lines_p[s - d] for d in range(m + 1))
        B = mp.fsum(K[d] * lines_m[s - d] for d in range(m + 1))
        lad += min(A, B)
    # the uncut unit lines' sum (step 3) and each rung's true deficit
    full = mp.mpf(0)
    for s in range(-1, m + 3):
        A = mp.fsum(K[d] * ((theta - (s - d)) * mp.exp(-lam * (theta - (s - d))) if s - d <= theta else 0)
                    for d in range(m + 1))
        B = mp.fsum(K[d] * (((s - d) - theta) * mp.exp(lam * ((s - d) - theta)) if s - d > theta else 0)
                    for d in range(m + 1))
        full += min(A, B)
    return lad, full, [deficit(m, i, r, lam, frac, W)[0] for W in Ws]


def instances():
    """Random instances satisfying the hypotheses (lam >= 0, W^2/m - lam W >= 2, 16 <= W < m), and adversarial
    ones at their boundary: r = 1/2 (Hoeffding's variance m/4 reached), lam at its largest, W at its least."""
    rng = random.Random(20261129)
    out = {}
    while len(out) < 120:
        m = rng.randint(20, 200) if len(out) % 4 == 0 else rng.randint(20, 90)
        W = rng.randint(max(16, int((2 * m) ** 0.5) + 1), m - 1) if m > 17 else None
        if W is None:
            continue
        lam_max = W / m - 2 / W
        if lam_max < 0:
            continue
        lam = rng.choice([0.0, lam_max, rng.uniform(0, lam_max)])
        r = rng.choice([0.5, rng.uniform(0.05, 0.5)])
        i = rng.randint(0, m)
        frac = rng.random()
        out[f"rand{len(out):02d}"] = (m, i, round(r, 6), lam, round(frac, 6), W)
    # boundary: r = 1/2, lam = its largest, the least W, and i at both ends
    for m in (40, 64, 100):
        for W in (16, 20, 24):
            if W >= m:
                continue
            lam = W / m - 2 / W
            if lam < 0:
                continue
            for frac in (0.0, 0.5, 0.999):
                out[f"edge_m{m}_W{W}_f{frac}"] = (m, m // 2, 0.5, lam, frac, W)
    return out


def ladders():
    rng = random.Random(7)
    out = {}
    for q in range(8):
        m = rng.randint(40, 90)
        Ws = sorted(rng.sample(range(16, m + 3), 3))
        lam = rng.uniform(0, max(0.0, Ws[0] / m - 2 / Ws[0]))
        kaps = sorted((rng.uniform(0.2, 1) for _ in Ws), reverse=True)
        out[f"ladder{q}"] = (m, rng.randint(0, m), rng.choice([0.5, round(rng.uniform(0.05, 0.5), 6)]), lam,
                             round(rng.random(), 6), Ws, kaps)
    return out


if __name__ == "__main__":
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
    from tests.oracles import compute_and_write

    def _strs(parts):
        lad, full, trues = parts
        return mp.nstr(lad, 30), mp.nstr(full, 30), [mp.nstr(t, 30) for t in trues]

    inst = instances()
    lads = ladders()

    def compute(name):
        if name in lads:
            m, i, r, lam, frac, Ws, kaps = lads[name]
            return {"m": m, "i": i, "r": r, "lam": lam, "frac": frac, "Ws": Ws, "kaps": kaps,
                    **dict(zip(("lad", "full", "trues"), _strs(ladder_parts(m, i, r, lam, frac, Ws, kaps))))}
        m, i, r, lam, frac, W = inst[name]
        t, lo, mo = deficit(m, i, r, lam, frac, W)
        return {"m": m, "i": i, "r": r, "lam": lam, "frac": frac, "W": W,
                "true": mp.nstr(t, 20), "loose": mp.nstr(lo, 20), "moment": mp.nstr(mo, 20)}

    compute_and_write(os.path.join(os.path.dirname(__file__), "shuffle_window_cut.json"),
                      {"generator": "tests/oracles/make_shuffle_window_cut.py", "dps": 60}, list(inst) + list(lads),
                      compute)
