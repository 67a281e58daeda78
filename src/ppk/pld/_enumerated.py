"""Plans composed exactly, by type classes (docs/accuracy.md, "Exact composition of finite pairs").

A PLD built from two pmfs (``from_pmfs``, ``from_two_probability_mass_functions``: randomized response, any
finite mechanism) keeps its outcomes' masses ``(p_i, q_i)``.  k runs of it have ``C(k + m - 1, m - 1)``
*type classes* (how often each of its m finite outcomes occurred); every tuple of a class has the same
masses and loss, so the class is one outcome of the composed pair with

    P_c = multinomial(k; c) prod p_i^{c_i},   Q_c = multinomial(k; c) prod q_i^{c_i},   l_c = sum c_i log(p_i/q_i).

When the plan's finite leaves have few classes in all (``MAX_CLASSES``) the composition is enumerated: no
grid, no FFT.  The plan's Gaussian mechanisms, merged into one of ``mu`` (ppk.pld._plan), enter in closed
form: conditioned on the finite part's class, the rest is the Gaussian pair, so

    delta(eps) = P(+inf) + sum_c P_c h(eps - l_c),
    h(x) = delta_G(x) (x >= 0),   h(x) = 1 - e^x + e^x delta_G(-x) (x < 0),

``delta_G`` the Gaussian's curve and ``h`` its extension to negative eps (the hockey stick of the pair
swapped, the Gaussian pair being symmetric).  Without Gaussians ``h(x) = (1 - e^x)_+``.  Every log mass and
loss carries a bound on its rounding; the ends move ``P_c`` and ``l_c`` by them (``h`` decreases), so the
bracket holds the exact delta of the pmfs given, about 1e-12 wide.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import numpy.typing as npt

from ..baselines import analytic_gaussian_log_delta_bracket
from ._masses import LD
from ._tilted_search import search_epsilon

#: Most type classes a plan may enumerate: each costs one closed-form Gaussian value per eps asked
#: (about a microsecond), so 2^14 classes keep a search for eps within a fraction of a second.
MAX_CLASSES = 1 << 14
#: Relative rounding of one long-double operation, doubled (eps of the type is twice the unit roundoff).
_U = float(np.finfo(LD).eps)
_BLOCK = 1 << 20   # class-by-eps entries summed at once (memory)


class _Classes:
    """The composed finite outcomes: log P-masses, log Q-masses and losses (long double), with bounds on the
    absolute error of each (float64 arrays)."""

    __slots__ = ("log_p", "log_q", "loss", "err_p", "err_q", "err_loss")

    def __init__(self, log_p, log_q, loss, err_p, err_q, err_loss):
        self.log_p, self.log_q, self.loss = log_p, log_q, loss
        self.err_p, self.err_q, self.err_loss = err_p, err_q, err_loss

    def times(self, other: "_Classes") -> "_Classes":
        """Classes of the two run independently (outer sums; each sum adds a rounding of u |a + b|)."""
        def outer(a, b, ea, eb):
            s = (a[:, None] + b[None, :]).ravel()
            return s, (ea[:, None] + eb[None, :]).ravel() + _U * np.abs(s).astype(np.float64)
        log_p, err_p = outer(self.log_p, other.log_p, self.err_p, other.err_p)
        log_q, err_q = outer(self.log_q, other.log_q, self.err_q, other.err_q)
        loss, err_loss = outer(self.loss, other.loss, self.err_loss, other.err_loss)
        return _Classes(log_p, log_q, loss, err_p, err_q, err_loss)


def _compositions(k: int, m: int) -> npt.NDArray[np.int64]:
    """Every way to write k as an ordered sum of m counts >= 0: an array of shape (C(k+m-1, m-1), m)."""
    counts = np.zeros((1, 0), dtype=np.int64)
    left = np.array([k], dtype=np.int64)
    for _ in range(m - 1):
        reps = left + 1
        rows = np.repeat(np.arange(left.size), reps)
        c = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)   # 0..left[r] per row r
        counts = np.column_stack([counts[rows], c])
        left = left[rows] - c
    return np.column_stack([counts, left])


def _log_factorials(k: int) -> tuple[Any, Any]:
    """log n! for n = 0..k as a running sum of log j (long double), and a bound on each one's error: n terms,
    each rounded (log, then the add), sum to within 2 n u of their total."""
    lf = np.concatenate([np.zeros(1, dtype=LD), np.cumsum(np.log(np.arange(1, k + 1, dtype=LD)))])
    return lf, 2.0 * np.arange(k + 1) * _U * lf.astype(np.float64)


def _leaf_classes(p: npt.NDArray[np.float64], q: npt.NDArray[np.float64], k: int, rtol: float = 0.0) -> _Classes:
    """The type classes of k runs of the finite pair (p, q) (every p_i, q_i > 0), each mass within a relative
    ``rtol`` of the truth: a class's log masses move by at most k rho and its loss by 2 k rho,
    rho = -log(1 - rtol) (every class has k runs)."""
    m = p.size
    counts = _compositions(k, m)
    cl = counts.astype(LD)
    if m == 1:    # one outcome: one class, its multinomial 1 (k may be huge here, and only here)
        log_multi, err_multi = np.zeros(1, dtype=LD), np.zeros(1)
    else:         # k < MAX_CLASSES
        lf, lf_err = _log_factorials(k)
        log_multi = lf[k] - lf[counts].sum(axis=1)
        err_multi = lf_err[k] + lf_err[counts].sum(axis=1) + (m + 1) * _U * float(lf[k]) * 2
    lp, lq = np.log(p.astype(LD)), np.log(q.astype(LD))
    lam = lp - lq
    cf = counts.astype(np.float64)
    # each log rounds (2u of its size), each product and each of the m sums once more: (m + 3) u of the
    # sum of the terms' sizes bounds the error of sum c_i log x_i
    def weighted(logs):
        return cl @ logs, (m + 3) * _U * (cf @ np.abs(logs).astype(np.float64))
    sp, ep = weighted(lp)
    sq, eq = weighted(lq)
    loss = cl @ lam
    err_loss = (m + 3) * _U * (cf @ (np.abs(lp) + np.abs(lq) + np.abs(lam)).astype(np.float64))
    log_p, log_q = log_multi + sp, log_multi + sq
    given = k * -math.log1p(-rtol) * (1 + 1e-12) if rtol > 0 else 0.0
    return _Classes(log_p, log_q, loss, err_multi + ep + _U * np.abs(log_p).astype(np.float64) + given,
                    err_multi + eq + _U * np.abs(log_q).astype(np.float64) + given, err_loss + 2 * given)


def class_count(factors: Sequence[tuple[Any, int]]) -> int | None:
    """How many classes the finite leaves of a plan make (None: some non-Gaussian leaf is not a finite pair)."""
    total = 1
    for leaf, k in factors:
        if leaf._gaussian_mu is not None:
            continue
        if leaf._finite_pair is None or leaf._finite_pair[0].size == 0:
            return None
        total *= math.comb(k + leaf._finite_pair[0].size - 1, leaf._finite_pair[0].size - 1)
        if total > MAX_CLASSES:
            return total
    return total


def _log_infinity(factors: Sequence[tuple[Any, int]], order: int) -> tuple[LD, LD]:
    """(lower, upper) log of the composed P-mass at loss +inf: tuples with some outcome that Q never gives,
    ``prod tot_i^k - prod fin_i^k`` (tot the P-mass given, fin its part where Q > 0), by log1p."""
    acc_tot, acc_ratio = LD(0), LD(0)
    given = 0.0     # the masses' own relative error: k rho through tot^k, 3 rho more through the ratio (module)
    for leaf, k in factors:
        if leaf._gaussian_mu is not None:
            continue
        p, q = leaf._finite_pair if order == 0 else leaf._finite_pair[::-1]
        inf = LD(leaf.infinity_mass_upper if order == 0 else leaf.infinity_mass_lower)
        fin = p.astype(LD).sum()
        tot = fin + inf
        if tot == 0:
            continue
        acc_tot += LD(k) * np.log(tot)
        acc_ratio += LD(k) * np.log1p(-inf / tot)
        if leaf._finite_rtol > 0:
            given += (k + 3) * -math.log1p(-leaf._finite_rtol) * (1 + 1e-12)
    if acc_ratio == 0:
        return LD(-np.inf), LD(-np.inf)
    if acc_ratio == -np.inf:     # some leaf has no finite outcome: every tuple is at +inf
        value, size = acc_tot, abs(acc_tot)
    else:
        value, size = acc_tot + np.log(-np.expm1(acc_ratio)), abs(acc_tot) + abs(acc_ratio)
    slack = LD(64 * _U) * (1 + size) + LD(given)
    return value - slack, value + slack


class EnumeratedCurve:
    """Both ends of delta(eps) of a plan of Gaussian mechanisms (merged: ``mu``, 0 if none) and finite pairs
    (enumerated by class), max over both orders."""

    def __init__(self, factors: Sequence[tuple[Any, int]], mu: float, mu_slack: float):
        self.mu, self.mu_slack = mu, mu_slack
        self.orders: list[tuple[_Classes, tuple[LD, LD]]] = []
        # a plan of symmetric pairs (each its own mirror, as the Gaussian is) has two equal orders: one is read
        for order in ((0,) if all(_symmetric(leaf) for leaf, _ in factors) else (0, 1)):
            classes: _Classes | None = None
            for leaf, k in factors:
                if leaf._gaussian_mu is not None:
                    continue
                p, q = leaf._finite_pair if order == 0 else leaf._finite_pair[::-1]
                mine = _leaf_classes(p, q, k, leaf._finite_rtol)
                classes = mine if classes is None else classes.times(mine)
            assert classes is not None, "a plan of Gaussians alone is read in closed form (ppk.pld._plan)"
            self.orders.append((classes, _log_infinity(factors, order)))

    # ---------------------------------------------------------------- h, in logs
    def _log_gauss(self, x: npt.NDArray[np.float64], upper: bool) -> npt.NDArray[np.longdouble]:
        """Certified end of log delta_G(x), x >= 0 (delta_G grows with mu: mu moved by its slack)."""
        if self.mu == 0:
            return np.full(x.shape, -np.inf, dtype=LD)
        mu = self.mu * (1 + self.mu_slack if upper else 1 - self.mu_slack)
        lo, up = analytic_gaussian_log_delta_bracket(sigma=1.0 / mu, eps=x)
        return (up if upper else lo).astype(LD)

    def _log_h(self, x: npt.NDArray[np.float64], upper: bool) -> npt.NDArray[np.longdouble]:
        """Certified end of log h(x) at double x (h as in the module; a few u of slack for expm1 and the sum)."""
        neg = x < 0
        g = self._log_gauss(np.abs(x), upper)
        xl = x.astype(LD)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            step = np.log(-np.expm1(np.minimum(xl, LD(0))))          # log(1 - e^x), x < 0
            a, b = step, xl + g
            top = np.maximum(a, b)
            both = top + np.log1p(np.exp(np.minimum(a, b) - top))
            out = np.where(neg, np.where(np.isfinite(top), both, top), g)
        return out + LD(8 * _U if upper else -8 * _U)

    def _log_sum(self, classes: _Classes, log_inf: LD, eps: npt.NDArray[np.float64],
                 upper: bool) -> npt.NDArray[np.longdouble]:
        """log (P(+inf) + sum_c P_c h(eps - l_c)): the classes' masses and losses moved by their error bounds,
        x rounded to double in the safe direction (h decreases), the sum's rounding added."""
        n = classes.loss.size
        sign = 1.0 if upper else -1.0
        log_m = classes.log_p + (sign * classes.err_p).astype(LD)
        loss = classes.loss + (sign * classes.err_loss).astype(LD)
        out = np.empty(eps.shape, dtype=LD)
        block = max(1, _BLOCK // n)
        for s in range(0, eps.size, block):
            e = eps[s:s + block]
            x = (e.astype(LD)[None, :] - loss[:, None]).astype(np.float64)
            x = np.nextafter(x, -np.inf if upper else np.inf)
            terms = log_m[:, None] + self._log_h(x.ravel(), upper).reshape(x.shape)
            top = np.max(terms, axis=0)
            safe = np.where(np.isfinite(top), top, LD(0))
            with np.errstate(divide="ignore"):
                total = safe + np.log(np.exp(terms - safe).sum(axis=0))
            total = np.where(np.isfinite(top), total, top) + LD(sign * 2 * (n + 2) * _U)
            m = np.maximum(total, log_inf)
            fin = np.where(np.isfinite(m), m, LD(0))
            with np.errstate(divide="ignore"):
                out[s:s + block] = np.where(np.isfinite(m), fin + np.log(np.exp(total - fin) + np.exp(log_inf - fin)), m)
        return out

    # ---------------------------------------------------------------- the reader's interface (as PlanCurve)
    def log_upper(self, eps: npt.NDArray[np.float64]) -> npt.NDArray[np.longdouble]:
        ends = [self._log_sum(c, inf[1], eps, True) for c, inf in self.orders]
        return np.minimum(np.max(ends, axis=0), LD(0))

    def log_ends(self, eps: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.longdouble], npt.NDArray[np.longdouble]]:
        up = self.log_upper(eps)
        lo = np.max([self._log_sum(c, inf[0], eps, False) for c, inf in self.orders], axis=0)
        return np.minimum(lo, up), up

    def epsilon_bracket(self, log_delta: float) -> tuple[float, float]:
        """As PlanCurve's (ppk.pld._tilted_search.search_epsilon), from the guess of a normal loss with the
        plan's mean and variance; past the largest class loss by the Gaussian's reach at e^-50 delta, the upper
        end is at most the mass at +inf plus e^-50 delta, so a delta beyond that is never met."""
        classes = self.orders[0][0]
        mass = np.exp(classes.log_p.astype(np.float64))
        loss = classes.loss.astype(np.float64)
        total = max(float(mass.sum()), 1e-300)
        mean = float(mass @ loss) / total           # the classes' loss; the Gaussian's has mean mu^2/2, variance mu^2
        sd = math.sqrt(max(float(mass @ (loss - mean) ** 2) / total, 0.0) + self.mu ** 2) + 1e-3
        mean += self.mu ** 2 / 2
        guess = mean + sd * math.sqrt(2 * max(-log_delta, 1.0))
        reach = max(float(np.max(c.loss)) for c, _ in self.orders)
        upper = max(reach, 0.0) + self.mu ** 2 / 2 + self.mu * math.sqrt(2 * (max(-log_delta, 1.0) + 50)) + 1.0
        return search_epsilon(lambda e: self.log_upper(np.array([e], dtype=np.float64))[0], log_delta,
                              guess=guess, step=0.25 * sd, upper=upper, floor=max(float(inf[1]) for _, inf in self.orders))


def _symmetric(leaf: Any) -> bool:
    """A Gaussian mechanism, or a finite pair whose outcomes' (p, q) are those of (q, p), with equal infinities."""
    if leaf._gaussian_mu is not None:
        return True
    p, q = leaf._finite_pair
    return bool(leaf.infinity_mass_upper == leaf.infinity_mass_lower
                and sorted(zip(p.tolist(), q.tolist())) == sorted(zip(q.tolist(), p.tolist())))
