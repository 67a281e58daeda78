"""The ppk command line: defaults work, JSON is parseable, errors are clear."""
import json
import subprocess
import sys

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
    assert out["sigma"] == r.sigma and out["reason"] == r.reason
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
    assert ledger == json.loads(json.dumps(ppk.alg2(count=30000, n=100000, known=50000, eps=0.1, delta=1e-6,
                                                     rng=1).ledger()))
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
