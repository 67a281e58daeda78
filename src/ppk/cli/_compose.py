"""``ppk compose``: the certified privacy of a release plan -- runs of the Gaussian, Laplace, Poisson-subsampled
and randomized-response mechanisms composed with :class:`ppk.PrivacyLossDistribution` (docs/accuracy.md,
"Composition" and "Composition without the floor")."""
from __future__ import annotations

import argparse
import math
import os
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from fractions import Fraction
from typing import Any, NamedTuple

from ..pld import PrivacyLossDistribution as PLD
from ..pld import _tail_cut
from ..pld.mechanisms import randomized_response_pmfs
from ..records import guarantee, make_record
from ._args import add_command, add_json_flag, whole
from ._emit import print_json, print_record, print_table

_LN10 = math.log(10.0)

#: option -> (its parameters as typed, what the plan line calls the mechanism)
_MECHANISMS = {
    "gaussian": (("SIGMA",), "Gaussian"),
    "laplace": (("B",), "Laplace"),
    "subsampled-gaussian": (("SIGMA", "Q"), "Poisson-subsampled Gaussian"),
    "subsampled-laplace": (("B", "Q"), "Poisson-subsampled Laplace"),
    "randomized-response": (("EPS0",), "randomized response"),
}
#: the library's names in its messages -> the command line's
_LIBRARY_NAMES = {"value_discretization_interval": "--interval", "num_times": "K", "standard_deviation": "SIGMA",
                  "parameter": "B", "sampling_prob": "Q"}


class Runs(NamedTuple):
    """``times`` runs of one mechanism, as typed (``option``, ``text``) and parsed (``values``)."""
    option: str
    text: str
    values: tuple[float, ...]
    times: int

    def describe(self) -> str:
        names, label = _MECHANISMS[self.option]
        params = ", ".join(f"{n.lower()} {v:.10g}" for n, v in zip(names, self.values))
        return f"{self.times} x {label} ({params})"


class _AddRuns(argparse.Action):
    """Append (option, text) to ``plan`` so the plan keeps the order the mechanisms were typed in."""

    def __call__(self, parser: Any, namespace: argparse.Namespace, values: Any, option_string: Any = None) -> None:
        plan = list(getattr(namespace, self.dest) or [])
        plan.extend((self.const, v) for v in values)
        setattr(namespace, self.dest, plan)


def _parse(option: str, text: str) -> Runs:
    """'10x200' -> Runs(values=(10.0,), times=200); errors name the option and what it expects."""
    names, _ = _MECHANISMS[option]
    form = ":".join(names) + "[xK]"
    where = f"--{option} {text}"
    body, sep, k = text.strip().rpartition("x")
    if not sep:
        body, k = text.strip(), "1"
    parts = body.split(":")
    try:
        if len(parts) != len(names):
            raise ValueError
        values = tuple(float(p) for p in parts)
        times = whole(k)
    except (ValueError, argparse.ArgumentTypeError):
        raise ValueError(f"{where}: expected {form}, e.g. --{option} {_EXAMPLE[option]}") from None
    for name, v in zip(names, values):
        if name == "Q":
            if not 0.0 < v <= 1.0:
                raise ValueError(f"{where}: Q (the sampling probability) must be in (0, 1], got {v:g}")
        elif name == "EPS0":
            if not 0.0 <= v < math.inf:
                raise ValueError(f"{where}: EPS0 must be finite and >= 0, got {v:g}")
        elif not 0.0 < v < math.inf:
            raise ValueError(f"{where}: {name} (the noise's {'standard deviation' if name == 'SIGMA' else 'scale'}) "
                             f"must be finite and > 0, got {v:g}")
    if times < 1:
        raise ValueError(f"{where}: K (the number of runs) must be >= 1, got {times}")
    return Runs(option, text, values, times)


_EXAMPLE = {"gaussian": "10x200", "laplace": "20x5", "subsampled-gaussian": "2:0.01x3000",
            "subsampled-laplace": "4:0.01x1000", "randomized-response": "0.1x300"}


def _in_cli_terms(message: str) -> str:
    for name, flag in _LIBRARY_NAMES.items():
        message = message.replace(name, flag)
    return message


