"""``ppk plan``: a steward's whole release plan over one table, calibrated jointly and released once
(docs/table-plans.md, "The plan file")."""
from __future__ import annotations

import argparse
import math
from typing import Any

from .._io import read_joint_categories
from .._random import as_source
from ..calibration import calibrate
from ..plan_file import PlanFile, read_plan
from ..records import SEEDED_WARNING, exact_warning, guarantee, make_record, ppk_warning, release_budget
from ..samplers import rounded_gaussian
from ._args import add_command, add_json_flag, add_seed_args, call_seeded, release_rng, whole
from ._emit import NOT_PRIVATE, print_json, print_record, print_table
from ._ledger import add_ledger_args, gaussian_mechanisms, open_ledger, print_total, settle
from ._ledger import entry as ledger_entry
from ._ledger import source as ledger_source
from ._records import add_commitment_arg, add_large_eps_flag, committed_release, file_input


def _belief(pf: PlanFile) -> str:
    if pf.min_prob is not None:
        return (f"any belief that gives each of the {len(pf.categories)} joint categories a probability >= "
                f"{pf.min_prob:g}, stated by the steward (covered at once: the worst such belief is used)")
    assert pf.marginals is not None
    parts = "; ".join(f"{col}: " + ", ".join(f"{v}={p:g}" for v, p in table.items())
                      for col, table in pf.marginals.items())
    return f"each unknown row's columns are independent draws with the probabilities the steward stated ({parts})"


def _rows(pf: PlanFile, sigmas: list[float], values: list[int] | None = None) -> list[list[str]]:
    """One row per released number: the statistic, the cell, sigma, and the value when released."""
    out, j = [], 0
    for stat in pf.statistics:
        for label in stat.labels:
            row = [stat.name, label, f"{sigmas[j]:.6g}"]
            if values is not None:
                row.append(str(values[j]))
            out.append(row)
            j += 1
    return out


def _run(args: argparse.Namespace) -> int:
    pf = read_plan(args.plan)
    if args.csv is None:
        return _evaluate(args, pf)
    if args.n is not None:
        raise ValueError("--n is read from --csv (its rows); give one of them")
    return _release(args, pf)


def _evaluate(args: argparse.Namespace, pf: PlanFile) -> int:
    if args.n is None:
        raise ValueError("without --csv, give --n (the table's rows) to calibrate the plan")
    if pf.known >= args.n:
        raise ValueError(f"the plan file's known ({pf.known}) must be less than the rows given with --n ({args.n})")
    cal = calibrate(pf.table_plan(n=args.n), eps=pf.eps, delta=pf.delta)
    sigmas = list(cal.query.sigmas)
    out = dict(plan=args.plan, n=args.n, known=pf.known, eps=pf.eps, delta=pf.delta, scale=cal.scale,
               scale_dp=cal.scale_dp, noise_saved=cal.noise_saved, delta_achieved=cal.delta_achieved,
               counts=[dict(statistic=r[0], cell=r[1], sigma=s) for r, s in zip(_rows(pf, sigmas), sigmas)])
    if args.json:
        print_json(out)
        return 0
    print(f"plan {args.plan}: {len(sigmas)} counts over {len(pf.categories)} joint categories of "
          f"{', '.join(pf.column_names)}; {args.n} rows, the attacker knows {pf.known}; target (eps={pf.eps:g}, "
          f"delta={pf.delta:g})")
    print(f"belief: {_belief(pf)}\n")
    print_table(["statistic", "count", "sigma"], _rows(pf, sigmas))
    print(f"\ncalibrated jointly: certified delta at these sigmas {cal.delta_achieved:.6g} <= delta; plain DP would "
          f"need {cal.scale_dp:.6g} where the largest sigma here is {cal.scale:.6g} (noise saved: "
          f"{100 * cal.noise_saved:.1f}%).  A release (--csv) reserves the samplers' term from delta.")
    return 0


