"""The ``ppk`` command line.  ``ppk --help`` lists the commands; every command
explains its options with ``ppk COMMAND --help``."""
from __future__ import annotations

import argparse
import math
import os
import re
import signal
import sys
import warnings

import numpy as np

from . import __version__, baselines
from ._io import ColumnRead, read_binary_column, read_categories, strict_json
from ._random import InsecureRandomnessWarning
from .algorithm1 import alg1
from .algorithm2 import alg2
from .release import alg2_record, exact_warning, guarantee, make_record, ppk_warning, release
from .counting import CountingQuery
from .histogram import HistogramQuery, calibrate_histogram, floor_probabilities, release_histogram

_DEFAULT = dict(n=100_000, known=50_000, p=0.5)


def _fmt(x: float) -> str:
    return "0" if x == 0 else f"{x:.6g}"


def _up(log_x: float) -> float:
    """A delta given by its log, as a float that is never below it: exp rounded up, so a delta below the
    float range is the least positive float, not 0 (which would under-report it)."""
    return 0.0 if log_x == -math.inf else math.nextafter(math.exp(log_x), math.inf) if log_x < 0 else 1.0


def _fmt_log(log_x: float) -> str:
    """A positive number given by its natural log, readable below the float range."""
    if log_x == -math.inf:
        return "0"
    if log_x > -700:
        return f"{math.exp(log_x):.6g}"
    if log_x < -1e15:          # the decimal exponent would have more digits than the mantissa is worth
        return f"exp({log_x:.6g})"
    e10 = log_x / math.log(10)
    exponent = math.floor(e10)
    return f"{10 ** (e10 - exponent):.6g}e{exponent}"


def _print_table(header: list[str] | None, rows: list[list[str]]) -> None:
    ncol = len(rows[0])
    widths = [max(len(header[i]) if header else 0, *(len(r[i]) for r in rows)) for i in range(ncol)]
    def line(cells):  # first column left-aligned (labels), numbers right-aligned
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    if header:
        print(line(header))
    for r in rows:
        print(line(r))


def _whole(text: str) -> int:
    """An integer flag: '1000', '1e6' and '1_000_000' all work (an integral value is required)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if not math.isfinite(value) or value != math.floor(value) or abs(value) > 2.0**63:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}")
    return int(value)


def _positive_whole(text: str) -> int:
    value = _whole(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text!r}")
    return value


def _natural_noise_line(n: int, known: int, p: float) -> str:
    N = n - known - 1
    if N == 0:
        return "N = 0: the attacker knows every other row; no natural noise (the Gaussian mechanism's curve)"
    if p in (0.0, 1.0):
        return f"p = {p:g}: every unknown row is {int(p)}, so they hide nothing; no natural noise (the Gaussian " \
               "mechanism's curve)"
    return f"N = {N} unknown rows act as natural noise"


def _input(read: ColumnRead, column: str) -> dict:
    """The record's ``input``: the file as named on the command line, its SHA-256, the column, the rows."""
    return dict(file=read.path, sha256=read.sha256, column=column, rows=read.rows)


def _count_attacker(n: int, known: int, p: float) -> tuple[dict, bool]:
    """The record's attacker of a count whose unknown rows are Bernoulli(--p), and whether that is plain DP
    (no natural noise: the curve is the Gaussian mechanism's)."""
    N = n - known - 1
    standard = N == 0 or p in (0.0, 1.0)
    belief = f"each unknown row is 1 with probability p = {p:g}, independently, stated by the steward (--p)"
    text = (f"any attacker (standard DP: {_natural_noise_line(n, known, p)})" if standard else
            f"an attacker who knows {known} of the {n} rows exactly, not the challenge row; the other {N} rows "
            f"are natural noise: {belief}")
    return dict(rows=n, rows_known=known, rows_unknown=N, belief=belief,
                belief_source="none" if standard else "stated_by_steward", text=text), standard


def _stated_warning(known: int, n: int, flag: str) -> str:
    return ppk_warning(known, n, f"as stated with {flag}, not estimated from the data").replace(
        "NOT STANDARD DP:", "STATED BELIEF, NOT STANDARD DP:")


def _print_record(record: dict) -> None:
    """The record in words, after a table: what a reviewer needs to check the output."""
    print(f"\nrecord ({record['format']}): ppk {record['ppk_version']}, {record['created_utc']} (UTC)")
    source = record["input"]
    print(f"input: {source['file']}, SHA-256 {source['sha256']}, column {source['column']!r}, {source['rows']} rows"
          if source else "input: no file (computed from the parameters given)")
    if record["attacker"] is not None:
        print(f"attacker: {record['attacker']['text']}")
    g = record["guarantee"]
    if g is not None:
        if isinstance(g.get("eps"), (int, float)):
            print(f"guarantee: {g['kind']}, eps = {g['eps']:g}, delta = {g['delta']:.6g} "
                  f"(mechanism {g['delta_mechanism']:.6g} + samplers {g['delta_sampler']:.3g}): {g['text']}")
        else:
            print(f"guarantee: {g['kind']}: {g['text']}")
    noise = record["noise"]
    if noise is not None:
        scale = "" if noise["scale"] is None else f" = {noise['scale']:.6g} {noise['unit']}"
        print("noise: none: exact values" if noise["law"] == "none" else
              f"noise: {noise['law'].replace('_', ' ')}, {noise['scale_name']}{scale} per {noise['per']}")
    for w in record["warnings"]:
        print(f"WARNING: {w}")
    if not record["warnings"]:
        print("warnings: none")


