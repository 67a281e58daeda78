"""Writes tests/oracles/pld_subsampled.json: the contour-integral oracle (tests/subsampled_oracle.py, mpmath
only, no ppk) for the k-fold Poisson-subsampled Gaussian, and the oracle's own checks against independent
references (closed forms, an exact binomial sum, direct quadrature).  Run from anywhere:

    python tests/oracles/make_pld_subsampled.py            # about 3 min CPU: every value at dps 40
    python tests/oracles/make_pld_subsampled.py --check    # also a second contour and dps 50 (a few times that)

Each value's CPU seconds go to stderr (the add order at (2, 0.01, 1000, 6.87) takes 85 s, the k-fold values
at sigma = 4 about 1 s: test_pld_subsampled_composition re-derives from those).

Re-running it reproduces the file bit for bit (no randomness; sorted keys; values as mpmath strings of 25
significant digits, about the oracle's accuracy: a second contour (rise = 5) and dps 50 agreed with dps 40 to
3.1e-24 in log delta over every k-fold value when they were first produced).  Every check is asserted
before the file is written, so a stored file is one whose oracle passed them.

The k-fold eps were rounded to 3 digits from the saddle-point estimate of delta = 1e-3, 1e-15, 1e-100,
1e-300.  "-inf": delta = 0 (the add order's loss is at most -log(1 - q), so its k-fold delta vanishes for
eps >= -k log(1 - q)).
"""
from __future__ import annotations

import json
import os
import sys
import time

import mpmath as mp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))          # tests/: the oracle module
import subsampled_oracle as oracle  # noqa: E402

DPS = 40
DIGITS = 25

KFOLD = [(2.0, 0.01, 1000, 0.377), (2.0, 0.01, 1000, 1.34), (2.0, 0.01, 1000, 6.87), (2.0, 0.01, 1000, 19.9),
         (1.0, 0.05, 200, 3.16), (1.0, 0.05, 200, 11.1), (1.0, 0.05, 200, 52.6), (1.0, 0.05, 200, 139.0),
         (4.0, 0.1, 3000, 4.76), (4.0, 0.1, 3000, 11.8), (4.0, 0.1, 3000, 31.7), (4.0, 0.1, 3000, 56.5)]
ONE_FOLD = (4.0, 0.5, 0.1)                         # (sigma, q, eps), both orders, contour and direct
GAUSSIAN = [(2.0, 10, 4.32), (3.0, 1000, 140.0), (1.0, 100, 300.0), (3.0, 1000, 470.0)]   # delta 1e-2 .. 1e-338
KERNEL = [(-2, 0.7), (0.5, 0.7), (0.5, -0.5), (-2, -1.5)]   # (u, c): c right of both poles, between, left
RR = ("0.7", 5)                                    # randomized response p, k; eps = 2 log(p / (1 - p))


def s(v) -> str:
    return mp.nstr(v, DIGITS)


def timed(label, f, *args, **kw):
    t0 = time.process_time()
    v = f(*args, **kw)
    print(f"{label}: {s(v)} ({time.process_time() - t0:.2f} s CPU)", file=sys.stderr, flush=True)
    return v


def kernel(u, c):
    # (1 - e^{-u})_+ right of 0; crossing the pole at 0 subtracts its residue 1, the one at -1 adds e^{-u}
    got = timed(f"kernel u={u} c={c}", oracle.kernel_inversion, u, c)
    with mp.workdps(30):
        want = max(0, 1 - mp.exp(-u)) - (1 if c < 0 else 0) + (mp.exp(-u) if c < -1 else 0)
        assert abs(got - want) <= mp.mpf("1e-25"), (u, c, got, want)
    return {"u": u, "c": c, "contour": s(got), "closed_form": s(want)}


class RandomizedResponse:
    """M(z) = p e^{za} + (1-p) e^{-za}, a = log(p / (1-p)): the exact MGF of randomized response's loss."""

    def __init__(self, p):
        self.p = mp.mpf(p)
        self.a = mp.log(self.p / (1 - self.p))
        self.period = 2 * mp.pi / self.a

    def __call__(self, z):
        return self.p * mp.exp(z * self.a) + (1 - self.p) * mp.exp(-z * self.a)


def randomized_response(p, k):
    with mp.workdps(30):
        mgf = RandomizedResponse(p)
        eps = 2 * mgf.a             # on the lattice of S: the integrand is periodic in t times a 1/t^2 decay
        got = timed("randomized response contour", oracle.log_delta_mgf, mgf, k, eps, c=0.5)
        want = oracle.log_delta_binomial(mgf.p, k, eps)
        assert abs(got - want) <= mp.mpf("1e-25"), (got, want)
    return {"p": p, "k": k, "eps": "2 log(p / (1 - p))", "contour": s(got), "binomial": s(want)}


def gaussian(sigma, k, eps):
    got = timed(f"gaussian sigma={sigma} k={k} eps={eps}", oracle.log_delta, sigma, 1.0, k, eps, dps=DPS)
    want = oracle.log_delta_gaussian(sigma, k, eps, dps=DPS)
    with mp.workdps(DPS):
        assert abs(mp.expm1(got - want)) <= mp.mpf("1e-20"), (sigma, k, eps, got, want)
    return {"sigma": sigma, "k": k, "eps": eps, "contour": s(got), "closed_form": s(want)}


def one_fold(sigma, q, eps):
    row = {"sigma": sigma, "q": q, "eps": eps}
    for order in ("remove", "add"):
        got = timed(f"one-fold {order}", oracle.log_delta, sigma, q, 1, eps, order, dps=DPS)
        want = timed(f"one-fold {order} direct", oracle.log_delta_direct, sigma, q, eps, order, dps=DPS)
        with mp.workdps(DPS):
            assert abs(mp.expm1(got - want)) <= mp.mpf("1e-20"), (order, got, want)
        row[order], row[order + "_direct"] = s(got), s(want)
    return row


def kfold(sigma, q, k, eps, check):
    row = {"sigma": sigma, "q": q, "k": k, "eps": eps}
    for order in ("remove", "add"):
        v = timed(f"k-fold {order} {sigma} {q} {k} {eps}", oracle.log_delta, sigma, q, k, eps, order, dps=DPS)
        if check and v != mp.mpf("-inf"):
            with mp.workdps(DPS):
                for kw in ({"rise": 5}, {"dps": 50}):
                    w = oracle.log_delta(sigma, q, k, eps, order, **{"dps": DPS, **kw})
                    assert abs(w - v) <= mp.mpf("1e-22"), (sigma, q, k, eps, order, kw, v, w)
        row[order] = s(v)
    return row


def main(check=False):
    out = {
        "about": "tests/oracles/make_pld_subsampled.py: log delta (natural log) of the Poisson-subsampled "
                 "Gaussian by tests/subsampled_oracle.py, and the oracle's checks",
        "dps": DPS,
        "digits": DIGITS,
        "kernel": [kernel(u, c) for u, c in KERNEL],
        "randomized_response": randomized_response(*RR),
        "gaussian": [gaussian(*g) for g in GAUSSIAN],
        "one_fold": one_fold(*ONE_FOLD),
        "kfold": [kfold(*case, check) for case in KFOLD],
    }
    with open(os.path.join(HERE, "pld_subsampled.json"), "w") as fh:
        json.dump(out, fh, indent=1, sort_keys=True)
        fh.write("\n")


if __name__ == "__main__":
    main(check="--check" in sys.argv[1:])
