"""DP basics a user of this library reaches for (the lecture notes; docs/related.md).

All functions are closed forms; each docstring says where the notes need a correction.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import Iterable, Sequence

from .._search import log_quotient
from .._validate import EPS_MAX_CLOSED_FORM, flag, integer, real, sequence

__all__ = ["rr_epsilon", "rr_gamma", "compose_basic", "compose_advanced", "group_privacy",
           "subsample_amplify", "k_anonymity", "l_diversity"]


def rr_epsilon(gamma: float) -> float:
    """Randomized response reporting the true bit with probability 1/2 + gamma: eps = ln((1/2+gamma)/(1/2-gamma))."""
    gamma = real("gamma", gamma, minimum=0.0, maximum=0.5, max_inclusive=False)
    return math.log1p(2 * gamma) - math.log1p(-2 * gamma)


def rr_gamma(eps: float) -> float:
    """Inverse of :func:`rr_epsilon`: gamma = tanh(eps/2)/2."""
    return 0.5 * math.tanh(real("eps", eps, minimum=0.0) / 2)


def compose_basic(eps_list: Iterable[float], delta_list: Iterable[float] | None = None) -> tuple[float, float]:
    """Basic composition: (sum eps_i, min(1, sum delta_i)), each sum correctly rounded (``math.fsum``)."""
    eps = sequence("eps_list", eps_list, lambda name, e: real(name, e, minimum=0.0))
    deltas = [0.0] * len(eps) if delta_list is None else \
        sequence("delta_list", delta_list, lambda name, d: real(name, d, minimum=0.0, maximum=1.0))
    if len(deltas) != len(eps):
        raise ValueError(f"eps_list and delta_list must have the same length, got {len(eps)} and {len(deltas)}")
    return math.fsum(eps), min(1.0, math.fsum(deltas))


def compose_advanced(*, eps: float, delta: float, k: int, delta_prime: float, dwork_roth_term: bool = True) -> tuple[float, float]:
    """k-fold advanced composition (Dwork, Rothblum, Vadhan): (eps', k delta + delta') with
    eps' = eps sqrt(2k ln(1/delta')) + k eps (e^eps - 1).

    The lecture notes drop the second term; ``dwork_roth_term=False`` reproduces them, which is
    only valid asymptotically (eps << 1/sqrt(k)) -- not a guarantee.
    """
    eps = real("eps", eps, minimum=0.0, maximum=EPS_MAX_CLOSED_FORM)
    delta = real("delta", delta, minimum=0.0, maximum=1.0)
    k = integer("k", k, minimum=1)
    delta_prime = real("delta_prime", delta_prime, minimum=0.0, maximum=1.0, min_inclusive=False,
                       max_inclusive=False)
    out = eps * math.sqrt(2 * k * log_quotient(1.0, delta_prime))
    if flag("dwork_roth_term", dwork_roth_term):
        out += k * eps * math.expm1(eps)
    if not math.isfinite(out):
        raise ValueError(f"the composed eps exceeds the float range: eps={eps!r} composed k={k} times promises "
                         "nothing; lower eps or k")
    return out, min(1.0, k * delta + delta_prime)


def group_privacy(*, eps: float, delta: float = 0.0, k: int) -> tuple[float, float]:
    """Groups of k rows: (k eps, k e^{(k-1) eps} delta)."""
    eps = real("eps", eps, minimum=0.0, maximum=EPS_MAX_CLOSED_FORM)
    delta = real("delta", delta, minimum=0.0, maximum=1.0)
    k = integer("k", k, minimum=1)
    if delta == 0:
        return k * eps, 0.0
    log_delta = math.log(k) + (k - 1) * eps + math.log(delta)      # in logs: e^{(k-1) eps} may overflow
    return k * eps, 1.0 if log_delta >= 0 else math.exp(log_delta)


def subsample_amplify(*, eps: float, delta: float = 0.0, rho: float) -> tuple[float, float]:
    """Poisson/uniform subsampling with rate rho: (ln(1 + rho (e^eps - 1)), rho delta) (the notes' "rho eps" is its limit)."""
    eps = real("eps", eps, minimum=0.0, maximum=EPS_MAX_CLOSED_FORM)
    delta = real("delta", delta, minimum=0.0, maximum=1.0)
    rho = real("rho", rho, minimum=0.0, maximum=1.0)
    return math.log1p(rho * math.expm1(eps)), rho * delta


def _row(name: str, row):
    """A row is a mapping (column name -> value) or a sequence (column index -> value)."""
    if isinstance(row, (str, bytes)) or not isinstance(row, (Mapping, Sequence)):
        raise TypeError(f"{name} must be a row (a dict or a sequence of values), got {type(row).__name__}")
    return row


def _groups(rows: Sequence, qi: Sequence[str]):
    rows = sequence("rows", rows, _row, min_length=1)
    # a string is a sequence of characters: qi="zip" would read columns "z", "i", "p"
    qi = sequence("qi", qi, lambda name, c: c, min_length=1)
    keys = []
    for i, row in enumerate(rows):
        try:
            keys.append(tuple(row[c] for c in qi))
        except (KeyError, IndexError, TypeError):
            missing = next(c for c in qi if not _has(row, c))
            raise ValueError(f"qi names the quasi-identifier column {missing!r}, which row {i} does not have") from None
    return rows, keys


def _has(row, column) -> bool:
    try:
        row[column]
    except (KeyError, IndexError, TypeError):
        return False
    return True


def k_anonymity(rows: Sequence, qi: Sequence[str]) -> int:
    """The k for which the table is k-anonymous: the size of the smallest quasi-identifier group."""
    return min(Counter(_groups(rows, qi)[1]).values())


def l_diversity(rows: Sequence, qi: Sequence[str], sensitive: str) -> int:
    """Distinct l-diversity: the fewest distinct sensitive values in any quasi-identifier group
    (1 means some group is homogeneous: the homogeneity attack of the notes)."""
    values = defaultdict(set)
    rows, keys = _groups(rows, qi)
    for i, (key, row) in enumerate(zip(keys, rows)):
        if not _has(row, sensitive):
            raise ValueError(f"sensitive names column {sensitive!r}, which row {i} does not have")
        try:
            values[key].add(row[sensitive])
        except TypeError:   # a list or dict cannot be counted as a distinct value
            raise TypeError(f"row {i}'s sensitive value must be hashable (a number or a string), got "
                            f"{type(row[sensitive]).__name__}") from None
    return min(len(v) for v in values.values())
