"""Figures 1, 2 and 8-12 of Dandekar, Basu, Bressan, recomputed from the formulas (``ppk risk figures``)."""
from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from ..._validate import EPS_MAX_CLOSED_FORM, instance, integer, real, sequence, text
from ...figures import _plt, _save
from .. import dp, risk

#: Most curves (or panels) one figure draws: each is dozens of root searches.
MAX_CURVES = 20
#: Smallest eps0 the budget figures take: CostModel.optimal's lower limit (e^{-c/eps} underflows below).
_EPS0_MIN_BUDGET = 1e-9


#: Largest eps0 of the composition figure: 10^4 compositions of e^eps0 terms leave the floats near 700.
_EPS0_MAX_COMPOSITION = 100.0


def _eps0(name: str, value, minimum: float = 0.0, maximum: float = EPS_MAX_CLOSED_FORM) -> float:
    """An eps0 of a figure: as the formulas it is drawn from take it (CostModel.optimal from 1e-9)."""
    return real(name, value, minimum=minimum, maximum=maximum, min_inclusive=minimum > 0)


def _eps0s(name: str, values, minimum: float = 0.0, maximum: float = EPS_MAX_CLOSED_FORM) -> list[float]:
    return sequence(name, values, lambda item, v: _eps0(item, v, minimum, maximum), min_length=1,
                    max_length=MAX_CURVES)


def fig1_eps_vs_confidence_k(out_dir: str, eps0: float = 1.0, ks: Sequence[int] = (1, 2, 3, 5, 10)) -> str:
    eps0 = _eps0("eps0", eps0)
    ks = sequence("ks", ks, lambda name, k: integer(name, k, minimum=1, maximum=risk.BesselK.K_MAX), min_length=1,
                  max_length=MAX_CURVES)
    plt = _plt()
    g = np.linspace(0.01, 0.99, 60)
    fig, ax = plt.subplots(figsize=(6, 4))
    for k in ks:
        ax.plot(g, [risk.eps_for_confidence(gamma=x, eps0=eps0, k=k) for x in g], label=f"k = {k}")
    # the exact confidence of the worst-case pair of neighbours, for one query (as in Fig. 2)
    ax.plot(g, [_eps_exact(x, eps0) for x in g], "k:", label="exact, k = 1 (worst-case pair)")
    ax.set_xlabel("confidence gamma (solid: paper's gamma1; dotted: exact)")
    ax.set_ylabel("privacy-at-risk level eps")
    ax.set_title(f"Laplace mechanism eps0 = {eps0}: eps vs gamma1 (Fig. 1)")
    ax.legend(fontsize=8)
    return _save(fig, out_dir, "risk_fig1_eps_vs_gamma_k.png")


def fig2_eps_vs_confidence_eps0(out_dir: str, eps0s: Sequence[float] = (0.1, 0.5, 1.0, 2.0, 5.0)) -> str:
    eps0s = _eps0s("eps0s", eps0s)
    plt = _plt()
    g = np.linspace(0.01, 0.99, 60)
    fig, ax = plt.subplots(figsize=(6, 4))
    for e0 in eps0s:
        ax.plot(g, [risk.eps_for_confidence(gamma=x, eps0=e0) for x in g], label=f"eps0 = {e0}")
        ax.plot(g, [_eps_exact(x, e0) for x in g], ":", color=ax.lines[-1].get_color())
    ax.set_xlabel("confidence gamma (solid: paper's gamma1; dotted: exact, worst-case pair)")
    ax.set_ylabel("privacy-at-risk level eps")
    ax.set_title("k = 1, several eps0 (Fig. 2)")
    ax.legend(fontsize=8)
    return _save(fig, out_dir, "risk_fig2_eps_vs_gamma_eps0.png")


def _eps_exact(gamma, eps0):
    # inverse of e^{-eps0/2} sinh(eps/2) (below its max (1 - e^{-eps0})/2), else eps0
    top = (1 - np.exp(-eps0)) / 2
    return eps0 if gamma >= top else 2 * np.arcsinh(gamma * np.exp(eps0 / 2))


