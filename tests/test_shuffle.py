"""ShuffledRandomizedResponse against independent oracles (tests/shuffle_oracle.py: mpmath and exact
integers, no ppk code): brute force over every split of the known inputs and every output, both orders."""
from __future__ import annotations

import functools
import math

import mpmath as mp
import pytest
from hypothesis import given, settings, strategies as st

import ppk
from ppk.related.shuffle_clones import clone_bound_delta, rr_dp_delta

import shuffle_oracle as so

DPS = 60
#: the oracle's own conversion to float: a bracket must contain the exact value within this
CONVERT = 1e-12
EPS_GRID = (0.0, 0.1, 0.5, 1.0, 2.0)
S = ppk.ShuffledRandomizedResponse


def eps_grid(eps0: float) -> list[float]:
    return [e for e in EPS_GRID if e < eps0] + [eps0 - 1e-3]


def assert_contains(bracket, exact, *, width: float = 1e-6) -> None:
    """lower <= exact <= upper (to the conversion's 1e-12) and upper / lower - 1 <= width."""
    lo, up = bracket
    x = float(exact)
    assert lo <= x * (1 + CONVERT) and x * (1 - CONVERT) <= up, (bracket, mp.nstr(exact, 20))
    assert up <= lo * (1 + width), (bracket, up / lo - 1)


def assert_contains_log(log_bracket, log_exact, *, width: float = 1e-6) -> None:
    lo, up = log_bracket
    x = float(log_exact)
    assert lo <= x + CONVERT and x - CONVERT <= up, (log_bracket, mp.nstr(log_exact, 20))
    assert up - lo <= width, (log_bracket, up - lo)


def assert_near_log(log_bracket, log_exact, *, tol: float) -> None:
    """Both log ends within ``tol`` of the exact log (and on the right sides of it)."""
    assert_contains_log(log_bracket, log_exact, width=2 * tol)
    lo, up = log_bracket
    assert up - float(log_exact) <= tol and float(log_exact) - lo <= tol, (log_bracket, mp.nstr(log_exact, 20))


# --------------------------------------------------------------------------------------------- oracles
def oracle_splits(eps, **kwargs) -> list[tuple]:
    """[(H(P1||P0), H(P0||P1))] for every split (mpf engine)."""
    with mp.workdps(DPS):
        return so.all_splits(eps, **kwargs)


@functools.lru_cache(maxsize=4)
def fixed(n: int, eps0: float | None = None, r: float | None = None, known: int | None = None,
          p: float | None = None) -> so.FixedPoint:
    with mp.workdps(DPS):
        rr = so.flip_probability(eps0) if r is None else r
        return so.FixedPoint(n=n, r=rr, known=known, p=p, bits=160)


def fixed_delta(eps, *args, **kwargs) -> mp.mpf:
    with mp.workdps(DPS):
        return fixed(*args, **kwargs).delta(eps)


def tail_log(eps, *, n, eps0):
    with mp.workdps(DPS):
        return so.tail_sup_log(eps, n=n, eps0=eps0)


# ----------------------------------------------------------------------------- 1. brute force, small n
@pytest.mark.parametrize("eps0", [0.5, 1.0, 2.0, 3.0, 4.0, 6.0])
@pytest.mark.parametrize("n", [2, 3, 5, 20])
def test_brute_force_small_n(n, eps0):
    q = S(n=n, eps0=eps0)
    for eps in eps_grid(eps0):
        per = oracle_splits(eps, n=n, eps0=eps0)
        exact = max(max(pair) for pair in per)
        assert_contains(q.delta_bracket(eps), exact)
        assert q.delta(eps) == q.delta_bracket(eps)[1]


def test_n2_closed_form():
    """n = 2, the other input 0 or 1: the outputs 0, 1, 2 have closed-form masses."""
    eps0, eps = 1.5, 0.3
    with mp.workdps(DPS):
        r = so.flip_probability(eps0)
        e = mp.exp(eps)
        best = mp.mpf(0)
        for other1 in (r, 1 - r):          # the other user reports 1 with this probability
            p0 = [(1 - r) * (1 - other1), r * (1 - other1) + (1 - r) * other1, r * other1]
            p1 = [r * (1 - other1), (1 - r) * (1 - other1) + r * other1, (1 - r) * other1]
            for a, b in ((p1, p0), (p0, p1)):
                best = max(best, sum(max(0, x - e * y) for x, y in zip(a, b)))
    assert_contains(S(n=2, eps0=eps0).delta_bracket(eps), best)


