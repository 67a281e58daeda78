"""What a release promises and what it reads (docs/release-security.md, "What a release refuses" and
"The input commitment"): the record's total delta never exceeds the delta asked for, a release with
nothing to promise is refused before any draw, every public output is strict JSON, CSV cells are
read exactly, and the input commitment opens only with the steward's key.
"""
import hashlib
import hmac
import json
import math
import sys
import warnings
from fractions import Fraction

import pytest

import ppk
from ppk import algorithm2 as a2
from ppk._io import read_binary_column, read_categories
from ppk.cli import main
from ppk.records import MAX_EPS, alg2_record, release_budget, verify_input
from ppk.release import Release
from ppk.samplers import TV_BOUND, sampler_delta

mp = pytest.importorskip("mpmath")


# --- the promise: total delta <= the delta asked for ------------------------------------------------

@pytest.mark.parametrize("eps", [1e-3, 0.5, 5.0, 20.0])
@pytest.mark.parametrize("delta", [0.5, 1e-3, 1e-6, 1e-12, 1e-40, 1e-55])
def test_the_record_never_states_more_delta_than_asked_for(eps, delta):
    # the budget and the record of a count's release, without the noise draw (its record is the same
    # function of the calibration); the old record said 1.0000000000000002e-06 at delta = 1e-6
    if sampler_delta(eps, 2) >= delta:        # nothing left for the mechanism: refused (below)
        with pytest.raises(ValueError, match="samplers' term alone"):
            release_budget(eps=eps, delta=delta, draws=2)
        return
    budget = release_budget(eps=eps, delta=delta, draws=2)
    assert 0 < budget < delta
    cal = a2.calibrate_from_estimate(n=1000, known=500, eps=eps, delta=budget, kappa1=0.0, kappa2=budget / 2,
                                     kappa3=budget / 2, count_estimate=300, laplace_exceeds_t=False,
                                     insecure_for_testing=False)
    for draws in (1, 2):
        g = alg2_record(cal, draws=draws, value_published=True)["guarantee"]
        assert g["delta"] <= delta and float(f"{g['delta']:.6g}") <= float(f"{delta:.6g}")   # as printed, too
        assert Fraction(g["delta"]) >= Fraction(g["delta_mechanism"]) + Fraction(g["delta_sampler"])
        if cal.branch == "ppk":   # its delta is the parts' sum (the baseline spends the budget as such)
            assert Fraction(g["delta_mechanism"]) >= sum(Fraction(v) for v in cal.ledger()["delta_parts"].values())


@pytest.mark.parametrize("eps,delta", [(0.5, 1e-6), (20.0, 1e-9), (0.05, 1e-40)])
def test_a_release_and_a_histogram_stay_within_delta(eps, delta):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ppk.InsecureRandomnessWarning)
        count = ppk.release(count=300, n=1000, known=500, eps=eps, delta=delta, rng=1, noise="discrete_laplace")
        hist = ppk.release(counts=[300, 300, 400], known=500, probs=[0.3, 0.3, 0.4], eps=eps, delta=delta, rng=1)
        fixed = ppk.release(count=300, n=1000, known=500, eps=eps, delta=delta, kappa2=delta / 2, kappa3=delta / 2,
                            rng=1, noise="discrete_laplace")   # both kappas fixed: the samplers' share from kappa3
    for out in (count, hist, fixed):
        g = out.public()["record"]["guarantee"]
        assert g["delta"] <= delta and g["delta_sampler"] >= 0


def test_sampler_delta_is_the_exact_term_rounded_up_and_never_overflows():
    # (1 + e^eps) draws 2^-190 at 50 digits; the old float product overflowed at eps > 709
    with mp.workdps(50):
        for eps in (0.0, 0.5, 20.0, 100.0, 131.0, 131.7, 132.0, 800.0, 1e300):
            for draws in (1, 2, 1000):
                exact = (1 + mp.exp(eps)) * draws * mp.mpf(TV_BOUND)
                got = sampler_delta(eps, draws)
                if exact >= 1:
                    assert got == 1.0
                else:
                    assert mp.mpf(got) >= exact and mp.mpf(got) <= exact * (1 + mp.mpf(1e-10)), (eps, draws)


# --- refusals: nothing to promise, nothing released --------------------------------------------------

