"""ppk's PLDs to and from Google's dp_accounting, and as a privacy profile (docs/accuracy.md, "Composition").

dp_accounting stores, per direction, the probabilities of the privacy loss on a grid ``i * Delta`` and
an infinity mass; delta(eps) = sum p_i (1 - e^(eps - L_i))_+ + infinity mass.  ppk's dominating
two-point pair (the upper end) has exactly that form, so the export is that pair, with the error
bound of its P-masses (sum |error| <= sqrt(n) * 2-norm) and ppk's rounding slack moved into the
infinity mass: the exported delta is never below the dominating pair's true delta, hence never below
the mechanism's.  (It can be a little below ppk's own upper end, which also charges the Q-masses'
error; dp_accounting reads Q off P.)  dp_accounting is optional: it is imported only here.

The functions take a :class:`~ppk.pld.PrivacyLossDistribution` (its class for the import), whose methods
``to_dp_accounting``, ``from_dp_accounting`` and ``privacy_profile`` call them.
"""
from __future__ import annotations

import math
from typing import Any, Callable, TypeVar

import numpy as np

from ._masses import _Masses

T = TypeVar("T")

#: Nothing here is public on its own: PrivacyLossDistribution's methods are the API these implement.
__all__: list[str] = []

LD = np.longdouble
_TINY = 2.3e-308   # masses below the double range are lost in the export: each counts this much


def _dp_accounting() -> Any:
    try:
        from dp_accounting.pld import pld_pmf, privacy_loss_distribution  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        raise ImportError("this needs Google's dp_accounting: pip install dp_accounting "
                          "(ppk's own PLDs do not)") from None
    return pld_pmf, privacy_loss_distribution


def to_dp_accounting(pld: Any) -> Any:
    """A pessimistic ``dp_accounting`` PLD whose delta(eps) is never below the true delta (module docstring)."""
    pld_pmf, lib = _dp_accounting()
    m = pld._atoms
    dx = pld.value_discretization_interval
    n = m.p.size
    # sum |error| over any set of atoms <= sqrt(n) * 2-norm; plus the rounding slack of ppk's upper end
    # (3e-12 covers the relative rounding slack ppk's upper end adds, 2e-12 of a mass <= 1)
    slack_p = math.sqrt(n) * m.err_p + 3e-12 + n * _TINY
    slack_q = math.sqrt(n) * m.err_q + 3e-12 + n * _TINY
    remove = pld_pmf.DensePLDPmf(dx, m.offset, m.p.astype(np.float64),
                                 float(pld.infinity_mass_upper + m.overflow_p) + slack_p, True)
    if pld._one_sided:    # one adjacency's pair: dp_accounting's PLD of one pmf reports that direction alone
        return lib.PrivacyLossDistribution(remove)
    # the other direction: the loss log(Q/P) = -L, distributed as Q
    add = pld_pmf.DensePLDPmf(dx, -(m.offset + n - 1), m.q[::-1].astype(np.float64),
                              float(pld.infinity_mass_lower + m.overflow_q) + slack_q, True)
    return lib.PrivacyLossDistribution(remove, add)


def _dense(pmf: Any) -> tuple[float, int, np.ndarray, float]:
    dense = pmf.to_dense_pmf() if hasattr(pmf, "to_dense_pmf") else pmf
    # dp_accounting's own FFT compositions leave tiny negative masses: they are rounding, taken as 0
    probs = np.maximum(np.asarray(dense._probs, dtype=np.float64), 0.0)
    return float(dense._discretization), int(dense._lower_loss), probs, float(dense._infinity_mass)


def from_dp_accounting(cls: Callable[..., T], pld: Any) -> T:
    """ppk's PLD of a dp_accounting PLD, taken as given (its discretisation is dp_accounting's).

    ppk reports the larger of the two orders of the pair (P, Q = P e^-L); dp_accounting, told the PLD is
    symmetric, reports one, so ppk's value can exceed it by the asymmetry of the discretisation (~1e-8
    relative for a connect-the-dots Gaussian at Delta = 1e-3).
    """
    _, lib = _dp_accounting()
    if not isinstance(pld, lib.PrivacyLossDistribution):
        raise TypeError(f"pld must be a dp_accounting PrivacyLossDistribution, got {type(pld).__name__}")
    dx, lower, probs, inf_p = _dense(pld._pmf_remove)
    # dp_accounting's atoms: P-mass at L = (lower + i) dx, and Q = P e^-L there.  ppk holds one pair, so
    # the other direction is read off this one: exact when both directions come from one pair (as
    # ppk's exports do), the pair's own mirror image for a symmetric PLD
    k = lower + np.arange(probs.size)
    p = probs.astype(LD)
    with np.errstate(over="ignore"):
        q = p * np.exp(-(k.astype(LD) * LD(dx)))
    if not np.all(np.isfinite(q)):
        raise ValueError("the dp_accounting PLD has mass at losses beyond the long-double range")
    atoms = _Masses(int(lower), p, q, 0.0)
    inf = min(inf_p, 1.0)
    return cls(interval=dx, offset=int(lower), mass_upper=p, mass_lower=q, width=0.0, infinity_mass_upper=inf,
               infinity_mass_lower=inf, _atoms=atoms)


def privacy_profile(pld: Any) -> Callable[[float], float]:
    """eps -> certified upper end of delta(eps): a privacy profile, e.g. for OpenDP's ``new_privacy_profile``."""
    def profile(eps: float) -> float:
        return float(pld.delta_bracket(float(eps))[1])
    return profile
