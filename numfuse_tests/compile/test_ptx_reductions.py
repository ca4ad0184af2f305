"""Issue 3's kernel templates compile to sm_90 PTX: argmax/argmin on every dtype, the NaN-skipping
combines, persistent multi-phase kernels with cached rows (rows and columns, every float width,
integer and boolean inputs, two dtypes in one cache), uncached long rows and split rows. Every
value has the IR's dtype, nothing spills, and float32 normalizations compute in float32."""

import numpy as np
import pytest

from numfuse.ir.dtypes import REAL
from numfuse.targets.cuda import CUDA
from numfuse_tests.compile.test_ptx import assert_no_spills, compile_all
from numfuse_tests.normalizations import BY_NAME

FLOATS = [d for d in REAL if d.kind == "f"]


def only_kernel(fn, *args):
    (kernel, report), = compile_all(fn, *args)
    assert ".entry" in report.ptx
    assert_no_spills(report)
    return kernel, report


@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_arg_and_nan_reductions_compile(dtype):
    """argmax and argmin (an index beside each value) on every dtype; on floats also nanmax,
    nanmin and nansum, in the same kernel."""

    def f(x):
        results = (x.argmax(axis=1), x.argmin(axis=1))
        if x.dtype.kind == "f":
            results += (np.nanmax(x, axis=1), np.nanmin(x, axis=1), np.nansum(x, axis=1))
        return results

    kernel, report = only_kernel(f, np.ones((8, 40), dtype))
    combines = {a.combine for a in kernel.nest.accumulators}
    assert {"argmax", "argmin"} <= combines
    if dtype.kind == "f":
        assert {"fmax", "fmin", "add"} <= combines
        if dtype == np.float32:
            assert report.f64_instructions == [], report.f64_instructions[:5]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_cached_softmax_compiles(dtype):
    kernel, report = only_kernel(BY_NAME["softmax"].at(-1), np.ones((8, 300), dtype))
    assert kernel.nest.cached == ("in_a",) and len(kernel.nest.phases) == 3
    if dtype != np.float64:
        assert report.f64_instructions == [], report.f64_instructions[:5]


@pytest.mark.parametrize("name, axis, shape", [
    ("softmax", 0, (300, 8)),
    ("layer_norm", -1, (8, 300)),
    ("rms_norm", -1, (8, 300)),
    ("layer_norm", 1, (4, 64, 6)),
], ids=["softmax_columns", "layer_norm", "rms_norm", "layer_norm_middle_axis"])
def test_float32_normalizations_compile_in_float32(name, axis, shape):
    pattern = BY_NAME[name]
    kernel, report = only_kernel(pattern.at(axis), *pattern.args(np.ones(shape, np.float32), axis))
    assert kernel.nest.cached
    assert report.f64_instructions == [], report.f64_instructions[:5]


@pytest.mark.parametrize("dtype", [np.int32, np.bool_], ids=lambda d: np.dtype(d).name)
def test_cached_integer_and_boolean_rows_compile(dtype):
    kernel, _ = only_kernel(lambda x: x - x.mean(axis=1, keepdims=True), np.ones((8, 64), dtype))
    assert kernel.nest.cached == ("in_a",)


def test_rows_of_two_dtypes_cached_together_compile():
    def centered_product(x, y):
        z = x * y
        return z - z.mean(axis=1, keepdims=True)

    kernel, _ = only_kernel(centered_product, np.ones((8, 64), np.float16), np.ones((8, 64), np.float64))
    assert kernel.nest.cached == ("in_b", "in_a")


LONG = CUDA.row_cache_bytes // 4 + 60


@pytest.mark.parametrize("name, axis, shape", [
    ("softmax", -1, (2, LONG)),
    ("softmax", 0, (LONG, 16)),
    ("layer_norm", -1, (2, LONG)),
], ids=["online_softmax_rows", "online_softmax_columns", "layer_norm_rows"])
def test_rows_longer_than_the_cache_compile(name, axis, shape):
    """The first points of a row on chip, the others read from memory in each phase; softmax's
    sum accumulated in the max's pass, rescaled as the maximum grows (online)."""
    pattern = BY_NAME[name]
    kernel, report = only_kernel(pattern.at(axis), *pattern.args(np.ones(shape, np.float32), axis))
    assert kernel.notes and kernel.nest.cached
    combines = {a.combine for a in kernel.nest.accumulators}
    assert ("online_sum" in combines) == (name == "softmax")
    assert report.f64_instructions == [], report.f64_instructions[:5]


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=lambda d: np.dtype(d).name)
def test_split_rows_compile(dtype):
    """Few long rows: partial results per block, published and gathered by the last block."""

    def f(x):
        return x.sum(axis=1), x.argmax(axis=1), np.nanmax(x, axis=1)

    kernel, report = only_kernel(f, np.ones((2, CUDA.split_min_reduced + 1808), dtype))
    assert kernel.nest.split
    assert report.f64_instructions == [], report.f64_instructions[:5]


def test_float32_statistics_kernel_compiles():
    """nanvar divides by its counted points as NumPy does (an intp array: float64 arithmetic,
    then float32), so only the check for the IR's types applies here."""

    def f(x):
        return (x.var(axis=1, ddof=1), x.std(axis=1), np.nanvar(x, axis=1), np.ptp(x, axis=1),
                np.count_nonzero(x, axis=1))

    kernel, _ = only_kernel(f, np.ones((8, 40), np.float32))
    assert len(kernel.nest.phases) == 2


def test_float32_var_divides_in_float32_by_count_arguments():
    """var's and mean's counts (up to 2**24) are float32 kernel arguments: the division rounds
    as NumPy's float64 one does, and the kernel has no float64 instruction."""

    def f(x):
        return x.var(axis=1, ddof=1), x.std(axis=1), x.mean(axis=1)

    kernel, report = only_kernel(f, np.ones((8, 40), np.float32))
    assert [(c.dtype, c.value) for c in kernel.nest.counts] == [(np.float32, 40.0), (np.float32, 39.0)]
    assert report.f64_instructions == [], report.f64_instructions[:5]