#: The subsampled Gaussian's deepest tail cut (the plot's; the API's default is dp_accounting's e^-50).  The
#: mass cut counts as infinite loss, so each --eps / --delta question cuts only as deep as its answer needs,
#: as the Accountant does (ppk.pld._tail_cut, docs/dpsgd.md "The tails"): at e^-50 for every question,
#: 3000 runs could certify nothing below ~1e-19.
_SUBSAMPLED_TAILS = _tail_cut.RUNGS[-1]
#: --adjacency -> what the record says the attacker changes
_ADJACENCY_TEXT = {"add_or_remove": "add or remove one row: the larger of both orders",
                   "remove": "remove one row", "add": "add one row"}


def build(runs: Runs, *, sensitivity: float, interval: float, adjacency: str = "add_or_remove",
          cut: float = _SUBSAMPLED_TAILS, leaves: list | None = None) -> PLD:
    """The PLD of ``runs`` (``self_compose`` of one run's); library errors are re-worded in CLI terms.
    ``adjacency`` orients the subsampled mechanisms (the others are symmetric: every adjacency is the same);
    a subsampled Gaussian's tails are cut at e^``cut``; (one run, count, whether cut there) appended to ``leaves``."""
    v, dx = runs.values, interval
    try:
        if runs.option == "gaussian":
            one = PLD.from_gaussian_mechanism(v[0], sensitivity=sensitivity, value_discretization_interval=dx)
        elif runs.option == "laplace":
            one = PLD.from_laplace_mechanism(v[0], sensitivity=sensitivity, value_discretization_interval=dx)
        elif runs.option == "subsampled-gaussian":
            one = PLD.from_gaussian_mechanism(v[0], sensitivity=sensitivity, sampling_prob=v[1],
                                              value_discretization_interval=dx, adjacency=adjacency,
                                              log_mass_truncation_bound=cut)
        elif runs.option == "subsampled-laplace":
            one = PLD.from_laplace_mechanism(v[0], sensitivity=sensitivity, sampling_prob=v[1],
                                             value_discretization_interval=dx, adjacency=adjacency)
        else:
            p, q = randomized_response_pmfs(v[0])
            one = PLD.from_pmfs(p, q, value_discretization_interval=dx)
        if leaves is not None:
            leaves.append((one, runs.times, runs.option == "subsampled-gaussian"))
        return one.self_compose(runs.times) if runs.times > 1 else one
    except ValueError as exc:
        raise ValueError(f"--{runs.option} {runs.text}: {_in_cli_terms(str(exc))}") from None


def _describe(plan: list[Runs]) -> str:
    """'3 x Gaussian (sigma 3) + 1 x Laplace (b 5)': runs of the same mechanism and values counted together, in
    the order first typed (2,000 --gaussian 3 options are '2000 x Gaussian (sigma 3)', not 2,000 terms)."""
    counts: dict[tuple[str, tuple[float, ...]], int] = {}
    for r in plan:
        counts[(r.option, r.values)] = counts.get((r.option, r.values), 0) + r.times
    return " + ".join(Runs(option, "", values, times).describe() for (option, values), times in counts.items())


def _merged_gaussians(plan: list[Runs]) -> list[Runs]:
    """Two or more --gaussian options as one: k runs of deviations sigma_i are one Gaussian mechanism of
    1/sigma^2 = sum k_i / sigma_i^2 (their losses are normal and add; docs/accuracy.md, "Composition without
    the floor"), summed exactly and rounded down (a smaller sigma only raises delta).  Each option built alone
    held its own loss vectors: 2,000 options took 7.9 GB and 84 s before failing."""
    gaussians = [r for r in plan if r.option == "gaussian"]
    if len(gaussians) < 2:
        return plan
    total = sum((Fraction(r.times) / Fraction(r.values[0]) ** 2 for r in gaussians), Fraction(0))
    sigma = math.sqrt(float(1 / total))
    for _ in range(3):    # the quotient's and the square root's roundings, half an ulp each, and one to spare
        sigma = math.nextafter(sigma, 0.0)
    merged = Runs("gaussian", " + ".join(r.text for r in gaussians), (sigma,), 1)
    return [r for r in plan if r.option != "gaussian"] + [merged]


#: The most loss-grid entries the distinct runs of a plan may hold (each ~100 bytes with its dominating pair
#: and its tilted factor): about 2 GB.
MAX_PLAN_ENTRIES = 20_000_000


