"""``ppk compose``: the printed and JSON numbers are the Python API's (rounded outward in the table), bad
input is one line naming the option with exit status 2, and --help explains the units and the grid."""
import json
import math
import re

import pytest

import ppk
from ppk.cli import main

PLD = ppk.PrivacyLossDistribution


def _rr(eps0, dx):
    e = math.exp(-eps0)
    p = [1 / (1 + e), e / (1 + e)]
    return PLD.from_pmfs(p, p[::-1], value_discretization_interval=dx)


def _gauss_rr(dx):
    """--gaussian 10x200 --randomized-response 0.1x300, as the Python API builds it (a fresh plan per call)."""
    return PLD.from_gaussian_mechanism(10.0, value_discretization_interval=dx).self_compose(200).compose(
        _rr(0.1, dx).self_compose(300))


def _subsampled():
    return PLD.from_gaussian_mechanism(2.0, sampling_prob=0.01, value_discretization_interval=1e-4).self_compose(3000)


_GAUSS_RR = ["compose", "--gaussian", "10x200", "--randomized-response", "0.1x300", "--interval", "1e-3"]
_SUBSAMPLED = ["compose", "--subsampled-gaussian", "2:0.01x3000", "--interval", "1e-4"]


def _delta_rows(out):
    """{delta: (eps, lower, upper)} from the table 'delta  eps (certified)  delta bracket at that eps'."""
    rows = re.findall(r"^(\S+)\s+(\S+)\s+\[(\S+), (\S+)\]$", out, re.M)
    return {float(d): (float(e), float(lo), float(hi)) for d, e, lo, hi in rows}


@pytest.mark.parametrize("argv, plan, deltas", [(_GAUSS_RR, _gauss_rr, [1e-6, 1e-12]),
                                                (_SUBSAMPLED, _subsampled, [1e-15])], ids=["gauss+rr", "subsampled"])
def test_the_certified_eps_is_the_apis_rounded_up(argv, plan, deltas, capsys):
    if plan is _gauss_rr:
        plan = lambda: _gauss_rr(1e-3)   # noqa: E731
    assert main(argv + ["--delta", *map(str, deltas)]) == 0
    out = capsys.readouterr().out
    assert "plan: " in out and "--interval" in out
    rows = _delta_rows(out)
    assert sorted(rows) == sorted(deltas)
    for d in deltas:
        pld = plan()
        eps = pld.get_epsilon_for_delta(d)
        lo, hi = pld.delta_bracket(eps)
        printed_eps, printed_lo, printed_hi = rows[d]
        assert eps <= printed_eps <= eps * (1 + 1e-7)          # 8 digits, rounded up
        assert lo * (1 - 1e-5) <= printed_lo <= lo and hi <= printed_hi <= hi * (1 + 1e-5)
        assert hi <= d


