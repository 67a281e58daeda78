"""dp_accounting's names for ppk's PLD builders and its interoperability (``PrivacyLossDistribution`` inherits
them), so that code written for dp_accounting ports by changing an import."""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping, TypeVar, cast

from .._validate import flag
from . import interop, mechanisms, subsampled

__all__: list[str] = []

#: The class a builder makes (``PrivacyLossDistribution``, which inherits these names).
T = TypeVar("T", bound="DpAccountingNames")


class DpAccountingNames:
    """The builders under dp_accounting's signatures, and the conversions to and from its PLDs."""

    __slots__ = ()

    @classmethod
    def from_gaussian_mechanism(cls: type[T], standard_deviation: float, sensitivity: float = 1.0,
                                pessimistic_estimate: bool = True, value_discretization_interval: float = 1e-4,
                                log_mass_truncation_bound: float = -50.0, sampling_prob: float = 1.0,
                                use_connect_dots: bool = True, *, adjacency: str = "add_or_remove"
                                ) -> T:
        """:meth:`from_gaussian` under dp_accounting's signature, so code ports by changing an import.

        ``sampling_prob < 1``: Poisson subsampling (ppk.pld.subsampled), the pair ``(1-q) N(0) + q N(s)``
        against ``N(0)`` for ``adjacency="remove"``, its mirror for ``"add"``, each reported alone (one-sided);
        ``"add_or_remove"`` (the default) reports the larger of the two.
        ``use_connect_dots`` is accepted for compatibility: ppk's upper end is always the connect-the-dots pair."""
        flag("use_connect_dots", use_connect_dots)
        q, adjacency = subsampled.check_subsampling(sampling_prob, adjacency)
        return subsampled.gaussian(cls, standard_deviation, sensitivity, q, value_discretization_interval,
                                   log_mass_truncation_bound, pessimistic_estimate, 1 << 20, adjacency,
                                   "standard_deviation")

    @classmethod
    def from_laplace_mechanism(cls: type[T], parameter: float, sensitivity: float = 1.0, pessimistic_estimate: bool = True,
                               value_discretization_interval: float = 1e-4, sampling_prob: float = 1.0,
                               use_connect_dots: bool = True, *, adjacency: str = "add_or_remove"
                               ) -> T:
        """:meth:`from_laplace` under dp_accounting's signature (``parameter`` is the Laplace scale);
        ``sampling_prob`` and ``adjacency`` as in :meth:`from_gaussian_mechanism`."""
        flag("use_connect_dots", use_connect_dots)
        q, adjacency = subsampled.check_subsampling(sampling_prob, adjacency)
        return subsampled.laplace(cls, parameter, sensitivity, q, value_discretization_interval, pessimistic_estimate,
                                  1 << 20, adjacency, "parameter")

    @classmethod
    def from_two_probability_mass_functions(cls: type[T], log_probability_mass_function_lower: Mapping[Any, float],
                                            log_probability_mass_function_upper: Mapping[Any, float],
                                            pessimistic_estimate: bool = True,
                                            value_discretization_interval: float = 1e-4,
                                            log_mass_truncation_bound: float = -math.inf,
                                            symmetric: bool = True) -> T:
        """:meth:`from_pmfs` under dp_accounting's signature: two mappings outcome -> log probability,
        ``upper`` the law P with the challenge row, ``lower`` the law Q without it."""
        p, q = mechanisms.pmfs_of_mappings(log_probability_mass_function_lower, log_probability_mass_function_upper)
        return cast(Any, cls).from_pmfs(p, q, value_discretization_interval=value_discretization_interval,
                             pessimistic_estimate=pessimistic_estimate, tolerance=1e-6)

    # ------------------------------------------------------------------ interoperability (ppk.pld.interop)
    def to_dp_accounting(self) -> Any:
        """A pessimistic ``dp_accounting`` PrivacyLossDistribution built from ppk's dominating pair.

        Its ``get_delta_for_epsilon`` is never below the true delta: the error bounds ppk carries are
        moved into its infinity mass.  Needs ``pip install dp_accounting``.
        """
        return interop.to_dp_accounting(self)

    @classmethod
    def from_dp_accounting(cls: type[T], pld: Any) -> T:
        """ppk's PLD of a dp_accounting PrivacyLossDistribution, taken as given: its bracket describes
        dp_accounting's discretised pair, not the mechanism it came from."""
        return interop.from_dp_accounting(cls, pld)

    def privacy_profile(self) -> Callable[[float], float]:
        """eps -> the certified upper end of delta(eps): a privacy profile for OpenDP's
        ``new_privacy_profile`` (or any accountant that takes a delta(eps) function)."""
        return interop.privacy_profile(self)
