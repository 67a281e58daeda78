"""The release path, attacked as an attacker would (docs/release-security.md).

Each attack is run twice where that is possible: against the mechanism ppk used before (a
positive control, so the attack is shown to work and the test can fail) and against ppk.
"""
import copy
import dataclasses
import hashlib
import json
import math
import pickle
import random
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import ppk
from ppk import algorithm2 as a2
from ppk._random import as_source
from ppk.cli import main
from ppk.samplers import rounded_gaussian

# --- 1. Mironov's floating-point attack on the published bias estimate --------------------------


def _float_laplace_estimate(c, n, scale, k, negative):
    """The estimate the float Laplace mechanism published: c/n + sign * scale * (-log U), U = (k + 1/2) 2^-53."""
    magnitude = -scale * math.log((k + 0.5) * 2.0 ** -53)
    return c / n + (-magnitude if negative else magnitude)


def _float_reachable(b, c, n, scale):
    """Can the float mechanism publish b when the count is c?  Exact: the estimate is monotone in k,
    so a bisection over the 2^53 uniforms finds the only candidates, and a window covers rounding."""
    for negative in (False, True):
        lo, hi = 0, 2 ** 53 - 1          # magnitude decreases in k: the estimate moves monotonically
        def value(k):
            return _float_laplace_estimate(c, n, scale, k, negative)
        increasing = value(hi) > value(lo)
        while lo < hi:
            mid = (lo + hi) // 2
            if (value(mid) < b) == increasing:
                lo = mid + 1
            else:
                hi = mid
        if any(value(k) == b for k in range(max(0, lo - 64), min(2 ** 53, lo + 64))):
            return True
    return False


def _discrete_reachable(b, c, n):
    """Can ppk publish bias_estimate b when the count is c?  b = float(Fraction(c + Y, n)) for an integer Y,
    and every integer Y has positive probability under the discrete Laplace law."""
    centre = round(b * n)
    return any(float(Fraction(x, n)) == b for x in range(centre - 2, centre + 3))


def test_positive_control_the_float_laplace_estimate_leaks():
    n, c, eps_half = 1000, 300, 0.25
    scale = 1.0 / (n * eps_half)
    rng = np.random.default_rng(2012)
    ruled_out = 0
    for _ in range(3000):
        k, negative = int(rng.integers(0, 2 ** 53, dtype=np.uint64)), bool(rng.integers(2))
        b = _float_laplace_estimate(c, n, scale, k, negative)
        assert _float_reachable(b, c, n, scale)            # the checker finds the truth
        ruled_out += not (_float_reachable(b, c + 1, n, scale) and _float_reachable(b, c - 1, n, scale))
    # the old mechanism ruled out a neighbouring count with certainty in ~0.5% of its ledgers
    assert ruled_out >= 3


@pytest.mark.parametrize("n,eps", [(1000, 0.5), (10_000, 0.1), (10_000_000, 0.005)])
def test_no_published_estimate_rules_out_a_neighbouring_count(n, eps):
    c = n * 3 // 10
    src = as_source(17)
    # a certainty, not a statistic: every integer Y is possible, so any draw that failed would be a bug;
    # 500 draws per case cover Y out to ~3 scales either side, where the float version failed
    for _ in range(500):
        count_estimate = c + a2.estimate_noise(src, eps)
        b = float(Fraction(count_estimate, n))
        for neighbour in (c - 1, c + 1):
            assert _discrete_reachable(b, neighbour, n)


def test_full_ledgers_publish_only_functions_of_the_integer_estimate():
    for seed in range(12):     # each seed checks an identity; 12 cover the ppk and baseline branches
        r, secret = ppk.alg2(count=300, n=1000, known=500, eps=0.5, delta=1e-6, rng=seed, audit=True)
        assert r.count_estimate == 300 + secret.laplace_noise
        assert r.bias_estimate == float(Fraction(r.count_estimate, 1000))
        # everything in the ledger follows from the estimate, the bit |Y| > n t and public values
        again = a2.calibrate_from_estimate(n=1000, known=500, eps=0.5, delta=1e-6, kappa1=0.0, kappa2=r.kappa2,
                                           kappa3=r.kappa3, count_estimate=r.count_estimate,
                                           laplace_exceeds_t=abs(secret.laplace_noise) > 1000 * r.t,
                                           insecure_for_testing=True)
        assert again == r


# --- 2. low bits of the Gaussian noise above 2^53 ------------------------------------------------


