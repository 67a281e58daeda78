"""fig_shuffle_gap (issue #32's gap table) on a tiny grid: both files written, and in every cell of the
table the exact eps is at most the stronger clone bound (SODA 2023), which is at most the FOCS 2021 one,
which is at most eps0: both bounds are upper bounds of the exact value, the stronger clones the tighter."""
import pathlib

import pytest

pytest.importorskip("matplotlib")

from ppk.figures import fig_shuffle_gap  # noqa: E402


def _cells(table_path):
    lines = pathlib.Path(table_path).read_text(encoding="utf-8").splitlines()
    rows = [line.strip("|").split("|") for line in lines if line.startswith("| ") and not line.startswith("| n ")]
    return [[c.strip() for c in row] for row in rows]


def test_tiny_grid_table_is_ordered(tmp_path):
    png, table = fig_shuffle_gap(str(tmp_path), ns=(100, 1000), deltas=(1e-6,))
    assert png == str(tmp_path / "shuffle_gap.png") and table == str(tmp_path / "shuffle_gap_table.md")
    assert (tmp_path / "shuffle_gap.png").stat().st_size > 10_000
    cells = _cells(table)
    assert [c[0] for c in cells] == ["100", "$10^{3}$"] and {c[1] for c in cells} == {"$10^{-6}$"}
    for n, _, exact, fmt23, fmt21, ratio23, ratio21, rr in cells:
        exact, fmt23, fmt21 = float(exact), float(fmt23), float(fmt21)
        assert 0.0 < exact <= fmt23 <= fmt21 <= 4.0, n
        assert float(rr) <= 4.0
        assert float(ratio21) >= float(ratio23) >= 1.0
    # n = 1000: the shuffler amplifies, and the exact value shows it (measured 1.691006, clone 1.852907 / 3.989964)
    assert float(cells[1][2]) < 1.7


def test_bad_grid_names_the_parameter(tmp_path):
    with pytest.raises(ValueError, match="ns"):
        fig_shuffle_gap(str(tmp_path), ns=(1,))
    with pytest.raises(ValueError, match="deltas"):
        fig_shuffle_gap(str(tmp_path), ns=(100,), deltas=(0.0,))


def test_kary_table_orders_the_ends(tmp_path):
    # k-ary (docs/shuffle.md "k-ary"): standard shuffle DP's certified ends, below the clone bounds (upper ends
    # that reveal more), and the attacker with a uniform belief gets less
    from ppk.figures import fig_shuffle_gap_kary
    png, table = fig_shuffle_gap_kary(str(tmp_path), ns=(60,), categories=(3,), delta=1e-3, eps0=2.0)
    assert (tmp_path / "shuffle_gap_kary.png").stat().st_size > 10_000
    rows = [line.strip("|").split("|") for line in pathlib.Path(table).read_text(encoding="utf-8").splitlines()
            if line.startswith("| 3 ")]
    [(k, n, low, up, fmt23, fmt21, _, belief)] = [[c.strip() for c in r] for r in rows]
    assert 0.0 < float(belief) < float(low) <= float(up) <= float(fmt23) <= float(fmt21) <= 2.0
