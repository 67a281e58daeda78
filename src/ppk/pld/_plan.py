"""A composition kept as its factors (docs/accuracy.md, "Composition without the floor").

``compose`` and ``self_compose`` of PLDs that compose ``"auto"`` do no convolution: they return a PLD whose
:class:`Plan` lists its uncomposed leaves and how many times each is taken.  Its bracket is read off tilted
compositions of the leaves (ppk.pld._tilted_bracket): one FFT per tilt for the whole plan, certified far
below the round-off floor of a composed mass vector.  The vectors themselves are composed only if someone
asks for them (``mass_upper``, ``to_dp_accounting``, ...).

Gaussian mechanisms compose exactly: k runs with sensitivities s_i and deviations sigma_i are one Gaussian
mechanism with mu^2 = sum (s_i / sigma_i)^2 (their privacy losses are normal and add).  A plan merges its
Gaussian leaves into that one mechanism, discretised once instead of k times: the k-fold two-point split of
the grid -- the dominating pair's extra spread, about k Delta^2 / 4 in loss variance -- is paid once.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..baselines import analytic_gaussian_epsilon, analytic_gaussian_log_delta_bracket
from . import _enumerated, _tilted
from ._masses import LD, MAX_BUILD_BUCKETS
from ._tilted_bracket import PlanCurve

#: How deep the merged Gaussian leaf is built (its tails below e^-bound are counted as an infinite loss
#: by the upper end): e^-800 is below every delta a double can hold.
GAUSSIAN_LOG_BOUND = -800.0
#: Most (window points) x (distinct factors) a plan's tilts may transform: ~8 s per tilt on one core.
MAX_PLAN_WORK = 1 << 23


class Plan:
    """Leaves (uncomposed PLDs, compared by identity) and their counts."""

    def __init__(self, factors: Sequence[tuple[Any, int]], dx: float):
        merged: dict[int, list] = {}
        for leaf, k in factors:
            entry = merged.setdefault(id(leaf), [leaf, 0])
            entry[1] += k
        self.factors: tuple[tuple[Any, int], ...] = tuple((leaf, k) for leaf, k in merged.values())
        self.dx = dx
        self._curve: PlanCurve | _GaussianCurve | _enumerated.EnumeratedCurve | None = None

    @staticmethod
    def of(pld: Any) -> "Plan":
        return pld._plan if pld._plan is not None else Plan([(pld, 1)], pld.value_discretization_interval)

    def compose(self, other: "Plan") -> "Plan":
        return Plan(self.factors + other.factors, self.dx)

    def times(self, k: int) -> "Plan":
        return Plan([(leaf, n * k) for leaf, n in self.factors], self.dx)

    @property
    def one_sided(self) -> bool:
        """Only H(P || Q) is the plan's delta: some leaf is one adjacency's alone ("remove" or "add") and every
        other is too or is symmetric (a Gaussian mechanism, whose two orders agree)."""
        return (any(leaf._one_sided for leaf, _ in self.factors)
                and all(leaf._one_sided or leaf._gaussian_mu is not None for leaf, _ in self.factors))

    @property
    def count(self) -> int:
        return sum(k for _, k in self.factors)

    def infinity_masses(self) -> tuple[Any, Any]:
        """The composed masses at loss +inf and -inf: some factor's run landed there."""
        def union(name: str) -> Any:
            keep = LD(1)
            for leaf, k in self.factors:
                keep *= (LD(1) - getattr(leaf, name)) ** k
            return LD(1) - keep
        return union("infinity_mass_upper"), union("infinity_mass_lower")

    def __repr__(self) -> str:
        return " + ".join(f"{k} x {leaf!r}" for leaf, k in self.factors)

    def evaluated(self, cls: Any, *, on_grid: bool = True) -> list[tuple[Any, int]]:
        """The factors the curve composes: the Gaussian leaves merged into one (see the module), built on the
        plan's grid by ``cls.from_gaussian`` down to e^GAUSSIAN_LOG_BOUND (``on_grid=False``: for vectors
        composed eagerly, which may coarsen their grid anyway, within the builder's default size)."""
        mu2 = sum(k * leaf._gaussian_mu ** 2 for leaf, k in self.factors if leaf._gaussian_mu is not None)
        rest = [(leaf, k) for leaf, k in self.factors if leaf._gaussian_mu is None]
        if mu2 > 0 and not on_grid:
            return rest + [(cls.from_gaussian(sigma=1.0 / math.sqrt(mu2), value_discretization_interval=self.dx,
                                              log_mass_truncation_bound=GAUSSIAN_LOG_BOUND), 1)]
        if mu2 > 0:
            leaf = cls.from_gaussian(sigma=1.0 / math.sqrt(mu2), value_discretization_interval=self.dx,
                                     log_mass_truncation_bound=GAUSSIAN_LOG_BOUND, max_buckets=MAX_BUILD_BUCKETS)
            if leaf.value_discretization_interval != self.dx:   # the builder had to coarsen its grid
                raise ValueError(f"the plan's Gaussian runs (mu = {math.sqrt(mu2):.6g}) need more than "
                                 f"{MAX_BUILD_BUCKETS:,} buckets of {self.dx:g} to reach e^{GAUSSIAN_LOG_BOUND:g}: use "
                                 "a larger value_discretization_interval")
            rest.append((leaf, 1))
        for leaf, _ in rest:   # every factor's grid index must mean the same loss
            assert leaf.value_discretization_interval == self.dx, "a plan's leaves share one grid"
        return rest

    def gaussian_mu(self) -> tuple[float, float]:
        """The merged Gaussian mechanism's mu = sqrt(sum k (s/sigma)^2) (0 if none) and a bound on its relative
        rounding: each s/sigma, its square, k times it and the square root round once, the sum once per term."""
        runs = [(leaf._gaussian_mu, k) for leaf, k in self.factors if leaf._gaussian_mu is not None]
        return math.sqrt(sum(k * m ** 2 for m, k in runs)), max(1e-15, (len(runs) + 4) * 1.2e-16)

    def curve(self, cls: Any) -> Any:
        """The plan's bracket reader (``log_ends(eps)``, ``log_upper(eps)``; its tilts kept between calls): the
        closed form when every leaf is a Gaussian mechanism (one Gaussian: exact), an enumeration when the
        rest are few runs of finite pairs (exact, ppk.pld._enumerated), else a PlanCurve (tilted)."""
        if self._curve is None:
            count = _enumerated.class_count(self.factors)
            if all(leaf._gaussian_mu is not None for leaf, _ in self.factors):
                self._curve = _GaussianCurve(*self.gaussian_mu())
            elif count is not None and count <= _enumerated.MAX_CLASSES:
                self._curve = _enumerated.EnumeratedCurve(self.factors, *self.gaussian_mu())
            else:
                self._curve = PlanCurve(self.evaluated(cls), self.dx, orders=(0,) if self.one_sided else (0, 1))
        return self._curve

    def check_size(self) -> None:
        """Refuse a plan whose tilted composition would not fit one FFT, or would take minutes (raises ValueError,
        naming what to do): each tilt transforms every distinct factor on the window, about a microsecond per
        point and factor on one core (measured: 16 s for one factor at 2^24 points), and a search for eps
        takes a few tilts.  Subsampled Gaussian sigma 1, q 0.001, 10^9 steps: 67 s for one eps before."""
        factors = [_tilted.Factor(leaf._atoms.p, leaf._atoms.offset, k) for leaf, k in self.factors
                   if leaf._gaussian_mu is None]
        if factors:
            n = _tilted.window_size(factors)
            work = n * (len(factors) + any(leaf._gaussian_mu is not None for leaf, _ in self.factors))
            if work > MAX_PLAN_WORK:
                raise ValueError(
                    f"this plan's bracket is read off tilted compositions of {len(factors)} distinct privacy loss "
                    f"distribution(s) on windows of {n:,} grid points: about {work * 1e-6:.0f} s per tilt and "
                    f"{4 * work * 1e-6:.0f} s per eps searched on one core, more than the {MAX_PLAN_WORK:,} "
                    "point-factors ppk evaluates: use a larger value_discretization_interval, "
                    "fewer compositions or fewer distinct mechanisms")


