"""The documentation builds without a warning and the package type-checks (both run in CI)."""
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_sphinx_site_builds_with_warnings_as_errors(tmp_path):
    pytest.importorskip("sphinx")
    run = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                          str(ROOT / "docs"), str(tmp_path / "html")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-4000:]
    assert (tmp_path / "html" / "api.html").read_text().count("ppk.CountingQuery") > 0


def test_mypy_is_clean_on_the_package():
    pytest.importorskip("mypy")
    run = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-4000:]
