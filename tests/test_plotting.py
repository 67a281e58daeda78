"""ppk.plot_privacy_curve and `ppk curve --plot`: what is drawn is the curve (from log_delta)."""
import math

import numpy as np
import pytest

import ppk
from ppk import cli, noise

pytest.importorskip("matplotlib")


def test_the_lines_are_log10_delta_and_the_dp_baseline(tmp_path):
    q = ppk.CountingQuery(n=100_000, known=50_000, p=0.5, sigma=3.0)
    eps = np.linspace(0, 1.0, 21)
    ax = ppk.plot_privacy_curve(q, eps=eps, path=str(tmp_path / "c.png"))
    curve, base = ax.get_lines()[:2]
    assert np.allclose(curve.get_ydata(), q.log_delta(eps) / math.log(10))      # down to 1e-2400: log10
    assert curve.get_ydata().min() < -308
    assert np.allclose(base.get_ydata(), ppk.baselines.analytic_gaussian_log_delta(sigma=3.0, eps=eps) / math.log(10))
    assert (tmp_path / "c.png").stat().st_size > 10_000


def test_several_queries_and_laws_share_one_axis():
    qs = [ppk.CountingQuery(n=1000, known=0, p=0.3, sigma=1.0),
          ppk.NoisyQuery(natural=noise.Binomial(999, 0.3), added=noise.DiscreteLaplace(2.0))]
    ax = ppk.plot_privacy_curve(qs, eps=[0.0, 0.2, 0.4], labels=["Gaussian", "discrete Laplace"])
    assert len(ax.get_lines()) == 4
    assert [t.get_text() for t in ax.get_legend().get_texts()][0] == "Gaussian"


@pytest.mark.parametrize("args, match", [(dict(queries=[]), "queries"), (dict(queries=3.0), "queries"),
                                         (dict(labels=["a", "b"]), "labels")])
def test_bad_input_names_the_parameter(args, match):
    kwargs = dict(queries=ppk.CountingQuery(n=100, known=0, p=0.5, sigma=1.0), eps=[0.0, 0.1])
    kwargs.update(args)
    with pytest.raises((TypeError, ValueError), match=match):
        ppk.plot_privacy_curve(kwargs.pop("queries"), **kwargs)


def test_cli_curve_draws_the_plot(tmp_path, capsys):
    path = tmp_path / "curve.png"
    assert cli.main(["curve", "--n", "10000", "--known", "5000", "--eps", "0", "0.1", "--plot", str(path)]) == 0
    assert path.stat().st_size > 10_000
    assert "plot:" in capsys.readouterr().out