def _add_query_args(parser: argparse.ArgumentParser, *, sigma: bool) -> None:
    parser.add_argument("--n", type=_whole, default=_DEFAULT["n"], help="rows in the database (default %(default)s)")
    parser.add_argument("--known", type=_whole, default=_DEFAULT["known"],
                        help="rows the attacker knows, < n (default %(default)s)")
    parser.add_argument("--p", type=float, default=_DEFAULT["p"],
                        help="probability that an unknown row is 1 (default %(default)s)")
    if sigma:
        parser.add_argument("--sigma", type=float, default=3.0,
                            help="std of the added Gaussian noise, in counts (default %(default)s)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _count_record(n: int, known: int, p: float, sigma: float, *, eps, delta_mechanism, text: str) -> dict:
    """The record of a noisy count's curve or calibration; ``text`` may name the guarantee's ``{kind}``."""
    attacker, standard = _count_attacker(n, known, p)
    warnings = []
    if sigma == 0:
        warnings.append(exact_warning("the count would be", known))
    if not standard:
        warnings.append(_stated_warning(known, n, "--p"))
    kind = "DP" if standard else "PPK-DP"
    return make_record(attacker=attacker, guarantee=guarantee(kind=kind, eps=eps, delta_mechanism=delta_mechanism,
                                                              text=text.replace("{kind}", kind)),
                       noise=dict(law="none" if sigma == 0 else "gaussian", scale=sigma, scale_name="sigma",
                                  unit="counts", per="value"), warnings=warnings)


def _cmd_delta(args: argparse.Namespace) -> int:
    q = CountingQuery(n=args.n, known=args.known, p=args.p, sigma=args.sigma)
    eps = np.array(args.eps, dtype=float)
    log_d, log_u = q.log_delta(eps), q.log_delta_upper(eps)
    rows = [dict(eps=float(e), delta=math.exp(ld), log_delta=float(ld), delta_upper=_up(lu))
            for e, ld, lu in zip(eps, log_d, log_u)]
    record = _count_record(q.n, q.known, q.p, q.sigma, eps=[r["eps"] for r in rows],
                           delta_mechanism=[r["delta_upper"] for r in rows],
                           text="the count plus N(0, sigma^2) is (eps, delta_upper)-{kind} at each eps of the curve")
    if args.json:
        print(strict_json(dict(query=dict(n=q.n, known=q.known, p=q.p, sigma=q.sigma, beta=q.beta), curve=rows,
                               record=record)))
        return 0
    print(f"{q!r}: {_natural_noise_line(q.n, q.known, q.p)}; beta = sigma/n = {q.beta:.3g}")
    _print_table(["eps", "delta", "log(delta)", "delta_upper"],
                 [[_fmt(e), _fmt_log(ld), f"{ld:.10g}", _fmt_log(lu)] for e, ld, lu in zip(eps, log_d, log_u)])
    if args.plot:
        from .plotting import plot_privacy_curve
        grid = np.linspace(0.0, max(float(eps.max()), 1e-3), 161)
        plot_privacy_curve(q, eps=grid, path=args.plot)
        print(f"\nplot: {args.plot}  (delta on a log axis, eps from 0 to {grid[-1]:g}, with the DP curve of the "
              "same noise)")
    _print_record(record)
    return 0


def _cmd_calibrate(args: argparse.Namespace) -> int:
    r = alg1(n=args.n, known=args.known, p=args.p, eps=args.eps, delta=args.delta, error=args.error)
    rows = [("PPK-DP, Algorithm 1", r.sigma)]
    rows.append(("analytic Gaussian (Balle-Wang)", baselines.analytic_gaussian_sigma(eps=r.eps, delta=r.delta)))
    rows.append(("Cor. 3.2, corrected", baselines.sufficient_gaussian_sigma(eps=r.eps, delta=r.delta)
                 if r.delta <= 0.25 else math.nan))
    rows.append(("classic Gaussian (Thm 3.1)", baselines.classic_gaussian_sigma(eps=r.eps, delta=r.delta)
                 if r.eps < 1 else math.nan))

    def gain(s: float) -> float:
        return math.inf if r.sigma == 0 else s / r.sigma

    record = _count_record(r.n, r.known, r.p, r.sigma, eps=r.eps, delta_mechanism=r.delta,
                           text="the count plus N(0, sigma^2) at the sigma found is (eps, delta)-{kind} (certified "
                                f"delta {r.delta_achieved:.6g} <= delta); a release by ppk adds the samplers' term")
    if args.json:
        out = dict(n=r.n, known=r.known, p=r.p, eps=r.eps, delta=r.delta, sigma=r.sigma, beta=r.beta,
                   zeta=r.zeta, delta_achieved=r.delta_achieved, evaluations=r.evaluations, reason=r.reason,
                   baselines={name: (None if math.isnan(s) else s) for name, s in rows[1:]},
                   gain_vs_analytic=None if r.sigma == 0 else gain(rows[1][1]), record=record)
        print(strict_json(out))
        return 0
    print(f"Noise for a count over n={r.n} rows, attacker knows {r.known}, unknown rows Bernoulli({r.p}),"
          f" target (eps={r.eps:g}, delta={r.delta:g})")
    print(f"{_natural_noise_line(r.n, r.known, r.p)}.  sigma is a standard deviation in counts;"
          " beta = sigma / n.\n")
    _print_table(["method", "sigma", "beta", "baseline/PPK"],
                 [[name, "n/a" if math.isnan(s) else f"{s:.6g}", "n/a" if math.isnan(s) else f"{s / r.n:.4g}",
                   "" if i == 0 or math.isnan(s) else f"{gain(s):.4g}"] for i, (name, s) in enumerate(rows)])
    print(f"\nAlgorithm 1: {r.reason}; {r.evaluations} evaluations; sigma* lies in [sigma - {r.zeta:.2g}, sigma];"
          f" certified delta at sigma = {r.delta_achieved:.6g}")
    if r.eps >= 1:
        print("The classic Gaussian mechanism (Dwork-Roth Thm A.1) is only valid for eps < 1.")
    _print_record(record)
    return 0


def _print_ledger(ledger: dict, record: dict, value: int | None = None) -> None:
    parts = ledger["delta_parts"]
    if ledger["insecure_for_testing"]:
        print(_NOT_PRIVATE + "\n")
    if value is not None:
        law = {"gaussian": "rounded Gaussian noise, sigma", "discrete_gaussian": "discrete Gaussian noise, sigma",
               "discrete_laplace": "discrete Laplace noise, scale"}[ledger["noise_law"]]
        print(f"released value: {value}   (count + {law} = {ledger['sigma']:.6g} counts)\n")
        if ledger["sigma"] == 0:
            print(_EXACT_COUNT + "\n")
    print(f"Algorithm 2 on n={ledger['n']} rows, attacker knows {ledger['known']};"
          f" budget eps={ledger['eps']:g}, delta={ledger['delta']:g}")
    rows = [
        ["branch", ledger["branch"]],
        ["added noise", ledger["noise_law"]],
        ["sigma / scale (counts)", f"{ledger['sigma']:.6g}"],
        ["beta = sigma/n", f"{ledger['beta']:.4g}"],
        ["DP baseline sigma / scale (eps/2, delta)", f"{ledger['sigma_dp']:.6g}"],
        ["eps for the bias estimate / noise", f"{ledger['eps_estimate']:g} / {ledger['eps_noise']:g}"],
        ["count estimate (eps/2-DP, discrete Laplace)", str(ledger["count_estimate"])],
        ["bias estimate = count estimate / n", f"{ledger['bias_estimate']:.6g}"],
        ["supported bias [p_lo, p_hi]", "n/a (fallback)" if ledger["branch"] == "fallback"
         else f"[{ledger['p_lo']:.6g}, {ledger['p_hi']:.6g}]"],
        ["Hoeffding / t / tau", f"{ledger['hoeffding']} / {ledger['t']:.4g} / "
         + (f"{ledger['tau']:.4g}" if math.isfinite(ledger["tau"]) else "n/a")],
        ["delta = k1 + k2 + k4 + T_L", " + ".join(f"{parts[k]:.3g}" for k in ("kappa1", "kappa2", "kappa4",
                                                                           "truncation_delta"))],
    ]
    _print_table(None, rows)
    if ledger["branch"] == "fallback":
        print("\nfallback: the Laplace estimate was unusable or the truncation term exceeded kappa3;"
              " the DP baseline is used.")
    _print_record(record)


def _alg2_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--known", type=_whole, required=True, help="rows the attacker knows (public), < n")
    parser.add_argument("--eps", type=float, required=True, help="total epsilon; half estimates the bias")
    parser.add_argument("--delta", type=float, required=True, help="total delta = kappa1 + kappa2 + kappa3")
    parser.add_argument("--kappa1", type=float, default=0.0, help="background-knowledge exclusion (default 0)")
    parser.add_argument("--kappa2", type=float, default=None,
                        help="failure probability of the bias interval (default: half of delta - kappa1)")
    parser.add_argument("--kappa3", type=float, default=None,
                        help="Laplace truncation + Algorithm 1 budget (default: the rest)")
    parser.add_argument("--noise", choices=["gaussian", "discrete_gaussian", "discrete_laplace"], default="gaussian",
                        help="the law added to the count: the Gaussian (released rounded) or an exact discrete law, "
                             "calibrated for it (default %(default)s)")
    parser.add_argument("--hoeffding", choices=["additive", "kl"], default="additive",
                        help="bias interval: closed-form additive Hoeffding or Chernoff-KL (default %(default)s)")
    parser.add_argument("--seed", type=_seed, default=None,
                        help="reproducible randomness, for tests only: NOT private, so it needs "
                             "--insecure-for-testing (default: the operating system's secure source)")
    parser.add_argument("--insecure-for-testing", action="store_true",
                        help="allow --seed; every output is then marked as not private")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


_NOT_PRIVATE = ("NOT A PRIVATE RELEASE: seeded randomness (--insecure-for-testing); anyone who guesses the seed "
                "can remove the noise.")


_EXACT_COUNT = ("NOTICE: no noise was added -- the released value IS the exact count.  The unknown rows alone "
                "(natural noise) meet (eps, delta) against an attacker who knows the stated number of rows; an "
                "attacker who knows more rows is not covered.")


def _seed(text: str) -> int:
    """A seed: a non-negative integer."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}")
    return value


def _release_rng(args: argparse.Namespace):
    """The rng argument of a release command: refuses --seed without --insecure-for-testing."""
    if args.seed is not None and not args.insecure_for_testing:
        raise ValueError(f"--seed {args.seed} makes the output reproducible and therefore NOT private; "
                         "add --insecure-for-testing to use it for tests")
    return args.seed


def _seeded_call(fn, **kwargs):
    """Run a release with the Python warning silenced: the CLI marks seeded output itself."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InsecureRandomnessWarning)
        return fn(**kwargs)


def _cmd_alg2(args: argparse.Namespace) -> int:
    rng = _release_rng(args)
    r = _seeded_call(alg2, count=args.count, n=args.n, known=args.known, eps=args.eps, delta=args.delta,
                     kappa1=args.kappa1, kappa2=args.kappa2, kappa3=args.kappa3, hoeffding=args.hoeffding, rng=rng,
                     noise=args.noise)
    # the ledger's count estimate is itself a release: one draw of the samplers
    record = alg2_record(r, draws=1, value_published=False)
    if args.json:
        print(strict_json({**r.ledger(), "record": record}))
    else:
        _print_ledger(r.ledger(), record)
    return 0


def _cmd_release(args: argparse.Namespace) -> int:
    rng = _release_rng(args)
    read = read_binary_column(args.csv, args.column)
    out = _seeded_call(release, count=read.counts[1], n=read.rows, known=args.known, eps=args.eps, delta=args.delta,
                       kappa1=args.kappa1, kappa2=args.kappa2, kappa3=args.kappa3, hoeffding=args.hoeffding,
                       rng=rng, noise=args.noise)
    public = out.public(input=_input(read, args.column))
    if args.json:
        print(strict_json(public))
    else:
        _print_ledger(out.calibration.ledger(), public["record"], value=out.value)
    return 0


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


def _cmd_histogram(args: argparse.Namespace) -> int:
    if args.csv is not None:
        return _histogram_release(args)
    if args.n is None:
        raise ValueError("--n (rows) is required without --csv")
    names = args.probs[0] if args.probs is not None else None
    k = _category_count(args.categories) if args.categories else (len(names) if names else None)
    probs, belief = _histogram_belief(args, k)
    flag = "--min-prob" if args.min_prob is not None else "--probs"
    N = args.n - args.known - 1

    def record(*, sigma: float, standard: bool, g: dict) -> dict:
        attacker = dict(rows=args.n, rows_known=args.known, rows_unknown=N, belief=belief + " (stated by the steward)",
                        belief_source="none" if standard else "stated_by_steward",
                        text=("any attacker (standard DP: no natural noise, or the noise is plain DP's)" if standard
                              else f"an attacker who knows {args.known} of the {args.n} rows exactly, not the "
                                   f"challenge row; the other {N} rows are natural noise shared by all bins: {belief}"))
        warnings = []
        if sigma == 0:
            warnings.append(exact_warning("every bin's count would be", args.known))
        if not standard:
            warnings.append(_stated_warning(args.known, args.n, flag))
        return make_record(attacker=attacker, guarantee=g, warnings=warnings,
                           noise=dict(law="none" if sigma == 0 else "gaussian", scale=sigma, scale_name="sigma",
                                      unit="counts", per="bin"))

    if args.delta is not None:
        if len(args.eps) != 1:
            raise ValueError("--delta calibrates for one --eps value")
        cal = calibrate_histogram(n=args.n, known=args.known, probs=probs, eps=args.eps[0], delta=args.delta)
        standard = N == 0 or cal.sigma >= cal.sigma_dp
        kind = "DP" if standard else "PPK-DP"
        rec = record(sigma=cal.sigma, standard=standard, g=guarantee(
            kind=kind, eps=args.eps[0], delta_mechanism=args.delta,
            text=f"every bin plus N(0, sigma^2) is (eps, delta)-{kind} for the whole histogram (certified delta "
                 f"{cal.delta_achieved:.6g} <= delta); a release by ppk adds the samplers' term"))
        out = dict(n=args.n, known=args.known, probs=list(cal.query.probs), eps=args.eps[0], delta=args.delta,
                   sigma=cal.sigma, sigma_dp=cal.sigma_dp, noise_saved=cal.noise_saved,
                   delta_achieved=cal.delta_achieved, belief=belief, record=rec)
        if args.json:
            print(strict_json(out))
            return 0
        print(f"Noise per bin for a histogram of n={args.n} rows, attacker knows {args.known}; {belief}.")
        print("sigma is a standard deviation in counts, added to every bin.\n")
        _print_table(["method", "sigma"], [["ppk (certified upper end)", f"{cal.sigma:.6g}"],
                                           ["plain DP (analytic Gaussian, sensitivity sqrt 2)", f"{cal.sigma_dp:.6g}"]])
        print(f"\nnoise saved: {100 * cal.noise_saved:.1f}%; certified delta at sigma = {cal.delta_achieved:.6g}")
        _print_record(rec)
        return 0
    if args.sigma is None:
        raise ValueError("--sigma (noise per bin, counts) is required for the curve; or give --delta to calibrate")
    h = HistogramQuery(n=args.n, known=args.known, probs=probs, sigma=args.sigma)
    eps = np.array(args.eps, dtype=float)
    lower, upper = h.log_delta_bracket(eps)
    dp = baselines.analytic_gaussian_log_delta(sigma=args.sigma, eps=eps, sensitivity=math.sqrt(2.0))
    standard = N == 0
    kind = "DP" if standard else "PPK-DP"
    rec = record(sigma=h.sigma, standard=standard, g=guarantee(
        kind=kind, eps=[float(e) for e in eps], delta_mechanism=[_up(up) for up in upper],
        text=f"every bin plus N(0, sigma^2) is (eps, delta_upper)-{kind} at each eps of the curve"))
    if args.json:
        rows = [dict(eps=float(e), delta_lower=math.exp(lo), delta_upper=_up(up), log_delta_upper=float(up),
                     delta_dp=math.exp(d)) for e, lo, up, d in zip(eps, lower, upper, dp)]
        print(strict_json(dict(query=dict(n=h.n, known=h.known, probs=list(h.probs), sigma=h.sigma),
                               exact=h.exact, curve=rows, record=rec)))
        return 0
    a, b = h.worst_pair()
    print(f"{h!r}")
    print(f"N = {h.n_unknown} unknown rows are natural noise shared by the {len(h.probs)} bins; {belief}.")
    print(f"The worst pair of categories: #{a} and #{b} (probabilities {h.probs[a]:.4g}, {h.probs[b]:.4g}).")
    print("exact: lower and upper agree (to rounding at sigma = 0, else to the summation's 1e-3)" if h.exact else
          "delta lies between the two ends (upper: M = X_a + X_b revealed; lower: the best single bin)")
    _print_table(["eps", "delta_lower", "delta_upper", "plain DP"],
                 [[_fmt(e), _fmt_log(lo), _fmt_log(up), _fmt_log(d)] for e, lo, up, d in zip(eps, lower, upper, dp)])
    _print_record(rec)
    return 0


def _histogram_release(args: argparse.Namespace) -> int:
    rng = _release_rng(args)
    if args.column is None:
        raise ValueError("--csv needs --column (the categorical column to release)")
    if len(args.eps) != 1 or args.delta is None:
        raise ValueError("a release needs one --eps value and --delta")
    names = args.probs[0] if args.probs is not None else None
    if args.categories:
        categories = [c.strip() for c in args.categories.split(",")]
        twice = sorted({c for c in categories if categories.count(c) > 1})
        if twice:   # a second bin of the same name would count nothing and publish a noisy 0
            raise ValueError(f"--categories names {', '.join(map(repr, twice))} more than once")
        if names is not None and names != categories:
            raise ValueError("--probs names other categories than --categories")
    elif names is not None:
        categories = names
    else:
        raise ValueError("a release needs the public list of categories: --probs NAME=P,... or --categories "
                         "NAME,NAME,... (taking them from the data would reveal which values occur)")
    probs, belief = _histogram_belief(args, len(categories))
    read = read_categories(args.csv, args.column, categories)
    # --min-prob: the release takes the floor itself (its covering belief may have a category more than the bins)
    belief_kwargs = dict(min_prob=args.min_prob) if args.min_prob is not None else dict(probs=probs)
    out = _seeded_call(release_histogram, counts=list(read.counts), known=args.known, eps=args.eps[0],
                       delta=args.delta, rng=rng, **belief_kwargs)
    cal = out.calibration
    public = out.public(categories=categories, input=_input(read, args.column))
    public["belief"] = belief
    if args.json:
        print(strict_json(public))
        return 0
    if out.insecure_for_testing:
        print(_NOT_PRIVATE + "\n")
    print(f"released histogram of {args.column!r} (count + rounded Gaussian noise, sigma = {cal.sigma:.6g} counts "
          "per bin):")
    _print_table(["category", "value"], [[c, str(v)] for c, v in zip(categories, out.values)])
    if cal.sigma == 0:
        print("\nNOTICE: no noise was added -- the values ARE the exact counts.  The unknown rows alone meet "
              f"(eps, delta) against an attacker who knows {args.known} rows; one who knows more is not covered.")
    print(f"\n(eps={args.eps[0]:g}, delta={args.delta:g}) against an attacker who knows {args.known} of "
          f"{read.rows} rows; {belief}.")
    print(f"certified delta at sigma: {cal.delta_achieved:.6g}; plain DP would add sigma = {cal.sigma_dp:.6g} "
          f"(noise saved: {100 * cal.noise_saved:.1f}%)")
    _print_record(public["record"])
    return 0


def _raise_keyboard_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _dask_client(address: str):
    """A dask.distributed client connected to ``address`` (errors in --scheduler's terms)."""
    try:
        from distributed import Client
    except ImportError:
        raise ValueError("--scheduler needs dask.distributed: pip install 'ppk[dask]'") from None
    try:
        return Client(address, timeout="5s")
    except (OSError, TimeoutError) as exc:
        raise ValueError(f"--scheduler {address}: no dask scheduler answered there ({exc}); start one with "
                         "`dask scheduler` and workers with `dask worker ADDRESS`") from None


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from .evaluation import SweepInterrupted, evaluate
    signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)     # `kill` stops the sweep as Ctrl-C does
    client = _dask_client(args.scheduler) if args.scheduler else None
    try:
        rows = evaluate(grid=args.grid, out_dir=args.out, jobs=args.jobs, seed=args.seed,
                        figures=not args.no_figures, progress=not args.quiet, resume=args.resume,
                        executor=client.get_executor() if client is not None else None)
    except SweepInterrupted as stop:
        where = "the cluster's tasks were cancelled" if client is not None else "the worker processes have ended"
        print(f"\ninterrupted: {len(stop.rows)} of {stop.total} points are done and in {args.out}/evaluation.csv; "
              f"{where}. Run the same command with --resume to compute the rest.", file=sys.stderr)
        return 130
    finally:
        if client is not None:
            client.close()
    print(f"{len(rows)} grid points -> {args.out}/evaluation.csv; summary in {args.out}/summary.md")
    with open(f"{args.out}/summary.md") as fh:
        print(fh.read())
    return 0