def test_worst_split_n20_is_two_of_one_kind():
    """n = 20, eps0 = 3, eps = 0.5: H(P0||P1) is largest when two of the other 19 hold a 1 and H(P1||P0) when
    two hold a 0 (the mirror); the all-equal splits are strictly smaller."""
    per = oracle_splits(0.5, n=20, eps0=3.0)
    h10, h01 = [a for a, _ in per], [b for _, b in per]
    assert max(range(20), key=lambda j: h01[j]) == 2
    assert max(range(20), key=lambda j: h10[j]) == 17
    assert h01[2] > h01[1] > h01[0] and h01[2] > h01[3]
    assert abs(h10[17] / h01[2] - 1) < mp.mpf(10) ** -40
    exact = h01[2]
    assert_contains(S(n=20, eps0=3.0).delta_bracket(0.5), exact)
    # at eps close to eps0 the all-equal split is the worst; at eps = 0 (total variation, symmetric, so
    # splits j and 19 - j tie) the two middle ones
    per = oracle_splits(2.9, n=20, eps0=3.0)
    assert max(range(20), key=lambda j: per[j][1]) == 0
    per = oracle_splits(0.0, n=20, eps0=3.0)
    assert max(range(20), key=lambda j: per[j][1]) in (9, 10)
    assert abs(per[9][1] / per[10][1] - 1) < mp.mpf(10) ** -40 and per[9][1] > per[8][1]


def test_oracle_engines_agree():
    """The mpf engine, the fixed-point engine and the tail engine give the same value (oracle self-check)."""
    for eps in (0.0, 0.1, 0.5):
        per = oracle_splits(eps, n=50, eps0=1.0)
        with mp.workdps(DPS):
            fp = fixed(50, 1.0)
            for j in (0, 1, 7, 25, 48, 49):
                a, b = fp.split_deltas(eps, j)
                assert abs(a - per[j][0]) <= mp.mpf(10) ** -40 and abs(b - per[j][1]) <= mp.mpf(10) ** -40
            exact = max(max(pair) for pair in per)
            assert abs(fp.delta(eps) / exact - 1) < mp.mpf(10) ** -35
            log_tail, _ = tail_log(eps, n=50, eps0=1.0)
            assert abs(mp.exp(log_tail) / exact - 1) < mp.mpf(10) ** -40


@pytest.mark.parametrize("eps0", [0.5, 1.0, 2.0, 4.0, 6.0])
@pytest.mark.parametrize("n", [50, 200])
def test_brute_force_fixed_point(n, eps0):
    q = S(n=n, eps0=eps0)
    for eps in eps_grid(eps0)[:-1]:
        exact = fixed_delta(eps, n, eps0)
        assert_contains(q.delta_bracket(eps), exact)
    eps = eps0 - 1e-3                      # delta may be tiny here: the tail engine, in relative precision
    log_exact, _ = tail_log(eps, n=n, eps0=eps0)
    assert_contains_log(q.log_delta_bracket(eps), log_exact)


# ------------------------------------------------------------------------------------------ one split
SPLIT_CASES = [(20, 3.0, 0.5), (20, 3.0, 0.0), (50, 2.0, 0.1), (50, 2.0, 1.0)]


@pytest.mark.parametrize("n, eps0, eps", SPLIT_CASES)
def test_split_bracket_is_delta_of_the_split(n, eps0, eps):
    """split_log_delta_bracket(ones=j) is delta of split j: the larger of both orders."""
    q = S(n=n, eps0=eps0)
    per = oracle_splits(eps, n=n, eps0=eps0)
    for j in range(n):
        with mp.workdps(DPS):
            assert_near_log(q.split_log_delta_bracket(eps, ones=j), mp.log(max(per[j])), tol=1e-10)


def test_split_bracket_partial_knowledge():
    """With unknown users (no mirror) one split's bracket is the larger of both orders."""
    q = S(n=30, eps0=2.0, known=5, p=0.3)
    for eps in (0.0, 0.5, 1.5):
        per = oracle_splits(eps, n=30, eps0=2.0, known=5, p=0.3)
        for j in range(6):
            with mp.workdps(DPS):
                assert_near_log(q.split_log_delta_bracket(eps, ones=j), mp.log(max(per[j])), tol=1e-10)


