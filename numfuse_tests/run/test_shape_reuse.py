"""Calls at 20 sizes compile no more kernels than the plan has: the runtime's kernel cache
(one dispatcher per kernel code, targets/cuda/kernel_cache.py) is counted while each function runs
on 20 batch sizes, and every result is NumPy's."""

import numpy as np
import pytest

import numfuse
from benchmarks.shape_reuse import CASES
from numfuse.targets.cuda import kernel_cache
from numfuse_tests.helpers import assert_same

# Small enough for the simulator, still 20 different sizes (none of them 1).
BATCHES = tuple(range(2, 22))
ROW = 8


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_twenty_batch_sizes_compile_the_plans_kernels_once(case, monkeypatch):
    compiled: dict = {}
    monkeypatch.setattr(kernel_cache, "_dispatchers", compiled)  # count this test's compilations
    jf = numfuse.jit(case.fn)
    rng = np.random.default_rng(3)
    kernels = 0
    for batch in BATCHES:
        args = tuple(rng.standard_normal(a.shape).astype(a.dtype) for a in case.make(batch, ROW))
        assert_same(jf(*args), case.fn(*args), reduced=max(batch, ROW))
        kernels = max(kernels, len(jf.plan(*args).kernels))
    assert 1 <= len(compiled) <= kernels, (len(compiled), kernels)