def test_json_has_the_apis_numbers(capsys):
    assert main(_GAUSS_RR + ["--eps", "1", "20", "--delta", "1e-6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["interval"] == 1e-3 and out["sensitivity"] == 1.0
    assert out["plan"] == [dict(mechanism="gaussian", values=dict(SIGMA=10.0), times=200),
                           dict(mechanism="randomized-response", values=dict(EPS0=0.1), times=300)]
    lo, hi = _gauss_rr(1e-3).delta_bracket([1.0, 20.0])
    log_lo, log_hi = _gauss_rr(1e-3).log_delta_bracket([1.0, 20.0])
    for row, a, b, la, lb in zip(out["curve"], lo, hi, log_lo, log_hi):
        assert row["log_delta_lower"] == la and row["log_delta_upper"] == lb
        assert row["delta_upper"] == math.nextafter(b, math.inf)      # one ulp up: never below the API's end
        assert row["delta_lower"] == math.nextafter(a, 0.0)
    pld = _gauss_rr(1e-3)
    eps = pld.get_epsilon_for_delta(1e-6)
    (row,) = out["epsilons"]
    assert row["delta"] == 1e-6 and row["eps"] == eps
    assert row["at_eps_log_delta_upper"] == pld.log_delta_bracket(eps)[1]
    g = out["record"]["guarantee"]
    assert g["kind"] == "DP" and g["eps"] == [1.0, 20.0, eps] and g["delta_mechanism"][2] == 1e-6


@pytest.mark.parametrize("adjacency", ["remove", "add"])
def test_adjacency_reaches_the_subsampled_builders(adjacency, capsys):
    # the API's one-sided PLD of that adjacency, and the record says which neighbours were meant
    # (a grid of 1e-3: the adjacency, not the grid, is what is tested)
    argv = ["compose", "--subsampled-gaussian", "2:0.01x1000", "--adjacency", adjacency, "--eps", "1.34", "--json",
            "--interval", "1e-3"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    # the tails cut as deep as the answer needs, as the Accountant's (docs/dpsgd.md, "The tails"): its number,
    # within 0.1 % of the deepest cut's (e^-800) and inside that one's bracket
    acc = ppk.Accountant(value_discretization_interval=1e-3).add_subsampled_gaussian(
        sigma=2.0, sampling_prob=0.01, times=1000, adjacency=adjacency)
    lower, upper = acc.delta_bracket(1.34)
    pld = ppk.PrivacyLossDistribution.from_gaussian_mechanism(2.0, sampling_prob=0.01, adjacency=adjacency,
                                                              value_discretization_interval=1e-3,
                                                              log_mass_truncation_bound=-800.0).self_compose(1000)
    deep_lower, deep_upper = pld.delta_bracket(1.34)
    (row,) = out["curve"]
    assert out["adjacency"] == adjacency
    assert row["delta_upper"] == math.nextafter(upper, 1.0) and row["delta_lower"] == math.nextafter(lower, 0.0)
    assert deep_lower <= upper <= deep_upper * (1 + 1e-3)
    if adjacency == "add":      # e^-43.4 against the remove order's e^-33.7
        both = ppk.PrivacyLossDistribution.from_gaussian_mechanism(2.0, sampling_prob=0.01,
                                                                   value_discretization_interval=1e-3).self_compose(1000)
        assert row["log_delta_upper"] < both.log_delta_bracket(1.34)[1] - 9
    assert f"{adjacency} one row" in out["record"]["attacker"]["text"]


def test_the_subsampled_tails_reach_far_below_the_apis_default(capsys):
    # at the API's e^-50 cut, 3000 steps put ~e^-57 at infinite loss and no eps reaches 1e-50; the CLI cuts deeper
    # (a grid of 1e-3 on both sides: the tails, not the grid, are what is tested)
    api = ppk.PrivacyLossDistribution.from_gaussian_mechanism(2.0, sampling_prob=0.01,
                                                              value_discretization_interval=1e-3).self_compose(3000)
    assert api.get_epsilon_for_delta(1e-50) == math.inf
    assert main(["compose", "--subsampled-gaussian", "2:0.01x3000", "--delta", "1e-50", "--json",
                 "--interval", "1e-3"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["epsilons"]
    assert 4.6 < row["eps"] < 4.7 and row["at_eps_delta_upper"] <= 1e-50


def test_each_question_cuts_the_tails_as_deep_as_it_needs(capsys):
    # delta 1e-300 needs the deepest cut (e^-800) at once, 1e-5 the shallowest (e^-50): both eps agree with the
    # e^-800 PLD's (docs/dpsgd.md, "The tails"; a grid of 1e-2: the cuts, not the grid, are what is tested)
    assert main(["compose", "--subsampled-gaussian", "2:0.01x300", "--delta", "1e-300", "1e-5", "--json",
                 "--interval", "1e-2"]) == 0
    tiny, usual = json.loads(capsys.readouterr().out)["epsilons"]
    deep = ppk.PrivacyLossDistribution.from_gaussian_mechanism(2.0, sampling_prob=0.01, value_discretization_interval=1e-2,
                                                               log_mass_truncation_bound=-800.0).self_compose(300)
    assert tiny["eps"] == deep.get_epsilon_for_delta(1e-300) < math.inf
    assert usual["eps"] == pytest.approx(deep.get_epsilon_for_delta(1e-5), rel=1e-6)
    assert deep.delta_bracket(usual["eps"])[0] <= 1e-5


def test_a_delta_below_the_float_range_is_printed_from_its_log(capsys):
    # two Gaussian runs are one Gaussian, in closed form: delta(20) ~ e^-899
    assert main(["compose", "--gaussian", "3x2", "--eps", "20", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["curve"]
    assert row["delta_upper"] > 0 and row["log_delta_upper"] < -800
    assert main(["compose", "--gaussian", "3x2", "--eps", "20"]) == 0
    out = capsys.readouterr().out
    assert "ln(delta upper)" in out
    mantissa, exponent = re.search(r"^20\s+\S+\s+(\d\.?\d*)e(-\d+)\s", out, re.M).groups()
    assert math.log(float(mantissa)) + int(exponent) * math.log(10) >= row["log_delta_upper"]


@pytest.mark.parametrize("argv, words", [
    (["--gaussian", "10y200", "--eps", "1"], ["--gaussian 10y200", "SIGMA[xK]"]),
    (["--gaussian", "-1", "--eps", "1"], ["--gaussian -1", "SIGMA", "> 0"]),
    (["--subsampled-gaussian", "2:1.5x10", "--eps", "1"], ["--subsampled-gaussian 2:1.5x10", "Q", "(0, 1]"]),
    (["--subsampled-gaussian", "2x10", "--eps", "1"], ["--subsampled-gaussian 2x10", "SIGMA:Q[xK]"]),
    (["--laplace", "1x0", "--eps", "1"], ["--laplace 1x0", "K", ">= 1"]),
    (["--randomized-response", "-0.1", "--eps", "1"], ["--randomized-response -0.1", "EPS0"]),
    (["--eps", "1"], ["no mechanism", "--gaussian"]),
    (["--gaussian", "3"], ["--eps", "--delta"]),
    (["--laplace", "1x1e12", "--eps", "1"], ["--laplace 1x1e12", "--interval", "fewer compositions"]),
    (["--gaussian", "3", "--delta", "2"], ["--delta", "(0, 1]"]),
    (["--gaussian", "3", "--eps", "1", "--interval", "0"], ["--interval", "> 0"]),
    (["--gaussian", "3", "--eps", "1", "--sensitivity", "-2"], ["--sensitivity must"]),
])
def test_bad_input_is_one_line_naming_the_option(argv, words, capsys):
    assert main(["compose", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ppk compose: error: ") and err.count("\n") == 1 and "Traceback" not in err
    for w in words:
        assert w in err


def test_help_explains_units_certification_and_the_grid(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["compose", "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    for words in ("holds the true delta", "never\nbelow the true eps", "standard deviation in units of the sensitivity",
                  "--interval is the grid", "ppk compose --gaussian 10x200 --randomized-response 0.1x300"):
        assert words in out


def test_the_default_grid_does_not_under_report(capsys):
    assert main(["compose", "--gaussian", "10x200", "--randomized-response", "0.1x300", "--delta", "1e-6",
                 "--json"]) == 0
    eps = json.loads(capsys.readouterr().out)["epsilons"][0]["eps"]
    assert 12.546155 <= eps <= 12.546155 * (1 + 1e-3)   # the exact 12.5461554 (tests/test_pld_tilted.py's oracle)


def test_a_plot_that_cannot_be_written_names_the_option(capsys, tmp_path):
    # a directory that exists but takes no file: the OSError said only "[Errno 2] ... '/proc/c.png'"
    pytest.importorskip("matplotlib")
    blocked = tmp_path / "blocked.png"
    blocked.mkdir()                      # a directory where the PNG should go: writing it fails
    assert main(["compose", "--gaussian", "10", "--eps", "1", "--plot", str(blocked)]) == 2
    assert f"--plot {blocked}: cannot write the figure there" in capsys.readouterr().err


def test_a_delta_far_past_the_decimal_exponents_prints_as_a_log(capsys):
    # log delta = -1.8e308: its decimal exponent was printed in full (a 300-digit column, its mantissa noise)
    assert main(["compose", "--gaussian", "3", "--eps", "1e300"]) == 0
    out = capsys.readouterr().out
    assert "exp(-1.79769e+308)" in out and max(len(line) for line in out.splitlines()) < 300
