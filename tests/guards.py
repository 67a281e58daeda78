"""Make a test fail instead of hang or eat the machine: a time limit (SIGALRM) and an address-space allowance."""
from __future__ import annotations

import contextlib
import resource
import signal


class Timeout(Exception):
    """The guarded block ran past its time limit."""


def _address_space() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


@contextlib.contextmanager
def within(seconds: int, *, memory: int | None = None):
    """Raise Timeout after ``seconds``; with ``memory``, allow the block that many more bytes of address space."""
    def alarm(signum, frame):
        raise Timeout(f"still running after {seconds} s")
    old = signal.signal(signal.SIGALRM, alarm)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if memory is not None:
        allowance = _address_space() + memory
        if hard == resource.RLIM_INFINITY or allowance < hard:
            resource.setrlimit(resource.RLIMIT_AS, (allowance, hard))
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        if memory is not None:
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
