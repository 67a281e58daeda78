"""The constant-work samplers: their laws against mpmath (within TV_BOUND), the same work for every draw,
numpy scalars, and input checks.  Nothing here times anything: the work is counted."""
import bisect
import math
from collections import Counter
from decimal import Decimal
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import stats

from ppk import _fixedpoint as fx
from ppk import sampler_timing, samplers
from ppk._random import RandomSource, as_source

mp = mpmath.mp


class _FixedSource(RandomSource):
    """Returns the same integer for every request: drives a search to a chosen output."""

    def __init__(self, u):
        super().__init__(None)
        self.u = u

    def bits(self, k):
        return self.u


class _CountingSource(RandomSource):
    """Records the size of every request for random bits."""

    def __init__(self, seed):
        super().__init__(np.random.default_rng(seed))
        self.requests = []

    def bits(self, k):
        self.requests.append(k)
        return super().bits(k)

    def below(self, m):            # the samplers must not use rejection for uniforms
        raise AssertionError("below() draws a variable number of words")


# -- the fixed-point functions ---------------------------------------------------------------------

@pytest.mark.parametrize("bits", [213, 290])
def test_fixed_normal_cdf_matches_mpmath(bits):
    phi = fx.fixed_normal_cdf(bits)
    prec = phi.prec
    rng = np.random.default_rng(bits)
    xs = np.concatenate([rng.uniform(-3, 3, 40), rng.uniform(-phi.xmax_float - 3, phi.xmax_float + 3, 40),
                         [0.0, 1 / 6, 0.5, -0.5, phi.xmax_float, 40.0, -40.0]])
    with mp.workprec(prec + 200):
        for x in xs:
            x_fixed = int(mp.floor(mp.ldexp(mp.mpf(float(x)), prec)))
            exact = mp.ldexp(mp.ncdf(mp.ldexp(x_fixed, -prec)), prec)
            # the clamp at xmax costs at most 2**-(bits + 8); rounding a few units of 2**-prec
            assert abs(phi(x_fixed) - exact) <= 2.0 ** (prec - bits - 7), x


def test_fixed_exp_matches_mpmath():
    prec = fx.working_precision(256)
    e = fx.fixed_exp(prec)
    rng = np.random.default_rng(3)
    with mp.workprec(prec + 100):
        for g in np.concatenate([rng.uniform(0, 1, 30), rng.uniform(0, 400, 30), [0.0, math.log(2), 1e-30]]):
            g_fixed = int(mp.floor(mp.ldexp(mp.mpf(float(g)), prec)))
            exact = mp.exp(-mp.ldexp(g_fixed, -prec))
            mantissa, shift = e.split(g_fixed)
            if float(g) < (prec + 8) * math.log(2):
                # full relative precision in the mantissa
                assert abs(mp.ldexp(mantissa, -prec - shift) / exact - 1) < 2.0 ** (16 - prec), g
            assert abs(e(g_fixed) - mp.ldexp(exact, prec)) <= 16, g


def test_mul_shift_operands_are_in_range_and_of_constant_size(monkeypatch):
    """Every multiplication the series make gets operands of the size _mul_shift promises."""
    original = fx._mul_shift
    seen = []

    def checked(a, b, prec, a_bits, b_bits):
        assert abs(a) < 2 ** (prec + a_bits - 1) and abs(b) < 2 ** (prec + b_bits - 1)
        seen.append(((a + (3 << (prec + a_bits - 1))).bit_length() - prec - a_bits,
                     (b + (3 << (prec + b_bits - 1))).bit_length() - prec - b_bits))
        return original(a, b, prec, a_bits, b_bits)
    monkeypatch.setattr(fx, "_mul_shift", checked)
    phi = fx.fixed_normal_cdf(230)
    e = fx.fixed_exp(fx.working_precision(230))
    for x in (0, 1, -1, phi.xmax, -phi.xmax, phi.xmax * 2, 12345 << (phi.prec - 20)):
        phi(x)
    for g in (0, 1, e.gmax, 2 * e.gmax, e.ln2 - 1):
        e(g)
    assert set(seen) == {(1, 1)}


