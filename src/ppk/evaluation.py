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
import importlib
import importlib.util
import json
import math
import os
import signal
import sys
import time
import types
import warnings
from concurrent.futures import FIRST_COMPLETED, Executor, ProcessPoolExecutor, wait
from dataclasses import dataclass
from collections.abc import Mapping
from itertools import product
from typing import Any, Callable, Sequence

import numpy as np

from ._random import InsecureRandomnessWarning
from ._validate import choice, flag, function, instance, integer, real, sequence
from .algorithm1 import alg1
from .algorithm2 import EPS_MIN, alg2
from .baselines import analytic_gaussian_sigma, classic_gaussian_sigma, sufficient_gaussian_sigma
from .counting import MAX_ROWS

__all__ = ["evaluate", "GRIDS", "GridPoint", "grid_points", "evaluate_point", "run_sweep", "write_csv", "read_csv",
           "COLUMNS", "SweepInterrupted", "MEASURED_SECONDS"]

from ._rows import COLUMNS, check_rows as _check_rows    # (one home below this module and ppk.figures)

# Each grid: the axes of the sweep.  "thesis" spans the ranges the thesis proposes for it (n 1e4..1e7, eps
# 1e-3..1, bias and known/n 0.01..0.99); "quick" is a small cut of it.
GRIDS: dict[str, dict[str, Any]] = {
    "quick": dict(n=[10**4, 10**5, 10**6], known_fraction=[0.1, 0.5, 0.9], p=[0.1, 0.3, 0.5],
                  eps=[0.01, 0.1, 1.0], delta=[1e-6], seeds=3),
    "thesis": dict(n=[10**4, 10**5, 10**6, 10**7], known_fraction=[0.01, 0.25, 0.5, 0.75, 0.99],
                   p=[0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99], eps=[0.001, 0.01, 0.1, 1.0], delta=[1e-6],
                   seeds=5),
    "tiny": dict(n=[1000, 10**4], known_fraction=[0.5], p=[0.3], eps=[0.1, 1.0], delta=[1e-6], seeds=2),
}


#: What ``ppk evaluate`` took on each grid, with its figures (seconds of wall time, one run of ``time ppk evaluate``
#: on a 2-core x86-64 VM): the one source of the timings the command's help and the README state
#: (tests/test_readme.py checks the README against it; bench/benchmarks/bench_evaluate.py times it).
MEASURED_SECONDS = {"quick": 7.4, "thesis": 46.0}

#: Most worker processes a sweep starts.
MAX_JOBS = 1024
#: Most seeds (Algorithm 2 runs) a grid point takes.
MAX_SEEDS = 10_000
#: Most points a grid holds (the product of its axes' lengths): the list of points is built at once.
MAX_POINTS = 10**6
#: The axes a grid must have ("seeds" is optional, 3 by default).
AXES = ("n", "known_fraction", "p", "eps", "delta")


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

    def __post_init__(self):
        # checked here, where every point passes (grid_points, a user's point, a point from another
        # process), and stored as converted: a point read back from a CSV computes as the one first made
        checked = dict(
            index=integer("index", self.index, minimum=0), n=integer("n", self.n, minimum=2, maximum=MAX_ROWS),
            known_fraction=real("known_fraction", self.known_fraction, minimum=0.0, maximum=1.0),
            p=real("p", self.p, minimum=0.0, maximum=1.0), eps=real("eps", self.eps, minimum=EPS_MIN),
            delta=real("delta", self.delta, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False),
            seeds=integer("seeds", self.seeds, minimum=1, maximum=MAX_SEEDS),
            seed=integer("seed", self.seed, minimum=0))
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    @property
    def known(self) -> int:
        return min(self.n - 1, int(round(self.known_fraction * self.n)))


