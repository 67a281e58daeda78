"""How deep a subsampled Gaussian mechanism's tails are cut, chosen from the question asked (docs/dpsgd.md,
"The tails").

The builder puts the mass beyond the cut into the overflow, which the upper end counts as an infinite loss:
an answer at any cut is certified, the cut only loosens it.  k runs of a PLD whose overflow is m (per law)
put at most k m of the composed pair there (a union bound), so a plan's answers at cut c move by at most
the *cut mass* M(c) = sum over its subsampled leaves of runs x overflow, plus what an eager composition cuts
at each step (at most e^b at each end of each law, b the truncation bound the leaves carry into it; a plan
read off tilts cuts nothing).  A deeper cut costs more: its support is wider
(sqrt(-2c) deviations), e^-800 about 6x the build of e^-50.  So the cut is the shallowest of a few rungs
(cached per rung) where M(c) is a negligible share of the answer:

* eps at delta: M(c) <= SHARE x delta: the shallowest rung if its builders' reported masses say so (it is
  built when the release is added), else the rung chosen by the a-priori bound (each law's tails beyond
  the cut are below e^c at each end), checked on the masses reported;
* delta, its bracket, the attack's power: from the shallowest rung down, until M(c) <= SHARE x the
  answer's smallest upper end (or the deepest rung).

SHARE = 1e-3: delta moves by at most 0.1 %, so eps by at most 0.1 % / |d ln delta / d ln eps| (14 for
DP-SGD at q = 0.01, sigma = 1.1, 1000 steps, delta = 1e-5: < 1e-4 relative, the default grid's own slack;
docs/dpsgd.md, "The tails"), and never below the truth.  A step cut at e^-50 puts ~2e-35 beyond it, so at
DP-SGD's sizes every delta above ~1e-28 x steps / 1000 is answered at e^-50 (dp_accounting's cut).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable, TypeVar

import numpy as np

__all__: list[str] = []

T = TypeVar("T")

#: The cuts tried, shallowest first: dp_accounting's e^-50 down to e^-800 (below every delta a double
#: holds; the deepest, and the only cut before issue #42).
RUNGS = (-50.0, -100.0, -200.0, -400.0, -800.0)
#: The largest share of the answer (delta, or the power's upper end) the cut mass may be.
SHARE = 1e-3


def steps(times: Iterable[int]) -> int:
    """How many compositions (each cut at the plan's shallowest cut when done eagerly) a plan of these runs
    takes at most: binary powering's squarings and products, and one per entry."""
    return sum(2 * t.bit_length() + 1 for t in times)


def a_priori_mass(cut: float, runs: int, compositions: int) -> float:
    """A bound on the cut mass before building: each law's tails beyond the builder's cut are below e^cut at
    each end (ppk.pld.subsampled.gaussian cuts at sqrt(-2 cut) + 2 deviations), as is each composition's cut."""
    return 2.0 * math.exp(cut) * (runs + compositions)


def rung_for(allowed: float, runs: int, compositions: int) -> float:
    """The shallowest rung whose a-priori cut mass is at most ``allowed`` (the deepest if none is)."""
    for cut in RUNGS:
        if a_priori_mass(cut, runs, compositions) <= allowed:
            return cut
    return RUNGS[-1]


def deeper(cut: float, allowed: float, runs: int, compositions: int) -> float:
    """The next cut to try after ``cut`` proved too shallow: the first deeper rung whose a-priori cut mass is
    at most ``allowed`` (SHARE x an estimate of the answer), or the next rung when the answer at ``cut`` was
    all cut mass (``allowed`` <= 0: its size unknown, and each rung cuts e^-50 or less of the one before)."""
    below = [c for c in RUNGS if c < cut] or [RUNGS[-1]]
    if allowed <= 0:
        return below[0]
    return next((c for c in below if a_priori_mass(c, runs, compositions) <= allowed), RUNGS[-1])


def read_off_tilts(composed: Any, leaves: Iterable[Any]) -> bool:
    """Whether ``composed`` is one of ``leaves`` or a plan of them alone (ppk.pld._plan): its answers are then
    read off tilted compositions, which cut nothing, so only the leaves' own cuts count."""
    ids = {id(leaf) for leaf in leaves}
    plan = getattr(composed, "_plan", None)
    return id(composed) in ids or (plan is not None and all(id(leaf) in ids for leaf, _ in plan.factors))


def cut_mass(leaves: Iterable[tuple[Any, int]], compositions: int) -> float:
    """M: sum of runs x the larger overflow of each cut leaf (the builder's report), plus what ``compositions``
    eager compositions cut (0 for a plan read off tilts): at most e^bound at each end of each law, bound the
    largest ``log_mass_truncation_bound`` the leaves carry into a composition; rounded up."""
    leaves = list(leaves)
    total = sum(float(t) * float(max(pld.overflow_mass_upper, pld.overflow_mass_lower)) for pld, t in leaves)
    if compositions and leaves:
        total += 2.0 * compositions * math.exp(max(pld.log_mass_truncation_bound for pld, _ in leaves))
    return total * (1 + 1e-12)


def for_delta(delta: float, mass_at: Callable[[float], float], runs: int, compositions: int) -> float:
    """The cut for eps at ``delta``: the shallowest rung if the mass its builders report (``mass_at``) is at
    most SHARE x delta (the shallowest leaves are built when added), else the a-priori rung, deeper while the
    reported mass exceeds it (never, while the a-priori bound holds)."""
    allowed = SHARE * delta
    if mass_at(RUNGS[0]) <= allowed:
        return RUNGS[0]
    cut = min(rung_for(allowed, runs, compositions), RUNGS[1])
    while cut != RUNGS[-1] and mass_at(cut) > allowed:
        cut = deeper(cut, allowed, runs, compositions)
    return cut


def deepening(at: Callable[[float], tuple[T, float]], ask: Callable[[T], tuple[Any, Any]], runs: int,
              compositions: int) -> tuple[T, tuple[Any, Any]]:
    """What ``at(cut)`` builds and ``ask``'s (lower, upper) of it (floats or arrays), at the shallowest cut
    where every answer is settled, from the shallowest rung down: certified at any cut.  A deeper cut moves
    an upper end by at most min(M(c), upper - lower) (it stays at or above the truth, so at or above the
    lower end), so an answer is settled once that is at most SHARE x its upper end, or its bracket is one
    rounding wide (an upper end of 0 or a pure-DP cap, which no cut changes)."""
    cut = RUNGS[0]
    while True:
        built, mass = at(cut)
        lo, hi = ask(built)
        lo_a, hi_a = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
        settled = (np.minimum(mass, hi_a - lo_a) <= SHARE * hi_a) | (hi_a <= np.nextafter(lo_a, np.inf))
        if cut == RUNGS[-1] or bool(np.all(settled)):
            return built, (lo, hi)
        # the deeper answer is at least the lower end here (certified) and at least this one less the mass
        floor = float(np.min(np.maximum(lo_a, hi_a - mass)[~settled]))
        cut = deeper(cut, SHARE * floor, runs, compositions)