@pytest.mark.parametrize("kwargs, cause", [
    (dict(eps=140.0), "MAX_EPS"), (dict(eps=1e9), "MAX_EPS"), (dict(eps=20.5), "MAX_EPS"),
    (dict(eps=140.0, allow_large_eps=True), "samplers' term alone"),   # (1 + e^140) 2^-189 >= 1
    (dict(eps=0.5, delta=1e-60), "samplers' term alone"),
    (dict(eps=0.5, kappa2=1e-57, kappa3=1e-60), "kappa3"),
])
def test_a_vacuous_release_is_refused_before_any_draw(kwargs, cause, monkeypatch):
    module = sys.modules["ppk.release"]    # ppk.release is the function

    def no_draw(*args, **kw):
        raise AssertionError("a refused release drew noise")
    for name in ("run", "calibrate", "rounded_gaussian"):
        monkeypatch.setattr(module, name, no_draw)
    kwargs = dict(dict(delta=1e-6), **kwargs)
    with pytest.raises(ValueError, match=cause):
        ppk.release(count=5000, n=20000, known=5000, **kwargs)
    if "kappa2" not in kwargs:
        with pytest.raises(ValueError, match=cause):
            ppk.release(counts=[5000, 15000], known=5000, probs=[0.3, 0.7], **kwargs)
    assert MAX_EPS == 20.0


def test_large_eps_is_released_only_when_the_steward_says_so():
    out = ppk.release(count=5, n=20, known=5, eps=25.0, delta=1e-6, allow_large_eps=True, noise="discrete_laplace")
    assert out.public()["record"]["guarantee"]["eps"] == 25.0


@pytest.fixture
def survey(tmp_path):
    path = tmp_path / "survey.csv"
    path.write_text("id,smoker\n" + "".join(f"{i},{int(i % 10 < 3)}\n" for i in range(200)))
    return path


