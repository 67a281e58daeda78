"""Independent oracle for shuffled binary randomized response (mpmath and exact integers; shares no code
with ppk).

The model.  Each of ``n`` users flips its bit with probability ``r = 1 / (1 + e^eps0)``; the shuffler
publishes the number of 1-reports.  The attacker knows ``known`` of the other ``n - 1`` inputs (``ones`` of
them 1, ``zeros = known - ones`` of them 0) and the remaining ``unknown = n - 1 - known`` are i.i.d.
Bernoulli(p), so each of those reports 1 with ``q = r + p (1 - 2r)``.  The others' reports sum to

    C = Bin(ones, 1 - r) + Bin(zeros, r) + Bin(unknown, q),

and the challenge user's input 0 or 1 gives ``P0 = C + Bern(r)``, ``P1 = C + Bern(1 - r)``:

    P0(s) = (1 - r) C(s) + r C(s - 1),      P1(s) = r C(s) + (1 - r) C(s - 1).

delta(eps) is the largest over ``ones = 0..known`` of both hockey sticks ``H(P1 || P0)`` ("h10") and
``H(P0 || P1)`` ("h01"), ``H(P || Q) = sum_s max(0, P(s) - e^eps Q(s))``.

Three evaluations, cross-checked against each other by the tests:

* :func:`split_deltas` (mpmath floats, ``DPS`` digits): every pmf by positive sums only (binomial pmfs from
  exact integer binomial coefficients, convolutions by ``mp.fdot``), so each ``C(s)`` has full *relative*
  precision however small; the hockey stick then sums its positive parts.  O(n^2) per split.
* :class:`FixedPoint` (exact integer arithmetic on fixed-point values, ``2^-bits`` absolute): binomial
  pmfs by Pascal's rule, convolutions exactly by Kronecker substitution (one big-integer product per
  split), both hockey sticks at any eps by a binary search on the likelihood ratio and suffix sums.  The
  ratio ``P1(s)/P0(s)`` is *checked* non-decreasing in ``s`` for every split (it is: ``C`` is a sum of
  independent Bernoullis, so its pmf is log-concave and ``C(s-1)/C(s)`` grows with ``s``), so the positive
  set of ``H(P1 || P0)`` is ``{s >= s*}`` and that of ``H(P0 || P1)`` is ``{s < s*'}``.  Absolute error
  below ``n^2 e^eps 2^-bits``; :meth:`FixedPoint.delta` refuses a result that small.  Fast enough for every
  split at n = 1000.
* :func:`tail_sup_log` (mpmath, relative precision): for delta far below 1e-308.  The same monotone ratio
  means the positive parts of ``H(P1 || P0)`` occupy the top outputs and those of ``H(P0 || P1)`` the
  bottom ones: the top (bottom) coefficients of ``C`` are built one at a time from the top (bottom) of the
  two binomials and the sum stops at the first non-positive part.
"""
from __future__ import annotations

import bisect
import math
from typing import Sequence

import mpmath as mp

DPS = 50


def _mpf_real(x) -> mp.mpf:
    """A float argument exactly (mp.mpf of a Python float is exact); mpf passes through."""
    return x if isinstance(x, mp.mpf) else mp.mpf(x)


def flip_probability(eps0) -> mp.mpf:
    """r = 1 / (1 + e^eps0) of the real number eps0 (the float given, exactly), at the current precision."""
    e = _mpf_real(eps0)
    if mp.isinf(e):
        return mp.mpf(0)
    return 1 / (1 + mp.exp(e))


def report_one_probability(r, p) -> mp.mpf:
    """q = r + p (1 - 2 r): an unknown user with P(input 1) = p reports 1."""
    return r + _mpf_real(p) * (1 - 2 * r)


# ---------------------------------------------------------------------------------------------- mpf engine
def binomial_pmf(m: int, p) -> list:
    """Bin(m, p) as mpf, term by term from the exact integer binomial coefficient."""
    p = _mpf_real(p)
    one_minus = 1 - p
    return [math.comb(m, a) * p ** a * one_minus ** (m - a) for a in range(m + 1)]


def convolve(a: Sequence, b: Sequence) -> list:
    """Full convolution of two mpf sequences (positive terms: relative precision kept)."""
    if len(a) < len(b):
        a, b = b, a
    rb = list(b)[::-1]
    la, lb = len(a), len(b)
    out = []
    for s in range(la + lb - 1):
        i0, i1 = max(0, s - lb + 1), min(s, la - 1)
        out.append(mp.fdot(a[i0:i1 + 1], rb[lb - 1 - s + i0:lb - s + i1]))
    return out


