"""Certified trade-off curves: the best attack's power 1 - beta(alpha) at false-positive rate alpha, of any
ppk curve, PrivacyLossDistribution or Accountant; a table of them (CSV, JSON), callables for f-DP tools and
a plot.  The method (the f-DP curve of a privacy profile, certified from both sides) is in ppk._power and
docs/tradeoff.md.
"""
from __future__ import annotations

import csv
import io
import json
import math
from typing import Any, Callable, overload

import numpy as np
import numpy.typing as npt

from ._curve import PrivacyCurve
from ._power import ALPHA_FLOOR
from ._typing import FloatArray
from ._validate import choice, instance, integer, real, text

__all__ = ["power_bracket", "tradeoff_table", "tradeoff_functions", "write_tradeoff", "plot_tradeoff"]


@overload
def power_bracket(obj: Any, alpha: float) -> tuple[float, float]: ...
@overload
def power_bracket(obj: Any, alpha: npt.ArrayLike) -> tuple[FloatArray, FloatArray]: ...
def power_bracket(obj: Any, alpha: npt.ArrayLike) -> tuple[float, float] | tuple[FloatArray, FloatArray]:
    """Certified ``(lower, upper)`` on the best attack's power 1 - beta(alpha) at false-positive rate alpha.

    ``obj`` is a ppk privacy curve (a query), a :class:`~ppk.PrivacyLossDistribution` or an
    :class:`~ppk.Accountant`; ``alpha`` a number or an array in [0, 1] (vectorised).  The curve bracketed is
    the f-DP curve of the release's privacy profile: both orders of the pair (the larger delta, as ppk
    reports it), so for a symmetric pair (Gaussian, Laplace, randomized response) the trade-off curve of the
    pair itself.  Both ends are relative-accurate to about the delta bracket's own width (1e-13 for a
    Gaussian read in closed form) down to alpha = 1e-12 and below: the power is formed without
    cancellation.  Below alpha = 1e-250 the bracket is [alpha, the upper end at 1e-250].  A query with no
    certified lower end of delta (CountingQuery, NoisyQuery) takes its estimate lowered by 1e-9 relative as
    the lower end (docs/tradeoff.md).
    """
    from .pld.accountant import Accountant
    from .pld.distribution import PrivacyLossDistribution
    if isinstance(obj, Accountant):
        obj = obj.pld()
    if isinstance(obj, (PrivacyCurve, PrivacyLossDistribution)):
        return obj.power_bracket(alpha)
    raise TypeError("obj must be a ppk privacy curve (a query), a PrivacyLossDistribution or an Accountant, "
                    f"got {type(obj).__name__}")


def tradeoff_table(obj: Any, *, alpha_min: float = 1e-12, points: int = 100) -> list[dict[str, float]]:
    """Rows ``alpha, beta_lower, beta_upper, power_lower, power_upper`` on a log grid of ``points`` values of
    alpha from ``alpha_min`` to 1: beta = 1 - power rounded outward (beta_lower <= beta(alpha) <=
    beta_upper); the power columns keep the relative accuracy that beta, within 1e-9 of 1, cannot show."""
    alpha_min = real("alpha_min", alpha_min, minimum=ALPHA_FLOOR, maximum=1.0, min_inclusive=True,
                     max_inclusive=False)
    points = integer("points", points, minimum=2, maximum=100_000)
    alpha = np.logspace(math.log10(alpha_min), 0.0, points)
    alpha[0], alpha[-1] = alpha_min, 1.0
    lo, up = power_bracket(obj, alpha)
    beta_lo = np.nextafter(np.maximum(1.0 - up, 0.0), -np.inf).clip(0.0)
    beta_up = np.nextafter(1.0 - lo, np.inf).clip(max=1.0)
    return [dict(alpha=float(x), beta_lower=float(bl), beta_upper=float(bu), power_lower=float(pl),
                 power_upper=float(pu)) for x, bl, bu, pl, pu in zip(alpha, beta_lo, beta_up, lo, up)]


def write_tradeoff(rows: list[dict[str, float]], path: str, *, format: str | None = None) -> None:
    """Write :func:`tradeoff_table`'s rows as CSV or JSON (``format``: "csv" or "json"; default from the
    path's suffix), every number with 17 significant digits (round-trips exactly)."""
    path = text("path", path)
    fmt = choice("format", format, ("csv", "json")) if format is not None else \
        ("json" if path.lower().endswith(".json") else "csv")
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise TypeError("rows must be the list of dicts tradeoff_table returns")
    if fmt == "json":
        body = json.dumps(dict(columns=list(rows[0]) if rows else [], rows=rows), indent=1)
    else:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        names = list(rows[0]) if rows else ["alpha", "beta_lower", "beta_upper", "power_lower", "power_upper"]
        writer.writerow(names)
        for r in rows:
            writer.writerow([f"{float(r[k]):.17g}" for k in names])
        body = buf.getvalue()
    with open(path, "w", encoding="utf-8") as f:
        f.write(body)


def tradeoff_functions(obj: Any) -> tuple[Callable[[npt.ArrayLike], Any], Callable[[npt.ArrayLike], Any]]:
    """``(beta_lower, beta_upper)``: callables of alpha (vectorised) for f-DP tools that take a trade-off
    function; ``beta_lower`` is a valid (pessimistic) f-DP curve of the release."""
    power_bracket(obj, 0.5)      # a wrong obj fails here, not in the caller's f-DP tool
    def beta_lower(alpha: npt.ArrayLike) -> Any:
        return np.maximum(1.0 - np.asarray(power_bracket(obj, alpha)[1]), 0.0)

    def beta_upper(alpha: npt.ArrayLike) -> Any:
        return 1.0 - np.asarray(power_bracket(obj, alpha)[0])
    return beta_lower, beta_upper


def plot_tradeoff(obj: Any, *, alpha_min: float = 1e-12, points: int = 121, ax: Any = None, label: str | None = None,
                  path: str | None = None) -> Any:
    """Draw the certified power 1 - beta(alpha) against alpha on log-log axes (the band between the ends,
    and the chance line power = alpha); save a PNG to ``path`` if given.  Returns the Axes."""
    try:
        import matplotlib
        if ax is None and path is not None:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.axes import Axes
    except ImportError:
        raise ImportError("plot_tradeoff needs matplotlib: pip install 'ppk[plot]'", name="matplotlib") from None
    if label is not None:
        label = text("label", label)
    if path is not None:
        path = text("path", path)
    if ax is not None:
        instance("ax", ax, Axes, "a matplotlib Axes (or None for a new figure)")
    rows = tradeoff_table(obj, alpha_min=alpha_min, points=points)
    alpha = np.array([r["alpha"] for r in rows])
    lo = np.array([r["power_lower"] for r in rows])
    up = np.array([r["power_upper"] for r in rows])
    new = ax is None
    if new:
        _, ax = plt.subplots(figsize=(6.4, 4.4))
    line, = ax.loglog(alpha, up, lw=2, label=(label or "best attack") + " (certified upper end)")
    ax.fill_between(alpha, lo, up, color=line.get_color(), alpha=0.3, lw=0)
    if new:    # once a figure: another curve drawn into the same Axes shares it
        ax.loglog(alpha, alpha, color="0.5", lw=1, ls=":", label="chance (power = α)")
    ax.set_xlabel("false-positive rate α")
    ax.set_ylabel("true-positive rate 1 − β(α)")
    ax.set_title("Trade-off curve: the best membership attack's power")
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize=8, loc="lower right")
    if path is not None:
        ax.figure.savefig(path, dpi=150, bbox_inches="tight")
    return ax
