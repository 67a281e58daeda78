"""Oracle values for tests/test_noisy_query.py: log delta(0.4) of every natural-noise law with every added noise.

Independent of ppk: tests/noise_oracle.py (mpmath, 50 digits) sums the lattice cases exactly and integrates
the continuous ones between the located sign changes with the noise's cdf.  Run
`python tests/oracles/make_noisy_query.py` to rewrite tests/oracles/noisy_query.json (about 1 minute); it
reproduces the file bit for bit.  Stored with 30 significant digits.
"""
from __future__ import annotations

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import noise_oracle as O  # noqa: E402  (tests/noise_oracle.py; sets mpmath to 50 digits)
import mpmath as mp  # noqa: E402

DIGITS = 30
EPS = 0.4
GROUPS = [(4, 0.15), (5, 0.6)]
ROW = [0.2, 0.5, 0.3]
BIMODAL = [0.3, 0.05, 0.05, 0.1, 0.5]     # not log-concave

NATURAL = {   # name: (exact pmf, sensitivity); the laws of the same names in the test
    "binomial": (lambda: O.binomial(9, 0.3), 1),
    "poisson-binomial": (lambda: O.poisson_binomial(GROUPS), 1),
    "beta-binomial": (lambda: O.beta_binomial(9, 2, 3), 1),
    "beta-binomial U": (lambda: O.beta_binomial(9, 0.5, 0.5), 1),
    "mixture": (lambda: O.mixture(9, [0.3, 0.7], [0.15, 0.8]), 1),
    "row sum": (lambda: O.row_sum(ROW, 4), 2),
    "row sum, row not log-concave": (lambda: O.row_sum([0.5, 0.3, 0.2], 12), 2),
    "pmf": (lambda: [mp.mpf(x) for x in BIMODAL], 1),
}
ADDED = {   # name: delta(pmf, sensitivity)
    "gaussian": lambda pmf, s: O.continuous_delta(pmf, "gaussian", 1.3, EPS, s, 20),
    "laplace": lambda pmf, s: O.continuous_delta(pmf, "laplace", 2.0, EPS, s, 20),
    "discrete gaussian": lambda pmf, s: O.lattice_with_noise(pmf, O.discrete_gaussian(1.3, 40), EPS, s),
    "discrete laplace": lambda pmf, s: O.lattice_with_noise(pmf, O.discrete_laplace(2.0, 800), EPS, s),
    "none": lambda pmf, s: O.lattice_delta(pmf, EPS, s),
}


def log_delta(natural: str, added: str) -> str:
    pmf, s = NATURAL[natural]
    return mp.nstr(mp.log(ADDED[added](pmf(), s)), DIGITS)


def exact_shifts_log_delta() -> str:
    """The row sum of 6 rows of ROW with discrete Gaussian noise, the challenge moving the output by exactly 2."""
    pmf = O.convolve(O.row_sum(ROW, 6), O.discrete_gaussian(1.3, 40))
    return mp.nstr(mp.log(O.lattice_delta(pmf, EPS, 2, shifts=(2,))), DIGITS)


def laplace_flat_log_delta() -> str:
    """Binomial(40, 0.3) with Laplace(3) noise, sensitivity 2, at eps = 1/3 (in floats) = d/b for d = 1."""
    return mp.nstr(mp.log(O.continuous_delta(O.binomial(40, 0.3), "laplace", 3.0, 1 / 3, 2, 8)), DIGITS)


def main() -> None:
    cases = {f"{n}|{a}": {"sensitivity": NATURAL[n][1], "log_delta": log_delta(n, a)}
             for n in sorted(NATURAL) for a in sorted(ADDED)}
    doc = {"about": __doc__.strip().splitlines()[0], "dps": mp.mp.dps, "digits": DIGITS, "eps": EPS,
           "cases": cases, "exact_shifts": exact_shifts_log_delta(),
           "laplace_flat": laplace_flat_log_delta()}
    (HERE / "noisy_query.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
