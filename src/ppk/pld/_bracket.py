"""The two ends of delta(eps) read off a privacy loss distribution (docs/accuracy.md, "Composition").

The upper end is the dominating pair's delta (atoms on the grid: every atom above eps counts exactly);
the lower end is the bucket representation's (buckets above eps exactly, the ones straddling eps by
Jensen's inequality).  Each adds (upper) or takes (lower) every rounding bound: the cumulative sums,
the builders' masses and the convolutions' carried errors.  Vectorised over eps with cumulative sums.

Why both masses (the "error correction" of privacy buckets, made exact): for
a bucket whose losses all exceed eps, its contribution to
H_{e^eps}(P||Q) = sum_x (P(x) - e^eps Q(x))_+ is exactly P-mass - e^eps Q-mass.
Only the w buckets that straddle eps are uncertain.  For those, with u = e^{-L}
the contribution is E_P[(1 - e^eps u)_+] at the known mean E_P[u] = Q-mass/P-mass:
Jensen gives the lower bound (P-mass - e^eps Q-mass)_+, and the convex function
is largest when the mass sits at the bucket's two ends, which gives the upper
bound (P-mass - Q-mass e^lo)/(1 - e^{lo-hi}) * (1 - e^{eps-hi}) -- both attained
by some pair of distributions with these masses, so no bound from these
numbers is tighter.  Hence

    lower <= delta(eps) <= upper,   upper <= the rounding-up (privacy buckets) bound,

and the bracket width is at most the P-mass of the w buckets next to eps.  Both
orders come from the same object (L -> -L swaps the masses), and
``get_delta_for_epsilon`` reports the larger, like ppk's curve (docs/method.md, "The model").
"""
from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from . import _convolution
from ._masses import _MASS_RTOL, LD, _Masses

#: Most straddling buckets the lower end reads one by one at an eps; beyond, they are read in this
#: many runs of neighbours, each bounded by Jensen's inequality as one bucket.  A width in the
#: millions (a self-composition of a one-bucket PLD) made delta_bracket loop that many times.
_STRADDLE_RUNS = 64


def _positive_part(mp_, mq_, eps):
    """(P-mass - e^eps Q-mass)_+ per bucket, as P (1 - e^{eps + log Q - log P})_+: no e^eps overflows."""
    with np.errstate(divide="ignore", invalid="ignore"):
        d = LD(eps) + np.log(mq_) - np.log(mp_)
        return np.where(d < 0, mp_ * -np.expm1(np.minimum(d, LD(0))), LD(0))


def _sums(m: _Masses) -> tuple:
    # prefix sums from the left (for the mirrored order's low losses) and suffix sums from the
    # right (for high losses), each summed from its small end: a tail of 1e-10 read off as a
    # difference of two sums near 1 would keep only 9 digits
    zero = np.zeros(1, dtype=LD)

    def pre(x):
        return np.concatenate([zero, np.cumsum(x)])

    def suf(x):
        return np.concatenate([np.cumsum(x[::-1])[::-1], zero])
    return (pre(m.p), pre(m.q), suf(m.p), suf(m.q))


def prefix_sums(atoms: _Masses, buckets: _Masses) -> tuple:
    """Cumulative sums (long double) of both representations; a PLD keeps them (computed once per object)."""
    return (_sums(atoms), _sums(buckets))


def ends(eps: npt.NDArray[np.float64], dx: float, atoms: _Masses, buckets: _Masses, sums: tuple,
         inf_upper: np.longdouble, inf_lower: np.longdouble, *, orders: tuple[int, ...] = (0, 1), runs: int = 1,
         reach: int = 1) -> tuple[npt.NDArray[np.longdouble], npt.NDArray[np.longdouble]]:
    """(lower, upper) of max over ``orders`` (0: H(P || Q), 1: H(Q || P)) of delta at every eps (long double),
    vectorised.  ``runs``, ``reach``: see :func:`mass_error`."""
    atom_sums, bucket_sums = sums
    e = eps.astype(LD)
    up = np.zeros(eps.shape, dtype=LD)
    lo = np.zeros(eps.shape, dtype=LD)
    rel = mass_error(runs)
    for order in orders:
        up = np.maximum(up, _upper_end(e, eps, dx, atoms, atom_sums, order, inf_upper, inf_lower, rel, reach))
        lo = np.maximum(lo, _lower_end(e, eps, dx, buckets, bucket_sums, order, inf_upper, inf_lower, rel))
    return np.minimum(lo, up), np.minimum(up, LD(1))


