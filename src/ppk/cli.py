"""The ``ppk`` command line.  ``ppk --help`` lists the commands; every command
explains its options with ``ppk COMMAND --help``."""
from __future__ import annotations

import argparse
import json
import math
import sys

import numpy as np

from . import baselines
from .alg1 import alg1
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
    def line(cells):  # first column left-aligned (labels), numbers right-aligned
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    print(line(header))
    for r in rows:
        print(line(r))


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


def _cmd_calibrate(args: argparse.Namespace) -> int:
    r = alg1(n=args.n, known=args.known, p=args.p, eps=args.eps, delta=args.delta, error=args.error)
    rows = [("PPK-DP, Algorithm 1", r.sigma)]
    rows.append(("analytic Gaussian (Balle-Wang)", baselines.analytic_gaussian_sigma(eps=r.eps, delta=r.delta)))
    rows.append(("Cor. 3.2, corrected", baselines.optimal_gaussian_sigma(eps=r.eps, delta=r.delta)
                 if r.delta <= 0.25 else math.nan))
    rows.append(("classic Gaussian (Thm 3.1)", baselines.classic_gaussian_sigma(eps=r.eps, delta=r.delta)
                 if r.eps < 1 else math.nan))

    def gain(s: float) -> float:
        return math.inf if r.sigma == 0 else s / r.sigma

    if args.json:
        out = dict(n=r.n, known=r.known, p=r.p, eps=r.eps, delta=r.delta, sigma=r.sigma, beta=r.beta,
                   zeta=r.zeta, delta_achieved=r.delta_achieved, evaluations=r.evaluations, reason=r.reason,
                   baselines={name: (None if math.isnan(s) else s) for name, s in rows[1:]},
                   gain_vs_analytic=None if r.sigma == 0 else gain(rows[1][1]))
        print(json.dumps(out))
        return 0
    print(f"Noise for a count over n={r.n} rows, attacker knows {r.known}, unknown rows Bernoulli({r.p}),"
          f" target (eps={r.eps:g}, delta={r.delta:g})")
    print(f"N = {r.n - r.known - 1} unknown rows act as natural noise.  sigma is a standard deviation in counts;"
          " beta = sigma / n.\n")
    _print_table(["method", "sigma", "beta", "baseline/PPK"],
                 [[name, "n/a" if math.isnan(s) else f"{s:.6g}", "n/a" if math.isnan(s) else f"{s / r.n:.4g}",
                   "" if i == 0 or math.isnan(s) else f"{gain(s):.4g}"] for i, (name, s) in enumerate(rows)])
    print(f"\nAlgorithm 1: {r.reason}; {r.evaluations} evaluations; sigma* lies in [sigma - {r.zeta:.2g}, sigma];"
          f" certified delta at sigma = {r.delta_achieved:.6g}")
    if r.eps >= 1:
        print("The classic Gaussian mechanism (Dwork-Roth Thm A.1) is only valid for eps < 1.")
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

    c = sub.add_parser("calibrate", help="least Gaussian noise for (eps, delta)-PPK-DP (Algorithm 1), vs DP",
                       description="Algorithm 1: the smallest sigma (counts) with which the noisy count is "
                                   "(eps, delta)-private against an attacker who knows --known of --n rows, "
                                   "next to the noise plain DP needs.  The sigma printed is certified: its "
                                   "delta was evaluated and is <= --delta.")
    _add_query_args(c, sigma=False)
    c.add_argument("--eps", type=float, default=0.02, help="privacy parameter epsilon > 0 (default %(default)s)")
    c.add_argument("--delta", type=float, default=1e-6, help="privacy parameter delta in (0, 1) (default %(default)s)")
    c.add_argument("--error", type=float, default=None,
                   help="absolute tolerance on sigma in counts (default: relative 1e-10)")
    c.set_defaults(func=_cmd_calibrate)
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
