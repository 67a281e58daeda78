"""The commands of a noisy count: ``ppk delta`` (alias ``curve``), ``ppk calibrate``, ``ppk alg2`` and
``ppk release``."""
from __future__ import annotations

import argparse
import math
from typing import Any

import numpy as np

from .. import baselines
from .._io import read_binary_column, read_private_key
from ..algorithm1 import alg1
from ..algorithm2 import alg2
from ..counting import CountingQuery
from ..records import alg2_record, exact_warning, guarantee, make_record, public_ledger, release_budget, verify_input
from ..release import release
from ._args import (add_command, add_json_flag, add_query_args, add_seed_args, call_seeded, open_delta, positive_eps,
                    release_rng, whole)
from ._emit import exp_rounded_up, fmt_from_log, fmt_number, print_json, print_ledger, print_record, print_table
from ._ledger import add_ledger_args, gaussian_mechanisms, open_ledger, print_total, settle
from ._ledger import entry as ledger_entry
from ._ledger import source as ledger_source
from ._records import add_commitment_arg, add_large_eps_flag, committed_release, file_input, stated_warning


def _natural_noise_line(n: int, known: int, p: float) -> str:
    N = n - known - 1
    if N == 0:
        return "N = 0: the attacker knows every other row; no natural noise (the Gaussian mechanism's curve)"
    if p in (0.0, 1.0):
        return f"p = {p:g}: every unknown row is {int(p)}, so they hide nothing; no natural noise (the Gaussian " \
               "mechanism's curve)"
    return f"N = {N} unknown rows act as natural noise"


def _count_attacker(n: int, known: int, p: float, stated: bool) -> tuple[dict, bool]:
    """The record's attacker of a count whose unknown rows are Bernoulli(--p), and whether that is plain DP
    (no natural noise: the curve is the Gaussian mechanism's); ``stated``: --p was typed, not ppk's default."""
    N = n - known - 1
    standard = N == 0 or p in (0.0, 1.0)
    source = "stated by the steward (--p)" if stated else "ppk's default, not stated by the steward (give --p)"
    belief = f"each unknown row is 1 with probability p = {p:g}, independently, {source}"
    text = (f"any attacker (standard DP: {_natural_noise_line(n, known, p)})" if standard else
            f"an attacker who knows {known} of the {n} rows exactly, not the challenge row; the other {N} rows "
            f"are natural noise: {belief}")
    return dict(rows=n, rows_known=known, rows_unknown=N, belief=belief,
                belief_source="none" if standard else "stated_by_steward" if stated else "ppk_default", text=text), \
        standard


def _count_record(n: int, known: int, p: float, sigma: float, *, eps: Any, delta_mechanism: Any, text: str,
                  p_stated: bool) -> dict:
    """The record of a noisy count's curve or calibration; ``text`` may name the guarantee's ``{kind}``;
    ``p_stated``: the belief --p was typed (else it is ppk's default, and the record says so)."""
    attacker, standard = _count_attacker(n, known, p, p_stated)
    warnings = []
    if sigma == 0:
        warnings.append(exact_warning("the count would be", known))
    if not standard:
        warnings.append(stated_warning(known, n, "--p", stated=p_stated))
    kind = "DP" if standard else "PPK-DP"
    return make_record(attacker=attacker, guarantee=guarantee(kind=kind, eps=eps, delta_mechanism=delta_mechanism,
                                                              text=text.replace("{kind}", kind)),
                       noise=dict(law="none" if sigma == 0 else "gaussian", scale=sigma, scale_name="sigma",
                                  unit="counts", per="value"), warnings=warnings)