# ---------------------------------------------------------------------------------------- 2. tiny delta
@pytest.mark.parametrize("n, eps0, eps", [(2000, 0.5, 0.4999), (2000, 1.0, 0.999), (200, 1.0, 1 - 1e-9)])
def test_tiny_delta_in_log_space(n, eps0, eps):
    log_exact, per = tail_log(eps, n=n, eps0=eps0)
    q = S(n=n, eps0=eps0)
    assert_contains_log(q.log_delta_bracket(eps), log_exact)
    assert q.log_delta(eps) == q.log_delta_bracket(eps)[1]
    for j in (0, 1, n // 2, n - 1):     # (measured: ends within 3.1e-10 of the exact log at log delta = -2618)
        assert_near_log(q.split_log_delta_bracket(eps, ones=j), max(per[j]), tol=1e-9)
    if n == 2000 and eps0 == 0.5:
        assert log_exact < -900                        # far below 1e-308: e^-957
        assert q.delta(eps) == 5e-324 and math.isfinite(q.log_delta(eps))   # the upper end rounded up, not 0


# ------------------------------------------------------------------------------- 3. partial knowledge
@pytest.mark.parametrize("n, eps0, p", [(30, 1.0, 0.3), (30, 3.0, 0.5), (12, 2.0, 0.9)])
def test_known_zero_is_iid(n, eps0, p):
    """known = 0: no supremum, C = Bin(n - 1, q) with q = r + p(1 - 2r)."""
    q = S(n=n, eps0=eps0, known=0, p=p)
    for eps in eps_grid(eps0):
        with mp.workdps(DPS):
            r = so.flip_probability(eps0)
            c = so.binomial_pmf(n - 1, r + mp.mpf(p) * (1 - 2 * r))
            p0, p1 = so.output_pmfs(c, r)
            exact = max(so.hockey(p1, p0, eps), so.hockey(p0, p1, eps))
        assert_contains(q.delta_bracket(eps), exact)


def test_known_zero_is_iid_n200():
    q = S(n=200, eps0=2.0, known=0, p=0.5)
    for eps in (0.0, 0.1, 0.5):
        assert_contains(q.delta_bracket(eps), fixed_delta(eps, 200, 2.0, None, 0, 0.5))


@pytest.mark.parametrize("p", [0.3, 0.0, 1.0])
def test_known_five_of_thirty(p):
    """known = 5 at n = 30: the supremum over the 6 splits with the three-binomial C."""
    q = S(n=30, eps0=2.0, known=5, p=p)
    for eps in eps_grid(2.0):
        exact = max(max(pair) for pair in oracle_splits(eps, n=30, eps0=2.0, known=5, p=p))
        assert_contains(q.delta_bracket(eps), exact)


@pytest.mark.parametrize("p", [0.0, 1.0])
def test_p_edge_is_full_knowledge_of_fewer_splits(p):
    """p = 0 (1): the unknown users hold 0 (1), so the curve is the supremum over the full-knowledge
    splits whose ones number at most known (at least n - 1 - known)."""
    n, known = 30, 5
    q = S(n=n, eps0=2.0, known=known, p=p)
    full = oracle_splits(0.5, n=n, eps0=2.0)
    ones = range(known + 1) if p == 0.0 else range(n - 1 - known, n)
    exact = max(max(full[j]) for j in ones)
    assert_contains(q.delta_bracket(0.5), exact)


# ----------------------------------------------------------------------- 4. bounds and monotonicity
def test_below_clone_bounds_and_rr():
    """The certified upper end is below FMT21's clone bound and RR's plain DP.  FMT23's stronger clones are
    exact for binary RR at small n (n = 2, 3 on this grid, up to n = 5 at eps0 = 2, eps = 1; the oracle agrees
    with it to 3.1e-16), so there the upper end may exceed it by its own width (measured <= 2.5e-13 relative);
    the exact value does not (beyond the bound's last-bit rounding)."""
    for eps0 in (0.5, 1.0, 2.0, 4.0):
        for n in range(2, 41):
            q = S(n=n, eps0=eps0)
            for eps in (0.0, 0.1, 0.5, 1.0):
                if eps >= eps0:
                    continue
                lo, up = q.delta_bracket(eps)
                assert up <= clone_bound_delta(n=n, eps0=eps0, eps=eps, variant="fmt21"), (n, eps0, eps)
                fmt23 = clone_bound_delta(n=n, eps0=eps0, eps=eps, variant="fmt23")
                assert lo <= fmt23 and up <= fmt23 * (1 + 1e-12), (n, eps0, eps, up / fmt23 - 1)
                if n > 5:
                    assert up <= fmt23, (n, eps0, eps)
                assert up <= rr_dp_delta(eps0=eps0, eps=eps), (n, eps0, eps)
    for n in (2, 3, 4, 5):
        with mp.workdps(DPS):
            exact = so.sup_delta(1.0, n=n, eps0=2.0)
        assert float(exact) <= clone_bound_delta(n=n, eps0=2.0, eps=1.0, variant="fmt23") * (1 + 1e-15)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 300), eps0=st.floats(0.05, 6.0), a=st.floats(0.0, 1.0), b=st.floats(0.0, 1.0))
def test_monotone_in_eps(n, eps0, a, b):
    e1, e2 = sorted((a * eps0, b * eps0))
    q = S(n=n, eps0=eps0)
    assert q.delta(e2) <= q.delta(e1)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 300), eps0=st.floats(0.05, 6.0), a=st.floats(0.0, 0.999))
def test_monotone_in_n(n, eps0, a):
    """One more user: the count of n + 1 is the count of n plus an independent report, for each split."""
    eps = a * eps0
    assert S(n=n + 1, eps0=eps0).delta(eps) <= S(n=n, eps0=eps0).delta(eps)


# ------------------------------------------------------------------------------------- 5. edge cases
def test_eps_at_or_above_eps0_is_zero():
    q = S(n=10, eps0=1.0)
    for eps in (1.0, 1.5, 30.0):
        assert q.delta_bracket(eps) == (0.0, 0.0)
        assert q.log_delta(eps) == -math.inf
    per = oracle_splits(1.0, n=10, eps0=1.0)
    assert max(max(pair) for pair in per) < mp.mpf(10) ** -(DPS - 5)      # zero up to the oracle's rounding


def test_eps0_zero_is_zero():
    q = S(n=10, eps0=0.0)
    for eps in (0.0, 0.5):
        assert q.delta_bracket(eps) == (0.0, 0.0)
        assert q.log_delta(eps) == -math.inf


