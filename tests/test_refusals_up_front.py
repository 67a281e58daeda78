"""Requests whose search cannot end well are refused before it starts, in the user's terms (issue #44 item 5)."""
import math

import pytest

import ppk
from ppk import calibration
from ppk.related import shuffle_clones


def test_calibrating_a_shuffle_beyond_its_resolved_eps_is_refused_at_once(monkeypatch):
    # eps = 700 ran ~7.5 s and ended in "not certified; please report this"
    evaluated = []
    monkeypatch.setattr(ppk.ShuffledRandomizedResponse, "_log_delta_upper_at",
                        lambda self, eps: evaluated.append(eps) or 0.0)
    q = ppk.ShuffledRandomizedResponse(n=1000, eps0=2.0)
    with pytest.raises(ValueError, match=r"eps <= 30 for a ShuffledRandomizedResponse"):
        ppk.calibrate(q, eps=700.0, delta=1e-6)
    assert evaluated == []          # up front: no evaluation of the curve
    assert calibration.SHUFFLE_EPS_MAX == 30.0


def test_the_largest_shuffle_eps_still_calibrates():
    cal = ppk.calibrate(ppk.ShuffledRandomizedResponse(n=1000, eps0=2.0), eps=30.0, delta=1e-6)
    assert 0 < cal.scale < 1e-13 and cal.delta_achieved <= 1e-6


def test_a_clone_bound_search_too_wide_is_refused_with_an_estimate(monkeypatch):
    # n = 1e12 at eps0 = 2: a clone count of sd 3.4e5, each evaluation a window of millions of rows (minutes)
    monkeypatch.setattr(shuffle_clones, "_delta", lambda *a: pytest.fail("evaluated"))
    with pytest.raises(ValueError, match=r"eps ~ 2\.19e-05") as info:
        shuffle_clones.clone_bound_epsilon(n=10**12, eps0=2.0, delta=1e-6)
    assert "EPSILON_MAX_SD" in str(info.value)


def test_a_clone_bound_with_a_narrow_count_still_answers_at_a_trillion_users():
    eps = shuffle_clones.clone_bound_epsilon(n=10**12, eps0=20.0, delta=1e-6)   # sd 45: cheap
    assert 0 < eps < 20 and math.isfinite(eps)
    assert shuffle_clones.clone_bound_delta(n=10**12, eps0=20.0, eps=eps) <= 1e-6
