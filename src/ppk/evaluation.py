"""``ppk evaluate``: the evaluation the thesis ran out of time for (its Sec. 5.4).

For every point of a grid (n, known/n, p, eps, delta) it computes the noise of
Algorithm 1 (p known), of Algorithm 2 (p estimated privately; median over
seeds, each seed drawing its own data set), and of the three DP baselines, and
writes one CSV row per point.  The sweep runs on any
``concurrent.futures.Executor`` (a process pool by default; pass a
``dask.distributed`` client's executor to run it on a cluster) and its result
depends only on the grid and the seed, not on the executor or the order.
"""
from __future__ import annotations

import csv
import math
import os
import signal
import sys
import time
import warnings
from concurrent.futures import FIRST_COMPLETED, Executor, ProcessPoolExecutor, wait
from dataclasses import dataclass
from itertools import product
from typing import Any

import numpy as np

from ._random import InsecureRandomnessWarning
from .algorithm1 import alg1
from .algorithm2 import alg2
from .baselines import analytic_gaussian_sigma, classic_gaussian_sigma, sufficient_gaussian_sigma

__all__ = ["GRIDS", "GridPoint", "grid_points", "evaluate_point", "run_sweep", "write_csv", "COLUMNS",
           "SweepInterrupted"]

COLUMNS = ["n", "known_fraction", "p", "eps", "delta", "sigma_ppk", "sigma_alg2", "sigma_analytic",
           "sigma_cor32", "sigma_classic", "gain", "seconds"]

# Each grid: the axes of the sweep.  "thesis" spans the ranges the thesis proposes for
# it (n 1e4..1e7, eps 1e-3..1, bias and known/n 0.01..0.99); "quick" is a small cut of it that runs in about a minute on 2 cores.
GRIDS: dict[str, dict[str, Any]] = {
    "quick": dict(n=[10**4, 10**5, 10**6], known_fraction=[0.1, 0.5, 0.9], p=[0.1, 0.3, 0.5],
                  eps=[0.01, 0.1, 1.0], delta=[1e-6], seeds=3),
    "thesis": dict(n=[10**4, 10**5, 10**6, 10**7], known_fraction=[0.01, 0.25, 0.5, 0.75, 0.99],
                   p=[0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99], eps=[0.001, 0.01, 0.1, 1.0], delta=[1e-6],
                   seeds=5),
    "tiny": dict(n=[1000, 10**4], known_fraction=[0.5], p=[0.3], eps=[0.1, 1.0], delta=[1e-6], seeds=2),
}


@dataclass(frozen=True)
class GridPoint:
    index: int
    n: int
    known_fraction: float
    p: float
    eps: float
    delta: float
    seeds: int
    seed: int

    @property
    def known(self) -> int:
        return min(self.n - 1, int(round(self.known_fraction * self.n)))


def grid_points(grid: str | dict[str, Any], *, seed: int = 0) -> list[GridPoint]:
    axes_of: dict[str, Any] = GRIDS[grid] if isinstance(grid, str) else grid
    axes = product(axes_of["n"], axes_of["known_fraction"], axes_of["p"], axes_of["eps"], axes_of["delta"])
    return [GridPoint(i, n, kf, p, e, d, axes_of.get("seeds", 3), seed) for i, (n, kf, p, e, d) in enumerate(axes)]


def evaluate_point(point: GridPoint) -> dict:
    """One CSV row (a plain dict, so it crosses process boundaries cheaply)."""
    start = time.perf_counter()
    n, known = point.n, point.known
    sigma_ppk = alg1(n=n, known=known, p=point.p, eps=point.eps, delta=point.delta).sigma
    alg2_sigmas = []
    for s in range(point.seeds):
        rng = np.random.default_rng([point.seed, point.index, s])
        count = int(rng.binomial(n, point.p))     # a data set drawn with bias p
        with warnings.catch_warnings():   # a simulation on synthetic data: seeded on purpose
            warnings.simplefilter("ignore", InsecureRandomnessWarning)
            alg2_sigmas.append(alg2(count=count, n=n, known=known, eps=point.eps, delta=point.delta, rng=rng).sigma)
    sigma_bw = analytic_gaussian_sigma(eps=point.eps, delta=point.delta)
    return dict(
        n=n, known_fraction=point.known_fraction, p=point.p, eps=point.eps, delta=point.delta,
        sigma_ppk=sigma_ppk, sigma_alg2=float(np.median(alg2_sigmas)), sigma_analytic=sigma_bw,
        sigma_cor32=sufficient_gaussian_sigma(eps=point.eps, delta=point.delta) if point.delta <= 0.25 else math.nan,
        sigma_classic=classic_gaussian_sigma(eps=point.eps, delta=point.delta) if point.eps < 1 else math.nan,
        gain=math.inf if sigma_ppk == 0 else sigma_bw / sigma_ppk,
        seconds=time.perf_counter() - start,
    )