def _entries(runs: Runs, *, sensitivity: float, interval: float) -> float:
    """About how many grid entries one run's PLD holds (before it is built), at most the builders' 2^20."""
    from ..pld.subsampled import subsampled_loss

    v = runs.values
    if runs.option == "gaussian":
        r = sensitivity / v[0]
        span = r * r / 2 + 42 * r          # loss mean r^2/2, deviation r, tails to e^-800 (42 deviations)
    elif runs.option == "laplace":
        span = 2 * sensitivity / v[0]
    elif runs.option == "subsampled-gaussian":
        r = sensitivity / v[0]
        z = 42 * r + r * r / 2
        span = subsampled_loss(z, v[1]) - subsampled_loss(-z, v[1])
    elif runs.option == "subsampled-laplace":
        e0 = sensitivity / v[0]
        span = subsampled_loss(e0, v[1]) - subsampled_loss(-e0, v[1])
    else:
        return 2.0
    return min(span / interval + 4, float(1 << 20))


def _check_size(plan: list[Runs], *, sensitivity: float, interval: float) -> None:
    """Refuse, before building anything, a plan whose distinct runs would hold more than MAX_PLAN_ENTRIES."""
    entries = sum(_entries(r, sensitivity=sensitivity, interval=interval) for r in plan)
    if entries > MAX_PLAN_ENTRIES:
        raise ValueError(
            f"the plan's {len(plan):,} mechanism options would hold about {entries:.3g} loss-grid entries (about "
            f"{entries * 100 / 1e9:.2g} GB, more than the {MAX_PLAN_ENTRIES:.3g} entries ppk compose allows): give "
            "repeated runs of one mechanism as one option with xK (--laplace 20x500, not 500 options), fewer "
            "distinct mechanisms, or a coarser --interval")


def compose_plan(plan: list[Runs], *, sensitivity: float, interval: float, adjacency: str = "add_or_remove",
                 cut: float = _SUBSAMPLED_TAILS, leaves: list | None = None) -> PLD:
    """The plan's PLD: its runs composed in the order typed (several --gaussian options merged into one);
    ``cut`` and ``leaves`` as for :func:`build`."""
    plan = _merged_gaussians(plan)
    _check_size(plan, sensitivity=sensitivity, interval=interval)
    out: PLD | None = None
    for runs in plan:
        part = build(runs, sensitivity=sensitivity, interval=interval, adjacency=adjacency, cut=cut, leaves=leaves)
        try:
            out = part if out is None else out.compose(part)
        except ValueError as exc:
            raise ValueError(f"the plan up to --{runs.option} {runs.text}: {_in_cli_terms(str(exc))}") from None
    assert out is not None
    return out


