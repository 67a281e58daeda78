"""Figures of ``ppk evaluate`` (matplotlib, an optional extra: ``pip install ppk[plot]``).

Each ``fig_*`` function draws one figure into ``out_dir`` and returns (file name, one-line
description) for ``summary.md``.  The thesis's figures 3.1, 4.1, 5.1-5.4 are recomputed from
the formulas; the gain maps and delta curves are the evaluation the thesis did not finish.
"""
from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping
from typing import Any, Callable, Sequence

import numpy as np

from . import algorithm2 as a2
from ._validate import integer, real, sequence
from .algorithm1 import alg1
from .baselines import analytic_gaussian_log_delta, analytic_gaussian_sigma, classic_gaussian_sigma, \
    sufficient_gaussian_sigma
from .counting import CountingQuery
from ._rows import check_rows as _check_rows
from .hypergeom import hypergeom_pmf
from .related.shuffle_clones import clone_bound_epsilon, rr_dp_epsilon
from .shuffle import ShuffledRandomizedResponse

#: Largest database a figure's own parameters take: each figure evaluates its grid in seconds up to it.
MAX_FIGURE_ROWS = 10**7


def _unit_interval(name: str, value: Any) -> float:
    return real(name, value, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _save(fig, out_dir: str, name: str, *, tight_layout: bool = True) -> str:
    # a figure whose colour bar spans several panels cannot be tight_layout'ed: it is cropped instead
    if tight_layout:
        fig.tight_layout()
    # 150 dpi: the figures are sized for a page, and a printed page needs more than a screen's 100
    fig.savefig(os.path.join(out_dir, name), dpi=150, bbox_inches=None if tight_layout else "tight")
    _plt().close(fig)
    return name


def _num(x: float) -> str:
    """A number for a label, in one notation across the figures: 10^k for a power of ten of 1000 or
    more (or 0.001 or less), m x 10^k below 10^-3, separators in other integers."""
    mantissa, _, exponent = f"{x:.5e}".partition("e")
    m, k = float(mantissa), int(exponent)
    if x > 0 and abs(k) >= 3 and m == 1.0:
        return f"$10^{{{k}}}$"
    if 0 < x and k <= -4:
        return rf"${m:g} \times 10^{{{k}}}$"
    return f"{x:,}" if isinstance(x, int) else f"{x:g}"


def fig_baselines_vs_n(out_dir: str, delta: float = 1e-6) -> tuple[str, str]:
    # Cor. 3.2 holds for delta <= 1/4 only
    delta = real("delta", delta, minimum=0.0, maximum=0.25, min_inclusive=False)
    plt = _plt()
    # The thesis's Fig 3.1 plots beta = sigma / n against n: four parallel lines, since every
    # baseline's sigma is independent of n.  What differs is their ratio to the exact minimum (the
    # analytic Gaussian), which depends on eps only: that is what is drawn.
    eps = np.logspace(-3, np.log10(0.99), 60)
    exact = np.array([analytic_gaussian_sigma(eps=e, delta=delta) for e in eps])
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    baselines: list[tuple[str, Callable[[float], float], str]] = [
        ("classic (Thm 3.1)", lambda e: classic_gaussian_sigma(eps=e, delta=delta), "-"),
        ("Cor. 3.2, corrected", lambda e: sufficient_gaussian_sigma(eps=e, delta=delta), "-"),
        ("Cor. 3.2, as printed (below 1: not DP)", lambda e: _printed_cor32(e, delta), "--")]
    for label, sigma_of, style in baselines:
        ax.semilogx(eps, np.array([sigma_of(e) for e in eps]) / exact, style, label=label)
    ax.axhline(1.0, color="k", lw=1, label="analytic Gaussian (Balle-Wang): the least noise that is DP")
    ax.set_xlabel(r"$\varepsilon$")
    ax.set_ylabel(r"$\sigma\,/\,\sigma_{\mathrm{analytic}}$ (the same for every n)")
    ax.set_title(rf"DP baselines for a count as multiples of the exact minimum, $\delta$ = {_num(delta)}" "\n"
                 r"(thesis Fig 3.1 plots $\beta = \sigma/n$ against n: parallel 1/n lines)", fontsize=10)
    ax.set_ylim(0.0, 2.6)   # room above the curves for the legend
    ax.legend(fontsize=8, loc="upper right")
    ratio_at = {e: classic_gaussian_sigma(eps=e, delta=delta) / analytic_gaussian_sigma(eps=e, delta=delta)
                for e in (0.01, 0.5)}
    return _save(fig, out_dir, "fig3_1_baselines_vs_n.png"), \
        "The DP baselines as multiples of the least DP noise (the analytic Gaussian) against eps; the ratio " \
        f"does not depend on n. The classic bound adds {ratio_at[0.01] - 1:.0%} at eps = 0.01 and " \
        f"{ratio_at[0.5] - 1:.0%} at eps = 0.5; the printed Cor. 3.2 falls below 1 (for eps below about 0.8), " \
        "so it is not DP."


def _printed_cor32(eps, delta):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sufficient_gaussian_sigma(eps=eps, delta=delta, variant="as_printed")


def fig_pointwise_loss(out_dir: str, n: int = 5000, known: int = 3000, o: int = 2000) -> tuple[str, str]:
    n = integer("n", n, minimum=2, maximum=MAX_FIGURE_ROWS)
    known = integer("known", known, minimum=0, maximum=n - 1)
    # the backgrounds drawn are q = o/4, o/2, 3o/4 known ones (and o/20 .. 19o/20 in the map: 500, 1000,
    # 1500 and 100 .. 1900 at the thesis's o = 2000); the loss is finite for 0 < q < o <= n - known
    o = integer("o", o, minimum=20, maximum=n - known)
    plt = _plt()
    b = np.linspace(0.01, 0.99, 400)

    def loss(b, q):
        return np.abs(np.log((n - known - o + q) / (o - q) * b / (1 - b)))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    backgrounds = (o // 4, o // 2, 3 * o // 4)
    for i, q in enumerate(backgrounds):
        line, = ax1.plot(b, loss(b, q), label=f"q(D') = {q}")
        # the zeros marked in the lower half only: the upper middle holds the legend
        ax1.axvline((o - q) / (n - known), ymax=0.45, ls=":", c=line.get_color(),
                    label="|PL| = 0 at b = (o - q)/(n - n')" if i == 0 else None)
    ax1.set_xlabel("attacker's bias b")
    ax1.set_ylabel("noiseless pointwise privacy loss |PL| (nats)")
    ax1.set_title("|PL| against the bias, for three backgrounds", fontsize=10)
    handles, labels = ax1.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda k: labels[k].startswith("|PL|"))   # the curves, then the zeros
    ax1.legend([handles[k] for k in order], [labels[k] for k in order], fontsize=8, loc="upper center")
    qs = np.arange(o // 20, o - o // 20, max(1, o // 200))
    B, Q = np.meshgrid(b, qs)
    im = ax2.pcolormesh(B, Q, np.minimum(loss(B, Q), 5), shading="auto", cmap="viridis")
    ax2.plot((o - qs) / (n - known), qs, "w--", lw=1)
    ax2.set_xlabel("attacker's bias b")
    ax2.set_ylabel("ones among the known rows q(D')")
    # named in the title: a legend box would cover part of the map
    ax2.set_title("|PL| over bias and background\n(dashed: the minimum, b = (o - q)/(n - n'))", fontsize=10)
    fig.colorbar(im, ax=ax2, label="|PL| (nats, capped at 5)")
    fig.suptitle(f"Noiseless pointwise privacy loss of a count (thesis Fig 4.1): |D| = {n}, |D'| = {known} known "
                 f"rows, output o = {o}", fontsize=11)
    zeros = ", ".join(f"{(o - q) / (n - known):g}" for q in backgrounds)
    return _save(fig, out_dir, "fig4_1_pointwise_loss.png"), \
        f"Thesis Fig 4.1: the noiseless pointwise loss at output o = {o} against the attacker's bias b; it " \
        f"vanishes at b = (o - q)/(n - n') ({zeros} for q = {', '.join(map(str, backgrounds))} known ones) -- " \
        "a pointwise effect at one output, not a statement about delta."


def fig_hypergeom_runtime(out_dir: str, sizes: Sequence[int] = (1_000, 2_000, 5_000, 10_000)) -> tuple[str, str]:
    # scipy is timed with one call per class: n/2 calls, about a second at n = 10^5
    sizes = sequence("sizes", sizes, lambda name, v: integer(name, v, minimum=2, maximum=10**5), min_length=1)
    from scipy import stats
    plt = _plt()
    t_ppk, t_loop, t_vec = [], [], []
    for n in sizes:
        t_ppk.append(_time(lambda: hypergeom_pmf(population=n, successes=n // 2, draws=n // 2)))
        dist = stats.hypergeom(M=n, n=n // 2, N=n // 2)
        classes = range(0, n // 2 + 1)
        t_loop.append(_time(lambda: [dist.pmf(h) for h in classes], reps=1))   # every class, measured
        t_vec.append(_time(lambda: dist.pmf(np.arange(0, n // 2 + 1)), reps=1))
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.loglog(sizes, t_loop, "o-", label="scipy, one call per class (the thesis's method)")
    ax.loglog(sizes, t_vec, "s-", label="scipy, one vectorised call")
    ax.loglog(sizes, t_ppk, "^-", label="ppk.hypergeom.hypergeom_pmf (C++)")
    ax.set_xlabel("database size n (n' = c = n/2; n/2 + 1 classes)")
    ax.set_ylabel("seconds for all classes (measured)")
    ax.set_title("Hypergeometric class weights (thesis Fig 5.1)")
    ax.legend(fontsize=8, loc="center right")
    return _save(fig, out_dir, "fig5_1_hypergeom_runtime.png"), \
        f"Measured run time of all hypergeometric class probabilities (n/2 + 1 classes): at n = {sizes[-1]:,} " \
        f"ppk takes {t_ppk[-1] * 1e3:.2g} ms, {t_loop[-1] / t_ppk[-1]:.0f}x less than one scipy call per class " \
        f"and {t_vec[-1] / t_ppk[-1]:.0f}x less than scipy's vectorised call."


def _time(f, reps=3):
    best = math.inf
    for _ in range(reps):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best


def fig_tau_and_supported_eps(out_dir: str, kappa2: Sequence[float] = (1e-3, 1e-6, 1e-9)) -> tuple[str, str]:
    kappa2 = sequence("kappa2", kappa2, _unit_interval, min_length=1, max_length=20)
    plt = _plt()
    m = np.logspace(3, 7, 60)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for k in kappa2:
        tau = np.array([2 * a2.hoeffding_t(kappa2=k, m=int(x)) for x in m])
        ax1.loglog(m, tau, label=rf"$\kappa_2$ = {_num(k)}")
        # supported eps: P(|l| > tau/2) <= 1% for l ~ Laplace(1/(n eps/2)), n = 2m: eps >= 4 ln(100)/(n tau)
        ax2.loglog(2 * m, 4 * math.log(100) / (2 * m * tau), label=rf"$\kappa_2$ = {_num(k)}")
    ax1.set_xlabel("Hoeffding sample m = |D'| (rows)")
    ax1.set_ylabel(r"interval half-width $\tau = 2t$ (bias units)")
    ax1.set_title(r"Additive Hoeffding $\tau$ (closed form)")
    ax2.set_xlabel("database size n (m = n/2)")
    ax2.set_ylabel(r"smallest supported $\varepsilon$")
    ax2.set_title(r"$\varepsilon$ with P(|Laplace| > $\tau$/2) $\leq$ 1% (Fig 5.2)")
    ax1.legend(fontsize=8)
    ax2.legend(fontsize=8)
    return _save(fig, out_dir, "fig5_2_tau_supported_eps.png"), \
        "Width of the bias interval and the smallest eps for which the Laplace estimate stays inside it " \
        "with 99% probability; the additive bound does not depend on the bias (the KL option would)."


def fig_laplace_truncation(out_dir: str, kappa2: float = 1e-6, kappa3: float = 1e-6) -> tuple[str, str]:
    kappa2, kappa3 = _unit_interval("kappa2", kappa2), _unit_interval("kappa3", kappa3)
    plt = _plt()
    eps = np.logspace(-3, 0, 80)
    fig, ax = plt.subplots(figsize=(6, 4))
    for n in (10**4, 10**5, 10**6):
        t = a2.hoeffding_t(kappa2=kappa2, m=n // 2)
        ax.loglog(eps, [max(a2.laplace_truncation(n=n, t=t, eps_estimate=e / 2), 1e-300) for e in eps],
                  label=f"n = {_num(n)}")
    ax.axhline(kappa3, ls=":", c="grey")
    # the curves leave the right of the panel empty: the line's label there, the legend above it
    ax.text(0.98, kappa3 * 5, rf"$\kappa_3$ = {_num(kappa3)}:" "\nabove it, Algorithm 2\nfalls back to DP", fontsize=8,
            color="dimgrey", ha="right", va="bottom", transform=ax.get_yaxis_transform())
    ax.set_ylim(1e-30, 2)
    ax.set_xlabel(r"total $\varepsilon$ (half of it estimates the bias)")
    ax.set_ylabel(r"Laplace truncation term $T_L$ (part of $\delta$)")
    ax.set_title(rf"Laplace truncation, $\kappa_2$ = {_num(kappa2)}, $\kappa_3$ = {_num(kappa3)}, "
                 "m = n/2 known rows\n"
                 rf"($\delta$ = {_num(kappa2 + kappa3)} split equally; thesis Fig 5.3)", fontsize=10)
    ax.legend(fontsize=8, loc="center right")
    return _save(fig, out_dir, "fig5_3_laplace_truncation.png"), \
        "T_L, the probability that the count estimate's discrete Laplace noise exceeds n t - 1 (about " \
        "exp(-(eps/2)(n t - 1))), against eps: where it exceeds kappa3 Algorithm 2 falls back to DP."


def fig_fraction_excluded(out_dir: str) -> tuple[str, str]:
    plt = _plt()
    kappas = np.logspace(-16, -2, 30)
    fig, ax = plt.subplots(figsize=(6, 4))
    for n in (10**4, 10**5, 10**6):
        support, _, cum = a2.exclusion_order(n, n // 2, n // 2)    # once per n, then every kappa1
        frac = np.minimum(np.searchsorted(cum, kappas, side="left"), support.size - 1) / support.size
        ax.semilogx(kappas, frac, label=f"n = {_num(n)}, |D'| = n/2")
    ax.set_xlabel(r"$\kappa_1$ (probability mass of the excluded classes)")
    ax.set_ylabel("fraction of background classes excluded")
    ax.set_title("Background-knowledge classes excluded, bias 0.5 (Fig 5.4)")
    ax.legend(fontsize=8)
    return _save(fig, out_dir, "fig5_4_fraction_excluded.png"), \
        "Share of the hypergeometric classes q(D') that kappa1 excludes: most are negligible, so tiny " \
        "kappa1 suffices -- and under the binomial model exclusion cannot change sigma anyway."


def fig_gain_maps(out_dir: str, n: int = 10**4, epss: Sequence[float] = (0.05, 0.1, 0.2), delta: float = 1e-6,
                  size: int = 10) -> tuple[str, str]:
    n = integer("n", n, minimum=2, maximum=MAX_FIGURE_ROWS)
    # a range for a map; near the smallest double the DP sigma it divides by leaves the float range
    epss = sequence("epss", epss, lambda name, e: real(name, e, minimum=1e-6, maximum=100.0), min_length=1,
                    max_length=10)
    delta = _unit_interval("delta", delta)
    size = integer("size", size, minimum=2, maximum=50)   # size^2 calls of Algorithm 1 a panel
    plt = _plt()
    # cell centres 0.05, 0.15, ..., 0.95 at the default size: the cell edges fall on the tenths
    kf = np.linspace(0.05, 0.95, size)
    ps = np.linspace(0.05, 0.95, size)
    # one panel under another, each a page column wide, so that the cells' numbers can be read there
    fig, axes = plt.subplots(len(epss), 1, figsize=(3.6, 1.1 + 2.6 * len(epss)), sharex=True, squeeze=False,
                             constrained_layout=True)
    panels = list(axes[:, 0])
    fontsize = min(7.0, 70.0 / size)
    im = None
    for ax, e in zip(panels, epss):
        bw = analytic_gaussian_sigma(eps=e, delta=delta)
        share = np.array([[alg1(n=n, known=int(f * n), p=p, eps=e, delta=delta).scale / bw for p in ps] for f in kf])
        im = ax.pcolormesh(ps, kf, 100 * share, shading="nearest", cmap="viridis", vmin=0, vmax=100)
        for a, f in enumerate(kf):       # the values themselves, for readers who print in grey
            for b, p in enumerate(ps):
                ax.text(p, f, _percent(share[a, b]), ha="center", va="center", fontsize=fontsize,
                        color="white" if share[a, b] < 0.55 else "black")
        ax.set_ylabel("known / n")
        ax.set_title(rf"$\varepsilon$ = {e:g}: DP needs $\sigma_{{BW}}$ = {bw:.3g} counts;" "\n"
                     f"the unknown rows alone suffice in {np.mean(share == 0):.0%} of the cells", fontsize=8)
    panels[-1].set_xlabel("bias p of the unknown rows")
    fig.colorbar(im, ax=panels, orientation="horizontal", fraction=0.04, aspect=30, pad=0.01,
                 label=r"$\sigma_{PPK}\,/\,\sigma_{BW}$ in % (0: no added noise)")
    fig.suptitle(f"Share of the DP noise PPK needs\nn = {_num(n)}, " rf"$\delta$ = {_num(delta)}", fontsize=9)
    return _save(fig, out_dir, "gain_maps.png", tight_layout=False), \
        f"sigma_PPK / sigma_BW in percent over (known/n, p) at n = {n:,} for eps = " \
        f"{', '.join(f'{e:g}' for e in epss)}: 0 (no added noise) where many rows are unknown and p is near 1/2, " \
        "close to 100 where the attacker knows almost everything or p is extreme; as eps grows the DP noise " \
        "shrinks and the region where the unknown rows alone suffice spreads."


def _percent(share: float) -> str:
    # 0 only where no noise is added, 100 only where PPK needs all of DP's: rounding moves neither end
    if share <= 0.0 or share >= 1.0:
        return f"{100 * share:.0f}"
    return str(min(max(round(100 * share), 1), 99))


def fig_delta_curves(out_dir: str, n: int = 100_000, known: int = 50_000, p: float = 0.5) -> tuple[str, str]:
    plt = _plt()
    eps = np.linspace(0.0, 0.12, 121)
    # (a) the range a release uses, delta on a log axis; (b) the whole curve, whose far end lies below
    # the smallest double, in log10 delta: on one axis (b) squeezes (a) into a sliver
    fig, (near, whole) = plt.subplots(1, 2, figsize=(10, 4.2), gridspec_kw={"width_ratios": [1.3, 1]})
    colours = {0.0: "k", 100.0: "C0", 300.0: "C3"}
    lowest = 0.0
    for sigma, colour in colours.items():   # one colour per added sigma: with and without natural noise
        curves = [(CountingQuery(n=n, known=known, p=p, sigma=sigma).log_delta(eps), "-",
                   rf"natural noise + $\sigma$ = {sigma:g}" if sigma else r"natural noise alone ($\sigma$ = 0)")]
        if sigma:
            curves.append((analytic_gaussian_log_delta(sigma=sigma, eps=eps), "--",
                           rf"Gaussian mechanism alone, $\sigma$ = {sigma:g}"))
        for log_delta, style, label in curves:
            y = log_delta / math.log(10)
            lowest = min(lowest, float(np.min(y)))
            near.semilogy(eps, 10.0 ** np.maximum(y, -300.0), style, color=colour, label=label)
            whole.plot(eps, y, style, color=colour)
    near.set_xlim(0.0, 0.09)
    near.set_ylim(1e-20, 2.0)
    near.set_xlabel(r"$\varepsilon$")
    near.set_ylabel(r"$\delta(\varepsilon)$")
    near.set_title(r"(a) $\delta \geq 10^{-20}$, the range a release uses", fontsize=10)
    near.legend(fontsize=7, loc="upper right")   # beyond eps = 0.05 every curve is below 1e-9
    whole.set_ylim(lowest * 1.03, 0.5 - lowest * 0.02)
    whole.set_xlabel(r"$\varepsilon$")
    whole.set_ylabel(r"$\log_{10} \delta(\varepsilon)$")
    whole.set_title(rf"(b) the whole curve, down to $\delta = 10^{{{lowest:.0f}}}$", fontsize=10)
    fig.suptitle(f"Privacy curves of a count: n = {n:,}, known = {known:,}, p = {p} "
                 f"(N = {n - known - 1:,} unknown rows act as natural noise)", fontsize=10)
    return _save(fig, out_dir, "delta_curves.png"), \
        "delta(eps) of the count with natural noise (solid) against the plain Gaussian mechanism with the same " \
        "added sigma (dashed, same colour): (a) for delta >= 1e-20 on a log axis, (b) the whole curve in " \
        "log10 delta. The unknown rows alone (black) give a smaller delta than the Gaussian mechanism with " \
        "sigma = 100 alone at every eps > 0."


def fig_evaluation_summary(out_dir: str, rows: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    rows = _check_rows("rows", rows)
    plt = _plt()
    from matplotlib.lines import Line2D
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), sharey=True)
    ns = sorted({r["n"] for r in rows})
    epss = sorted({r["eps"] for r in rows})
    colours = plt.get_cmap("viridis")(np.linspace(0.0, 0.85, max(len(ns), 1)))
    markers = ["o", "s", "^", "D", "v", "P"]
    # Algorithm 2 spends eps/2 on the bias estimate: its own DP baseline is the analytic sigma at eps/2
    panels = [("sigma_ppk", lambda r: r["sigma_analytic"], "Algorithm 1 (bias p known)", r"$\sigma_{BW}(\varepsilon)$"),
              ("sigma_alg2", lambda r: analytic_gaussian_sigma(eps=r["eps"] / 2, delta=r["delta"]),
               "Algorithm 2 (p estimated privately; median over seeds)", r"$\sigma_{BW}(\varepsilon/2)$")]
    for ax, (key, base, title, base_name) in zip(axes, panels):
        zero = 0
        for i, n in enumerate(ns):
            for j, e in enumerate(epss):
                cell = [r for r in rows if r["n"] == n and r["eps"] == e]
                if not cell:
                    continue
                # each (known/n) column holds every (n, eps, p): spread them so equal values stay visible
                x = np.array([r["known_fraction"] for r in cell]) + 0.003 * (np.arange(len(cell)) % 3 - 1)
                y = np.array([r[key] / base(r) for r in cell])
                zero += int(np.sum(y == 0))
                offset = (i * len(epss) + j - (len(ns) * len(epss) - 1) / 2) * 0.01
                ax.scatter(x + offset, y, s=18, color=colours[i], marker=markers[j % len(markers)],
                           alpha=0.85, edgecolors="none")
        ax.axhline(1.0, color="k", ls=":", lw=1)
        ax.set_ylim(-0.05, 1.12)
        ax.set_xlim(0.0, 1.0)   # the whole range of known/n: the spread around each value stays a spread
        ax.set_xlabel("share of rows the attacker knows (known / n)")
        ax.set_title(f"{title}\n{zero} of {len(rows)} points need no added noise (at 0)", fontsize=10)
        ax.text(0.01, 1.02, f"1 = the DP baseline {base_name}", fontsize=8, transform=ax.get_yaxis_transform())
    axes[0].set_ylabel(r"$\sigma_{PPK}\,/\,\sigma_{DP}$ (0: the natural noise suffices)")
    handles = [Line2D([], [], color=colours[i], marker="o", ls="", label=f"n = {_num(n)}") for i, n in enumerate(ns)]
    handles += [Line2D([], [], color="grey", marker=markers[j % len(markers)], ls="",
                       label=rf"$\varepsilon$ = {_num(e)}") for j, e in enumerate(epss)]
    # below the panels: inside either one the legend would hide points near known/n = 0.9
    fig.legend(handles=handles, fontsize=8, loc="lower center", ncol=max(len(handles), 1), frameon=False)
    fig.suptitle(fr"Every grid point of the sweep: the share of the DP noise PPK needs ($\delta$ = "
                 f"{', '.join(_num(d) for d in sorted({r['delta'] for r in rows}))})", fontsize=11)
    fig.tight_layout(rect=(0.0, 0.07, 1.0, 1.0))
    return _save(fig, out_dir, "sweep_sigma.png", tight_layout=False), \
        "Each sweep point's noise as a share of its DP baseline (the analytic Gaussian at eps for Algorithm 1, " \
        "at eps/2 for Algorithm 2, which spends the other half on the bias), by the share of rows known, " \
        "coloured by n and marked by eps: no point lies above 1, and the points at 0 are those where the " \
        "unknown rows alone suffice."


def _shuffle_gap_rows(ns: Sequence[int], deltas: Sequence[float], eps0: float) -> list[tuple]:
    """(n, delta, exact, clone fmt23, clone fmt21, RR alone, fmt23 / exact, fmt21 / exact) for every cell;
    each eps an upper end.  A ratio to an exact eps of 0 is 1 if the bound is 0 too, else inf."""
    rows = []
    for n in ns:
        for delta in deltas:
            exact = ShuffledRandomizedResponse(n=n, eps0=eps0).epsilon(delta)
            clones = [clone_bound_epsilon(n=n, eps0=eps0, delta=delta, variant=v) for v in ("fmt23", "fmt21")]
            ratios = [c / exact if exact > 0 else (1.0 if c == 0 else math.inf) for c in clones]
            rows.append((n, delta, exact, *clones, rr_dp_epsilon(eps0=eps0, delta=delta), *ratios))
    return rows


def _write_shuffle_gap_table(path: str, rows: Sequence[tuple], eps0: float) -> None:
    # orphan: Sphinx builds docs/ with warnings as errors, and this page is linked, not in a toctree
    lines = ["---", "orphan: true", "---", "",
             f"# Shuffled randomized response: the exact epsilon against the clone bounds (eps0 = {eps0:g})", "",
             f"n users each send binary randomized response with local eps0 = {eps0:g} (nats); the shuffler "
             "publishes how many reported 1. Standard shuffle DP: the attacker knows every other user's input. "
             "Every eps is an upper end: ppk's certified exact value (`ppk.ShuffledRandomizedResponse`), the clone "
             "bounds of Feldman, McMillan and Talwar (FOCS 2021, \"FMT21\", the bound of "
             "apple/ml-shuffling-amplification; SODA 2023 stronger clones, \"FMT23\"; "
             "`ppk.related.shuffle_clones`), and randomized response without the shuffler. "
             f"An eps of {eps0:g} = eps0: the shuffler adds nothing at that delta. "
             "Written by `ppk.figures.fig_shuffle_gap` with the figure shuffle_gap.png.", "",
             "| n | δ | exact ε | clone FMT23 | clone FMT21 | FMT23 / exact | FMT21 / exact | RR alone ε(δ) |",
             "|---|---|---|---|---|---|---|---|"]
    for n, delta, exact, fmt23, fmt21, rr, ratio23, ratio21 in rows:
        lines.append(f"| {_n_label(n)} | {_num(delta)} | {exact:.7g} | {fmt23:.7g} | {fmt21:.7g} | "
                     f"{ratio23:.3f} | {ratio21:.3f} | {rr:.7g} |")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def _n_label(n: int) -> str:
    # m x 10^k for the grid's 3 x 10^k: _num would write 30,000 beside 10^4
    m, k = n // 10 ** (len(str(n)) - 1), len(str(n)) - 1
    return rf"${m} \times 10^{{{k}}}$" if n >= 1000 and 1 < m and n == m * 10**k else _num(n)


def fig_shuffle_gap(out_dir: str, *, ns: Sequence[int] = (100, 300, 10**3, 3 * 10**3, 10**4, 3 * 10**4, 10**5,
                                                          3 * 10**5, 10**6, 3 * 10**6, 10**7),
                    deltas: Sequence[float] = (1e-6, 1e-10, 1e-14), eps0: float = 4.0) -> tuple[str, str]:
    """The exact eps of shuffled binary randomized response against the clone bounds and against
    randomized response alone, by n (issue #32's gap table).  Writes shuffle_gap.png and
    shuffle_gap_table.md (the same numbers) into ``out_dir`` and returns both paths.

    The default ns stop at 10^7 (MAX_FIGURE_ROWS): half a minute for the grid; n = 10^8 takes minutes per delta.
    The k-ary case is :func:`fig_shuffle_gap_kary`."""
    ns = sorted(set(sequence("ns", ns, lambda name, v: integer(name, v, minimum=2, maximum=MAX_FIGURE_ROWS),
                             min_length=1, max_length=20)))
    deltas = sorted(set(sequence("deltas", deltas, _unit_interval, min_length=1, max_length=4)), reverse=True)
    # beyond 50 a report is the truth w.p. 1 - 2e-22: nothing amplifies it; below 1e-6 every eps is 0 (an empty log axis)
    eps0 = real("eps0", eps0, minimum=1e-6, maximum=50.0)
    rows = _shuffle_gap_rows(ns, deltas, eps0)
    plt = _plt()
    from matplotlib.lines import Line2D
    from matplotlib.ticker import NullFormatter
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.4, 7.4), sharex=True, gridspec_kw={"height_ratios": [1.5, 1]})
    methods = [(2, "exact (ppk, certified)", "k", "o"), (3, "clone bound FMT23 (stronger clones)", "C1", "s"), (4, "clone bound FMT21 (ml-shuffling-amplification)", "C0", "^")]
    styles = ["-", "--", ":", "-."]
    # limits set before drawing: a curve of zeros (eps0 or delta large) autoscales a log axis with a warning;
    # 1-2-5 ticks and eps0: decades alone leave two labels on the axis
    low = 0.5 * min([v for r in rows for v in r[2:5] if v > 0] + [eps0])
    ticks = [t for t in (m * 10.0**k for k in range(-4, 2) for m in (1, 2, 5)) if low <= t <= eps0 / 1.3] + [eps0]
    top.set_xscale("log")
    top.set_yscale("log")
    top.set_yticks(ticks, [f"{t:g}" for t in ticks])
    top.set_ylim(low, 1.3 * eps0)
    top.yaxis.set_minor_formatter(NullFormatter())
    for j, delta in enumerate(deltas):
        cells = [r for r in rows if r[1] == delta]
        x = [r[0] for r in cells]
        for col, _, colour, marker in methods:
            top.plot(x, [r[col] for r in cells], ls=styles[j], color=colour, marker=marker, ms=4)
            if col > 2:   # its ratio to the exact eps, in column 6 (fmt23) or 7 (fmt21)
                bottom.plot(x, [r[col + 3] for r in cells], ls=styles[j], color=colour, marker=marker, ms=4)
    top.axhline(eps0, color="grey", lw=2, alpha=0.6)
    handles = [Line2D([], [], color=c, marker=m, ms=4, label=label) for _, label, c, m in methods]
    handles.append(Line2D([], [], color="grey", lw=2, alpha=0.6,
                          label=rf"randomized response alone ($\varepsilon_0$ = {eps0:g})"))
    handles += [Line2D([], [], color="k", ls=styles[j], label=rf"$\delta$ = {_num(d)}") for j, d in enumerate(deltas)]
    # the curves fall from eps0 towards the right: the lower left is empty
    top.legend(handles=handles, fontsize=8, loc="lower left")
    top.set_ylabel(r"$\varepsilon$ at $\delta$ (nats)")
    top.set_title(rf"(a) $\varepsilon$ of the shuffled count, local $\varepsilon_0$ = {eps0:g} "
                  "(attacker knows every other input)", fontsize=10)
    bottom.axhline(1.0, color="k", lw=1, ls=":")
    # named at the right end, above and below the groups of curves: a legend box would cover one of them
    # (the labels span the last two n: the curves rise towards the right)
    # limits set: ratios that all round to 1 would autoscale to a sliver that leaves the labels outside
    high = max([r[7] for r in rows if math.isfinite(r[7])] + [1.2])
    bottom.set_ylim(0.9, high + 0.15 * (high - 0.9))
    last = [r for r in rows if r[0] in ns[-2:] and math.isfinite(r[7])]
    if last:
        bottom.text(ns[-1], max(r[7] for r in last) + 0.04, "FMT21 / exact", color="C0", ha="right", va="bottom")
        bottom.text(ns[-1], min(r[6] for r in last) - 0.04, "FMT23 / exact", color="C1", ha="right", va="top")
    bottom.set_ylabel("clone bound / exact")
    bottom.set_xlabel("n (users whose reports are shuffled)")
    bottom.set_title("(b) how far the clone bounds are from the exact value (1: no gap)", fontsize=10)
    table = os.path.join(out_dir, "shuffle_gap_table.md")
    _write_shuffle_gap_table(table, rows, eps0)
    png = os.path.join(out_dir, _save(fig, out_dir, "shuffle_gap.png"))
    from ._figure_shuffle_kary import shrink_png
    return shrink_png(png), table


def fig_shuffle_gap_kary(out_dir: str, *, ns: Sequence[int] = (100, 300, 1000, 3000, 10_000, 30_000, 100_000), categories: Sequence[int] = (3, 8),
                         delta: float = 1e-6, eps0: float = 4.0) -> tuple[str, str]:
    """The k-ary case of :func:`fig_shuffle_gap`: shuffle_gap_kary.png and its table (ppk/_figure_shuffle_kary.py)."""
    from ._figure_shuffle_kary import draw_kary_gap
    return draw_kary_gap(out_dir, _save, _plt(), ns=ns, categories=categories, delta=delta, eps0=eps0)


ALL: list[Callable[[str], tuple[str, str]]] = [fig_baselines_vs_n, fig_pointwise_loss, fig_hypergeom_runtime, fig_tau_and_supported_eps,
       fig_laplace_truncation, fig_fraction_excluded, fig_gain_maps, fig_delta_curves]
