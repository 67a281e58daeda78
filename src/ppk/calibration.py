"""The least noise that makes a release private: :func:`calibrate`, one search for every query.

Algorithm 1 of the thesis, generalised (docs/architecture.md, docs/decisions.md "Algorithm 1"): a query
of :mod:`ppk` is a privacy curve whose added noise has a scale (:attr:`PrivacyCurve.scale`), and adding
noise is post-processing, so its certified ``delta_upper(eps)`` is non-increasing in the scale.  The
natural noise alone (scale 0) is tried first; otherwise the scale is searched between 0 and plain DP's
scale for the same release (:meth:`PrivacyCurve.dp_scale`), which is private because the natural noise
can only help -- by regula falsi in ``scale^2`` (log delta is nearly linear in the variance), safeguarded
by bisection (:mod:`ppk._search`).  The returned scale was evaluated with the certified upper bound and
found private; ``lower`` was evaluated and found not private.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ._curve import PrivacyCurve
from ._search import log_target, smallest_feasible_scale
from ._validate import real

__all__ = ["calibrate", "Calibration", "REASON_NATURAL", "REASON_NO_NATURAL", "REASON_SEARCH"]

Q = TypeVar("Q", bound=PrivacyCurve)

#: Why :func:`calibrate` returned its scale.
REASON_NATURAL = "natural noise alone suffices"
REASON_NO_NATURAL = "no natural noise (for a count: N = 0 or p in {0, 1}): the added noise alone"
REASON_SEARCH = "search"   # regula falsi in scale^2, safeguarded by bisection (ppk._search)


@dataclass(frozen=True)
class Calibration(Generic[Q]):
    """What :func:`calibrate` found.  Scales are in the query's units (:attr:`scale_name`: ``"sigma"`` is a
    standard deviation in counts)."""

    query: Q                #: the calibrated release (the query at ``scale``), of the type calibrated
    scale: float            #: the smallest scale found whose certified delta(eps) is <= the target
    lower: float            #: a scale found not private (or 0): the least private scale lies in [lower, scale]
    scale_dp: float         #: plain DP's scale for the same release (no natural noise), for comparison; inf
                            #: when the natural noise suffices and plain DP needs more than the law takes
    delta_achieved: float   #: certified upper bound of delta(eps) at ``scale`` (<= ``delta``)
    evaluations: int        #: privacy-curve evaluations used
    reason: str             #: REASON_NATURAL, REASON_NO_NATURAL or REASON_SEARCH
    eps: float              #: the target
    delta: float

    @property
    def scale_name(self) -> str:
        """What the scales are: ``"sigma"`` (standard deviations in counts) or ``"scale"`` (Laplace scales)."""
        return self.query.scale_name

    @property
    def zeta(self) -> float:
        """``scale - lower``: the width of the final bracket (the thesis's zeta)."""
        return self.scale - self.lower

    @property
    def noise_saved(self) -> float:
        """``1 - scale / scale_dp``: the fraction of plain DP's noise the natural noise makes unnecessary."""
        return 1.0 - self.scale / self.scale_dp


def calibrate(query: Q, *, eps: float, delta: float, rtol: float | None = None,
              atol: float = 0.0) -> Calibration[Q]:
    """The smallest noise scale with which ``query`` is (eps, delta)-private.

    Parameters
    ----------
    query : CountingQuery, NoisyQuery, HistogramQuery, OverlappingCounts (any :class:`PrivacyCurve`)
        The release; its current scale is ignored, only its law of noise matters (a ``NoisyQuery``
        must name its added law, e.g. ``added=noise.Gaussian(1.0)``; an ``OverlappingCounts`` keeps the
        ratios of its ``sigmas``).
    eps, delta : float
        The target, ``eps > 0``, ``0 < delta < 1``.
    rtol, atol : float
        The search stops when the bracket on the scale is narrower than ``max(atol, rtol * scale)``
        (``atol`` in the query's units).  Default ``rtol``: the query's (1e-8; 1e-10 for counts, 1e-6
        for histograms, whose evaluations cost more).

    Examples
    --------
    >>> import ppk
    >>> cal = ppk.calibrate(ppk.CountingQuery(n=1000, known=500, p=0.5, sigma=0.0), eps=1.0, delta=1e-6)
    >>> cal.reason, bool(cal.scale < cal.scale_dp), bool(cal.delta_achieved <= 1e-6)
    ('search', True, True)
    """
    if not isinstance(query, PrivacyCurve):
        raise TypeError(f"query must be a ppk query (CountingQuery, NoisyQuery, HistogramQuery, OverlappingCounts), "
                        f"got {type(query).__name__}")
    eps = real("eps", eps, minimum=0.0, min_inclusive=False)
    delta = real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    _check_shuffle_eps(query, eps)
    rtol = query._calibration_rtol if rtol is None else real("rtol", rtol, minimum=0.0, min_inclusive=False)
    atol = real("atol", atol, minimum=0.0)
    target = log_target(delta)
    cache: dict[float, float] = {}

    def excess(scale: float) -> float:
        if scale not in cache:   # delta = 0 (log -inf) counts as far below: the search interpolates in logs
            cache[scale] = max(query.with_scale(scale)._log_delta_upper_at(eps) - target, -1e3)
        return cache[scale]

    def result(scale: float, lower: float, reason: str, scale_dp: float) -> Calibration[Q]:
        calibrated: Q = query.with_scale(scale)  # type: ignore[assignment]  # with_scale keeps the type
        return Calibration(query=calibrated, scale=scale, lower=lower, scale_dp=scale_dp,
                           delta_achieved=math.exp(excess(scale) + target), evaluations=len(cache), reason=reason,
                           eps=eps, delta=delta)

    f_zero = excess(0.0)
    try:
        scale_dp = query.dp_scale(eps=eps, delta=delta)
    except ValueError as error:   # plain DP's scale is one the added law does not take
        if f_zero > 0:
            raise _beyond_the_law(eps, delta, error) from None
        scale_dp = math.inf      # plain DP needs more noise than the law takes (not needed here: the natural
                                 # noise alone suffices)
    if f_zero <= 0:
        return result(0.0, 0.0, REASON_NATURAL, scale_dp)
    hi = scale_dp
    cap = query._calibration_scale_cap()
    if cap < hi:     # plain DP's scale is beyond what the query evaluates: search below the cap, if it is private
        hi = cap / (1 + query._calibration_grow) ** 100     # room for the search's rounding steps above it
        if excess(hi) > 0:
            raise ValueError(f"eps={eps!r} and delta={delta!r} need a {query.scale_name} above {hi:.6g}, the largest "
                             f"this query's certified evaluation takes ({query!r}); plain DP's is {scale_dp:.6g} "
                             "(query.dp_scale): fewer rows, or another eps or delta")
    found = search_scale(excess, hi, f_zero=f_zero, width=lambda s: max(atol, rtol * s),
                         grow=query._calibration_grow, eps=eps, delta=delta)
    reason = REASON_SEARCH if query.has_natural_noise else REASON_NO_NATURAL
    return result(found.x, found.lower, reason, scale_dp)


#: The largest eps calibrate takes for a ShuffledRandomizedResponse.  Its scale is the flip probability, about
#: e^-eps at the answer; beyond e^-30 the shuffle's certified upper end does not reach the target (it is 1 at
#: eps0 = 31, eps = 30.5) and at eps0 = 34..36 its evaluation fails, so the search ended after ~7.5 s in "not
#: certified; please report this" (eps = 100 ... 700).
SHUFFLE_EPS_MAX = 30.0


def _check_shuffle_eps(query: Any, eps: float) -> None:
    from .shuffle import ShuffledRandomizedResponse
    if isinstance(query, ShuffledRandomizedResponse) and eps > SHUFFLE_EPS_MAX:
        raise ValueError(f"eps={eps!r} asks the shuffle for a flip probability near e^-{eps:g} (randomized response "
                         f"with eps0 >= eps): calibrate takes eps <= {SHUFFLE_EPS_MAX:g} for a "
                         "ShuffledRandomizedResponse, where its certified curve is resolved; at such an eps the "
                         "shuffle adds next to nothing over randomized response alone (ShuffledRandomizedResponse."
                         "dp_scale)")


def _beyond_the_law(eps: float, delta: float, error: ValueError) -> ValueError:
    return ValueError(f"eps={eps!r} and delta={delta!r} need a noise scale the added law does not take ({error}); "
                      "choose another eps or delta")


def search_scale(excess, hi: float, *, f_zero: float, width, grow: float, eps: float, delta: float):
    """:func:`ppk._search.smallest_feasible_scale`, its failure (a scale beyond what a law takes) said in the
    caller's terms."""
    try:
        return smallest_feasible_scale(excess, hi, f_zero=f_zero, width=width, grow=grow)
    except ValueError as error:
        raise _beyond_the_law(eps, delta, error) from None
