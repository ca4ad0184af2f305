"""The differential program fuzzer (numfuse_tests/fuzz) in CI: random NumPy programs through
numfuse and NumPy, planted bugs that it must catch and shrink, and the input domains that the
random programs stay out of, each tested on its own.

`python -m numfuse_tests.fuzz --programs N` runs any number of programs outside pytest.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import numfuse
from numfuse.targets.cuda.device import backend
from numfuse_tests.fuzz import known_bugs
from numfuse_tests.fuzz.compare import compare
from numfuse_tests.fuzz.numerics import ErrorModel
from numfuse_tests.fuzz.runner import fuzz
from numfuse_tests.helpers import check, planning_target

ROOT = Path(__file__).resolve().parents[2]

# 6 x 60 = 360 programs (about 40 s on the simulator); in chunks so that pytest-xdist spreads
# them over workers where each new kernel is compiled by NVVM (a GPU run). The CPU target
# compiles each program's functions with LLVM (about 1.5 s a program on two cores): one chunk
# of 60 in CI (`python -m numfuse_tests.fuzz --cpu --programs 1000` runs more).
CHUNKS, PROGRAMS_PER_CHUNK, SEED = (1 if planning_target().name == "cpu" else 6), 60, 20250


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_random_programs_match_numpy(chunk):
    if planning_target().name == "cpu":
        name = "CPU target"
    else:
        name = "CUDA simulator" if backend().simulated else "GPU"
    # No target fuses a multiply and an add where NumPy does not (a GPU's products are mul.rn:
    # targets/cuda/products.py), so a GPU is held to NumPy's roundings too.
    summary = fuzz(PROGRAMS_PER_CHUNK, SEED + chunk, ErrorModel(), name)
    print(summary.line())
    assert summary.mismatches == 0, "\n".join(summary.problems) + "\n\n" + str(summary.repro)
    assert summary.programs == PROGRAMS_PER_CHUNK


# -- planted bugs ------------------------------------------------------------------------------

# Each patches numfuse in a subprocess: a wrong identity (every sum starts from 1), and a wrong
# NaN rule (np.maximum, and so max reductions and clip, ignore NaN as np.fmax does). With its
# seed the fuzzer meets each within the first programs (the op mix decides which seed does).
SEEDS = {"sum identity": 1, "maximum NaN rule": 3}
PLANTED = {
    "sum identity": """
import numpy as np
import numfuse.ir.ops
_identity = numfuse.ir.ops.ReduceOp.identity
def _planted(self, dtype):
    return np.dtype(dtype).type(1) if self.combine == "add" else _identity(self, dtype)
numfuse.ir.ops.ReduceOp.identity = _planted
""",
    "maximum NaN rule": """
import numfuse.ir.ops, numfuse.ir.scalar_impl
numfuse.ir.ops.ELEMENTWISE["maximum"].impls["f"] = numfuse.ir.scalar_impl.fmax
""",
}


def _python(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", NUMFUSE_CACHE_DIR=str(tmp_path / "cache"))
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300, check=False)


@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_a_planted_bug_is_caught_shrunk_and_reproduced(bug, tmp_path):
    plant = PLANTED[bug]
    run = _python(plant + "import sys\nfrom numfuse_tests.fuzz.__main__ import main\n"
                  f"sys.exit(main(['--programs', '200', '--seed', '{SEEDS[bug]}']))", tmp_path)
    out = run.stdout
    assert run.returncode == 1, out + run.stderr
    assert re.search(r"numfuse fuzz: \d+ programs, 1 mismatches", out), out
    snippet = out.split("----\n", 1)[1].rsplit("numfuse fuzz:", 1)[0]
    body = snippet.split("def f(", 1)[1].split("\n\n", 1)[0]
    assert len(set(re.findall(r"^    (v\d+) ", body, re.MULTILINE))) <= 3, f"not shrunk:\n{snippet}"
    repro = tmp_path / "repro.py"
    repro.write_text(snippet)
    # The printed snippet runs on its own: it fails with the bug and passes without it.
    with_bug = _python(plant + f"exec(open({str(repro)!r}).read())", tmp_path)
    assert with_bug.returncode != 0 and "AssertionError" in with_bug.stderr, with_bug.stdout + with_bug.stderr
    without = _python(f"exec(open({str(repro)!r}).read())", tmp_path)
    assert without.returncode == 0 and "numfuse and NumPy agree" in without.stdout, without.stdout + without.stderr


# -- the domains random programs stay out of ------------------------------------------------------

# Arguments outside each function's domain, where NumPy and IEEE arithmetic give NaN or an
# infinity (the simulator computes with NumPy, a GPU with CUDA's libm, both IEEE). The random
# programs avoid them, where NaN would swamp every later value.
EDGES = [-2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, np.inf, -np.inf, np.nan, 1e30]


def out_of_domain(x, p):
    return (np.log(x), np.log2(x), np.log10(x), np.log1p(x - 1), np.sqrt(x), np.arcsin(x),
            np.arccos(x), np.arccosh(x), np.arctanh(x), np.power(x, p), x ** 0.5, np.exp(x * 1e3),
            np.exp2(x * 1e3), np.expm1(x * 1e3), np.sinh(x * 1e3), np.cosh(x * 1e3), 1 / x)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_functions_outside_their_domains(dtype):
    x = np.array(EDGES, dtype=dtype)
    # np.power(-inf, 0.5) is inf in C's pow (a GPU's, the CPU target's, the simulator's since
    # simmath._c_pow) and in NumPy's scalar loop, NaN in NumPy's SIMD loop of some lengths: so
    # -inf is raised to 3 here.
    p = np.array([0.5, -1.5, 2.0, -1.0, 0.5, 1.5, 3.0, -2.0, 0.5, 3.0, 2.0, 0.5], dtype=dtype)
    check(out_of_domain, x, p)


# -- known bugs --------------------------------------------------------------------------------------

# The repro of each exclusion in numfuse_tests/fuzz/known_bugs.py.
KNOWN_BUGS: dict = {}


@pytest.mark.parametrize("bug", sorted(KNOWN_BUGS))
def test_known_bugs_are_still_there(bug):
    """An exclusion stays only while its bug does. When this fails the bug is fixed: delete its
    predicate in known_bugs.py (or the workaround named above) and its case here."""
    fn, args = KNOWN_BUGS[bug]
    assert bug.startswith("simulator") or hasattr(known_bugs, bug)
    with np.errstate(all="ignore"):
        expected = fn(*args)
    try:
        got = numfuse.jit(fn)(*args)
    except Exception:  # noqa: BLE001 - numfuse failing where NumPy runs is the bug
        return
    assert compare(got, expected, [0.0] * len(expected)), f"{bug} is fixed: remove its exclusion"

