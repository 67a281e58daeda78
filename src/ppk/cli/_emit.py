"""Everything the command line prints that is not a sentence of one command: numbers, tables, JSON,
a release's record and Algorithm 2's ledger.  Every command prints its results through these, so the
same number is written the same way by every command."""
from __future__ import annotations

import math

from .._io import strict_json
from .._logmath import exp_up

#: Printed above any output of a release seeded with --insecure-for-testing.
NOT_PRIVATE = ("NOT A PRIVATE RELEASE: seeded randomness (--insecure-for-testing); anyone who guesses the seed "
               "can remove the noise.")

_EXACT_COUNT = ("NOTICE: no noise was added -- the released value IS the exact count.  The unknown rows alone "
                "(natural noise) meet (eps, delta) against an attacker who knows the stated number of rows; an "
                "attacker who knows more rows is not covered.")

_NOISE_OF_LAW = {"gaussian": "rounded Gaussian noise, sigma", "discrete_gaussian": "discrete Gaussian noise, sigma",
                 "discrete_laplace": "discrete Laplace noise, scale"}


def fmt_number(x: float) -> str:
    return "0" if x == 0 else f"{x:.6g}"


def exp_rounded_up(log_x: float) -> float:
    """A delta given by its log, as a float that is never below it: exp rounded up, so a delta below the
    float range is the least positive float, not 0 (which would under-report it)."""
    return float(exp_up(log_x))


def fmt_from_log(log_x: float) -> str:
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


def print_json(obj: object) -> None:
    """``obj`` as strict JSON (no NaN or infinity: :func:`ppk._io.strict_json`)."""
    print(strict_json(obj))


def print_table(header: list[str] | None, rows: list[list[str]]) -> None:
    ncol = len(rows[0])
    widths = [max(len(header[i]) if header else 0, *(len(r[i]) for r in rows)) for i in range(ncol)]

    def line(cells: list[str]) -> str:  # first column left-aligned (labels), numbers right-aligned
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    if header:
        print(line(header))
    for r in rows:
        print(line(r))


def print_record(record: dict) -> None:
    """The record in words, after a table: what a reviewer needs to check the output."""
    print(f"\nrecord ({record['format']}): ppk {record['ppk_version']}, {record['created_utc']} (UTC)")
    source = record["input"]
    if source:
        c = source["commitment"]
        held = (f"commitment {c['scheme']} {c['value']} (the steward holds the key)" if c else
                "no commitment (--commitment-key)")
        print(f"input: {source['file']}, {held}, column {source['column']!r}, {source['rows']} rows")
    else:
        print("input: no file (computed from the parameters given)")
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


def print_ledger(ledger: dict, record: dict, value: int | None = None) -> None:
    """Algorithm 2's public ledger (``ppk alg2``), after the released ``value`` (``ppk release``)."""
    parts = ledger["delta_parts"]
    if ledger["insecure_for_testing"]:
        print(NOT_PRIVATE + "\n")
    if value is not None:
        print(f"released value: {value}   (count + {_NOISE_OF_LAW[ledger['noise_law']]} = {ledger['sigma']:.6g} "
              "counts)\n")
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
    print_table(None, rows)
    if ledger["branch"] == "fallback":
        print("\nfallback: the discrete Laplace estimate was unusable or the truncation term exceeded kappa3;"
              " the DP baseline is used.")
    for note in ledger.get("notes", []):
        print(f"note: {note}")
    print_record(record)