class _GaussianCurve:
    """A plan of Gaussian mechanisms: one Gaussian mechanism of s / sigma = mu, in closed form (certified)."""

    def __init__(self, mu: float, slack: float):
        self.mu, self.slack = mu, slack

    def log_ends(self, eps: Any) -> tuple[Any, Any]:
        # mu is a sum of rounded squares: delta grows with mu, so the ends are taken its slack either side
        lo = analytic_gaussian_log_delta_bracket(sigma=1.0 / (self.mu * (1 - self.slack)), eps=eps)[0]
        up = analytic_gaussian_log_delta_bracket(sigma=1.0 / (self.mu * (1 + self.slack)), eps=eps)[1]
        return np.minimum(lo, up).astype(LD), np.minimum(up, 0.0).astype(LD)

    def log_upper(self, eps: Any) -> Any:
        return self.log_ends(eps)[1]

    def epsilon_bracket(self, log_delta: float) -> tuple[float, float]:
        """(lo, hi) around the smallest eps whose certified upper end is <= e^log_delta (closed form)."""
        e = analytic_gaussian_epsilon(sigma=1.0 / (self.mu * (1 + self.slack)), delta=math.exp(log_delta))
        return (0.0, 0.0) if e == 0.0 else (e * (1 - 1e-9), e)