def _release(args: argparse.Namespace, pf: PlanFile) -> int:
    rng = release_rng(args)
    ledger = open_ledger(args)
    domains = {name: list(values) for name, values in pf.columns}
    draws = sum(len(s.cells) for s in pf.statistics)
    budget = release_budget(eps=pf.eps, delta=pf.delta, draws=draws, allow_large_eps=args.allow_large_eps)

    def draw(read):
        if pf.known >= read.rows:
            raise ValueError(f"the plan file's known ({pf.known}) must be less than the {read.rows} rows of {args.csv}")
        cal = calibrate(pf.table_plan(n=read.rows), eps=pf.eps, delta=budget)
        source = as_source(rng)
        joint = dict(zip(pf.categories, read.counts))
        exact = [sum(joint[c] for c in cell) for stat in pf.statistics for cell in stat.cells]
        noise = [call_seeded(rounded_gaussian, sigma=s, rng=source) if s > 0 else 0 for s in cal.query.sigmas]
        return cal, [x + e for x, e in zip(exact, noise)]

    read, (cal, values) = committed_release(args, lambda key: read_joint_categories(args.csv, domains, key=key), draw)
    plan = cal.query
    sigmas = list(plan.sigmas)
    standard = plan.n_unknown == 0
    kind = "DP" if standard else "PPK-DP"
    warnings = []
    if rng is not None:
        warnings.append(SEEDED_WARNING)
    if cal.scale == 0:
        warnings.append(exact_warning("every count is", pf.known))
    if not standard:
        warnings.append(ppk_warning(pf.known, read.rows, "with the belief the steward stated in the plan file, not "
                                                           "estimated from the data")
                        .replace("NOT STANDARD DP:", "STATED BELIEF, NOT STANDARD DP:"))
    belief = _belief(pf)
    attacker = dict(rows=read.rows, rows_known=pf.known, rows_unknown=plan.n_unknown, belief=belief,
                    belief_source="none" if standard else "stated_by_steward",
                    text=f"an attacker who knows {pf.known} of the {read.rows} rows exactly, not the challenge row; "
                         f"the other {plan.n_unknown} rows are natural noise shared by every count: {belief}")
    g = guarantee(kind=kind, eps=pf.eps, delta_mechanism=budget, draws=draws if cal.scale > 0 else 0,
                  text=f"every count of the plan plus its noise, jointly: (eps, delta)-{kind} (the certified delta "
                       f"at these sigmas is {cal.delta_achieved:.6g}) plus the samplers' term")
    noise = dict(law="none" if cal.scale == 0 else "rounded_gaussian", scale=cal.scale, scale_name="sigma",
                 unit="counts", per="count (the largest; each count's sigma is listed)")
    record = make_record(attacker=attacker, guarantee=g, noise=noise, warnings=warnings,
                         input=file_input(read, ", ".join(pf.column_names)))
    statistics = []
    j = 0
    for stat in pf.statistics:
        k = len(stat.cells)
        statistics.append(dict(name=stat.name, values=dict(zip(stat.labels, values[j:j + k])),
                               sigma=sigmas[j:j + k]))
        j += k
    public: dict[str, Any] = dict(statistics=statistics, eps=pf.eps, delta=pf.delta, n=read.rows, known=pf.known,
                                  sigma_dp=cal.scale_dp, record=record)
    if ledger is not None:
        # plain DP of the whole plan: one Gaussian mechanism at its least effective noise (docs/table-plans.md)
        sigma_eff = min((s for _, _, s in plan.pairs()), default=math.inf)
        mechanisms = [] if math.isinf(sigma_eff) else gaussian_mechanisms(sigma_eff, 1.0)
        settle(ledger, ledger_entry(command="plan", input=ledger_source(args.csv, ", ".join(pf.column_names),
                                                                          read.rows),
                                    guarantee=record["guarantee"], statistics=[s.name for s in pf.statistics],
                                    mechanisms=mechanisms), public)
    if args.json:
        print_json(public)
        return 0
    if rng is not None:
        print(NOT_PRIVATE + "\n")
    print(f"released plan {args.plan} over {read.rows} rows of {args.csv} (count + rounded Gaussian noise):")
    print_table(["statistic", "count", "sigma", "value"], _rows(pf, sigmas, values))
    print(f"\n(eps={pf.eps:g}, delta={pf.delta:g}) for the whole plan against an attacker who knows {pf.known} rows; "
          f"plain DP would need sigma {cal.scale_dp:.6g} where the largest here is {cal.scale:.6g}.")
    print_record(record)
    print_total(public)
    return 0


_DESCRIPTION = ("A whole release plan over one table -- counts, histograms and cross-tabs of named columns, "
                "written in a TOML plan file (docs/table-plans.md) -- calibrated jointly against an attacker who "
                "knows some rows: the rows they do not know are natural noise shared by every count. Without "
                "--csv: the noise each count needs for --n rows. With --csv: read the columns, calibrate, release "
                "every count once and print one record; on any bad row nothing is released.")


def register(sub: Any) -> None:
    """Add ``plan`` to the sub-commands ``sub``."""
    p = add_command(sub, "plan", _run, help="calibrate and release a plan of counts over one table (TOML file)",
                    description=_DESCRIPTION)
    p.add_argument("--plan", required=True, metavar="FILE", help="the plan file (TOML; docs/table-plans.md)")
    p.add_argument("--csv", default=None, help="the table (CSV with a header row): release the plan")
    p.add_argument("--n", type=whole, default=None, help="without --csv: the table's rows, to calibrate the plan")
    add_commitment_arg(p)
    add_ledger_args(p)
    add_large_eps_flag(p)
    add_seed_args(p, default_source=" (default: the operating system's secure source)")
    add_json_flag(p)
