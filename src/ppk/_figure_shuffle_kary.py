"""The k-ary case of the shuffle gap figure (docs/shuffle.md, "k-ary"): what the exact computations show
against the clone bounds, which hold for any eps0-DP local randomizer and so for k-ary randomized response."""
from __future__ import annotations

import math
import os
from typing import Sequence

from ._shuffle_kary import MAX_KARY_USERS, ShuffledKaryRandomizedResponse, standard_lower_log_delta
from ._shuffle_kary_standard import ShuffledKaryStandard
from ._validate import integer, real, sequence
from .related.shuffle_clones import clone_bound_epsilon


def shrink_png(png: str) -> str:
    """Rewrite ``png`` in 256 colours: a third of the bytes (docs/figures ships in the sdist); a stubbed save
    (the API fuzz tests draw without writing) leaves nothing to shrink."""
    if os.path.isfile(png):
        from PIL import Image
        with Image.open(png) as image:
            small = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
        small.save(png, optimize=True, dpi=(150, 150))
    return png


def standard_lower_epsilon(*, n: int, eps0: float, categories: int, delta: float, below: float,
                           rtol: float = 1e-6) -> float:
    """A certified lower end of the standard shuffle-DP eps at ``delta``: the largest eps found whose certified
    lower end of delta (:func:`ppk._shuffle_kary.standard_lower_log_delta`) still exceeds ``delta`` (0 if none),
    searched below ``below`` (an upper end of that eps); the true eps is at least it."""
    target = math.log(delta)

    def above(e: float) -> bool:
        return standard_lower_log_delta(n=n, eps0=eps0, categories=categories, eps=e) > target
    lo, hi = 0.0, min(below, eps0)
    for guess in (0.99 * hi, 0.9 * hi):       # the ends are within a few per cent: start the bisection there
        if above(guess):
            lo = guess
            break
        hi = guess
    else:
        if not above(0.0):
            return 0.0
    while hi - lo > rtol * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if above(mid) else (lo, mid)
    return lo


def kary_gap_rows(ns: Sequence[int], categories: Sequence[int], delta: float, eps0: float) -> list[tuple]:
    """``(k, n, standard lower end, fmt23, fmt21, uniform-belief exact, standard upper end)`` eps at ``delta``."""
    rows = []
    for k in categories:
        for n in ns:
            belief = ShuffledKaryRandomizedResponse(n=n, eps0=eps0, categories=k).epsilon(delta, rtol=1e-6)
            up = ShuffledKaryStandard(n=n, eps0=eps0, categories=k).epsilon(delta)
            rows.append((k, n, standard_lower_epsilon(n=n, eps0=eps0, categories=k, delta=delta, below=up),
                         clone_bound_epsilon(n=n, eps0=eps0, delta=delta, variant="fmt23"),
                         clone_bound_epsilon(n=n, eps0=eps0, delta=delta, variant="fmt21"), belief, up))
    return rows


def draw_kary_gap(out_dir: str, save, plt, *, ns: Sequence[int] = (100, 300, 1000, 3000, 10_000, 30_000, 100_000),
                  categories: Sequence[int] = (3, 8), delta: float = 1e-6, eps0: float = 4.0) -> tuple[str, str]:
    """Draw shuffle_gap_kary.png and write shuffle_gap_kary_table.md into ``out_dir``; returns both paths."""
    ns = sorted(set(sequence("ns", ns, lambda name, v: integer(name, v, minimum=2, maximum=MAX_KARY_USERS),
                             min_length=1, max_length=12)))
    categories = sorted(set(sequence("categories", categories, lambda name, v: integer(name, v, minimum=3, maximum=16),
                                     min_length=1, max_length=4)))
    delta = real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    eps0 = real("eps0", eps0, minimum=1e-3, maximum=20.0)
    rows = kary_gap_rows(ns, categories, delta, eps0)
    fig, (ax, bottom) = plt.subplots(2, 1, figsize=(6.4, 7.4), sharex=True, gridspec_kw={"height_ratios": [1.5, 1]})
    styles = ["-", "--", ":", "-."]
    # columns of a row: 2 lower end, 3 FMT23, 4 FMT21, 5 uniform belief, 6 upper end
    lines = [(4, "C0", "^", 4, "clone bound FMT21 (upper end)"), (3, "C1", "s", 4, "clone bound FMT23 (upper end)"),
             (6, "C3", "x", 5, "ppk: certified upper end (clones keep their coins)"),
             (2, "k", "o", 4, "ppk: certified lower end (others all equal)"),
             (5, "C2", "v", 4, "ppk exact: no value known, uniform belief")]
    for j, k in enumerate(categories):
        cells = [r for r in rows if r[0] == k]
        x = [r[1] for r in cells]
        for col, colour, marker, size, _ in lines:
            ax.plot(x, [r[col] for r in cells], ls=styles[j], color=colour, marker=marker, ms=size)
            if col in (3, 6):        # against the lower end: the supremum lies between 1 and the red curve
                bottom.plot(x, [r[col] / r[2] if r[2] > 0 else math.nan for r in cells], ls=styles[j],
                            color=colour, marker=marker, ms=size)
    ax.axhline(eps0, color="grey", lw=2, alpha=0.6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    from matplotlib.lines import Line2D
    handles = [Line2D([], [], color=c, marker=m, ms=size, label=label) for _, c, m, size, label in lines]
    handles.append(Line2D([], [], color="grey", lw=2, alpha=0.6, label=rf"randomized response alone ($\varepsilon_0$)"))
    handles += [Line2D([], [], color="k", ls=styles[j], label=f"k = {k}") for j, k in enumerate(categories)]
    ax.legend(handles=handles, fontsize=7, loc="lower left")
    ax.set_ylabel(rf"$\varepsilon$ at $\delta$ = {delta:g} (nats)")
    ax.set_title(rf"(a) k-ary randomized response, shuffled, $\varepsilon_0$ = {eps0:g}: standard shuffle DP lies "
                 "between\nppk's black (lower) and red (upper) ends", fontsize=9)
    bottom.axhline(1.0, color="k", lw=1, ls=":")
    bottom.set_ylabel("eps / ppk's lower end")
    bottom.set_xlabel("n (users whose reports are shuffled)")
    bottom.set_title("(b) ppk's upper end (red) and FMT23 (orange) over ppk's lower end (1: closed)", fontsize=9)
    table = os.path.join(out_dir, "shuffle_gap_kary_table.md")
    with open(table, "w", encoding="utf-8") as fh:
        # orphan: a page of its own, linked from docs/shuffle.md rather than listed in a toctree
        fh.write("---\norphan: true\n---\n\n# k-ary shuffled randomized response: ppk's bracket against the clone "
                 f"bounds\n\neps at delta = {delta:g}, eps0 = {eps0:g} (written by ppk.figures.fig_shuffle_gap_kary)\n\n"
                 "| k | n | standard DP: lower end | upper end | FMT23 | FMT21 | FMT23 / upper end "
                 "| exact, uniform belief, no value known |\n|---|---|---|---|---|---|---|---|\n")
        for k, n, low, f23, f21, belief, up in rows:
            ratio = f"{f23 / up:.3f}" if up > 0 else "-"       # a delta reached at eps = 0 by both
            fh.write(f"| {k} | {n} | {low:.6f} | {up:.6f} | {f23:.6f} | {f21:.6f} | {ratio} | {belief:.6f} |\n")
    return shrink_png(os.path.join(out_dir, save(fig, out_dir, "shuffle_gap_kary.png"))), table
