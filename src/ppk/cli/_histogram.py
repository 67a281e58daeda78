"""``ppk histogram``: a noisy histogram's privacy curve, its calibration, or its release from a CSV column."""
from __future__ import annotations

import argparse
import math
from typing import Any

import numpy as np

from .. import baselines
from .._io import read_categories
from ..calibration import calibrate
from ..histogram import HistogramQuery, floor_probabilities
from ..release import release
from ..records import exact_warning, guarantee, make_record
from ._args import add_command, add_json_flag, add_seed_args, call_seeded, open_delta, release_rng, whole
from ._emit import NOT_PRIVATE, exp_rounded_up, fmt_from_log, fmt_number, print_json, print_record, print_table
from ._ledger import add_ledger_args, gaussian_mechanisms, open_ledger, print_total, settle
from ._ledger import entry as ledger_entry
from ._ledger import source as ledger_source
from ._records import add_commitment_arg, add_large_eps_flag, committed_release, file_input, stated_warning


def _belief(text: str) -> tuple[list[str] | None, list[float]]:
    """--probs: 'P1,P2,...' or 'NAME=P,NAME=P,...' (names the categories of a release)."""
    names: list[str] = []
    probs: list[float] = []
    for part in text.split(","):
        name, sep, value = part.rpartition("=")
        if sep:
            names.append(name.strip())
        try:
            probs.append(float(value))
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be P1,P2,... or NAME=P,NAME=P,..., got {part!r}") from None
    if names and len(names) != len(probs):
        raise argparse.ArgumentTypeError("name every category (NAME=P) or none")
    if len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"names a category twice: {names}")
    return (names or None), probs


def _category_count(text: str) -> int:
    """--categories as a number of categories ('12') or a list of names ('a,b,c')."""
    return int(text) if text.strip().isdigit() else len(text.split(","))


def _histogram_belief(args: argparse.Namespace, categories: int | None) -> tuple[list[float], str]:
    """The probabilities to evaluate and a sentence saying what they assume (with --min-prob: the belief
    that covers every belief above the floor, :func:`ppk.histogram.floor_probabilities`)."""
    if args.probs is not None and args.min_prob is not None:
        raise ValueError("give --probs or --min-prob, not both")
    if args.probs is not None:
        probs = args.probs[1]
        if categories is not None and len(probs) != categories:
            raise ValueError(f"--probs lists {len(probs)} probabilities for {categories} categories")
        return probs, "the attacker's belief --probs " + ",".join(f"{p:g}" for p in probs)
    if args.min_prob is not None:
        if categories is None:
            raise ValueError("--min-prob needs --categories (how many categories there are)")
        probs = floor_probabilities(categories=categories, min_prob=args.min_prob)
        return probs, (f"every belief that gives each of the {categories} categories a probability "
                               f">= {args.min_prob:g}")
    raise ValueError("say what the attacker believes about the unknown rows: --probs P1,P2,... (or NAME=P,...), "
                     "or --min-prob P with --categories")


def _record(args: argparse.Namespace, belief: str, *, sigma: float, standard: bool, g: dict) -> dict:
    """The record of the curve or calibration (not of a release: that is :meth:`HistogramRelease.public`)."""
    N = args.n - args.known - 1
    flag = "--min-prob" if args.min_prob is not None else "--probs"
    attacker = dict(rows=args.n, rows_known=args.known, rows_unknown=N, belief=belief + " (stated by the steward)",
                    belief_source="none" if standard else "stated_by_steward",
                    text=("any attacker (standard DP: no natural noise, or the noise is plain DP's)" if standard
                          else f"an attacker who knows {args.known} of the {args.n} rows exactly, not the "
                               f"challenge row; the other {N} rows are natural noise shared by all bins: {belief}"))
    warnings = []
    if sigma == 0:
        warnings.append(exact_warning("every bin's count would be", args.known))
    if not standard:
        warnings.append(stated_warning(args.known, args.n, flag))
    return make_record(attacker=attacker, guarantee=g, warnings=warnings,
                       noise=dict(law="none" if sigma == 0 else "gaussian", scale=sigma, scale_name="sigma",
                                  unit="counts", per="bin"))


def _run(args: argparse.Namespace) -> int:
    if args.csv is not None:
        return _release(args)
    if args.n is None:
        raise ValueError("--n (rows) is required without --csv")
    names = args.probs[0] if args.probs is not None else None
    k = _category_count(args.categories) if args.categories else (len(names) if names else None)
    probs, belief = _histogram_belief(args, k)
    if args.delta is not None:
        return _calibrate(args, probs, belief)
    return _curve(args, probs, belief)


