"""Oracle values for tests/test_extremes.py: delta of the counting query at tiny sigma by brute-force quadrature.

Independent of ppk: tests/oracle.py's quadrature_delta integrates (P_1(o) - e^eps P_0(o))_+ over R with
mpmath (25 digits), both orders, splitting at every sign change.  These are the cases of the issue where
the loss is a near-staircase.  Run `python tests/oracles/make_extremes.py` to rewrite
tests/oracles/extremes.json (about 15 s); it reproduces the file bit for bit.
"""
from __future__ import annotations

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import mpmath as mp  # noqa: E402
import oracle  # noqa: E402  (tests/oracle.py)

DPS = 25
# (N unknown rows besides the challenge row, p, sigma, eps)
CASES = [(5, 0.5, 0.0923, 1e-4), (1, 0.5, 0.056, 0.5), (2, 0.3, 0.07, 0.5)]


def delta(N, p, sigma, eps) -> str:
    return mp.nstr(oracle.quadrature_delta(N, p, sigma, eps, dps=DPS), DPS)


def main() -> None:
    cases = [{"N": N, "p": p, "sigma": s, "eps": e, "delta": delta(N, p, s, e)} for N, p, s, e in CASES]
    doc = {"about": __doc__.strip().splitlines()[0], "dps": DPS, "cases": cases}
    (HERE / "extremes.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
