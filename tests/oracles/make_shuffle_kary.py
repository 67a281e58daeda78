"""Brute-force oracle for k-ary shuffled randomized response (tests/test_shuffle_kary.py), independent of ppk.

Every report histogram of the n users is enumerated in mpmath (50 digits) and the hockey stick summed over
all of them, for the ordered pair of values (0, 1) the challenge user may hold:

* ``iid/...``: the other users' values i.i.d. with probabilities ``probs``, so each one's report is categorical
  with ``theta_c = sum_v probs_v R(v)(c)``: the report histogram of the others is multinomial;
* ``trinomial/...``: the same at n in the hundreds, from the trinomial of the three merged classes (the
  reduction the small cases check), every lattice point summed;
* ``assign/...``: the other users' values fixed (a vector of counts per category): the histogram's law is the
  convolution of the users' reports, computed exactly.  ``sup/...`` is the largest over every assignment.

Run ``python tests/oracles/make_shuffle_kary.py`` to rewrite shuffle_kary.json.
"""
import itertools
import os
import sys

import mpmath as mp

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from oracles import compute_and_write  # noqa: E402

mp.mp.dps = 50


def rr(k, eps0, v):
    e = mp.exp(mp.mpf(eps0))
    return [e / (e + k - 1) if c == v else 1 / (e + k - 1) for c in range(k)]


def histograms(total, k):
    for cut in itertools.combinations(range(total + k - 1), k - 1):
        prev, out = -1, []
        for i in cut:
            out.append(i - prev - 1)
            prev = i
        out.append(total + k - 2 - prev)
        yield tuple(out)


def multinomial(h, theta):
    out = mp.factorial(sum(h))
    for hc, t in zip(h, theta):
        out *= t ** hc / mp.factorial(hc)
    return out


def hockey(P, Q, eps):
    e = mp.exp(mp.mpf(eps))
    return max(sum(max(P[h] - e * Q.get(h, 0), 0) for h in P), sum(max(Q[h] - e * P.get(h, 0), 0) for h in Q))


def with_target(others, k, eps0, x):
    out = {}
    for h, w in others.items():
        for c, p in enumerate(rr(k, eps0, x)):
            hh = list(h)
            hh[c] += 1
            out[tuple(hh)] = out.get(tuple(hh), 0) + w * p
    return out


def iid(n, k, eps0, eps, probs):
    theta = [sum(mp.mpf(probs[v]) * rr(k, eps0, v)[c] for v in range(k)) for c in range(k)]
    others = {h: multinomial(h, theta) for h in histograms(n - 1, k)}
    return hockey(with_target(others, k, eps0, 0), with_target(others, k, eps0, 1), eps)


def assigned(k, eps0, eps, counts):
    law = {tuple([0] * k): mp.mpf(1)}
    for v, cnt in enumerate(counts):
        p = rr(k, eps0, v)
        for _ in range(cnt):
            new = {}
            for h, w in law.items():
                for c in range(k):
                    hh = list(h)
                    hh[c] += 1
                    new[tuple(hh)] = new.get(tuple(hh), 0) + w * p[c]
            law = new
    return hockey(with_target(law, k, eps0, 0), with_target(law, k, eps0, 1), eps)


def trinomial_sum(n, k, eps0, eps, probs):
    """The same pair at larger n, from the three merged classes (x, x', elsewhere): the others' counts are a
    trinomial, and the hockey stick sums (a T(h - e1) + ... )_+ over every (h1, h2) -- every term, 50 digits."""
    e, ee = mp.exp(mp.mpf(eps0)), mp.exp(mp.mpf(eps))
    a, b = e / (e + k - 1), 1 / (e + k - 1)
    theta = [sum(mp.mpf(probs[v]) * rr(k, eps0, v)[c] for v in range(k)) for c in range(k)]
    t = [theta[0], theta[1], 1 - theta[0] - theta[1]]
    N = n - 1
    logf = [mp.loggamma(i + 1) for i in range(n + 1)]

    def T(i, j):
        r = N - i - j
        if i < 0 or j < 0 or r < 0:
            return mp.mpf(0)
        return mp.exp(logf[N] - logf[i] - logf[j] - logf[r] + i * mp.log(t[0]) + j * mp.log(t[1]) + r * mp.log(t[2]))
    total, rev = mp.mpf(0), mp.mpf(0)
    for h1 in range(n + 1):
        for h2 in range(n + 1 - h1):
            p1 = a * T(h1 - 1, h2) + b * T(h1, h2 - 1) + (k - 2) * b * T(h1, h2)
            p2 = b * T(h1 - 1, h2) + a * T(h1, h2 - 1) + (k - 2) * b * T(h1, h2)
            total += max(p1 - ee * p2, 0)
            rev += max(p2 - ee * p1, 0)
    return max(total, rev)


