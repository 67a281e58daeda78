"""ppk against dp_accounting on subsampled and Laplace plans, side by side in one process (issue #42 item 1).

Each row: build the PLD, self-compose, read eps(1e-5) and eps(1e-10); value_discretization_interval 1e-4
(1e-3 for Laplace) for both libraries, their default truncations.  CPU time by ``time.process_time`` (both
libraries use both cores in places, so CPU is the fair measure), min over ``--runs``; the memory is the
tracemalloc peak of one run (numpy's buffers; not C++'s or pocketfft's), and with ``--rss`` the growth of the
resident peak over one run in a fresh process (everything, page-granular).

    python bench/compare_dpsgd.py [--runs 5] [--rows q0.001_1k,laplace] [--only ppk|dpa] [--rss]
"""
from __future__ import annotations

import argparse
import gc
import time
import tracemalloc


def _ppk():
    from ppk.pld import PrivacyLossDistribution
    return PrivacyLossDistribution


def _dpa():
    from dp_accounting.pld import privacy_loss_distribution
    return privacy_loss_distribution


def _sg(q, k):
    def run(m):
        pld = m.from_gaussian_mechanism(1.1, sampling_prob=q, value_discretization_interval=1e-4).self_compose(k)
        return pld.get_epsilon_for_delta(1e-5), pld.get_epsilon_for_delta(1e-10)
    return run


def _laplace(m):
    pld = m.from_laplace_mechanism(1.0, value_discretization_interval=1e-3).self_compose(1000)
    return pld.get_epsilon_for_delta(1e-5), pld.get_epsilon_for_delta(1e-10)


def _mixed(m):
    sg = m.from_gaussian_mechanism(1.1, sampling_prob=0.01, value_discretization_interval=1e-4).self_compose(1000)
    g = m.from_gaussian_mechanism(20.0, value_discretization_interval=1e-4).self_compose(10)
    lap = m.from_laplace_mechanism(100.0, value_discretization_interval=1e-4).self_compose(10)
    pld = sg.compose(g).compose(lap)
    return pld.get_epsilon_for_delta(1e-5), pld.get_epsilon_for_delta(1e-10)


ROWS = {
    "q0.001_1k": ("q=0.001, 1,000 steps", _sg(0.001, 1000)),
    "q0.001_10k": ("q=0.001, 10,000 steps", _sg(0.001, 10_000)),
    "q0.01_1k": ("q=0.01, 1,000 steps", _sg(0.01, 1000)),
    "q0.01_100k": ("q=0.01, 100,000 steps", _sg(0.01, 100_000)),
    "laplace": ("Laplace b=1, 1,000-fold (1e-3)", _laplace),
    "mixed": ("mixed: SG q=0.01 x1000 + G(20) x10 + Lap(100) x10", _mixed),
}


def measure(fn, m, runs):
    best, out = float("inf"), None
    for _ in range(runs):
        gc.collect()
        t0 = time.process_time()
        out = fn(m)
        best = min(best, time.process_time() - t0)
    gc.collect()
    tracemalloc.start()
    fn(m)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return best, peak, out


def rss_growth(key: str, lib: str) -> float:
    """MiB the process's resident peak grows by over one run of the row, in a fresh process (counts what
    tracemalloc cannot: C++ and pocketfft buffers); both libraries imported first, as in the table."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, __file__, "--child", key, lib], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))


def _child(key: str, lib: str) -> None:
    """Linux: the peak (VmHWM) reset after the imports (/proc/self/clear_refs "5"), less the resident size then."""
    libs = {"ppk": _ppk(), "dpa": _dpa()}
    import scipy.fft  # noqa: F401  (imports before the baseline)
    import scipy.special  # noqa: F401
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    before = _status_kib("VmRSS")
    ROWS[key][1](libs[lib])
    print((_status_kib("VmHWM") - before) / 1024)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rows", default=",".join(ROWS))
    ap.add_argument("--only", choices=("ppk", "dpa"), default=None)
    ap.add_argument("--rss", action="store_true", help="also the resident peak's growth, in a fresh process")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        _child(*a.child)
        return
    libs = {"ppk": _ppk(), "dpa": _dpa()}
    if a.only:
        libs = {a.only: libs[a.only]}
    unit = "MiB traced" + (", RSS growth" if a.rss else "")
    print(f"| plan | {' | '.join(f'{k} s ({unit})' for k in libs)} | eps(1e-5), eps(1e-10) |")
    for key in a.rows.split(","):
        label, fn = ROWS[key]
        cells, eps = [], []
        for name, m in libs.items():
            t, peak, out = measure(fn, m, a.runs)
            rss = f", {rss_growth(key, name):.0f}" if a.rss else ""
            cells.append(f"{t:.2f} ({peak / 2**20:.0f}{rss})")
            eps.append(f"{name} {out[0]:.5f}, {out[1]:.5f}")
        print(f"| {label} | {' | '.join(cells)} | {'; '.join(eps)} |", flush=True)


if __name__ == "__main__":
    main()
