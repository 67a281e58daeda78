"""``ppk shuffle``: the exact, certified curve of shuffled randomized response, next to the clone bound
(docs/shuffle.md)."""
from __future__ import annotations

import argparse
import math
from typing import Any, Callable

import numpy as np

from ..records import guarantee, make_record
from ..related.shuffle_clones import clone_bound_delta, clone_bound_epsilon
from ..shuffle import ShuffledRandomizedResponse
from ._args import add_command, add_json_flag, whole
from ._emit import exp_rounded_up, fmt_from_log, fmt_number, print_json, print_record, print_table


def _run(args: argparse.Namespace) -> int:
    if args.categories > 2:
        return _run_kary(args, args.categories)
    if args.p is not None and (args.known is None or args.known >= args.n - 1):
        raise ValueError("--p is the belief about the users the attacker does not know: it needs --known K < --n - 1 "
                         "(without --known every other input is known, standard shuffle DP)")
    if args.known is not None and args.known < args.n - 1 and args.p is None:
        raise ValueError(f"--known {args.known} < --n - 1 needs --p: the probability that each user the attacker does "
                         "not know holds a 1")
    q = ShuffledRandomizedResponse(n=args.n, eps0=args.eps0, known=args.known, p=args.p)
    q.progress = not args.quiet    # a bar on stderr when it is a terminal (docs/shuffle.md), else nothing
    standard = q.known == q.n - 1
    rows, log_lo, log_up, epsilons = _curve_and_epsilons(q, args, "fmt21")
    attacker = dict(rows=q.n, rows_known=q.known, rows_unknown=q.n - 1 - q.known,
                    belief=None if standard else f"each unknown user's input is 1 with probability p = {q.p:g}",
                    belief_source="none" if standard else "stated_by_steward",
                    text=("any attacker (standard shuffle DP: the supremum over the other users' inputs)" if standard
                          else f"an attacker who knows {q.known} of the other {q.n - 1} users' inputs (the supremum "
                               f"over them); the other {q.n - 1 - q.known} are Bernoulli({q.p:g}) to them"))
    g = guarantee(kind="DP" if standard else "PPK-DP", eps=[r["eps"] for r in rows],
                  delta_mechanism=[r["delta_upper"] for r in rows],
                  text="the shuffled count of randomized responses is (eps, delta_upper) private at each eps listed")
    record = make_record(attacker=attacker, guarantee=g, warnings=[],
                         noise=dict(law="randomized_response", scale=q.flip_probability, scale_name="flip probability",
                                    unit="for each", per="user"))
    if args.json:
        print_json(dict(n=q.n, eps0=q.eps0, known=q.known, p=q.p, curve=rows, epsilons=epsilons, record=record))
        return 0
    who = "standard shuffle DP" if standard else f"an attacker who knows {q.known} of the other {q.n - 1} inputs"
    print(f"{_users(q.n)}, randomized response eps0 = {q.eps0:g} (flip probability {q.flip_probability:.6g}), "
          f"shuffled; {who}")
    _print_tables(rows, log_lo, log_up, epsilons, "FMT21", "exact")
    print_record(record)
    return 0


def _run_kary(args: argparse.Namespace, k: int) -> int:
    """``--categories k >= 3``: k-ary randomized response, shuffled (docs/shuffle.md, "k-ary"): standard shuffle DP
    (a certified bracket) or, with ``--known 0``, the attacker who knows no other value and believes them uniform
    (exact)."""
    if args.p is not None:
        raise ValueError("--p is for binary reports; with --categories >= 3 an attacker who knows no other value "
                         "(--known 0) believes the values uniform")
    if args.known is not None and args.known > args.n - 1:
        raise ValueError(f"known must be <= {args.n - 1}, got {args.known}")
    if args.known not in (None, 0, args.n - 1):
        raise ValueError(f"--known {args.known}: with --categories >= 3 the attacker knows every other value (omit "
                         "--known) or none (--known 0); partial knowledge is not implemented (docs/shuffle.md, k-ary)")
    q = ShuffledRandomizedResponse(n=args.n, eps0=args.eps0, categories=k, known=args.known)
    standard = args.known != 0 or args.n == 1
    # the tighter of the published clone bounds (Feldman, McMillan and Talwar 2023), as the k-ary gap figure
    rows, log_lo, log_up, epsilons = _curve_and_epsilons(q, args, "fmt23")
    attacker = dict(rows=q.n, rows_known=q.n - 1 if standard else 0, rows_unknown=0 if standard else q.n - 1,
                    belief=None if standard else f"each other user's value is uniform over the {k} categories",
                    belief_source="none" if standard else "stated_by_steward",
                    text=("any attacker (standard shuffle DP: the supremum over the other users' values)" if standard
                          else f"an attacker who knows none of the other {q.n - 1} users' values and believes each "
                               f"uniform over {k} categories"))
    g = guarantee(kind="DP" if standard else "PPK-DP", eps=[r["eps"] for r in rows],
                  delta_mechanism=[r["delta_upper"] for r in rows],
                  text=f"the shuffled histogram of {k}-ary randomized responses is (eps, delta_upper) private at each "
                       "eps listed")
    record = make_record(attacker=attacker, guarantee=g, warnings=[],
                         noise=dict(law="k_ary_randomized_response", scale=q.scale, scale_name=q.scale_name,
                                    unit="for each other value", per="user"))
    if args.json:
        print_json(dict(n=q.n, eps0=q.eps0, categories=k, known=attacker["rows_known"], curve=rows,
                        epsilons=epsilons, record=record))
        return 0
    who = "standard shuffle DP" if standard else "an attacker who knows no other value (uniform belief)"
    print(f"{_users(q.n)}, {k}-ary randomized response eps0 = {q.eps0:g} (each other value reported with "
          f"probability {q.scale:.6g}), shuffled; {who}")
    _print_tables(rows, log_lo, log_up, epsilons, "FMT23", "upper")
    print_record(record)
    return 0


