"""Poisson-subsampled Gaussian and Laplace PLDs (ppk.pld.subsampled): brackets contain a 40-digit
oracle (quadrature of (p - e^eps q)_+ split at the closed-form root of L = eps, both orders), the bucket
masses' tails agree with mpmath down to e^-1000, sampling_prob = 1 is the plain builder, bad input is
refused naming the parameter, and the values agree with dp_accounting where it is installed."""
import math

import numpy as np
import pytest

from ppk.pld import PrivacyLossDistribution as PLD
from ppk.pld import mechanisms, subsampled

mp = pytest.importorskip("mpmath")
DPS = 40


def _gauss(sigma, q, dx=1e-4, bound=-50.0, adjacency="add_or_remove", s=1.0, max_buckets=1 << 20):
    return subsampled.gaussian(PLD, sigma, s, q, dx, bound, True, max_buckets, adjacency, "sigma")


def _laplace(b, q, dx=1e-4, adjacency="add_or_remove", s=1.0, max_buckets=1 << 20):
    return subsampled.laplace(PLD, b, s, q, dx, True, max_buckets, adjacency, "scale")


# ------------------------------------------------------------------ oracles (mpmath only, no ppk)
def _phi(t):
    return mp.exp(-t * t / 2) / mp.sqrt(2 * mp.pi)


def _root(eps, q):
    """The unsubsampled loss l with log(1 - q + q e^l) = eps; None where no output has that loss."""
    arg = 1 + mp.expm1(eps) / q
    return mp.log(arg) if arg > 0 else None


def _quad_gauss(sigma, q, eps, s=1.0):
    """(H(P || Q), H(Q || P)) of P = (1 - q) N(0, sigma^2) + q N(-s, sigma^2), Q = N(0, sigma^2), by
    quadrature in t = x / sigma (L decreases in t; each region ends at the root of L = +-eps)."""
    with mp.workdps(DPS):
        q, r, eps = mp.mpf(q), mp.mpf(s) / mp.mpf(sigma), mp.mpf(eps)

        def p(t):
            return (1 - q) * _phi(t) + q * _phi(t + r)

        def region(lo, hi, f):
            # quadrature of f on [lo, hi], one end infinite: split at the laws' centres and at steps of
            # the tail's decay scale 1/|t| from the finite end (a deep tail's mass sits within a few)
            end = hi if lo == -mp.inf else lo
            scale = 1 / max(1, abs(end))
            steps = [end - (1 if hi == end else -1) * scale * 2 ** j for j in range(-2, 8)]
            inner = [c for c in (-r, mp.mpf(0), *steps) if lo < c < hi]
            # mp.quad's tolerance is absolute: scale the integrand to about 1 near the finite end
            norm = mp.exp(eps) * _phi(end)
            return norm * mp.quad(lambda t: f(t) / norm, [lo, *sorted(inner), hi])

        def agrees(a, b):   # the quadrature against the closed form (relative: deltas reach e^-464)
            assert abs(a - b) <= mp.mpf(10) ** (-DPS + 10) * abs(b), (a, b)

        l_up = _root(eps, q)              # L > eps  <=>  t < (-l - r^2/2)/r
        t_up = (-l_up - r * r / 2) / r
        remove = region(-mp.inf, t_up, lambda t: p(t) - mp.exp(eps) * _phi(t))
        agrees(remove, (1 - q) * mp.ncdf(t_up) + q * mp.ncdf(t_up + r) - mp.exp(eps) * mp.ncdf(t_up))
        l_down = _root(-eps, q)           # L < -eps  <=>  t > (-l - r^2/2)/r
        if l_down is None:
            return remove, mp.mpf(0)
        t_down = (-l_down - r * r / 2) / r
        add = region(t_down, mp.inf, lambda t: _phi(t) - mp.exp(eps) * p(t))
        agrees(add, mp.ncdf(-t_down) - mp.exp(eps) * ((1 - q) * mp.ncdf(-t_down) + q * mp.ncdf(-t_down - r)))
        return remove, add


