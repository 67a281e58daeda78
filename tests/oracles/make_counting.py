"""The mpmath values tests/test_counting.py checks CountingQuery against, stored in counting.json.

Run ``python tests/oracles/make_counting.py`` (from the repository root) to rewrite counting.json; the
same mpmath, the same file, bit for bit (every value is the str of an mpf at its case's digits, keys
sorted).  The values come from tests/oracle.py (imported, not copied: it shares no code with ppk);
test_counting.py re-derives a few of them live with :func:`compute`, so a corrupted file is caught.
"""
import os
import sys

import mpmath as mp

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # tests/, for oracle.py
import oracle  # noqa: E402

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "counting.json")
QUADRATURE_DPS = 25     # oracle.quadrature_delta's default
MILLS_DPS = 60          # test_mills_ratio_matches_mpmath

# (N, p, sigma, eps): delta from ~0.5 down to far below 1e-300, sigma from 0 to thousands
ORACLE_CASES = [
    (0, 0.5, 2.0, 0.5), (0, 0.3, 0.3, 3.0), (1, 0.5, 1.0, 0.1), (2, 0.01, 0.5, 1.0), (5, 0.5, 1.0, 0.3),
    (10, 0.01, 2.0, 1.0), (10, 0.01, 2.0, 50.0), (50, 0.2, 0.05, 0.2), (50, 0.2, 0.3, 0.2), (50, 0.99, 4.0, 2.0),
    (200, 0.5, 0.0, 0.0), (1000, 0.3, 0.0, 1.0), (1000, 0.3, 0.2, 1.0), (1000, 0.3, 1.0, 0.1), (1000, 0.7, 30.0, 0.0),
    (2000, 0.9, 5000.0, 0.001), (2999, 0.05, 3.0, 8.0), (99_998, 0.5, 3.0, 0.1),
]
LARGE_N_CASES = [
    (10**6, 0.3, 100.0, 0.05),        # delta ~ 1e-124
    (10**7, 0.2, 1000.0, 0.1),        # delta ~ 1e-5515: far below the float range
    (10**7, 0.5, 3000.0, 0.002),      # the calibration regime, delta ~ 2e-16
]
QUADRATURE_CASES = [(1, 0.5, 0.7, 0.2), (2, 0.3, 1.0, 0.5), (3, 0.8, 0.4, 0.05)]
GAUSSIAN_CASES = [(0.5, 0.1), (3.0, 1.0), (20.0, 0.01), (1.0, 40.0)]     # (sigma, eps), sensitivity 1
MILLS_CASES = [(247.0, 3.0), (1e4, 0.01), (2.0, 0.5), (0.5, 2.0)]


def key(*parts):
    return "/".join(str(p) for p in parts)


def cases():
    """key -> (digits, the oracle's value as a function of nothing)."""
    out = {}
    for N, p, sigma, eps in ORACLE_CASES + LARGE_N_CASES:
        out[key("log-delta", N, p, sigma, eps)] = (oracle.DPS, lambda a=(N, p, sigma, eps): oracle.log_delta(*a))
    for N, p, sigma, eps in QUADRATURE_CASES:
        out[key("quadrature-delta", N, p, sigma, eps)] = (
            QUADRATURE_DPS, lambda a=(N, p, sigma, eps): oracle.quadrature_delta(*a, dps=QUADRATURE_DPS))
    for sigma, eps in GAUSSIAN_CASES:
        out[key("gaussian-log-delta", sigma, eps)] = (oracle.DPS, lambda a=(sigma, eps): oracle.gaussian_log_delta(*a))
    for sigma, eps in MILLS_CASES:
        out[key("gaussian-log-delta", sigma, eps, MILLS_DPS)] = (
            MILLS_DPS, lambda a=(sigma, eps): oracle.gaussian_log_delta(*a, dps=MILLS_DPS))
    return out


def compute(name):
    """The stored string of one case, recomputed."""
    digits, f = cases()[name]
    value = f()
    with mp.workdps(digits):
        return str(mp.mpf(value))


def main():
    from oracles import compute_and_write
    compute_and_write(PATH, {"generator": "tests/oracles/make_counting.py"}, cases(), compute)


if __name__ == "__main__":
    main()
