"""The steward's ledger (docs/ledger.md): releases over shared rows composed, refused past the budget."""
from __future__ import annotations

import json
import math

import mpmath
import pytest

from ppk.ledger import LEDGER_FORMAT, Ledger, LedgerRefusal


def _count_release(eps0: float = 0.5, sigma: float = 3.0) -> dict:
    """A count by Algorithm 2: an eps0-DP discrete-Laplace estimate and a Gaussian count."""
    return dict(eps=1.0, delta=1e-7, delta_sampler=1e-57, mechanisms=[dict(kind="pure", eps=eps0),
                                                                      dict(kind="gaussian", sigma=sigma, sensitivity=1.0)])


def _exact_delta(eps: float, *, releases: int, eps0: float, sigma: float) -> mpmath.mpf:
    """delta(eps) of `releases` x (randomized response eps0, Gaussian sigma) against the full attacker: the
    Gaussians are one of sigma/sqrt(releases); the randomized responses' loss is j eps0 - (r - j) eps0 with
    binomial weights; delta = E[h(eps - loss)], h the Gaussian's hockey stick (mirrored below 0).  40 digits."""
    mpmath.mp.dps = 40
    mu = mpmath.sqrt(releases) / mpmath.mpf(sigma)
    a = mpmath.exp(-mpmath.mpf(eps0))
    p = 1 / (1 + a)

    def gauss(x):
        return mpmath.ncdf(-x / mu + mu / 2) - mpmath.exp(x) * mpmath.ncdf(-x / mu - mu / 2)

    def h(x):   # H_{e^x}(P || Q) of the Gaussian pair for any real x
        return gauss(x) if x >= 0 else 1 - mpmath.exp(x) + mpmath.exp(x) * gauss(-x)

    total = mpmath.mpf(0)
    for j in range(releases + 1):
        weight = mpmath.binomial(releases, j) * p**j * (1 - p)**(releases - j)
        total += weight * h(mpmath.mpf(eps) - (2 * j - releases) * mpmath.mpf(eps0))
    return total


def test_one_release_spends_its_own_guarantee_and_the_second_is_composed(tmp_path):
    path = tmp_path / "ledger.json"
    ledger = Ledger.open(path, eps=4.0, delta=1e-6)
    first = ledger.admit(_count_release())
    assert (first.eps, first.delta, first.releases) == (1.0, 1e-7, 1)
    ledger.append(_count_release())
    again = Ledger.open(path)
    assert (again.eps, again.delta, len(again.entries)) == (4.0, 1e-6, 1)
    second = again.admit(_count_release())
    assert second.releases == 2 and "plain DP" in second.method
    exact = _exact_delta(4.0, releases=2, eps0=0.5, sigma=3.0)
    # certified: never below the exact delta, and the grid's looseness is small here
    assert exact <= second.delta <= exact * (1 + 1e-2) + 2e-57


def test_past_the_budget_nothing_is_recorded(tmp_path):
    path = tmp_path / "ledger.json"
    ledger = Ledger.open(path, eps=3.0, delta=1e-6)
    ledger.append(_count_release())
    before = path.read_text()
    with pytest.raises(LedgerRefusal, match=r"cannot pay for this release: with it, its 2 releases spend eps 3\.0"):
        ledger.admit(_count_release())
    assert path.read_text() == before
    # the refused total is the composition's: its exact delta at the budget's eps is above the budget's delta
    assert _exact_delta(3.0, releases=2, eps0=0.5, sigma=3.0) > 1e-6


def test_the_file_is_strict_json_and_says_it_is_private(tmp_path):
    path = tmp_path / "ledger.json"
    ledger = Ledger.open(path, eps=3.0, delta=1e-6)
    ledger.append({**_count_release(), "input_sha256": "ab" * 32})
    doc = json.loads(path.read_text())
    assert doc["format"] == LEDGER_FORMAT and "never publish" in doc["note"]
    assert doc["releases"][0]["input_sha256"] == "ab" * 32


@pytest.mark.parametrize("content, match", [
    ("not json", "cannot be read"),
    ('{"format": "other"}', "is not a ppk ledger"),
    ('{"format": "ppk-ledger/1", "budget": {"eps": 1, "delta": 1e-6}, "releases": [{"eps": 1}]}', "lacks"),
    ('{"format": "ppk-ledger/1", "budget": {"eps": 1, "delta": 1e-6}, "releases": [{"eps": 1, "delta": 0, '
     '"delta_sampler": 0, "mechanisms": [{"kind": "gaussian", "sigma": -1, "sensitivity": 1}]}]}', "positive sigma"),
    ('{"format": "ppk-ledger/1", "budget": {"eps": -1, "delta": 1e-6}, "releases": []}', "eps"),
])
def test_a_bad_ledger_file_is_refused_by_name(tmp_path, content, match):
    path = tmp_path / "ledger.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=match):
        Ledger.open(path)


def test_a_new_ledger_needs_a_budget_and_a_budget_never_changes(tmp_path):
    path = tmp_path / "ledger.json"
    with pytest.raises(ValueError, match="give its budget"):
        Ledger.open(path)
    Ledger.open(path, eps=1.0, delta=1e-6).append(_count_release())
    with pytest.raises(ValueError, match="does not change"):
        Ledger.open(path, eps=2.0)
    assert math.isfinite(Ledger.open(path, eps=1.0, delta=1e-6).spent().eps)
