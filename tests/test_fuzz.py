"""Fuzz the command line flag by flag, and the counting query's curve with random arguments (issue: no
input makes ppk hang, crash, return NaN or answer in internal terms).

Every public Python entry point is fuzzed by tests/test_public_api_fuzz.py, whose catalog is checked
to cover them all; this file keeps what that catalog does not reach: ``ppk``'s argv, and random
combinations of the four parameters of one curve.  Each call runs under the same 10 s alarm.
"""
from __future__ import annotations

import re
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ppk
from guards import Timeout, within
from test_public_api_fuzz import TIME_LIMIT, probe


@settings(max_examples=150, deadline=None)
@given(eps=st.floats(allow_nan=True, allow_infinity=True), sigma=st.floats(min_value=0, allow_infinity=True),
       p=st.floats(min_value=0, max_value=1), n=st.integers(1, 10**9))   # one delta at n = 1e12 may take seconds
def test_random_curve_arguments(eps, sigma, p, n):
    """log_delta at random (n, p, sigma) and any eps: a finite answer or an error naming eps (or sigma,
    which may be infinite here)."""
    query = ppk.CountingQuery(n=n, known=n // 2, p=p, sigma=sigma) if sigma < float("inf") else None
    if query is None:
        with pytest.raises(ValueError, match="sigma"):
            ppk.CountingQuery(n=n, known=n // 2, p=p, sigma=sigma)
        return
    found = probe("ppk.CountingQuery.log_delta", "eps", eps, fn=lambda eps: query.log_delta(eps))
    assert found is None, found


# --- the command line: every numeric flag of every command ----------------------------------------

CLI_BAD = ["nan", "inf", "-inf", "-1", "0", "1e300", "1e-320", "abc", "", "1e6", "0.5"]


def _cli_commands(csv_path):
    release = ["release", "--csv", csv_path, "--column", "x", "--known", "500", "--eps", "0.5", "--delta", "1e-6"]
    return {
        "delta": (["delta", "--eps", "0.1"], ["--n", "--known", "--p", "--sigma", "--eps"]),
        "calibrate": (["calibrate"], ["--n", "--known", "--p", "--eps", "--delta", "--error"]),
        "alg2": (["alg2", "--count", "300", "--n", "1000", "--known", "500", "--eps", "0.5", "--delta", "1e-6"],
                 ["--count", "--n", "--known", "--eps", "--delta", "--kappa1", "--kappa2", "--kappa3", "--seed"]),
        "release": (release, ["--known", "--eps", "--delta", "--kappa1", "--kappa2", "--kappa3"]),
        "pk": (["pk", "threshold", "--n", "1000", "--p", "1e-3", "--threshold", "5", "--known", "100", "--eps", "0.1"],
               ["--n", "--p", "--threshold", "--known", "--eps", "--fill"]),
        "risk": (["risk", "gdpr"], ["--E", "--c", "--stakeholders", "--max-mae"]),
    }


def _set_flag(argv, flag, value):
    argv = list(argv)
    if flag in argv:
        argv[argv.index(flag) + 1] = value
    else:
        argv += [flag, value]
    if flag == "--seed":
        argv.append("--insecure-for-testing")
    return argv


def _cli_finding(argv, flag, capsys) -> str | None:
    from ppk.cli import main
    try:
        with within(TIME_LIMIT), warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                rc = main(argv)
            except SystemExit as exc:      # argparse refusing a value
                rc = exc.code
    except Timeout:
        return f"ppk {' '.join(argv)}: no answer in {TIME_LIMIT} s"
    except Exception as exc:   # noqa: BLE001 -- a traceback would reach the user
        return f"ppk {' '.join(argv)}: traceback {type(exc).__name__}: {exc}"
    out, err = capsys.readouterr()
    if rc == 0:
        if " nan" in out.lower() or "NaN" in out:
            return f"ppk {' '.join(argv)}: NaN in the output"
        return None
    if rc != 2:
        return f"ppk {' '.join(argv)}: exit {rc}"
    if "--" not in err:
        return f"ppk {' '.join(argv)}: the error names no flag: {err.strip()[-150:]}"
    from ppk.cli._main import _flags, build_parser
    for internal in ("max_workers", "n_stakeholders", "strict=", "Errno", "Traceback"):
        if internal in err:
            return f"ppk {' '.join(argv)}: the error speaks Python ({internal}): {err.strip()[-150:]}"
    for name in _flags(build_parser()):   # an option's Python name without its '--'
        if re.search(rf"(?<![-\w]){name} must", err):
            return f"ppk {' '.join(argv)}: the error names {name!r}, not its flag: {err.strip()[-150:]}"
    return None


@pytest.mark.parametrize("command", ["delta", "calibrate", "alg2", "release", "pk", "risk"])
def test_cli_bad_and_extreme_values(command, tmp_path, capsys):
    path = tmp_path / "data.csv"
    path.write_text("x\n" + "".join(f"{int(i % 10 < 3)}\n" for i in range(1000)))
    base, flags = _cli_commands(str(path))[command]
    found = [f for flag in flags for value in CLI_BAD
             if (f := _cli_finding(_set_flag(base, flag, value), flag, capsys))]
    assert not found, "\n".join(found)
