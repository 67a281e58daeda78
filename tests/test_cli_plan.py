"""``ppk plan`` and ``--ledger``: a plan released once with one record, and a budget kept across releases."""
from __future__ import annotations

import json
import random

import pytest

from ppk.cli import main
from ppk.records import verify_input

PLAN = """known = 1500
eps = 0.5
delta = 1e-6
min_prob = 0.05

[columns]
smoker = ["0", "1"]
region = ["n", "s", "e"]

[[statistics]]
name = "smokers"
count = { smoker = "1" }

[[statistics]]
name = "by region"
crosstab = ["smoker", "region"]
noise = 2.0
"""


@pytest.fixture
def table(tmp_path):
    rng = random.Random(3)
    rows = [(int(rng.random() < 0.3), rng.choice("nse")) for _ in range(2000)]
    csv = tmp_path / "t.csv"
    csv.write_text("smoker,region\n" + "".join(f"{s},{r}\n" for s, r in rows))
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    exact = sum(s for s, _ in rows)
    return str(csv), str(plan), exact


def test_a_plan_is_calibrated_jointly_and_released_with_one_record(table, tmp_path, capsys):
    csv, plan, exact = table
    key = tmp_path / "k"
    assert main(["plan", "--plan", plan, "--csv", csv, "--commitment-key", str(key), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    smokers, cells = out["statistics"]
    assert list(smokers["values"]) == ["smoker=1"] and len(cells["values"]) == 6
    assert cells["sigma"][0] == pytest.approx(2 * smokers["sigma"][0], rel=1e-15)   # the plan's noise ratios
    assert abs(smokers["values"]["smoker=1"] - exact) < 10 * smokers["sigma"][0] + 1
    g = out["record"]["guarantee"]
    assert g["kind"] == "PPK-DP" and g["eps"] == 0.5 and g["delta"] <= 1e-6
    assert 0 < smokers["sigma"][0] and cells["sigma"][0] < out["sigma_dp"]
    assert verify_input(csv, key=key.read_text(), commitment=out["record"]["input"]["commitment"]["value"])


def test_the_ledger_composes_releases_and_refuses_past_its_budget(table, tmp_path, capsys):
    csv, plan, _ = table
    ledger = tmp_path / "ledger.json"
    assert main(["plan", "--plan", plan, "--csv", csv, "--ledger", str(ledger), "--budget", "0.7,1e-6"]) == 0
    assert "ledger: 1 release(s) spend eps = 0.5" in capsys.readouterr().out
    before = ledger.read_text()
    # a count of the same file: composed with the plan at their added noise (plain DP), past eps = 0.7
    assert main(["release", "--csv", csv, "--column", "smoker", "--known", "1500", "--eps", "0.5", "--delta", "1e-6",
                 "--ledger", str(ledger)]) == 2
    err = capsys.readouterr().err
    assert "cannot pay for this release" in err and "Nothing was released" in err
    doc = json.loads(ledger.read_text())
    # the refused count's estimate was drawn (Algorithm 2 calibrates on it): its eps/2 stays spent
    assert [r["command"] for r in doc["releases"]] == ["plan", "release (refused by the ledger: its estimate only)"]
    assert doc["releases"][0] == json.loads(before)["releases"][0]
    assert len(doc["releases"][0]["input"]["sha256"]) == 64   # the private ledger knows the file


@pytest.mark.parametrize("argv, message", [
    (["plan", "--plan", "PLAN"], "give --n"),
    (["plan", "--plan", "PLAN", "--n", "1000"], "known (1500) must be less than the rows given with --n (1000)"),
    (["plan", "--plan", "PLAN", "--csv", "CSV", "--n", "5"], "--n is read from --csv"),
    (["plan", "--plan", "PLAN", "--csv", "CSV", "--ledger", "NEW"], "give its budget (--budget)"),
    (["plan", "--plan", "PLAN", "--csv", "CSV", "--budget", "1,1e-6"], "--budget goes with --ledger"),
])
def test_wrong_use_is_refused_in_cli_terms(table, tmp_path, capsys, argv, message):
    csv, plan, _ = table
    argv = [{"PLAN": plan, "CSV": csv, "NEW": str(tmp_path / "new.json")}.get(a, a) for a in argv]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_without_a_csv_the_plan_is_calibrated_for_n_rows(table, capsys):
    _, plan, _ = table
    assert main(["plan", "--plan", plan, "--n", "2000"]) == 0
    out = capsys.readouterr().out
    assert "calibrated jointly" in out and "noise saved" in out
