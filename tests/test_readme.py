"""Every example in README.md runs, and what the README shows it printing is what it prints.

* The ```python blocks are doctests (``>>>``), run in order in one namespace with ELLIPSIS (``...``
  in an output stands for digits or text left out) and NORMALIZE_WHITESPACE.
* The shell transcripts: every ``$ ppk ...`` line is run (``ppk.cli.main``, the console script's
  code; the compose example also as the installed ``ppk`` script); the lines the README shows after
  it must appear in its output in that order (``...`` lines stand for lines left out; the record's
  time and version are not compared). Commands whose output the README does not show are checked
  against the API here (``KEY_CHECKS``).
* The commands quoted in the prose (``INLINE``) run and print the numbers the API gives.
* Lines that cannot run here are listed in ``NOT_RUN`` with the reason; any other ``ppk`` command
  in a code block fails ``test_every_shell_command_is_run_or_listed``.
"""
from __future__ import annotations

import doctest
import json
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

import ppk
from ppk.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TEXT = README.read_text(encoding="utf-8")
FENCE = re.compile(r"^ *```([a-z]*)\n(.*?)^ *```$", re.S | re.M)

# fenced lines with a ppk command that the tests do not run, and why
NOT_RUN = {
    "pip install": "installs the package from the source tree: what .ci/run does from a clean clone "
                   "(ppk evaluate's quick grid is checked by tests/test_evaluate.py)",
    "--scheduler": "needs a dask cluster: tests/test_evaluate.py runs the sweep on a two-worker LocalCluster",
}


def _blocks(kind: str) -> list[str]:
    return [body for info, body in FENCE.findall(TEXT) if (info == "python") == (kind == "python")]


def _transcripts() -> list[tuple[str, list[str]]]:
    """(command, the output lines shown after it) for every ``$ ppk`` line of the README."""
    found = []
    for body in _blocks("shell"):
        lines = [line.strip() for line in body.splitlines()]
        for i, line in enumerate(lines):
            if line.startswith("$ ppk "):
                shown = []
                for out in lines[i + 1:]:
                    if out.startswith("$ "):
                        break
                    shown.append(out)
                found.append((line[2:], shown))
    return found


TRANSCRIPTS = _transcripts()
_STAMP = re.compile(r"ppk \S+, \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(UTC\)")


def _normal(line: str) -> str:
    return _STAMP.sub("ppk VERSION, TIME (UTC)", line.rstrip())


def _run(command: str, capsys) -> str:
    argv = shlex.split(command, comments=True)
    assert argv[0] == "ppk"
    try:
        code = main(argv[1:])
    except SystemExit as stop:      # argparse's --version
        code = stop.code
    out = capsys.readouterr().out
    assert code in (0, None), out
    return out


def _assert_shown(out: str, shown: list[str]) -> None:
    actual = [_normal(line) for line in out.splitlines()]
    at = 0
    for line in (_normal(s) for s in shown if s.strip() and s.strip() != "..."):
        assert line in actual[at:], f"the README shows {line!r}; the command printed:\n{out}"
        at = actual.index(line, at) + 1


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    """The examples write curve.png and read survey.csv in the current directory."""
    monkeypatch.chdir(tmp_path)
    with open(tmp_path / "survey.csv", "w") as fh:
        fh.write("id,smoker\n" + "".join(f"{i},{int(i % 4 == 0)}\n" for i in range(20_000)))
    return tmp_path


def test_every_python_block_is_a_doctest():
    blocks = _blocks("python")
    assert len(blocks) >= 8
    for body in blocks:
        assert body.lstrip().startswith(">>> "), f"a README example that the tests would not run:\n{body}"


def test_readme_python_examples(in_tmp):
    pytest.importorskip("matplotlib")       # plot_privacy_curve
    pytest.importorskip("dp_accounting")    # PLD.to_dp_accounting
    test = doctest.DocTestParser().get_doctest(TEXT, {}, "README.md", str(README), 0)
    assert len(test.examples) >= 90
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
    assert (in_tmp / "curve.png").stat().st_size > 10_000