def mass_error(runs: int) -> float:
    """The relative error of masses composed of ``runs`` built PLDs, each built mass within _MASS_RTOL of the
    truth (docs/accuracy.md, "Rounding").

    Where it lands in the upper end: the dominating pair splits a bucket [lo, hi] into atoms at its edges,
    p_hi = (P - Q e^lo)/(1 - e^-(hi - lo)), so an error of P or Q is amplified by ~1/Delta in the atoms; but
    the upper end at eps in [lo, hi) reads p_hi (1 - e^(eps - hi)), whose error is at most rel (P + e^eps Q):
    the whole bucket's masses, its lower atom's included.  So the allowance is rel times the P-mass of the
    atoms within ``reach`` grid steps below eps and above (e^eps Q <= e^(reach Delta) P there).  A builder's
    bucket spans one step (reach 1); composing keeps the largest reach, a further split (coarsening) of
    reach r leaves ceil((r + 1) / 2) steps of the doubled grid."""
    return math.expm1(runs * math.log1p(_MASS_RTOL))


def _tail_difference(e, sum_p, sum_q):
    """sum_p - e^eps sum_q without forming e^eps (it may overflow where sum_q is 0).  Where even
    e^eps sum_q overflows (eps = 1e6 over a tail of rounding-sized Q-masses) the difference is -inf:
    the tail counts 0 (it cannot be positive with sum_p <= 1), and the error terms carry the rest."""
    with np.errstate(divide="ignore", over="ignore"):
        return sum_p - np.exp(e + np.log(sum_q))


def _upper_end(e, eps, dx, m: _Masses, sums, order, inf_upper, inf_lower, rel, reach):
    """The dominating pair's delta: every atom above eps contributes P - e^eps Q exactly."""
    n = m.p.size
    k = np.arange(m.offset, m.offset + n)
    if order == 0:   # H(P || Q): atoms with k Delta > eps
        j = np.searchsorted(k * dx, eps, side="right")
        sp, sq = sums[2][j], sums[3][j]
        # the P-mass of the buckets reaching above eps: from `reach` grid steps below the first atom above eps
        # (the atoms are contiguous on the grid); none when no atom lies above eps
        near = np.where(j < n, sums[2][np.maximum(j - reach, 0)], LD(0))
        inf, over, err_a, err_b = inf_upper, m.overflow_p, m.err_p, m.err_q
        count = n - j
    else:            # H(Q || P): atoms with k Delta < -eps
        j = np.searchsorted(k * dx, -eps, side="left")
        sp, sq = sums[1][j], sums[0][j]
        near = np.where(j > 0, sums[1][np.minimum(j + reach, n)], LD(0))
        inf, over, err_a, err_b = inf_lower, m.overflow_q, m.err_q, m.err_p
        count = j
    value = np.maximum(_tail_difference(e, sp, sq), LD(0))
    # rounding: the cumulative sums (n ulps of long double), the builders' masses (mass_error: rel of P + e^eps Q
    # over the buckets reaching above eps, e^eps Q <= e^(reach Delta) P there; the true masses within (1 + rel)
    # of the computed ones), and the convolutions' error: sum |error| over `count` entries <= sqrt(count) * 2-norm
    fft = _noise_term(count, e, err_a, err_b)
    # (e^(reach Delta) in long double, whose range a coarsened grid's step may pass: inf there, which bounds the
    # rounding of a near mass only where there is one)
    with np.errstate(over="ignore", invalid="ignore"):
        reach_factor = LD(1) + np.exp(LD(reach) * LD(dx))
        built = LD(rel * (1 + rel)) * (np.where(near > 0, reach_factor * near, LD(0)) + inf)
    slack = built + LD(4 * n * _convolution.U_LD) * (2 * sp + inf)
    return value + inf + over + fft + slack


