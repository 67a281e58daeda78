"""Reproductions of the papers related to partial-knowledge privacy (see ``docs/related.md``).

* :mod:`ppk.related.dp` -- the differential-privacy basics of the lecture notes: randomized
  response, composition (basic and advanced), group privacy, subsampling, k-anonymity and
  l-diversity.  The one home of the composition formulas.
* :mod:`ppk.related.pk` -- passive vs active partial knowledge (Desfontaines, Krahmer, Mohammadi).
* :mod:`ppk.related.sp` -- statistical privacy of counts over a secret partition.
* :mod:`ppk.related.risk` -- privacy at risk of the Laplace mechanism (Dandekar, Basu, Bressan),
  with its sensitivity sampler (:mod:`ppk.related.risk.sensitivity`) and figures
  (:mod:`ppk.related.risk.figures`).
* :mod:`ppk.related.shuffle_clones` -- the Feldman-McMillan-Talwar clone bound on shuffled randomized
  response, beside which docs/shuffle.md sets ppk's exact curve (:class:`ppk.ShuffledRandomizedResponse`).

They load on first use: ``import ppk; ppk.related.risk.confidence(eps=0.5, eps0=1.0)``.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import dp, pk, risk, shuffle_clones, sp

__all__ = ["dp", "pk", "sp", "risk", "shuffle_clones"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
