"""The plan file (ppk.plan_file): what it means, and every mistake refused with the file and the key."""
from __future__ import annotations

import math

import pytest

from ppk.plan_file import read_plan
from ppk.table_plan import TablePlan

PLAN = """
known = 2000
eps = 0.5
delta = 1e-6
min_prob = 0.02

[columns]
smoker = ["0", "1"]
region = ["north", "south", "east"]

[[statistics]]
name = "smokers"
count = { smoker = "1" }

[[statistics]]
name = "regions"
histogram = "region"

[[statistics]]
name = "smoking by region"
crosstab = ["smoker", "region"]
noise = 2.0
"""


def _write(tmp_path, text):
    path = tmp_path / "plan.toml"
    path.write_text(text)
    return str(path)


def test_a_plan_file_is_a_table_plan(tmp_path):
    pf = read_plan(_write(tmp_path, PLAN))
    assert pf.column_names == ("smoker", "region") and len(pf.categories) == 6
    assert [s.labels for s in pf.statistics[:2]] == [("smoker=1",), ("region=north", "region=south", "region=east")]
    counts = pf.counts(sigma=3.0)
    assert len(counts) == 1 + 3 + 6
    assert counts[0] == ((("1", "north"), ("1", "south"), ("1", "east")), 3.0)
    assert counts[-1] == ((("1", "east"),), 6.0)   # the crosstab's noise is 2 x the others'
    plan = pf.table_plan(n=10_000, sigma=3.0)
    floor = TablePlan.worst_case(n=10_000, known=2000, categories=pf.categories, counts=counts, min_prob=0.02)
    assert plan.delta_upper(0.5) == floor.delta_upper(0.5)


def test_stated_marginals_make_a_product_belief(tmp_path):
    text = PLAN.replace("min_prob = 0.02", "").replace("[columns]", """[belief.smoker]
"0" = 0.8
"1" = 0.2
[belief.region]
north = 0.5
south = 0.3
east = 0.2

[columns]""")
    plan = read_plan(_write(tmp_path, text)).table_plan(n=10_000)
    probs = dict(zip(plan.categories, plan.probs))
    assert probs[("1", "east")] == pytest.approx(0.2 * 0.2, rel=1e-12)
    assert math.fsum(plan.probs) == pytest.approx(1.0)


@pytest.mark.parametrize("edit, match", [
    (("known = 2000", "known = -1"), "known must be"),
    (("eps = 0.5", "eps = 0"), "eps must be"),
    (("delta = 1e-6", "delta = 2"), "delta must be"),
    (("min_prob = 0.02", "min_prob = 0.5"), "min_prob must be"),
    (("min_prob = 0.02", ""), "say what the attacker believes"),
    (("known = 2000", "known = 2000\nsurprise = 1"), "unknown keys"),
    (('count = { smoker = "1" }', 'count = { smoker = "2" }'), "not a value of column"),
    (('count = { smoker = "1" }', 'count = { smoking = "1" }'), "statistics\\[0\\].count"),
    (('histogram = "region"', 'histogram = "regions"'), "statistics\\[1\\].histogram"),
    (('histogram = "region"', 'histogram = "region"\ncount = { smoker = "1" }'), "exactly one of"),
    (("noise = 2.0", "noise = 0"), "noise must be"),
    (('name = "regions"', 'name = "smokers"'), "no other statistic has"),
    (('smoker = ["0", "1"]', 'smoker = ["0", "0"]'), "lists a value twice"),
    (('smoker = ["0", "1"]', 'smoker = [0, 1]'), "as strings"),
    (("[[statistics]]", "[[statistic]]"), "unknown keys"),
    (("eps = 0.5", "eps = "), "not a readable TOML"),
])
def test_every_mistake_names_the_file_and_the_key(tmp_path, edit, match):
    old, new = edit
    assert old in PLAN
    path = _write(tmp_path, PLAN.replace(old, new, 1))
    with pytest.raises(ValueError, match=match) as info:
        read_plan(path)
    assert path in str(info.value)


def test_a_missing_file(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        read_plan(str(tmp_path / "nothing.toml"))
