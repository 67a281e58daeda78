"""Figures of ``ppk evaluate`` (matplotlib, an optional extra: ``pip install ppk[plot]``).

Each ``fig_*`` function draws one figure into ``out_dir`` and returns (file name, one-line
description) for ``summary.md``.  The thesis's figures 3.1, 4.1, 5.1-5.4 are recomputed from
the formulas; the gain maps and delta curves are the evaluation the thesis did not finish.
"""
from __future__ import annotations

import math
import os
import time
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from . import algorithm2 as a2
from .algorithm1 import alg1
from .baselines import analytic_gaussian_log_delta, analytic_gaussian_sigma, classic_gaussian_sigma, \
    sufficient_gaussian_sigma
from .counting import CountingQuery
from .hypergeom import hypergeom_pmf


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _save(fig, out_dir: str, name: str) -> str:
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, name), dpi=110)
    _plt().close(fig)
    return name


def fig_baselines_vs_n(out_dir: str, eps: float = 0.1, delta: float = 1e-6) -> tuple[str, str]:
    plt = _plt()
    ns = np.logspace(4, 7, 13)
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, s in [("classic (Thm 3.1)", classic_gaussian_sigma(eps=eps, delta=delta)),
                     ("Cor. 3.2, corrected", sufficient_gaussian_sigma(eps=eps, delta=delta)),
                     ("Cor. 3.2, as printed (not DP)", _printed_cor32(eps, delta)),
                     ("analytic (Balle-Wang)", analytic_gaussian_sigma(eps=eps, delta=delta))]:
        ax.loglog(ns, s / ns, marker="o", ms=3, label=label)
    ax.set_xlabel("database size n (rows)")
    ax.set_ylabel("normalised noise beta = sigma / n")
    ax.set_title(f"DP baselines for a count, eps={eps}, delta={delta:g} (thesis Fig 3.1)")
    ax.legend(fontsize=8)
    return _save(fig, out_dir, "fig3_1_baselines_vs_n.png"), \
        "DP noise (beta = sigma/n) of the classic, Cor. 3.2 (corrected and as printed) and analytic " \
        "Gaussian mechanisms vs n; all scale as 1/n, the printed Cor. 3.2 is below the exact (analytic) " \
        "minimum, i.e. not DP."


def _printed_cor32(eps, delta):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sufficient_gaussian_sigma(eps=eps, delta=delta, variant="as_printed")


def fig_pointwise_loss(out_dir: str, n: int = 5000, known: int = 3000, o: int = 2000) -> tuple[str, str]:
    plt = _plt()
    b = np.linspace(0.01, 0.99, 400)

    def loss(b, q):
        return np.abs(np.log((n - known - o + q) / (o - q) * b / (1 - b)))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for q in (500, 1000, 1500):
        ax1.plot(b, loss(b, q), label=f"q(D') = {q}")
        ax1.axvline((o - q) / (n - known), ls=":", c="grey")
    ax1.set_xlabel("attacker's bias b")
    ax1.set_ylabel("noiseless pointwise privacy loss |PL| (nats)")
    ax1.set_title(f"|D|={n}, |D'|={known}, output o={o}")
    ax1.legend(fontsize=8)
    qs = np.arange(100, 1900, 10)
    B, Q = np.meshgrid(b, qs)
    im = ax2.pcolormesh(B, Q, np.minimum(loss(B, Q), 5), shading="auto", cmap="viridis")
    ax2.plot((o - qs) / (n - known), qs, "w--", lw=1, label="minimum b = (o - q)/(n - n')")
    ax2.set_xlabel("attacker's bias b")
    ax2.set_ylabel("ones among the known rows q(D')")
    ax2.legend(fontsize=8, loc="upper right")
    fig.colorbar(im, ax=ax2, label="|PL| (nats, capped at 5)")
    return _save(fig, out_dir, "fig4_1_pointwise_loss.png"), \
        "Thesis Fig 4.1 with bias 0.4 (the text's value): the noiseless pointwise loss at o=2000 vanishes " \
        "at b = (2000 - q)/2000 (0.75, 0.5, 0.25) -- a pointwise effect, not a statement about delta."


