"""The window cut's deficit bound (docs/shuffle.md, "The window cut to the varying users' spread"), checked against
brute force.  No end-to-end test can falsify it (at an affordable n the tightened range bound stays further from
the worst split than the deficits), so the lemma is checked on its own: tests/oracles/make_shuffle_window_cut.py
computes, in 60-digit mpmath and independently of ppk, the true deficit sum_s min(A, B) - min(A_W, B_W), the
proof's looser sum_s min(B, T_+) + min(A, T_-) and its moment 3 E[D^2 e^(2 lam |D|); |D| >= W/2], on random and
boundary instances (K the law of Bin(i, 1 - r) + Bin(m - i, r), lam >= 0, W^2/m - lam W >= 2, 16 <= W < m).

range_tightened (cpp/include/ppk/shuffle_range.hpp) is not reachable from Python for one range with its deficit
isolated, so the bound below transcribes its C++ line, and a test ties that line's text to the transcription.
"""
import math
import os

import mpmath as mp
import pytest

from tests.oracles import load

ORACLE = load("shuffle_window_cut")["values"]
CUTS = {k: v for k, v in ORACLE.items() if "true" in v}
LADDERS = {k: v for k, v in ORACLE.items() if "lad" in v}


def cut_deficit_bound(W, m, lam):
    """Per unit kappa, as range_tightened computes it: 6 (W/2)^2 exp(2W/m + lam W - W^2/(2m)), rounded up."""
    wd, md = float(W), float(m)
    return 6 * 0.25 * wd * wd * math.exp(2 * wd / md + lam * wd - wd * wd / (2 * md)) * (1 + 1e-9)


def admissible(W, m, lam):
    """The bound's hypotheses, as range_tightened checks them (lam >= 0, W^2/m - lam W >= 2)."""
    return lam >= 0 and W * W / m - lam * W >= 2


def ladder(kap, deficit, least):
    """range_tightened's ladder: the best suffix j0 of kap[j0] least - sum_(j >= j0) (kap[j] - kap[j+1]) deficit[j]."""
    best, off = 0.0, 0.0
    for j in reversed(range(len(kap))):
        off += (kap[j] - (kap[j + 1] if j + 1 < len(kap) else 0.0)) * deficit[j]
        best = max(best, kap[j] * least - off)
    return best


def test_oracle_covers_the_cut():
    """Enough instances with a nonzero deficit, some at the hypotheses' boundary (r = 1/2, lam its largest)."""
    nonzero = [v for v in CUTS.values() if mp.mpf(v["true"]) > 0]
    assert len(CUTS) >= 140 and len(nonzero) >= 60
    assert any(v["r"] == 0.5 and abs(v["W"] ** 2 / v["m"] - v["lam"] * v["W"] - 2) < 1e-9 for v in nonzero)
    # lam at its largest is W/m - 2/W, so W^2/m - lam W is 2 to a few ulp
    assert all(v["lam"] >= 0 and v["W"] ** 2 / v["m"] - v["lam"] * v["W"] >= 2 - 1e-12 and 16 <= v["W"] < v["m"]
               for v in CUTS.values())


@pytest.mark.parametrize("name", sorted(CUTS))
def test_deficit_bound_holds(name):
    """true <= loose <= moment <= bound: each step of the proof, on each instance."""
    v = CUTS[name]
    with mp.workdps(40):
        true, loose, moment = (mp.mpf(v[k]) for k in ("true", "loose", "moment"))
        bound = mp.mpf(cut_deficit_bound(v["W"], v["m"], v["lam"]))
        assert true <= loose * (1 + mp.mpf(10) ** -18)
        assert loose <= moment
        # moment / bound reaches 0.32 here: dropping (W/2)^2 (a factor 64 or more) fails
        assert moment <= bound


def test_transcription_is_the_docs_formula():
    """The transcription against the docs' formula in 40-digit mpmath, over the regime range_tightened uses (W up
    to 65536, deficits above e^-600: range_tightened's rungs stop near e^-30 kappa): equal to 1e-9 and never
    below.  Halving the 6 or dropping (W/2)^2 fails."""
    with mp.workdps(40):
        for m in (20, 100, 1000, 65536):
            for W in (16, 17, 40, 100, 333, 2000, 60000):
                if W > m:
                    continue
                for lam in (0.0, 1e-4, 0.01, 0.05, 0.2):
                    if not admissible(W, m, lam) or W * W / (2 * m) - lam * W > 600:
                        continue
                    Wm, mm, lm = mp.mpf(W), mp.mpf(m), mp.mpf(lam)
                    exact = 6 * (Wm / 2) ** 2 * mp.exp(2 * Wm / mm + lm * Wm - Wm**2 / (2 * mm))
                    got = cut_deficit_bound(W, m, lam)
                    assert exact <= got <= exact * (1 + mp.mpf(2e-9))


def test_cpp_line_is_the_transcription():
    """The C++ deficit and hypothesis lines are the ones transcribed above: a change there must be checked here."""
    path = os.path.join(os.path.dirname(__file__), "..", "cpp", "include", "ppk", "shuffle_range.hpp")
    with open(path) as fh:
        src = " ".join(fh.read().split())
    assert ("deficit[j] = 6 * 0.25 * wd * wd * std::exp(2 * wd / md + lam * wd - wd * wd / (2 * md)) * (1 + 1e-9);"
            in src)
    assert "wd * wd / md - lam_top * wd >= 2 &&" in src
    assert "for (const double lam : {0.0, log_rho1})" in src   # lam = 0 satisfies W^2/m >= 2 + lam_top W too
    assert "if (lam_top >= 0)" in src


@pytest.mark.parametrize("name", sorted(LADDERS))
def test_ladder(name):
    """The ladder of cut lines sum_j (kap_j - kap_(j+1)) l^(W_j) loses at least kap_1 full - sum_j (kap_j -
    kap_(j+1)) deficit_j (superadditivity of min), with the true deficits (equality, to 60 digits, here) and with
    the bound's; range_tightened's best-suffix ladder() stays below the true laddered loss."""
    v = LADDERS[name]
    with mp.workdps(40):
        lad, full = mp.mpf(v["lad"]), mp.mpf(v["full"])
        kaps = [mp.mpf(k) for k in v["kaps"]] + [mp.mpf(0)]
        trues = [mp.mpf(t) for t in v["trues"]]
        claim = kaps[0] * full - sum((kaps[j] - kaps[j + 1]) * trues[j] for j in range(len(trues)))
        assert lad >= claim - mp.mpf(10) ** -25 * full
        bounds = [cut_deficit_bound(W, v["m"], v["lam"]) if W <= v["m"] else 0.0 for W in v["Ws"]]
        assert all(t <= b for t, b in zip(trues, bounds))
        for deficits in (bounds, [float(t) * (1 + 1e-12) for t in trues]):
            assert ladder(v["kaps"], deficits, float(full)) <= lad * (1 + mp.mpf(1e-12))


def test_ladder_best_suffix():
    """ladder() with the true deficits reaches the true laddered loss (the full ladder is exact here), so a ladder
    that over-counts a suffix's slope would fail test_ladder."""
    for v in LADDERS.values():
        trues = [float(mp.mpf(t)) for t in v["trues"]]
        got = ladder(v["kaps"], trues, float(mp.mpf(v["full"])))
        assert got >= float(mp.mpf(v["lad"])) * (1 - 1e-9)
