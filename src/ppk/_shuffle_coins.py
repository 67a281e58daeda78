"""The coin bound on a range of splits of shuffled randomized response (docs/shuffle.md, "The coin bound on a
range"): each user whose input varies across the range is, with probability 2r, a fair coin whatever its input,
so every split of the range is at most the range's removal law plus the coins' fair bits (the coins' count cut
at a Chernoff bound, its tail added)."""
from __future__ import annotations

import math

from ._shuffle_split import SplitCurve, derived_curve

#: The coin bound's tail: the coin count falls below its cut with probability at most e^-COIN_TAIL (docs/shuffle.md).
COIN_TAIL = 23.0


def coin_cut(users: int, p: float, tail: float = COIN_TAIL) -> tuple[int, float] | None:
    """For ``C ~ Bin(users, p)``: the largest ``c`` with ``P(C < c) <= e^-tail`` by the Chernoff bound
    ``P(C <= c) <= exp(-users KL(c / users || p))`` (``c <= users p``), and the log of that bound, rounded up;
    None when no ``c >= 1`` qualifies."""
    def exponent(c: int) -> float:   # users KL(c / users || p), c <= users p
        a = c / users
        first = a * math.log(a / p) if c > 0 else 0.0
        return users * (first + (1 - a) * (math.log1p(-a) - math.log1p(-p)))
    lo, hi = 0, int(users * p)          # exponent(lo) >= tail > exponent(hi), when lo qualifies
    if hi < 1 or exponent(lo) < tail:
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if exponent(mid) >= tail else (lo, mid)
    if lo < 1:
        return None
    # P(C < lo + 1) = P(C <= lo); the exponent's rounding (a relative 1e-12 at most, the terms being O(1) and the
    # exponent >= tail) is covered by 1e-9 of it
    return lo + 1, -exponent(lo) * (1 - 1e-9)


def coin_curve(parent, *, users: int, r: float, depth: float, backward_only: bool):
    """The coin bound on a range whose removal curve is ``parent`` (a C++ curve) and whose ``users`` inputs vary
    (docs/shuffle.md, "The coin bound on a range"): ``(curve, log_tail)``, with ``delta <= delta(curve) +
    e^log_tail delta(parent's own law)`` for every split of the range, ``curve`` the parent's law plus ``c`` fair
    coins (``c`` the cut of ``Bin(users, 2 r)``); None when the parent is the Python reference or no cut qualifies."""
    if isinstance(parent, SplitCurve) or not hasattr(parent, "plain_log_upper") or not 0.0 < r <= 0.5:
        return None
    cut = coin_cut(users, 2 * r)
    if cut is None:
        return None
    curve = derived_curve(parent, count=cut[0], ones=False, depth=depth, backward_only=backward_only, upper_only=True,
                          coins=True)
    return None if curve is None else (curve, cut[1])
