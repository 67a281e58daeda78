"""Independent high-precision oracle for the k-fold Poisson-subsampled Gaussian mechanism (mpmath only;
shares no code with ppk).

The pair (sensitivity 1, "remove"):

    P = (1 - q) N(0, sigma^2) + q N(1, sigma^2)   against   Q = N(0, sigma^2),

with likelihood ratio r(x) = P(x)/Q(x) = (1 - q) + q exp((2x - 1) / (2 sigma^2)) and loss L = log r.
(ppk's remove pair puts the second component at -1; x -> -x maps one pair onto the other.)  "add" is
the mirror H(Q || P).  delta(eps) = H_{e^eps}(P^k || Q^k) = E_P[(1 - e^{eps - S})_+], S the sum of k iid
copies of L under P.

Method: Laplace inversion along a vertical line through the saddle point.

* The hockey-stick function f(s) = (1 - e^{eps - s})_+ has, for Re z > 0, the two-sided Laplace
  transform  int f(s) e^{-zs} ds = int_eps^inf (e^{-zs} - e^{eps} e^{-(z+1)s}) ds
  = e^{-z eps} (1/z - 1/(z+1)) = e^{-z eps} / (z (z+1)),
  so by Laplace inversion f(s) = (1/2 pi i) int_{c-i inf}^{c+i inf} e^{z(s - eps)} / (z (z+1)) dz for
  every c > 0 (f is continuous and of bounded variation: the inversion holds pointwise).  Taking E_P
  inside (Fubini: |e^{zS}| = e^{cS} is P-integrable where M(c) < inf, and |1/(z(z+1))| <= 1/(1+t^2)):

      delta(eps) = (1 / 2 pi i) int_{c - i inf}^{c + i inf} M(z)^k e^{-z eps} / (z (z + 1)) dz,
      M(z) = E_P[e^{zL}] = int P^{1+z} Q^{-z} dx,        any c > 0 with M(c) < inf.

  The poles are at z = 0 (residue M(0)^k = 1) and z = -1 (residue -M(-1)^k e^{eps} = -e^{eps}): the
  line must pass to the right of both (a line in (-1, 0) gives delta - 1, one left of -1 gives
  delta - 1 + e^{eps}).  For this pair M is entire (r grows like e^{x/sigma^2}, Q decays like
  e^{-x^2/(2 sigma^2)}), so every c > 0 is admissible.  The add order uses E_Q[(Q/P)^z] = int Q r^{-z},
  also entire (r >= 1 - q > 0).  Checked by test_pld_subsampled_composition: the plain Gaussian (q = 1),
  whose k-fold delta is Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), mu = sqrt(k)/sigma; a
  two-point randomized response, whose k-fold delta is a finite binomial sum; the kernel's inversion
  itself, (1/2 pi i) int e^{zu} / (z(z+1)) dz = (1 - e^{-u})_+ for u of both signs.

* Conjugate symmetry (M(conj z) = conj M(z)) halves the line: with z = c + it,
  delta = (1/pi) int_0^inf Re[M(z)^k e^{-z eps} / (z (z+1))] dt.

* The contour: c minimises g(c) = k log M(c) - c eps - log(c (c+1)) over c > 0 (g -> +inf at both ends,
  the pole terms included, so the minimiser exists for every eps).  On the line, |integrand| <= e^{-g(c)}
  with equality at t = 0, and g is stationary there: the integrand is a non-oscillating bump of height
  e^{-g(c)} and width about g''(c)^{-1/2}, and delta is a fixed fraction of it (no cancellation), so
  delta = 1e-300 or e^-5000 comes out to full relative precision -- the point of the shifted contour.
  The t-axis is cut into pieces of that width and each integrated by mpmath.quad (tanh-sinh); pieces
  are added until a piece and the integrand's end value, times t, fall below 10^-(dps - 5) of the sum.

* M(z) for complex z: int Q(x) r(x)^w dx with w = 1 + z (remove) or w = -z (add), i.e. Q(x) e^{Re(w)
  log r(x)} e^{i Im(w) log r(x)}, log r = log((1 - q) + q e^{(2x-1)/(2 sigma^2)}) evaluated with positive
  terms only.  Along the line Re w is fixed, so the real weights are computed once.  The integrand is
  analytic in |Im x| < pi sigma^2 (the zeros of r) and decays like a Gaussian, so the trapezoidal rule
  on the real line converges exponentially in 1/step (Trefethen & Weideman, SIAM Review 56 (2014)); the
  step is halved until two successive sums agree to 10^-(dps - 3) of M(Re w) (the size of every term),
  which also resolves the oscillation e^{i t log r} at large t.  The window is [min(0, Re w) - W sigma,
  max(0, Re w) + W sigma]: both components of r^w are Gaussians centred at 0 and at Re w, and beyond W
  sigma their tails are below 2^|w| e^{-W^2/2} of M(Re w), W chosen to make that 10^-(dps + 10).

Convergence is checked by a second contour (``rise``) and a higher precision.
"""
from __future__ import annotations

