"""k-fold Poisson-subsampled Gaussian (#31): ppk's certified bracket of the composed PLD contains an
independent oracle at delta from 1e-3 down to 1e-300.

The oracle (tests/subsampled_oracle.py, mpmath only) inverts M(z)^k e^{-z eps} / (z (z+1)) along a vertical
line through its saddle point, M the loss's moment-generating function by trapezoidal sums; about 25
correct digits of delta itself at any size.  Its own checks here: the inversion kernel and its poles, a
randomized response (exact binomial sum), the plain Gaussian's closed form (q = 1, through the same
quadrature), and a one-fold subsampled delta by direct quadrature of (P - e^eps Q)_+.

The k-fold oracle values are constants (a live evaluation takes 4-90 s, the add order at (2, 0.01, 1000,
6.87) 430 s): they were produced by ``log_delta(sigma, q, k, eps, order)`` at dps 40 (eps rounded to 3
digits from the saddle-point estimate of delta = 1e-3, 1e-15, 1e-100, 1e-300), each checked against a
second contour (rise = 5: the line where the integrand's height is e^5 the saddle's) and against dps 50;
the largest disagreement in log delta over all of them is recorded in ``ORACLE_AGREEMENT``.
``test_live_oracle`` recomputes one of them, so the constants stay tied to the oracle's code.
"""
import math
import time

import pytest

from ppk.pld import PrivacyLossDistribution as PLD

mp = pytest.importorskip("mpmath")
import subsampled_oracle as oracle  # noqa: E402  (tests/ is on sys.path: conftest.py)

# (sigma, q, k, eps) -> (log delta remove, log delta add), natural logs at dps 40; "-inf": delta = 0
# (the add order's loss is at most -log(1 - q), so its k-fold delta vanishes for eps >= -k log(1 - q)).
ORACLE = {
    (2.0, 0.01, 1000, 0.377): ("-6.892843649911210917244", "-7.195299952064311748925"),
    (2.0, 0.01, 1000, 1.34): ("-33.69727134449560244587", "-43.41271692020659853278"),
    (2.0, 0.01, 1000, 6.87): ("-232.5168563885086954508", "-2487.603883058724239456"),
    (2.0, 0.01, 1000, 19.9): ("-692.8307868678896168116", "-inf"),
    (1.0, 0.05, 200, 3.16): ("-6.902416312487575825956", "-12.93774418067224652599"),
    (1.0, 0.05, 200, 11.1): ("-34.68324805759092784539", "-inf"),
    (1.0, 0.05, 200, 52.6): ("-230.3118076287771401484", "-inf"),
    (1.0, 0.05, 200, 139.0): ("-690.3370480576901175486", "-inf"),
    (4.0, 0.1, 3000, 4.76): ("-6.90735796275940013885", "-7.110522299121704486289"),
    (4.0, 0.1, 3000, 11.8): ("-34.26504995963791314899", "-36.95080241029270561562"),
    (4.0, 0.1, 3000, 31.7): ("-230.1346367735925327947", "-281.0976407745199076137"),
    (4.0, 0.1, 3000, 56.5): ("-689.7195493568556672003", "-982.6266956906862392965"),
}
ORACLE_AGREEMENT = 3.1e-24  # max |log delta - second contour| and |log delta - dps 50| over ORACLE

# one-fold (sigma, q, eps) = (4, 0.5, 0.1), add order, dps 40 (13 s live; remove is evaluated live);
# the direct quadrature gave -4.287331730793788724004 as well (difference 1.5e-26)
ONE_FOLD_ADD = "-4.287331730793788724004"

DX_FINE, DX_COARSE = 1e-4, 1e-3


def _ppk_bracket(sigma, q, k, dx, eps):
    pld = PLD.from_gaussian_mechanism(sigma, sampling_prob=q, value_discretization_interval=dx,
                                      log_mass_truncation_bound=-1000).self_compose(k)
    return pld.log_delta_bracket(eps)


def _truth(sigma, q, k, eps):
    """ppk reports the larger of the two orders: the oracle's max."""
    with mp.workdps(40):
        return max(mp.mpf(v) for v in ORACLE[(sigma, q, k, eps)])


# ------------------------------------------------------------------ the oracle's own checks
@pytest.mark.parametrize("u, c", [(-2, 0.7), (0.5, 0.7), (0.5, -0.5), (-2, -1.5)])
def test_inversion_kernel_and_poles(u, c):
    """(1/2 pi i) int e^{zu}/(z(z+1)) dz is (1 - e^{-u})_+ right of 0; crossing the pole at 0 subtracts
    its residue 1, crossing the one at -1 adds e^{-u} back (the identity's strip is Re z > 0)."""
    got = oracle.kernel_inversion(u, c)
    with mp.workdps(30):
        want = max(0, 1 - mp.exp(-u)) - (1 if c < 0 else 0) + (mp.exp(-u) if c < -1 else 0)
        assert abs(got - want) <= mp.mpf("1e-25"), (got, want)


@pytest.fixture
def _dps():
    saved = mp.mp.dps
    yield
    mp.mp.dps = saved