def _run_delta(args: argparse.Namespace) -> int:
    q = CountingQuery(n=args.n, known=args.known, p=args.p, sigma=args.sigma)
    eps = np.array(args.eps, dtype=float)
    log_d, log_u = q.log_delta(eps), q.log_delta_upper(eps)
    rows = [dict(eps=float(e), delta=math.exp(ld), log_delta=float(ld), delta_upper=exp_rounded_up(lu))
            for e, ld, lu in zip(eps, log_d, log_u)]
    record = _count_record(q.n, q.known, q.p, q.sigma, eps=[r["eps"] for r in rows],
                           delta_mechanism=[r["delta_upper"] for r in rows],
                           text="the count plus N(0, sigma^2) is (eps, delta_upper)-{kind} at each eps of the curve",
                           p_stated=getattr(args, "p_stated", False))
    if args.json:
        print_json(dict(query=dict(n=q.n, known=q.known, p=q.p, sigma=q.sigma, beta=q.beta), curve=rows,
                        record=record))
        return 0
    print(f"{q!r}: {_natural_noise_line(q.n, q.known, q.p)}; beta = sigma/n = {q.beta:.3g}")
    print_table(["eps", "delta", "log(delta)", "delta_upper"],
                [[fmt_number(e), fmt_from_log(ld), f"{ld:.10g}", fmt_from_log(lu)]
                 for e, ld, lu in zip(eps, log_d, log_u)])
    if args.plot:
        from ..plotting import plot_privacy_curve
        grid = np.linspace(0.0, max(float(eps.max()), 1e-3), 161)
        plot_privacy_curve(q, eps=grid, path=args.plot)
        print(f"\nplot: {args.plot}  (delta on a log axis, eps from 0 to {grid[-1]:g}, with the DP curve of the "
              "same noise)")
    print_record(record)
    return 0


def _run_calibrate(args: argparse.Namespace) -> int:
    cal = alg1(n=args.n, known=args.known, p=args.p, eps=args.eps, delta=args.delta, error=args.error)
    q, eps, delta = cal.query, cal.eps, cal.delta
    rows = [("PPK-DP, Algorithm 1", cal.scale), ("analytic Gaussian (Balle-Wang)", cal.scale_dp)]
    rows.append(("Cor. 3.2, corrected", baselines.sufficient_gaussian_sigma(eps=eps, delta=delta)
                 if delta <= 0.25 else math.nan))
    rows.append(("classic Gaussian (Thm 3.1)", baselines.classic_gaussian_sigma(eps=eps, delta=delta)
                 if eps < 1 else math.nan))

    def gain(s: float) -> float:
        return math.inf if cal.scale == 0 else s / cal.scale

    record = _count_record(q.n, q.known, q.p, cal.scale, eps=eps, delta_mechanism=delta,
                           text="the count plus N(0, sigma^2) at the sigma found is (eps, delta)-{kind} (certified "
                                f"delta {cal.delta_achieved:.6g} <= delta); a release by ppk adds the samplers' term",
                           p_stated=getattr(args, "p_stated", False))
    if args.json:
        print_json(dict(n=q.n, known=q.known, p=q.p, eps=eps, delta=delta, sigma=cal.scale, beta=q.beta,
                        zeta=cal.zeta, delta_achieved=cal.delta_achieved, evaluations=cal.evaluations,
                        reason=cal.reason, baselines={name: (None if math.isnan(s) else s) for name, s in rows[1:]},
                        gain_vs_analytic=None if cal.scale == 0 else gain(rows[1][1]), record=record))
        return 0
    print(f"Noise for a count over n={q.n} rows, attacker knows {q.known}, unknown rows Bernoulli({q.p}),"
          f" target (eps={eps:g}, delta={delta:g})")
    print(f"{_natural_noise_line(q.n, q.known, q.p)}.  sigma is a standard deviation in counts;"
          " beta = sigma / n.\n")
    print_table(["method", "sigma", "beta", "baseline/PPK"],
                [[name, "n/a" if math.isnan(s) else f"{s:.6g}", "n/a" if math.isnan(s) else f"{s / q.n:.4g}",
                  "" if i == 0 or math.isnan(s) else f"{gain(s):.4g}"] for i, (name, s) in enumerate(rows)])
    print(f"\nAlgorithm 1: {cal.reason}; {cal.evaluations} evaluations; sigma* lies in [sigma - {cal.zeta:.2g}, "
          f"sigma]; certified delta at sigma = {cal.delta_achieved:.6g}")
    if eps >= 1:
        print("The classic Gaussian mechanism (Dwork-Roth Thm A.1) is only valid for eps < 1.")
    print_record(record)
    return 0


