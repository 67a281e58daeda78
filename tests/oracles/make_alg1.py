"""Oracle values for tests/test_alg1.py: the least sigma with delta(eps) <= delta for the counting query.

Independent of ppk: sigma solves log delta(sigma) = log delta by scipy's brentq (xtol 1e-12, rtol 1e-11) on
tests/oracle.py's log_delta (mpmath, 30 digits), bracketed by [1e-3, 1.001 x the analytic Gaussian sigma]
(the unknown rows only add noise, so the counting query never needs more).  Run
`python tests/oracles/make_alg1.py` to rewrite tests/oracles/alg1.json (about 15 s); it reproduces the file
bit for bit.
"""
from __future__ import annotations

import json
import math
import pathlib
import sys

from scipy import optimize

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import oracle  # noqa: E402  (tests/oracle.py)
from ppk.baselines import analytic_gaussian_sigma  # noqa: E402  (only the bracket's upper end)

DPS = 30
# (N unknown rows besides the challenge row, p, eps, delta)
CASES = [(5, 0.5, 0.3, 1e-3), (20, 0.2, 0.1, 1e-6), (100, 0.6, 0.05, 1e-9), (300, 0.05, 0.5, 1e-12)]


def log_delta(N, p, sigma, eps) -> float:
    return float(oracle.log_delta(N, p, sigma, eps, dps=DPS))


def sigma(N, p, eps, delta) -> float:
    target = math.log(delta)
    hi = analytic_gaussian_sigma(eps=eps, delta=delta)
    return optimize.brentq(lambda s: log_delta(N, p, s, eps) - target, 1e-3, hi * 1.001, xtol=1e-12, rtol=1e-11)


def main() -> None:
    cases = [{"N": N, "p": p, "eps": eps, "delta": delta, "sigma": repr(sigma(N, p, eps, delta))}
             for N, p, eps, delta in CASES]
    doc = {"about": __doc__.strip().splitlines()[0], "dps": DPS, "cases": cases}
    (HERE / "alg1.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
