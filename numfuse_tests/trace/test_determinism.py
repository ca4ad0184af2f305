"""The same function and signature give the same kernel code in every trace and every process.

The disk cache and the kernel cache key compiled kernels on the code's digest: code that varied
from one process to the next (an order taken from a set of Vars, which hash by identity, or of
strings, whose hashes change with PYTHONHASHSEED) would compile again in each new process."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

import numfuse

ROOT = Path(__file__).resolve().parents[2]


def four_row_reductions_read_by_a_later_kernel(x):
    # The four results are loaded by the second kernel, so the first stores all four: the
    # order of those stores (and so of its parameters) once followed a set of Vars.
    s, m, n, p = x.sum(axis=1), x.max(axis=1), x.min(axis=1), x.prod(axis=1)
    return s[:, None] * m[None, :] + n[:, None] - p[None, :]


def test_retracing_gives_the_same_code():
    x = np.ones((5, 7), np.float32)
    codes = set()
    for _ in range(20):  # each trace makes new Vars at new addresses
        sources = numfuse.jit(four_row_reductions_read_by_a_later_kernel).kernel_sources(x)
        codes.add(tuple(s.source for s in sources))
    assert len(codes) == 1, [[p.name for p in s.params] for s in sources]


# Kernel sources of the benchmark workloads and of a sample of fuzzer programs, hashed.
_PROBE = """
    import hashlib, os, warnings
    warnings.simplefilter("ignore")
    import numfuse
    from benchmarks.suite import SIZES
    from benchmarks.workloads import WORKLOADS
    from numfuse_tests.trace.test_fuzz_generator import generated
    junk = [object() for _ in range(int(os.environ["JUNK"]))]  # other addresses for new objects
    digest = hashlib.sha256()
    calls = [(w.fn, w.make(SIZES["small"], None, 0)) for w in WORKLOADS]
    calls += [(p.function(), p.arguments()) for p in generated(120, 11)]
    kernels = planned = 0
    for fn, args in calls:
        try:
            sources = numfuse.jit(fn).kernel_sources(*args)
        except Exception as error:
            digest.update(type(error).__name__.encode())
            continue
        planned += 1
        for s in sources:
            digest.update(s.source.encode())
            kernels += 1
    print(digest.hexdigest(), planned, kernels, len(calls))
"""


def _digest(hash_seed: str, junk: int) -> str:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env.update(PYTHONHASHSEED=hash_seed, JUNK=str(junk), PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(_PROBE)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


def test_two_processes_generate_the_same_code():
    first, second = _digest("1", 0), _digest("2", 4321)
    _, planned, kernels, calls = first.split()
    # The code compared is that of most of the programs: a probe that planned none (every call
    # raising) would compare only exception names.
    assert int(planned) >= 0.75 * int(calls) and int(kernels) >= int(planned), first  # (114 of 136 today)
    assert first == second
