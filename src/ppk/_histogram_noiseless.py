"""The exact privacy curve of a noiseless histogram's worst pair (docs/histograms.md, "sigma = 0").

At ``sigma = 0`` the attacker sees the two bins' counts, so delta is a finite sum of positive terms over
the lattice of the pair's counts: computed in full, in blocks that stay in cache, each term in closed
form from the binomial pmf, with a rounding bound that makes the upper end certified.
"""
from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from . import _kernels
from ._typing import FloatArray

__all__ = ["NOISELESS_MAX_TERMS", "noiseless_pair"]

# -- sigma = 0: the exact sum -------------------------------------------------------------------
#: Lattice terms the exact sigma = 0 sum of one ordered pair may add (about 17 ns each: ~1 s on 2 cores).
#: A larger sum -- many unknown rows at a small eps: N = 1e7 at eps = 0.01, 1e8 at 0.05, 1e10 at 0.5 --
#: is bracketed by the kernel to ``rtol`` instead.
NOISELESS_MAX_TERMS = 6 * 10**7
_U = 2.0 ** -53          # unit roundoff of a double
_UL = 2.0 ** -64         # of a long double (x87, 64-bit mantissa)
_BLOCK = 64              # lattice steps per row and pass
_COLUMNS = 4096          # rows per pass: the blocks stay in cache


def _binom_logpmf(n: int, p: float, pc: float, k: npt.NDArray[np.int64]) -> FloatArray:
    """log Bin(n, p) at k with ``pc = 1 - p`` held accurately: the kernel gets the smaller of the two
    (it forms the other as 1 - it in long double, exact enough only when it is the smaller)."""
    if p <= pc:
        return _kernels.binom_logpmf(n, p, k)
    return _kernels.binom_logpmf(n, pc, n - k)


def _tail_mass_log(N: int, p: float, lo: int, hi: int) -> float:
    """log of an upper bound on P(Bin(N, p) < lo) + P(Bin(N, p) > hi) for lo <= mode <= hi - 1: each
    tail by its first term over 1 - the pmf's ratio there (the ratios fall away from the mode)."""
    out = -math.inf
    if lo > 0:
        m = lo - 1
        ratio = m * (1.0 - p) / ((N - m + 1) * p)
        out = np.logaddexp(out, float(_binom_logpmf(N, p, 1.0 - p, np.array([m]))[0]) - math.log1p(-ratio))
    if hi < N:
        m = hi + 1
        ratio = (N - m) * p / ((m + 1) * (1.0 - p))
        out = np.logaddexp(out, float(_binom_logpmf(N, p, 1.0 - p, np.array([m]))[0]) - math.log1p(-ratio))
    return float(out)