import mpmath as mp

__all__ = ["log_delta", "log_delta_direct", "log_delta_gaussian", "log_delta_binomial", "log_delta_mgf",
           "kernel_inversion", "saddle"]


# ------------------------------------------------------------------ the moment-generating function
class _MGF:
    """int Q(x) r(x)^w dx on the real line for w with a fixed real part (one vertical line)."""

    def __init__(self, sigma, q, wre):
        self.sigma, self.q, self.wre = sigma, q, wre
        dps = mp.mp.dps
        w_half = mp.sqrt(2 * ((dps + 10) * mp.log(10) + abs(wre) * mp.log(2)))
        self.lo = min(mp.mpf(0), wre) - w_half * sigma
        self.hi = max(mp.mpf(0), wre) + w_half * sigma
        self.levels = []             # level j: nodes at odd multiples of step / 2^j (level 0: all)
        self.step0 = sigma / 3
        self.scale = None            # M(Re w): every term is at most about this

    def _log_r(self, x):
        u = (2 * x - 1) / (2 * self.sigma ** 2)
        if self.q == 1:
            return u
        return mp.log((1 - self.q) + self.q * mp.exp(u))

    def _nodes(self, j):
        while len(self.levels) <= j:
            i = len(self.levels)
            h = self.step0 / 2 ** i
            n = int(mp.ceil((self.hi - self.lo) / h))
            idx = range(n + 1) if i == 0 else range(1, n + 1, 2)
            norm = 1 / (self.sigma * mp.sqrt(2 * mp.pi))
            level = []
            for m in idx:
                x = self.lo + m * h
                lr = self._log_r(x)
                level.append((norm * mp.exp(-x * x / (2 * self.sigma ** 2) + self.wre * lr), lr))
            self.levels.append(level)
        return self.levels[j]

    def _refine(self, term, scale):
        """Trapezoidal sums of ``term`` over ever finer nodes until two agree to 10^-(dps-3) of
        ``scale`` (None: of the sum itself)."""
        tol = mp.mpf(10) ** (3 - mp.mp.dps)
        total, prev = mp.mpf(0), None
        for j in range(12):
            total += mp.fsum(term(a, lr) for a, lr in self._nodes(j))
            value = total * self.step0 / 2 ** j
            if prev is not None and abs(value - prev) <= tol * (abs(value) if scale is None else scale):
                return value
            prev = value
        raise ArithmeticError(f"trapezoidal sums for M did not settle (sigma={self.sigma}, q={self.q})")

    def __call__(self, wim):
        """M at w = wre + i wim."""
        if self.scale is None:
            self.scale = self._refine(lambda a, lr: a, None)
        if wim == 0:
            return mp.mpc(self.scale)
        return self._refine(lambda a, lr: a * mp.expj(wim * lr), self.scale)


def _mgf(sigma, q, c, order):
    """(M on the line Re z = c as a function of t, M(c)) for the order."""
    if order == "remove":          # int Q r^{1+z}: w = 1 + c + it
        f = _MGF(sigma, q, 1 + c)
        m = (lambda t: f(t))
    else:                          # int Q r^{-z}: w = -c - it
        f = _MGF(sigma, q, -c)
        m = (lambda t: f(-t))
    return m, f(0).real


def _check(sigma, q, k, order):
    sigma, q = mp.mpf(sigma), mp.mpf(q)
    if not (sigma > 0 and 0 < q <= 1 and int(k) == k and k >= 1 and order in ("remove", "add")):
        raise ValueError(f"need sigma > 0, 0 < q <= 1, integer k >= 1, order remove/add: "
                         f"{sigma}, {q}, {k}, {order!r}")
    return sigma, q, int(k)