def test_mul_shift_is_exact():
    rng = np.random.default_rng(4)
    prec = 120
    for _ in range(500):
        a = int(rng.integers(-2**62, 2**62)) << 58
        b = int(rng.integers(-2**62, 2**62)) << int(rng.integers(0, 59))
        assert fx._mul_shift(a, b, prec, 2, 2) == (a * b) >> prec


# -- the laws, against mpmath ----------------------------------------------------------------------

def _rounded_gaussian_pmf(sigma, k):
    s = mp.mpf(sigma)
    return mp.ncdf((k + mp.mpf(0.5)) / s) - mp.ncdf((k - mp.mpf(0.5)) / s)


@pytest.mark.parametrize("sigma", [0.4, 1.0, 3.7, 60.0])
def test_rounded_gaussian_law_is_within_tv_bound(sigma):
    inv = samplers._gaussian_inversion(Fraction(sigma), samplers._TAIL_BITS)
    ks = list(range(-inv.half, inv.half + 1))
    g = [inv.scaled_cdf(k) for k in ks]
    assert all(a <= b for a, b in zip(g, g[1:])) and g[-1] == 1 << inv.ubits
    with mp.workprec(inv.ubits + 80):
        q = [mp.ldexp(b - a, -inv.ubits) for a, b in zip([0] + g[:-1], g)]
        p = [_rounded_gaussian_pmf(sigma, k) for k in ks]
        outside = 2 * mp.ncdf(-(inv.half + mp.mpf(0.5)) / mp.mpf(sigma))
        tv = (sum(abs(a - b) for a, b in zip(q, p)) + outside) / 2
    assert tv <= samplers.TV_BOUND, float(mp.log(tv, 2))
    # the search returns the smallest k with U < G(k)
    rng = np.random.default_rng(5)
    for _ in range(100):
        u = int(rng.integers(0, 2**62)) << (inv.ubits - 62)
        assert inv.draw(_FixedSource(u)) == ks[bisect.bisect_right(g, u)]
    if sigma == 60.0:
        assert inv.fine_steps >= 2          # the evaluated steps are exercised, not only the table


def _geometric(scale):
    if scale == "dg":     # the discrete Gaussian's proposal at sigma = 1.3 (t = 2), with its own tail bits
        rej = samplers._gaussian_rejection(Fraction(1.3), samplers._TAIL_BITS)
        assert rej.coin_bits >= samplers._TAIL_BITS + math.log2(rej.rounds) + 2
        return 2.0, rej.proposal, rej.coin_bits - 1      # its geometrics are each within 2**-(inner + 1)
    return scale, samplers._laplace(Fraction(scale), samplers._TAIL_BITS), samplers._TAIL_BITS


@pytest.mark.parametrize("scale", [0.01, 0.3, 1.0, 7.5, 1e6, "dg"])
def test_geometric_digits_are_within_tv_bound(scale):
    scale, geo, tail_bits = _geometric(scale)
    d = len(geo.thresholds)
    with mp.workprec(geo.ubits + 80):
        r = mp.exp(-1 / mp.mpf(scale))
        for i, th in enumerate(geo.thresholds):
            q = r ** (2 ** i) / (1 + r ** (2 ** i))
            assert abs(mp.ldexp(th, -geo.ubits) - q) <= mp.ldexp(1, -geo.ubits)
        # the dropped digits: P(G >= 2**d) = r^(2**d) for the exact geometric
        assert r ** (2 ** d) <= mp.ldexp(1, -tail_bits - 2)
        if d <= 11:
            # the law of the truncated digits against (1 - r) r^g, exactly summed
            probs = [mp.ldexp(th, -geo.ubits) for th in geo.thresholds]
            tv = mp.mpf(0)
            for g in range(2 ** d):
                law = mp.mpf(1)
                for i, pi in enumerate(probs):
                    law *= pi if (g >> i) & 1 else 1 - pi
                tv += abs(law - (1 - r) * r ** g)
            tv = (tv + r ** (2 ** d)) / 2
            assert tv <= mp.ldexp(1, -tail_bits - 1)