class _Progress:
    """A dependency-free progress bar on stderr (a line per 10% when stderr is not a terminal)."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.done, self.enabled = total, 0, enabled
        self.start = time.perf_counter()
        self.tty = sys.stderr.isatty()
        self.last_decile = -1

    def step(self) -> None:
        self.done += 1
        if not self.enabled:
            return
        frac = self.done / self.total
        elapsed = time.perf_counter() - self.start
        eta = elapsed / frac - elapsed if frac > 0 else 0.0
        bar = "#" * int(30 * frac) + "." * (30 - int(30 * frac))
        text = f"[{bar}] {self.done}/{self.total} points, {elapsed:.0f} s elapsed, ~{eta:.0f} s left"
        if self.tty:
            print("\r" + text, end="" if self.done < self.total else "\n", file=sys.stderr, flush=True)
        elif int(10 * frac) > self.last_decile:
            self.last_decile = int(10 * frac)
            print(text, file=sys.stderr, flush=True)


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) during a sweep; ``rows`` holds the points finished before it, in grid order."""

    def __init__(self, rows: list[dict], total: int):
        super().__init__(f"interrupted after {len(rows)} of {total} points")
        self.rows, self.total = rows, total


def _ignore_interrupts() -> None:
    # worker processes: Ctrl-C reaches the whole process group, but only the parent decides what stops
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the workers now (they would otherwise finish their points)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())   # no public API ends a running worker
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.join(timeout=5)


def run_sweep(points: list[GridPoint], *, executor: Executor | None = None, jobs: int | None = None,
              progress: bool = True) -> list[dict]:
    """Evaluate every point; rows come back in grid order whatever the executor does.

    On Ctrl-C (KeyboardInterrupt) the pending points are cancelled, the pool's workers end, and
    :class:`SweepInterrupted` carries the rows already finished.
    """
    own = executor is None
    pool: Executor = (ProcessPoolExecutor(max_workers=jobs or os.cpu_count() or 1, initializer=_ignore_interrupts)
                      if executor is None else executor)
    bar = _Progress(len(points), progress)
    rows: list[dict | None] = [None] * len(points)
    futures: list[Any] = []
    try:
        futures = [pool.submit(evaluate_point, p) for p in points]
        index = dict(zip(futures, range(len(points))))
        pending = set(futures)
        while pending:   # wake twice a second, so that Ctrl-C and SIGTERM are handled at once
            done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for fut in done:
                rows[index[fut]] = fut.result()
                bar.step()
    except KeyboardInterrupt:
        for fut in futures:
            fut.cancel()
        if own and isinstance(pool, ProcessPoolExecutor):
            _stop_workers(pool)
        raise SweepInterrupted([r for r in rows if r is not None], len(points)) from None
    except BaseException:
        if own:
            pool.shutdown(wait=False, cancel_futures=True)
        raise
    if own:
        pool.shutdown()
    return [r for r in rows if r is not None]


def write_csv(rows: list[dict], path: str) -> None:
    def cell(v):
        if isinstance(v, float) and math.isnan(v):
            return ""
        return repr(v) if isinstance(v, float) else str(v)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow([cell(r[c]) for c in COLUMNS])