def noiseless_pair(N: int, pa: float, pb: float, rest: float, eps: float) -> tuple[float, float, int] | None:
    """(log lower, log upper, terms) of one ordered pair's delta at sigma = 0, or None past the budget.

    At sigma = 0 the attacker reads the two bins: with ``x, y`` the unknown rows in ``a`` and ``b``
    (trinomial ``T(x, y)`` with the rest), the hypotheses give ``(x + 1, y)`` and ``(x, y + 1)``, and
    ``T(x - 1, y + 1) / T(x, y) = (pi_b / pi_a) x / (y + 1)``.  So, with ``c = e^eps pi_a / pi_b``,

        delta = sum over x + 1 > c y of  T(x, y) (1 - c y / (x + 1)),

    a finite sum of positive terms.  By ``M = x + y ~ Bin(N, s)`` and ``x ~ Bin(M, q)`` given ``M``,
    row ``M`` starts at the least ``k`` in the cone; its terms fall by the ratio
    ``(M - x) q / ((x + 1) q_c) < e^-eps`` (in the cone), so each row stops when the geometric bound
    on its rest is below ``e^-55 / W`` of the largest row: the rest is added to the upper end.  The
    rows that matter lie around the mean of the tilted law ``Bin(N, s')``, ``s' = s g / (1 - s + s g)``,
    ``g = (q_c + q e^eps) e^{-eps theta}``, ``theta = c / (1 + c)``: Chernoff's bound at the tilt eps gives
    ``P(x >= k) <= e^{eps (1 - theta)} g^M``, so the rows outside 12 standard deviations of ``s'`` carry
    at most ``e^{eps (1 - theta)} (1 - s + s g)^N P(Bin(N, s') outside)``, added to the upper end.
    Rounding: the anchors are the kernel's log pmf (Loader, long double, returned as doubles); the
    terms are products of ratios in double; the weight's numerator ``(x + 1) - c y`` grows by ``1 + c``
    a step, so it is its row's first value (long double) plus a multiple of ``1 + c``: an absolute error
    ~1e-18 plus a few ulps relative, never a cancellation.  The bound on each is added to the upper end
    and taken from the lower one.
    """
    if N == 0 or pa == 0.0 or pb == 0.0:
        return 0.0, 0.0, 0   # a bin the unknown rows never reach (or none unknown): it shows the challenge row
    s = pa + pb
    q, qc = pa / s, pb / s
    LD = np.longdouble
    qL, qcL = (LD(q), LD(1) - LD(q)) if q <= qc else (LD(1) - LD(qc), LD(qc))   # as the kernel forms them
    log_qL, log_qcL = np.log(qL), np.log(qcL)
    lc = LD(eps) + log_qL - log_qcL
    # bound on the error of lc, hence of c = e^lc (relative): the roundings of eps + log - log and of exp
    err_c = float(4 * _UL * (abs(LD(eps)) + abs(log_qL) + abs(log_qcL) + 1))
    if lc > np.log(LD(N)) + 1e-9:
        # c > N >= M: no x < M is in the cone (that needs (x + 1)/(M - x) > c), and x = M has weight 1, so
        # delta = sum_M P(M) q^M = (1 - s q_c)^N: the distinguishing mass (no row of the pair in b)
        log_delta = LD(N) * np.log1p(-(LD(s) * qcL))
        slack = 8 * _UL * (abs(log_delta) + 1) + 4 * _U * abs(float(log_delta))   # + s rounded from pa + pb
        return float(log_delta) - slack, float(log_delta) + slack, 1
    c = np.exp(lc)
    theta = 1 / (1 + np.exp(-lc))
    log_g = np.logaddexp(log_qcL, log_qL + LD(eps)) - LD(eps) * theta
    if rest == 0.0:   # two categories: every unknown row is in the pair
        Ms = np.array([N], dtype=np.int64)
        log_pm = np.zeros(1)
        log_outside = -math.inf
    else:
        logit = np.log(LD(s)) + log_g - np.log(LD(rest))
        sp = min(max(float(1 / (1 + np.exp(-logit))), 1e-300), 1.0 - 2**-53)
        mode = min(int(math.floor((N + 1) * sp)), N)
        half = int(math.ceil(12 * math.sqrt(N * sp * (1 - sp)) + 40))
        lo, hi = max(0, mode - half), min(N, mode + half)
        Ms = np.arange(lo, hi + 1, dtype=np.int64)
        log_pm = _binom_logpmf(N, s, rest, Ms)
        log_chernoff = float(LD(eps) * (1 - theta) + LD(N) * np.logaddexp(np.log(LD(rest)), np.log(LD(s)) + log_g))
        # times 2: s' is rounded, and the identity sum P(M) g^M [M in S] = (1 - s + s g)^N P(Bin(N, s') in S) is exact
        log_outside = log_chernoff + math.log(2.0) + _tail_mass_log(N, sp, lo, hi)
    # row M starts at k = the least x in the cone {x = M or x + 1 > c (M - x)}
    ML = Ms.astype(LD)
    k = np.clip(np.floor(theta * (ML + 1) - 1).astype(np.int64) + 1, 0, Ms)
    def inside(x):
        return (x >= Ms) | ((x + 1).astype(LD) > c * (Ms - x).astype(LD))
    for _ in range(8):   # theta (M + 1) is within a few ulps of the boundary: one step each way suffices
        k = np.where((k > 0) & inside(k - 1), k - 1, k)
        k = np.where(inside(k), k, k + 1)
    if not (inside(k).all() and not ((k > 0) & inside(k - 1)).any()):
        raise ArithmeticError("the sigma = 0 histogram sum could not place its rows; please report")
    W = Ms.size
    # a priori work: rows x terms per row (the fall e^-eps per step, or log-concavity near eps = 0)
    mid = W // 2
    M_mid, k_mid = int(Ms[mid]), int(k[mid])
    r0 = (M_mid - k_mid) * q / ((k_mid + 1) * qc) if M_mid > k_mid else 0.0
    per_row = 1.0 if r0 == 0 else min(M_mid - k_mid + 1.0, 60 / -math.log(r0) if r0 < 1 else math.inf,
                                      math.sqrt(120 * M_mid * q * qc) + 60)
    if W * (per_row + 50) > 2 * NOISELESS_MAX_TERMS:   # + 50: a row's anchor costs about as many terms
        return None
    # the anchors: log P(M) + log Bin(M, q)(k), the kernel's Loader form
    log_anchor = np.array([float(_binom_logpmf(int(m), q, qc, np.array([x]))[0]) for m, x in zip(Ms, k)])
    base = log_pm + log_anchor
    # The weight's numerator D = (x + 1) - c (M - x) grows by exactly 1 + c a step: D_j = D_0 + j (1 + c),
    # with D_0 in (0, 1 + c] formed once per row in long double.  So D_j carries a few ulps relative
    # plus D_0's absolute error (c's relative error times c (M - k) < k + 1), never a cancellation.
    d0L = (k + 1).astype(LD) - c * (Ms - k).astype(LD)
    d0 = d0L.astype(float)
    one_c = float(1 + c)
    rho = float(qL / qcL)
    S = np.zeros(W)          # sum of t w per row, relative to its first term
    T = np.zeros(W)          # sum of t per row (the weights' absolute error multiplies it)
    tail = np.zeros(W)       # bound on the row's terms not added
    steps = np.zeros(W)      # terms added per row
    t_next = np.ones(W)
    x1_0, y_0 = (k + 1).astype(float), (Ms - k).astype(float)
    offsets = np.arange(_BLOCK, dtype=float)[:, None]
    active = np.arange(W)
    ref = -math.inf
    terms = 0
    j0 = 0
    log_w_rows = math.log(W)
    while active.size:
        _kernels.check_interrupt()   # Ctrl-C from any thread (docs/limits.md; the main thread's Python raises itself)
        if terms > 3 * NOISELESS_MAX_TERMS:
            return None
        offs = offsets + j0
        grow = offs * one_c
        still = []
        for start in range(0, active.size, _COLUMNS):
            idx = active[start:start + _COLUMNS]
            inv = 1.0 / (x1_0[idx] + offs)                  # 1 / (x + 1)
            R = (y_0[idx] - offs) * inv                     # (M - x) / (x + 1): 0 at x = M, the row's end
            R *= rho                                        # t(x + 1) / t(x)
            t = np.empty_like(R)
            t[0] = t_next[idx]
            for i in range(1, _BLOCK):
                np.multiply(t[i - 1], R[i - 1], out=t[i])
            w = (d0[idx] + grow) * inv
            S[idx] += np.einsum("ij,ij->j", t, w)
            T[idx] += t.sum(axis=0)
            steps[idx] += _BLOCK
            terms += t.size
            nxt = t[-1] * R[-1]
            y_next = y_0[idx] - (j0 + _BLOCK)               # M - (next x)
            r_next = y_next * rho / (x1_0[idx] + (j0 + _BLOCK))
            done = y_next < 0                               # the row reached x = M
            with np.errstate(divide="ignore", invalid="ignore"):
                bound = np.where(done, 0.0, np.where(r_next < 1, nxt / (1 - r_next), np.inf))
                ref = max(ref, float(np.max(base[idx] + np.log(S[idx]))))
                finished = done | (base[idx] + np.log(bound) <= ref - 55 - log_w_rows)
            tail[idx[finished]] = bound[finished]
            t_next[idx] = nxt
            still.append(idx[~finished])
        active = np.concatenate(still)
        j0 += _BLOCK
    # assemble in long double: rows relative to the largest
    with np.errstate(divide="ignore"):
        log_rows = base + np.log(S)
    top = float(np.max(log_rows))
    scale = np.exp((base - top).astype(LD))
    rows = scale * S.astype(LD)
    # relative error per row: two anchors (double logs of long-double values), the ratio products and
    # rho's rounding (4 ulps a step), the block sums, D_j and the division by x + 1 (6 ulps)
    eta = 2 * _U * (np.abs(log_pm) + np.abs(log_anchor) + 2) + _U * (4 * steps + _BLOCK + steps / _BLOCK + 16)
    # the weights' absolute error: D_0's (c's relative error and the long-double rounding, times c (M - k),
    # which is below k + 1) over x + 1 >= k + 1, and D_0's rounding to a double
    e_w = err_c + 4 * _UL + _U * float(np.max(np.abs(d0) / x1_0))
    # a lattice point just outside the cone by less than that error may belong in it, with a weight
    # below e_w: its term is t(k - 1) = t(k) k / ((M - k + 1) rho)
    before = np.where(k > 0, k / np.maximum(Ms - k + 1, 1) / rho, 0.0)
    middle = float(np.sum(rows))
    spread = float(np.sum(rows * (np.exp(eta.astype(LD)) - 1)) + e_w * np.sum(scale * (T + before).astype(LD)))
    cut = float(np.sum(scale * tail.astype(LD)))
    upper = middle + spread + cut
    lower = middle - spread
    log_up = top + math.log(upper) + 4 * _UL * abs(top)
    log_up = float(np.logaddexp(log_up, log_outside))
    log_lo = top + math.log(lower) - 4 * _UL * abs(top) if lower > 0 else -math.inf
    return log_lo, min(log_up, 0.0), terms