def _quad_laplace(b, q, eps, s=1.0):
    """(H(P || Q), H(Q || P)) of P = (1 - q) Lap(0, b) + q Lap(-s, b), Q = Lap(0, b) by quadrature
    (L decreases in x: constant for x <= -s and x >= 0, split there and at the root of L = +-eps)."""
    with mp.workdps(DPS):
        q, b, s, eps = mp.mpf(q), mp.mpf(b), mp.mpf(s), mp.mpf(eps)

        def lap(x, c):
            return mp.exp(-abs(x - c) / b) / (2 * b)

        def p(x):
            return (1 - q) * lap(x, 0) + q * lap(x, -s)
        e0 = s / b
        out = []
        for sign in (1, -1):
            ell = _root(sign * eps, q)
            if ell is None or (sign == 1 and ell >= e0) or (sign == -1 and ell <= -e0):
                out.append(mp.mpf(0))
                continue
            x = -(b * max(min(ell, e0), -e0) + s) / 2
            if sign == 1:
                out.append(mp.quad(lambda y: p(y) - mp.exp(eps) * lap(y, 0), [-mp.inf, -s, x]))
            else:
                out.append(mp.quad(lambda y: lap(y, 0) - mp.exp(eps) * p(y), [x, 0, mp.inf]))
        return tuple(out)


def _gauss_tail(sigma, q, loss, which, s=1.0):
    """P(L > loss) (which = "p") or Q(L > loss) (which = "q") of the remove pair, in mpmath."""
    with mp.workdps(DPS):
        q, r = mp.mpf(q), mp.mpf(s) / mp.mpf(sigma)
        ell = _root(mp.mpf(loss), q)
        if ell is None:
            return mp.mpf(1)
        t = (-ell - r * r / 2) / r
        return mp.ncdf(t) if which == "q" else (1 - q) * mp.ncdf(t) + q * mp.ncdf(t + r)


# ------------------------------------------------------------------ the bracket contains the oracle
GAUSS_CASES = [(1.0, 0.1, [0.0, 0.1, 0.5, 1.0, 2.0]), (2.0, 0.01, [0.0, 0.005, 0.02, 0.1]),
               (0.5, 0.5, [0.3, 1.0, 3.0, 6.0])]


def _check_brackets(pld, quadrature, epss, label):
    """Each bracket contains the quadrature's max over both orders and is narrow at Delta = 1e-4 (at most
    the P-mass of the bucket next to eps)."""
    for eps in epss:
        remove, add = quadrature(eps)
        exact = float(max(remove, add))
        lo, hi = pld.delta_bracket(eps)
        assert lo <= exact * (1 + 1e-12) and exact <= hi * (1 + 1e-12), (eps, lo, exact, hi)
        assert hi - lo <= 2e-4 * exact + 1e-15, (eps, lo, exact, hi)
        print(f"{label} eps={eps}: remove {float(remove):.12e} add {float(add):.12e} bracket [{lo:.12e}, {hi:.12e}]")


@pytest.mark.parametrize("sigma, q, epss", GAUSS_CASES)
def test_gaussian_bracket_contains_the_quadrature(sigma, q, epss):
    _check_brackets(_gauss(sigma, q), lambda eps: _quad_gauss(sigma, q, eps), epss, f"gauss sigma={sigma} q={q}")


@pytest.mark.parametrize("adjacency", ["remove", "add"])
def test_each_adjacency_reports_its_own_order(adjacency):
    # one pair serves all three: "remove" and "add" alone report their own order, add_or_remove the larger
    base, other = _gauss(1.0, 0.1, dx=1e-4), _gauss(1.0, 0.1, dx=1e-4, adjacency=adjacency)
    mine = 0 if adjacency == "remove" else 1
    for eps in (0.0, 0.05, 0.3, 1.0):
        exact = [float(x) for x in _quad_gauss(1.0, 0.1, eps)]
        lo, hi = other.delta_bracket(eps)
        assert lo <= exact[mine] * (1 + 1e-12) and exact[mine] <= hi * (1 + 1e-12), (eps, lo, exact, hi)
        assert hi <= base.delta_bracket(eps)[1]
        if exact[mine] < 0.5 * exact[1 - mine]:     # the other order is larger: it is not what is reported
            assert hi < exact[1 - mine]
    assert other._one_sided and not base._one_sided
    if adjacency == "add":   # the mirror image: mu_upper = N(0), the mixture lower
        n = base.mass_upper.size
        assert other.offset == 2 - base.offset - n
        assert np.array_equal(other.mass_upper, base.mass_lower[::-1])
        assert np.array_equal(other.mass_lower, base.mass_upper[::-1])
    else:
        assert np.array_equal(other.mass_upper, base.mass_upper)


