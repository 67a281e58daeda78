"""Sphinx configuration of ppk's documentation (built in CI with warnings as errors).

Build: ``sphinx-build -W -b html docs docs/_build/html`` with ppk installed (the API pages import it).
"""
import ppk

project = "ppk"
author = "the ppk developers"
copyright = "2026, the ppk developers"
release = version = ppk.__version__

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.mathjax", "numpydoc"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3

autodoc_typehints = "signature"
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
numpydoc_show_class_members = False
numpydoc_validation_checks: set = set()
numpydoc_xref_param_type = False

html_theme = "alabaster"
html_static_path: list = []
nitpicky = False
