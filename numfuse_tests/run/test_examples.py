"""Every example under examples/ runs as a user would run it, in a fresh process, and reports
that its results match NumPy's (exit status 0); on the simulator with small sizes, on a GPU with
large ones."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SCRIPTS = sorted(p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("_"))


def test_every_example_is_listed():
    expected = {"quickstart.py", "black_scholes.py", "softmax_layernorm.py", "kde.py", "cupy_interop.py", "stencil.py"}
    assert expected <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_example_runs_and_matches_numpy(script, tmp_path):
    env = dict(os.environ, NUMFUSE_CACHE_DIR=str(tmp_path))
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "same as NumPy: True" in done.stdout, done.stdout[-3000:]