def _cmd_pk_threshold(args: argparse.Namespace) -> int:
    from .related import pk
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
        guarantee=guarantee(kind="PPK-DP", eps=args.eps, delta_mechanism=_up(passive.log_delta),
                            text=f"against the passive attacker; the active one gets delta = {active.delta:.6g}"),
        noise=dict(law="none", scale=0.0, scale_name="none", unit="counts", per="value"),
        warnings=[exact_warning(f"the count is (when {rel} {args.threshold})", args.known),
                  _stated_warning(args.known, args.n, "--p")])
    if args.json:
        print(strict_json(dict(ppk=dict(delta=passive.delta, log_delta=passive.log_delta),
                              apk=dict(delta=active.delta, log_delta=active.log_delta,
                                       worst_known=active.worst_known), record=record)))
        return 0
    print(f"count of {args.n} rows (P(1) = {args.p:g}) released only if {rel} {args.threshold}, else {args.fill};"
          f" the attacker knows {args.known} rows; eps = {args.eps:g}")
    _print_table(["attacker", "delta", "ln delta"],
                 [["passive (PPK-DP)", _fmt_log(passive.log_delta), f"{passive.log_delta:.10g}"],
                  [f"active (APK-DP), worst: {active.worst_known} known 1s", _fmt_log(active.log_delta),
                   f"{active.log_delta:.10g}"]])
    _print_record(record)
    return 0


