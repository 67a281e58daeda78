"""Plots of composed curves (issue #42 item 4): ``plot_privacy_curve`` of a PLD or an Accountant draws the
certified upper end with no baseline, ``plot_tradeoff`` draws the certified power, and ``ppk compose --plot``
writes the composed curve (bad paths: one line naming --plot, before any work)."""
import math

import numpy as np
import pytest

pytest.importorskip("matplotlib")
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import ppk  # noqa: E402
from ppk.cli import main  # noqa: E402
from ppk.plotting import plot_privacy_curve  # noqa: E402
from ppk.tradeoff import plot_tradeoff, power_bracket  # noqa: E402

PLD = ppk.PrivacyLossDistribution


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _gauss():
    return PLD.from_gaussian(sigma=2.0, value_discretization_interval=1e-2)


def test_pld_and_accountant_are_drawn_at_the_certified_upper_end():
    grid = np.linspace(0.0, 3.0, 7)
    pld = _gauss()
    acc = ppk.Accountant(value_discretization_interval=1e-2).add_gaussian(sigma=2.0, times=2)
    ax = plot_privacy_curve([pld, acc], eps=grid)
    assert ax.get_title() == "Privacy curve of the composition (certified upper end)"
    lines = ax.get_lines()
    assert len(lines) == 2                      # no baseline for a composition
    for line, obj in zip(lines, (pld, acc.pld())):
        np.testing.assert_array_equal(line.get_ydata(), obj.log_delta_bracket(grid)[1] / math.log(10))
    assert "Accountant: 1 release(s)" in ax.get_legend().get_texts()[1].get_text()
    # next to a query with natural noise: its baseline stays, the title is the query's
    q = ppk.CountingQuery(n=1001, known=0, p=0.5, sigma=2.0)
    ax = plot_privacy_curve([q, pld], eps=grid)
    assert len(ax.get_lines()) == 3 and "partial background knowledge" in ax.get_title()
    with pytest.raises(TypeError, match="queries"):
        plot_privacy_curve([pld, object()])


def test_plot_tradeoff_draws_the_bracket(tmp_path):
    pld = _gauss()
    path = tmp_path / "t.png"
    ax = plot_tradeoff(pld, alpha_min=1e-9, points=7, label="mu = 0.5", path=str(path))
    assert path.stat().st_size > 1000
    upper, chance = ax.get_lines()
    alpha = upper.get_xdata()
    assert alpha[0] == 1e-9 and alpha[-1] == 1.0
    np.testing.assert_array_equal(upper.get_ydata(), power_bracket(pld, alpha)[1])
    np.testing.assert_array_equal(chance.get_ydata(), alpha)
    plot_tradeoff(pld, alpha_min=1e-9, points=7, ax=ax)     # into the same Axes: no second chance line
    assert len(ax.get_lines()) == 3


def test_compose_plot(tmp_path, capsys):
    path = tmp_path / "c.png"
    assert main(["compose", "--gaussian", "2x4", "--interval", "1e-2", "--plot", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"plot: {path}" in out and path.stat().st_size > 1000


@pytest.mark.parametrize("plot, words", [("nowhere/c.png", ["--plot", "does not exist"]),
                                         ("c.pdf", ["--plot", ".png"])])
def test_compose_plot_bad_path_is_one_line(plot, words, tmp_path, capsys):
    assert main(["compose", "--gaussian", "2", "--plot", str(tmp_path / plot)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ppk compose: error: ") and err.count("\n") == 1
    for w in words:
        assert w in err


def test_an_accountant_of_one_query_is_plotted_as_it_reports():
    """A plan of one bracketed query answers from the query's own bracket, so its plot draws that curve (not the
    PLD's, which is flat at its overflow mass deep in the tail)."""
    from ppk.plotting import _as_plotted
    h = ppk.HistogramQuery(n=300, known=30, probs=[0.3, 0.3, 0.4], sigma=1.0)
    assert _as_plotted(ppk.Accountant().add(h)) is h
    assert type(_as_plotted(ppk.Accountant().add(h).add_gaussian(sigma=3.0))).__name__ == "_Composed"