def fig_hypergeom_runtime(out_dir: str, sizes: Sequence[int] = (10_000, 20_000, 50_000)) -> tuple[str, str]:
    from scipy import stats
    plt = _plt()
    t_ppk, t_loop, t_vec = [], [], []
    for n in sizes:
        t_ppk.append(_time(lambda: hypergeom_pmf(population=n, successes=n // 2, draws=n // 2)))
        dist = stats.hypergeom(M=n, n=n // 2, N=n // 2)
        lo, hi = 0, n // 2
        sample = np.linspace(lo, hi, 2000).astype(int)   # time 2000 calls, scale to the support
        t_loop.append(_time(lambda: [dist.pmf(h) for h in sample], reps=1) * (hi - lo + 1) / sample.size)
        t_vec.append(_time(lambda: dist.pmf(np.arange(lo, hi + 1)), reps=1))
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.loglog(sizes, t_loop, "o-", label="scipy, one call per class (extrapolated from 2000)")
    ax.loglog(sizes, t_vec, "s-", label="scipy, vectorised")
    ax.loglog(sizes, t_ppk, "^-", label="ppk.hypergeom_pmf (C++)")
    ax.set_xlabel("database size n (n' = c = n/2)")
    ax.set_ylabel("seconds for all classes")
    ax.set_title("Hypergeometric class weights (thesis Fig 5.1)")
    ax.legend(fontsize=8)
    ratio = t_loop[-1] / t_ppk[-1]
    return _save(fig, out_dir, "fig5_1_hypergeom_runtime.png"), \
        f"Run time of all hypergeometric class probabilities: ppk is {ratio:.0f}x faster than per-class " \
        f"scipy calls at n={sizes[-1]}."


def _time(f, reps=3):
    best = math.inf
    for _ in range(reps):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best


def fig_tau_and_supported_eps(out_dir: str, kappa2: Sequence[float] = (1e-3, 1e-6, 1e-9)) -> tuple[str, str]:
    plt = _plt()
    m = np.logspace(3, 7, 60)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for k in kappa2:
        tau = np.array([2 * a2.hoeffding_t(kappa2=k, m=int(x)) for x in m])
        ax1.loglog(m, tau, label=f"kappa2 = {k:g}")
        # supported eps: P(|l| > tau/2) <= 1% for l ~ Laplace(1/(n eps/2)), n = 2m: eps >= 4 ln(100)/(n tau)
        ax2.loglog(2 * m, 4 * math.log(100) / (2 * m * tau), label=f"kappa2 = {k:g}")
    ax1.set_xlabel("Hoeffding sample m = |D'| (rows)")
    ax1.set_ylabel("interval half-width tau = 2t (bias units)")
    ax1.set_title("Additive Hoeffding tau (closed form)")
    ax2.set_xlabel("database size n (m = n/2)")
    ax2.set_ylabel("smallest supported eps")
    ax2.set_title("eps with P(|Laplace| > tau/2) <= 1% (Fig 5.2)")
    ax1.legend(fontsize=8)
    ax2.legend(fontsize=8)
    return _save(fig, out_dir, "fig5_2_tau_supported_eps.png"), \
        "Width of the bias interval and the smallest eps for which the Laplace estimate stays inside it " \
        "with 99% probability; the additive bound does not depend on the bias (the KL option would)."


def fig_laplace_truncation(out_dir: str, kappa2: float = 1e-6) -> tuple[str, str]:
    plt = _plt()
    eps = np.logspace(-3, 0, 80)
    fig, ax = plt.subplots(figsize=(6, 4))
    for n in (10**4, 10**5, 10**6):
        t = a2.hoeffding_t(kappa2=kappa2, m=n // 2)
        ax.loglog(eps, [max(a2.laplace_truncation(n=n, t=t, eps_estimate=e / 2), 1e-300) for e in eps],
                  label=f"n = {n:g}, m = n/2")
    ax.axhline(1e-6, ls=":", c="grey", label="delta = 1e-6")
    ax.set_ylim(1e-30, 2)
    ax.set_xlabel("total eps (half estimates the bias)")
    ax.set_ylabel("Laplace truncation term T_L (part of delta)")
    ax.set_title(f"Laplace truncation, kappa2 = {kappa2:g} (thesis Fig 5.3)")
    ax.legend(fontsize=8)
    return _save(fig, out_dir, "fig5_3_laplace_truncation.png"), \
        "T_L, the probability that the count estimate's discrete Laplace noise exceeds n t - 1 (about " \
        "exp(-(eps/2)(n t - 1))), against eps: where it exceeds kappa3 Algorithm 2 falls back to DP."


def fig_fraction_excluded(out_dir: str) -> tuple[str, str]:
    plt = _plt()
    kappas = np.logspace(-16, -2, 30)
    fig, ax = plt.subplots(figsize=(6, 4))
    for n in (10**4, 10**5, 10**6):
        frac = [a2._diagnostics(n, n // 2, n // 2, k).fraction_excluded for k in kappas]
        ax.semilogx(kappas, frac, label=f"n = {n:g}, |D'| = n/2")
    ax.set_xlabel("kappa1 (probability mass of excluded classes)")
    ax.set_ylabel("fraction of background classes excluded")
    ax.set_title("Background-knowledge classes excluded, bias 0.5 (Fig 5.4)")
    ax.legend(fontsize=8)
    return _save(fig, out_dir, "fig5_4_fraction_excluded.png"), \
        "Share of the hypergeometric classes q(D') that kappa1 excludes: most are negligible, so tiny " \
        "kappa1 suffices -- and under the binomial model exclusion cannot change sigma anyway."


def fig_gain_maps(out_dir: str, ns: Sequence[int] = (10**4, 10**6), epss: Sequence[float] = (0.01, 0.1), delta: float = 1e-6, size: int = 11) -> tuple[str, str]:
    plt = _plt()
    kf = np.linspace(0.05, 0.95, size)
    ps = np.linspace(0.05, 0.95, size)
    fig, axes = plt.subplots(len(ns), len(epss), figsize=(5 * len(epss), 4 * len(ns)), squeeze=False)
    for (i, n), (j, e) in product_idx(ns, epss):
        bw = analytic_gaussian_sigma(eps=e, delta=delta)
        share = np.empty((size, size))
        for a, f in enumerate(kf):
            for b, p in enumerate(ps):
                share[a, b] = alg1(n=n, known=int(f * n), p=p, eps=e, delta=delta).sigma / bw
        ax = axes[i][j]
        im = ax.pcolormesh(ps, kf, share, shading="auto", cmap="viridis", vmin=0, vmax=1)
        ax.set_xlabel("bias p of the unknown rows")
        ax.set_ylabel("known / n")
        ax.set_title(f"n = {n:g}, eps = {e}, sigma_BW = {bw:.4g} counts")
        fig.colorbar(im, ax=ax, label="sigma_PPK / sigma_BW (0 = no added noise)")
    fig.suptitle(f"Share of the DP (analytic Gaussian) noise that PPK-DP needs, delta = {delta:g}")
    return _save(fig, out_dir, "gain_maps.png"), \
        "sigma_PPK / sigma_BW over (known/n, p), the inverse of the gain: small where many rows are unknown " \
        "and p is near 1/2, 0 where the unknown rows alone suffice, 1 where the attacker knows almost everything."


def product_idx(a: Sequence[Any], b: Sequence[Any]) -> Iterator[tuple[tuple[int, Any], tuple[int, Any]]]:
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            yield (i, x), (j, y)


def fig_delta_curves(out_dir: str, n: int = 100_000, known: int = 50_000, p: float = 0.5) -> tuple[str, str]:
    plt = _plt()
    eps = np.linspace(0.0, 0.12, 61)
    fig, ax = plt.subplots(figsize=(6, 4))
    for sigma in (0.0, 100.0, 300.0):
        q = CountingQuery(n=n, known=known, p=p, sigma=sigma)
        ax.plot(eps, q.log_delta(eps) / math.log(10), label=f"natural noise + sigma = {sigma:g}")
    for sigma in (100.0, 300.0):
        ax.plot(eps, analytic_gaussian_log_delta(sigma=sigma, eps=eps) / math.log(10), "--",
                label=f"Gaussian mechanism alone, sigma = {sigma:g}")
    ax.set_ylim(-30, 0.5)
    ax.set_xlabel("eps")
    ax.set_ylabel("log10 delta(eps)")
    ax.set_title(f"Privacy curves: n={n}, known={known}, p={p}")
    ax.legend(fontsize=7)
    return _save(fig, out_dir, "delta_curves.png"), \
        "delta(eps) of the count with natural noise (N = n - known - 1 unknown rows) against the plain " \
        "Gaussian mechanism with the same added sigma: the unknown rows alone are worth more than sigma = 100."


def fig_evaluation_summary(out_dir: str, rows: list[dict[str, Any]]) -> tuple[str, str]:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4))
    base1 = np.array([r["sigma_analytic"] for r in rows])
    # Algorithm 2 spends eps/2 on the bias estimate: its own DP baseline is the analytic sigma at eps/2
    base2 = np.array([analytic_gaussian_sigma(eps=r["eps"] / 2, delta=r["delta"]) for r in rows])
    for base, key, marker, label in [(base1, "sigma_ppk", "o", "Algorithm 1 (p known) vs sigma_BW(eps)"),
                                     (base2, "sigma_alg2", "x", "Algorithm 2 (median) vs sigma_BW(eps/2)")]:
        s = np.array([r[key] for r in rows])
        ax.scatter(base, np.maximum(s, 1e-2), marker=marker, s=14, label=label)
    lim = [1e-2, max(base2) * 1.5]
    ax.plot(lim, lim, "k:", lw=1, label="= its DP baseline")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("DP baseline sigma (analytic Gaussian, counts)")
    ax.set_ylabel("PPK sigma (counts; 0 drawn at 0.01)")
    ax.set_title("Every grid point of the sweep")
    ax.legend(fontsize=7)
    return _save(fig, out_dir, "sweep_sigma.png"), \
        "Each sweep point: the noise of Algorithm 1 against the analytic Gaussian at eps and of Algorithm 2 " \
        "against the analytic Gaussian at eps/2 (the half it keeps for the noise); nothing lies above the " \
        "diagonal: PPK never needs more noise than its DP baseline."


ALL: list[Callable[[str], tuple[str, str]]] = [fig_baselines_vs_n, fig_pointwise_loss, fig_hypergeom_runtime, fig_tau_and_supported_eps,
       fig_laplace_truncation, fig_fraction_excluded, fig_gain_maps, fig_delta_curves]
