"""The figure users want most: the privacy curve delta(eps) next to the DP curve of the same noise; and the
curve of a composition (a PrivacyLossDistribution or an Accountant) at its certified upper end."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import numpy.typing as npt

from ._validate import flag, instance, real_array, sequence, text
from ._curve import PrivacyCurve
from .counting import CountingQuery
from .noisy_query import NoisyQuery
from .shuffle import ShuffledRandomizedResponse

__all__ = ["plot_privacy_curve"]

_LOG10 = math.log(10)


class _Composed:
    """A PLD or an Accountant as the plot reads it: its certified upper end of log delta, no baseline (a
    composition has no single 'same noise without natural noise' curve to compare with)."""

    def __init__(self, obj: Any):
        self.obj = obj

    def pld(self) -> Any:
        from .pld.accountant import Accountant
        return self.obj.pld() if isinstance(self.obj, Accountant) else self.obj

    def log_delta(self, eps: np.ndarray) -> np.ndarray:
        return np.asarray(self.pld().log_delta_bracket(eps)[1])

    def epsilon(self, delta: float) -> float:
        return float(self.pld().get_epsilon_for_delta(delta))

    def label(self) -> str:
        from .pld.accountant import Accountant
        if isinstance(self.obj, Accountant):
            return f"Accountant: {len(self.obj._plan)} release(s) composed (certified upper end)"
        return "PrivacyLossDistribution (certified upper end)"


def _as_plotted(q: Any) -> Any:
    """A query as it is, a PLD or an Accountant wrapped; None for anything else.  An Accountant whose plan is one
    bracketed query released once is that query (what its delta and epsilon report)."""
    from .pld.accountant import Accountant
    from .pld.distribution import PrivacyLossDistribution
    if isinstance(q, PrivacyCurve):
        return q
    alone = q._alone() if isinstance(q, Accountant) else None
    if alone is not None:
        return alone
    if isinstance(q, (PrivacyLossDistribution, Accountant)):
        return _Composed(q)
    return None


def _label(q: Any) -> str:
    if isinstance(q, _Composed):
        return q.label()
    if isinstance(q, CountingQuery):
        return f"n={q.n:,}, known={q.known:,}, p={q.p:g}, sigma={q.sigma:g}"
    if isinstance(q, NoisyQuery):
        return f"{q.natural!r} + {q.added!r}"
    return repr(q)


def _partial(q: Any) -> bool:
    """Whether the curve has a partial-knowledge model: unknown rows whose natural noise it draws on (a
    shuffle against an attacker who knows every other input has none: its curve is already plain DP)."""
    return isinstance(q, PrivacyCurve) and q._rows_key is not None


def _baseline(q: PrivacyCurve, eps: np.ndarray) -> np.ndarray | None:
    """log delta of the same mechanism against an attacker who knows every other row (plain DP), or None when
    the curve is that already or adds no noise.  For the shuffle that attacker still faces the other users'
    coins: the baseline is the shuffle with every other input known, not randomized response alone (its
    without_natural_noise, local DP, drawn flat near delta = 1 and labelled DP)."""
    if not _partial(q) or q.scale == 0:
        return None
    if isinstance(q, ShuffledRandomizedResponse):
        return np.asarray(ShuffledRandomizedResponse(n=q.n, eps0=q.eps0, rtol=q.rtol).log_delta(eps))
    return np.asarray(q.without_natural_noise().log_delta(eps))


def _default_eps(queries: Sequence[Any]) -> np.ndarray:
    # up to where the first curve reaches 1e-30 (at least 0.1, at most 20)
    top = queries[0].epsilon(1e-30)
    top = 2.0 if not math.isfinite(top) else min(max(1.2 * top, 0.1), 20.0)
    return np.linspace(0.0, top, 161)


def plot_privacy_curve(queries: Any, *, eps: npt.ArrayLike | None = None, ax: Any = None,
                       baseline: bool = True, labels: Sequence[str] | None = None, path: str | None = None) -> Any:
    """Draw delta(eps) of one or more queries on a logarithmic delta axis, each with the DP baseline.

    The baseline (dashed, same colour) is the curve of the same added noise when the attacker knows
    every other row -- what plain differential privacy promises; the gap between the two is what the
    natural noise buys.  delta is drawn from ``log_delta``, so curves that go far below 1e-308 are
    drawn to their end (the axis labels powers of ten).

    Parameters
    ----------
    queries : a query, a PrivacyLossDistribution or an Accountant, or a sequence of them
        Queries: CountingQuery, NoisyQuery, HistogramQuery, OverlappingCounts, ...; bracketed curves
        (histograms, overlapping counts) are drawn at their certified upper end.  A PLD or an Accountant
        (a composition) is drawn at the certified upper end of its bracket, without a baseline.
    eps : array-like, optional
        The eps grid (default: 0 up to where the first curve reaches 1e-30, 161 points).
    ax : matplotlib Axes, optional
        Draw into it; by default a new 6.4 x 4.4 inch figure.
    baseline : bool
        Also draw each query's DP baseline.
    labels : sequence of str, optional
        Legend entries (default: the query's parameters).
    path : str, optional
        Save the figure there (PNG, 150 dpi).

    Returns
    -------
    matplotlib.axes.Axes
    """
    try:
        import matplotlib
        if ax is None and path is not None:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.axes import Axes
        from matplotlib.ticker import FuncFormatter, MaxNLocator
    except ImportError:
        raise ImportError("plot_privacy_curve needs matplotlib: pip install 'ppk[plot]'", name="matplotlib") from None
    single = _as_plotted(queries) is not None
    given: list[Any] = [queries] if single else list(queries) if isinstance(queries, (list, tuple)) else []
    qs = [_as_plotted(q) for q in given]
    if not qs or any(q is None for q in qs):
        raise TypeError("queries must be a ppk query (CountingQuery, NoisyQuery, HistogramQuery, OverlappingCounts), "
                        "a PrivacyLossDistribution or an Accountant, or a non-empty sequence of them")
    if labels is not None:
        labels = sequence("labels", labels, text)
        if len(labels) != len(qs):
            raise ValueError(f"labels must have one entry a query ({len(qs)}), got {len(labels)}")
    baseline = flag("baseline", baseline)
    if ax is not None:
        instance("ax", ax, Axes, "a matplotlib Axes (or None for a new figure)")
    if eps is None:
        grid = _default_eps(qs)
    else:
        flat, _ = real_array("eps", eps, minimum=0.0)
        grid = np.sort(flat)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.4))
    lowest = 0.0
    for i, q in enumerate(qs):
        colour = f"C{i % 10}"
        log10_d = np.asarray(q.log_delta(grid)) / _LOG10
        finite = np.isfinite(log10_d)
        ax.plot(grid[finite], log10_d[finite], color=colour, lw=2,
                label=labels[i] if labels is not None else _label(q))
        lowest = min(lowest, float(log10_d[finite].min(initial=0.0)))
        base = _baseline(q, grid) if baseline else None
        if base is not None:
            b = base / _LOG10
            ok = np.isfinite(b)
            ax.plot(grid[ok], b[ok], color=colour, lw=1.3, ls="--",
                    label="same noise, attacker knows all other rows (DP)" if i == 0 else None)
            lowest = min(lowest, float(b[ok].min(initial=0.0)))
    ax.set_ylim(lowest - 0.05 * max(1.0, -lowest), 0.5)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=8))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"$10^{{{int(round(y))}}}$"))
    ax.set_xlabel("ε")
    ax.set_ylabel("δ(ε)")
    if all(isinstance(q, _Composed) for q in qs):
        title = "Privacy curve of the composition (certified upper end)"
    elif any(_partial(q) for q in qs):
        title = "Privacy curve under partial background knowledge"
    else:
        title = "Privacy curve (the attacker knows every other row: DP)"
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    # below the axes: the curves fill the plot, and a legend inside would hide one of them
    ax.legend(fontsize=7.5, loc="upper center", bbox_to_anchor=(0.5, -0.14), frameon=False)
    if path is not None:
        fig = ax.figure
        fig.savefig(path, dpi=150, bbox_inches="tight")
    return ax
