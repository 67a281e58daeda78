"""The k-ary case of the shuffle gap figure (docs/shuffle.md, "k-ary"): what the exact computations show
against the clone bounds, which hold for any eps0-DP local randomizer and so for k-ary randomized response."""
from __future__ import annotations

import math
import os
from typing import Sequence

from ._shuffle_kary import MAX_KARY_USERS, ShuffledKaryRandomizedResponse, standard_lower_log_delta
from ._validate import integer, real, sequence
from .related.shuffle_clones import clone_bound_epsilon


def standard_lower_epsilon(*, n: int, eps0: float, categories: int, delta: float, rtol: float = 1e-4) -> float:
    """A certified lower end of the standard shuffle-DP eps at ``delta``: the largest eps found whose certified
    lower end of delta (:func:`ppk._shuffle_kary.standard_lower_log_delta`) still exceeds ``delta`` (0 if none);
    the true eps, where the supremum's delta falls to ``delta``, is at least it."""
    target = math.log(delta)

    def above(e: float) -> bool:
        return standard_lower_log_delta(n=n, eps0=eps0, categories=categories, eps=e) > target
    if not above(0.0):
        return 0.0
    lo, hi = 0.0, eps0
    while hi - lo > rtol * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if above(mid) else (lo, mid)
    return lo


def kary_gap_rows(ns: Sequence[int], categories: Sequence[int], delta: float, eps0: float) -> list[tuple]:
    """``(k, n, standard lower end, fmt23, fmt21, uniform-belief exact)`` eps at ``delta`` for each cell."""
    rows = []
    for k in categories:
        for n in ns:
            belief = ShuffledKaryRandomizedResponse(n=n, eps0=eps0, categories=k).epsilon(delta, rtol=1e-6)
            rows.append((k, n, standard_lower_epsilon(n=n, eps0=eps0, categories=k, delta=delta),
                         clone_bound_epsilon(n=n, eps0=eps0, delta=delta, variant="fmt23"),
                         clone_bound_epsilon(n=n, eps0=eps0, delta=delta, variant="fmt21"), belief))
    return rows


def draw_kary_gap(out_dir: str, save, plt, *, ns: Sequence[int] = (100, 300, 1000, 3000, 10_000),
                  categories: Sequence[int] = (3, 8), delta: float = 1e-6, eps0: float = 4.0) -> tuple[str, str]:
    """Draw shuffle_gap_kary.png and write shuffle_gap_kary_table.md into ``out_dir``; returns both paths."""
    ns = sorted(set(sequence("ns", ns, lambda name, v: integer(name, v, minimum=2, maximum=MAX_KARY_USERS),
                             min_length=1, max_length=12)))
    categories = sorted(set(sequence("categories", categories, lambda name, v: integer(name, v, minimum=3, maximum=16),
                                     min_length=1, max_length=4)))
    delta = real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    eps0 = real("eps0", eps0, minimum=1e-3, maximum=20.0)
    rows = kary_gap_rows(ns, categories, delta, eps0)
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    styles = ["-", "--", ":", "-."]
    for j, k in enumerate(categories):
        cells = [r for r in rows if r[0] == k]
        x = [r[1] for r in cells]
        ax.plot(x, [r[4] for r in cells], ls=styles[j], color="C0", marker="^", ms=4)
        ax.plot(x, [r[3] for r in cells], ls=styles[j], color="C1", marker="s", ms=4)
        ax.plot(x, [r[2] for r in cells], ls=styles[j], color="k", marker="o", ms=4)
        ax.plot(x, [r[5] for r in cells], ls=styles[j], color="C2", marker="v", ms=4)
    ax.axhline(eps0, color="grey", lw=2, alpha=0.6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    from matplotlib.lines import Line2D
    handles = [Line2D([], [], color="C0", marker="^", ms=4, label="clone bound FMT21 (upper end)"),
               Line2D([], [], color="C1", marker="s", ms=4, label="clone bound FMT23 (upper end)"),
               Line2D([], [], color="k", marker="o", ms=4, label="ppk: certified lower end (others all equal)"),
               Line2D([], [], color="C2", marker="v", ms=4, label="ppk exact: no value known, uniform belief"),
               Line2D([], [], color="grey", lw=2, alpha=0.6, label=rf"randomized response alone ($\varepsilon_0$)")]
    handles += [Line2D([], [], color="k", ls=styles[j], label=f"k = {k}") for j, k in enumerate(categories)]
    ax.legend(handles=handles, fontsize=7, loc="lower left")
    ax.set_xlabel("n (users whose reports are shuffled)")
    ax.set_ylabel(rf"$\varepsilon$ at $\delta$ = {delta:g} (nats)")
    ax.set_title(rf"k-ary randomized response, shuffled, $\varepsilon_0$ = {eps0:g}: standard shuffle DP lies "
                 "between\nthe black (lower) and orange (upper) curves", fontsize=9)
    table = os.path.join(out_dir, "shuffle_gap_kary_table.md")
    with open(table, "w", encoding="utf-8") as fh:
        fh.write(f"eps at delta = {delta:g}, eps0 = {eps0:g} (written by ppk.figures.fig_shuffle_gap_kary)\n\n"
                 "| k | n | standard DP, certified lower end | FMT23 | FMT21 | FMT23 / lower end "
                 "| exact, uniform belief, no value known |\n|---|---|---|---|---|---|---|\n")
        for k, n, low, f23, f21, belief in rows:
            ratio = f"{f23 / low:.3f}" if low > 0 else "inf"
            fh.write(f"| {k} | {n} | {low:.6f} | {f23:.6f} | {f21:.6f} | {ratio} | {belief:.6f} |\n")
    return os.path.join(out_dir, save(fig, out_dir, "shuffle_gap_kary.png")), table