@pytest.mark.parametrize("n", [2, 5, 40])
def test_no_flipping_known_everything_is_one(n):
    q = S(n=n, eps0=1.0).with_scale(0.0)          # flip probability 0: no flipping (eps0 = inf is refused)
    assert q.scale == 0.0
    for eps in (0.0, 1.0, 10.0, 100.0):
        lo, up = q.delta_bracket(eps)
        assert lo <= 1.0 <= up <= 1 + 1e-6, (eps, lo, up)


@pytest.mark.parametrize("n, known, p", [(10, 3, 0.4), (30, 0, 0.5), (25, 20, 0.1)])
def test_no_flipping_with_unknown_users(n, known, p):
    """eps0 = inf, known < n - 1: a noiseless count whose only noise is Bin(n - 1 - known, p)."""
    q = S(n=n, eps0=1.0, known=known, p=p).with_scale(0.0)
    for eps in (0.0, 0.1, 0.5, 1.0, 2.0):
        per = oracle_splits(eps, n=n, eps0=math.inf, known=known, p=p)
        exact = max(max(pair) for pair in per)
        with mp.workdps(DPS):     # the same from Bin(u, p) alone: outputs j + x against j + 1 + x
            u = n - 1 - known
            b = so.binomial_pmf(u, p)
            p0, p1 = b + [mp.mpf(0)], [mp.mpf(0)] + b
            alone = max(so.hockey(p1, p0, eps), so.hockey(p0, p1, eps))
        assert abs(alone - exact) <= mp.mpf(10) ** -40
        assert_contains(q.delta_bracket(eps), exact)


@pytest.mark.parametrize("kwargs, name", [
    (dict(n=0, eps0=1.0), "n"), (dict(n=2.5, eps0=1.0), "n"), (dict(n=5, eps0=-1.0), "eps0"),
    (dict(n=5, eps0=math.nan), "eps0"), (dict(n=5, eps0=1.0, known=5), "known"),
    (dict(n=5, eps0=1.0, known=-1), "known"), (dict(n=5, eps0=1.0, known=2), "p"),
    (dict(n=5, eps0=1.0, known=2, p=1.5), "p"), (dict(n=5, eps0=1.0, known=2, p=-0.1), "p"),
    (dict(n=5, eps0=1.0, rtol=0), "rtol"),
])
def test_invalid_arguments_name_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        S(**kwargs)


def test_invalid_eps_and_split():
    q = S(n=5, eps0=1.0)
    with pytest.raises(ValueError, match=r"\beps\b"):
        q.delta(-0.1)
    with pytest.raises(ValueError, match=r"\bones\b"):
        q.split_log_delta_bracket(0.5, ones=5)


# ---------------------------------------------------------------------------------- 6. epsilon(delta)
@pytest.mark.slow
def test_epsilon_n1000():
    """eps(1e-6) at n = 1000, eps0 = 2: the certified upper end reaches 1e-6 there, and the exact curve
    still exceeds 1e-6 at eps (1 - 1e-6), so exact_eps <= e <= exact_eps (1 + 1e-6)."""
    q = S(n=1000, eps0=2.0)
    e = q.epsilon(1e-6)
    assert q.delta(e) <= 1e-6
    assert fixed_delta(e, 1000, 2.0) <= mp.mpf(1e-6)
    assert fixed_delta(e / (1 + 1e-6), 1000, 2.0) > mp.mpf(1e-6)


def test_epsilon_n200():
    q = S(n=200, eps0=2.0)
    for target in (1e-3, 1e-6):
        e = q.epsilon(target)
        assert q.delta(e) <= target
        assert fixed_delta(e, 200, 2.0) <= mp.mpf(target)
        assert fixed_delta(e / (1 + 1e-6), 200, 2.0) > mp.mpf(target)


# ------------------------------------------------------------------------------------- 7. calibration
def test_calibrate_flip_probability():
    c = ppk.calibrate(S(n=500, eps0=1.0), eps=0.5, delta=1e-6)
    r = c.scale
    assert 0 < r < 0.5
    assert c.query.delta(0.5) <= 1e-6
    assert fixed_delta(0.5, 500, None, r) <= mp.mpf(1e-6)
    assert fixed_delta(0.5, 500, None, r * (1 - 1e-4)) > mp.mpf(1e-6)


def test_calibrate_searches_below_the_variance_the_search_takes(monkeypatch):
    # A large n refuses randomized response's own flip probability (count variance over MAX_COUNT_VARIANCE), where
    # the scale search began: n = 1e8 at eps = 1, delta = 1e-6 failed with an error about an eps0 nobody asked for.
    # The search now starts at the largest r the limit takes (here a limit of 300 at n = 2000 stands for it).
    import ppk.shuffle as shuffle_module
    monkeypatch.setattr(shuffle_module, "MAX_COUNT_VARIANCE", 300.0)
    query = S(n=2000, eps0=4.0)                        # variance 35: taken
    cap = query._calibration_scale_cap()
    assert abs(query._count_variance(cap) / 300.0 - 1) < 1e-9
    c = ppk.calibrate(query, eps=1.0, delta=1e-6)
    assert 0 < c.scale < cap and c.delta_achieved <= 1e-6
    with pytest.raises(ValueError, match=r"need a flip_probability above .* the largest this query's certified"):
        ppk.calibrate(query, eps=0.01, delta=1e-9)