def others_pmf(r, *, ones: int, zeros: int, unknown: int = 0, q=None) -> list:
    """pmf of C = Bin(ones, 1 - r) + Bin(zeros, r) + Bin(unknown, q) on 0..ones + zeros + unknown."""
    c = convolve(binomial_pmf(ones, 1 - r), binomial_pmf(zeros, r))
    if unknown:
        c = convolve(c, binomial_pmf(unknown, q))
    return c


def output_pmfs(c: Sequence, r) -> tuple[list, list]:
    """(P0, P1) on 0..len(c): the challenge user's report added to C."""
    ext = [mp.mpf(0)] + list(c) + [mp.mpf(0)]
    p0 = [(1 - r) * ext[s + 1] + r * ext[s] for s in range(len(c) + 1)]
    p1 = [r * ext[s + 1] + (1 - r) * ext[s] for s in range(len(c) + 1)]
    return p0, p1


def hockey(p: Sequence, q: Sequence, eps) -> mp.mpf:
    """H_{e^eps}(P || Q) = sum of the positive parts of P(s) - e^eps Q(s)."""
    e = mp.exp(_mpf_real(eps))
    total = mp.mpf(0)
    for a, b in zip(p, q):
        d = a - e * b
        if d > 0:
            total += d
    return total


def split_deltas(eps, *, r, ones: int, zeros: int, unknown: int = 0, q=None) -> tuple:
    """(H(P1 || P0), H(P0 || P1)) at eps for one split."""
    p0, p1 = output_pmfs(others_pmf(r, ones=ones, zeros=zeros, unknown=unknown, q=q), r)
    return hockey(p1, p0, eps), hockey(p0, p1, eps)


def all_splits(eps, *, n: int, eps0, known: int | None = None, p=None, r=None) -> list[tuple]:
    """[(h10, h01)] for ones = 0..known (mpf engine).  ``r`` overrides the flip probability of eps0."""
    known = n - 1 if known is None else known
    r = flip_probability(eps0) if r is None else _mpf_real(r)
    unknown = n - 1 - known
    q = report_one_probability(r, p) if unknown else None
    return [split_deltas(eps, r=r, ones=j, zeros=known - j, unknown=unknown, q=q) for j in range(known + 1)]


def sup_delta(eps, **kwargs) -> mp.mpf:
    """delta(eps): the largest hockey stick over every split and both orders (mpf engine)."""
    return max(max(pair) for pair in all_splits(eps, **kwargs))


# ------------------------------------------------------------------------------------ two-fold composition
def hockey_twofold(p: Sequence, q: Sequence, eps) -> mp.mpf:
    """H_{e^eps}(P x P || Q x Q) over pairs of outputs, exactly: the pairs with L(s1) + L(s2) > eps, L the
    privacy loss log(P/Q), are for each s1 a suffix of the outputs sorted by L (suffix sums of P and Q).
    Needs P, Q > 0 everywhere."""
    e, eps = mp.exp(_mpf_real(eps)), _mpf_real(eps)
    order = sorted(range(len(p)), key=lambda s: mp.log(p[s] / q[s]))
    loss = [mp.log(p[s] / q[s]) for s in order]
    suf_p, suf_q = [mp.mpf(0)] * (len(p) + 1), [mp.mpf(0)] * (len(p) + 1)
    for i in range(len(p) - 1, -1, -1):
        suf_p[i] = suf_p[i + 1] + p[order[i]]
        suf_q[i] = suf_q[i + 1] + q[order[i]]
    total = mp.mpf(0)
    for s1 in range(len(p)):
        t = bisect.bisect_right(loss, eps - mp.log(p[s1] / q[s1]))
        total += p[s1] * suf_p[t] - e * q[s1] * suf_q[t]
    return total


def sup_delta_twofold(eps, *, n: int, eps0) -> mp.mpf:
    """Two releases by the same n users with fresh coins (every other input known): for each split the pair
    (P0 x P0, P1 x P1); the largest over splits and both orders."""
    r = flip_probability(eps0)
    best = mp.mpf(0)
    for j in range(n):
        p0, p1 = output_pmfs(others_pmf(r, ones=j, zeros=n - 1 - j), r)
        best = max(best, hockey_twofold(p1, p0, eps), hockey_twofold(p0, p1, eps))
    return best


