import os
import signal
import sys

import pytest
from hypothesis import settings

sys.path.insert(0, os.path.dirname(__file__))  # for the oracle module

settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture(autouse=True)
def _sigint_untouched():
    """A library must not change its host's Ctrl-C: every test leaves the SIGINT handler as it found it."""
    before = signal.getsignal(signal.SIGINT)
    yield
    after = signal.getsignal(signal.SIGINT)
    if after is not before:
        signal.signal(signal.SIGINT, before)
        pytest.fail(f"the SIGINT handler changed from {before!r} to {after!r}")
