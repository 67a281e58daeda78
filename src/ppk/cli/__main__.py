"""``python -m ppk.cli``: the command line, as ``ppk`` and ``python -m ppk`` run it."""
import sys

from ._main import main

sys.exit(main())