def _users(n: int) -> str:
    return f"{n} user" if n == 1 else f"{n} users"


def _clone(bound: Callable[..., float], **kwargs: Any) -> float | None:
    """The clone bound beside ppk's answer, or None where its own search does not take the input (a delta far
    below what its windows resolve, e.g. 1e-300): the column is a comparison, not the answer."""
    try:
        return bound(**kwargs)
    except ValueError:
        return None


def _curve_and_epsilons(q: Any, args: argparse.Namespace, variant: str) -> tuple[list, Any, Any, list]:
    """The bracket at each --eps and the certified eps at each --delta, each beside the clone bound ``variant``."""
    eps = np.array(args.eps, dtype=float)
    log_lo, log_up = q.log_delta_bracket(eps)
    rows = [dict(eps=float(e), delta_lower=math.exp(lo), delta_upper=exp_rounded_up(up),
                 clone_bound=_clone(clone_bound_delta, n=q.n, eps0=q.eps0, eps=float(e), variant=variant))
            for e, lo, up in zip(eps, np.atleast_1d(log_lo), np.atleast_1d(log_up))]
    epsilons = [dict(delta=d, eps=q.epsilon(d),
                     clone_bound=_clone(clone_bound_epsilon, n=q.n, eps0=q.eps0, delta=d, variant=variant))
                for d in args.delta or []]
    return rows, log_lo, log_up, epsilons


def _print_tables(rows: list, log_lo: Any, log_up: Any, epsilons: list, variant: str, ours: str) -> None:
    """The two tables; ``variant`` names the clone bound, ``ours`` what ppk's eps is (exact, or a bracket's upper end)."""
    def clone(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.6g}"
    print_table(["eps", "delta lower", "delta upper", f"clone bound ({variant})"],
                [[fmt_number(r["eps"]), fmt_from_log(lo), fmt_from_log(up), clone(r["clone_bound"])]
                 for r, lo, up in zip(rows, np.atleast_1d(log_lo), np.atleast_1d(log_up))])
    if epsilons:
        print()
        print_table(["delta", "eps (certified)", f"clone bound eps ({variant})", f"clone / {ours}"],
                    [[f"{r['delta']:g}", f"{r['eps']:.6g}", clone(r["clone_bound"]),
                      f"{r['clone_bound'] / r['eps']:.3g}" if r["eps"] > 0 and r["clone_bound"] is not None
                      else "n/a"] for r in epsilons])


_DESCRIPTION = ("Shuffled randomized response: n users each report their bit through randomized response with "
                "local privacy --eps0, and only the count of 1s is published. Prints the exact curve's certified "
                "bracket at each --eps, and at each --delta the certified epsilon, next to the clone bound of "
                "Feldman, McMillan and Talwar (the generic bound peers use). With --known and --p: against an "
                "attacker who knows only some of the other users' inputs (docs/shuffle.md).")


def register(sub: Any) -> None:
    """Add ``shuffle`` to the sub-commands ``sub``."""
    s = add_command(sub, "shuffle", _run, help="the exact curve of shuffled randomized response, vs the clone bound",
                    description=_DESCRIPTION)
    s.add_argument("--n", type=whole, default=10_000, help="users, the challenge user included (default %(default)s)")
    s.add_argument("--eps0", type=float, default=2.0, help="local privacy of each report (default %(default)s)")
    s.add_argument("--known", type=whole, default=None,
                   help="other users' inputs the attacker knows (default: all of them, standard shuffle DP)")
    s.add_argument("--p", type=float, default=None,
                   help="with --known: probability that an unknown user's input is 1")
    s.add_argument("--eps", type=float, nargs="+", default=[0.1, 0.5, 1.0],
                   help="epsilon values of the curve (default %(default)s)")
    s.add_argument("--delta", type=float, nargs="+", default=[1e-6], help="deltas to find epsilon for "
                   "(default %(default)s)")
    s.add_argument("--categories", type=whole, default=2, choices=range(2, 17), metavar="K",
                   help="values each user holds, 2..16 (default 2: binary); K >= 3 is k-ary randomized response, "
                        "whose shuffled histogram is published")
    s.add_argument("--quiet", action="store_true",
                   help="no progress bar (it is shown on stderr only when stderr is a terminal)")
    add_json_flag(s)
