"""Exact privacy curves of lattice plans, written once to ``pld_lattice.json`` (tests/test_pld_certified.py).

Run from the repository root: ``python tests/oracles/make_pld_lattice.py``.  Independent of ppk: the composed
pairs are enumerated in exact rational arithmetic (Python's ``Fraction``), outcomes with the same likelihood
ratio merged (their hockey-stick terms have one sign), and delta(eps) = max over both orders of
sum (P - e^eps Q)_+ is evaluated in mpmath at 50 digits; eps(delta) is its root, found by bisection to
1e-40.  The plans:

* noiseless counts: a + Bin(N, p) with the challenge row (P) against without (Q), p taken as the exact
  rational of the double given (the truth ppk is asked about), k releases over disjoint rows;
* finite pairs given as doubles (randomized response, three-outcome pairs, one with an outcome Q never
  gives), the truth being the exact rationals of those doubles, k runs, and a mixed plan of two pairs.
"""
from __future__ import annotations

import json
import math
import os
from fractions import Fraction
from math import comb

import mpmath as mp

DPS = 50
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "pld_lattice.json")


def count_pmfs(n_unknown: int, p: float) -> tuple[list[Fraction], list[Fraction]]:
    """P (the challenge row is 1) and Q (it is 0) of a noiseless count, on a + 0 .. a + N + 1."""
    pf = Fraction(p)
    b = [comb(n_unknown, j) * pf ** j * (1 - pf) ** (n_unknown - j) for j in range(n_unknown + 1)]
    return [Fraction(0)] + b, b + [Fraction(0)]


def rr_pmfs(eps0: float) -> tuple[list[float], list[float]]:
    """Randomized response as ppk's CLI builds it (doubles)."""
    e = math.exp(-eps0)
    p = [1.0 / (1.0 + e), e / (1.0 + e)]
    return p, p[::-1]


def composed(pairs: list[tuple[list[Fraction], list[Fraction], int]]) -> dict:
    """{likelihood ratio (None: Q = 0) -> [P, Q]} of the product of ``k`` runs of each pair (exact)."""
    dist: dict = {Fraction(1): [Fraction(1), Fraction(1)]}
    for p, q, k in pairs:
        for _ in range(k):
            out: dict = {}
            for r, (pp, qq) in dist.items():
                for a, b in zip(p, q):
                    if a == 0 and b == 0:
                        continue
                    key = None if (r is None or b == 0) else r * a / b
                    slot = out.setdefault(key, [Fraction(0), Fraction(0)])
                    slot[0] += pp * a
                    slot[1] += qq * b
            dist = out
    return dist


def _mpf(x: Fraction) -> mp.mpf:
    return mp.mpf(x.numerator) / x.denominator


class Curve:
    """delta(eps) = max of both orders, exactly (50 digits)."""

    def __init__(self, dist: dict):
        self.terms = [(_mpf(pp), _mpf(qq)) for pp, qq in dist.values()]

    def delta(self, eps) -> mp.mpf:
        ee = mp.e ** mp.mpf(eps)
        one = sum((a - ee * b for a, b in self.terms if a - ee * b > 0), mp.mpf(0))
        two = sum((b - ee * a for a, b in self.terms if b - ee * a > 0), mp.mpf(0))
        return max(one, two)

    def epsilon(self, delta) -> mp.mpf:
        """The least eps >= 0 with delta(eps) <= delta (bisection; delta(eps) is non-increasing)."""
        delta = mp.mpf(delta)
        if self.delta(0) <= delta:
            return mp.mpf(0)
        lo, hi = mp.mpf(0), mp.mpf(1)
        while self.delta(hi) > delta:
            lo, hi = hi, 2 * hi
            if hi > 1e4:
                return mp.inf
        while hi - lo > mp.mpf(10) ** -40:
            mid = (lo + hi) / 2
            if self.delta(mid) > delta:
                lo = mid
            else:
                hi = mid
        return hi


def cases() -> list[dict]:
    """The plans: ``kind`` and its parameters, as the test builds them, and the pairs they compose."""
    out = []
    for n_unknown, p, k in ((5, 0.5, 10), (5, 0.5, 1), (3, 0.3, 8), (8, 0.5, 4), (2, 0.7, 30), (6, 0.25, 1)):
        out.append(dict(kind="count", n_unknown=n_unknown, p=p, k=k))
    for eps0, k in ((1.3, 50), (0.05, 50), (0.5, 300), (2.0, 1), (0.1, 7), (3.0, 40)):
        out.append(dict(kind="rr", eps0=eps0, k=k))
    for p, q, k in (([0.5, 0.3, 0.2], [0.2, 0.3, 0.5], 20), ([0.6, 0.4, 0.0], [0.5, 0.3, 0.2], 12),
                    ([0.7, 0.2, 0.1], [0.1, 0.6, 0.3], 1), ([0.25, 0.25, 0.5], [0.5, 0.125, 0.375], 9)):
        out.append(dict(kind="pair", p=p, q=q, k=k))
    out.append(dict(kind="mixed", eps0=0.7, k_rr=15, p=[0.5, 0.3, 0.2], q=[0.2, 0.3, 0.5], k=6))
    return out


def pairs_of(case: dict) -> list[tuple[list[Fraction], list[Fraction], int]]:
    if case["kind"] == "count":
        p, q = count_pmfs(case["n_unknown"], case["p"])
        return [(p, q, case["k"])]
    if case["kind"] == "rr":
        p, q = rr_pmfs(case["eps0"])
        return [([Fraction(x) for x in p], [Fraction(x) for x in q], case["k"])]
    if case["kind"] == "pair":
        return [([Fraction(x) for x in case["p"]], [Fraction(x) for x in case["q"]], case["k"])]
    p, q = rr_pmfs(case["eps0"])
    return [([Fraction(x) for x in p], [Fraction(x) for x in q], case["k_rr"]),
            ([Fraction(x) for x in case["p"]], [Fraction(x) for x in case["q"]], case["k"])]


#: the eps each plan's curve is read at, and the deltas whose eps is stored (those of finite pairs' plans)
EPS = (0.0, 0.01, 0.5, 1.0, 3.0, 8.0)
DELTAS = (1e-3, 1e-6, 1e-12, 1e-30, 1e-100, 1e-300)


def main() -> None:
    mp.mp.dps = DPS
    rows = []
    for case in cases():
        curve = Curve(composed(pairs_of(case)))
        row = dict(case=case, delta={repr(e): mp.nstr(curve.delta(e), 40) for e in EPS})
        if case["kind"] in ("rr", "mixed") or (case["kind"] == "pair" and case["k"] > 1):
            row["epsilon"] = {repr(d): mp.nstr(curve.epsilon(d), 40) for d in DELTAS}
        rows.append(row)
        print(case, flush=True)
    with open(OUT, "w") as fh:
        json.dump(dict(dps=DPS, generator="tests/oracles/make_pld_lattice.py", rows=rows), fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
