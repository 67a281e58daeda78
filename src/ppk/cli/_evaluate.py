"""``ppk evaluate``: the thesis's evaluation grid, on local worker processes or a dask cluster."""
from __future__ import annotations

import argparse
import signal
import sys
from typing import Any

from ..evaluation import MEASURED_SECONDS
from ._args import add_command, positive_whole, whole


def _raise_keyboard_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _dask_client(address: str) -> Any:
    """A dask.distributed client connected to ``address`` (errors in --scheduler's terms)."""
    try:
        from distributed import Client
    except ImportError:
        raise ValueError("--scheduler needs dask.distributed: pip install 'ppk[dask]'") from None
    try:
        return Client(address, timeout="5s")
    except (OSError, TimeoutError) as exc:
        raise ValueError(f"--scheduler {address}: no dask scheduler answered there ({exc}); start one with "
                         "`dask scheduler` and workers with `dask worker ADDRESS`") from None


def _run(args: argparse.Namespace) -> int:
    from ..evaluation import SweepInterrupted, evaluate
    signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)     # `kill` stops the sweep as Ctrl-C does
    client = _dask_client(args.scheduler) if args.scheduler else None
    try:
        rows = evaluate(grid=args.grid, out_dir=args.out, jobs=args.jobs, seed=args.seed,
                        figures=not args.no_figures, progress=not args.quiet, resume=args.resume,
                        executor=client.get_executor() if client is not None else None)
    except SweepInterrupted as stop:
        where = "the cluster's tasks were cancelled" if client is not None else "the worker processes have ended"
        print(f"\ninterrupted: {len(stop.rows)} of {stop.total} points are done and in {args.out}/evaluation.csv; "
              f"{where}. Run the same command with --resume to compute the rest.", file=sys.stderr)
        return 130
    finally:
        if client is not None:
            client.close()
    print(f"{len(rows)} grid points -> {args.out}/evaluation.csv; summary in {args.out}/summary.md")
    with open(f"{args.out}/summary.md") as fh:
        print(fh.read())
    return 0


_DESCRIPTION = ("Sweep (n, known/n, p, eps, delta), computing the noise of Algorithm 1, Algorithm 2 (median over "
                "seeds) and the DP baselines; write evaluation.csv, figures (with matplotlib) and summary.md.")


def register(sub: Any) -> None:
    """Add evaluate to the sub-commands ``sub``."""
    e = add_command(sub, "evaluate", _run, help="the thesis's evaluation: Algorithms 1 and 2 vs DP over a grid",
                    description=_DESCRIPTION)
    e.add_argument("--grid", choices=["quick", "thesis", "tiny"], default="quick",
                   help=f"quick: 81 points, {MEASURED_SECONDS['quick']:g} s on a 2-core machine (measured once, with "
                        f"the figures); thesis: the ranges the thesis proposes, 560 points (n up to 1e7), "
                        f"{MEASURED_SECONDS['thesis']:g} s; tiny: 4 points, for smoke tests (default %(default)s)")
    e.add_argument("--out", default="ppk-out", help="output folder (default %(default)s)")
    e.add_argument("--jobs", type=positive_whole, default=None, help="worker processes (default: all cores)")
    e.add_argument("--seed", type=whole, default=0, help="seed of the data sets and the discrete Laplace draws of Algorithm 2 (default 0)")
    e.add_argument("--no-figures", action="store_true", help="write the CSV and summary only")
    e.add_argument("--quiet", action="store_true", help="no progress bar")
    e.add_argument("--resume", action="store_true",
                   help="keep the points already in OUT/evaluation.csv (an interrupted run of the same grid and "
                        "seed) and compute only the rest")
    e.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="run the points on a running dask.distributed cluster, e.g. tcp://10.0.0.1:8786 "
                        "(needs pip install 'ppk[dask]'); the CSV is the same as on the local process pool")