def _axes(grid: str | Mapping[str, Any]) -> tuple[list[list[Any]], Any]:
    """The five axes of a grid (a name in GRIDS or a dict of lists) and its number of seeds."""
    if isinstance(grid, str):
        grid = GRIDS[choice("grid", grid, tuple(GRIDS))]
    instance("grid", grid, Mapping, f"the name of a grid ({', '.join(GRIDS)}) or a dict of axes like GRIDS['tiny']")
    missing = [a for a in AXES if a not in grid]
    unknown = sorted(str(k) for k in grid if k not in AXES and k != "seeds")
    if missing or unknown:
        raise ValueError(f"grid must have the axes {', '.join(AXES)} (and optionally seeds); "
                         f"{'it lacks ' + ', '.join(missing) if missing else 'unknown: ' + ', '.join(unknown)}")
    axes = [sequence(f"grid[{a!r}]", grid[a], lambda name, v: v, min_length=1) for a in AXES]
    if math.prod(len(a) for a in axes) > MAX_POINTS:
        raise ValueError(f"grid has {math.prod(len(a) for a in axes)} points, more than MAX_POINTS={MAX_POINTS}")
    return axes, grid.get("seeds", 3)


def grid_points(grid: str | dict[str, Any], *, seed: int = 0) -> list[GridPoint]:
    """The points of a grid (a name in GRIDS or a dict of axes like them), indexed in order."""
    axes, seeds = _axes(grid)
    seed = integer("seed", seed, minimum=0)
    try:
        return [GridPoint(i, n, kf, p, e, d, seeds, seed) for i, (n, kf, p, e, d) in enumerate(product(*axes))]
    except (TypeError, ValueError) as exc:   # a value on an axis: say it came from the grid
        raise type(exc)(f"grid: {exc}") from None


def evaluate_point(point: GridPoint) -> dict:
    """One CSV row (a plain dict, so it crosses process boundaries cheaply)."""
    instance("point", point, GridPoint, "a GridPoint (see grid_points)")
    start = time.perf_counter()
    n, known = point.n, point.known
    sigma_ppk = alg1(n=n, known=known, p=point.p, eps=point.eps, delta=point.delta).scale
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
    """A dependency-free progress bar on stderr (a line per 10% when stderr is not a terminal).

    The estimate of the time left weighs the points by their cost, not their count: a point of the
    sweep costs from milliseconds to seconds depending on (n, eps), so each pending point is
    expected to cost the mean of the finished points with the same (n, eps) (the mean of all
    finished points until one is), and the sum is shared by the workers.
    """

    def __init__(self, points: list[GridPoint], enabled: bool, workers: int):
        self.total, self.done, self.enabled, self.workers = len(points), 0, enabled, max(1, workers)
        self.pending: dict[tuple, int] = {}
        for p in points:
            self.pending[(p.n, p.eps)] = self.pending.get((p.n, p.eps), 0) + 1
        self.spent: dict[tuple, tuple[float, int]] = {}   # (n, eps) -> (seconds, points) finished
        self.start = time.perf_counter()
        self.tty = sys.stderr.isatty()
        self.last_decile = -1

    def _seconds_left(self) -> float:
        if not self.spent:
            return math.nan
        overall = sum(t for t, _ in self.spent.values()) / sum(c for _, c in self.spent.values())
        mean = {key: t / c for key, (t, c) in self.spent.items()}
        return sum(count * mean.get(key, overall) for key, count in self.pending.items()) / self.workers

    def step(self, row: dict) -> None:
        self.done += 1
        key = (row["n"], row["eps"])
        self.pending[key] -= 1
        seconds, count = self.spent.get(key, (0.0, 0))
        self.spent[key] = (seconds + row["seconds"], count + 1)
        if not self.enabled:
            return
        frac = self.done / self.total
        elapsed = time.perf_counter() - self.start
        left = self._seconds_left()
        bar = "#" * int(30 * frac) + "." * (30 - int(30 * frac))
        text = (f"[{bar}] {self.done}/{self.total} points, {elapsed:.0f} s elapsed"
                + (f", ~{left:.0f} s left" if self.done < self.total and math.isfinite(left) else ""))
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
    # worker processes: Ctrl-C reaches the whole process group, but only the parent decides what stops;
    # the parent's SIGTERM handler (ppk evaluate turns `kill` into Ctrl-C) is inherited by a fork, and a
    # worker inside a kernel would only notice it at the kernel's next poll: terminate() must end it now
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the workers now (they would otherwise finish their points)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())   # no public API ends a running worker
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.join(timeout=5)


