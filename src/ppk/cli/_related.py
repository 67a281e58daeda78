"""The related papers reproduced (:mod:`ppk.related`): ``ppk sp tables`` (Breutigam & Reischuk) and
``ppk risk gdpr`` / ``ppk risk figures`` (Dandekar, Basu & Bressan).  Nothing is read or released."""
from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from ..records import make_record
from ._args import add_command, add_group, add_json_flag, whole
from ._emit import print_json, print_record, print_table

_SP_COLUMNS = ["#SP", "sigma", "eps", "delta (Thm 5.1)", "#DP (KOV-style)", "delta exact", "#DP exact Gaussian"]


def _truncated(x: float) -> str:
    """Four digits, truncated as the paper prints them."""
    return f"{math.floor(x * 1e4) / 1e4:.4f}"


def _run_sp_tables(args: argparse.Namespace) -> int:
    from ..related import sp
    out = {}
    for name, table in (("I", sp.TABLE_I), ("II", sp.TABLE_II)):
        rows = sp.compare_sp_dp(table)
        out[name] = rows
        if args.json:
            continue
        print(f"Table {name}: n = {table['n']}, p = {table['p']}; paper's values [brackets], recomputed "
              "(truncated to 4 digits as printed), and the exact delta / a tight DP accountant")
        print_table(_SP_COLUMNS,
                    [[str(r["n_sp"]), f"{_truncated(r['sigma'])} [{r['paper_sigma']:.4f}]", f"{r['eps']:g}",
                      f"{_truncated(r['delta'])} [{r['paper_delta']:.4f}]",
                      f"{r['dp_queries']} [{r['paper_dp_queries']}]", f"{r['delta_exact']:.3g}",
                      str(r["dp_queries_exact_gaussian"])] for r in rows])
        print()
    record = make_record(
        attacker=dict(text="statistical privacy (Breutigam & Reischuk): the rows are split by a secret random "
                           "partition, each row 1 with probability p (the tables' p), and every block's count is "
                           "released with Gaussian noise; the attacker knows everything but the partition and the "
                           "target's value", belief_source="stated_by_steward"),
        guarantee=dict(kind="SP", eps=None, delta=None, text="one (eps, delta) per row of the tables, as listed"),
        noise=dict(law="gaussian", scale=None, scale_name="sigma", unit="counts", per="block (each row's sigma)"),
        warnings=["A REPRODUCTION of the paper's Tables I and II: no data was read and nothing was released"])
    if args.json:
        print_json({**out, "record": record})
    else:
        print("The Thm 5.1 bound splits over the target's secret block; for counts of one predicate the answers "
              "are as informative as their total, so the exact delta is that of one count on all rows. #DP "
              "(KOV-style) reconstructs the paper's unstated formula (floor; Table I eps=0.01 rounds); the exact "
              "Gaussian column composes k Gaussian answers of the same accuracy exactly.")
        print_record(record)
    return 0