@pytest.mark.parametrize("b, q, epss", [(1.0, 0.1, [0.0, 0.03, 0.1, 0.15, 0.2]), (0.5, 0.3, [0.1, 0.5, 1.5])])
def test_laplace_bracket_contains_the_quadrature(b, q, epss):
    _check_brackets(_laplace(b, q), lambda eps: _quad_laplace(b, q, eps), epss, f"laplace b={b} q={q}")


def _one_order(pld, grid_k, order):
    """delta of one order at eps = K Delta read off the buckets: at a grid point no bucket straddles eps,
    so H(P || Q) = sum over k > K of (P_k - e^eps Q_k) and H(Q || P) = sum over k <= -K of
    (Q_k - e^eps P_k), exactly (the overflow, below e^-50 here, aside)."""
    k = np.arange(pld.offset, pld.offset + pld.mass_upper.size)
    eps = np.longdouble(grid_k * pld.value_discretization_interval)
    p, q = pld.mass_upper, pld.mass_lower
    sel = k > grid_k if order == 0 else k <= -grid_k
    a, b = (p, q) if order == 0 else (q, p)
    return max(float(a[sel].sum() - np.exp(eps) * b[sel].sum()), 0.0)


@pytest.mark.parametrize("build, oracle", [(lambda: _gauss(1.0, 0.1, dx=1e-3), lambda e: _quad_gauss(1.0, 0.1, e)),
                                           (lambda: _gauss(2.0, 0.01), lambda e: _quad_gauss(2.0, 0.01, e)),
                                           (lambda: _laplace(1.0, 0.1), lambda e: _quad_laplace(1.0, 0.1, e))])
def test_both_orders_separately_at_grid_points(build, oracle):
    # the remove pair's H(P || Q) is dp_accounting's delta_remove, H(Q || P) its delta_add
    pld = build()
    dx = pld.value_discretization_interval
    for grid_k in (0, 3, 20, 50):
        eps = grid_k * dx
        exact = oracle(eps)
        for order in (0, 1):
            got = _one_order(pld, grid_k, order)
            assert got == pytest.approx(float(exact[order]), rel=1e-10, abs=1e-22), (eps, order)
            print(f"eps = {eps:g} order {order}: buckets {got:.15e}, oracle {float(exact[order]):.15e}")


def test_laplace_atoms_hold_the_ends():
    b, q, s = 1.0, 0.1, 1.0
    pld = _laplace(b, q, dx=1e-3)
    dx = pld.value_discretization_interval
    k = np.arange(pld.offset, pld.offset + pld.mass_upper.size)
    with mp.workdps(DPS):
        q_, b_, s_ = mp.mpf(q), mp.mpf(b), mp.mpf(s)
        top = mp.log1p(q_ * mp.expm1(s_ / b_))
        # the last bucket holds the atom at the top loss (x <= -s) and the outputs x in (-s, x_e) above
        # its lower edge: P(x < x_e) = (1 - q) e^{x_e/b}/2 + q (1 - e^{-(x_e + s)/b}/2)
        last = int(np.nonzero(pld.mass_upper)[0][-1])
        assert (k[last] - 1) * dx <= top <= k[last] * dx
        x_e = -(b_ * _root(mp.mpf(float(k[last] - 1) * dx), q_) + s_) / 2
        exact = (1 - q_) * mp.exp(x_e / b_) / 2 + q_ * (1 - mp.exp(-(x_e + s_) / b_) / 2)
        atom = (1 - q_) * mp.exp(-s_ / b_) / 2 + q_ / 2
        assert atom < exact
        assert float(pld.mass_upper[last]) == pytest.approx(float(exact), rel=1e-12)
        # the first bucket holds Q's atom at the bottom loss (x >= 0), 1/2, and the outputs just below 0
        first = int(np.nonzero(pld.mass_lower)[0][0])
        x_e = -(b_ * _root(mp.mpf(float(k[first]) * dx), q_) + s_) / 2
        exact = 1 - mp.exp(x_e / b_) / 2
        assert 0.5 < exact and float(pld.mass_lower[first]) == pytest.approx(float(exact), rel=1e-12)
    assert float(pld.overflow_mass_upper) == 0.0 and float(pld.overflow_mass_lower) == 0.0