@pytest.mark.parametrize("scale", [0.3, 1.0, 7.5])
def test_discrete_laplace_law(scale):
    src = as_source(13)
    draws = Counter(samplers.discrete_laplace(scale, rng=src) for _ in range(8000))
    ks = [k for k in range(-int(6 * scale) - 1, int(6 * scale) + 2)]
    expected = np.array([math.tanh(1 / (2 * scale)) * math.exp(-abs(k) / scale) for k in ks]) * 8000
    observed = np.array([draws[k] for k in ks], dtype=float)
    keep = expected > 5
    chi2 = np.sum((observed[keep] - expected[keep]) ** 2 / expected[keep])
    assert stats.chi2.sf(chi2, keep.sum()) > 1e-4


@pytest.mark.parametrize("sigma", [0.4, 1.0, 3.7])
def test_discrete_gaussian_law_of_the_fixed_rounds(sigma):
    """The exact law of M rounds with these thresholds, in doubles, against mpmath's discrete Gaussian."""
    rej = samplers._gaussian_rejection(Fraction(sigma), samplers._TAIL_BITS)
    geo = rej.proposal
    d = len(geo.thresholds)
    probs = [th / 2.0 ** geo.ubits for th in geo.thresholds]
    g = np.ones(2 ** d)
    for i, pi in enumerate(probs):
        bit = (np.arange(2 ** d) >> i) & 1
        g *= np.where(bit == 1, pi, 1 - pi)
    proposal = np.correlate(g, g, mode="full")          # law of G1 - G2 on -(2**d - 1) .. 2**d - 1
    ys = np.arange(-(2 ** d - 1), 2 ** d)
    reach = min(2 ** d - 1, int(40 * sigma) + 40)
    window = np.abs(ys) <= reach
    coins = np.array([rej.coin(int(y)) / 2.0 ** rej.coin_bits for y in ys[window]])
    accepted = proposal[window] * coins
    a = accepted.sum()
    law = accepted * -np.expm1(rej.rounds * np.log1p(-a)) / a
    law[ys[window] == 0] += (1 - a) ** rej.rounds
    with mp.workprec(120):
        s = mp.mpf(sigma)
        norm = mp.nsum(lambda z: mp.exp(-z * z / (2 * s * s)), [-mp.inf, mp.inf])
        exact = np.array([float(mp.exp(-mp.mpf(int(y)) ** 2 / (2 * s * s)) / norm) for y in ys[window]])
        # the coin against exp(-(|y| - sigma^2/t)^2/(2 sigma^2)), and no acceptance in M rounds below 2**-200
        for y in (0, 1, 5, -7):
            want = mp.exp(-(abs(y) - s * s / rej.t) ** 2 / (2 * s * s))
            assert abs(rej.coin(y) / mp.ldexp(1, rej.coin_bits) - want) <= mp.ldexp(2, -rej.coin_bits)
    assert np.max(np.abs(law - exact)) < 1e-13
    assert rej.rounds * math.log2(1 - a) < -samplers._TAIL_BITS


DG_DRAWS = 120     # ~20 ms each (M = 100+ rounds, always)


def test_discrete_gaussian_draws():
    """The sampler itself, not only its law on paper: 120 draws at sigma = 1.3 against the pmf.  The rounds'
    law is checked exactly above; this guards the draw loop.  Power: a loop that keeps adding after the first
    acceptance (pending not cleared) or takes the last acceptance's complement draws a law of sd ~5 or a point
    mass: chi2 p below 1e-30 at 120 draws (measured); 400 draws cost 8 s CPU."""
    src = as_source(31)
    draws = Counter(samplers.discrete_gaussian(1.3, rng=src) for _ in range(DG_DRAWS))
    ks = range(-4, 5)
    weights = np.array([math.exp(-k * k / (2 * 1.3 ** 2)) for k in range(-60, 61)])
    expected = np.array([math.exp(-k * k / (2 * 1.3 ** 2)) for k in ks]) / weights.sum() * DG_DRAWS
    observed = np.array([draws[k] for k in ks], dtype=float)
    rest_e, rest_o = DG_DRAWS - expected.sum(), DG_DRAWS - observed.sum()
    chi2 = np.sum((observed - expected) ** 2 / expected) + (rest_o - rest_e) ** 2 / rest_e
    assert stats.chi2.sf(chi2, len(ks)) > 1e-4