def _run_risk_gdpr(args: argparse.Namespace) -> int:
    from ..related import risk
    eps0 = risk.eps_lower_bound_from_mae(max_mae=args.max_mae)
    if not 1e-9 <= eps0 <= 700:
        raise ValueError(f"--max-mae {args.max_mae:g} gives the Laplace mechanism eps0 = {eps0:.3g}; the cost model "
                         "needs 1e-9 <= eps0 <= 700, i.e. 1/700 <= --max-mae <= 1e9")
    model = risk.CostModel(E=args.E, c=args.c, n_stakeholders=args.stakeholders)
    best = model.optimal(eps0)
    result = dict(eps0=eps0, eps=best.eps, gamma=best.gamma, budget_dp=best.budget_dp, budget=best.budget,
                  saving=best.saving, confidence_exact=risk.confidence_exact(eps=best.eps, eps0=eps0))
    record = make_record(
        attacker=dict(text="any attacker (standard DP of the Laplace mechanism); privacy at risk adds the "
                           "probability, over the noise, that its loss stays within eps", belief_source="none"),
        guarantee=dict(kind="DP", eps=eps0, delta=0.0, delta_mechanism=0.0, delta_sampler=0.0,
                       text=f"the Laplace mechanism is eps0-DP; eps = {best.eps:.4g} holds with confidence "
                            f"gamma = {best.gamma:.4g} (the paper's model)"),
        noise=dict(law="laplace", scale=1.0 / eps0, scale_name="scale", unit="counts", per="value"),
        warnings=["A COST MODEL (Dandekar et al. Sec. 5.3): no data was read and nothing was released"])
    if args.json:
        print_json({**result, "record": record})
        return 0
    print(f"GDPR scenario (Dandekar et al. Sec. 5.3): count query, {args.stakeholders} stakeholders, "
          f"E = ${args.E:,.2f} each, c = {args.c:g}; mean absolute error <= {args.max_mae:g}")
    print_table(None, [
        ["Laplace mechanism eps0 (from the error bound)", f"{eps0:g}"],
        ["budget for eps0-DP", f"${best.budget_dp:,.2f}"],
        ["optimal privacy-at-risk level eps (Eq. 10)", f"{best.eps:.4f}"],
        ["its confidence gamma1 (paper's formula)", f"{best.gamma:.4f}"],
        ["budget at (eps, gamma)", f"${best.budget:,.2f}"],
        ["saving", f"${best.saving:,.2f}"],
        ["exact P(|loss| <= eps), worst-case pair", f"{result['confidence_exact']:.4f}"],
    ])
    print("\ngamma1 follows the paper's Lemma 24 model; the exact probability that the privacy loss of a "
          "worst-case pair stays within eps is the last row (see ppk.related.risk.confidence_exact).")
    print_record(record)
    return 0


def _run_risk_figures(args: argparse.Namespace) -> int:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("ppk risk figures: error: matplotlib is not installed (pip install 'ppk[plot]')", file=sys.stderr)
        return 2
    from ..related.risk.figures import draw_all
    for name in draw_all(args.out):
        print(f"{args.out}/{name}")
    return 0


_SP_TABLES = ("Regenerate Tables I and II of Breutigam & Reischuk: sigma, the Thm 5.1 delta and the DP query count, "
              "next to the paper's printed numbers, the exact delta of the same releases and the query count of "
              "exact Gaussian composition.")
_RISK_GDPR = ("Budget for eps0-DP vs the optimal privacy-at-risk level of the cost model E_dp(eps) = E exp(-c/eps) "
              "per stakeholder (Dandekar, Basu, Bressan).")
_RISK_FIGURES = ("Figures 1-2 (eps vs confidence, with the exact worst-case curve dotted), 8-11 (compensation vs eps "
                 "and its optimum) and 12 (composition).")


def register(sub: Any) -> None:
    """Add sp (tables) and risk (gdpr, figures) to the sub-commands ``sub``."""
    sp = add_group(sub, "sp", help="statistical privacy with random partitions (Breutigam & Reischuk)")
    tb = add_command(sp, "tables", _run_sp_tables,
                     help="the paper's Tables I and II, recomputed, with exact values beside", description=_SP_TABLES)
    add_json_flag(tb, "tables")

    risk = add_group(sub, "risk", help="privacy at risk of the Laplace mechanism (Dandekar, Basu & Bressan)")
    g = add_command(risk, "gdpr", _run_risk_gdpr, help="the paper's GDPR compensation scenario (Sec. 5.3)",
                    description=_RISK_GDPR)
    g.add_argument("--E", type=float, default=5500.0,
                   help="compensation scale per stakeholder in $ (default %(default)s)")
    g.add_argument("--c", type=float, default=1.0, help="cost-model constant c > 0 (default %(default)s)")
    g.add_argument("--stakeholders", type=whole, default=100, help="number of stakeholders (default %(default)s)")
    g.add_argument("--max-mae", type=float, default=2.0,
                   help="largest acceptable mean absolute error of the count (default %(default)s)")
    add_json_flag(g)
    f = add_command(risk, "figures", _run_risk_figures,
                    help="draw the paper's Figures 1, 2, 8-12 from the formulas (needs matplotlib)",
                    description=_RISK_FIGURES)
    f.add_argument("--out", default="ppk-risk-figures", help="output folder (default %(default)s)")