# ------------------------------------------------------------------ masses down to the truncation bound
def test_gaussian_tails_of_the_masses_down_to_e_minus_1000():
    sigma, q, dx = 0.5, 0.1, 1e-3
    pld = _gauss(sigma, q, dx=dx, bound=-1000.0)
    k = np.arange(pld.offset, pld.offset + pld.mass_upper.size)
    top = float(k[-1]) * dx
    worst = 0.0
    for which, masses in (("p", pld.mass_upper), ("q", pld.mass_lower)):
        above = np.cumsum(masses[::-1])[::-1]          # sum over buckets j >= i, from the small end
        for frac in (0.02, 0.2, 0.5, 0.8, 0.9, 0.97, 0.995):
            i = int(frac * (k.size - 1))
            edge = float(k[i] - 1) * dx                  # bucket i holds losses above this edge
            exact = _gauss_tail(sigma, q, edge, which) - _gauss_tail(sigma, q, top, which)
            got = above[i]
            with mp.workdps(DPS):
                rel = float(abs(mp.mpf(float(np.log(got))) - mp.log(exact)))   # relative, in log space
            worst = max(worst, rel)
            assert rel < 1e-12, (which, frac, float(np.log(got)), float(mp.log(exact)))
    print(f"worst relative error of a mass tail (down to e^{float(np.log(above[i])):.0f}): {worst:.2e}")


def test_gaussian_log_delta_far_below_1e_300():
    sigma, q, eps = 0.5, 0.1, 60.0
    lo, hi = _gauss(sigma, q, dx=1e-3, bound=-1000.0).log_delta_bracket(eps)
    remove, add = _quad_gauss(sigma, q, eps)
    with mp.workdps(DPS):
        exact = float(mp.log(max(remove, add)))
    assert lo <= exact + 1e-12 * abs(exact) and exact <= hi + 1e-12 * abs(exact), (lo, exact, hi)
    assert hi - lo < 0.05, (lo, exact, hi)    # a bucket of 1e-3 at a loss slope of ~30 per unit of t
    print(f"log delta at eps = 60: oracle {exact:.12f}, bracket [{lo:.12f}, {hi:.12f}]")


# ------------------------------------------------------------------ sampling_prob = 1, bad input
@pytest.mark.parametrize("adjacency", subsampled.ADJACENCIES)
def test_sampling_prob_one_is_the_plain_builder(adjacency):
    for got, plain in [(_gauss(1.5, 1.0, dx=1e-3, adjacency=adjacency),
                        mechanisms.gaussian(PLD, 1.5, 1.0, 1e-3, -50.0, True, 1 << 20, "sigma")),
                       (_laplace(2.0, 1.0, dx=1e-3, adjacency=adjacency),
                        mechanisms.laplace(PLD, 2.0, 1.0, 1e-3, True, 1 << 20, "scale"))]:
        assert got.offset == plain.offset
        assert got.value_discretization_interval == plain.value_discretization_interval
        assert np.array_equal(got.mass_upper, plain.mass_upper) and np.array_equal(got.mass_lower, plain.mass_lower)
        assert got.overflow_mass_upper == plain.overflow_mass_upper


