"""Differential-privacy baselines: how much noise plain (ε, δ)-DP needs.

All noise scales are standard deviations (Gaussian) or scales (Laplace) **in
the units of the query**, for a query of the given ``sensitivity``; for a count
use ``sensitivity=1`` and read sigma in counts.  Why the thesis's formulas are corrected:
``docs/decisions.md``, "DP baselines".

* :func:`analytic_gaussian_sigma` -- Balle & Wang (2018): the exact smallest
  sigma, valid for every eps > 0.  The right baseline.  :func:`analytic_gaussian_epsilon`
  answers the converse question (the smallest eps at a given sigma).
* :func:`sufficient_gaussian_sigma` -- the thesis's Corollary 3.2, corrected (a
  tail bound, so sufficient but not tight).
* :func:`classic_gaussian_sigma` -- Dwork & Roth, Thm A.1; only for eps < 1.
"""
from __future__ import annotations

import math
import sys
from typing import overload
import warnings

import numpy as np
import numpy.typing as npt

from . import _kernels
from ._search import log_quotient, log_target, smallest_feasible, smallest_feasible_near
from ._validate import choice, flag, integer, real, real_array
from ._typing import FloatArray

__all__ = [
    "analytic_gaussian_delta", "analytic_gaussian_log_delta", "analytic_gaussian_log_delta_upper", "analytic_gaussian_sigma",
    "analytic_gaussian_epsilon",
    "classic_gaussian_sigma", "sufficient_gaussian_sigma", "laplace_scale", "NotDifferentiallyPrivateWarning",
]


class NotDifferentiallyPrivateWarning(UserWarning):
    """A formula reproduced as printed in a source gives noise that is not (eps, delta)-DP."""


def _eps_delta(eps, delta) -> tuple[float, float]:
    eps = real("eps", eps, minimum=0.0, min_inclusive=False)
    delta = real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    return eps, delta


def _sensitivity(sensitivity) -> float:
    return real("sensitivity", sensitivity, minimum=0.0, min_inclusive=False)


def _finite_scale(scale: float, what: str, **params: float) -> float:
    """``scale`` if it is finite; else the ValueError that says which parameters put it beyond the floats.

    A scale is ``sensitivity / eps`` times a factor, so an eps near the smallest double (or a
    sensitivity near the largest) overflows to inf, which is no noise level anyone can add.
    """
    if not math.isfinite(scale):
        shown = ", ".join(f"{k}={v!r}" for k, v in params.items())
        raise ValueError(f"no finite {what}: with {shown} it exceeds the float range; raise eps (or lower the "
                         "sensitivity)")
    return scale


def classic_gaussian_sigma(*, eps: float, delta: float, sensitivity: float = 1.0, allow_eps_ge_1: bool = False) -> float:
    """``sqrt(2 ln(1.25/delta)) * sensitivity / eps`` (Dwork & Roth 2014, Thm A.1; thesis Thm 3.1).

    The theorem holds only for ``0 < eps < 1``.  For ``eps >= 1`` this raises
    ``ValueError`` unless ``allow_eps_ge_1=True``, in which case the number is
    returned for comparison only -- it is *not* guaranteed to be (eps, delta)-DP.
    Use :func:`analytic_gaussian_sigma` for a sigma that is exact for all eps.
    """
    eps, delta = _eps_delta(eps, delta)
    sensitivity = _sensitivity(sensitivity)
    if eps >= 1 and not flag("allow_eps_ge_1", allow_eps_ge_1):
        raise ValueError(f"eps must be < 1 for the classic Gaussian mechanism (Dwork-Roth Thm A.1), got {eps}; "
                         "use analytic_gaussian_sigma, or pass allow_eps_ge_1=True to get the number anyway")
    sigma = math.sqrt(2.0 * log_quotient(1.25, delta)) * sensitivity / eps
    return _finite_scale(sigma, "sigma", eps=eps, delta=delta, sensitivity=sensitivity)


