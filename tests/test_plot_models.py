"""plot_privacy_curve draws a partial-knowledge frame only for curves that have one, and ``ppk delta --plot``
without matplotlib ends in one line (issue #44 item 4)."""
import sys

import numpy as np
import pytest

import ppk
from ppk.cli._main import main

pytest.importorskip("matplotlib")
EPS = np.array([0.0, 0.2, 0.4])


def _lines(ax):
    return [(line.get_label(), line.get_ydata()) for line in ax.get_lines()]


def test_a_shuffle_against_the_dp_attacker_has_no_partial_knowledge_frame():
    # with every other input known the shuffle's curve is plain DP already: it was titled "under partial
    # background knowledge" beside a "DP" baseline that was randomized response alone (flat near delta = 1)
    ax = ppk.plot_privacy_curve(ppk.ShuffledRandomizedResponse(n=200, eps0=2.0), eps=EPS)
    assert "partial" not in ax.get_title() and "DP" in ax.get_title()
    assert len(_lines(ax)) == 1


def test_a_shuffle_with_partial_knowledge_is_drawn_beside_the_shuffle_with_full_knowledge():
    q = ppk.ShuffledRandomizedResponse(n=200, eps0=2.0, known=100, p=0.5)
    ax = ppk.plot_privacy_curve(q, eps=EPS)
    assert "partial" in ax.get_title()
    (_, curve), (label, base) = _lines(ax)
    want = ppk.ShuffledRandomizedResponse(n=200, eps0=2.0).log_delta(EPS) / np.log(10)
    assert "DP" in label and np.allclose(base, want, rtol=1e-12)
    assert np.all(base >= curve) and base[0] < -0.5        # above the curve, and not local DP's ~0.88


def test_a_counting_query_keeps_its_frame():
    ax = ppk.plot_privacy_curve(ppk.CountingQuery(n=1000, known=500, p=0.5, sigma=3.0), eps=EPS)
    assert "partial" in ax.get_title() and len(_lines(ax)) == 2


def test_delta_plot_without_matplotlib_is_one_line(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)      # import matplotlib now raises ImportError
    rc = main(["delta", "--n", "1000", "--known", "500", "--p", "0.5", "--sigma", "3", "--eps", "0.1",
               "--plot", str(tmp_path / "x.png")])
    err = capsys.readouterr().err
    assert rc == 2 and err == "ppk delta: error: matplotlib is not installed (pip install 'ppk[plot]')\n"
