"""ppk.related.dp closed forms against the notes' values and independent definitions."""
import math

import pytest

from ppk.related import dp


def test_randomized_response():
    assert dp.rr_epsilon(0.25) == pytest.approx(math.log(3), rel=1e-15)
    assert dp.rr_gamma(math.log(3)) == pytest.approx(0.25, rel=1e-15)
    for g in [0.0, 0.1, 0.4999]:
        assert dp.rr_gamma(dp.rr_epsilon(g)) == pytest.approx(g, abs=1e-12)


def test_compositions():
    assert dp.compose_basic([0.1, 0.2], [1e-6, 2e-6]) == (pytest.approx(0.3), pytest.approx(3e-6))
    e, d = dp.compose_advanced(eps=0.1, delta=1e-6, k=10, delta_prime=1e-5)
    assert e == pytest.approx(0.1 * math.sqrt(20 * math.log(1e5)) + 10 * 0.1 * math.expm1(0.1))
    assert d == pytest.approx(1e-5 + 1e-5)
    short, _ = dp.compose_advanced(eps=0.1, delta=1e-6, k=10, delta_prime=1e-5, dwork_roth_term=False)
    assert short < e


def test_group_privacy_and_subsampling():
    assert dp.group_privacy(eps=0.5, delta=1e-6, k=3) == (1.5, pytest.approx(3 * math.exp(1.0) * 1e-6))
    eps, delta = dp.subsample_amplify(eps=1.0, delta=1e-6, rho=0.01)
    assert eps == pytest.approx(math.log(1 + 0.01 * (math.e - 1))) and eps < 0.01 * 1.0 * 1.8
    assert delta == pytest.approx(1e-8)
    assert dp.subsample_amplify(eps=2.0, rho=1.0)[0] == pytest.approx(2.0)


def test_k_anonymity_and_l_diversity():
    rows = [dict(zip_=1, age=30, disease="flu"), dict(zip_=1, age=30, disease="cold"),
            dict(zip_=2, age=40, disease="flu"), dict(zip_=2, age=40, disease="flu"),
            dict(zip_=2, age=40, disease="hiv")]
    assert dp.k_anonymity(rows, ["zip_", "age"]) == 2
    assert dp.l_diversity(rows, ["zip_", "age"], "disease") == 2
    homogeneous = rows[2:4]
    assert dp.l_diversity(homogeneous, ["zip_"], "disease") == 1
    with pytest.raises(ValueError, match="quasi-identifier"):
        dp.k_anonymity(rows, ["height"])


@pytest.mark.parametrize("call,word", [
    (lambda: dp.rr_epsilon(0.5), "gamma"),
    (lambda: dp.compose_advanced(eps=0.1, delta=0.0, k=0, delta_prime=1e-5), "k"),
    (lambda: dp.compose_advanced(eps=0.1, delta=0.0, k=2, delta_prime=0.0), "delta_prime"),
    (lambda: dp.subsample_amplify(eps=1.0, rho=1.5), "rho"),
    (lambda: dp.compose_basic([0.1], [1e-6, 1e-6]), "same length"),
])
def test_bad_input(call, word):
    with pytest.raises(ValueError, match=word):
        call()
