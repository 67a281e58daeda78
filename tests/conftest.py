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


# The suite's CPU budget (.ci/run fails past it): each test's CPU seconds, this process and the
# threads it starts (time.process_time), are recorded so that the slowest are printed at the end of
# every run, where growth is seen when it happens.  Wall time on a shared machine says little.
_cpu_by_test: dict = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    import time

    start = time.process_time()
    yield
    _cpu_by_test[item.nodeid] = time.process_time() - start


def pytest_terminal_summary(terminalreporter):
    import resource
    import time

    if not _cpu_by_test:
        return
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    child_cpu = children.ru_utime + children.ru_stime
    total = time.process_time() + child_cpu
    terminalreporter.section("CPU seconds")
    slowest = sorted(_cpu_by_test.items(), key=lambda kv: -kv[1])[:10]
    for nodeid, cpu in slowest:
        terminalreporter.write_line(f"{cpu:8.2f} s  {nodeid}")
    terminalreporter.write_line(
        f"suite CPU: {total:.1f} s (pytest process {time.process_time():.1f} s, subprocesses {child_cpu:.1f} s)"
    )
    path = os.environ.get("PPK_SUITE_CPU_FILE")   # .ci/run reads the total from here
    if path:
        import json

        with open(path, "w") as fh:
            json.dump({"total": total, "tests": _cpu_by_test}, fh, indent=0)