@pytest.mark.parametrize("value, error", [(0.0, ValueError), (-0.1, ValueError), (1.5, ValueError),
                                          (float("nan"), ValueError), ("0.1", TypeError), (True, TypeError)])
def test_bad_sampling_prob_is_refused(value, error):
    for build in (lambda: _gauss(1.0, value), lambda: _laplace(1.0, value)):
        with pytest.raises(error, match="sampling_prob"):
            build()


@pytest.mark.parametrize("value, error", [("replace", ValueError), ("Remove", ValueError), (None, TypeError)])
def test_bad_adjacency_is_refused(value, error):
    for build in (lambda: _gauss(1.0, 0.1, adjacency=value), lambda: _laplace(1.0, 0.1, adjacency=value)):
        with pytest.raises(error, match="adjacency"):
            build()


def test_other_bad_arguments_name_their_parameter():
    with pytest.raises(ValueError, match="sigma"):
        _gauss(-1.0, 0.1)
    with pytest.raises(ValueError, match="sensitivity"):
        _gauss(1.0, 0.1, s=0.0)
    with pytest.raises(ValueError, match="scale"):
        _laplace(0.0, 0.1)
    with pytest.raises(ValueError, match="max_buckets"):
        _laplace(1.0, 0.1, max_buckets=2)


def test_extreme_parameters_stay_finite():
    # q near 1 (loss down to log(1 - q) = -27.6), a tiny and a large sensitivity/sigma, few buckets
    for pld in (_gauss(1.0, 1 - 1e-12, dx=1e-2), _gauss(1e6, 0.3, dx=1e-3), _gauss(0.01, 0.3, dx=1e-2),
                _gauss(1.0, 0.1, max_buckets=3), _laplace(0.01, 0.2, dx=1e-2), _laplace(1.0, 1e-9)):
        lo, hi = pld.delta_bracket(np.array([0.0, 0.5, 5.0]))
        assert np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(lo <= hi) and np.all(hi <= 1)
        total = float(pld.mass_upper.sum() + pld.overflow_mass_upper)
        assert total == pytest.approx(1.0, abs=1e-12)


# ------------------------------------------------------------------ dp_accounting and the public builder
def test_agrees_with_dp_accounting():
    dpl = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    sigma, q = 2.0, 0.01
    ours = _gauss(sigma, q, dx=1e-4, bound=-50.0)
    theirs = dpl.from_gaussian_mechanism(sigma, sampling_prob=q, value_discretization_interval=1e-4,
                                         log_mass_truncation_bound=-50.0)
    eps = np.array([0.0, 0.002, 0.005, 0.01, 0.02])
    hi = ours.delta_bracket(eps)[1]
    ref = np.asarray(theirs.get_delta_for_epsilon(eps))
    assert np.all(ref > 1e-6)
    np.testing.assert_allclose(hi, ref, rtol=1e-7)
    print("one release: ppk upper", hi, "dp_accounting", ref)
    # a thousand releases (DP-SGD's accounting) at Delta = 1e-3: the same within the discretisation
    ours = _gauss(sigma, q, dx=1e-3, bound=-50.0).self_compose(1000)
    theirs = dpl.from_gaussian_mechanism(sigma, sampling_prob=q, value_discretization_interval=1e-3,
                                         log_mass_truncation_bound=-50.0).self_compose(1000)
    eps = np.array([0.1, 0.3, 0.5])
    lo, hi = ours.delta_bracket(eps)
    ref = np.asarray(theirs.get_delta_for_epsilon(eps))
    assert np.all(ref > 1e-5) and np.all(lo <= ref)
    np.testing.assert_allclose(hi, ref, rtol=1e-4)
    print("1000 releases: ppk", lo, hi, "dp_accounting", ref)


def test_through_from_gaussian_mechanism():
    pld = PLD.from_gaussian_mechanism(2.0, sampling_prob=0.01, value_discretization_interval=1e-4)
    direct = _gauss(2.0, 0.01, dx=1e-4, bound=-50.0)
    eps = np.array([0.0, 0.005, 0.02])
    assert np.array_equal(pld.delta_bracket(eps)[1], direct.delta_bracket(eps)[1])
