"""Exact privacy curves of composed Laplace mechanisms, written once to ``pld_laplace.json``
(tests/test_pld_laplace_oracle.py).

Run from the repository root: ``python tests/oracles/make_pld_laplace.py``.  Independent of ppk.  One run of
Lap(0, b) against Lap(1, b) has privacy loss L = e0 = 1/b with P-probability 1/2 (output <= 0), L = -e0 with
P-probability e^-e0 / 2 (output >= 1), and in between (output o in (0, 1)) L = e0 (1 - 2 o), whose
P-density is e^{(L - e0)/2} / 4 on (-e0, e0): an exponential tilt of the uniform.  K runs: choose how many
land on each atom (multinomial); the k = K - n+ - n- continuous ones sum to t with P-density
g_k(t) = 4^-k e^{(t - k e0)/2} (2 e0)^{k-1} IH_k((t + k e0) / (2 e0)), IH_k the Irwin-Hall density, so

    delta(eps) = sum over (n+, n-) of coef x integral over t of g_k(t) (1 - e^{eps - a - t})_+,

a = (n+ - n-) e0, evaluated in mpmath at 40 digits with the integral split at the Irwin-Hall density's
knots.  For the symmetric Laplace pair one order serves both.  The scales: 30 (e0 = 1/30 off every grid of
1e-3, where the builder once counted the lower atom a bucket too low) and 25 (e0 on the grid).
"""
from __future__ import annotations

import os
import sys
from math import comb, factorial

import mpmath as mp

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from oracles import compute_and_write  # noqa: E402

DPS = 40
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "pld_laplace.json")
#: (scale b, runs K, eps)
CASES = [(b, k, e) for b in (30, 25) for k in (1, 3) for e in ("0", "0.01", "0.05", "0.08")]


def irwin_hall(x, k):
    """Density of the sum of k uniforms on (0, 1) at x."""
    if x <= 0 or x >= k:
        return mp.mpf(0)
    return sum((-1) ** j * comb(k, j) * (x - j) ** (k - 1) for j in range(int(mp.floor(x)) + 1)) / factorial(k - 1)


def delta(b, runs: int, eps) -> mp.mpf:
    e0 = 1 / mp.mpf(b)
    eps = mp.mpf(eps)

    def g(t, k):   # P-density of the sum of k continuous losses (the docstring's g_k)
        return (mp.mpf(1) / 4) ** k * mp.e ** (-k * e0 / 2) * mp.e ** (t / 2) * (2 * e0) ** (k - 1) \
            * irwin_hall((t + k * e0) / (2 * e0), k)

    total = mp.mpf(0)
    for n_plus in range(runs + 1):
        for n_minus in range(runs + 1 - n_plus):
            k = runs - n_plus - n_minus
            coef = mp.mpf(factorial(runs)) / (factorial(n_plus) * factorial(n_minus) * factorial(k)) \
                * mp.mpf(0.5) ** n_plus * (mp.mpf(0.5) * mp.e ** (-e0)) ** n_minus
            a = (n_plus - n_minus) * e0
            if k == 0:
                total += coef * max(mp.mpf(0), 1 - mp.e ** (eps - a))
                continue
            lo = max(-k * e0, eps - a)
            if lo < k * e0:
                knots = [lo] + [-k * e0 + 2 * e0 * j for j in range(1, k) if -k * e0 + 2 * e0 * j > lo] + [k * e0]
                total += coef * mp.quad(lambda t: g(t, k) * (1 - mp.e ** (eps - a - t)), knots)
    return total


def key(b, runs, eps) -> str:
    return f"b={b} K={runs} eps={eps}"


def compute(name: str) -> str:
    b, runs, eps = next(c for c in CASES if key(*c) == name)
    with mp.workdps(DPS):
        return mp.nstr(delta(b, runs, eps), 30)


if __name__ == "__main__":
    compute_and_write(OUT, {"generator": "tests/oracles/make_pld_laplace.py", "dps": DPS},
                      [key(*c) for c in CASES], compute)
