"""The ppk command line: defaults work, JSON is strict and carries its record, errors are clear,
Ctrl-C stops every command cleanly, CSV input is read strictly."""
import datetime
import hashlib
import hmac
import json
import signal
import subprocess
import sys
import time
from fractions import Fraction

import pytest

import ppk
from ppk.cli import main


def test_calibrate_default_table(capsys):
    assert main(["calibrate"]) == 0
    out = capsys.readouterr().out
    assert "PPK-DP, Algorithm 1" in out and "analytic Gaussian" in out and "baseline/PPK" in out


def test_calibrate_json_matches_api(capsys):
    assert main(["calibrate", "--n", "5000", "--known", "100", "--p", "0.3", "--eps", "0.05", "--delta", "1e-8",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    r = ppk.alg1(n=5000, known=100, p=0.3, eps=0.05, delta=1e-8)
    assert out["sigma"] == r.scale and out["reason"] == r.reason
    assert out["baselines"]["analytic Gaussian (Balle-Wang)"] == pytest.approx(
        ppk.baselines.analytic_gaussian_sigma(eps=0.05, delta=1e-8))
    assert out["gain_vs_analytic"] >= 1.0


def test_calibrate_eps_ge_1_has_no_classic(capsys):
    assert main(["calibrate", "--n", "100", "--known", "99", "--eps", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["baselines"]["classic Gaussian (Thm 3.1)"] is None


def test_delta_command_prints_tiny_values(capsys):
    assert main(["delta", "--eps", "1.0"]) == 0
    assert "e-2418" in capsys.readouterr().out   # delta ~ 5e-2418, beyond the float range


def test_bad_input_is_a_clear_error(capsys):
    assert main(["calibrate", "--known", "100000"]) == 2
    assert "known must be < n" in capsys.readouterr().err
    assert main(["calibrate", "--delta", "2"]) == 2
    assert "delta" in capsys.readouterr().err


def test_console_script_help():
    out = subprocess.run([sys.executable, "-m", "ppk", "--help"], capture_output=True, text=True, check=True).stdout
    assert "calibrate" in out and "delta" in out


def test_alg2_json_ledger(capsys):
    assert main(["alg2", "--count", "30000", "--n", "100000", "--known", "50000", "--eps", "0.1",
                 "--delta", "1e-6", "--seed", "1", "--insecure-for-testing", "--json"]) == 0
    ledger = json.loads(capsys.readouterr().out)
    assert ledger["insecure_for_testing"] is True
    record = ledger.pop("record")
    assert ledger.pop("null_means") == {}
    # the count estimate is one sampler draw: the mechanism gets what it leaves of --delta
    budget = ppk.records.release_budget(eps=0.1, delta=1e-6, draws=1)
    assert budget < 1e-6 and record["guarantee"]["delta"] <= 1e-6
    assert ledger == json.loads(json.dumps(ppk.alg2(count=30000, n=100000, known=50000, eps=0.1, delta=budget,
                                                     rng=1).ledger()))
    assert any("NOT PRIVATE" in w for w in record["warnings"])
    assert main(["alg2", "--count", "30000", "--n", "100000", "--known", "50000", "--eps", "0.1",
                 "--delta", "1e-6", "--seed", "1", "--insecure-for-testing"]) == 0
    out = capsys.readouterr().out
    assert "delta = k1 + k2 + k4 + T_L" in out and out.startswith("NOT A PRIVATE RELEASE")


def test_release_csv_end_to_end(tmp_path, capsys):
    path = tmp_path / "survey.csv"
    rows = ["id,smoker"] + [f"{i},{int(i % 10 < 3)}" for i in range(20_000)]
    path.write_text("\n".join(rows) + "\n")
    assert main(["release", "--csv", str(path), "--column", "smoker", "--known", "10000", "--eps", "0.5",
                 "--delta", "1e-6", "--seed", "4", "--insecure-for-testing", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert isinstance(out["value"], int) and abs(out["value"] - 6000) < 200
    assert "bias_estimate" in out["ledger"] and "value" not in out["ledger"]


def test_release_refuses_bad_rows_with_the_line_number(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("id,smoker\n1,0\n2,1\n3,yes\n4,0\n")
    assert main(["release", "--csv", str(path), "--column", "smoker", "--known", "1", "--eps", "1",
                 "--delta", "1e-6"]) == 2
    captured = capsys.readouterr()
    assert "line 4" in captured.err and "nothing was released" in captured.err and "'yes'" in captured.err
    assert captured.out == ""
    assert main(["release", "--csv", str(path), "--column", "age", "--known", "1", "--eps", "1",
                 "--delta", "1e-6"]) == 2
    assert "no column 'age'" in capsys.readouterr().err
    assert main(["release", "--csv", str(tmp_path / "missing.csv"), "--column", "x", "--known", "1", "--eps", "1",
                 "--delta", "1e-6"]) == 2


def test_pk_threshold_headline(capsys):
    assert main(["pk", "threshold", "--n", "1000", "--p", "1e-6", "--threshold", "100", "--known", "100",
                 "--eps", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "e-461" in out and "worst: 100 known 1s" in out
    assert main(["pk", "threshold", "--n", "1000", "--p", "1e-6", "--threshold", "100", "--known", "100",
                 "--eps", "0.1", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["apk"]["delta"] > 0.99 and res["ppk"]["log_delta"] < -1000


def test_sp_tables(capsys):
    assert main(["sp", "tables"]) == 0
    out = capsys.readouterr().out
    assert "Table I" in out and "Table II" in out and ".0225 [0.0225]" in out and "992" in out
    assert main(["sp", "tables", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["I"]) == 15 and len(data["II"]) == 9


def test_risk_gdpr(capsys):
    assert main(["risk", "gdpr"]) == 0
    out = capsys.readouterr().out
    assert "$74,434.41" in out and "$37,805.86" in out and "0.2741" in out
    assert main(["risk", "gdpr", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["saving"] == pytest.approx(36628.549, abs=1e-3)


# -- Ctrl-C ---------------------------------------------------------------------------------------
_LONG = {   # each runs for 1.6 s or more after ppk is loaded (2 cores): still running when the signal comes
    "delta": ["delta", "--n", "1e12", "--known", "0", "--p", "0.3", "--sigma", "0.3", "--eps",
              *[str(0.001 * i) for i in range(1, 2000)]],
    "histogram": ["histogram", "--n", "1e7", "--known", "0", "--probs", "0.2,0.2,0.6", "--sigma", "0", "--eps",
                  *[str(0.05 + 0.00001 * i) for i in range(3000)]],      # the exact sigma = 0 sum, ~3 ms an eps
    "risk figures": ["risk", "figures", "--out", "{tmp}"],
}
# The child loads ppk, says so, then runs the command line's main() -- what `ppk` runs.  (A Ctrl-C while
# Python is still importing the package, before any ppk code runs, is Python's to report.)
_CHILD = "import sys, ppk.cli; print('loaded', flush=True); sys.exit(ppk.cli.main(sys.argv[1:]))"


@pytest.mark.parametrize("name", list(_LONG))
def test_ctrl_c_stops_every_command_with_one_line_and_exit_130(name, tmp_path):
    if name == "risk figures":
        pytest.importorskip("matplotlib")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in _LONG[name]]
    # SIG_DFL first: a shell starts background jobs (a CI script's) with SIGINT ignored, and the child
    # would inherit that -- then no Ctrl-C could reach it, whatever ppk does
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.stdout.readline() == "loaded\n"
    time.sleep(1.0)
    assert proc.poll() is None, f"ppk {name} ended within 1 s: the test would not interrupt it"
    proc.send_signal(signal.SIGINT)
    start = time.monotonic()
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - start < 3.0
    assert proc.returncode == 130
    assert "Traceback" not in err
    assert err.strip().splitlines() == [f"ppk {name}: interrupted"]


def test_ctrl_c_inside_a_short_command_is_answered_the_same_way(monkeypatch, capsys):
    # `ppk sp tables` takes ~0.5 s once loaded, too short to signal reliably: raise where Ctrl-C lands
    from ppk.related import sp

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(sp, "compare_sp_dp", interrupted)
    assert main(["sp", "tables"]) == 130
    captured = capsys.readouterr()
    assert captured.err.strip() == "ppk sp tables: interrupted" and "Traceback" not in captured.err


# -- every --json output carries a strict record ------------------------------------------------------
def _strict(text):
    def refuse(token):
        raise AssertionError(f"non-standard JSON token {token}")
    return json.loads(text, parse_constant=refuse)


def _check_record(record, *, input_=None):
    assert set(record) == {"format", "ppk_version", "created_utc", "input", "attacker", "guarantee", "noise",
                           "warnings"}
    assert record["format"] == "ppk-record/1" and record["ppk_version"] == ppk.__version__
    when = datetime.datetime.strptime(record["created_utc"], "%Y-%m-%dT%H:%M:%SZ")
    assert abs((datetime.datetime.utcnow() - when).total_seconds()) < 600
    assert record["input"] == input_
    assert isinstance(record["attacker"]["text"], str) and record["attacker"]["belief_source"] in (
        "estimated_privately", "stated_by_steward", "ppk_default", "none")
    assert isinstance(record["warnings"], list) and all(isinstance(w, str) for w in record["warnings"])
    g = record["guarantee"]
    if isinstance(g.get("eps"), float):   # one guarantee: the total delta is never below its parts
        assert Fraction(g["delta"]) >= Fraction(g["delta_mechanism"]) + Fraction(g["delta_sampler"])
    return record


_JSON_COMMANDS = {
    "delta": ["delta", "--eps", "0.1", "1"],
    "calibrate": ["calibrate"],
    "alg2": ["alg2", "--count", "3000", "--n", "10000", "--known", "5000", "--eps", "0.5", "--delta", "1e-6"],
    "histogram curve": ["histogram", "--probs", "0.5,0.3,0.2", "--n", "10000", "--known", "5000", "--sigma", "2"],
    "histogram calibrate": ["histogram", "--probs", "0.5,0.3,0.2", "--n", "10000", "--known", "5000", "--eps",
                            "0.1", "--delta", "1e-9"],
    "pk threshold": ["pk", "threshold", "--n", "1000", "--p", "1e-6", "--threshold", "100", "--known", "100",
                     "--eps", "0.1"],
    "sp tables": ["sp", "tables"],
    "risk gdpr": ["risk", "gdpr"],
}


@pytest.mark.parametrize("name", list(_JSON_COMMANDS))
def test_every_json_output_is_strict_and_carries_the_record(name, capsys):
    assert main(_JSON_COMMANDS[name] + ["--json"]) == 0
    record = _check_record(_strict(capsys.readouterr().out)["record"])
    if name not in ("sp tables", "risk gdpr"):   # the library's own models: a stated belief, not plain DP
        assert any("NOT STANDARD DP" in w for w in record["warnings"])
    # the table says the same in words
    assert main(_JSON_COMMANDS[name]) == 0
    out = capsys.readouterr().out
    assert f"record (ppk-record/1): ppk {ppk.__version__}" in out and "attacker: " in out
    for w in record["warnings"]:
        assert f"WARNING: {w}" in out


def test_a_delta_below_the_float_range_is_never_reported_as_zero(capsys):
    # delta = 5.7e-461 (passive) and 5e-2418 (the default curve at eps = 1): the record says the least float
    assert main(["pk", "threshold", "--n", "1000", "--p", "1e-6", "--threshold", "100", "--known", "100",
                 "--eps", "0.1", "--json"]) == 0
    assert _strict(capsys.readouterr().out)["record"]["guarantee"]["delta"] > 0
    assert main(["delta", "--eps", "1.0", "--json"]) == 0
    out = _strict(capsys.readouterr().out)
    assert out["curve"][0]["delta_upper"] > 0 and out["record"]["guarantee"]["delta"][0] > 0


def _survey(path, rows=20_000):
    path.write_text("id,smoker\n" + "".join(f"{i},{int(i % 10 < 3)}\n" for i in range(rows)))
    return path


def test_release_record_names_the_file_its_commitment_and_the_column(tmp_path, capsys):
    path = _survey(tmp_path / "survey.csv")
    key = tmp_path / "steward.key"
    argv = ["release", "--csv", str(path), "--column", "smoker", "--known", "10000", "--eps", "0.5",
            "--delta", "1e-6"]
    assert main(argv + ["--json", "--commitment-key", str(key)]) == 0
    out = _strict(capsys.readouterr().out)
    mac = hmac.new(bytes.fromhex(key.read_text()), path.read_bytes(), hashlib.sha256).hexdigest()
    record = _check_record(out["record"], input_=dict(file=str(path), commitment=dict(scheme="hmac-sha256", value=mac),
                                                      column="smoker", rows=20_000))
    assert oct(key.stat().st_mode & 0o777) == "0o600"
    assert record["attacker"]["rows_known"] == 10_000 and record["attacker"]["belief_source"] == "estimated_privately"
    g = record["guarantee"]
    assert g["eps"] == 0.5 and g["delta_mechanism"] < 1e-6 and g["delta"] <= 1e-6
    draws = 1 + (out["ledger"]["sigma"] > 0)
    assert g["delta_sampler"] == ppk.samplers.sampler_delta(0.5, draws) > 0
    assert record["noise"]["scale"] == out["ledger"]["sigma"]
    assert main(argv) == 0      # no key asked for: no commitment, and no plain hash either
    text = capsys.readouterr().out
    assert "no commitment (--commitment-key)" in text and "column 'smoker'" in text and "guarantee: PPK-DP" in text
    assert hashlib.sha256(path.read_bytes()).hexdigest() not in text


def test_an_exact_release_says_so_in_its_warnings(tmp_path, capsys):
    # natural noise alone suffices: sigma = 0, the exact count is published -- the record must warn
    path = _survey(tmp_path / "survey.csv", rows=10_000)
    assert main(["release", "--csv", str(path), "--column", "smoker", "--known", "5000", "--eps", "0.5",
                 "--delta", "1e-6", "--json"]) == 0
    out = _strict(capsys.readouterr().out)
    assert out["ledger"]["sigma"] == 0 and out["noise"] == "none" and out["record"]["noise"]["law"] == "none"
    assert any(w.startswith("NO NOISE") for w in out["record"]["warnings"])


# -- strict CSV -----------------------------------------------------------------------------------
@pytest.mark.parametrize("body, line, what", [
    # the issue: a quote opened in another column swallowed a line; the old reader released 2 of 3 rows
    ('1,"Doe,0\n2,Roe",1\n3,Poe,0\n', 2, "malformed quoting"),
    ('1,Doe,0\n2,R"oe,1\n', 3, "malformed quoting"),             # a quote inside an unquoted field
    ('1,Doe,0\n2, "Roe",1\n', 3, "malformed quoting"),           # a quote after a space: not a quoted field
    ('1,"Doe"x,0\n', 2, "malformed quoting"),                     # text after the closing quote
    ('1,Doe,0\n2,Roe,1,7\n', 3, "4 fields, but the header has 3"),
    ('1,Doe,0\n2,R\x00oe,1\n', 3, "NUL byte"),
])
def test_a_malformed_csv_row_is_refused_with_its_line(tmp_path, capsys, body, line, what):
    # every case is damage outside the released column, which the old reader read past (exit 0)
    path = tmp_path / "bad.csv"
    path.write_text("id,name,smoker\n" + body)
    assert main(["release", "--csv", str(path), "--column", "smoker", "--known", "1", "--eps", "1",
                 "--delta", "1e-6", "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"line {line}" in captured.err and what in captured.err and "nothing was released" in captured.err


def test_a_row_with_too_few_fields_is_refused_as_such(tmp_path, capsys):
    path = tmp_path / "short.csv"
    path.write_text("id,smoker,name\n1,0,Doe\n2,1\n")
    assert main(["release", "--csv", str(path), "--column", "smoker", "--known", "1", "--eps", "1",
                 "--delta", "1e-6"]) == 2
    assert "line 3: 2 fields, but the header has 3" in capsys.readouterr().err


def test_csv_quoting_that_is_well_formed_is_read(tmp_path, capsys):
    path = tmp_path / "quoted.csv"
    path.write_text('id,name,smoker\r\n1,"Doe, J",0\r\n2,"say ""hi""",1\r\n\r\n3,x,"1"\r\n')
    from ppk._io import read_binary_column
    assert read_binary_column(str(path), "smoker").counts == (1, 2)


def test_a_utf8_byte_order_mark_is_not_part_of_the_first_column(tmp_path, capsys):
    path = tmp_path / "excel.csv"
    path.write_bytes(b"\xef\xbb\xbfsmoker,id\r\n" + b"".join(b"%d,%d\r\n" % (i % 2, i) for i in range(100)))
    from ppk._io import read_binary_column
    read = read_binary_column(str(path), "smoker")
    assert read.counts == (50, 50) and read.commitment is None
    assert read_binary_column(str(path), "smoker", key=b"k" * 32).commitment == hmac.new(
        b"k" * 32, path.read_bytes(), hashlib.sha256).hexdigest()
    assert main(["release", "--csv", str(path), "--column", "smoker", "--known", "10", "--eps", "1",
                 "--delta", "1e-6", "--json"]) == 0
    assert _strict(capsys.readouterr().out)["record"]["input"]["rows"] == 100


def test_ctrl_c_turned_into_another_error_by_a_library_still_exits_130(monkeypatch, capsys):
    # a Ctrl-C that lands in a library which catches it and raises something else while handling it (an
    # import interrupted half-way): the same one line and exit code as any Ctrl-C (it once gave exit 1)
    from ppk.related import sp

    def interrupted_then_broken(*args, **kwargs):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise RuntimeError("a half-imported module")
    monkeypatch.setattr(sp, "compare_sp_dp", interrupted_then_broken)
    assert main(["sp", "tables"]) == 130
    captured = capsys.readouterr()
    assert captured.err.strip() == "ppk sp tables: interrupted" and "Traceback" not in captured.err


def test_a_count_record_says_whether_the_belief_was_stated(capsys):
    # ppk delta without --p used p = 0.5 and its record said "stated by the steward (--p)": a belief nobody gave
    for extra, source, warned in (([], "ppk_default", "ASSUMED BELIEF"), (["--p", "0.5"], "stated_by_steward",
                                                                          "STATED BELIEF")):
        assert main(["delta", "--n", "1000", "--known", "500", "--eps", "0.5", "--json", *extra]) == 0
        record = json.loads(capsys.readouterr().out)["record"]
        assert record["attacker"]["belief_source"] == source and record["warnings"][0].startswith(warned)