def test_positive_control_float_rounding_loses_the_low_bits():
    rng = np.random.default_rng(5)
    noise = [int(math.floor(1e17 * z + 0.5)) for z in rng.standard_normal(3000)]
    # sigma > 2^53: the float noise is even unless |sigma z| < 2^53 -- the parity test below catches it
    assert stats.chisquare(np.bincount([k % 2 for k in noise], minlength=2)).pvalue < 1e-100


@pytest.mark.parametrize("sigma,draws", [(1e3, 300), (2.0 ** 53, 60), (1e17, 60)])
def test_noise_residues_do_not_depend_on_anything(sigma, draws):
    src = as_source(int(math.log2(sigma)))
    # A draw costs ~0.6 ms per bit of sigma (~35 ms at 2^53 and 1e17), so the draws are few.  Power:
    # the faults this guards put the low bits on a lattice -- float rounding above 2^53 makes every
    # noise even (the positive control), a search that skips its last step fixes the parity -- and
    # then 60 draws give chi-square 60 for m = 2, p ~ 1e-14 (the threshold is 1e-4); a lost bit 1
    # leaves 4 of the 8 residues mod 8, chi-square ~ 60 on 7 df, p ~ 1e-10.  A mere bias is seen
    # above |P(even) - 1/2| ~ 0.25 at 60 draws, 0.11 at 300 (2 |bias| sqrt(draws) > 3.9).
    values = [rounded_gaussian(sigma, rng=src) for _ in range(draws)]
    for m in (2, 3, 8):
        observed = np.bincount([k % m for k in values], minlength=m)
        # K mod m is uniform to within exp(-2 pi^2 sigma^2 / m^2): chi-square against uniform, p > 1e-4
        assert stats.chisquare(observed).pvalue > 1e-4, (m, observed)


def test_released_parity_is_independent_of_the_count():
    # the example: sigma = 1e17 (eps = 2e-17, delta = 1e-17); count 300 vs 301
    table = []
    for count in (300, 301):
        # 30 releases a count (~40 ms each): the float version's parity was the count's in every one,
        # a table [[30, 0], [0, 30]] with p ~ 1e-13 (the threshold is 1e-4); a parity bias of 0.3 or
        # more either way is seen too
        values = [ppk.release(count=count, n=1000, known=500, eps=2e-17, delta=1e-17, rng=1000 * count + i).value
                  for i in range(30)]
        table.append(np.bincount([v % 2 for v in values], minlength=2))
    assert stats.chi2_contingency(np.array(table)).pvalue > 1e-4, table


# --- 3. the private draw travels with the result -------------------------------------------------


def _all_views(obj):
    views = [repr(obj), str(pickle.loads(pickle.dumps(obj))), repr(copy.deepcopy(obj)), repr(vars(obj))]
    if dataclasses.is_dataclass(obj):
        views.append(repr(dataclasses.asdict(obj)))
    return views


def test_no_copy_of_a_result_holds_the_private_draws():
    out, secret = ppk.release(count=31_337, n=100_000, known=50_000, eps=0.1, delta=1e-6, rng=3, audit=True)
    for obj in (out, out.calibration):
        fields = {f.name for f in dataclasses.fields(obj)}
        assert not any("noise" in f or "private" in f or "secret" in f for f in fields)
        assert set(vars(obj)) == fields
        for view in _all_views(obj):
            assert "PrivateDraws" not in view and "laplace_noise" not in view
    # the calibration is a function of the public estimate: an object rebuilt without the draw is equal
    cal = out.calibration
    rebuilt = a2.calibrate_from_estimate(n=100_000, known=50_000, eps=0.1, delta=cal.delta, kappa1=0.0,
                                         kappa2=cal.kappa2, kappa3=cal.kappa3, count_estimate=cal.count_estimate,
                                         laplace_exceeds_t=abs(secret.laplace_noise) > 100_000 * cal.t,
                                         insecure_for_testing=True)
    assert rebuilt == cal
    assert out.value - secret.gaussian_noise == 31_337 and cal.count_estimate - secret.laplace_noise == 31_337
    # the secret is marked: no value in its repr, and it refuses to be pickled or copied out
    assert "31" not in repr(secret) and "secret" in repr(secret)
    with pytest.raises(TypeError, match="secret"):
        pickle.dumps(secret)
    with pytest.raises(TypeError, match="secret"):
        copy.deepcopy(secret)


# --- 4. seeded releases ---------------------------------------------------------------------------