def sufficient_gaussian_sigma(*, eps: float, delta: float, sensitivity: float = 1.0, compositions: int = 1, variant: str = "corrected") -> float:
    """The thesis's Corollary 3.2: a sufficient Gaussian sigma for ``compositions``-fold composition.

    ``variant="corrected"`` (default) is the tail bound
    ``sigma = sensitivity * sqrt(c) * (e + sqrt(e^2 + eps)) / (sqrt(2) * eps)``,
    ``e = erfcinv(2 delta)``: it makes ``P[L > eps] = delta`` for the Gaussian
    privacy loss ``L ~ N(mu, 2 mu)``, ``mu = c sensitivity^2 / (2 sigma^2)``, hence
    (eps, delta)-DP -- sufficient, never tight.  Requires ``delta <= 1/4``.

    ``variant="as_printed"`` reproduces eq. (3.1) of the thesis, which divides by
    ``sqrt(2 eps)`` instead of ``sqrt(2) eps``: it equals the corrected value
    times ``sqrt(eps)``, so for ``eps < 1`` it is **not** DP (delta exceeded by
    up to 1e11x) and a :class:`NotDifferentiallyPrivateWarning` is emitted.
    """
    eps, delta = _eps_delta(eps, delta)
    sensitivity = _sensitivity(sensitivity)
    compositions = integer("compositions", compositions, minimum=1)
    variant = choice("variant", variant, ("corrected", "as_printed"))
    if delta > 0.25:
        raise ValueError(f"delta must be <= 1/4 for Corollary 3.2, got {delta}")
    from scipy import special   # loaded on use: `import ppk` stays light (docs/architecture.md)

    e = float(special.erfcinv(2.0 * delta))
    core = sensitivity * math.sqrt(compositions) * (e + math.sqrt(e * e + eps))
    if variant == "corrected":
        sigma = core / (math.sqrt(2.0) * eps)
    else:
        if eps < 1:
            warnings.warn(f"Corollary 3.2 as printed under-calibrates for eps < 1 (eps={eps}): "
                          "the sigma it returns is not (eps, delta)-DP", NotDifferentiallyPrivateWarning,
                          stacklevel=2)
        sigma = core / math.sqrt(2.0 * eps)
    return _finite_scale(sigma, "sigma", eps=eps, delta=delta, sensitivity=sensitivity, compositions=compositions)


@overload
def analytic_gaussian_log_delta(*, sigma: float, eps: float, sensitivity: float = 1.0) -> float: ...
@overload
def analytic_gaussian_log_delta(*, sigma: float, eps: npt.ArrayLike, sensitivity: float = 1.0) -> FloatArray: ...
def analytic_gaussian_log_delta(*, sigma: float, eps: npt.ArrayLike, sensitivity: float = 1.0) -> float | FloatArray:
    """Natural log of the exact delta(eps) of the Gaussian mechanism (Balle & Wang 2018, Thm 8).

    ``delta = Phi(s/(2 sigma) - eps sigma/s) - e^eps Phi(-s/(2 sigma) - eps sigma/s)``, ``s`` the
    sensitivity, computed in long double through Mills ratios so that it stays
    accurate in the far tail (finite far below 1e-308).  Vectorised over ``eps``.
    """
    sigma = real("sigma", sigma, minimum=0.0)
    sensitivity = _sensitivity(sensitivity)
    flat, scalar = real_array("eps", eps, minimum=0.0)
    log_d = _kernels.gaussian_curve(sigma=sigma, eps=flat, sensitivity=sensitivity).log_delta.reshape(np.shape(eps))
    return float(log_d) if scalar else log_d


def analytic_gaussian_log_delta_upper(*, sigma: float, eps: float, sensitivity: float = 1.0) -> float:
    """A certified upper bound on :func:`analytic_gaussian_log_delta` at one eps (its rounding bounded and
    added): what a calibration or a count of allowed releases may rely on."""
    sigma = real("sigma", sigma, minimum=0.0)
    sensitivity = _sensitivity(sensitivity)
    eps = real("eps", eps, minimum=0.0)
    return _kernels.gaussian_log_delta_upper(sigma=sigma, eps=eps, sensitivity=sensitivity)


def analytic_gaussian_log_delta_bracket(*, sigma: float, eps: npt.ArrayLike, sensitivity: float = 1.0
                                        ) -> tuple[FloatArray, FloatArray]:
    """Certified ``(lower, upper)`` natural logs of the Gaussian mechanism's delta at every eps: the closed
    form's long-double value minus and plus its bounded rounding (the upper end is
    :func:`analytic_gaussian_log_delta_upper`'s, vectorised)."""
    sigma = real("sigma", sigma, minimum=0.0)
    sensitivity = _sensitivity(sensitivity)
    flat, _ = real_array("eps", eps, minimum=0.0)
    curve = _kernels.gaussian_curve(sigma=sigma, eps=flat, sensitivity=sensitivity)
    est, up = curve.log_delta.astype(np.float64), curve.log_delta_upper.astype(np.float64)
    with np.errstate(invalid="ignore"):
        lo = np.where(np.isfinite(up), est - (up - est), est)
    return lo.reshape(np.shape(eps)), up.reshape(np.shape(eps))