def _calibrate(args: argparse.Namespace, probs: list[float], belief: str) -> int:
    if len(args.eps) != 1:
        raise ValueError("--delta calibrates for one --eps value")
    cal = calibrate(HistogramQuery(n=args.n, known=args.known, probs=probs, sigma=0.0), eps=args.eps[0],
                    delta=args.delta)
    standard = args.n - args.known - 1 == 0 or cal.scale >= cal.scale_dp
    kind = "DP" if standard else "PPK-DP"
    rec = _record(args, belief, sigma=cal.scale, standard=standard, g=guarantee(
        kind=kind, eps=args.eps[0], delta_mechanism=args.delta,
        text=f"every bin plus N(0, sigma^2) is (eps, delta)-{kind} for the whole histogram (certified delta "
             f"{cal.delta_achieved:.6g} <= delta); a release by ppk adds the samplers' term"))
    if args.json:
        print_json(dict(n=args.n, known=args.known, probs=list(cal.query.probs), eps=args.eps[0], delta=args.delta,
                        sigma=cal.scale, sigma_dp=cal.scale_dp, noise_saved=cal.noise_saved,
                        delta_achieved=cal.delta_achieved, belief=belief, record=rec))
        return 0
    print(f"Noise per bin for a histogram of n={args.n} rows, attacker knows {args.known}; {belief}.")
    print("sigma is a standard deviation in counts, added to every bin.\n")
    print_table(["method", "sigma"], [["ppk (certified upper end)", f"{cal.scale:.6g}"],
                                      ["plain DP (analytic Gaussian, sensitivity sqrt 2)", f"{cal.scale_dp:.6g}"]])
    print(f"\nnoise saved: {100 * cal.noise_saved:.1f}%; certified delta at sigma = {cal.delta_achieved:.6g}")
    print_record(rec)
    return 0


def _curve(args: argparse.Namespace, probs: list[float], belief: str) -> int:
    if args.sigma is None:
        raise ValueError("--sigma (noise per bin, counts) is required for the curve; or give --delta to calibrate")
    h = HistogramQuery(n=args.n, known=args.known, probs=probs, sigma=args.sigma)
    eps = np.array(args.eps, dtype=float)
    lower, upper = h.log_delta_bracket(eps)
    dp = baselines.analytic_gaussian_log_delta(sigma=args.sigma, eps=eps, sensitivity=math.sqrt(2.0))
    standard = args.n - args.known - 1 == 0
    kind = "DP" if standard else "PPK-DP"
    rec = _record(args, belief, sigma=h.sigma, standard=standard, g=guarantee(
        kind=kind, eps=[float(e) for e in eps], delta_mechanism=[exp_rounded_up(up) for up in upper],
        text=f"every bin plus N(0, sigma^2) is (eps, delta_upper)-{kind} at each eps of the curve"))
    if args.json:
        rows = [dict(eps=float(e), delta_lower=math.exp(lo), delta_upper=exp_rounded_up(up), log_delta_upper=float(up),
                     delta_dp=math.exp(d)) for e, lo, up, d in zip(eps, lower, upper, dp)]
        print_json(dict(query=dict(n=h.n, known=h.known, probs=list(h.probs), sigma=h.sigma),
                        exact=h.exact, curve=rows, record=rec))
        return 0
    a, b = h.worst_pair()
    print(f"{h!r}")
    print(f"N = {h.n_unknown} unknown rows are natural noise shared by the {len(h.probs)} bins; {belief}.")
    print(f"The worst pair of categories: #{a} and #{b} (probabilities {h.probs[a]:.4g}, {h.probs[b]:.4g}).")
    print("exact: lower and upper agree (to rounding at sigma = 0, else to the summation's 1e-3)" if h.exact else
          "delta lies between the two ends (upper: M = X_a + X_b revealed; lower: the best single bin)")
    print_table(["eps", "delta_lower", "delta_upper", "plain DP"],
                [[fmt_number(e), fmt_from_log(lo), fmt_from_log(up), fmt_from_log(d)]
                 for e, lo, up, d in zip(eps, lower, upper, dp)])
    print_record(rec)
    return 0


def _release_categories(args: argparse.Namespace) -> list[str]:
    """The public list of categories of a release: --categories, or the names of --probs."""
    names = args.probs[0] if args.probs is not None else None
    if args.categories:
        categories = [c.strip() for c in args.categories.split(",")]
        twice = sorted({c for c in categories if categories.count(c) > 1})
        if twice:   # a second bin of the same name would count nothing and publish a noisy 0
            raise ValueError(f"--categories names {', '.join(map(repr, twice))} more than once")
        if names is not None and names != categories:
            raise ValueError("--probs names other categories than --categories")
        return categories
    if names is not None:
        return names
    raise ValueError("a release needs the public list of categories: --probs NAME=P,... or --categories "
                     "NAME,NAME,... (taking them from the data would reveal which values occur)")


