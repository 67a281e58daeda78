"""mpmath values of the noiseless count's delta (sigma = 0), stored in noiseless_count.json.

Run ``python tests/oracles/make_noiseless_count.py`` (from the repository root) to rewrite
noiseless_count.json bit for bit.  The oracle shares no code with ppk and is written in a different form
from the kernel's sum of positive terms (docs/method.md, "sigma = 0"): with X ~ Bin(N, p) and
``j0`` the least ``j`` whose loss ``log(j q / ((N - j + 1) p))`` exceeds eps, one order's delta is the
difference of two binomial tails,

    H = P(X >= j0 - 1) - e^eps P(X >= j0) = w_{j0-1} (1 - (e^eps - 1) sum_{k >= j0} w_k / w_{j0-1}),

evaluated at 90 digits, so that the cancellation near the threshold (up to ~1e30 here) still leaves far
more than 40; w_{j0-1} from log-gammas, the tail summed by the exact pmf ratio until its rest is below
1e-75 of it (geometric bound), delta the larger of the two orders (p and 1 - p).  Each value is
stored to 40 digits.  test_noiseless_count.py re-derives a cheap one live.
"""
import os
import sys

import mpmath as mp

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "noiseless_count.json")
DPS = 90
DIGITS = 40

# (N, p, eps): delta from ~1e-3 down to e^-5000, N from 1 to 1e9
CASES = [
    (1, 0.5, 0.0), (10, 0.01, 1.0), (10, 0.01, 50.0), (1000, 0.3, 0.0), (1000, 0.3, 0.128229),
    (1000, 0.3, 0.888324), (1000, 0.3, 3.0), (1000, 0.3, 20.0),
    (100_000, 0.5, 0.004052), (100_000, 0.5, 0.06834), (100_000, 0.5, 0.23523), (100_000, 0.5, 0.647967),
    (1_000_000, 0.3, 0.0), (1_000_000, 0.3, 1e-4), (1_000_000, 0.3, 0.02343), (1_000_000, 0.3, 0.081729),
    (1_000_000, 0.3, 0.225053),
    (10**9, 0.3, 0.0), (10**9, 0.3, 1e-5), (10**9, 0.3, 0.000716), (10**9, 0.3, 0.00255), (10**9, 0.3, 0.006893),
    (10**9, 0.5, 0.000656), (10**9, 0.5, 0.006312),
]
# (N, p, j): eps at the loss of the lattice point j (rounded to a double) and one ulp either side -- the
# thresholds, where the sum's first weight is ~0 and the two tails cancel the most
THRESHOLD_CASES = [(1000, 0.3, 350), (1_000_000, 0.3, 301_000), (10**9, 0.3, 300_030_000), (10**9, 0.5, 500_100_000)]


def threshold_eps(N, p, j):
    """The doubles just below, at and just above log(j q / ((N - j + 1) p))."""
    import numpy as np
    with mp.workdps(DPS):
        p = mp.mpf(p)
        e = float(mp.log(j * (1 - p) / ((N - j + 1) * p)))
    return [float(np.nextafter(e, -np.inf)), e, float(np.nextafter(e, np.inf))]


def one_order(N, p, eps):
    """log H_{e^eps}(1 + X || X), X ~ Bin(N, p), as the difference of two tails (mpf, at DPS)."""
    p, eps = mp.mpf(p), mp.mpf(eps)
    q = 1 - p
    x = (N + 1) / (1 + q / (p * mp.exp(eps)))   # loss(j) > eps  <=>  j > x
    j0 = min(int(mp.floor(x)) + 1, N + 1)
    k = j0 - 1
    log_w = mp.loggamma(N + 1) - mp.loggamma(k + 1) - mp.loggamma(N - k + 1) + k * mp.log(p) + (N - k) * mp.log(q)
    if j0 == N + 1:
        return log_w                              # H = w_N
    odds = p / q
    term, tail = mp.mpf(1), mp.mpf(0)             # w_i / w_{j0-1}, and the sum over i >= j0
    i = k
    while i < N:
        term *= (N - i) * odds / (i + 1)          # now w_{i+1} / w_{j0-1}
        i += 1
        tail += term
        if i < N:
            ratio = (N - i) * odds / (i + 1)
            if ratio < 1 and term * ratio / (1 - ratio) < tail * mp.mpf(10) ** -75:
                tail += term * ratio / (1 - ratio) / 2   # the rest's midpoint: its error is below 1e-75
                break
    return log_w + mp.log(1 - mp.expm1(eps) * tail)


def log_delta(N, p, eps):
    with mp.workdps(DPS):
        return max(one_order(N, p, eps), one_order(N, 1 - mp.mpf(p), eps))


def key(N, p, eps):
    return f"{N}/{p!r}/{eps!r}"


def cases():
    out = {}
    for N, p, eps in CASES:
        out[key(N, p, eps)] = (N, p, eps)
    for N, p, j in THRESHOLD_CASES:
        for eps in threshold_eps(N, p, j):
            out[key(N, p, eps)] = (N, p, eps)
    return out


def compute(name):
    N, p, eps = cases()[name]
    value = log_delta(N, p, eps)
    with mp.workdps(DIGITS):
        return str(mp.mpf(value))


def main():
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # tests/, for oracles
    from oracles import compute_and_write
    compute_and_write(PATH, {"generator": "tests/oracles/make_noiseless_count.py"}, cases(), compute)


if __name__ == "__main__":
    main()
