"""The kernel's working type (docs/precision.md): a long double with fewer than 64 mantissa bits is
refused at compile and at configure time with a message naming long double, never built.

The refused configuration is simulated on x86-64 with -mlong-double-64 by .ci/other_precision.sh
(about 5 s: one syntax-only compile and three cmake configures, no build); elsewhere, or without a
compiler or cmake, the test is skipped."""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / ".ci" / "other_precision.sh"
MESSAGE = "ppk needs long double with >= 64 mantissa bits"


def test_the_built_module_has_a_64_bit_long_double() -> None:
    # numpy's longdouble is the compiler's: the module could only be built with >= 64 digits
    assert np.finfo(np.longdouble).nmant >= 63


@pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                    reason="-mlong-double-64 simulates the refused configuration on x86-64 Linux only")
@pytest.mark.skipif(shutil.which("bash") is None or shutil.which(os.environ.get("CXX", "c++")) is None,
                    reason="needs bash and a C++ compiler")
@pytest.mark.skipif(os.environ.get("PPK_CI_RUNS_OTHER_PRECISION") == "1",
                    reason=".ci/run runs .ci/other_precision.sh as a step of its own (failing CI on error)")
@pytest.mark.skipif(not SCRIPT.exists() or not (ROOT / "CMakeLists.txt").exists(),
                    reason="needs the source tree (.ci/other_precision.sh, CMakeLists.txt)")
def test_a_double_long_double_is_refused() -> None:
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")   # this python's pybind11
    run = subprocess.run(["bash", str(SCRIPT)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "FAIL" not in out, out
    assert "refuses ppk/real.hpp with -mlong-double-64" in out, out
    assert MESSAGE in out, out
    if shutil.which("cmake") is not None:
        assert "cmake -DPPK_LONG_DOUBLE_64=ON refused at configure time" in out, out
        assert "has 53" in out and "mantissa bits" in out, out