def test_randomized_response(_dps):
    """The inversion with an exact M, p e^{za} + (1-p) e^{-za}, against the binomial sum (k = 5; eps on
    the lattice of S, so the integrand is periodic in t times a 1/t^2 decay)."""
    mp.mp.dps = 30          # restored by the fixture below
    p = mp.mpf("0.7")
    a = mp.log(p / (1 - p))

    class RandomizedResponse:
        period = 2 * mp.pi / a

        def __call__(self, z):
            return p * mp.exp(z * a) + (1 - p) * mp.exp(-z * a)

    eps = 2 * a
    got = oracle.log_delta_mgf(RandomizedResponse(), 5, eps, c=0.5)
    want = oracle.log_delta_binomial(p, 5, eps)
    print(f"randomized response k=5: {mp.nstr(got, 20)} vs {mp.nstr(want, 20)}")
    assert abs(got - want) <= mp.mpf("1e-25")


@pytest.mark.parametrize("sigma, k, eps", [(2.0, 10, 4.32), (3.0, 1000, 140.0), (1.0, 100, 300.0),
                                           (3.0, 1000, 470.0)])
def test_plain_gaussian(sigma, k, eps):
    """q = 1 through the oracle's quadrature against Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), at
    delta about 1e-2, 1e-15, 1e-138, 1e-338."""
    want = oracle.log_delta_gaussian(sigma, k, eps)
    got = oracle.log_delta(sigma, 1.0, k, eps)
    with mp.workdps(40):
        rel = abs(mp.expm1(got - want))
    print(f"Gaussian sigma={sigma} k={k} eps={eps}: log delta {mp.nstr(got, 20)}, rel {mp.nstr(rel, 3)}")
    assert rel <= mp.mpf("1e-15")


def test_one_fold_against_direct_quadrature():
    """k = 1 by the contour (remove live, add cached) against (P - e^eps Q)_+ integrated over x."""
    with mp.workdps(40):
        add = mp.mpf(ONE_FOLD_ADD)
    for order, got in (("remove", oracle.log_delta(4.0, 0.5, 1, 0.1, "remove")), ("add", add)):
        want = oracle.log_delta_direct(4.0, 0.5, 0.1, order)
        with mp.workdps(40):
            rel = abs(mp.expm1(got - want))
        print(f"one-fold {order}: {mp.nstr(got, 20)} vs direct {mp.nstr(want, 20)}, rel {mp.nstr(rel, 3)}")
        assert rel <= mp.mpf("1e-15")


def test_live_oracle():
    """One k-fold constant recomputed: the table is what the oracle's code gives."""
    sigma, q, k, eps = 4.0, 0.1, 3000, 11.8
    got = oracle.log_delta(sigma, q, k, eps, "remove")
    with mp.workdps(40):
        want = mp.mpf(ORACLE[(sigma, q, k, eps)][0])
        print(f"live oracle: {mp.nstr(got, 25)} vs table {mp.nstr(want, 25)}")
        assert abs(got - want) <= mp.mpf("1e-20"), (got, want)
    lo, hi = _ppk_bracket(sigma, q, k, DX_FINE, eps)
    assert lo <= got <= hi


# ------------------------------------------------------------------ the real test: ppk's brackets
@pytest.mark.parametrize("case", [(2.0, 0.01, 1000, 1.34), (2.0, 0.01, 1000, 6.87), (4.0, 0.1, 3000, 11.8)])
@pytest.mark.parametrize("adjacency", ["remove", "add"])
def test_one_adjacency_alone_brackets_its_own_order(case, adjacency):
    # "remove" / "add" alone: the k-fold composition of that order, not the larger of the two
    sigma, q, k, eps = case
    with mp.workdps(40):
        truth = mp.mpf(ORACLE[case][0 if adjacency == "remove" else 1])
        other = mp.mpf(ORACLE[case][1 if adjacency == "remove" else 0])
    pld = PLD.from_gaussian_mechanism(sigma, sampling_prob=q, value_discretization_interval=DX_FINE,
                                      log_mass_truncation_bound=-1000, adjacency=adjacency).self_compose(k)
    lo, hi = pld.log_delta_bracket(eps)
    print(f"{adjacency} sigma={sigma} q={q} k={k} eps={eps}: oracle {mp.nstr(truth, 16)} in [{lo!r}, {hi!r}]")
    assert lo <= truth <= hi
    if truth < other - 1:
        assert hi < other



@pytest.mark.parametrize("dx", [DX_FINE, DX_COARSE])
@pytest.mark.parametrize("case", sorted(ORACLE))
def test_bracket_contains_oracle(case, dx):
    sigma, q, k, eps = case
    truth = _truth(sigma, q, k, eps)
    t0 = time.perf_counter()
    lo, hi = _ppk_bracket(sigma, q, k, dx, eps)
    width = math.expm1(hi - lo) if hi - lo < 700 else math.inf
    print(f"sigma={sigma} q={q} k={k} eps={eps} dx={dx:g}: oracle {mp.nstr(truth, 16)} "
          f"(delta {mp.nstr(mp.exp(truth), 4)}) in [{lo!r}, {hi!r}], relative width {width:.3g} "
          f"({time.perf_counter() - t0:.2f} s)")
    assert lo <= truth <= hi