def canonical_assignments(m, k):
    """Counts (n0, n1, rest...) with the rest non-increasing: every assignment up to relabelling the rest."""
    for h in histograms(m, k):
        if list(h[2:]) == sorted(h[2:], reverse=True):
            yield h


CASES = {
    # name: (kind, n, k, eps0, eps, extra)
    "iid/k3_n7_e2_0.3_skew": ("iid", 7, 3, 2.0, 0.3, (0.2, 0.5, 0.3)),
    "iid/k3_n6_e1_0.2_uniform": ("iid", 6, 3, 1.0, 0.2, None),
    "iid/k4_n6_e2_0.5_uniform": ("iid", 6, 4, 2.0, 0.5, None),
    "iid/k4_n5_e3_1.5_uniform": ("iid", 5, 4, 3.0, 1.5, None),
    "iid/k8_n5_e2_0.4_uniform": ("iid", 5, 8, 2.0, 0.4, None),
    "iid/k8_n4_e4_1_uniform": ("iid", 4, 8, 4.0, 1.0, None),
    "assign/k3_n6_e2_0.5_all0": ("assign", 6, 3, 2.0, 0.5, (5, 0, 0)),
    "assign/k3_n6_e2_0.5_all2": ("assign", 6, 3, 2.0, 0.5, (0, 0, 5)),
    "assign/k4_n6_e2_0.5_all0": ("assign", 6, 4, 2.0, 0.5, (5, 0, 0, 0)),
    "assign/k4_n6_e2_0.5_all2": ("assign", 6, 4, 2.0, 0.5, (0, 0, 5, 0)),
    "assign/k4_n6_e2_0.5_split23": ("assign", 6, 4, 2.0, 0.5, (0, 0, 3, 2)),
    "assign/k8_n5_e2_1_all0": ("assign", 5, 8, 2.0, 1.0, (4, 0, 0, 0, 0, 0, 0, 0)),
    "trinomial/k3_n300_e2_0.2_skew": ("trinomial", 300, 3, 2.0, 0.2, (0.2, 0.5, 0.3)),
    "trinomial/k4_n300_e1_0.5_uniform": ("trinomial", 300, 4, 1.0, 0.5, None),
    "trinomial/k8_n200_e3_2.5_uniform": ("trinomial", 200, 8, 3.0, 2.5, None),
    "trinomial/k16_n250_e2_0.3_uniform": ("trinomial", 250, 16, 2.0, 0.3, None),
    "sup/k3_n6_e2_0.5": ("sup", 6, 3, 2.0, 0.5, None),
    "sup/k3_n6_e2_1.4": ("sup", 6, 3, 2.0, 1.4, None),
    "sup/k4_n5_e2_0.5": ("sup", 5, 4, 2.0, 0.5, None),
    "sup/k8_n4_e2_0.5": ("sup", 4, 8, 2.0, 0.5, None),
    "sup/k8_n4_e3_2": ("sup", 4, 8, 3.0, 2.0, None),
}


def compute(name):
    kind, n, k, eps0, eps, extra = CASES[name]
    if kind == "iid":
        value = iid(n, k, eps0, eps, extra or [mp.mpf(1) / k] * k)
        return mp.nstr(value, 40)
    if kind == "trinomial":
        return mp.nstr(trinomial_sum(n, k, eps0, eps, extra or [mp.mpf(1) / k] * k), 40)
    if kind == "assign":
        return mp.nstr(assigned(k, eps0, eps, extra), 40)
    best, arg = mp.mpf(-1), None
    for counts in canonical_assignments(n - 1, k):
        v = assigned(k, eps0, eps, counts)
        if v > best:
            best, arg = v, counts
    return {"delta": mp.nstr(best, 40), "argmax": list(arg)}


if __name__ == "__main__":
    compute_and_write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "shuffle_kary.json"),
                      {"generator": "tests/oracles/make_shuffle_kary.py", "digits": 50,
                       "pair": "challenge value 0 against 1, both orders (max)"}, CASES, compute)