@overload
def analytic_gaussian_delta(*, sigma: float, eps: float, sensitivity: float = 1.0) -> float: ...
@overload
def analytic_gaussian_delta(*, sigma: float, eps: npt.ArrayLike, sensitivity: float = 1.0) -> FloatArray: ...
def analytic_gaussian_delta(*, sigma: float, eps: npt.ArrayLike, sensitivity: float = 1.0) -> float | FloatArray:
    """The exact delta(eps) of the Gaussian mechanism (see :func:`analytic_gaussian_log_delta`)."""
    return np.exp(analytic_gaussian_log_delta(sigma=sigma, eps=eps, sensitivity=sensitivity))


def analytic_gaussian_sigma(*, eps: float, delta: float, sensitivity: float = 1.0, rtol: float = 1e-12) -> float:
    """The smallest sigma with which ``N(f(D), sigma^2)`` is (eps, delta)-DP (Balle & Wang 2018).

    Exact for every ``eps > 0`` (no ``eps < 1`` restriction).  Found by
    bisection on a certified upper bound of delta; the returned sigma is
    rounded up (its delta is <= ``delta``) and within ``rtol`` of the optimum.
    """
    eps, delta = _eps_delta(eps, delta)
    sensitivity = _sensitivity(sensitivity)
    rtol = real("rtol", rtol, minimum=0.0, min_inclusive=False)
    target = log_target(delta)

    def excess(s: float) -> float:
        return _kernels.gaussian_log_delta_upper(sigma=s, eps=eps, sensitivity=sensitivity) - target

    hi = sensitivity * (math.sqrt(2.0 * log_quotient(1.25, delta)) + 1.0) / eps
    while math.isfinite(hi) and excess(hi) > 0:
        hi *= 2.0
    _finite_scale(hi, "sigma", eps=eps, delta=delta, sensitivity=sensitivity)
    lo = hi / 2.0
    while excess(lo) <= 0:
        lo /= 2.0
    return smallest_feasible(excess, lo, hi, rtol=rtol).x


def analytic_gaussian_epsilon(*, sigma: float, delta: float, sensitivity: float = 1.0, rtol: float = 1e-12) -> float:
    """The smallest eps at which ``N(f(D), sigma^2)`` is (eps, delta)-DP (Balle & Wang 2018).

    ``sigma`` is the standard deviation in the query's units.  Found on a certified upper bound of
    delta (:func:`analytic_gaussian_log_delta`'s closed form), so the eps returned is rounded up --
    its delta is <= ``delta`` -- and within ``rtol`` of the optimum.  ``inf`` when no finite eps
    reaches ``delta`` (``sigma = 0``: the output is the exact answer, delta = 1 at every eps).

    Examples
    --------
    >>> eps = analytic_gaussian_epsilon(sigma=3.0, delta=1e-6)
    >>> round(eps, 6)
    1.447988
    >>> bool(analytic_gaussian_delta(sigma=3.0, eps=eps) <= 1e-6)
    True
    """
    sigma = real("sigma", sigma, minimum=0.0)
    delta = real("delta", delta, minimum=0.0, maximum=1.0, min_inclusive=False)
    sensitivity = _sensitivity(sensitivity)
    rtol = real("rtol", rtol, minimum=0.0, min_inclusive=False)
    target = log_target(delta)

    def excess(e: float) -> float:
        return _kernels.gaussian_log_delta_upper(sigma=sigma, eps=e, sensitivity=sensitivity) - target

    if sigma == 0.0:
        return 0.0 if excess(0.0) <= 0 else math.inf
    s = sigma / sensitivity
    # the tail approximation delta ~ sf(eps s - 1/(2 s)) as the guess; the bracket grows from it
    guess = (math.sqrt(-2.0 * target) + 0.5 / s) / s if math.isfinite(s) else 0.0
    found = smallest_feasible_near(excess, min(guess, 1e300), 0.25 * guess + 1e-300, upper=sys.float_info.max,
                                   rtol=rtol)
    return math.inf if found is None else found.x


def laplace_scale(*, eps: float, sensitivity: float = 1.0) -> float:
    """Scale ``b = sensitivity / eps`` of the Laplace mechanism, which is (eps, 0)-DP (pure DP)."""
    eps = real("eps", eps, minimum=0.0, min_inclusive=False)
    sensitivity = _sensitivity(sensitivity)
    return _finite_scale(sensitivity / eps, "scale", eps=eps, sensitivity=sensitivity)
