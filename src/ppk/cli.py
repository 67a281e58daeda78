"""The ``ppk`` command line.  ``ppk --help`` lists the commands; every command
explains its options with ``ppk COMMAND --help``."""
from __future__ import annotations

import argparse
import json
import math
import sys

import numpy as np

from .counting import CountingQuery

_DEFAULT = dict(n=100_000, known=50_000, p=0.5)


def _fmt(x: float) -> str:
    return "0" if x == 0 else f"{x:.6g}"


def _fmt_log(log_x: float) -> str:
    """A positive number given by its natural log, readable below the float range."""
    if log_x == -math.inf:
        return "0"
    if log_x > -700:
        return f"{math.exp(log_x):.6g}"
    e10 = log_x / math.log(10)
    exponent = math.floor(e10)
    return f"{10 ** (e10 - exponent):.6g}e{exponent}"


def _print_table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print("  ".join(h.rjust(w) for h, w in zip(header, widths)))
    for r in rows:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)))


def _add_query_args(parser: argparse.ArgumentParser, *, sigma: bool) -> None:
    parser.add_argument("--n", type=int, default=_DEFAULT["n"], help="rows in the database (default %(default)s)")
    parser.add_argument("--known", type=int, default=_DEFAULT["known"],
                        help="rows the attacker knows, < n (default %(default)s)")
    parser.add_argument("--p", type=float, default=_DEFAULT["p"],
                        help="probability that an unknown row is 1 (default %(default)s)")
    if sigma:
        parser.add_argument("--sigma", type=float, default=3.0,
                            help="std of the added Gaussian noise, in counts (default %(default)s)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _cmd_delta(args: argparse.Namespace) -> int:
    q = CountingQuery(n=args.n, known=args.known, p=args.p, sigma=args.sigma)
    eps = np.array(args.eps, dtype=float)
    log_d, log_u = q.log_delta(eps), q.log_delta_upper(eps)
    rows = [dict(eps=float(e), delta=math.exp(ld), log_delta=float(ld), delta_upper=math.exp(lu))
            for e, ld, lu in zip(eps, log_d, log_u)]
    if args.json:
        print(json.dumps(dict(query=dict(n=q.n, known=q.known, p=q.p, sigma=q.sigma, beta=q.beta), curve=rows)))
        return 0
    print(f"{q!r}: N = {q.n_unknown} unknown rows act as natural noise; beta = sigma/n = {q.beta:.3g}")
    _print_table(["eps", "delta", "log(delta)", "delta_upper"],
                 [[_fmt(e), _fmt_log(ld), f"{ld:.10g}", _fmt_log(lu)] for e, ld, lu in zip(eps, log_d, log_u)])
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ppk",
        description="Differential privacy under partial background knowledge: the attacker knows only "
                    "some rows; the rows they do not know act as natural noise.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    d = sub.add_parser("delta", help="the privacy curve delta(eps) of a noisy count",
                       description="Exact delta(eps) of count + N(0, sigma^2) when the attacker knows --known of "
                                   "--n rows and the others are Bernoulli(--p). delta_upper is the certified "
                                   "upper bound that calibration uses.")
    _add_query_args(d, sigma=True)
    d.add_argument("--eps", type=float, nargs="+", default=[0.0, 0.01, 0.05, 0.1, 0.5, 1.0],
                   help="epsilon values (default %(default)s)")
    d.set_defaults(func=_cmd_delta)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return args.func(args)
    except (ValueError, TypeError) as exc:
        print(f"ppk {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