def _lower_end(e, eps, dx, m: _Masses, sums, order, inf_upper, inf_lower, rel):
    """The bucket representation's lower end: buckets entirely above eps exactly, the ones that
    straddle eps by (P - e^eps Q)_+ (Jensen), minus every rounding bound."""
    n = m.p.size
    k = np.arange(m.offset, m.offset + n).astype(np.float64)
    p, q = (m.p, m.q) if order == 0 else (m.q, m.p)
    # in the mirrored order bucket k holds -L in [-k Delta, -(k - w) Delta]
    top = (k if order == 0 else -(k - m.width)) * dx        # the largest loss of each bucket (this order)
    low = top - m.width * dx
    if order == 0:
        j_full = np.searchsorted(low, eps, side="left")     # low >= eps from here on
        j_str = np.searchsorted(top, eps, side="right")     # top > eps from here on
        full_p, full_q = sums[2][j_full], sums[3][j_full]
        count = n - j_str
    else:   # top and low decrease with k: buckets with low >= eps are the first ones
        j_full = np.searchsorted(-low, -eps, side="right")  # low >= eps before here
        j_str = np.searchsorted(-top, -eps, side="left")    # top > eps before here
        full_p, full_q = sums[1][j_full], sums[0][j_full]
        count = j_str
    value = _tail_difference(e, full_p, full_q)
    # the buckets straddling eps: indices start..end-1 (about `width` of them)
    start, end = (j_str, j_full) if order == 0 else (j_full, j_str)
    size = np.maximum(end - start, 0)
    widest = int(size.max()) if size.size else 0
    runs = min(widest, _STRADDLE_RUNS)
    gamma = 4 * n * _convolution.U_LD       # relative rounding of a cumulative sum
    for t in range(runs):
        # run t: straddling buckets a..b-1 (one bucket each while at most _STRADDLE_RUNS straddle)
        a, b = start + (t * size) // runs, start + ((t + 1) * size) // runs
        i = np.minimum(a, n - 1)
        one = _positive_part(p[i], q[i], e)
        if widest > runs:
            # a longer run as one bucket: (sum P - e^eps sum Q)_+ <= sum of (P - e^eps Q)_+ (Jensen
            # again), its masses read off the cumulative sums from the side nearest eps's tail
            if order == 0:
                run_p, run_q = sums[2][a] - sums[2][b], sums[3][a] - sums[3][b]
            else:
                run_p, run_q = sums[1][b] - sums[1][a], sums[0][b] - sums[0][a]
            many = _positive_part(np.maximum(run_p, LD(0)), np.maximum(run_q, LD(0)), e)
            one = np.where(b - a > 1, many, one)
        value = value + np.where(b > a, one, LD(0))
    if widest > runs:
        # each run's two masses are differences of cumulative sums, each off by gamma times the sum
        # at the straddle's outer end: 2 gamma (P + e^eps Q) per run
        if order == 0:
            outer_p, outer_q = sums[2][start], sums[3][start]
        else:
            outer_p, outer_q = sums[1][end], sums[0][end]
        with np.errstate(divide="ignore", over="ignore"):   # inf: the lower end is 0 there
            runs_slack = 2 * runs * LD(gamma) * (outer_p + np.exp(e + np.log(outer_q)))
        value = value - np.where(size > runs, runs_slack, LD(0))
    inf = inf_upper if order == 0 else inf_lower
    err_a, err_b = (m.err_p, m.err_q) if order == 0 else (m.err_q, m.err_p)
    fft = _noise_term(count, e, err_a, err_b)
    # the builders' masses (mass_error): rel of P + e^eps Q over every bucket read, the straddling ones included
    if order == 0:
        read_p, read_q = sums[2][j_str], sums[3][j_str]
    else:
        read_p, read_q = sums[1][j_str], sums[0][j_str]
    with np.errstate(divide="ignore", over="ignore"):   # inf: the lower end is 0 there
        built = LD(rel * (1 + rel)) * (read_p + np.exp(e + np.log(read_q)) + inf)
    slack = built + LD(gamma) * (2 * full_p + inf)
    return np.maximum(value + inf - fft - slack, LD(0))


def _noise_term(count, e, err_a: float, err_b: float):
    """sqrt(count) (err_a + e^eps err_b): the most that `count` entries with 2-norm errors err_a (P) and
    err_b (Q) can move sum(P) - e^eps sum(Q); 0 where no entry counts (no inf * 0)."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        scaled = np.exp(e + np.log(LD(err_b))) if err_b > 0 else np.zeros_like(e)
        term = np.sqrt(count.astype(LD)) * (LD(err_a) + scaled)
    return np.where(count > 0, term, LD(0))