def fig_budget(out_dir: str, eps0: float, name: str, model: risk.CostModel | None = None) -> str:
    eps0 = _eps0("eps0", eps0, _EPS0_MIN_BUDGET)
    name = text("name", name)
    model = risk.CostModel(E=5500, n_stakeholders=100) if model is None else \
        instance("model", model, risk.CostModel, "a CostModel or None")
    plt = _plt()
    eps = np.linspace(eps0 / 200, eps0, 200)
    cost = [model.par(e, risk.confidence(eps=e, eps0=eps0), eps0) for e in eps]
    best = model.optimal(eps0)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(eps, cost, label="budget under privacy at risk")
    ax.axhline(best.budget_dp, ls="--", c="grey", label=f"budget for eps0-DP (${best.budget_dp:,.0f})")
    ax.plot([best.eps], [best.budget], "o", label=f"optimum ({best.eps:.2f}, {best.gamma:.2f})")
    ax.set_xlabel("privacy-at-risk level eps")
    ax.set_ylabel("total compensation ($)")
    ax.set_title(f"Laplace mechanism eps0 = {eps0}, 100 stakeholders, E = $5500")
    ax.legend(fontsize=8)
    return _save(fig, out_dir, name)


def fig8_budget_variation(out_dir: str, eps0s: Sequence[float] = (0.1, 0.5, 1.0)) -> str:
    """Fig. 8: how the budget varies with the privacy-at-risk level, one curve for each eps0."""
    eps0s = _eps0s("eps0s", eps0s, _EPS0_MIN_BUDGET)
    plt = _plt()
    model = risk.CostModel(E=5500, n_stakeholders=100)
    fig, ax = plt.subplots(figsize=(6, 4))
    for i, eps0 in enumerate(eps0s):
        eps = np.linspace(eps0 / 200, eps0, 200)
        ax.plot(eps / eps0, [model.par(e, risk.confidence(eps=e, eps0=eps0), eps0) for e in eps], color=f"C{i}",
                label=f"eps0 = {eps0}")
        best = model.optimal(eps0)
        ax.plot([best.eps / eps0], [best.budget], "o", color=f"C{i}")
        ax.axhline(best.budget_dp, ls="--", lw=0.8, color=f"C{i}")
    ax.set_xlabel("privacy-at-risk level eps / eps0")
    ax.set_ylabel("total compensation ($)")
    ax.set_yscale("log")     # the budgets for eps0 = 0.1 and 1.0 differ by orders of magnitude
    ax.set_title("Budget under privacy at risk (dots: optimum; dashed: eps0-DP)")
    ax.legend(fontsize=8)
    return _save(fig, out_dir, "risk_fig8_budget_variation.png")


def fig12_composition(out_dir: str, delta: float = 1e-5, eps0s: Sequence[float] = (0.1, 0.5, 1.0)) -> str:
    delta = real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    eps0s = _eps0s("eps0s", eps0s, _EPS0_MIN_BUDGET, _EPS0_MAX_COMPOSITION)
    plt = _plt()
    n = np.unique(np.logspace(0, 4, 60).astype(int))
    # squeeze=False: one eps0 gave a lone Axes, which zip could not iterate
    fig, axes = plt.subplots(1, len(eps0s), figsize=(5 * len(eps0s), 4), squeeze=False)
    axes = axes[0]
    model = risk.CostModel(E=5500, n_stakeholders=100)
    for ax, e0 in zip(axes, eps0s):
        best = model.optimal(e0)
        ax.loglog(n, [dp.compose_basic([e0] * k)[0] for k in n], label="basic")
        ax.loglog(n, [dp.compose_advanced(eps=e0, delta=0.0, k=k, delta_prime=delta)[0] for k in n],
                  label="advanced")
        ax.loglog(n, [risk.compose_privacy_at_risk(eps0=e0, eps=best.eps, gamma=best.gamma, n=k, delta=delta)
                      for k in n], label=f"privacy at risk ({best.eps:.2f}, {best.gamma:.2f})")
        ax.set_xlabel("number of compositions n")
        ax.set_ylabel("composed eps'")
        ax.set_title(f"eps0 = {e0}, delta = {delta:g}")
        ax.legend(fontsize=7)
    return _save(fig, out_dir, "risk_fig12_composition.png")


def draw_all(out_dir: str) -> list[str]:
    os.makedirs(out_dir, exist_ok=True)
    return [fig1_eps_vs_confidence_k(out_dir), fig2_eps_vs_confidence_eps0(out_dir),
            fig8_budget_variation(out_dir),
            fig_budget(out_dir, 0.1, "risk_fig9_eps0_0.1.png"), fig_budget(out_dir, 0.5, "risk_fig10_eps0_0.5.png"),
            fig_budget(out_dir, 1.0, "risk_fig11_eps0_1.0.png"), fig12_composition(out_dir)]
