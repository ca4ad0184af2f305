"""The kernels around library calls, and the fused sums of products that replace cheap matrix
products, compile to sm_90 PTX with the IR's dtypes (float32 products stay float32)."""

import numpy as np
import pytest

from numfuse_tests.compile.test_ptx import assert_no_spills, compile_all

F32 = np.float32


def ones(*shape, dtype=F32):
    return np.ones(shape, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int8, np.uint16, np.bool_])
@pytest.mark.parametrize("fn, shapes", [
    (lambda a, v: a @ v, ((64, 32), (32,))),  # a row reduction
    (lambda v, a: v @ a, ((32,), (32, 16))),  # a column reduction
    (lambda a, b: a @ b, ((32,), (32,))),  # a full reduction
    (lambda a, b: a @ b, ((100, 3, 3), (100, 3, 3))),  # tiny matrices
    (lambda a, b: np.einsum("ij,kj->ik", a, b), ((40, 2), (30, 2))),
])
def test_fused_products_compile(fn, shapes, dtype):
    args = [ones(*s, dtype=dtype) for s in shapes]
    reports = compile_all(fn, *args)
    assert len(reports) == 1
    for kernel, report in reports:
        assert_no_spills(report)
        if dtype == np.float32:
            assert report.f64_instructions == [], report.f64_instructions[:5]


@pytest.mark.parametrize("fn, args", [
    (lambda x, w, b: np.tanh(x @ w + b), (ones(256, 128), ones(128, 64), ones(64))),
    (lambda x, w: (np.exp(x) @ w).sum(axis=1), (ones(256, 128), ones(128, 64))),
    (lambda x: np.cumsum(x * 2.0, axis=1) / x.sum(axis=1, keepdims=True), (ones(64, 32),)),
    (lambda a, b: np.linalg.solve(a * 2.0, b) + 1.0, (ones(8, 8), ones(8))),
    (lambda x: np.abs(np.fft.rfft(x - x.mean())), (ones(64),)),
])
def test_kernels_around_library_calls_compile(fn, args):
    reports = compile_all(fn, *args)
    assert reports
    for _, report in reports:
        assert ".entry" in report.ptx
        assert_no_spills(report)


@pytest.mark.parametrize("index_dtype", [np.int64, np.int32, np.uint8])
@pytest.mark.parametrize("fn, shapes", [
    (lambda x, i: x[i] * 2.0, ((64, 32), (10,))),
    (lambda x, i: x[:, i].sum(axis=1), ((64, 32), (10,))),
    (lambda x, i: x[i, i], ((64, 64), (10,))),
    (lambda x, i: np.take_along_axis(x, i, axis=1), ((64, 32), (64, 3))),
])
def test_gathers_compile(fn, shapes, index_dtype):
    args = [ones(*shapes[0]), np.zeros(shapes[1], index_dtype)]
    for _, report in compile_all(fn, *args):
        assert ".entry" in report.ptx
        assert report.f64_instructions == [], report.f64_instructions[:5]
        assert_no_spills(report)
