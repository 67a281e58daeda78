import os
import sys

from hypothesis import settings

sys.path.insert(0, os.path.dirname(__file__))  # for the oracle module

settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