def _rc(argv):
    """The exit code of ``ppk ARGV`` (argparse's own refusals exit through SystemExit)."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


@pytest.mark.parametrize("flags, said", [
    (["--eps", "140"], "above MAX_EPS = 20"), (["--eps", "1e9"], "above MAX_EPS = 20"),
    (["--eps", "140", "--allow-large-eps"], "samplers' term alone"),
    (["--eps", "0.5", "--delta", "1e-60"], "samplers' term alone"),
    (["--eps", "-0.5"], "--eps: must be positive"), (["--eps", "0"], "--eps: must be positive"),
    (["--eps", "nan"], "--eps: must be a finite number"), (["--delta", "1"], "--delta: must be in (0, 1)"),
])
def test_the_cli_refuses_with_the_cause_and_writes_nothing(survey, tmp_path, capsys, flags, said):
    key = tmp_path / "steward.key"
    argv = ["release", "--csv", str(survey), "--column", "smoker", "--known", "50", "--eps", "0.5", "--delta",
            "1e-6", "--commitment-key", str(key), "--json"] + flags
    assert _rc(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and said in captured.err and not key.exists()
    hist = ["histogram", "--csv", str(survey), "--column", "smoker", "--categories", "0,1", "--min-prob", "0.1",
            "--known", "50", "--eps", "0.5", "--delta", "1e-6", "--commitment-key", str(key)] + flags
    assert _rc(hist) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and not key.exists()


# --- strict JSON ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("estimate, exceeds, key, meaning", [
    (0, False, "sigma_ppk", "not searched"),     # sigma_dp already fails kappa4 at an end: was Infinity
    (300, True, "p_lo", "fallback"),             # the fallback: was NaN
])
def test_public_is_strict_json_and_says_what_a_null_means(estimate, exceeds, key, meaning):
    cal = a2.calibrate_from_estimate(n=1000, known=500, eps=0.5, delta=1e-6, kappa1=0.0, kappa2=5e-7, kappa3=5e-7,
                                     count_estimate=estimate, laplace_exceeds_t=exceeds, insecure_for_testing=False)
    assert not math.isfinite(cal.ledger()[key])
    public = Release(value=estimate, calibration=cal).public()
    text = json.dumps(public, allow_nan=False)      # raised ValueError on Infinity / NaN
    ledger = json.loads(text)["ledger"]
    assert ledger[key] is None and meaning in ledger["null_means"][key]


# --- strict cells ----------------------------------------------------------------------------------

_REFUSED = ["0.99999999999999999", "1.00000000000000001", "\u0661", "\uff11", "+1", "01", "1e0", "1e-400", "-0",
            "1.00", "0.", "2", "", "yes", "t", "1\u00a0", "\u20031"]


def test_only_exact_cells_are_counted(tmp_path):
    ok = tmp_path / "ok.csv"
    ok.write_text("id,x\n" + "".join(f"{i},{c}\n" for i, c in enumerate(
        ["0", "1", " 1", "1\t", "0.0", "1.0", "true", "TRUE", "False", " false "])))
    assert read_binary_column(str(ok), "x").counts == (4, 6)
    for cell in _REFUSED:
        bad = tmp_path / "bad.csv"
        bad.write_text(f"id,x\n1,1\n2,{cell}\n3,0\n", encoding="utf-8")
        with pytest.raises(ValueError, match="line 3: column 'x' must be 0 or 1") as err:
            read_binary_column(str(bad), "x")
        assert "nothing was released" in str(err.value), cell


def test_a_bad_cell_releases_nothing_on_the_command_line(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("id,smoker\n1,1\n2,1e0\n3,0\n")
    assert main(["release", "--csv", str(bad), "--column", "smoker", "--known", "1", "--eps", "1", "--delta",
                 "1e-6"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and f"{bad}, line 3" in captured.err and "'1e0'" in captured.err


def test_histogram_cells_match_their_category_exactly(tmp_path):
    path = tmp_path / "cats.csv"
    path.write_text("id,c\n1,a\n2, a\t\n3,b\n4,1\n")
    assert read_categories(str(path), "c", ["a", "b", "1"]).counts == (2, 1, 1)
    for cell in ["01", "A", "a\u00a0", "\uff11", "1.0"]:      # no case folding, Unicode space or number parsing
        path.write_text(f"id,c\n1,a\n2,{cell}\n", encoding="utf-8")
        with pytest.raises(ValueError, match="line 3"):
            read_categories(str(path), "c", ["a", "b", "1"])
    with pytest.raises(ValueError, match="distinct"):
        read_categories(str(path), "c", ["a", " a"])


# --- the input commitment ----------------------------------------------------------------------------

def test_the_commitment_opens_with_the_key_only_and_is_fresh_every_time(survey, tmp_path, capsys):
    argv = ["release", "--csv", str(survey), "--column", "smoker", "--known", "50", "--eps", "1", "--delta", "1e-6",
            "--noise", "discrete_laplace", "--json", "--commitment-key"]
    outs, keys = [], []
    for i in range(2):
        keys.append(tmp_path / f"k{i}")
        assert main(argv + [str(keys[-1])]) == 0
        outs.append(capsys.readouterr().out)
    values = [json.loads(o)["record"]["input"]["commitment"]["value"] for o in outs]
    assert values[0] != values[1]           # the same file, a fresh key: nothing deterministic in the data
    for out, key, value in zip(outs, keys, values):
        secret = key.read_text().strip()
        assert len(secret) == 64 and secret not in out
        assert verify_input(str(survey), key=secret, commitment=value)
        assert value == hmac.new(bytes.fromhex(secret), survey.read_bytes(), hashlib.sha256).hexdigest()
        assert hashlib.sha256(survey.read_bytes()).hexdigest() not in out
    other = tmp_path / "other.csv"
    other.write_text(survey.read_text().replace("\n5,0\n", "\n5,1\n"))
    assert other.read_text() != survey.read_text()
    assert not verify_input(str(other), key=keys[0].read_text(), commitment=values[0])
    assert main(["verify-input", "--csv", str(survey), "--key", str(keys[0]), "--commitment", values[0]]) == 0
    assert "matches" in capsys.readouterr().out
    assert main(["verify-input", "--csv", str(other), "--key", str(keys[0]), "--commitment", values[0]]) == 1
    assert "does NOT match" in capsys.readouterr().out
    assert main(["verify-input", "--csv", str(other), "--key", str(other), "--commitment", values[0]]) == 2
    assert "64 hex digits" in capsys.readouterr().err
    assert main(argv + [str(keys[0])]) == 2     # a key file is never overwritten
    assert "exists" in capsys.readouterr().err


def test_a_histogram_release_commits_to_its_input_too(tmp_path, capsys):
    path = tmp_path / "colors.csv"
    path.write_text("id,color\n" + "".join(f"{i},{'rgb'[i % 3]}\n" for i in range(60)))
    key = tmp_path / "steward.key"
    assert main(["histogram", "--csv", str(path), "--column", "color", "--probs", "r=0.3,g=0.3,b=0.4", "--known",
                 "10", "--eps", "1", "--delta", "1e-6", "--commitment-key", str(key), "--json"]) == 0
    out = capsys.readouterr().out
    record = json.loads(out)["record"]
    assert verify_input(str(path), key=key.read_text(), commitment=record["input"]["commitment"]["value"])
    assert key.read_text().strip() not in out and hashlib.sha256(path.read_bytes()).hexdigest() not in out
    assert record["guarantee"]["delta"] <= 1e-6