def _executor_and_jobs(executor: Any, jobs: int | None) -> tuple[Executor | None, int | None]:
    # a dask.distributed Client is not an Executor but hands one out: taken as its get_executor() (duck-typed,
    # so dask is not imported here)
    if executor is not None and not isinstance(executor, Executor) and callable(getattr(executor, "get_executor", None)):
        executor = executor.get_executor()
    if executor is not None:
        instance("executor", executor, Executor,
                 "a concurrent.futures.Executor or a dask.distributed Client (or None: a process pool)")
    return executor, None if jobs is None else integer("jobs", jobs, minimum=1, maximum=MAX_JOBS)


def _side_task(name: str, task: Any) -> tuple[Callable[..., Any], tuple]:
    if not (isinstance(task, tuple) and len(task) == 2 and isinstance(task[1], tuple)):
        raise TypeError(f"{name} must be a (function, arguments tuple) pair, got {task!r}")
    return function(name, task[0]), task[1]


def run_sweep(points: list[GridPoint], *, executor: Any = None, jobs: int | None = None,
              progress: bool = True, side_tasks: Sequence[tuple[Callable[..., Any], tuple]] = (),
              side_results: list | None = None) -> list[dict]:
    """Evaluate every point; rows come back in grid order whatever the executor does.

    ``side_tasks`` (function, arguments) run in the same pool, submitted first, so that they overlap the
    sweep (``ppk evaluate`` draws its figures this way); their results are appended to ``side_results``
    in the order given.  On Ctrl-C (KeyboardInterrupt) the pending points are cancelled, the pool's
    workers end, and :class:`SweepInterrupted` carries the rows already finished.
    """
    points = sequence("points", points, lambda name, p: instance(name, p, GridPoint, "a GridPoint (see grid_points)"))
    executor, jobs = _executor_and_jobs(executor, jobs)
    progress = flag("progress", progress)
    side_tasks = sequence("side_tasks", side_tasks, _side_task)
    if side_results is not None:
        instance("side_results", side_results, list, "a list (the side tasks' results are appended to it)")
    own = executor is None
    workers = jobs or os.cpu_count() or 1
    pool: Executor = (ProcessPoolExecutor(max_workers=workers, initializer=_ignore_interrupts)
                      if executor is None else executor)
    bar = _Progress(points, progress, workers)
    rows: list[dict | None] = [None] * len(points)
    futures: list[Any] = []
    try:
        side = [pool.submit(f, *args) for f, args in side_tasks]
        futures = side + [pool.submit(evaluate_point, p) for p in points]
        index = dict(zip(futures[len(side):], range(len(points))))
        pending = set(futures)
        while pending:   # wake twice a second, so that Ctrl-C and SIGTERM are handled at once
            done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for fut in done:
                if fut in index:
                    rows[index[fut]] = row = fut.result()
                    bar.step(row)
                else:
                    fut.result()   # a failed side task raises here
        if side_results is not None:
            side_results.extend(f.result() for f in side)
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


def write_csv(rows: Sequence[Mapping[str, Any]], path: str) -> None:
    rows = _check_rows("rows", rows)

    def cell(v):
        if isinstance(v, float) and math.isnan(v):
            return ""
        return repr(v) if isinstance(v, float) else str(v)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow([cell(r[c]) for c in COLUMNS])



RUN_FILE = "evaluation-run.json"   # the grid and seed that evaluation.csv belongs to (for --resume)


def _point_key(r: GridPoint | dict) -> tuple:
    get = (lambda k: getattr(r, k)) if isinstance(r, GridPoint) else r.__getitem__
    return tuple(get(k) for k in ("n", "known_fraction", "p", "eps", "delta"))


def read_csv(path: str) -> list[dict]:
    """The rows of an ``evaluation.csv`` written by :func:`write_csv` (empty cells are NaN)."""
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames != COLUMNS:
            raise ValueError(f"{path} is not an evaluation.csv of this version of ppk (columns {reader.fieldnames})")
        return [{k: int(v) if k == "n" else (float(v) if v else math.nan) for k, v in r.items()} for r in reader]


