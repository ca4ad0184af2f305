"""Fused scans (np.cumsum and friends: a running accumulator read at each point) compile to
sm_90 PTX in each schedule, with the IR's dtypes: float32 scans stay float32."""

import numpy as np
import pytest

from numfuse_tests.compile.test_ptx import assert_no_spills, compile_all

F32 = np.float32


@pytest.mark.parametrize("fn, shape", [
    (lambda x: np.cumsum(x * 2.0, axis=1) - 1.0, (300, 64)),  # rows
    (lambda x: np.cumsum(x, axis=0) * x, (64, 300)),  # columns
    (lambda x: np.cumprod(1.0 + x, axis=-1), (30, 40)),
    (lambda x: np.cumsum(x - x.max(axis=1, keepdims=True), axis=1), (30, 40)),  # a second pass
    (lambda x: (np.cumsum(x, axis=1), x.sum(axis=1)), (30, 40)),  # beside a reduction
    (lambda x: np.nancumsum(np.where(x > 0.5, np.nan, x)), (1000,)),  # flattened, short
])
def test_scan_kernels_compile(fn, shape):
    reports = compile_all(fn, np.ones(shape, F32))
    assert len(reports) == 1
    for _, report in reports:
        assert ".entry" in report.ptx
        assert report.f64_instructions == [], report.f64_instructions[:5]
        assert_no_spills(report)


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint16, np.bool_, np.float64])
def test_integer_and_float64_scans_compile(dtype):
    for _, report in compile_all(lambda x: np.cumsum(x, axis=1) + np.cumprod(x, axis=0), np.ones((20, 30), dtype)):
        assert ".entry" in report.ptx