def _release(args: argparse.Namespace) -> int:
    rng = release_rng(args)
    if args.column is None:
        raise ValueError("--csv needs --column (the categorical column to release)")
    if len(args.eps) != 1 or args.delta is None:
        raise ValueError("a release needs one --eps value and --delta")
    if not args.eps[0] > 0:
        raise ValueError(f"eps must be positive (a privacy budget eps > 0), got {args.eps[0]!r}")
    categories = _release_categories(args)
    probs, belief = _histogram_belief(args, len(categories))
    ledger = open_ledger(args)
    # --min-prob: the release takes the floor itself (its covering belief may have a category more than the bins)
    belief_kwargs = dict(min_prob=args.min_prob) if args.min_prob is not None else dict(probs=probs)
    read, out = committed_release(
        args, lambda key: read_categories(args.csv, args.column, categories, key=key),
        lambda data: call_seeded(release, counts=list(data.counts), known=args.known, eps=args.eps[0],
                                 delta=args.delta, rng=rng, allow_large_eps=args.allow_large_eps, **belief_kwargs))
    cal = out.calibration
    public = out.public(categories=categories, input=file_input(read, args.column))
    public["belief"] = belief
    if ledger is not None:
        # plain DP of the histogram: one row moves between two bins, L2 sensitivity sqrt 2
        settle(ledger, ledger_entry(command="histogram", input=ledger_source(args.csv, args.column, read.rows),
                                    guarantee=public["record"]["guarantee"],
                                    statistics=f"histogram of {len(categories)} categories",
                                    mechanisms=gaussian_mechanisms(cal.scale, math.sqrt(2.0))), public)
    if args.json:
        print_json(public)
        return 0
    if out.insecure_for_testing:
        print(NOT_PRIVATE + "\n")
    print(f"released histogram of {args.column!r} " + ("(the exact counts: no noise; see the NOTICE below):"
          if cal.scale == 0 else f"(count + rounded Gaussian noise, sigma = {cal.scale:.6g} counts per bin):"))
    print_table(["category", "value"], [[c, str(v)] for c, v in zip(categories, out.values)])
    if cal.scale == 0:
        print("\nNOTICE: no noise was added -- the values ARE the exact counts.  The unknown rows alone meet "
              f"(eps, delta) against an attacker who knows {args.known} rows; one who knows more is not covered.")
    print(f"\n(eps={args.eps[0]:g}, delta={args.delta:g}) against an attacker who knows {args.known} of "
          f"{read.rows} rows; {belief}.")
    print(f"certified delta at sigma: {cal.delta_achieved:.6g}; plain DP would add sigma = {cal.scale_dp:.6g} "
          f"(noise saved: {100 * cal.noise_saved:.1f}%)")
    print_record(public["record"])
    print_total(public)
    return 0


_DESCRIPTION = ("Every bin of a histogram plus Gaussian noise, against an attacker who knows --known rows and "
                "believes the others fall in the categories with --probs. The unknown rows are natural noise shared "
                "by all bins. Without --csv: the privacy curve's two certified ends (--sigma), or the least sigma "
                "(--delta). With --csv: calibrate and release the noisy histogram of --column (for --probs, or "
                "--min-prob with --categories); on any bad row nothing is released, and the output ends with its "
                "record (the file, with --commitment-key a commitment to it, attacker, guarantee, warnings).")


def register(sub: Any) -> None:
    """Add histogram to the sub-commands ``sub``."""
    hg = add_command(sub, "histogram", _run, description=_DESCRIPTION,
                     help="a noisy histogram (Gaussian noise on every bin): its curve, noise or release")
    hg.add_argument("--probs", type=_belief, default=None,
                    help="the attacker's belief: P1,P2,... or NAME=P,NAME=P,... (a release needs the names)")
    hg.add_argument("--min-prob", type=float, default=None,
                    help="instead of --probs: cover every belief that gives each category at least this probability "
                         "(with --categories; also for a release)")
    hg.add_argument("--categories", default=None,
                    help="NAME,NAME,...: the public list of categories (a release needs it or NAME=P in --probs); "
                         "without --csv also just their number")
    hg.add_argument("--n", type=whole, default=None, help="rows in the database (without --csv)")
    hg.add_argument("--known", type=whole, required=True, help="rows the attacker knows (public), < n")
    hg.add_argument("--sigma", type=float, default=None, help="noise per bin, a standard deviation in counts")
    hg.add_argument("--eps", type=float, nargs="+", default=[0.01, 0.05, 0.1, 0.5, 1.0],
                    help="epsilon values (one with --delta or --csv; default %(default)s)")
    hg.add_argument("--delta", type=open_delta, default=None,
                    help="target delta in (0, 1): calibrate sigma (and release with --csv: the record's total delta, "
                         "samplers included, never exceeds it)")
    hg.add_argument("--csv", default=None, help="CSV file with a header row: release its --column")
    hg.add_argument("--column", default=None, help="the categorical column of --csv")
    add_commitment_arg(hg)
    add_ledger_args(hg)
    add_large_eps_flag(hg)
    add_seed_args(hg)
    add_json_flag(hg)