def test_bernoulli_exp():
    for gamma in (Fraction(0), Fraction(1, 3), Fraction(5, 2), 1e-20, 500):
        src = _FixedSource(0)
        with mp.workprec(300):
            want = mp.exp(-mp.mpf(Fraction(gamma).numerator) / Fraction(gamma).denominator)
            # U = 0 accepts unless the threshold is 0; U just below the threshold accepts, at it rejects
            threshold = int(mp.floor(mp.ldexp(want, samplers._TAIL_BITS)))
        assert samplers.bernoulli_exp(gamma, rng=src) == (threshold > 0)
        for u, accept in ((threshold - 2, True), (threshold + 1, False)):
            if u >= 0:
                assert samplers.bernoulli_exp(gamma, rng=_FixedSource(u)) == accept
    src = as_source(14)
    hits = sum(samplers.bernoulli_exp(Fraction(1, 3), rng=src) for _ in range(20_000))
    assert stats.binomtest(hits, 20_000, math.exp(-1 / 3)).pvalue > 1e-4


def test_large_sigma_keeps_the_low_bits():
    # one sigma above 2**53 (1e17 took the same path: the same code with more fine steps, twice the cost)
    src = as_source(15)
    for sigma in (2.0 ** 53 + 2,):
        draws = [samplers.rounded_gaussian(sigma, rng=src) for _ in range(60)]
        z = np.array([float(Fraction(k) / Fraction(sigma)) for k in draws])
        assert stats.kstest(z, "norm").pvalue > 1e-4
        assert stats.chisquare(np.bincount([k % 4 for k in draws], minlength=4)).pvalue > 1e-4


# -- the same work for every draw ------------------------------------------------------------------

class _Evaluations:
    """Counts evaluations of the fixed-point functions (their loops have fixed lengths) and comparisons."""

    def __init__(self, monkeypatch):
        self.count = 0
        for cls, name in ((fx.FixedNormalCdf, "__call__"), (fx.FixedExp, "split")):
            original = getattr(cls, name)

            def counted(obj, *args, _original=original):
                self.count += 1
                return _original(obj, *args)
            monkeypatch.setattr(cls, name, counted)
        at_most = samplers._at_most

        def counted_comparison(a, b, bits):
            self.count += 1000          # a separate tally in the same number
            return at_most(a, b, bits)
        monkeypatch.setattr(samplers, "_at_most", counted_comparison)


@pytest.mark.parametrize("sampler,scale,draws", [
    (samplers.discrete_laplace, 0.01, 300), (samplers.discrete_laplace, 3.0, 300),
    (samplers.discrete_laplace, 1e12, 300), (samplers.rounded_gaussian, 3.0, 300),
    (samplers.rounded_gaussian, 1000.0, 120), (samplers.rounded_gaussian, 1e9, 40),
    (samplers.discrete_gaussian, 1.5, 40), (samplers.discrete_gaussian, 1000.0, 20),
    (samplers.bernoulli_exp, 0.7, 300)])
def test_work_does_not_depend_on_the_draw(sampler, scale, draws, monkeypatch):
    sampler(scale, rng=1)                   # the scale's tables are built once, before
    evaluations = _Evaluations(monkeypatch)
    src = _CountingSource(16)
    work, values = set(), set()
    for _ in range(draws):
        src.requests.clear()
        before = evaluations.count
        values.add(sampler(scale, rng=src))
        work.add((tuple(src.requests), evaluations.count - before))
    assert len(values) >= (2 if sampler is samplers.bernoulli_exp or scale < 0.1 else 5) or scale == 0.01
    assert len(work) == 1, sorted(work)[:2]


