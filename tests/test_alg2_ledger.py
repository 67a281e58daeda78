"""Algorithm 2's ledger on the fallback (issue #44 item 4): no negative delta part, and words for why it fell
back and for a bias estimate outside [0, 1]."""
import math

import pytest

from ppk import algorithm2 as a2


def _fallback(count_estimate, *, exceeds):
    return a2.calibrate_from_estimate(n=10_000, known=5_000, eps=0.02, delta=1e-6, kappa1=0.0, kappa2=5e-7,
                                      kappa3=5e-7, count_estimate=count_estimate, laplace_exceeds_t=exceeds)


def test_the_truncation_fallback_shows_no_negative_part():
    r = _fallback(4_962, exceeds=False)          # T_L = 0.02 eats kappa3 = 5e-7: kappa4 < 0
    assert r.branch == "fallback" and r.kappa4 < 0            # (the result keeps the raw kappa4)
    parts = r.ledger()["delta_parts"]
    assert min(parts.values()) >= 0 and parts["kappa4"] == 0.0
    assert math.fsum(parts.values()) == pytest.approx(1e-6, rel=1e-12)
    assert any("exceeds kappa3" in note for note in r.ledger()["notes"])


def test_a_bias_estimate_outside_the_data_says_why():
    r = _fallback(-32_220_100, exceeds=True)     # the CLI printed "bias estimate -3222.01" and nothing else
    assert r.bias_estimate == -3222.01
    notes = " ".join(r.ledger()["notes"])
    assert "outside [0, 1]" in notes and "discrete Laplace noise" in notes and notes.startswith("fallback: ")


def test_the_untrusted_estimate_fallback_says_why():
    r = a2.calibrate_from_estimate(n=100_000, known=50_000, eps=0.1, delta=1e-6, kappa1=0.0, kappa2=5e-7,
                                   kappa3=5e-7, count_estimate=50_000, laplace_exceeds_t=True)
    assert r.ledger()["notes"] == ["fallback: the estimate's discrete Laplace noise exceeded n t, so the estimate "
                                   "is not trusted"]
    assert min(r.ledger()["delta_parts"].values()) >= 0