# ------------------------------------------------------------------ the contour
def saddle(sigma, q, k, eps, order="remove", rise=0):
    """argmin over c > 0 of g(c) = k log M(c) - c eps - log(c (c+1)), and g''(c) there (golden section
    in log c at low precision: the line only has to pass near the saddle, any c > 0 is exact).
    ``rise`` > 0: instead the c right of the minimum with g(c) = min g + rise (bisection)."""
    sigma, q, k = _check(sigma, q, k, order)
    with mp.workdps(20):
        eps = mp.mpf(eps)

        def g(c):
            return k * mp.log(_mgf(sigma, q, c, order)[1]) - c * eps - mp.log(c * (c + 1))

        a, b = mp.log(mp.mpf("1e-6")), mp.log(mp.mpf(1e3))
        while g(mp.exp(b)) < g(mp.exp(b - 1)):      # the add order's saddle runs off as eps nears k max L
            a, b = b - 1, b + 3
        ratio = (mp.sqrt(5) - 1) / 2
        x1, x2 = b - ratio * (b - a), a + ratio * (b - a)
        g1, g2 = g(mp.exp(x1)), g(mp.exp(x2))
        while b - a > mp.mpf("1e-4"):
            if g1 < g2:
                b, x2, g2 = x2, x1, g1
                x1 = b - ratio * (b - a)
                g1 = g(mp.exp(x1))
            else:
                a, x1, g1 = x1, x2, g2
                x2 = a + ratio * (b - a)
                g2 = g(mp.exp(x2))
        c = mp.exp((a + b) / 2)
        if rise > 0:
            target, lo, hi = g(c) + rise, c, 2 * c
            while g(hi) < target:
                lo, hi = hi, 2 * hi
            for _ in range(60):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if g(mid) < target else (lo, mid)
            c = (lo + hi) / 2
        h = c * mp.mpf("1e-3")
        curv = (g(c + h) - 2 * g(c) + g(c - h)) / h ** 2
        return c, max(curv, 1 / c ** 2)     # a piece no longer than the distance to the pole at 0


def log_delta(sigma, q, k, eps, order="remove", dps=40, rise=0):
    """Natural log of delta(eps) of the k-fold composition (module docstring), as an mpf; -inf where
    delta is 0 (the add order's loss is at most -log(1 - q), so its k-fold delta vanishes from
    eps = -k log(1 - q) on).  ``rise`` > 0 moves the line right of the saddle to where the integrand's
    height is e^rise times the saddle's (a convergence check: any c > 0 is exact; the sum then cancels
    about e^rise, rise = 5 costs two of its 25 digits)."""
    if dps < 35:
        raise ValueError(f"dps must be at least 35 (the outer sum runs 15 digits below): {dps}")
    sigma, q, k = _check(sigma, q, k, order)
    with mp.workdps(dps):
        eps = mp.mpf(eps)
        if order == "add" and q < 1 and eps >= -k * mp.log1p(-q):
            return mp.mpf("-inf")
        c, curv = saddle(sigma, q, k, eps, order, rise)
        width = 1 / mp.sqrt(curv)
        m, mc = _mgf(sigma, q, c, order)
        # the integrand divided by its height at t = 0, e^{-g(c)} = M(c)^k e^{-c eps} / (c (c+1))
        log_height = k * mp.log(mc) - c * eps - mp.log(c * (c + 1))

        def integrand(t):
            with mp.workdps(dps):
                z = mp.mpc(c, t)
                ratio = m(t) / mc
                return mp.re(ratio ** k * mp.expj(-t * eps) * (c * (c + 1)) / (z * (z + 1)))

        # the outer sum at 15 digits below M's accuracy: quad's error estimate then sees a smooth
        # integrand (at full precision it would chase M's last digits to its maximal degree)
        with mp.workdps(dps - 15):
            tol = mp.mpf(10) ** (15 - dps)
            total, a = mp.mpf(0), mp.mpf(0)
            for _ in range(2000):
                piece = mp.quad(integrand, [a, a + width], method="gauss-legendre")
                total += piece
                a += width
                if abs(piece) <= tol * abs(total) and a * abs(integrand(a)) <= tol * abs(total):
                    break
                if a > 8 * width:
                    width *= 2           # far out the integrand only decays: longer pieces
            else:
                raise ArithmeticError("the contour integral did not converge")
        if total <= 0:
            raise ArithmeticError(f"non-positive contour integral {total} (eps={eps})")
        return log_height + mp.log(total / mp.pi)


