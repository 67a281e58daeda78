"""Passive vs active partial knowledge (Desfontaines, Krahmer, Mohammadi; docs/related.md).

Model: ``n`` rows i.i.d. Bernoulli(``p``); the attacker's background knowledge
is the values of ``known`` rows (of which ``b`` are 1); the target row is not
among them; the other ``N = n - known - 1`` rows are unknown.  For each b the
attacker compares the outputs with the target row 1 and 0:

    delta_b(eps) = max over ordered pairs of H_{e^eps}(P(O | a, b) || P(O | a', b)).

* APK-DP (active: the attacker may *choose* the known values) = max_b delta_b;
  ``worst_known`` is the b that attains it.
* PPK-DP (passive: the known values are drawn from the prior) =
  max over ordered pairs of sum_b Bin(b; known, p) H_b  (Lemma 4; b does not depend on the target).

For mechanisms that shift with the count (plain or noisy count) delta_b does not
depend on b, so PPK = APK = the count's curve; thresholds break that.  All
results carry ``log_delta``: the paper's voting example has PPK delta ~ 1e-461.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from ..noise import Binomial
from .._logmath import log1mexp
from .._validate import flag, integer, real
from ..counting import CountingQuery

__all__ = ["Count", "ThresholdCount", "NoisyCount", "DeltaResult", "apk_delta", "ppk_delta"]


@dataclass(frozen=True)
class DeltaResult:
    delta: float
    log_delta: float                   #: natural log; finite far below 1e-308
    worst_known: int | None = None     #: APK only: the number of known 1s that attains the max


#: Largest n: the thresholded count is computed over the whole support, O(n) memory (~80 bytes a row).
MAX_N = 10**7


def _store(mech, **checked) -> None:
    """Store checked values on the frozen ``mech`` as converted, not as given: ``known=-0.0`` must
    count as the integer 0 downstream."""
    for name, value in checked.items():
        object.__setattr__(mech, name, value)


def _validate(mech) -> None:
    n = integer("n", mech.n, minimum=1, maximum=MAX_N)
    known = integer("known", mech.known, minimum=0)
    if known >= n:
        raise ValueError(f"known must be < n (the target row is unknown), got known={known}, n={n}")
    _store(mech, n=n, known=known, p=real("p", mech.p, minimum=0.0, maximum=1.0))


@dataclass(frozen=True)
class Count:
    """The exact count of 1s."""

    n: int
    p: float
    known: int

    def __post_init__(self):
        _validate(self)


@dataclass(frozen=True)
class NoisyCount:
    """The count plus N(0, sigma^2) noise (sigma in counts)."""

    n: int
    p: float
    known: int
    sigma: float

    def __post_init__(self):
        _validate(self)
        _store(self, sigma=real("sigma", self.sigma, minimum=0.0))


@dataclass(frozen=True)
class ThresholdCount:
    """The count if it is above ``threshold`` (``>``; ``strict=False``: ``>=``), else ``fill``."""

    n: int
    p: float
    known: int
    threshold: int
    strict: bool = True
    fill: int = 0

    def __post_init__(self):
        _validate(self)
        _store(self, threshold=integer("threshold", self.threshold, minimum=-1, maximum=self.n + 1),
               fill=integer("fill", self.fill, minimum=-(2**62), maximum=2**62), strict=flag("strict", self.strict))
        if self.fill > (self.threshold if self.strict else self.threshold - 1):
            raise ValueError(f"fill={self.fill} could also be a released count (threshold={self.threshold}, "
                             f"strict={self.strict}): choose fill <= threshold (< threshold for strict=False)")


def _shift_invariant(mech) -> CountingQuery:
    sigma = mech.sigma if isinstance(mech, NoisyCount) else 0.0
    q = CountingQuery(n=mech.n, known=mech.known, p=mech.p, sigma=sigma)
    return q


def _eps(eps) -> float:
    return real("eps", eps, minimum=0.0)


def _mechanism(mechanism):
    if not isinstance(mechanism, (Count, NoisyCount, ThresholdCount)):
        raise TypeError(f"mechanism must be a pk.Count, pk.NoisyCount or pk.ThresholdCount, "
                        f"got {type(mechanism).__name__}")
    return mechanism


def _log_h_threshold(mech: ThresholdCount, eps: float, forward: bool) -> np.ndarray:
    """log H_{e^eps}(P(O|a,b) || P(O|a',b)) for every b = 0..known; forward: (a, a') = (1, 0)."""
    N, p, T, known = mech.n - mech.known - 1, mech.p, mech.threshold, mech.known
    last_fill = T if mech.strict else T - 1          # counts C <= last_fill are replaced by fill
    b = np.arange(known + 1)
    k = np.arange(N + 1)
    lw = Binomial(N, p).log_pmf(k)
    # Count part: outputs o > last_fill.  With j = o - b (forward: P(o) = w_{j-1}, Q(o) = w_j; backward
    # swapped) the positive part of w_{j-1} - e^eps w_j is formed with the closed-form ratio
    # w_j / w_{j-1} = (N - j + 1) p / (j q), never as a difference of two large log-pmfs.
    j = np.arange(N + 2)                              # j = 0 .. N+1, w_{-1} = w_{N+1} = 0
    lw_prev = np.concatenate([[-np.inf], lw])         # w_{j-1}
    lw_cur = np.concatenate([lw, [-np.inf]])          # w_j
    with np.errstate(divide="ignore", invalid="ignore"):
        if 0 < p < 1:
            log_ratio = np.log(N - j + 1.0) + math.log(p) - np.log(j.astype(float)) - math.log1p(-p)  # w_j/w_{j-1}
            log_ratio[0] = np.inf
            log_ratio[N + 1] = -np.inf
        else:
            log_ratio = lw_cur - lw_prev
        if forward:   # w_{j-1} - e^eps w_j = w_{j-1} (1 - e^{eps + log ratio})
            terms = lw_prev + log1mexp(eps + log_ratio)
        else:         # w_j - e^eps w_{j-1} = w_j (1 - e^{eps - log ratio})
            terms = lw_cur + log1mexp(eps - log_ratio)
    # suffix log-sums: S[m] = log sum_{j >= m} terms_j
    suffix = np.logaddexp.accumulate(terms[::-1])[::-1]
    suffix = np.append(suffix, -np.inf)
    j_min = np.clip(last_fill + 1 - b, 0, N + 2)      # outputs o = j + b > last_fill
    count_part = suffix[j_min]
    # Fill part: P(fill | a) = P(a + b + X <= last_fill) = F(last_fill - b - a), the cdf as a running
    # log-sum of the pmf: a sum of positive terms, finite far below the double range
    log_cdf_table = np.logaddexp.accumulate(lw)

    def log_cdf(x: np.ndarray) -> np.ndarray:
        out = np.full(x.shape, -np.inf)
        ok = x >= 0
        out[ok] = log_cdf_table[np.minimum(x[ok], N)]
        return out
    f1, f0 = log_cdf(last_fill - b - 1), log_cdf(last_fill - b)     # target 1, target 0
    top, bottom = (f1, f0) if forward else (f0, f1)
    with np.errstate(invalid="ignore"):
        fill_part = top + log1mexp(eps + bottom - top)
    fill_part = np.where(np.isneginf(top), -np.inf, fill_part)
    return np.logaddexp(count_part, fill_part)


def _result(log_delta: float, worst: int | None = None) -> DeltaResult:
    return DeltaResult(delta=math.exp(log_delta) if log_delta > -745 else 0.0, log_delta=float(log_delta),
                       worst_known=worst)


def apk_delta(mechanism: Count | NoisyCount | ThresholdCount, *, eps: float) -> DeltaResult:
    """Active partial knowledge: the worst case over the known rows' values (Def. 6)."""
    mechanism, eps = _mechanism(mechanism), _eps(eps)
    if isinstance(mechanism, ThresholdCount):
        per_b = np.maximum(_log_h_threshold(mechanism, eps, True), _log_h_threshold(mechanism, eps, False))
        worst = int(np.argmax(per_b))
        return _result(per_b[worst], worst)
    return _result(_shift_invariant(mechanism).log_delta(eps), 0)


def ppk_delta(mechanism: Count | NoisyCount | ThresholdCount, *, eps: float) -> DeltaResult:
    """Passive partial knowledge: the expectation over the known rows' values (Def. 7, Lemma 4)."""
    mechanism, eps = _mechanism(mechanism), _eps(eps)
    if isinstance(mechanism, ThresholdCount):
        b = np.arange(mechanism.known + 1)
        lpb = Binomial(mechanism.known, mechanism.p).log_pmf(b)
        best = max(special.logsumexp(lpb + _log_h_threshold(mechanism, eps, fwd)) for fwd in (True, False))
        return _result(best)
    return _result(_shift_invariant(mechanism).log_delta(eps))