def test_python_api_warns_on_a_seeded_release():
    with pytest.warns(ppk.InsecureRandomnessWarning, match="NOT private"):
        r = ppk.release(count=30, n=100, known=50, eps=1.0, delta=1e-6, rng=31337)
    assert r.insecure_for_testing and "warning" in r.public()
    with pytest.warns(ppk.InsecureRandomnessWarning):
        ppk.alg2(count=30, n=100, known=50, eps=1.0, delta=1e-6, rng=np.random.default_rng(1))
    secure = ppk.release(count=30, n=100, known=50, eps=1.0, delta=1e-6)
    assert not secure.insecure_for_testing and "warning" not in secure.public()
    assert secure.public()["ledger"]["insecure_for_testing"] is False


@pytest.fixture
def survey(tmp_path):
    path = tmp_path / "survey.csv"
    path.write_text("id,smoker\n" + "".join(f"{i},{int(i % 10 < 3)}\n" for i in range(2000)))
    return str(path)


def test_cli_refuses_a_seed_unless_told_and_then_marks_every_output(survey, capsys):
    base = ["release", "--csv", survey, "--column", "smoker", "--known", "1000", "--eps", "0.5", "--delta", "1e-6"]
    assert main(base + ["--seed", "31337"]) == 2
    captured = capsys.readouterr()
    assert "--insecure-for-testing" in captured.err and captured.out == ""
    assert main(base + ["--seed", "31337", "--insecure-for-testing", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ledger"]["insecure_for_testing"] is True and "NOT PRIVATE" in out["warning"]
    assert main(base + ["--seed", "31337", "--insecure-for-testing"]) == 0
    assert capsys.readouterr().out.startswith("NOT A PRIVATE RELEASE")
    assert main(base + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ledger"]["insecure_for_testing"] is False and "warning" not in out


# --- 5. strict JSON and bounded, unambiguous CSV input --------------------------------------------


def _strict_loads(text):
    def refuse(token):
        raise AssertionError(f"non-standard JSON token {token}")
    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("ones", [0, 2000])
def test_json_is_strict_on_the_fallback_branch_and_constant_columns(tmp_path, capsys, ones):
    path = tmp_path / "constant.csv"
    path.write_text("x\n" + f"{int(ones > 0)}\n" * 2000)
    assert main(["release", "--csv", str(path), "--column", "x", "--known", "10", "--eps", "0.01", "--delta",
                 "1e-6", "--json"]) == 0
    out = _strict_loads(capsys.readouterr().out)
    assert out["ledger"]["branch"] == "fallback" and out["ledger"]["p_lo"] is None


def test_csv_reading_is_bounded_and_refuses_ambiguity(tmp_path, capsys):
    dup = tmp_path / "dup.csv"
    dup.write_text("smoker,smoker\n1,0\n0,1\n")
    common = ["--column", "smoker", "--known", "1", "--eps", "1", "--delta", "1e-6"]
    assert main(["release", "--csv", str(dup)] + common) == 2
    assert "appears 2 times" in capsys.readouterr().err
    long_line = tmp_path / "long.csv"
    long_line.write_text("smoker\n" + "1" * (2 << 20) + "\n")
    assert main(["release", "--csv", str(long_line)] + common) == 2
    assert "line 2: longer than" in capsys.readouterr().err
    assert main(["release", "--csv", "/dev/zero"] + common) == 2          # no unbounded read
    assert "longer than" in capsys.readouterr().err


# --- 6. the input named in the record (issue #45) --------------------------------------------------


def _row_from_record(text, candidates):
    """The attacker who knows every row but one: hash each candidate file (SHA-256, and SHA-256 keyed
    with nothing) and look for the digest anywhere in what was published."""
    found = [b for b, data in candidates.items()
             if hashlib.sha256(data).hexdigest() in text or hmac_empty(data) in text]
    return found[0] if len(found) == 1 else None


def hmac_empty(data):
    import hmac
    return hmac.new(b"", data, hashlib.sha256).hexdigest()


def test_positive_control_a_plain_hash_of_the_input_gives_the_row_away(tmp_path):
    # the record before: input.sha256 = SHA-256 of the bytes read; 20 of 20 hidden rows recovered
    candidates = {b: f"id,smoker\n1,1\n2,0\n3,{b}\n".encode() for b in (0, 1)}
    rng = random.Random(45)
    hidden = [rng.randrange(2) for _ in range(20)]
    old = [json.dumps({"input": {"sha256": hashlib.sha256(candidates[b]).hexdigest()}}) for b in hidden]
    assert [_row_from_record(text, candidates) for text in old] == hidden


def test_the_record_does_not_give_the_hidden_row_away(tmp_path, capsys):
    # the case: three rows, the attacker knows two; 20 releases of the file with the hidden row
    # b, JSON and text, with and without a commitment; the attacker reads b from none of them
    paths = {}
    for b in (0, 1):
        paths[b] = tmp_path / f"candidate{b}.csv"
        paths[b].write_text(f"id,smoker\n1,1\n2,0\n3,{b}\n")
    candidates = {b: path.read_bytes() for b, path in paths.items()}
    rng = random.Random(44)
    recovered = 0
    for trial in range(20):
        b = rng.randrange(2)
        argv = ["release", "--csv", str(paths[b]), "--column", "smoker", "--known", "2", "--eps", "1",
                "--delta", "1e-6", "--noise", "discrete_laplace"] + [["--json"], []][trial % 2]
        if trial % 4 < 2:
            argv += ["--commitment-key", str(tmp_path / f"key{trial}")]
        assert main(argv) == 0
        published = capsys.readouterr().out
        recovered += _row_from_record(published, candidates) == b
        if trial % 4 < 2:
            assert (tmp_path / f"key{trial}").read_text().strip() not in published   # the key stays private
    assert recovered == 0, f"the record gave the hidden row away in {recovered} of 20 releases"


# --- 7. the public record: what a reviewer checks -------------------------------------------------


def test_public_release_is_a_strict_record_with_the_samplers_delta_added():
    out = ppk.release(count=31_337, n=100_000, known=50_000, eps=0.1, delta=1e-6)
    public = _strict_loads(json.dumps(out.public(), allow_nan=False))
    record = public["record"]
    assert record["format"] == "ppk-record/1" and record["ppk_version"] == ppk.__version__
    assert record["created_utc"] == out.created_utc and record["input"] is None
    g = record["guarantee"]
    assert (g["kind"], g["eps"]) == ("PPK-DP", 0.1) and g["delta_mechanism"] < 1e-6 and g["delta"] <= 1e-6
    # two draws (the count estimate and the noise): their term is added and the sum rounded up, inside delta
    assert out.calibration.sigma > 0 and g["delta_sampler"] == ppk.samplers.sampler_delta(0.1, 2) > 0
    assert Fraction(g["delta"]) >= Fraction(g["delta_mechanism"]) + Fraction(g["delta_sampler"])
    assert record["noise"] == dict(law="rounded_gaussian", scale=out.calibration.sigma, scale_name="sigma",
                                   unit="counts", per="value", count_estimate_law="discrete_laplace",
                                   count_estimate_eps=0.05)
    assert record["attacker"]["rows_known"] == 50_000 and record["attacker"]["belief_source"] == "estimated_privately"
    assert [w.split(":")[0] for w in record["warnings"]] == ["NOT STANDARD DP"]
    # the record is a function of the public ledger: no private draw in it
    _, secret = ppk.release(count=31_337, n=100_000, known=50_000, eps=0.1, delta=1e-6, rng=3, audit=True)
    assert "laplace_noise" not in json.dumps(public) and "31337" not in json.dumps(record)


def test_an_exact_or_seeded_or_dp_release_says_so_in_the_record():
    exact = ppk.release(count=3000, n=10_000, known=5000, eps=0.5, delta=1e-6)
    assert exact.calibration.sigma == 0 and exact.public()["noise"] == "none"   # was "rounded_gaussian"
    record = exact.public()["record"]
    assert record["noise"]["law"] == "none" and record["warnings"][0].startswith("NO NOISE")
    assert record["guarantee"]["delta_sampler"] == ppk.samplers.sampler_delta(0.5, 1)   # the estimate only
    with pytest.warns(ppk.InsecureRandomnessWarning):
        seeded = ppk.release(count=300, n=1000, known=500, eps=0.5, delta=1e-6, rng=1)
    assert any(w.startswith("NOT PRIVATE") for w in seeded.public()["record"]["warnings"])
    dp = ppk.release(count=3000, n=10_000, known=9_999, eps=0.5, delta=1e-6)   # N = 0: plain DP
    record = dp.public()["record"]
    assert record["guarantee"]["kind"] == "DP" and record["attacker"]["belief_source"] == "none"
    assert record["warnings"] == []