def _key_checks(command: str, out: str) -> None:
    """What the README does not show of a command's output, checked against the API."""
    if "--json" in command:
        got = json.loads(out)
        want = ppk.alg1(n=10_000_000, known=5_000_000, p=0.5, eps=0.001, delta=1e-9)
        assert got["sigma"] == want.scale and got["evaluations"] == want.evaluations
    elif command.startswith("ppk curve"):
        q = ppk.CountingQuery(n=100_000, known=50_000, p=0.5, sigma=3.0)
        assert f"{q.delta(0.2):g}" in out and pathlib.Path("curve.png").stat().st_size > 10_000
    elif command.startswith("ppk release"):
        assert "released value:" in out and "20000 rows" in out
        assert ("discrete Gaussian" in out or "discrete gaussian" in out) == ("discrete_gaussian" in command)


@pytest.mark.parametrize("command, shown", TRANSCRIPTS, ids=[c for c, _ in TRANSCRIPTS])
def test_shell_transcript(command, shown, in_tmp, capsys):
    if command.startswith("ppk curve"):
        pytest.importorskip("matplotlib")
    out = _run(command, capsys)
    _assert_shown(out, shown)
    _key_checks(command, out)


def test_the_compose_transcript_through_the_installed_script(in_tmp):
    command, shown = next((c, s) for c, s in TRANSCRIPTS if c.startswith("ppk compose"))
    run = subprocess.run([sys.executable, "-m", "ppk", *shlex.split(command)[1:]], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    _assert_shown(run.stdout, shown)


def _histogram_bracket():
    lo, hi = ppk.HistogramQuery(n=10_000, known=5_000, probs=[0.5, 0.3, 0.2], sigma=2.0).delta_bracket(0.05)
    return [f"{lo:g}", f"{hi:g}"]


def _threshold_deltas():
    from ppk.related import pk
    m = pk.ThresholdCount(n=1000, p=1e-6, known=100, threshold=100)
    return [f"{pk.ppk_delta(m, eps=0.1).log_delta:.6f}", f"{pk.apk_delta(m, eps=0.1).delta:g}"]


# commands quoted in the README's prose -> what their output must contain
INLINE = {
    "ppk histogram --probs 0.5,0.3,0.2 --n 10000 --known 5000 --sigma 2": _histogram_bracket,
    "ppk pk threshold --n 1000 --p 1e-6 --threshold 100 --known 100 --eps 0.1": _threshold_deltas,
    "ppk sp tables": lambda: ["0.0225 [0.0225]", "0.0203 [0.0203]"],   # "all match to the printed digits"
    "ppk --version": lambda: [f"ppk {ppk.__version__}"],
}


@pytest.mark.parametrize("command", sorted(INLINE))
def test_inline_command(command, capsys):
    assert f"`{command}`" in TEXT
    out = _run(command, capsys)
    for want in INLINE[command]():
        assert want in out, f"{want!r} not in the output of {command}:\n{out}"


def test_every_shell_command_is_run_or_listed():
    for body in _blocks("shell"):
        for line in (line.strip() for line in body.splitlines()):
            if line.startswith("$ "):
                assert line.startswith("$ ppk "), line
            elif re.search(r"(^|&& )ppk ", line):
                assert any(key in line for key in NOT_RUN), f"a README command that no test runs: {line}"
    assert len(TRANSCRIPTS) >= 8


def test_the_readme_states_the_measured_evaluation_times():
    # one measured source (ppk.evaluation.MEASURED_SECONDS) for the README and `ppk evaluate --help`
    from ppk.evaluation import MEASURED_SECONDS
    text = README.read_text()
    quick = f"{MEASURED_SECONDS['quick']:g} s"
    assert f"81 points; {quick} on a 2-core" in text and f"`quick` (81 points) takes {quick}" in text
    assert f"took {MEASURED_SECONDS['thesis']:g} s in one run" in text
