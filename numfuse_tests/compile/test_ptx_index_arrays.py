"""Kernels that compute arrays made from their indices (np.arange, np.eye, np.mgrid: the Iota
statement, the point's own index) compile to sm_90 PTX in every schedule, with the IR's dtypes."""

import numpy as np
import pytest

from numfuse_tests.compile.test_ptx import assert_no_spills, compile_all

F32 = np.float32


@pytest.mark.parametrize("fn, shape", [
    (lambda x: x + np.arange(x.size, dtype=F32), (5000,)),  # flat, unrolled
    (lambda x: x * np.eye(*x.shape, k=1, dtype=F32), (30, 40)),  # 2d
    (lambda x: (x * np.arange(x.shape[1], dtype=F32)).sum(axis=1), (30, 400)),  # rows
    (lambda x: (x * np.arange(x.shape[0], dtype=F32)[:, None]).max(axis=0), (400, 40)),  # columns
    (lambda x: np.argmax(x + np.linspace(0, 1, x.size, dtype=F32)), (1 << 16,)),  # split
    (lambda x: x / (x + np.arange(x.shape[1], dtype=F32)).sum(axis=1, keepdims=True), (30, 40)),  # phases
    (lambda x: x * np.mgrid[0:30, 0:40][1] + np.tri(30, 40, dtype=F32), (30, 40)),
    (lambda x: np.concatenate([x, np.arange(8, dtype=F32)]), (20,)),  # inside a select's branch
])
def test_index_array_kernels_compile(fn, shape):
    reports = compile_all(fn, np.ones(shape, F32))
    assert len(reports) == 1
    for _, report in reports:
        assert ".entry" in report.ptx
        assert_no_spills(report)
