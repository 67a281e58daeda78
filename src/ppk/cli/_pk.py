"""``ppk pk threshold``: passive vs active attackers with partial knowledge of a thresholded count
(Desfontaines, Krahmer & Mohammadi; :mod:`ppk.related.pk`)."""
from __future__ import annotations

import argparse
from typing import Any

from ..records import exact_warning, guarantee, make_record
from ._args import add_command, add_group, add_json_flag, whole
from ._emit import exp_rounded_up, fmt_from_log, print_json, print_record, print_table
from ._records import stated_warning


def _run_threshold(args: argparse.Namespace) -> int:
    from ..related import pk
    m = pk.ThresholdCount(n=args.n, p=args.p, known=args.known, threshold=args.threshold, strict=not args.at_least,
                          fill=args.fill)
    passive, active = pk.ppk_delta(m, eps=args.eps), pk.apk_delta(m, eps=args.eps)
    N = args.n - args.known
    rel = ">=" if args.at_least else ">"
    record = make_record(
        attacker=dict(rows=args.n, rows_known=args.known, rows_unknown=N,
                      belief=f"each row is 1 with probability {args.p:g}, independently, stated (--p)",
                      belief_source="stated_by_steward",
                      text=f"passive (PPK-DP): knows {args.known} rows, whose values follow the prior too; active "
                           f"(APK-DP): chooses the values of the {args.known} rows it knows; the other rows are "
                           f"1 with probability {args.p:g}, independently"),
        guarantee=guarantee(kind="PPK-DP", eps=args.eps, delta_mechanism=exp_rounded_up(passive.log_delta),
                            text=f"against the passive attacker; the active one gets delta = {active.delta:.6g}"),
        noise=dict(law="none", scale=0.0, scale_name="none", unit="counts", per="value"),
        warnings=[exact_warning(f"the count is (when {rel} {args.threshold})", args.known),
                  stated_warning(args.known, args.n, "--p")])
    if args.json:
        print_json(dict(ppk=dict(delta=passive.delta, log_delta=passive.log_delta),
                        apk=dict(delta=active.delta, log_delta=active.log_delta,
                                 worst_known=active.worst_known), record=record))
        return 0
    print(f"count of {args.n} rows (P(1) = {args.p:g}) released only if {rel} {args.threshold}, else {args.fill};"
          f" the attacker knows {args.known} rows; eps = {args.eps:g}")
    print_table(["attacker", "delta", "ln delta"],
                [["passive (PPK-DP)", fmt_from_log(passive.log_delta), f"{passive.log_delta:.10g}"],
                 [f"active (APK-DP), worst: {active.worst_known} known 1s", fmt_from_log(active.log_delta),
                  f"{active.log_delta:.10g}"]])
    print_record(record)
    return 0


_THRESHOLD = ("PPK-DP (the known rows' values are drawn from the prior) and APK-DP (the attacker chooses them) of a "
              "thresholded count; delta is exact, in log space.")


def register(sub: Any) -> None:
    """Add pk (threshold) to the sub-commands ``sub``."""
    pk = add_group(sub, "pk", metavar="KIND",
                   help="passive vs active attackers with partial knowledge (Desfontaines, Krahmer & Mohammadi)")
    t = add_command(pk, "threshold", _run_threshold, help="a count released only above a threshold",
                    description=_THRESHOLD)
    t.add_argument("--n", type=whole, required=True, help="rows (voters)")
    t.add_argument("--p", type=float, required=True, help="probability that a row is 1")
    t.add_argument("--threshold", type=whole, required=True, help="the count is released only above this")
    t.add_argument("--known", type=whole, required=True, help="rows whose values the attacker knows")
    t.add_argument("--eps", type=float, required=True, help="epsilon >= 0")
    t.add_argument("--at-least", action="store_true", help="release when count >= threshold (default: >)")
    t.add_argument("--fill", type=whole, default=0, help="value released below the threshold (default 0)")
    add_json_flag(t)
