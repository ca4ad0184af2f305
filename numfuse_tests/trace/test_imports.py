"""numfuse traces, plans and renders kernel source without numba; `import numfuse` alone imports
neither numba nor numba.cuda."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

import numfuse

ROOT = Path(__file__).resolve().parents[2]


def _numba_modules(code: str) -> list[str]:
    """The numba modules a fresh interpreter holds after running `code` (numba not blocked)."""
    probe = textwrap.dedent(code) + textwrap.dedent(
        """
        import json, sys
        print(json.dumps(sorted(m for m in sys.modules
                                if m == "numba" or m.startswith(("numba.", "numba_cuda")))))
        """
    )
    env = {k: v for k, v in os.environ.items() if k not in ("NUMFUSE_TESTS_BLOCK_NUMBA", "NUMBA_ENABLE_CUDASIM")}
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_import_numfuse_does_not_import_numba():
    assert _numba_modules("import numfuse") == []


def test_tracing_planning_and_rendering_do_not_import_numba():
    code = """
        import numpy as np
        import numfuse

        @numfuse.jit
        def f(x, y):
            z = np.exp(x) * y + 1.0
            return z, z.sum(axis=1)

        x = np.ones((4, 5), np.float32)
        f.graph(x, x)
        f.plan(x, x)
        f.explain(x, x)
        f.kernel_sources(x, x)
    """
    assert _numba_modules(code) == []


def test_this_process_has_not_imported_numba():
    """In this tier numba is blocked; nothing here needed it."""

    def f(x):
        return x - x.max(axis=1, keepdims=True)

    jf = numfuse.jit(f)
    x = np.ones((3, 4), np.float32)
    jf.explain(x)
    sources = jf.kernel_sources(x)
    assert len(sources) == 1
    assert all("from numba import cuda" in s.source for s in sources)  # text only, not imported
    assert "numba" not in sys.modules
    assert "numba.cuda" not in sys.modules