def _run_alg2(args: argparse.Namespace) -> int:
    rng = release_rng(args)
    # the ledger's count estimate is itself a release: one draw of the samplers, booked inside --delta
    budget = release_budget(eps=args.eps, delta=args.delta, draws=1, allow_large_eps=args.allow_large_eps)
    r = call_seeded(alg2, count=args.count, n=args.n, known=args.known, eps=args.eps, delta=budget,
                    kappa1=args.kappa1, kappa2=args.kappa2, kappa3=args.kappa3, hoeffding=args.hoeffding, rng=rng,
                    noise=args.noise)
    record = alg2_record(r, draws=1, value_published=False)
    if record["guarantee"]["delta"] > args.delta:   # kappas fixed by hand that leave the samplers no room
        raise ValueError(f"--kappa1 + --kappa2 + --kappa3 must leave room for the samplers' term: at most {budget!r}"
                         " (give one of --kappa2, --kappa3 and ppk splits the rest)")
    if args.json:
        print_json({**public_ledger(r), "record": record})
    else:
        print_ledger(r.ledger(), record)
    return 0


def _run_release(args: argparse.Namespace) -> int:
    rng = release_rng(args)
    ledger = open_ledger(args)
    read, out = committed_release(
        args, lambda key: read_binary_column(args.csv, args.column, key=key),
        lambda data: call_seeded(release, count=data.counts[1], n=data.rows, known=args.known, eps=args.eps,
                                 delta=args.delta, kappa1=args.kappa1, kappa2=args.kappa2, kappa3=args.kappa3,
                                 hoeffding=args.hoeffding, rng=rng, noise=args.noise,
                                 allow_large_eps=args.allow_large_eps))
    public = out.public(input=file_input(read, args.column))
    if ledger is not None:
        cal = out.calibration
        estimate = [dict(kind="pure", eps=cal.eps_estimate)]
        read_from = ledger_source(args.csv, args.column, read.rows)
        settle(ledger, ledger_entry(command="release", input=read_from, guarantee=public["record"]["guarantee"],
                                    statistics="count of 1s",
                                    mechanisms=estimate + gaussian_mechanisms(cal.sigma, 1.0, law=cal.law)),
               public, refused_entry=ledger_entry(command="release (refused by the ledger: its estimate only)",
                                                  input=read_from,
                                                  guarantee=dict(eps=cal.eps_estimate, delta=0.0, delta_sampler=0.0),
                                                  statistics="the count estimate of Algorithm 2",
                                                  mechanisms=estimate))
    if args.json:
        print_json(public)
    else:
        print_ledger(out.calibration.ledger(), public["record"], value=out.value)
        print_total(public)
    return 0


def _run_verify_input(args: argparse.Namespace) -> int:
    ok = verify_input(args.csv, key=read_private_key(args.key), commitment=args.commitment)
    print(f"{args.csv}: {'matches' if ok else 'does NOT match'} the commitment {args.commitment}")
    return 0 if ok else 1


def _add_alg2_args(parser: argparse.ArgumentParser) -> None:
    """The options of Algorithm 2, shared by ``ppk alg2`` and ``ppk release``."""
    parser.add_argument("--known", type=whole, required=True, help="rows the attacker knows (public), < n")
    parser.add_argument("--eps", type=positive_eps, required=True,
                        help="total epsilon > 0 (at most 20 without --allow-large-eps); half estimates the bias")
    parser.add_argument("--delta", type=open_delta, required=True,
                        help="total delta in (0, 1): kappa1 + kappa2 + kappa3 plus the samplers' term, never more")
    parser.add_argument("--kappa1", type=float, default=0.0, help="background-knowledge exclusion (default 0)")
    parser.add_argument("--kappa2", type=float, default=None,
                        help="failure probability of the bias interval (default: half of delta - kappa1)")
    parser.add_argument("--kappa3", type=float, default=None,
                        help="discrete Laplace truncation + Algorithm 1 budget (default: the rest)")
    parser.add_argument("--noise", choices=["gaussian", "discrete_gaussian", "discrete_laplace"], default="gaussian",
                        help="the law added to the count: the Gaussian (released rounded) or an exact discrete law, "
                             "calibrated for it (default %(default)s)")
    parser.add_argument("--hoeffding", choices=["additive", "kl"], default="additive",
                        help="bias interval: closed-form additive Hoeffding or Chernoff-KL (default %(default)s)")
    add_seed_args(parser, default_source=" (default: the operating system's secure source)")
    add_large_eps_flag(parser)
    add_json_flag(parser)


