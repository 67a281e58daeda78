"""Oracle values for tests/test_tradeoff.py: the Gaussian trade-off curve in mpmath (60 digits).

Independent of ppk: for mu-GDP (N(0, 1) vs N(mu, 1)) the best test at false-positive rate alpha has power
1 - beta(alpha) = Phi(mu - z), z = Phi^-1(1 - alpha) (Dong, Roth and Su, "Gaussian differential privacy",
2022); z is found with mpmath's root finder on the upper tail Phi(-z) = alpha, and the power is computed
as the upper tail Phi(-(z - mu)) (no 1 - (1 - x)).  Run `python tests/oracles/make_tradeoff.py` to rewrite
tests/oracles/tradeoff.json (well under a second); it reproduces the file bit for bit.
"""
from __future__ import annotations

import json
import pathlib

import mpmath as mp

HERE = pathlib.Path(__file__).resolve().parent
DPS = 60
MUS = ["0.5", "1", "3"]
ALPHAS = ["1e-12", "1e-9", "1e-6", "1e-3", "0.1", "0.5", "0.9", "0.999999"]


def power(mu: str, alpha: str) -> str:
    with mp.workdps(DPS):
        a, m = mp.mpf(alpha), mp.mpf(mu)
        z = mp.findroot(lambda t: mp.ncdf(-t) - a, mp.sqrt(2) * mp.erfinv(1 - 2 * a), tol=mp.mpf(10) ** (-DPS + 5))
        return mp.nstr(mp.ncdf(-(z - m)), 30)


def main() -> None:
    cases = [{"mu": mu, "alpha": a, "power": power(mu, a)} for mu in MUS for a in ALPHAS]
    doc = {"about": __doc__.strip().splitlines()[0], "dps": DPS, "cases": cases}
    (HERE / "tradeoff.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