# -------------------------------------------------------------------------------- fixed-point engine
class FixedPoint:
    """Every split at once in exact integer arithmetic on ``bits``-bit fixed-point values (see the module
    docstring).  ``r`` (an mpf or a float taken exactly) is the flip probability."""

    def __init__(self, *, n: int, r, known: int | None = None, p=None, bits: int = 192):
        self.n, self.bits = n, bits
        self.known = n - 1 if known is None else known
        unknown = n - 1 - self.known
        with mp.workprec(bits + 64):
            r = _mpf_real(r)
            one = 1 << bits
            big_r = int(mp.nint(r * one))
            rows = self._binomial_rows(self.known, big_r)       # Bin(m, r) for m = 0..known
            extra = None
            if unknown:
                big_q = int(mp.nint(report_one_probability(r, p) * one))
                extra = self._binomial_rows(unknown, big_q)[unknown]
        self.splits = []
        for j in range(self.known + 1):
            c = self._convolve(rows[j][::-1], rows[self.known - j])   # Bin(j, 1 - r) + Bin(known - j, r)
            if extra is not None:
                c = self._convolve(c, extra)
            self.splits.append(self._prepare(c, big_r, one - big_r))

    def _binomial_rows(self, m: int, big_p: int) -> list[list[int]]:
        """Bin(i, p) for i = 0..m by Pascal's rule, each step floored (error <= i units of 2^-bits)."""
        big_1p, b = (1 << self.bits) - big_p, self.bits
        rows = [[1 << b]]
        for _ in range(m):
            prev = rows[-1]
            rows.append([(big_1p * x + big_p * y) >> b for x, y in zip(prev + [0], [0] + prev)])
        return rows

    def _convolve(self, a: list[int], b: list[int]) -> list[int]:
        """Exact convolution by Kronecker substitution, floored back to ``bits`` fractional bits."""
        width = (2 * self.bits + 8 + max(len(a), len(b)).bit_length() + 7) // 8   # no slot overflows
        pack = lambda v: int.from_bytes(b"".join(x.to_bytes(width, "little") for x in v), "little")
        size = len(a) + len(b) - 1
        prod = (pack(a) * pack(b)).to_bytes(size * width + width, "little")
        return [int.from_bytes(prod[i * width:(i + 1) * width], "little") >> self.bits for i in range(size)]

    def _prepare(self, c: list[int], big_r: int, big_1r: int) -> tuple:
        """P0, P1 (scale 2^(2 bits)), their suffix sums, and the outputs [a, b] where P0 + P1 stands far above
        the rounding (an interval: P0 + P1 = C + C shifted is log-concave)."""
        ext = [0] + c + [0]
        p0 = [big_1r * ext[s + 1] + big_r * ext[s] for s in range(len(c) + 1)]
        p1 = [big_r * ext[s + 1] + big_1r * ext[s] for s in range(len(c) + 1)]
        noise = len(p0) ** 2 << (self.bits + 40)
        big = [s for s in range(len(p0)) if p0[s] + p1[s] >= noise]
        a, b = big[0], big[-1]
        for s in range(a, b):             # the ratio P1/P0 is non-decreasing (log-concave C): checked
            if p1[s] * p0[s + 1] > p1[s + 1] * p0[s]:
                raise AssertionError(f"likelihood ratio not monotone at s={s}")
        suf0, suf1 = [0] * (len(p0) + 1), [0] * (len(p0) + 1)
        for s in range(len(p0) - 1, -1, -1):
            suf0[s], suf1[s] = suf0[s + 1] + p0[s], suf1[s + 1] + p1[s]
        return p0, p1, suf0, suf1, a, b

    def split_deltas(self, eps, j: int) -> tuple:
        """(H(P1 || P0), H(P0 || P1)) at eps for split ``j`` (mpf).  The boundary of each positive set is
        found by bisection inside [a, b]; outside it the positive parts are summed one by one (there the
        values are at the rounding's level, so their ratio is not trusted to be monotone)."""
        p0, p1, suf0, suf1, a, b = self.splits[j]
        bits, scale = self.bits, 2 * self.bits
        with mp.workprec(3 * bits + 64):
            e = mp.exp(_mpf_real(eps))
            big_e = int(mp.floor(e * (1 << bits)))
            value = lambda big: mp.ldexp(mp.mpf(big), -scale)
            pos = lambda x, y, rng: mp.ldexp(mp.mpf(sum(max(0, (x[s] << bits) - big_e * y[s]) for s in rng)),
                                             -scale - bits)
            # H(P1 || P0): P1 > e P0 exactly on {s >= s*} (up to the rounding)
            lo, hi = a, b + 1
            while lo < hi:
                mid = (lo + hi) // 2
                if (p1[mid] << bits) > big_e * p0[mid]:
                    hi = mid
                else:
                    lo = mid + 1
            if lo <= b:
                h10 = value(suf1[lo]) - e * value(suf0[lo]) + pos(p1, p0, range(a))
            else:
                h10 = pos(p1, p0, range(len(p0)))
            # H(P0 || P1): P0 > e P1 exactly on {s < t}
            lo, hi = a, b + 1
            while lo < hi:
                mid = (lo + hi) // 2
                if (p0[mid] << bits) > big_e * p1[mid]:
                    lo = mid + 1
                else:
                    hi = mid
            if lo > a:
                h01 = (value(suf0[0] - suf0[lo]) - e * value(suf1[0] - suf1[lo])
                       + pos(p0, p1, range(b + 1, len(p0))))
            else:
                h01 = pos(p0, p1, range(len(p0)))
            return max(h10, mp.mpf(0)), max(h01, mp.mpf(0))

    def delta(self, eps) -> mp.mpf:
        """The supremum over splits and orders; refuses a value within the engine's absolute error."""
        best = max(max(self.split_deltas(eps, j)) for j in range(self.known + 1))
        floor = mp.ldexp(mp.mpf(self.n) ** 2 * mp.exp(_mpf_real(eps)), -self.bits + 60)
        if 0 < best < floor:
            raise ValueError(f"delta {best} is too small for {self.bits} fixed-point bits")
        return best