# -- printing, rounded outward: a printed upper end is never below the certified one ---------------------------
def _round_sig(x: float, digits: int, *, up: bool) -> str:
    """``x`` to ``digits`` significant digits, rounded up (``up``) or down exactly (decimal arithmetic)."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    d = Decimal(x)
    rounded = d.quantize(Decimal(1).scaleb(d.adjusted() - digits + 1), rounding=ROUND_CEILING if up else ROUND_FLOOR)
    return f"{float(rounded):.{digits}g}"


def _fmt_delta(x: float, log_x: float, *, up: bool) -> str:
    """A delta end (the float ``x`` rounded outward, its log ``log_x``), 6 significant digits rounded up
    (``up``) or down; below 1e-300 from its log, as 1.23456e-2418."""
    if x >= 1e-300 or log_x == -math.inf:
        return _round_sig(x, 6, up=up)
    if log_x < -1e12:     # a decimal exponent of 13+ digits: the mantissa means nothing, the log is the number
        return f"exp({_round_sig(log_x, 6, up=up)})"
    e10 = log_x / _LN10
    e10 += (1e-13 if up else -1e-13) * abs(e10)   # covers the rounding of the log and of the division
    exponent = math.floor(e10)
    mantissa = (math.ceil if up else math.floor)(10 ** (e10 - exponent) * 1e5) / 1e5
    if mantissa >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"{mantissa:.6g}e{exponent}"


def _outward(lo: float, hi: float, log_hi: float) -> tuple[float, float]:
    """The API's bracket as floats that hold it: one ulp outward covers its rounding to double, and an upper
    end below the float range is the least positive float, not 0."""
    upper = min(1.0, math.nextafter(hi, math.inf)) if hi > 0 else (
        0.0 if log_hi == -math.inf else math.nextafter(0.0, 1.0))
    return (math.nextafter(lo, 0.0) if lo > 0 else 0.0), upper


def _curve_rows(pld: PLD, eps: list[float]) -> list[dict]:
    lo, hi = pld.delta_bracket(eps)   # (cached: _run asked it already to choose the cut)
    log_lo, log_hi = pld.log_delta_bracket(eps)
    rows = []
    for e, a, b, la, lb in zip(eps, lo, hi, log_lo, log_hi):
        lower, upper = _outward(float(a), float(b), float(lb))
        rows.append(dict(eps=e, delta_lower=lower, delta_upper=upper, log_delta_lower=float(la),
                         log_delta_upper=float(lb)))
    return rows


def _epsilon_row(pld: PLD, delta: float) -> dict:
    """The certified eps at ``delta`` and the delta bracket there."""
    e = pld.get_epsilon_for_delta(delta)
    bracket = _curve_rows(pld, [e])[0] if math.isfinite(e) else {}
    row = dict(delta=delta, eps=e, **{f"at_eps_{k}": v for k, v in bracket.items() if k != "eps"})
    if not math.isfinite(e):   # why: outcomes at an infinite loss (distinguishing events), or only numerics
        row["infinite_loss_mass"] = float(max(pld.infinity_mass_upper, pld.infinity_mass_lower))
    return row


def _check_targets(args: argparse.Namespace) -> None:
    if not args.plan:
        raise ValueError("no mechanism: give at least one of --gaussian, --laplace, --subsampled-gaussian, "
                         "--subsampled-laplace, --randomized-response (e.g. --gaussian 10x200)")
    if args.eps is None and args.delta is None and args.plot is None:
        raise ValueError("say what to compute: --eps E [E ...] (the delta bracket at each eps), --delta D [D ...] "
                         "(the certified eps at each delta) or --plot FILE (the curve)")
    if args.plot is not None:
        _check_plot_path(args.plot)
    if not 0.0 < args.interval < math.inf:
        raise ValueError(f"--interval (the loss grid) must be finite and > 0, got {args.interval:g}")
    if not 0.0 < args.sensitivity < math.inf:
        raise ValueError(f"sensitivity must be finite and > 0, got {args.sensitivity:g}")   # _main names the flag
    if any(not 0.0 <= e < math.inf for e in args.eps or []):
        raise ValueError(f"--eps values must be finite and >= 0, got {args.eps}")
    if any(not 0.0 < d <= 1.0 for d in args.delta or []):
        raise ValueError(f"--delta values must be in (0, 1], got {args.delta}")


def _check_plot_path(path: str) -> None:
    """Before any work: --plot names a PNG in a directory that exists (the figure is saved as PNG)."""
    if not path.lower().endswith(".png"):
        raise ValueError(f"--plot FILE must end in .png (the figure is a PNG), got {path!r}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"--plot {path}: the directory {folder} does not exist")


def _plot(pld: PLD, path: str, eps: list[float] | None, plan_text: str) -> str:
    """Draw the composed curve's certified upper end into ``path``; the line the command prints about it."""
    import numpy as np

    from ..plotting import plot_privacy_curve
    grid = np.linspace(0.0, max(eps), 161) if eps and max(eps) > 0 else None
    plot_privacy_curve(pld, eps=grid, labels=[plan_text if len(plan_text) <= 90 else plan_text[:87] + "..."],
                       path=path)
    return f"plot: {path}  (the certified upper end of delta(eps) on a log axis)"


def _bracket_text(row: dict) -> str:
    if not math.isfinite(row["eps"]):
        mass = row.get("infinite_loss_mass", 0.0)
        if mass > 0:
            return f"no eps: the plan's infinite-loss mass ({_round_sig(mass, 3, up=False)}) exceeds delta"
        return ("no eps: the certified upper end stays above delta at every eps (the tails cut off when the "
                "mechanisms were built, and the bracket's error bounds, count as an infinite loss); a finer "
                "--interval may help")
    return (f"[{_fmt_delta(row['at_eps_delta_lower'], row['at_eps_log_delta_lower'], up=False)}, "
            f"{_fmt_delta(row['at_eps_delta_upper'], row['at_eps_log_delta_upper'], up=True)}]")