# ------------------------------------------------------------------ references for the checks
def log_delta_direct(sigma, q, eps, order="remove", dps=40):
    """One-fold log delta by quadrature of (P - e^eps Q)_+ (remove) or (Q - e^eps P)_+ (add) over x,
    on the half line beyond the root of L(x) = +-eps (closed form, L increasing in x)."""
    with mp.workdps(dps):
        sigma, q, eps = mp.mpf(sigma), mp.mpf(q), mp.mpf(eps)

        def phi(x, mean):
            return mp.exp(-(x - mean) ** 2 / (2 * sigma ** 2)) / (sigma * mp.sqrt(2 * mp.pi))

        def p(x):
            return (1 - q) * phi(x, 0) + q * phi(x, 1)

        if order == "remove":      # L > eps  <=>  x > root
            root = mp.mpf(1) / 2 + sigma ** 2 * mp.log((mp.exp(eps) - (1 - q)) / q)
            f, pts = (lambda x: p(x) - mp.exp(eps) * phi(x, 0)), [root + j * sigma for j in range(40)]
            pts = [root] + [x for x in (mp.mpf(0), mp.mpf(1)) if x > root] + pts[1:] + [mp.inf]
        else:                      # L < -eps  <=>  x < root
            arg = mp.exp(-eps) - (1 - q)
            if arg <= 0:
                return mp.mpf("-inf")
            root = mp.mpf(1) / 2 + sigma ** 2 * mp.log(arg / q)
            f, pts = (lambda x: phi(x, 0) - mp.exp(eps) * p(x)), [root - j * sigma for j in range(40)]
            pts = [-mp.inf] + pts[:0:-1] + [x for x in (mp.mpf(0), mp.mpf(1)) if x < root] + [root]
        pts = sorted(set(pts), key=lambda v: v)
        norm = abs(f(pts[1] if pts[0] == -mp.inf else pts[0] + sigma / 4))   # quad's tolerance is absolute
        return mp.log(norm * mp.quad(lambda x: f(x) / norm, pts))


def log_delta_gaussian(sigma, k, eps, dps=40):
    """The plain Gaussian's k-fold log delta in closed form, mu = sqrt(k)/sigma, by the log tails."""
    with mp.workdps(dps):
        mu, eps = mp.sqrt(k) / mp.mpf(sigma), mp.mpf(eps)

        def log_sf(x):
            return mp.log(mp.erfc(x / mp.sqrt(2)) / 2)

        a, b = log_sf(eps / mu - mu / 2), eps + log_sf(eps / mu + mu / 2)
        return a + mp.log(-mp.expm1(b - a))


def log_delta_binomial(p, k, eps, dps=40):
    """k-fold randomized response, P = (p, 1-p) against Q = (1-p, p): the exact finite binomial sum."""
    with mp.workdps(dps):
        p, eps = mp.mpf(p), mp.mpf(eps)
        a = mp.log(p / (1 - p))
        total = mp.mpf(0)
        for j in range(k + 1):                 # j outputs favour P: S = (2j - k) a
            s = (2 * j - k) * a
            if s > eps:
                total += mp.binomial(k, j) * p ** j * (1 - p) ** (k - j) * (1 - mp.exp(eps - s))
        return mp.log(total) if total > 0 else mp.mpf("-inf")


def log_delta_mgf(mgf, k, eps, c, dps=30):
    """The inversion formula for any entire M (closed form ``mgf``), by mpmath.quadosc along Re z = c
    (for lattice losses, whose |M| does not decay along the line); period 2 pi / (lattice step) must be
    supplied by the caller through ``mgf.period``."""
    with mp.workdps(dps):
        eps, c = mp.mpf(eps), mp.mpf(c)

        def f(t):
            z = mp.mpc(c, t)
            return mp.re(mgf(z) ** k * mp.exp(-z * eps) / (z * (z + 1)))

        return mp.log(mp.quadosc(f, [0, mp.inf], period=mgf.period) / mp.pi)


def kernel_inversion(u, c, dps=30):
    """(1/2 pi i) int_{c - i inf}^{c + i inf} e^{zu} / (z (z+1)) dz, which should be (1 - e^{-u})_+."""
    with mp.workdps(dps):
        u, c = mp.mpf(u), mp.mpf(c)

        def f(t):
            z = mp.mpc(c, t)
            return mp.re(mp.exp(z * u) / (z * (z + 1)))

        if u == 0:
            return mp.quad(f, [0, 1, 10, 100, mp.inf]) / mp.pi
        return mp.quadosc(f, [0, mp.inf], omega=abs(u)) / mp.pi