# ------------------------------------------------------------------------------ tails, for tiny delta
def _tail_side(r, ones: int, zeros: int, e, top: bool) -> mp.mpf:
    """The hockey stick whose positive parts lie at the top (``H(P1 || P0)``) or bottom (``H(P0 || P1)``)
    outputs, every other input known.  Counting from that end, ``C(t)`` (t values away from the end) takes
    ``a`` of the ones users and ``t - a`` of the zeros users away from their likelier side (top) or towards
    it (bottom)."""
    k = ones + zeros
    # f[a]: a of the `ones` users on the far side; g[b]: b of the `zeros` users on the far side
    fa, fb = (r, 1 - r) if top else (1 - r, r)     # per-user probability of the far side: ones, zeros
    f0, g0 = (1 - fa) ** ones, (1 - fb) ** zeros
    f, g = [f0], [g0]
    total, c_prev, t = mp.mpf(0), mp.mpf(0), 0       # c_prev = C one step further out (0 beyond the end)
    while True:
        if t <= k:
            if t <= ones and t > 0:
                f.append(f[-1] * (ones - t + 1) / t * fa / (1 - fa))
            if t <= zeros and t > 0:
                g.append(g[-1] * (zeros - t + 1) / t * fb / (1 - fb))
            lo = max(0, t - zeros)
            c_t = mp.fsum(f[a] * g[t - a] for a in range(lo, min(t, ones) + 1))
        else:
            c_t = mp.mpf(0)
        # the output one step beyond C(t) from the end: its neighbours in C are c_prev (further out) and c_t;
        # the likelier hypothesis there puts the challenge report on the far side with probability 1 - r
        likely, other = r * c_prev + (1 - r) * c_t, (1 - r) * c_prev + r * c_t
        d = likely - e * other
        if d <= 0 or t > k:
            return total + max(d, mp.mpf(0))
        total += d
        c_prev, t = c_t, t + 1


def tail_sup_log(eps, *, n: int, eps0) -> tuple[mp.mpf, list[tuple]]:
    """(log delta(eps), [(log h10, log h01)] per split), every other input known, in relative precision."""
    r, e = flip_probability(eps0), mp.exp(_mpf_real(eps))
    per = []
    for j in range(n):
        h10 = _tail_side(r, j, n - 1 - j, e, top=True)
        h01 = _tail_side(r, j, n - 1 - j, e, top=False)
        per.append((mp.log(h10) if h10 > 0 else -mp.inf, mp.log(h01) if h01 > 0 else -mp.inf))
    return max(max(pair) for pair in per), per
