"""The main job: ``ppk evaluate`` on the quick grid (81 points), with and without its figures.

Targets (issue "The main job"): under 20 s with the figures on 2 cores.  There is no alternative
implementation of the sweep to run beside it; the thesis did not finish its evaluation.
"""
import tempfile

from ppk import evaluation


class QuickGrid:
    timeout = 600
    number = 1
    repeat = 1

    def time_quick_grid_with_figures(self):
        with tempfile.TemporaryDirectory() as out:
            evaluation.evaluate(grid="quick", out_dir=out, progress=False)

    def time_quick_grid_csv_only(self):
        with tempfile.TemporaryDirectory() as out:
            evaluation.evaluate(grid="quick", out_dir=out, figures=False, progress=False)
