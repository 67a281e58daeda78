"""The ``ppk`` command line.  ``ppk --help`` lists the commands; every command
explains its options with ``ppk COMMAND --help``.

One module per command family (``_count``: delta, calibrate, alg2, release; ``_histogram``; ``_compose``; ``_evaluate``;
``_related``: sp, risk; ``_samplers``; ``_pk``), each adding its commands with ``register(sub)``;
``_main`` assembles the parser and runs a command; everything printed goes through ``_emit``."""
from ._main import build_parser, main

__all__ = ["main", "build_parser"]