def _cmd_sp_tables(args: argparse.Namespace) -> int:
    from .related import sp
    out = {}
    for name, table in (("I", sp.TABLE_I), ("II", sp.TABLE_II)):
        rows = sp.compare_sp_dp(table)
        out[name] = rows
        if args.json:
            continue
        print(f"Table {name}: n = {table['n']}, p = {table['p']}; paper's values [brackets], recomputed "
              "(truncated to 4 digits as printed), and the exact delta / a tight DP accountant")
        _print_table(
            ["#SP", "sigma", "eps", "delta (Thm 5.1)", "#DP (KOV-style)", "delta exact", "#DP exact Gaussian"],
            [[str(r["n_sp"]), f"{math.floor(r['sigma'] * 1e4) / 1e4:.4f} [{r['paper_sigma']:.4f}]", f"{r['eps']:g}",
              f"{math.floor(r['delta'] * 1e4) / 1e4:.4f} [{r['paper_delta']:.4f}]",
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
        print(strict_json({**out, "record": record}))
    else:
        print("The Thm 5.1 bound splits over the target's secret block; for counts of one predicate the answers "
              "are as informative as their total, so the exact delta is that of one count on all rows. #DP "
              "(KOV-style) reconstructs the paper's unstated formula (floor; Table I eps=0.01 rounds); the exact "
              "Gaussian column composes k Gaussian answers of the same accuracy exactly.")
        _print_record(record)
    return 0


def _cmd_risk_gdpr(args: argparse.Namespace) -> int:
    from .related import risk
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
        print(strict_json({**result, "record": record}))
        return 0
    print(f"GDPR scenario (Dandekar et al. Sec. 5.3): count query, {args.stakeholders} stakeholders, "
          f"E = ${args.E:,.2f} each, c = {args.c:g}; mean absolute error <= {args.max_mae:g}")
    _print_table(None, [
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
    _print_record(record)
    return 0


def _cmd_samplers_timing(args: argparse.Namespace) -> int:
    from ._validate import real
    from .samplers import MAX_SCALE
    from .sampler_timing import measure_timing
    # checked here, by this command's name: the samplers call it sigma, a flag this command does not have
    real("scale", args.scale, minimum=0.0, maximum=MAX_SCALE, min_inclusive=False)
    report = measure_timing(args.noise, scale=args.scale, draws=args.draws)
    warnings = [] if not report.detected else [
        f"DEPENDENCE DETECTED: on this machine the time of a {args.noise} draw at scale {args.scale:g} carries "
        "information about its value (Spearman p <= 5e-4 for |draw| or the signed draw); a release whose timing "
        "can be observed may leak"]
    record = make_record(attacker=dict(text="one who can time each draw (docs/samplers.md)", belief_source="none"),
                         guarantee=None, noise=dict(law={"gaussian": "rounded_gaussian"}.get(args.noise, args.noise),
                                                    scale=args.scale, scale_name="scale", unit="counts", per="draw"),
                         warnings=warnings)
    if args.json:
        print(strict_json({**vars(report), "record": record}))
        return 0
    print(report.summary())
    _print_record(record)
    return 0


def _cmd_risk_figures(args: argparse.Namespace) -> int:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("ppk risk figures: error: matplotlib is not installed (pip install 'ppk[plot]')", file=sys.stderr)
        return 2
    from .related.risk.figures import draw_all
    for name in draw_all(args.out):
        print(f"{args.out}/{name}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ppk",
        description="Differential privacy under partial background knowledge: the attacker knows only "
                    "some rows; the rows they do not know act as natural noise.")
    parser.add_argument("--version", action="version", version=f"ppk {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    d = sub.add_parser("delta", aliases=["curve"], help="the privacy curve delta(eps) of a noisy count",
                       description="Exact delta(eps) of count + N(0, sigma^2) when the attacker knows --known of "
                                   "--n rows and the others are Bernoulli(--p). delta_upper is the certified "
                                   "upper bound that calibration uses.")
    _add_query_args(d, sigma=True)
    d.add_argument("--eps", type=float, nargs="+", default=[0.0, 0.01, 0.05, 0.1, 0.5, 1.0],
                   help="epsilon values (default %(default)s)")
    d.add_argument("--plot", metavar="FILE", default=None,
                   help="also draw delta(eps) from 0 to the largest --eps, with the DP curve of the same noise, "
                        "into FILE (PNG; needs matplotlib)")
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

    a = sub.add_parser("alg2", help="private end-to-end calibration from a count (Algorithm 2)",
                       description="Algorithm 2: estimate the bias privately (eps/2, Laplace), bound it "
                                   "(Hoeffding), and run Algorithm 1 over the supported biases with eps/2. "
                                   "Prints the public ledger (no Laplace draw, nothing that reveals the count).")
    a.add_argument("--count", type=_whole, required=True, help="number of 1s (kept private)")
    a.add_argument("--n", type=_whole, required=True, help="number of rows")
    _alg2_options(a)
    a.set_defaults(func=_cmd_alg2)

    r = sub.add_parser("release", help="release a noisy count of a 0/1 CSV column",
                       description="Calibrate with Algorithm 2 and release count + noise (rounded Gaussian by "
                                   "default, or a discrete Gaussian or Laplace: --noise). The CSV is read strictly: "
                                   "one record per line, quotes only around whole fields, the header's number of "
                                   "fields, every cell 0 or 1; on any bad row nothing is released. The output ends "
                                   "with its record: the file's SHA-256, the attacker, the guarantee, the noise and "
                                   "every warning.")
    r.add_argument("--csv", required=True, help="CSV file with a header row")
    r.add_argument("--column", required=True, help="name of the 0/1 column")
    _alg2_options(r)
    r.set_defaults(func=_cmd_release)

    hg = sub.add_parser("histogram", help="a noisy histogram (Gaussian noise on every bin): its curve, noise or release",
                        description="Every bin of a histogram plus Gaussian noise, against an attacker who knows "
                                    "--known rows and believes the others fall in the categories with --probs. "
                                    "The unknown rows are natural noise shared by all bins. Without --csv: the "
                                    "privacy curve's two certified ends (--sigma), or the least sigma (--delta). "
                                    "With --csv: calibrate and release the noisy histogram of --column (for --probs, "
                                    "or --min-prob with --categories); on any bad row nothing is released, and the "
                                    "output ends with its record (file SHA-256, attacker, guarantee, warnings).")
    hg.add_argument("--probs", type=_belief, default=None,
                    help="the attacker's belief: P1,P2,... or NAME=P,NAME=P,... (a release needs the names)")
    hg.add_argument("--min-prob", type=float, default=None,
                    help="instead of --probs: cover every belief that gives each category at least this probability "
                         "(with --categories; also for a release)")
    hg.add_argument("--categories", default=None,
                    help="NAME,NAME,...: the public list of categories (a release needs it or NAME=P in --probs); "
                         "without --csv also just their number")
    hg.add_argument("--n", type=_whole, default=None, help="rows in the database (without --csv)")
    hg.add_argument("--known", type=_whole, required=True, help="rows the attacker knows (public), < n")
    hg.add_argument("--sigma", type=float, default=None, help="noise per bin, a standard deviation in counts")
    hg.add_argument("--eps", type=float, nargs="+", default=[0.01, 0.05, 0.1, 0.5, 1.0],
                    help="epsilon values (one with --delta or --csv; default %(default)s)")
    hg.add_argument("--delta", type=float, default=None, help="target delta: calibrate sigma (and release with --csv)")
    hg.add_argument("--csv", default=None, help="CSV file with a header row: release its --column")
    hg.add_argument("--column", default=None, help="the categorical column of --csv")
    hg.add_argument("--seed", type=_seed, default=None,
                    help="reproducible randomness, for tests only: NOT private, so it needs --insecure-for-testing")
    hg.add_argument("--insecure-for-testing", action="store_true",
                    help="allow --seed; every output is then marked as not private")
    hg.add_argument("--json", action="store_true", help="print JSON instead of a table")
    hg.set_defaults(func=_cmd_histogram)

    e = sub.add_parser("evaluate", help="the thesis's evaluation: Algorithms 1 and 2 vs DP over a grid",
                       description="Sweep (n, known/n, p, eps, delta), computing the noise of Algorithm 1, "
                                   "Algorithm 2 (median over seeds) and the DP baselines; write "
                                   "evaluation.csv, figures (with matplotlib) and summary.md.")
    e.add_argument("--grid", choices=["quick", "thesis", "tiny"], default="quick",
                   help="quick: 81 points, about 20 s on 2 cores; thesis: the ranges the thesis proposes, 560 points "
                        "(n up to 1e7), about two minutes on 2 cores; tiny: 4 points, for smoke tests "
                        "(default %(default)s)")
    e.add_argument("--out", default="ppk-out", help="output folder (default %(default)s)")
    e.add_argument("--jobs", type=_positive_whole, default=None, help="worker processes (default: all cores)")
    e.add_argument("--seed", type=_whole, default=0, help="seed of the data sets and Laplace draws (default 0)")
    e.add_argument("--no-figures", action="store_true", help="write the CSV and summary only")
    e.add_argument("--quiet", action="store_true", help="no progress bar")
    e.add_argument("--resume", action="store_true",
                   help="keep the points already in OUT/evaluation.csv (an interrupted run of the same grid and "
                        "seed) and compute only the rest")
    e.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="run the points on a running dask.distributed cluster, e.g. tcp://10.0.0.1:8786 "
                        "(needs pip install 'ppk[dask]'); the CSV is the same as on the local process pool")
    e.set_defaults(func=_cmd_evaluate)

    spp = sub.add_parser("sp", help="statistical privacy with random partitions (Breutigam & Reischuk)")
    spsub = spp.add_subparsers(dest="sp_command", metavar="WHAT", required=True)
    tb = spsub.add_parser("tables", help="the paper's Tables I and II, recomputed, with exact values beside",
                          description="Regenerate Tables I and II of Breutigam & Reischuk: sigma, the Thm 5.1 delta "
                                      "and the DP query count, next to the paper's printed numbers, the exact delta "
                                      "of the same releases and the query count of exact Gaussian composition.")
    tb.add_argument("--json", action="store_true", help="print JSON instead of tables")
    tb.set_defaults(func=_cmd_sp_tables)

    rk = sub.add_parser("risk", help="privacy at risk of the Laplace mechanism (Dandekar, Basu & Bressan)")
    rksub = rk.add_subparsers(dest="risk_command", metavar="WHAT", required=True)
    g = rksub.add_parser("gdpr", help="the paper's GDPR compensation scenario (Sec. 5.3)",
                         description="Budget for eps0-DP vs the optimal privacy-at-risk level of the cost model "
                                     "E_dp(eps) = E exp(-c/eps) per stakeholder (Dandekar, Basu, Bressan).")
    g.add_argument("--E", type=float, default=5500.0, help="compensation scale per stakeholder in $ (default %(default)s)")
    g.add_argument("--c", type=float, default=1.0, help="cost-model constant c > 0 (default %(default)s)")
    g.add_argument("--stakeholders", type=_whole, default=100, help="number of stakeholders (default %(default)s)")
    g.add_argument("--max-mae", type=float, default=2.0,
                   help="largest acceptable mean absolute error of the count (default %(default)s)")
    g.add_argument("--json", action="store_true", help="print JSON instead of a table")
    g.set_defaults(func=_cmd_risk_gdpr)
    rf = rksub.add_parser("figures", help="draw the paper's Figures 1, 2, 8-12 from the formulas (needs matplotlib)",
                          description="Figures 1-2 (eps vs confidence, with the exact worst-case curve dotted), "
                                      "8-11 (compensation vs eps and its optimum) and 12 (composition).")
    rf.add_argument("--out", default="ppk-risk-figures", help="output folder (default %(default)s)")
    rf.set_defaults(func=_cmd_risk_figures)

    sm = sub.add_parser("samplers", help="the noise samplers: whether their timing reveals the draw")
    smsub = sm.add_subparsers(dest="samplers_command", metavar="WHAT", required=True)
    st = smsub.add_parser("timing", help="time many draws and correlate the time with |draw| (docs/samplers.md)",
                          description="Spearman's rank correlation between |draw| (and the signed draw) and the "
                                      "time the draw took, on this machine, for the sampler a release uses (the "
                                      "statistic of Jin et al.'s timing attack; rejection samplers showed 0.2-0.5).")
    st.add_argument("--noise", choices=["gaussian", "discrete_gaussian", "discrete_laplace"], default="gaussian",
                    help="the sampler, named as in `ppk release --noise` (default %(default)s)")
    st.add_argument("--scale", type=float, default=3.0, help="sigma or Laplace scale, in counts (default %(default)s)")
    st.add_argument("--draws", type=_whole, default=2000, help="draws to time, 100..1000000 (default %(default)s)")
    st.add_argument("--json", action="store_true", help="print JSON instead of a sentence")
    st.set_defaults(func=_cmd_samplers_timing)

    k = sub.add_parser("pk", help="passive vs active attackers with partial knowledge (Desfontaines, Krahmer & Mohammadi)")
    ksub = k.add_subparsers(dest="pk_command", metavar="KIND", required=True)
    t = ksub.add_parser("threshold", help="a count released only above a threshold",
                        description="PPK-DP (the known rows' values are drawn from the prior) and APK-DP (the "
                                    "attacker chooses them) of a thresholded count; delta is exact, in log space.")
    t.add_argument("--n", type=_whole, required=True, help="rows (voters)")
    t.add_argument("--p", type=float, required=True, help="probability that a row is 1")
    t.add_argument("--threshold", type=_whole, required=True, help="the count is released only above this")
    t.add_argument("--known", type=_whole, required=True, help="rows whose values the attacker knows")
    t.add_argument("--eps", type=float, required=True, help="epsilon >= 0")
    t.add_argument("--at-least", action="store_true", help="release when count >= threshold (default: >)")
    t.add_argument("--fill", type=_whole, default=0, help="value released below the threshold (default 0)")
    t.add_argument("--json", action="store_true", help="print JSON instead of a table")
    t.set_defaults(func=_cmd_pk_threshold)
    return parser


# Python names that differ from the flag a user typed
_FLAG_OF = {"n_stakeholders": "--stakeholders", "max_workers": "--jobs", "rng": "--seed", "strict": "--at-least"}


def _flags(parser: argparse.ArgumentParser) -> dict[str, str]:
    """dest -> flag for every option of every command."""
    out: dict[str, str] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out.update(_flags(sub))
        elif action.option_strings and action.dest not in ("help", "version"):
            out[action.dest] = max(action.option_strings, key=len)
    return out


def _in_cli_terms(message: str, parser: argparse.ArgumentParser) -> str:
    """'kappa2 must be > 0' -> '--kappa2 must be > 0': the names the user typed, not Python's."""
    names = {**_flags(parser), **_FLAG_OF}
    def flag(match: re.Match) -> str:
        return names.get(match.group(1), match.group(1)) + match.group(2)
    return re.sub(r"\b([A-Za-z_][A-Za-z0-9_]*)( must| =|=| is too)", flag, message)


def _command_name(args: argparse.Namespace) -> str:
    """'ppk sp tables', 'ppk delta': the command as typed, for messages."""
    words = [args.command] + [getattr(args, f"{args.command}_command", None) or ""]
    return "ppk " + " ".join(w for w in words if w)


def main(argv: list[str] | None = None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
    except KeyboardInterrupt:   # Ctrl-C before the command started: the same one line and exit code
        print("\nppk: interrupted", file=sys.stderr)
        return 130
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return args.func(args)
    except KeyboardInterrupt:
        # Ctrl-C: the C++ kernels poll for it and raise KeyboardInterrupt, so does Python; one line, no
        # traceback, and the shell's code for SIGINT (128 + 2).  Nothing half-computed was printed as a result.
        print(f"\n{_command_name(args)}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (e.g. `ppk sp tables | head -1`): end quietly, as the Python docs advise
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except (ValueError, TypeError, OSError) as exc:
        print(f"{_command_name(args)}: error: {_in_cli_terms(str(exc), parser)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
