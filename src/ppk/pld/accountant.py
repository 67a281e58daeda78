"""An accountant for a release plan: several releases composed into one privacy curve (docs/accuracy.md,
"Composition").

Each release becomes a :class:`~ppk.PrivacyLossDistribution` on a common grid
(:meth:`~ppk.PrivacyLossDistribution.from_curve` for any query) and the plan is their composition, with
the certified bracket of the PLDs.  Releases that share natural noise -- two releases over the same
unknown rows, which the queries name (``PrivacyCurve._rows_key``: a count's database and attacker, a
NoisyQuery's natural law, ...) -- are *not* independent: composing them would under-report delta, so
the accountant refuses and says what to use instead (:meth:`ppk.CountingQuery.repeat`,
:class:`ppk.OverlappingCounts`, :class:`ppk.HistogramQuery`).
"""
from __future__ import annotations

import contextlib
import math
import re
import sys
from typing import Any, Callable, Hashable, Iterator, overload

import numpy as np
import numpy.typing as npt

from .._curve import BracketedCurve, PrivacyCurve
from .._typing import FloatArray
from .._validate import choice, flag, integer, real, real_array, text
from . import _convolution, _tail_cut, dp_events, mechanisms
from .distribution import PrivacyLossDistribution

__all__ = ["Accountant"]

#: The deepest cut of the subsampled Gaussian's tails (:meth:`Accountant.pld`'s, and every answer's when the
#: question needs it): each question cuts them only as deep as it needs (ppk.pld._tail_cut, docs/dpsgd.md,
#: "The tails"), since the mass cut counts as an infinite loss and a deeper cut costs more.
SUBSAMPLED_LOG_TAIL = _tail_cut.RUNGS[-1]


