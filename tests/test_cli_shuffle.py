"""``ppk shuffle``: the exact curve's bracket and certified epsilon next to the clone bound, as the API gives them."""
from __future__ import annotations

import json
import math

import pytest

import ppk
from ppk.cli import main
from ppk.related.shuffle_clones import clone_bound_epsilon


def test_the_command_prints_the_apis_numbers(capsys):
    assert main(["shuffle", "--n", "1000", "--eps0", "2", "--eps", "0.5", "--delta", "1e-6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    q = ppk.ShuffledRandomizedResponse(n=1000, eps0=2.0)
    assert out["epsilons"][0]["eps"] == q.epsilon(1e-6)
    assert out["epsilons"][0]["clone_bound"] == clone_bound_epsilon(n=1000, eps0=2.0, delta=1e-6)
    lo, up = q.delta_bracket(0.5)
    assert out["curve"][0]["delta_lower"] == pytest.approx(lo, rel=1e-15) and out["curve"][0]["delta_upper"] >= up
    assert out["record"]["guarantee"]["kind"] == "DP"


def test_partial_knowledge_and_wrong_input(capsys):
    assert main(["shuffle", "--n", "300", "--eps0", "2", "--known", "150", "--p", "0.3", "--eps", "0.5"]) == 0
    assert "knows 150 of the other 299" in capsys.readouterr().out
    assert main(["shuffle", "--n", "300", "--known", "150"]) == 2
    assert "needs --p" in capsys.readouterr().err
    assert main(["shuffle", "--eps0", "-1"]) == 2
    assert "--eps0 must be" in capsys.readouterr().err
    assert main(["shuffle", "--n", "300", "--p", "0.3"]) == 2   # a belief about no one: refused, not ignored
    assert "--p is the belief about the users the attacker does not know" in capsys.readouterr().err


def test_progress_goes_to_a_terminal_only(capsys):
    # the bar is drawn on stderr only when it is a terminal (pytest's is not); --quiet turns it off anywhere
    for extra in ([], ["--quiet"]):
        assert main(["shuffle", "--n", "30000", "--eps0", "3", "--eps", "0.05", "--delta", "1e-6"] + extra) == 0
        captured = capsys.readouterr()
        assert captured.err == "" and "clone bound" in captured.out


def test_k_ary_reports_and_its_refusals(capsys):
    assert main(["shuffle", "--n", "300", "--eps0", "2", "--categories", "3", "--eps", "0.5", "--delta", "1e-6",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    q = ppk.ShuffledRandomizedResponse(n=300, eps0=2.0, categories=3)
    assert out["categories"] == 3 and out["epsilons"][0]["eps"] == q.epsilon(1e-6)
    # beside the tighter published clone bound (FMT23, as README's k-ary numbers), not the binary command's FMT21
    assert out["epsilons"][0]["clone_bound"] == clone_bound_epsilon(n=300, eps0=2.0, delta=1e-6, variant="fmt23")
    lo, up = q.delta_bracket(0.5)
    assert out["curve"][0]["delta_lower"] == pytest.approx(lo, rel=1e-15) and out["curve"][0]["delta_upper"] >= up
    assert main(["shuffle", "--n", "300", "--categories", "4", "--known", "0", "--eps", "0.5"]) == 0
    assert "knows no other value" in capsys.readouterr().out
    for bad, said in ((["--known", "5"], "--known 5: with --categories >= 3"), (["--p", "0.3"], "--p is for binary"),
                      (["--known", "400"], "--known must be <= 299")):
        assert main(["shuffle", "--n", "300", "--categories", "3", *bad]) == 2
        assert said in capsys.readouterr().err
    with pytest.raises(SystemExit):   # argparse's own refusal
        main(["shuffle", "--categories", "17"])
    assert "invalid choice" in capsys.readouterr().err


def test_a_delta_the_clone_bound_does_not_take_leaves_its_column_blank(capsys):
    # the clone bound's search refuses delta = 1e-300 ("math domain error" was all the command said); ppk's eps
    # is still the answer, and the comparison reads n/a
    assert main(["shuffle", "--n", "10000", "--eps0", "2", "--eps", "0.5", "--delta", "1e-300", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "n/a" in out and "clone bound eps (FMT21)" in out


def test_one_user_and_no_local_privacy_are_answered(capsys):
    # both were refused by the clone-bound column (it takes n >= 2, eps0 > 0); ppk's answer needs neither: one
    # user is randomized response alone, eps0 = 0 a coin that says nothing (delta = 0)
    assert main(["shuffle", "--n", "1", "--eps0", "1", "--eps", "0.5", "--delta", "1e-6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["curve"][0]["clone_bound"] is None
    assert out["curve"][0]["delta_upper"] >= (math.exp(1) - math.exp(0.5)) / (1 + math.exp(1))   # RR's delta(0.5)
    assert main(["shuffle", "--n", "100", "--eps0", "0", "--eps", "0.5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["curve"][0]["delta_upper"] == 0.0
