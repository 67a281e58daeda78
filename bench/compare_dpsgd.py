"""ppk against dp_accounting on subsampled and Laplace plans, side by side in one process (issue #42 item 1).

Each row: build the PLD, self-compose, read eps(1e-5) and eps(1e-10); value_discretization_interval 1e-4
(1e-3 for Laplace) for both libraries, their default truncations.  CPU time by ``time.process_time`` (both
libraries use both cores in places, so CPU is the fair measure), min over ``--runs``; the memory is the
tracemalloc peak of one run (numpy's buffers are traced) -- run alone, as the process's resident peak says
nothing per row.

    python bench/compare_dpsgd.py [--runs 5] [--rows q001_1k,laplace] [--only ppk|dpa]
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rows", default=",".join(ROWS))
    ap.add_argument("--only", choices=("ppk", "dpa"), default=None)
    a = ap.parse_args()
    libs = {"ppk": _ppk(), "dpa": _dpa()}
    if a.only:
        libs = {a.only: libs[a.only]}
    print(f"| plan | {' | '.join(f'{k} s (MiB)' for k in libs)} | eps(1e-5), eps(1e-10) |")
    for key in a.rows.split(","):
        label, fn = ROWS[key]
        cells, eps = [], []
        for name, m in libs.items():
            t, peak, out = measure(fn, m, a.runs)
            cells.append(f"{t:.2f} ({peak / 2**20:.0f})")
            eps.append(f"{name} {out[0]:.5f}, {out[1]:.5f}")
        print(f"| {label} | {' | '.join(cells)} | {'; '.join(eps)} |", flush=True)


if __name__ == "__main__":
    main()
