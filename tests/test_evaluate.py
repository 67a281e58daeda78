"""ppk evaluate: the CSV promise, PPK never above DP, determinism across executors, figures."""
import csv
import math
from concurrent.futures import ThreadPoolExecutor

import pytest

from ppk import evaluation
from ppk.baselines import analytic_gaussian_sigma
from ppk.cli import main


def _read(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_tiny_grid_end_to_end_with_figures(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "ev"
    with ThreadPoolExecutor(max_workers=2) as pool:      # any Executor works
        rows = evaluation.evaluate(grid="tiny", out_dir=str(out), executor=pool, progress=False)
    table = _read(out / "evaluation.csv")
    assert list(table[0]) == evaluation.COLUMNS
    assert len(table) == len(rows) == 4
    for r in table:
        assert float(r["sigma_ppk"]) <= float(r["sigma_analytic"]) * (1 + 1e-12)
        # Algorithm 2 keeps eps/2 for the noise: its DP baseline is the analytic sigma at eps/2
        assert 0 <= float(r["sigma_alg2"]) <= analytic_gaussian_sigma(eps=float(r["eps"]) / 2,
                                                                        delta=float(r["delta"]))
        assert (r["sigma_classic"] == "") == (float(r["eps"]) >= 1)
        gain = float(r["gain"])
        assert gain >= 1 - 1e-12 or math.isinf(gain)
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert "gain_maps.png" in pngs and "fig4_1_pointwise_loss.png" in pngs and len(pngs) == 9
    summary = (out / "summary.md").read_text()
    assert "must be 0" in summary and all(name in summary for name in pngs)


def test_results_do_not_depend_on_the_executor(tmp_path):
    points = evaluation.grid_points("tiny", seed=3)
    with ThreadPoolExecutor(max_workers=1) as one:
        a = evaluation.run_sweep(points, executor=one, progress=False)
    b = evaluation.run_sweep(points, jobs=2, progress=False)          # default: a process pool
    strip = lambda rows: [{k: repr(v) for k, v in r.items() if k != "seconds"} for r in rows]  # noqa: E731 (nan-safe)
    assert strip(a) == strip(b)


def test_cli_without_figures(tmp_path, capsys):
    assert main(["evaluate", "--grid", "tiny", "--out", str(tmp_path), "--no-figures", "--quiet", "--jobs", "1"]) == 0
    assert (tmp_path / "evaluation.csv").exists() and not list(tmp_path.glob("*.png"))
    assert "4 grid points" in capsys.readouterr().out
    summary = (tmp_path / "summary.md").read_text().splitlines()
    assert "* none were drawn (figures=False, or --no-figures on the command line)." in summary
    assert "* " not in [line.rstrip() + " " for line in summary]          # no empty bullet
    # the results table first, the timing last and only there
    results, figures, timing = (summary.index(h) for h in ("## Results", "## Figures", "## Timing"))
    assert results < figures < timing
    table = [line for line in summary[results:figures] if line.startswith("| ")]
    assert len(table) == 1 + 4 and table[0].startswith("| n | eps | natural noise alone suffices")
    assert all("s of computation" not in line for line in summary[:timing])


def test_quick_grid_is_the_documented_size():
    assert len(evaluation.grid_points("quick")) == 81
    assert len(evaluation.grid_points("thesis")) == 560


def test_ctrl_c_stops_the_sweep_keeps_the_points_done_and_leaves_no_worker(tmp_path):
    import os
    import re
    import signal
    import subprocess
    import sys
    import time
    # a terminal's Ctrl-C: SIGINT to the whole process group, with Python's handler in place (a shell
    # starts background jobs with SIGINT ignored, so the child restores the default first)
    with subprocess.Popen([sys.executable, "-m", "ppk", "evaluate", "--grid", "quick", "--out", str(tmp_path),
                           "--no-figures"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)) as proc:
        first = proc.stderr.readline()          # the first progress line: a point is done
        assert "1/81 points" in first
        time.sleep(2)                           # a few more
        os.killpg(proc.pid, signal.SIGINT)
        start = time.monotonic()
        _, err = proc.communicate(timeout=60)
        assert time.monotonic() - start < 5
    assert proc.returncode == 130
    done = int(re.search(r"interrupted: (\d+) of 81 points", err).group(1))
    assert 1 <= done < 81
    with open(tmp_path / "evaluation.csv") as fh:
        assert sum(1 for _ in fh) == done + 1         # the header and every finished point
    with pytest.raises(ProcessLookupError):             # no worker process left behind
        os.killpg(proc.pid, 0)


def test_resume_computes_only_the_missing_points(tmp_path, capsys):
    full = evaluation.evaluate(grid="tiny", out_dir=str(tmp_path), figures=False, progress=False, jobs=1)
    lines = (tmp_path / "evaluation.csv").read_text().splitlines()
    (tmp_path / "evaluation.csv").write_text("\n".join(lines[:3]) + "\n")       # as if stopped after 2 points
    kept = evaluation.read_csv(str(tmp_path / "evaluation.csv"))
    assert main(["evaluate", "--grid", "tiny", "--out", str(tmp_path), "--no-figures", "--quiet", "--jobs", "1",
                 "--resume"]) == 0
    again = evaluation.read_csv(str(tmp_path / "evaluation.csv"))
    _same_rows(again, full)
    assert [r["seconds"] for r in again[:2]] == [r["seconds"] for r in kept]    # kept, not recomputed
    assert [r["seconds"] for r in again[2:]] != [r["seconds"] for r in full[2:]]  # the rest was computed now
    capsys.readouterr()
    # another seed is another sweep: its rows cannot be mixed in
    assert main(["evaluate", "--grid", "tiny", "--out", str(tmp_path), "--no-figures", "--quiet", "--seed", "1",
                 "--resume"]) == 2
    err = capsys.readouterr().err
    assert "cannot resume" in err and "another grid or seed" in err and "Traceback" not in err


def test_the_time_left_weighs_points_by_their_cost():
    points = evaluation.grid_points({"n": [10, 20], "known_fraction": [0.5], "p": [0.3, 0.4, 0.5],
                                     "eps": [1.0], "delta": [1e-6]})
    bar = evaluation._Progress(points, enabled=False, workers=2)
    bar.step({"n": 10, "eps": 1.0, "seconds": 1.0})
    bar.step({"n": 20, "eps": 1.0, "seconds": 9.0})
    # two cheap points (n = 10) and two dear ones (n = 20) are left: (2 * 1 + 2 * 9) / 2 workers
    assert bar._seconds_left() == pytest.approx(10.0)


def _same_rows(a, b):
    keys = [k for k in evaluation.COLUMNS if k != "seconds"]
    for ra, rb in zip(a, b):
        for k in keys:
            x, y = ra[k], rb[k]
            assert (isinstance(x, float) and math.isnan(x) and math.isnan(y)) or x == y, (k, x, y)
    assert len(a) == len(b)


@pytest.mark.filterwarnings("ignore")   # dask's own warnings (ports, deprecations) are not ours
def test_a_dask_cluster_gives_the_same_csv_as_the_process_pool(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    points = evaluation.grid_points("tiny")
    local = evaluation.run_sweep(points, jobs=2, progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  worker_dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            _same_rows(evaluation.run_sweep(points, executor=client.get_executor(), progress=False), local)
        # and from the command line, connecting to the running scheduler
        out = tmp_path / "dask"
        assert main(["evaluate", "--grid", "tiny", "--scheduler", cluster.scheduler_address, "--out", str(out),
                     "--no-figures", "--quiet"]) == 0
    with open(out / "evaluation.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [float(r["sigma_ppk"]) for r in rows] == [r["sigma_ppk"] for r in local]
    capsys.readouterr()


@pytest.mark.filterwarnings("ignore")
def test_no_scheduler_at_the_address_is_a_clear_error(tmp_path, capsys):
    pytest.importorskip("distributed")
    assert main(["evaluate", "--grid", "tiny", "--scheduler", "tcp://127.0.0.1:9", "--out", str(tmp_path),
                 "--no-figures", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--scheduler tcp://127.0.0.1:9: no dask scheduler answered" in err and "dask scheduler" in err