# --------------------------------------------------------------------------------------------- 8. PLD
def test_twofold_oracle_by_pairs():
    """The sorted-loss two-fold hockey stick against the plain double sum over pairs (oracle self-check)."""
    with mp.workdps(DPS):
        r = so.flip_probability(1.0)
        p0, p1 = so.output_pmfs(so.others_pmf(r, ones=1, zeros=2), r)
        for eps in (0.0, 0.3, 1.1):
            e = mp.exp(eps)
            for a, b in ((p1, p0), (p0, p1)):
                direct = sum(max(0, a[s] * a[t] - e * b[s] * b[t]) for s in range(5) for t in range(5))
                assert abs(so.hockey_twofold(a, b, eps) - direct) < mp.mpf(10) ** -45


@pytest.fixture(scope="module")
def pld50():
    return ppk.PrivacyLossDistribution.from_curve(S(n=50, eps0=2.0))


def test_pld_dominates_the_curve(pld50):
    for eps in (0.0, 0.1, 0.5, 1.0, 1.5):
        exact = fixed_delta(eps, 50, 2.0)
        got = pld50.get_delta_for_epsilon(eps)
        assert got >= float(exact) * (1 - CONVERT), (eps, got, exact)
        assert got <= float(exact) * 1.01 + 1e-9, (eps, got, exact)


def test_pld_twofold_dominates_the_exact_twofold(pld50):
    """The same 50 users answer twice with fresh coins: the pair (P0 x P0, P1 x P1) for each split.  The
    coins are fresh and every other input is known, so no unknown rows are shared: independent=True."""
    two = pld50.compose(pld50, independent=True)
    for eps in (0.0, 0.2, 0.5, 1.0, 2.0, 3.0):
        with mp.workdps(DPS):
            exact = so.sup_delta_twofold(eps, n=50, eps0=2.0)
        got = two.get_delta_for_epsilon(eps)
        # measured: 6.0 % above at eps = 0, 2.3 % at eps = 2, 8e-10 at eps = 3 (the curve's pair composed
        # dominates every pair of splits, not only the same split twice)
        assert got >= float(exact) * (1 - CONVERT), (eps, got, exact)
        assert got <= float(exact) * 1.1, (eps, got, exact)


# -- issue #44: wrong answers near the double range, call-order dependence, warnings -----------------------
@pytest.mark.parametrize("eps0", [709.0, 740.0, 745.0])
def test_eps0_where_the_flip_probability_is_subnormal(eps0):
    # r = e^-eps0 is a subnormal double from eps0 ~ 708.4: its error bounds were infinite (delta NaN and
    # epsilon(1e-6) = 0.0 for eps0 in 738..745.13; at 709 the upper end was 1).  r = 0 for the others, the
    # challenge keeps eps0: delta is randomized response's own, certified against the mpmath oracle (exact r)
    q = ppk.ShuffledRandomizedResponse(n=30, eps0=eps0)
    eps = eps0 - 1e-3
    lo, up = q.delta_bracket(eps)
    with mp.workdps(60):
        truth = so.sup_delta(eps, n=30, eps0=eps0)
        assert lo <= truth <= up and up <= truth * (1 + 1e-9)
        found = q.epsilon(1e-6)
        assert eps0 - 2e-6 < found <= eps0
        assert so.sup_delta(found, n=30, eps0=eps0) <= mp.mpf(1e-6)


def test_estimate_lies_in_its_bracket_whatever_the_call_order():
    # issue #44 at n=1000, known=500, p=1/3: delta(e) then delta_upper(e) gave 0.0012100000888908052 above
    # 0.0012100000888889846 at e=0.1 (a window grown by one call moved the next call's bits); the same here
    e = [0.05, 0.5]
    q = ppk.ShuffledRandomizedResponse(n=300, eps0=2.0, known=150, p=1 / 3)
    d, u = q.delta(e), q.delta_upper(e)
    lo, up = q.delta_bracket(e[::-1])
    assert list(d) == list(u) == list(up[::-1])
    truth = so.FixedPoint(n=300, r=q.flip_probability, known=150, p=1 / 3, bits=192)
    for i, x in enumerate(e):
        assert lo[::-1][i] <= truth.delta(x) <= d[i]


def test_no_warning_where_a_window_edge_is_zero():
    # "invalid value encountered in scalar subtract" (-inf - -inf at a window's edge; the suite turns warnings
    # into errors).  The oracle costs ~0.4 s: the case has 251 splits of 400 users (smaller ones never warned)
    q = ppk.ShuffledRandomizedResponse(n=400, eps0=3.1, known=250, p=0.15)
    lo, up = q.delta_bracket(3.007)
    truth = so.FixedPoint(n=400, r=q.flip_probability, known=250, p=0.15, bits=192).delta(3.007)
    assert lo <= truth <= up <= lo * (1 + 1e-9)