def test_the_normal_series_never_sees_a_negative_number(monkeypatch):
    """CPython divides and shifts negative integers by other paths: at sigma >= 117 a negative draw took
    longer than a positive one (Spearman rho(draw, time) -0.02 to -0.24, issue #44).  The CDF's series
    now gets |k + 1/2| / sigma for every k, the same operations on numbers of one sign."""
    samplers.rounded_gaussian(1000.0, rng=1)            # the table, before
    args = []
    original = fx.FixedNormalCdf.__call__

    def recorded(obj, x):
        args.append(x)
        return original(obj, x)
    monkeypatch.setattr(fx.FixedNormalCdf, "__call__", recorded)
    draws = [samplers.rounded_gaussian(1000.0, rng=s) for s in range(8)]
    assert min(draws) < 0 < max(draws) and len(args) == 8 * 7     # both signs drawn, 7 series each
    assert min(args) >= 0


def test_timing_report_runs_and_validates():
    report = sampler_timing.measure_timing("discrete_laplace", scale=2.0, draws=100, rng=3)
    assert -1 <= report.spearman <= 1 and 0 <= report.pvalue <= 1 and report.median_seconds > 0
    assert "Spearman" in report.summary()
    with pytest.raises(ValueError, match="noise"):
        sampler_timing.measure_timing("laplace")
    with pytest.raises(ValueError, match="draws"):
        sampler_timing.measure_timing("gaussian", draws=10)
    rho, _ = sampler_timing._spearman(np.arange(50.0), np.arange(50.0) ** 3)
    assert rho == pytest.approx(1.0)


def test_timing_refuses_a_huge_scale_before_any_draw(monkeypatch):
    # at the samplers' MAX_SCALE = 2**128, 2000 draws would run for many minutes: refused up front
    drawn = []
    monkeypatch.setitem(sampler_timing.SAMPLERS, "gaussian", lambda *a, **k: drawn.append(a))
    with pytest.raises(ValueError, match="scale must be <="):
        sampler_timing.measure_timing("gaussian", scale=2.0 ** 128)
    assert drawn == []


# -- numpy scalars, booking and bad input ----------------------------------------------------------

@pytest.mark.parametrize("scale,plain", [(np.int64(7), 7), (np.int64(2**30), 2**30), (np.int64(2**40), 2**40),
                                         (np.float32(2.5), 2.5), (np.float64(0.1), 0.1),
                                         (Fraction(np.int64(3), np.int64(2)), Fraction(3, 2))])
def test_numpy_scalars_draw_the_law_of_their_value(scale, plain):
    for sampler in (samplers.discrete_laplace, samplers.discrete_gaussian, samplers.rounded_gaussian):
        if sampler is samplers.discrete_gaussian and plain > 100:
            continue
        got = sampler(scale, rng=21)
        assert type(got) is int and got == sampler(plain, rng=21)


def test_numpy_int_sigma_has_its_standard_deviation():
    draws = np.array([samplers.rounded_gaussian(np.int64(2**30), rng=s) for s in range(60)], dtype=float)
    assert 0.6 < draws.std() / 2**30 < 1.5           # the int64 overflow made it 0.58 sigma before


def test_sampler_delta_books_the_tv_bound():
    assert samplers.sampler_delta(0.0) == pytest.approx(2 * samplers.TV_BOUND, rel=1e-9)
    assert samplers.sampler_delta(1.0, 3) >= 3 * (1 + math.e) * samplers.TV_BOUND
    assert samplers.sampler_delta(1.0, 0) == 0.0 and samplers.sampler_delta(1e4) == 1.0
    with pytest.raises(ValueError, match="eps"):
        samplers.sampler_delta(-1.0)
    with pytest.raises(ValueError, match="draws"):
        samplers.sampler_delta(1.0, -1)