def _record(curve: list[dict], epsilons: list[dict], plan_text: str, adjacency: str) -> dict:
    points = [(r["eps"], r["delta_upper"]) for r in curve] + [(r["eps"], r["delta"]) for r in epsilons
                                                               if math.isfinite(r["eps"])]
    return make_record(
        attacker=dict(belief="none: the mechanisms' own noise", belief_source="none",
                      text=f"any attacker (standard DP, {_ADJACENCY_TEXT[adjacency]})"),
        guarantee=guarantee(kind="DP", eps=[e for e, _ in points], delta_mechanism=[d for _, d in points],
                            text=(f"{plan_text} is (eps, delta)-DP at each pair listed (delta: the certified "
                                  "upper end)") if points else
                                 f"{plan_text}: no eps certifies the delta asked for (--delta); no pair to state"
                                 if epsilons else
                                 f"{plan_text}: its certified curve is drawn (--plot); no (eps, delta) pair was "
                                 "asked for (--eps, --delta)"),
        noise=None, warnings=[])


def _run(args: argparse.Namespace) -> int:
    _check_targets(args)
    plan = [_parse(option, text) for option, text in args.plan]
    # a fresh plan per question: a plan caches its tilts, and what it was asked before can change (or,
    # in ppk 0.1.0, break) the next answer; fresh plans give every answer as the Python API gives it alone
    # each question's tails cut as deep as its answer needs (as the Accountant's, docs/dpsgd.md "The tails")
    runs = sum(r.times for r in plan if r.option == "subsampled-gaussian")
    compositions = _tail_cut.steps(r.times for r in plan)

    def fresh(cut: float = _SUBSAMPLED_TAILS) -> tuple[PLD, float]:   # and its cut mass (ppk.pld._tail_cut)
        leaves: list = []
        pld = compose_plan(plan, sensitivity=args.sensitivity, interval=args.interval, adjacency=args.adjacency,
                           cut=cut, leaves=leaves)
        tilted = _tail_cut.read_off_tilts(pld, [one for one, _, _ in leaves])
        return pld, _tail_cut.cut_mass([(one, k) for one, k, cut_here in leaves if cut_here],
                                       0 if tilted else compositions)

    def for_eps(eps: list[float]) -> PLD:    # (no subsampled Gaussian: no tails to cut, one plan for all)
        return _tail_cut.deepening(fresh, lambda pld: pld.delta_bracket(eps), runs, compositions)[0] if runs \
            else fresh()[0]

    def for_delta(delta: float) -> PLD:
        if not runs:
            return fresh()[0]
        built: dict[float, tuple[PLD, float]] = {}    # this question's plans, per cut

        def at(cut: float) -> tuple[PLD, float]:
            if cut not in built:
                built[cut] = fresh(cut)
            return built[cut]
        return at(_tail_cut.for_delta(delta, lambda cut: at(cut)[1], runs, compositions))[0]
    curve = _curve_rows(for_eps(args.eps), args.eps) if args.eps else []
    epsilons = [_epsilon_row(for_delta(d), d) for d in args.delta or []]
    plan_text = _describe(plan)
    plot_line = _plot(fresh()[0], args.plot, args.eps, plan_text) if args.plot is not None else None
    record = _record(curve, epsilons, plan_text, args.adjacency)
    if args.json:
        print_json(dict(plan=[dict(mechanism=r.option, values=dict(zip(_MECHANISMS[r.option][0], r.values)),
                                   times=r.times) for r in plan],
                        sensitivity=args.sensitivity, interval=args.interval, adjacency=args.adjacency,
                        curve=curve, epsilons=epsilons, plot=args.plot,
                        record=record))
        return 0
    print(f"plan: {plan_text}")
    print(f"sensitivity {args.sensitivity:g}; loss grid --interval {args.interval:g}; adjacency {args.adjacency}")
    print("The true delta lies in [lower, upper] (rounded outward); the eps printed is never below the true one.\n")
    if curve:
        tiny = any(-math.inf < r["log_delta_upper"] < -300 * _LN10 for r in curve)
        print_table(["eps", "delta lower", "delta upper"] + (["ln(delta upper)"] if tiny else []),
                    [[f"{r['eps']:g}", _fmt_delta(r["delta_lower"], r["log_delta_lower"], up=False),
                      _fmt_delta(r["delta_upper"], r["log_delta_upper"], up=True)]
                     + ([f"{r['log_delta_upper']:.10g}"] if tiny else []) for r in curve])
    if curve and epsilons:
        print()
    if epsilons:
        print_table(["delta", "eps (certified)", "delta bracket at that eps"],
                    [[f"{r['delta']:g}", _round_sig(r["eps"], 8, up=True), _bracket_text(r)] for r in epsilons])
    if plot_line:
        print(("\n" if curve or epsilons else "") + plot_line)
    print_record(record)
    return 0


