"""One query object shared by eight threads gives, bit for bit, what it gives serially (issue #45).

The shuffle's split curves cache log C in blocks that depend on nothing but the block (ppk/shuffle.hpp), so
neither the threads' interleaving nor the order of the calls moves a bit; before, the C++ curve reassigned
its window under a released GIL and crashed (SIGSEGV or heap corruption) or answered from a window another
thread was growing.  The histogram and a composed PLD are checked the same way.  Each object is fresh, so
its caches are built while the threads race; each answer is compared with a fresh serial object's.
"""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import ppk

THREADS = 8


def _shared_and_serial(make, call, points):
    """``call(obj, x)`` for every x: from THREADS threads sharing one fresh object, and serially on another
    (in reverse order, so that neither the order nor the threads may move a bit)."""
    shared = make()
    with ThreadPoolExecutor(THREADS) as pool:
        threaded = list(pool.map(lambda x: call(shared, x), points))
    serial_obj = make()
    serial = [call(serial_obj, x) for x in reversed(points)][::-1]
    return threaded, serial


@pytest.mark.parametrize("n, known, p", [(2000, None, None), (300, 120, 0.3)])
def test_shuffle_shared_by_threads_answers_as_serially(n, known, p):
    # known=None: every split on the C++ curve (the old code crashed); known=120 of 299: three random groups,
    # the Python reference (the old code raised IndexError from a window another thread was replacing)
    points = [i / 8 for i in range(16)]

    def make():
        return ppk.ShuffledRandomizedResponse(n=n, eps0=2.5, known=known, p=p)

    threaded, serial = _shared_and_serial(make, lambda q, e: q.log_delta_bracket(e), points)
    assert threaded == serial
    assert all(lo <= up for lo, up in serial)


def test_histogram_shared_by_threads_answers_as_serially():
    def make():
        return ppk.HistogramQuery(n=20_000, known=5_000, probs=[0.2, 0.3, 0.5], sigma=1.5)

    threaded, serial = _shared_and_serial(make, lambda h, e: h.log_delta_bracket(e), [0.05 * i for i in range(8)])
    assert threaded == serial


def test_pld_shared_by_threads_answers_as_serially():
    def make():
        lap = ppk.PrivacyLossDistribution.from_laplace(scale=2.0, value_discretization_interval=1e-2)
        gauss = ppk.PrivacyLossDistribution.from_gaussian(sigma=3.0, value_discretization_interval=1e-2)
        return lap.self_compose(3).compose(gauss)

    threaded, serial = _shared_and_serial(make, lambda d, e: d.delta_bracket(e), [0.1 * i for i in range(12)])
    assert threaded == serial


# -- Ctrl-C reaches a kernel running in a worker thread (issue #45) -------------------------------------------
# Python runs its SIGINT handler on the main thread only; the kernels also watch a count of SIGINTs kept by a
# C handler chained in front of Python's (cpp/src/bindings.hpp).  The child starts the kernel in a worker
# thread, says so, and reports what the worker got; without the fix the worker runs to its end (the counting
# curve for ~130 s, the shuffle's epsilon for seconds and then returns normally).
_KERNELS = {
    # the pool path (run_interruptible): 2e5 eps of a count over 1e12 rows
    "counting": "ppk.CountingQuery(n=10**12, known=0, p=0.3, sigma=0.3).delta(np.linspace(1e-4, 1, 200_000))",
    # the inline path (run_watched) and a Python loop over many kernels (_kernels.interruptible)
    "shuffle": "ppk.ShuffledRandomizedResponse(n=10**7, eps0=1.0).epsilon(1e-9)",
}
_WORKER_CHILD = """
import signal, threading, numpy as np, ppk
done, got = threading.Event(), []
def work():
    try:
        print('started', flush=True)
        {kernel}
        got.append('finished')
    except KeyboardInterrupt:
        got.append('KeyboardInterrupt')
    finally:
        done.set()
threading.Thread(target=work).start()
while not done.is_set():
    try:
        done.wait()
    except KeyboardInterrupt:   # the main thread's own; the worker must hear of it too
        pass
signal.signal(signal.SIGINT, signal.SIG_IGN)   # a later signal of the parent's loop: nothing left to stop
print('worker:', got[0], flush=True)
"""


@pytest.mark.parametrize("name", list(_KERNELS))
def test_ctrl_c_stops_a_kernel_in_a_worker_thread(name):
    import signal
    import subprocess
    import sys
    import time

    # SIG_DFL first: a shell starts background jobs with SIGINT ignored (as tests/test_cli.py explains)
    proc = subprocess.Popen([sys.executable, "-c", _WORKER_CHILD.format(kernel=_KERNELS[name])],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdout.readline() == "started\n"
        # a signal every second until the child ends (one sent before the kernel began would not be its
        # business): uninterrupted, the counting curve runs ~130 s, past the 20 s allowed
        for _ in range(20):
            time.sleep(0.3)
            proc.send_signal(signal.SIGINT)
            try:
                out, err = proc.communicate(timeout=1)
                break
            except subprocess.TimeoutExpired:
                continue
        else:
            pytest.fail(f"{name}: the worker thread's kernel was still running 20 s after Ctrl-C")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert out.strip() == "worker: KeyboardInterrupt", err
    assert proc.returncode == 0