_DELTA = ("Exact delta(eps) of count + N(0, sigma^2) when the attacker knows --known of --n rows and the others are "
          "Bernoulli(--p). delta_upper is the certified upper bound that calibration uses.")
_CALIBRATE = ("Algorithm 1: the smallest sigma (counts) with which the noisy count is (eps, delta)-private against an "
              "attacker who knows --known of --n rows, next to the noise plain DP needs.  The sigma printed is "
              "certified: its delta was evaluated and is <= --delta.")
_ALG2 = ("Algorithm 2: estimate the bias privately (eps/2, discrete Laplace), bound it (Hoeffding), and run Algorithm 1 over "
         "the supported biases with eps/2. Prints the public ledger (no discrete Laplace draw, nothing that reveals the "
         "count).")
_RELEASE = ("Calibrate with Algorithm 2 and release count + noise (rounded Gaussian by default, or a discrete "
            "Gaussian or Laplace: --noise). The CSV is read strictly: one record per line, quotes only around whole "
            "fields, the header's number of fields, every cell exactly 0, 1, 0.0, 1.0, true or false; on any bad row "
            "nothing is released. The output ends with its record: the file (and, with --commitment-key, a "
            "commitment to its bytes whose key only the steward keeps), the attacker, the guarantee (its total "
            "delta never above --delta), the noise and every warning. eps above 20 is refused without "
            "--allow-large-eps.")
_VERIFY = ("For a reviewer: check that a CSV file is the one a release's record commits to (input.commitment), "
           "with the key the steward kept (--commitment-key). Exit 0 when it matches, 1 when it does not.")


def register(sub: Any) -> None:
    """Add delta (curve), calibrate, alg2 and release to the sub-commands ``sub``."""
    d = add_command(sub, "delta", _run_delta, aliases=["curve"], help="the privacy curve delta(eps) of a noisy count",
                    description=_DELTA)
    add_query_args(d, sigma=True)
    d.add_argument("--eps", type=float, nargs="+", default=[0.0, 0.01, 0.05, 0.1, 0.5, 1.0],
                   help="epsilon values (default %(default)s)")
    d.add_argument("--plot", metavar="FILE", default=None,
                   help="also draw delta(eps) from 0 to the largest --eps, with the DP curve of the same noise, "
                        "into FILE (PNG; needs matplotlib)")

    c = add_command(sub, "calibrate", _run_calibrate,
                    help="least Gaussian noise for (eps, delta)-PPK-DP (Algorithm 1), vs DP", description=_CALIBRATE)
    add_query_args(c, sigma=False)
    c.add_argument("--eps", type=float, default=0.02, help="privacy parameter epsilon > 0 (default %(default)s)")
    c.add_argument("--delta", type=float, default=1e-6, help="privacy parameter delta in (0, 1) (default %(default)s)")
    c.add_argument("--error", type=float, default=None,
                   help="absolute tolerance on sigma in counts (default: relative 1e-10)")

    a = add_command(sub, "alg2", _run_alg2, help="private end-to-end calibration from a count (Algorithm 2)",
                    description=_ALG2)
    a.add_argument("--count", type=whole, required=True, help="number of 1s (kept private)")
    a.add_argument("--n", type=whole, required=True, help="number of rows")
    _add_alg2_args(a)

    r = add_command(sub, "release", _run_release, help="release a noisy count of a 0/1 CSV column",
                    description=_RELEASE)
    r.add_argument("--csv", required=True, help="CSV file with a header row")
    r.add_argument("--column", required=True, help="name of the 0/1 column")
    add_commitment_arg(r)
    add_ledger_args(r)
    _add_alg2_args(r)

    v = add_command(sub, "verify-input", _run_verify_input, description=_VERIFY,
                    help="check a CSV file against a release record's input commitment (for a reviewer)")
    v.add_argument("--csv", required=True, help="the CSV file to check")
    v.add_argument("--key", required=True, metavar="KEYFILE", help="the key file the steward wrote (--commitment-key)")
    v.add_argument("--commitment", required=True, metavar="HEX", help="the record's input.commitment.value")