_DESCRIPTION = """\
The certified privacy of a release plan: K independent runs of each mechanism given, composed (privacy loss
distributions on a grid, read off tilted FFTs with every rounding and truncation error bounded; Gaussian
runs and randomized response exactly). For each --eps it prints a bracket [lower, upper] that
holds the true delta(eps) of the composition (--adjacency: by default add or remove one row, the larger of
both orders); for each --delta the least eps whose certified upper end is <= delta, which is never
below the true eps.

Mechanisms (repeat an option for several; K runs, default 1):
  --gaussian SIGMA[xK]               N(0, SIGMA^2) noise
  --laplace B[xK]                    Laplace noise of scale B
  --subsampled-gaussian SIGMA:Q[xK]  Gaussian on a Poisson sample with probability Q (DP-SGD's steps)
  --subsampled-laplace B:Q[xK]       Laplace on a Poisson sample with probability Q
  --randomized-response EPS0[xK]     binary randomized response with local eps EPS0
SIGMA and B are in the query's units, and the query changes by at most --sensitivity (default 1: SIGMA is
the standard deviation in units of the sensitivity). Gaussian runs are merged exactly into one Gaussian.

--interval is the grid of the privacy loss: the bracket's width comes from it, about |ln delta| *
interval^2 / (4 v) relative for a per-run loss variance v, so halving it narrows the bracket four times
(and costs about twice the time)."""

_EPILOG = """\
examples:
  ppk compose --gaussian 10x200 --randomized-response 0.1x300 --delta 1e-6 1e-12
  ppk compose --subsampled-gaussian 2:0.01x3000 --interval 1e-4 --delta 1e-15
  ppk compose --laplace 20x5 --gaussian 3 --eps 0.5 1 2 --json
  ppk compose --gaussian 10x200 --randomized-response 0.1x300 --plot composed.png"""


def register(sub: Any) -> None:
    """Add compose to the sub-commands ``sub``."""
    c = add_command(sub, "compose", _run, help="certified (eps, delta) of a composed plan of mechanisms",
                    description=_DESCRIPTION, epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    for option, (names, label) in _MECHANISMS.items():
        c.add_argument(f"--{option}", dest="plan", action=_AddRuns, const=option, nargs="+", default=[],
                       metavar=":".join(names) + "[xK]", help=f"{label}: K runs (e.g. {_EXAMPLE[option]})")
    c.add_argument("--sensitivity", type=float, default=1.0, metavar="S",
                   help="how much the query changes with one row, in the units of SIGMA and B (default 1)")
    c.add_argument("--interval", type=float, default=1e-4, metavar="DX",
                   help="the privacy loss grid (default %(default)g); smaller: a narrower bracket, slower")
    c.add_argument("--adjacency", choices=("add_or_remove", "remove", "add"), default="add_or_remove",
                   help="which neighbouring datasets: a row added or removed (default: the larger of both), or "
                        "one of them alone; only the subsampled mechanisms differ")
    c.add_argument("--eps", type=float, nargs="+", default=None, metavar="E",
                   help="print the certified delta bracket at each eps")
    c.add_argument("--delta", type=float, nargs="+", default=None, metavar="D",
                   help="print the certified (never too small) eps at each delta")
    c.add_argument("--plot", metavar="FILE", default=None,
                   help="also draw the composed curve's certified upper end of delta(eps), on a log axis, into FILE "
                        "(PNG; needs matplotlib); eps from 0 to the largest --eps if given")
    add_json_flag(c)
