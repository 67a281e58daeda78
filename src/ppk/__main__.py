"""``python -m ppk``: the command line, as ``ppk`` runs it."""
import sys

from .cli import main

sys.exit(main())