def _previous_rows(out_dir: str, run: dict) -> dict[tuple, dict]:
    """The finished rows of an earlier run of the same grid and seed in ``out_dir`` (for ``resume``)."""
    run_path, csv_path = os.path.join(out_dir, RUN_FILE), os.path.join(out_dir, "evaluation.csv")
    if not os.path.exists(csv_path):
        return {}
    if not os.path.exists(run_path):
        raise ValueError(f"cannot resume: {csv_path} has no {RUN_FILE} saying which grid and seed it is for")
    try:
        with open(run_path) as fh:
            before = json.load(fh)
    except json.JSONDecodeError as exc:
        raise ValueError(f"cannot resume: {run_path} is not the JSON ppk wrote ({exc})") from None
    if before != run:
        raise ValueError(f"cannot resume: {csv_path} is for another grid or seed ({before}); "
                         "use another output folder, or the same grid and seed")
    try:
        return {_point_key(r): r for r in read_csv(csv_path)}
    except (ValueError, TypeError) as exc:   # a cell that is not a number, a short row
        raise ValueError(f"cannot resume: {csv_path} is damaged ({exc}); delete it to start again") from None


def evaluate(*, grid: str | dict = "quick", out_dir: str = "ppk-out", executor: Any = None,
             jobs: int | None = None, seed: int = 0, figures: bool = True, progress: bool = True,
             resume: bool = False) -> list[dict]:
    """Run the sweep, write ``evaluation.csv``, the figures (if matplotlib is installed) and ``summary.md``.

    Returns the CSV rows.  ``executor`` is any ``concurrent.futures.Executor`` or a ``dask.distributed``
    ``Client`` (its ``get_executor()`` is used); by default a process
    pool with ``jobs`` workers (all cores), which also draws the figures while the sweep runs.
    Results depend only on ``grid`` and ``seed``.  ``resume`` keeps the rows of an interrupted run of the
    same grid and seed in ``out_dir`` and computes only the missing points.
    """
    seed = integer("seed", seed, minimum=0)         # an int: it is written to evaluation-run.json
    points = grid_points(grid, seed=seed)           # checks grid before anything is written
    executor, jobs = _executor_and_jobs(executor, jobs)
    figures, progress, resume = flag("figures", figures), flag("progress", progress), flag("resume", resume)
    os.makedirs(out_dir, exist_ok=True)
    run = {"grid": grid if isinstance(grid, str) else {k: list(v) if isinstance(v, (list, tuple)) else v
                                                         for k, v in grid.items()}, "seed": seed}
    done = _previous_rows(out_dir, run) if resume else {}
    with open(os.path.join(out_dir, RUN_FILE), "w") as fh:
        json.dump(run, fh)
    todo = [p for p in points if _point_key(p) not in done]

    def in_grid_order(new_rows: list[dict]) -> list[dict]:
        found = {**done, **{_point_key(r): r for r in new_rows}}
        return [found[_point_key(p)] for p in points if _point_key(p) in found]

    drawn: list[tuple[str, str]] = []
    note = "none were drawn (figures=False, or --no-figures on the command line)."
    figs: types.ModuleType | None = None
    if figures:
        if importlib.util.find_spec("matplotlib") is None:
            note = "matplotlib is not installed (pip install 'ppk[plot]'): no figures were drawn."
        else:
            figs = importlib.import_module(".figures", __package__)
    # our own pool draws the figures alongside the sweep; a given executor (a cluster) would draw them
    # on its workers' disks, so then they are drawn here afterwards
    side: list[tuple[Callable[..., Any], tuple]] = (
        [(f, (out_dir,)) for f in figs.ALL] if figs is not None and executor is None else [])
    side_results: list[tuple[str, str]] = []
    try:
        new_rows = run_sweep(todo, executor=executor, jobs=jobs, progress=progress, side_tasks=side,
                             side_results=side_results)
    except SweepInterrupted as stop:   # keep what is done: the CSV of the finished points, then stop
        stop.rows, stop.total = in_grid_order(stop.rows), len(points)
        write_csv(stop.rows, os.path.join(out_dir, "evaluation.csv"))
        raise
    rows = in_grid_order(new_rows)
    write_csv(rows, os.path.join(out_dir, "evaluation.csv"))
    if figs is not None:
        drawn.append(figs.fig_evaluation_summary(out_dir, rows))
        drawn += side_results if side else [f(out_dir) for f in figs.ALL]
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