# ------------------------------------------------------- the faster search (docs/shuffle.md, "Speed")
@pytest.mark.parametrize("n, eps0, eps", [(2000, 2.0, 0.05), (3000, 0.5, 0.01), (20000, 4.0, 0.1)])
def test_range_bound_is_above_every_split_of_its_range(n, eps0, eps):
    # A range's curve (the removal curve, its S lowered by the loss every split of the range must take) against
    # each split's certified lower end (split curves, checked against the 60-digit oracle above).  At these n the
    # loss taken off (1e-4 .. 3e-3 of log delta) exceeds the distance left to the worst split (4e-4 .. 1e-2):
    # twice the loss, or no lattice term, puts the bound below a split.
    from ppk._shuffle_split import RANGE_DEPTH, split_curve
    q = S(n=n, eps0=eps0)
    k, f = q.known, q._flip
    gained = 0.0
    for a, m in [(0, 4), (3, 8), (10, 16), (40, 32), (k // 2, 24), (k - 30, 20)]:
        bound = q._range_curve(a, a + m).log_bracket(eps)[1]
        removal = split_curve(f, ones=a, zeros=k - a - m, unknown=0, q=f.r, depth=RANGE_DEPTH,
                              backward_only=True).log_bracket(eps)[1]
        worst = max(q._split_curve(j).log_bracket(eps)[0] for j in range(a, a + m + 1))
        assert worst <= bound <= removal, (a, m, worst, bound, removal)
        gained = max(gained, removal - bound)
    assert gained > 1e-4        # the bound does cut: the test can see a wrong one


@pytest.mark.parametrize("n, eps0", [(3000, 1.0), (30000, 2.0)])
def test_derived_ranges_agree_with_direct_ones(n, eps0):
    # a range cut from its parent is the parent's log C convolved with the users the half holds fixed
    # (ppk/shuffle.hpp); computed directly instead, the two certified brackets must overlap
    from ppk._shuffle_split import RANGE_DEPTH, derived_curve, split_curve
    f = ppk._shuffle_split.Flip(eps0)
    k = n - 1
    a, b = 40, 40 + n // 20
    mid = (a + b) // 2
    parent = split_curve(f, ones=a, zeros=k - b, unknown=0, q=f.r, depth=RANGE_DEPTH, backward_only=True)
    for (lo_, hi_), kw in [((a, mid), dict(count=b - mid, ones=False)), ((mid + 1, b), dict(count=mid + 1 - a, ones=True))]:
        child = derived_curve(parent, depth=RANGE_DEPTH, backward_only=True, **kw)
        direct = split_curve(f, ones=lo_, zeros=k - hi_, unknown=0, q=f.r, depth=RANGE_DEPTH, backward_only=True)
        for eps in (0.02 * eps0, 0.1 * eps0):
            x, y = child.log_bracket(eps), direct.log_bracket(eps)
            assert x[0] <= y[1] and y[0] <= x[1], (lo_, hi_, eps, x, y)
            assert abs(x[1] - y[1]) < 1e-6


def test_threads_and_batches_never_change_the_answer(monkeypatch):
    # the branch and bound refines a fixed number of ranges per step: on two threads or on one, the same bits
    import ppk.shuffle as sh
    answers = []
    for threads_from in (10 ** 12, 0):
        monkeypatch.setattr(sh, "THREADS_FROM", threads_from)
        q = S(n=30000, eps0=3.0)
        answers.append((q.epsilon(1e-6), q.delta_bracket([0.01, 0.05])))
    (e1, (lo1, up1)), (e2, (lo2, up2)) = answers
    assert e1 == e2 and list(lo1) == list(lo2) and list(up1) == list(up2)


def test_progress_callback_reports_each_stage():
    seen = []
    q = S(n=30000, eps0=3.0)
    q.progress = lambda fraction, stage: seen.append((stage, fraction))
    found = q.epsilon(1e-6)
    assert found == S(n=30000, eps0=3.0).epsilon(1e-6)        # reporting changes nothing
    stages = [s for s, _ in seen]
    assert stages[0] == "cover" and stages[-1] == "epsilon" and ("cover", 1.0) in seen
    cover = [x for s, x in seen if s == "cover"]
    assert cover == sorted(cover) and all(0.0 <= x <= 1.0 for x in cover)
    with pytest.raises(ValueError, match="progress"):
        q.progress = "yes"


def test_progress_true_is_quiet_off_a_terminal(capsys):
    q = S(n=30000, eps0=3.0)
    q.progress = True                 # pytest's stderr is not a terminal: nothing is written
    q.epsilon(1e-6)
    assert capsys.readouterr().err == ""


def test_range_bound_with_its_window_cut_is_above_every_split():
    # Ranges wider than two standard deviations of their law: the lines hold only on theta -+ W (W < m), and
    # what the cut can take off the loss is bounded by Hoeffding and subtracted (docs/shuffle.md, "The window
    # cut to the varying users' spread").  At n = 50000 (sd 108) a range of 241..257 splits has W = 144 < m:
    # every split's certified lower end is below the bound, which still takes a third off the removal excess.
    from ppk._shuffle_split import RANGE_DEPTH, split_curve
    q = S(n=50_000, eps0=0.5)
    k, f, eps = q.known, q._flip, 0.0067
    for a, m in [(300, 256), (3000, 240)]:
        bound = q._range_curve(a, a + m).log_bracket(eps)[1]
        removal = split_curve(f, ones=a, zeros=k - a - m, unknown=0, q=f.r, depth=RANGE_DEPTH,
                              backward_only=True).log_bracket(eps)[1]
        worst = max(q._split_curve(j).log_bracket(eps)[0] for j in range(a, a + m + 1))
        assert worst <= bound <= removal - (removal - worst) / 3, (a, m, worst, bound, removal)


@pytest.mark.parametrize("eps0, eps, first, users, most", [
    (2.0, 1.0, 0, 0, 512),        # delta ~ e^-4936: the Gaussian start lay past the support (4352 values)
    (0.5, 0.004, 0, 0, 2048),     # delta ~ 3e-6: starting at depth + 0 failed and doubled (3072 values)
    (0.5, 0.004, 5000, 512, 1536),  # a range (RANGE_DEPTH, tightened): 2048 values before
])
def test_windows_start_where_the_terms_change_sign(eps0, eps, first, users, most):
    # Each order's window starts at the saddle point of the law tilted by -+ log rho1 (where C(s) / C(s-1) crosses
    # rho1) and reaches the tail's depth + 8 at once (docs/shuffle.md, "Speed"): at n = 10^5 (blocks of 256 or
    # 512 values) the curves ask for the blocks they need, a few standard deviations, where the old start asked
    # for up to 17 times more.  Only where the sums start changes: the brackets below are the ones the old start
    # gave, and the new ones lie inside them (narrower since r's rounding is allowed for by its relative error).
    from ppk._shuffle_split import DEPTH, RANGE_DEPTH, split_curve
    q = S(n=10 ** 5, eps0=eps0)
    curve = split_curve(q._flip, ones=first, zeros=q.known - first - users, unknown=0, q=q._q,
                        depth=RANGE_DEPTH if users else DEPTH, backward_only=True)
    if users:
        curve.set_range_users(users)
    low, up = curve.log_bracket(eps)
    assert curve.cached_values() <= most, curve.cached_values()
    expected = {(2.0, 0): (-4936.071448312116, -4936.071447511427), (0.5, 0): (-12.649495247417214, -12.649495245995539),
                (0.5, 512): (None, -12.646102143247651)}[(eps0, users)]
    if users:
        assert expected[1] - 1e-6 < up <= expected[1] + 1e-12     # a range only prunes: its upper end
    else:
        assert expected[0] - 1e-12 <= low <= up <= expected[1] + 1e-12


def test_wide_split_brackets_settle_ranges_below_the_largest_upper_end(monkeypatch):
    # Where a split's own bracket is wider than rtol (at n = 5e7, eps0 = 4 it is 1.1e-6 of delta: its allowances grow
    # with the distance to the threshold), no range can come within rtol of the best lower end, and the search used
    # to evaluate every split near the worst one by one (21,000 splits, 9 GB at n = 1e8).  The supremum's upper end
    # is at least the largest upper end of a split evaluated, so a range below it is settled (docs/shuffle.md, "The
    # supremum over the splits").  Here each split's lower end is lowered by 1e-3 (still a lower end) to make its
    # bracket that wide at an affordable n, where delta is flat across the splits (eps0 = 0.5): 320 splits were
    # evaluated, 24 now.
    import ppk.shuffle as sh
    N, EPS0, EPS, WIDTH = 20_000, 0.5, 0.01, 1e-3
    original = sh.ShuffledRandomizedResponse._range_curve

    class Wider:
        def __init__(self, curve):
            self.curve = curve

        def log_bracket(self, eps):
            low, up = self.curve.log_bracket(eps)
            return low - WIDTH, up

    def widened(self, first, last, parent=None):
        curve = original(self, first, last, parent)
        return Wider(curve) if first == last else curve

    exact = S(n=N, eps0=EPS0).log_delta_bracket(EPS)
    monkeypatch.setattr(sh.ShuffledRandomizedResponse, "_range_curve", widened)
    q = S(n=N, eps0=EPS0)
    low, up = q.log_delta_bracket(EPS)
    splits = sum(1 for key in q._curves if key[0] == key[1])
    assert splits <= 40, splits                           # the 16 at the ends, a few short ranges
    assert abs(low - (exact[0] - WIDTH)) < 1e-9 and exact[0] <= up <= exact[1]   # a bracket, no wider at the top


def test_past_1e8_users_only_counts_that_vary_little():
    # Past 10^8 users the exact search is taken where the others' count varies little (n r (1 - r) <= 2e6: its
    # time follows that variance, about 10 s there), up to 10^9 users; otherwise a clear error naming n and eps0
    # (docs/shuffle.md, "Limits").
    with pytest.raises(ValueError, match=r"n=1000000000 with eps0=4\.0: .* variance 1\.77e\+07"):
        S(n=10 ** 9, eps0=4.0)
    with pytest.raises(ValueError, match=r"n=1000000001 is more users than the exact search takes"):
        S(n=10 ** 9 + 1, eps0=20.0)
    S(n=10 ** 8 + 1, eps0=4.0)                   # variance 1.8e6: taken
    # at most 10^8 users, a variance up to 1.2e7 (10^8 at eps0 = 0.5, 2.4e7, ate past 12 GB before it was refused)
    with pytest.raises(ValueError, match=r"n=100000000 with eps0=0\.5: the exact search .* variance 2\.35e\+07"):
        S(n=10 ** 8, eps0=0.5)
    S(n=10 ** 8, eps0=2.0)                       # variance 1.05e7: taken
    # n = 3e8 at eps0 = 12 (variance 1.8e3): the split with every known input 0 against the 60-digit oracle (its
    # bottom outputs, the backward order the search computes), in a bracket 2e-10 of delta wide (8.6e-6 when r's
    # rounding was allowed for as an absolute error, 5u / r per count of deviation from the mean)
    n, eps0, eps = 3 * 10 ** 8, 12.0, 0.08
    low, up = S(n=n, eps0=eps0)._split_curve(0).log_bracket(eps)
    with mp.workdps(DPS):
        exact = mp.log(so._tail_side(so.flip_probability(eps0), 0, n - 1, mp.exp(mp.mpf(eps)), top=False))
    assert low <= float(exact) <= up and up - low < 1e-9, (low, up, mp.nstr(exact, 20))


@pytest.mark.parametrize("known, p", [(999, None), (0, 1.0)])
def test_lower_end_allows_for_flips_that_round_away(known, p):
    # eps0 = 37.5: r = 5.2e-17 and 1 - r rounds to 1, so the kernels take the others' outputs as fixed (right for
    # the upper end); the worst split's truth is f (1 - r)^(n - 1), f randomized response's delta, and the lower
    # end read log f (-4.3e-15 against the truth's -5.2e-14) until it allowed for the mass where they are not.
    n, eps0, eps = 1000, 37.5, 1.0
    low, up = S(n=n, eps0=eps0, known=known, p=p).log_delta_bracket(eps)
    with mp.workdps(DPS):
        r = 1 / (1 + mp.e ** eps0)
        truth = mp.log((mp.e ** eps0 - mp.e ** eps) / (1 + mp.e ** eps0)) + (n - 1) * mp.log1p(-r)
    assert low <= truth <= up, (low, mp.nstr(truth, 12), up)


def test_flip_probability_rounding_lemma():
    # ppk/shuffle_impl.hpp: r = 1 / (1 + e^eps0) is rounded to a double r' = r (1 + e) with |e| <= 4u (exp within one
    # ulp, an add and a divide), and q = r + p (1 - 2r) within 7u; every pmf takes p' as given and 1 - p' exactly, so
    #   |log Bin(x; k, p') - log Bin(x; k, p)| <= 8u |x - k p| / (1 - p) + 2 k (8u)^2 / (1 - p)   (1 - p >= 1e-6),
    # the allowance per count of deviation that replaced 5u / min(p, 1 - p) (docs/shuffle.md, "log C(s), certified").
    # Checked in 50-digit mpmath on the rounded r of 400 eps0 (the rounding reaches 1.8u here: an allowance of u per
    # count fails 240 of the 3600 cases, 8u without the 1 / (1 - p) 990).
    from ppk._shuffle_split import Flip
    u = 2.0 ** -53
    worst = 0.0
    with mp.workdps(50):
        for i in range(400):
            eps0 = 0.01 + i * 0.05
            r_true = 1 / (1 + mp.exp(mp.mpf(eps0)))
            r = Flip(eps0).r
            e = abs(mp.mpf(r) / r_true - 1)
            worst = max(worst, float(e / u))
            assert e <= 4 * u, (eps0, float(e / u))
            for p in (0.0, 0.3, 0.999):
                q = r + p * (1 - 2 * r)
                q_true = r_true + mp.mpf(p) * (1 - 2 * r_true)
                assert abs(mp.mpf(q) / q_true - 1) <= 7 * u
                for k, x in ((10 ** 9, 0), (10 ** 9, 10 ** 9), (10 ** 6, 123_456)):
                    def log_pmf(prob):
                        return x * mp.log(prob) + (k - x) * mp.log(1 - prob)     # the binomial coefficient cancels
                    got = abs(log_pmf(mp.mpf(q)) - log_pmf(q_true))
                    allowed = 8 * u * abs(x - k * q_true) / (1 - q_true) + 2 * k * (8 * u) ** 2 / (1 - q_true)
                    assert got <= allowed, (eps0, p, k, x, float(got / allowed))
    assert worst > 0.5                     # the rounding is there to be seen


def test_a_window_that_cannot_be_certified_stops_at_f():
    # At n = 1e8, eps0 = 20, every user unknown and holding 1 (q = 1 - r, within 1e-6 of 1: q's rounding is a large
    # part of 1 - q, and log C's bracket is wider than the steps of its ratio far in the tail), the backward order's
    # window could not be certified and grew to the whole support: gigabytes, then std::bad_alloc.  It now stops at
    # the cache's size with that order's certified end f (docs/shuffle.md, "Exact sums of positive parts").
    q = S(n=10 ** 8, eps0=20.0, known=0, p=1.0)
    low, up = q.log_delta_bracket(19.0)
    r = q.flip_probability
    log_f = math.log1p(-r) + math.log(-math.expm1(19.0 - 20.0))
    assert up == pytest.approx(log_f, abs=1e-12) and -0.67 < low < up
