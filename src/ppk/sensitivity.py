"""Deprecated: moved to :mod:`ppk.related.risk.sensitivity` (this path is removed in ppk 0.3)."""
from ._deprecation import moved_module

moved_module(__name__, "ppk.related.risk.sensitivity")