class Accountant:
    """Compose a plan of releases into one certified privacy curve.

    Parameters
    ----------
    value_discretization_interval : float
        The grid of the privacy loss for every release (default 1e-4).
    composition : str
        ``"auto"``, ``"exact"`` or ``"fft"`` (see :class:`~ppk.PrivacyLossDistribution`).
    progress : bool
        Print a line to stderr per composition (long plans).
    neighboring_relation : str
        What dp_accounting's events (:meth:`add` of a ``DpEvent``) mean by neighbouring datasets:
        ``"add_or_remove_one"`` (the default, as dp_accounting's) or ``"replace_one"``; dp_accounting's
        ``NeighborRel`` members are accepted too (docs/dpsgd.md, "DpEvent plans").

    Examples
    --------
    >>> from ppk import CountingQuery
    >>> acc = Accountant(value_discretization_interval=1e-3)
    >>> acc = acc.add_gaussian(sigma=3.0, times=4).add_laplace(scale=20.0)
    >>> acc = acc.add(CountingQuery(n=10_001, known=0, p=0.3, sigma=5.0))
    >>> lower, upper = acc.delta_bracket(1.0)
    >>> print(f"{lower:.6f} <= delta(1.0) <= {upper:.6f}")
    0.031390 <= delta(1.0) <= 0.031390

    A dp_accounting plan (its ``DpEvent`` objects) is added as it is:

    >>> import dp_accounting
    >>> step = dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.1))
    >>> Accountant().add(dp_accounting.SelfComposedDpEvent(step, 1000)).get_epsilon(1e-5)  # doctest: +ELLIPSIS
    1.51...
    """

    def __init__(self, *, value_discretization_interval: float = 1e-4, composition: str = "auto",
                 progress: bool = False, neighboring_relation: Any = "add_or_remove_one"):
        self.value_discretization_interval = real("value_discretization_interval", value_discretization_interval,
                                                  minimum=0.0, min_inclusive=False)
        self.composition = choice("composition", composition, _convolution.METHODS)
        self.progress = flag("progress", progress)
        self.neighboring_relation = dp_events.neighboring_relation(neighboring_relation)
        self._plan: list[tuple[str, PrivacyLossDistribution | None, int]] = []   # None: built when needed (_leaf)
        self._databases: dict[Hashable, str] = {}
        self._composed: dict[float, PrivacyLossDistribution] = {}   # the plan composed, per tail cut
        self._cut_leaves: dict[int, Callable[[float], PrivacyLossDistribution]] = {}   # entry -> builder at a cut
        self._at_cut: dict[tuple[int, float], PrivacyLossDistribution] = {}
        self._sources: list[tuple[Hashable | None, Any]] = []   # each plan entry's rows key and release
        #: What the accountant did beyond composing (releases over shared rows taken at their added noise).
        self.notes: list[str] = []

    def __repr__(self) -> str:
        return f"Accountant({len(self._plan)} releases: {', '.join(name for name, _, _ in self._plan) or 'none'})"

    # -- the plan ------------------------------------------------------------------------------
    def add(self, release: Any, *, times: int = 1, name: str | None = None,
            shared_rows: str = "refuse") -> "Accountant":
        """Add ``times`` independent runs of a release: a PrivacyLossDistribution, any query (CountingQuery,
        NoisyQuery, HistogramQuery, OverlappingCounts), whose PLD is
        :meth:`PrivacyLossDistribution.from_curve` on the plan's grid, or a dp_accounting ``DpEvent``
        (Gaussian, Laplace, RandomizedResponse, PoissonSampled, SelfComposed, Composed, NoOp; any other
        refused by name), each of its mechanisms built as by :meth:`add_gaussian`,
        :meth:`add_subsampled_gaussian`, ... under :attr:`neighboring_relation` (docs/dpsgd.md).

        A release over unknown rows already in the plan (a count of the same ``n``, ``known``, ``p``; a
        NoisyQuery of the same natural law; ...) shares them, so the two are not independent.
        ``shared_rows="refuse"`` (the default) refuses it and says what to use instead (the exact joint
        models); ``shared_rows="plain"`` accounts every release over those rows at its added noise alone --
        the attacker who knows every other row, plain DP, which is sound whatever the releases share
        (docs/accuracy.md, "Releases over the same unknown rows") -- and says so in :attr:`notes`.
        """
        times = integer("times", times, minimum=1)
        shared_rows = choice("shared_rows", shared_rows, ("refuse", "plain"))
        if name is not None:
            name = text("name", name)
        if type(release).__name__.endswith("DpEvent") and not isinstance(release, (PrivacyLossDistribution,
                                                                                  PrivacyCurve)):
            return self._add_event(release, times)
        if isinstance(release, PrivacyLossDistribution):
            key, label = release._shared_noise_key, name or f"PLD #{len(self._plan) + 1}"
        elif isinstance(release, PrivacyCurve):
            key, label = release._rows_key, name or repr(release)
        else:
            raise TypeError(f"release must be a PrivacyLossDistribution, a dp_accounting DpEvent or a query "
                            f"(CountingQuery, NoisyQuery, HistogramQuery, OverlappingCounts), got "
                            f"{type(release).__name__}; mechanisms: add_gaussian, add_laplace, "
                            "add_subsampled_gaussian, add_subsampled_laplace, add_randomized_response")
        if shared_rows == "plain" and key is not None and (key in self._databases or times > 1):
            release, key = self._without_natural_noise(release, key, label)
        self._check_rows(key, release, times)
        # a query's PLD is built when the plan needs it (_leaf): a plan of that one query answers from its own
        # certified bracket (_alone), which a PLD would only loosen
        pld = release.with_composition(self.composition) if isinstance(release, PrivacyLossDistribution) else None
        if key is not None:
            self._databases[key] = label
        self._plan.append((label, pld, times))
        self._sources.append((key, release))
        self._composed = {}
        return self

    def compose(self, event: Any, count: int = 1) -> "Accountant":
        """dp_accounting's name: :meth:`add` ``count`` runs of ``event`` (a ``DpEvent`` or any release)."""
        if not (type(event).__name__.endswith("DpEvent") or isinstance(event, (PrivacyLossDistribution, PrivacyCurve))):
            raise TypeError(f"event must be a dp_accounting DpEvent (or a PrivacyLossDistribution or query), got "
                            f"{type(event).__name__}")
        return self.add(event, times=integer("count", count, minimum=1))

    def _add_event(self, event: Any, times: int) -> "Accountant":
        """The mechanisms of a DpEvent tree (ppk.pld.dp_events), each added by its ``add_*`` method; all are
        validated before any is added, so a refused event leaves the plan as it was."""
        adders: dict[str, Callable[..., Accountant]] = {
            "gaussian": self.add_gaussian, "laplace": self.add_laplace,
            "subsampled_gaussian": self.add_subsampled_gaussian, "subsampled_laplace": self.add_subsampled_laplace,
            "randomized_response": self.add_randomized_response}
        for leaf in dp_events.leaves(event, times, self.neighboring_relation):
            adders[leaf.kind](**leaf.params, times=leaf.times)
        return self

    def _without_natural_noise(self, release: Any, key: Hashable, label: str) -> tuple[Any, None]:
        """``shared_rows="plain"``: this release and every earlier one over the rows ``key`` at their added
        noise alone (their PLDs rebuilt from ``without_natural_noise()``)."""
        for i, (k, source) in enumerate(self._sources):
            if k != key:
                continue
            if not isinstance(source, PrivacyCurve):
                raise ValueError(f"{self._plan[i][0]} is a PrivacyLossDistribution over the rows {key}: ppk cannot "
                                 "take its natural noise out; add the query it came from instead")
            plain = source.without_natural_noise()
            old_label, _, times = self._plan[i]
            self._plan[i] = (old_label, None, times)   # rebuilt from `plain` when needed (_leaf)
            self._sources[i] = (None, plain)
            self.notes.append(f"{old_label}: accounted at its added noise alone (shares unknown rows with {label})")
        if not isinstance(release, PrivacyCurve):
            raise ValueError(f"{label} is a PrivacyLossDistribution over rows already in the plan: ppk cannot take its "
                             "natural noise out; add the query it came from instead")
        self._databases.pop(key, None)
        self.notes.append(f"{label}: accounted at its added noise alone (shares unknown rows with earlier releases "
                          "or its own repeats)")
        return release.without_natural_noise(), None

    def _check_rows(self, key: Hashable | None, release: Any, times: int) -> None:
        """Refuse a release whose unknown rows (``key``) another release of the plan, or its own repeats, use."""
        if key is None:
            return
        remedy = ("Use CountingQuery.repeat(k) for k releases of one count, ppk.OverlappingCounts for counts over "
                  "overlapping groups, ppk.HistogramQuery for a histogram, ppk.TablePlan for several counts, histograms "
                  "and cross-tabs of one table at once (docs/table-plans.md); add(..., shared_rows='plain') to account "
                  "every release over these rows at its added noise alone (sound, without the natural noise); or, if "
                  "the releases use disjoint unknown rows, compose their PLDs with independent=True and add the result.")
        if key in self._databases:
            raise ValueError(f"{release!r} shares its unknown rows with {self._databases[key]}: natural noise is not "
                             f"fresh, so composing the releases as independent would under-report delta. {remedy}")
        if times > 1:
            raise ValueError(f"times must be 1 for a release with natural noise, got {times}: the {times} releases of "
                             f"{release!r} share its unknown rows, so natural noise is not fresh and composing them "
                             f"as independent would under-report delta. {remedy}")

    def add_gaussian(self, *, sigma: float, sensitivity: float = 1.0, times: int = 1) -> "Accountant":
        """Add ``times`` runs of the Gaussian mechanism (sigma in the units of ``sensitivity``).

        The runs are built as one Gaussian mechanism of ``sigma / sqrt(times)``, which has exactly their
        privacy loss: each run's loss is N(mu, 2 mu), mu = sensitivity^2 / (2 sigma^2), and a sum of
        ``times`` of them is N(times mu, 2 times mu).  One PLD from the closed form instead of up to
        2 log2(times) compositions: exact at any ``times`` (1e12 runs cost one build, not 80 FFTs whose
        error bounds double with each squaring until the bracket is [0, 1]).
        """
        sigma = real("sigma", sigma, minimum=0.0, min_inclusive=False)
        sensitivity = real("sensitivity", sensitivity, minimum=0.0, min_inclusive=False)
        times = integer("times", times, minimum=1)
        # two ulps down cover the roundings of the square root and the quotient: a sigma no larger than
        # the exact one can only raise delta (never under-report it)
        combined = sigma if times == 1 else math.nextafter(math.nextafter(sigma / math.sqrt(times), 0.0), 0.0)
        pld = PrivacyLossDistribution.from_gaussian(sigma=combined, sensitivity=sensitivity,
                                                    value_discretization_interval=self.value_discretization_interval)
        name = f"Gaussian(sigma={sigma:g}, sensitivity={sensitivity:g})"
        return self.add(pld, name=name if times == 1 else f"{name} x {times}")

    def add_laplace(self, *, scale: float, sensitivity: float = 1.0, times: int = 1) -> "Accountant":
        """Add ``times`` runs of the Laplace mechanism."""
        scale = real("scale", scale, minimum=0.0, min_inclusive=False)
        sensitivity = real("sensitivity", sensitivity, minimum=0.0, min_inclusive=False)
        pld = PrivacyLossDistribution.from_laplace(scale=scale, sensitivity=sensitivity,
                                                   value_discretization_interval=self.value_discretization_interval)
        return self.add(pld, times=times, name=f"Laplace(scale={scale:g}, sensitivity={sensitivity:g})")

    def add_subsampled_gaussian(self, *, sigma: float, sampling_prob: float, sensitivity: float = 1.0,
                                times: int = 1, adjacency: str = "add_or_remove") -> "Accountant":
        """Add ``times`` runs of the Poisson-subsampled Gaussian mechanism (each row in with probability
        ``sampling_prob``; one DP-SGD step at noise multiplier ``sigma / sensitivity``): the builder
        :meth:`PrivacyLossDistribution.from_gaussian_mechanism` with ``sampling_prob``, as ``ppk compose
        --subsampled-gaussian``.  ``adjacency``: ``"add_or_remove"`` (the larger of both orders),
        ``"remove"`` or ``"add"`` alone."""
        times = integer("times", times, minimum=1)
        sigma = real("sigma", sigma, minimum=0.0, min_inclusive=False)
        sampling_prob = real("sampling_prob", sampling_prob, minimum=0.0, maximum=1.0, min_inclusive=False)
        dx, composition = self.value_discretization_interval, self.composition

        def at_cut(cut: float) -> PrivacyLossDistribution:   # its tails cut at e^cut (ppk.pld._tail_cut)
            with _in_our_words("standard_deviation", "sigma"):
                return PrivacyLossDistribution.from_gaussian_mechanism(
                    sigma, sensitivity=sensitivity, sampling_prob=sampling_prob, adjacency=adjacency,
                    value_discretization_interval=dx, log_mass_truncation_bound=cut).with_composition(composition)
        # the shallowest cut built now (bad arguments are refused when added); deeper ones when a question needs them
        self.add(at_cut(_tail_cut.RUNGS[0]), times=times,
                 name=f"subsampled Gaussian(sigma={sigma:g}, q={sampling_prob:g})")
        i = len(self._plan) - 1
        self._cut_leaves[i] = at_cut
        self._at_cut[(i, _tail_cut.RUNGS[0])] = self._leaf(i)
        return self

    def add_subsampled_laplace(self, *, scale: float, sampling_prob: float, sensitivity: float = 1.0,
                               times: int = 1, adjacency: str = "add_or_remove") -> "Accountant":
        """Add ``times`` runs of the Poisson-subsampled Laplace mechanism (as :meth:`add_subsampled_gaussian`;
        :meth:`PrivacyLossDistribution.from_laplace_mechanism` with ``sampling_prob``)."""
        times = integer("times", times, minimum=1)
        scale = real("scale", scale, minimum=0.0, min_inclusive=False)
        sampling_prob = real("sampling_prob", sampling_prob, minimum=0.0, maximum=1.0, min_inclusive=False)
        with _in_our_words("parameter", "scale"):
            pld = PrivacyLossDistribution.from_laplace_mechanism(
                scale, sensitivity=sensitivity, sampling_prob=sampling_prob, adjacency=adjacency,
                value_discretization_interval=self.value_discretization_interval)
        return self.add(pld, times=times, name=f"subsampled Laplace(scale={scale:g}, q={sampling_prob:g})")

    def add_randomized_response(self, *, eps0: float | None = None, noise_parameter: float | None = None,
                                num_buckets: int = 2, times: int = 1) -> "Accountant":
        """Add ``times`` runs of randomized response, one respondent's value replaced by another, given by
        either its local ``eps0`` (two outcomes: the truth with probability e^eps0 / (1 + e^eps0), as
        ``ppk compose --randomized-response``) or dp_accounting's ``noise_parameter`` p and ``num_buckets`` k
        (the value kept with probability 1 - p, else a uniform one of k buckets).  Both are exact pmfs
        (:meth:`PrivacyLossDistribution.from_pmfs`); p = 0 (no noise) is refused."""
        times = integer("times", times, minimum=1)
        if (eps0 is None) == (noise_parameter is None):
            raise ValueError("give either eps0 (two-outcome randomized response) or noise_parameter and "
                             "num_buckets (dp_accounting's k-ary one), not both or neither")
        if eps0 is not None:
            eps0 = real("eps0", eps0, minimum=0.0)
            p, q = mechanisms.randomized_response_pmfs(eps0)
            name = f"randomized response(eps0={eps0:g})"
        else:
            noise = real("noise_parameter", noise_parameter, minimum=0.0, maximum=1.0, min_inclusive=False)
            k = integer("num_buckets", num_buckets, minimum=1)
            p, q = dp_events.randomized_response_pmfs(noise, k) if k > 1 else ([1.0], [1.0])
            name = f"randomized response(noise_parameter={noise:g}, num_buckets={k})"
        pld = PrivacyLossDistribution.from_pmfs(p, q, value_discretization_interval=self.value_discretization_interval)
        return self.add(pld, times=times, name=name)

    # -- the composed curve ------------------------------------------------------------------------
    def _leaf(self, i: int) -> PrivacyLossDistribution:
        """Entry ``i``'s PLD, built from its query on the plan's grid the first time it is needed."""
        label, pld, times = self._plan[i]
        if pld is None:
            source = self._sources[i][1]
            pld = PrivacyLossDistribution.from_curve(
                source, value_discretization_interval=self.value_discretization_interval).with_composition(
                self.composition)
            self._plan[i] = (label, pld, times)
        return pld

    def _alone(self) -> BracketedCurve | None:
        """The query when the plan is one bracketed query released once: composing one release is the release
        itself, so its own certified bracket is the plan's (docs/accuracy.md, "Any query"), two-sided and
        without the PLD's grid, truncation or knots.  None for any other plan."""
        if len(self._plan) != 1 or self._plan[0][2] != 1:
            return None
        source = self._sources[0][1]
        return source if isinstance(source, BracketedCurve) else None

    def _leaf_at(self, i: int, cut: float) -> PrivacyLossDistribution:
        """Entry ``i``'s PLD with its tails cut at e^cut (only a subsampled Gaussian's depends on it)."""
        if i not in self._cut_leaves:
            return self._leaf(i)
        if (i, cut) not in self._at_cut:
            self._at_cut[(i, cut)] = self._cut_leaves[i](cut)
        return self._at_cut[(i, cut)]

    def _exposure(self) -> tuple[int, int]:
        """(runs of the cut leaves, compositions of the plan): what scales the cut mass (ppk.pld._tail_cut)."""
        return (sum(self._plan[i][2] for i in self._cut_leaves),
                _tail_cut.steps(times for _, _, times in self._plan))

    def _cut_mass(self, cut: float) -> float:
        """The most the answers at this cut can exceed the deepest cut's (the mass cut, ppk.pld._tail_cut)."""
        leaves = [self._leaf_at(i, cut) for i in range(len(self._plan))]
        tilted = self.composition == "auto" and _tail_cut.read_off_tilts(self._composed_at(cut), leaves)
        return _tail_cut.cut_mass([(leaves[i], self._plan[i][2]) for i in self._cut_leaves],
                                  0 if tilted else self._exposure()[1])

    def _composed_at(self, cut: float) -> PrivacyLossDistribution:
        """The plan composed with its subsampled tails cut at e^cut (once per cut)."""
        if not self._plan:
            raise ValueError("the plan is empty: add releases first")
        if not self._cut_leaves:
            cut = SUBSAMPLED_LOG_TAIL     # no leaf depends on the cut: one composition serves every question
        if cut not in self._composed:
            out: PrivacyLossDistribution | None = None
            for i, (label, _, times) in enumerate(self._plan):
                if self.progress:
                    print(f"ppk accountant: composing {i + 1}/{len(self._plan)}: {label} x {times}", file=sys.stderr,
                          flush=True)
                pld = self._leaf_at(i, cut)
                part = pld.self_compose(times) if times > 1 else pld
                out = part if out is None else out.compose(part)
            assert out is not None
            self._composed[cut] = out
        return self._composed[cut]

    def pld(self) -> PrivacyLossDistribution:
        """The composed privacy loss distribution of the whole plan, subsampled tails cut at the deepest
        e^-800 (computed once; the questions below cut them only as deep as each needs, docs/dpsgd.md)."""
        return self._composed_at(SUBSAMPLED_LOG_TAIL)

    def _deepening(self, ask: Callable[[PrivacyLossDistribution], Any]) -> Any:
        """``ask``'s (lower, upper) of the composed plan at the shallowest cut whose mass is at most 0.1 % of
        the smallest upper end (ppk.pld._tail_cut): certified at any cut, within that of the deepest's."""
        if not self._cut_leaves:
            return ask(self.pld())
        return _tail_cut.deepening(self._at, ask, *self._exposure())[1]

    def _at(self, cut: float) -> tuple[PrivacyLossDistribution, float]:
        return self._composed_at(cut), self._cut_mass(cut)

    @overload
    def delta_bracket(self, eps: float) -> tuple[float, float]: ...
    @overload
    def delta_bracket(self, eps: npt.ArrayLike) -> tuple[FloatArray, FloatArray]: ...
    @overload
    def delta_bracket(self, *, epsilon: float) -> tuple[float, float]: ...
    @overload
    def delta_bracket(self, *, epsilon: npt.ArrayLike) -> tuple[FloatArray, FloatArray]: ...
    def delta_bracket(self, eps: npt.ArrayLike | None = None, *, epsilon: npt.ArrayLike | None = None
                      ) -> tuple[float, float] | tuple[FloatArray, FloatArray]:
        """(lower, upper) on the plan's delta(eps): certified, vectorised over eps (``epsilon=``: the same,
        under dp_accounting's word).  A plan of one bracketed query released once answers from the query's own
        bracket (:meth:`pld` is then a looser, composable stand-in)."""
        eps = _eps_or_epsilon(eps, epsilon)
        alone = self._alone()
        if alone is not None:
            return alone.delta_bracket(eps)
        return self._deepening(lambda pld: pld.delta_bracket(eps))

    @overload
    def delta(self, eps: float) -> float: ...
    @overload
    def delta(self, eps: npt.ArrayLike) -> FloatArray: ...
    @overload
    def delta(self, *, epsilon: float) -> float: ...
    @overload
    def delta(self, *, epsilon: npt.ArrayLike) -> FloatArray: ...
    def delta(self, eps: npt.ArrayLike | None = None, *, epsilon: npt.ArrayLike | None = None
              ) -> float | FloatArray:
        """The plan's delta(eps), reported as the certified upper end (``epsilon=``: the same)."""
        lo, hi = self.delta_bracket(_eps_or_epsilon(eps, epsilon))
        return hi

    def epsilon(self, delta: float) -> float:
        """The smallest eps whose certified delta is <= ``delta`` (rounded up).  Subsampled tails are cut where
        the mass cut is at most 0.1 % of ``delta`` (docs/dpsgd.md, "The tails")."""
        alone = self._alone()
        if alone is not None:
            return alone.epsilon(delta)
        delta = real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False)
        cut = _tail_cut.for_delta(delta, self._cut_mass, *self._exposure()) if self._cut_leaves else SUBSAMPLED_LOG_TAIL
        return self._composed_at(cut).get_epsilon_for_delta(delta)

    def get_epsilon(self, target_delta: float) -> float:
        """dp_accounting's name for :meth:`epsilon`: the certified eps at ``target_delta``."""
        return self.epsilon(real("target_delta", target_delta, minimum=0.0, maximum=1.0, min_inclusive=False))

    def get_delta(self, target_epsilon: float) -> float:
        """dp_accounting's name for :meth:`delta` at one eps: the certified upper end at ``target_epsilon``."""
        return float(self.delta(real("target_epsilon", target_epsilon, minimum=0.0)))

    def power_bracket(self, alpha: npt.ArrayLike) -> tuple[float, float] | tuple[FloatArray, FloatArray]:
        """Certified ``(lower, upper)`` on the best attack's power 1 - beta(alpha) at false-positive rate alpha
        (vectorised), of the composed plan: :func:`ppk.tradeoff.power_bracket`, docs/tradeoff.md."""
        alone = self._alone()
        if alone is not None:
            return alone.power_bracket(alpha)
        return self._deepening(lambda pld: pld.power_bracket(alpha))


@contextlib.contextmanager
def _in_our_words(library: str, ours: str) -> Iterator[None]:
    """A builder's ValueError with dp_accounting's name of a parameter (``standard_deviation``) said in the
    accountant's (``sigma``)."""
    try:
        yield
    except ValueError as exc:
        raise ValueError(re.sub(rf"\b{library}\b", ours, str(exc))) from None


def _eps_or_epsilon(eps: Any, epsilon: Any) -> Any:
    """``eps``, or dp_accounting's ``epsilon=`` for it; exactly one of the two."""
    if (eps is None) == (epsilon is None):
        raise TypeError("give eps (or its alias epsilon), exactly one of them" if eps is None else
                        f"give eps or epsilon, not both (eps={eps!r}, epsilon={epsilon!r})")
    if epsilon is None:
        return eps
    values, scalar = real_array("epsilon", epsilon, minimum=0.0)   # errors in the caller's word
    return float(values[0]) if scalar else values.reshape(np.shape(epsilon))
