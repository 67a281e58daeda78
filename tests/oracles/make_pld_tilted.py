"""Writes tests/oracles/pld_tilted.json: the exact sums test_pld_tilted compares ppk's plans with, by that
module's own oracle functions (mpmath at dps 50, no ppk number in them):

* randomized response eps0 = 0.1 (300 runs) composed with a Gaussian of mu = sqrt(2): a binomial sum of
  Gaussian curves (``_rr_gaussian_log_delta``), and the eps where it is 1e-6 (mpmath.findroot);
* two-outcome pairs composed k times: binomial sums (``_binary_log_delta``), both orders.

The Gaussian closed forms there cost microseconds and stay live.  Run from anywhere (about 4 s CPU):

    python tests/oracles/make_pld_tilted.py

Re-running it reproduces the file bit for bit (no randomness; sorted keys; the oracle functions return
floats, stored by repr).
"""
from __future__ import annotations

import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))          # tests/: the oracle functions live in the test module
import mpmath as mp  # noqa: E402

import test_pld_tilted as T  # noqa: E402  (sets mp.mp.dps = 50)

RR = {"eps0": 0.1, "n_rr": 300, "mu2": 2.0, "eps": [1.0, 5.0, 8.0, 12.55, 40.0], "delta": 1e-6,
      "bracket": [12.0, 13.0]}
# (p, q, k, eps): the lattice pair far into the tail, and randomized response eps0 = 0.01 (atoms on bucket edges)
_PE = math.exp(0.01) / (1 + math.exp(0.01))
BINARY = [([0.7, 0.3], [0.2, 0.8], 1500, [300.0, 600.0, 1000.0, 1400.0, 1700.0]),
          ([_PE, 1 - _PE], [1 - _PE, _PE], 10_000, [4.0, 9.0, 15.0])]


def rr_gaussian(eps):
    return T._rr_gaussian_log_delta(RR["eps0"], RR["n_rr"], math.sqrt(RR["mu2"]), eps)


def rr_gaussian_epsilon():
    return float(mp.findroot(lambda e: rr_gaussian(e) - math.log(RR["delta"]), tuple(RR["bracket"]),
                             solver="anderson"))


def main():
    assert mp.mp.dps == 50
    out = {
        "about": "tests/oracles/make_pld_tilted.py: exact log delta (natural log) of composed pairs by "
                 "test_pld_tilted's oracle functions",
        "dps": mp.mp.dps,
        "rr_gaussian": {**RR, "log_delta": [rr_gaussian(e) for e in RR["eps"]],
                        "epsilon": rr_gaussian_epsilon()},
        "binary": [{"p": p, "q": q, "k": k, "eps": eps,
                    "log_delta": [T._binary_log_delta(p, q, k, e) for e in eps],
                    "log_delta_mirror": [T._binary_log_delta(q, p, k, e) for e in eps]} for p, q, k, eps in BINARY],
    }
    with open(os.path.join(HERE, "pld_tilted.json"), "w") as fh:
        json.dump(out, fh, indent=1, sort_keys=True)
        fh.write("\n")


if __name__ == "__main__":
    main()