def test_tiny_scales_are_a_point_mass_without_a_draw():
    src = _CountingSource(3)
    for sampler, scale in ((samplers.discrete_laplace, 1 / 256), (samplers.rounded_gaussian, 1 / 64),
                           (samplers.discrete_gaussian, 1 / 64), (samplers.discrete_laplace, Decimal("1e-1000")),
                           (samplers.rounded_gaussian, 5e-324), (samplers.discrete_gaussian, Fraction(1, 10**300))):
        assert sampler(scale, rng=src) == 0
    assert src.requests == []


def test_extreme_numbers_are_refused_quickly():
    for bad in (Decimal("1e99999999"), Decimal("1e-4999999"), Fraction(10**800 + 1, 10**800), 10**5000):
        with pytest.raises(ValueError, match="sigma"):
            samplers.rounded_gaussian(bad)
    assert samplers.bernoulli_exp(Decimal("1e1000"), rng=1) is False      # e^-gamma is 0: decided, not refused
    assert samplers.bernoulli_exp(10**400, rng=1) is False


def test_long_double_is_taken_exactly():
    x = np.longdouble(1) / np.longdouble(3)
    assert samplers._rational("sigma", x, allow_zero=True) == Fraction(*x.as_integer_ratio())


def test_zero_scale_and_bad_input():
    assert samplers.rounded_gaussian(0.0) == 0 and samplers.discrete_gaussian(0) == 0
    for bad, exc in [(-1.0, ValueError), (math.nan, ValueError), (math.inf, ValueError), ("1", TypeError),
                     (True, TypeError), (None, TypeError), (np.bool_(True), TypeError), (1e300, ValueError),
                     (1j, TypeError)]:
        with pytest.raises(exc, match="sigma"):
            samplers.rounded_gaussian(bad)
        with pytest.raises(exc, match="scale"):
            samplers.discrete_laplace(bad)
    with pytest.raises(ValueError, match="scale"):
        samplers.discrete_laplace(0.0)
    with pytest.raises(ValueError, match="rng"):
        samplers.discrete_laplace(1.0, rng=-3)


def test_the_timing_command_gives_the_reports_verdict(monkeypatch, capsys):
    # one verdict: TimingReport.detected (p <= 5e-4 for either rank correlation), in the text, the warning and
    # the JSON (whose fields lacked it, so a reader applied a threshold of its own)
    import json

    from ppk.cli._main import main
    report = sampler_timing.TimingReport("gaussian", 1000.0, 2000, -0.22, 2.5e-28, -0.01, 0.6, 1e-3, 0.5)
    monkeypatch.setattr(sampler_timing, "measure_timing", lambda *a, **k: report)
    assert main(["samplers", "timing", "--scale", "1000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["detected"] is True and out["record"]["warnings"][0].startswith("DEPENDENCE DETECTED")
    assert main(["samplers", "timing", "--scale", "1000"]) == 0
    assert "DEPENDENCE DETECTED" in capsys.readouterr().out


def test_fixed_point_products_and_splits_are_exact_with_padded_operands():
    # the constant-work forms (operands padded to a fixed length, docs/samplers.md) must stay exact identities:
    # floor(a b / 2**prec) for either sign at the range's ends, and e^-g's split g = n ln 2 + r
    import random

    from ppk._fixedpoint import _mul_shift, fixed_exp
    rng = random.Random(5)
    for _ in range(2000):
        prec, a_bits, b_bits = rng.randint(8, 260), rng.randint(1, 5), rng.randint(1, 5)
        top_a, top_b = 2 ** (prec + a_bits - 1) - 1, 2 ** (prec + b_bits - 1) - 1
        a = rng.choice([rng.randint(-top_a, top_a), top_a, -top_a, 0, 1, -1])
        b = rng.choice([rng.randint(-top_b, top_b), top_b, -top_b, 0, 1, -1])
        assert _mul_shift(a, b, prec, a_bits, b_bits) == (a * b) >> prec
    e = fixed_exp(200)
    for g in (0, 1, e.ln2 - 1, e.ln2, 12345678901234567890, e.gmax - 1, e.gmax, 3 * e.gmax):
        mantissa, n = e.split(g)
        assert n == min(g, e.gmax) // e.ln2