def evaluate(*, grid: str | dict = "quick", out_dir: str = "ppk-out", executor: Executor | None = None,
             jobs: int | None = None, seed: int = 0, figures: bool = True, progress: bool = True) -> list[dict]:
    """Run the sweep, write ``evaluation.csv``, the figures (if matplotlib is installed) and ``summary.md``.

    Returns the CSV rows.  ``executor`` is any ``concurrent.futures.Executor``; by default a process
    pool with ``jobs`` workers (all cores).  Results depend only on ``grid`` and ``seed``.
    """
    os.makedirs(out_dir, exist_ok=True)
    points = grid_points(grid, seed=seed)
    try:
        rows = run_sweep(points, executor=executor, jobs=jobs, progress=progress)
    except SweepInterrupted as stop:   # keep what is done: the CSV of the finished points, then stop
        write_csv(stop.rows, os.path.join(out_dir, "evaluation.csv"))
        raise
    write_csv(rows, os.path.join(out_dir, "evaluation.csv"))
    drawn: list[tuple[str, str]] = []
    note = "none were drawn (figures=False, or --no-figures on the command line)."
    if figures:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            note = "matplotlib is not installed (pip install 'ppk[plot]'): no figures were drawn."
        else:
            from . import figures as figs
            drawn.append(figs.fig_evaluation_summary(out_dir, rows))
            for f in figs.ALL:
                drawn.append(f(out_dir))
    _write_summary(out_dir, grid, seed, rows, drawn, note)
    return rows


def _results_table(rows: list[dict]) -> list[str]:
    """Per (n, eps): how often the natural noise alone suffices, and the noise Algorithms 1 and 2 save
    against their DP baselines (the analytic Gaussian at eps, and at eps/2 for Algorithm 2)."""
    out = ["| n | eps | natural noise alone suffices | Alg. 1 saves (median / best) | "
           "Alg. 2 saves (median / best) |", "|---|---|---|---|---|"]
    for n, eps in sorted({(r["n"], r["eps"]) for r in rows}):
        cell = [r for r in rows if r["n"] == n and r["eps"] == eps]
        alone = sum(1 for r in cell if r["sigma_ppk"] == 0)
        saved1 = [1 - r["sigma_ppk"] / r["sigma_analytic"] for r in cell]
        saved2 = [1 - r["sigma_alg2"] / analytic_gaussian_sigma(eps=r["eps"] / 2, delta=r["delta"]) for r in cell]
        out.append(f"| {n:,} | {eps:g} | {alone} of {len(cell)} | {np.median(saved1):.0%} / {max(saved1):.0%} | "
                   f"{np.median(saved2):.0%} / {max(saved2):.0%} |")
    return out


def _write_summary(out_dir, grid, seed, rows, drawn, note) -> None:
    zero = sum(1 for r in rows if r["sigma_ppk"] == 0)
    worse = sum(1 for r in rows if r["sigma_ppk"] > r["sigma_analytic"] * (1 + 1e-9))
    lines = [
        "# ppk evaluate",
        "",
        f"Grid `{grid if isinstance(grid, str) else 'custom'}`, seed {seed}: {len(rows)} points. The natural "
        f"noise alone sufficed at {zero} of them; PPK needed more noise than DP at {worse} (must be 0).",
        "",
        "## Results",
        "",
        "The noise saved is 1 - sigma / sigma_DP: Algorithm 1 (bias known) against the analytic Gaussian at "
        "(eps, delta), Algorithm 2 (bias estimated privately, median over seeds) against the analytic "
        "Gaussian at (eps/2, delta), the budget it has left for the noise. 100% means no noise was needed.",
        "",
        *_results_table(rows),
        "",
        "`evaluation.csv` has one row per point: the noise (standard deviations in counts) of Algorithm 1 "
        "(`sigma_ppk`), Algorithm 2 (`sigma_alg2`), the analytic Gaussian (`sigma_analytic`, Balle-Wang), "
        "the corrected Cor. 3.2 (`sigma_cor32`) and the classic Gaussian (`sigma_classic`, empty for "
        "eps >= 1); `gain = sigma_analytic / sigma_ppk`.",
        "",
        "## Figures",
        "",
    ]
    lines += [f"* `{name}` -- {text}" for name, text in drawn] or [f"* {note}"]
    lines += ["", "## Timing", "",
              f"{sum(r['seconds'] for r in rows):.1f} s of computation over {len(rows)} points "
              "(summed over the worker processes)."]
    with open(os.path.join(out_dir, "summary.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
