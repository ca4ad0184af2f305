"""One compiled kernel serves every size of the same rank, dtypes and layout: sizes (and the
counts NumPy derives from them) are kernel arguments, so a new batch size generates the same
kernel code, which the runtime's kernel cache compiles once (it keys dispatchers on
KernelSource.code_digest). Choices that do depend on sizes (an axis of length 1, a split row,
the online softmax, a count beyond float32's exact integers) are named in `explain`."""

import numpy as np
import pytest

import numfuse
from benchmarks.shape_reuse import BATCHES, CASES, ROW, ROWS, measure, shapes
from numfuse.targets.cuda.codegen import kernel_code
from numfuse.targets.cuda import CUDA


VARIED = [(c, "batch") for c in CASES] + [(c, "row") for c in CASES if c.vary_rows]


@pytest.mark.parametrize("case, varied", VARIED, ids=lambda v: getattr(v, "name", v))
def test_twenty_sizes_generate_no_more_codes_than_the_plan_has_kernels(case, varied):
    result = measure(case, varied)
    assert result.sizes == 20
    assert result.codes <= result.kernels, result
    assert result.compilations <= result.kernels, result


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_each_kernel_has_one_code_at_every_batch_size(case):
    """Kernel by kernel: the same number of kernels, and kernel i's code the same at each size."""
    jf = numfuse.jit(case.fn)
    codes = {tuple(s.code_digest for s in jf.kernel_sources(*args)) for args in shapes(case, "batch")}
    assert len(codes) == 1, codes


def test_the_sizes_are_the_intended_ones():
    assert len(set(BATCHES)) == 20 and min(BATCHES) > 1
    assert len(set(ROWS)) == 20 and max(ROWS) * 4 <= CUDA.row_cache_bytes
    assert max(BATCHES) < CUDA.split_min_reduced and ROW >= CUDA.split_max_rows  # no column sum splits


def test_counts_are_kernel_arguments_not_literals():
    """mean's count is passed in the dtype it divides in; the code names it, never its value."""
    jf = numfuse.jit(lambda x: x.mean(axis=0))
    first, second = (jf.kernel_sources(np.zeros((b, 8), np.float32))[0] for b in (3, 1000))
    assert first.code_digest == second.code_digest
    assert [(p.name, p.value, p.dtype) for p in first.params if p.kind == "count"] == [("count0", 3.0, np.float32)]
    assert [(p.name, p.value) for p in second.params if p.kind == "count"] == [("count0", 1000.0)]
    assert "acc0 / count0" in kernel_code(first.source)


def test_two_counts_equal_at_one_shape_stay_two_arguments():
    """A square array's row and column counts are equal, yet the code must be the one a
    rectangular array gets."""
    jf = numfuse.jit(lambda x: x.mean(axis=0)[None, :] - x.mean(axis=1)[:, None])
    square = [s.code_digest for s in jf.kernel_sources(np.zeros((6, 6), np.float32))]
    rectangle = [s.code_digest for s in jf.kernel_sources(np.zeros((6, 9), np.float32))]
    assert square == rectangle


def test_a_float32_mean_beyond_two_to_the_24_divides_in_float64_as_numpy_does():
    """NumPy divides mean's sum by an intp count in float64; float32(count) would round a count
    over 2**24. Below it, dividing in float32 rounds the same."""
    n = 2**24 + 3
    x = np.broadcast_to(np.float32(1.5), (n,))  # a view: no memory
    graph = str(numfuse.jit(lambda x: x.mean()).graph(x))
    assert f"divide c count({float(n)!r}):f64" in graph and "convert[dtype=f32] d" in graph
    small = str(numfuse.jit(lambda x: x.mean()).graph(np.zeros(2**24, np.float32)[:100]))
    assert "divide b count(100.0):f32" in small
    text = numfuse.jit(lambda x: x.mean(axis=1)).explain(np.zeros((4, 100), np.float32))
    assert "count0 in float32 (exact up to 2**24" in text


def _compiled_for(text: str) -> list[str]:
    return [line.split("compiled for: ", 1)[1] for line in text.splitlines() if "compiled for: " in line]


def test_explain_names_the_size_choices_that_shape_the_code():
    row_sum = numfuse.jit(lambda x: x.sum(axis=1))
    split, = _compiled_for(row_sum.explain(np.zeros((2, CUDA.split_min_reduced), np.float32)))
    assert split == f"split: yes (2 row(s), fewer than {CUDA.split_max_rows}, of {CUDA.split_min_reduced} points, {CUDA.split_min_reduced} or more)"
    many, = _compiled_for(row_sum.explain(np.zeros((CUDA.split_max_rows, CUDA.split_min_reduced), np.float32)))
    assert many.startswith(f"split: no ({CUDA.split_max_rows} rows, {CUDA.split_max_rows} or more")
    empty, = _compiled_for(row_sum.explain(np.zeros((0, 100), np.float32)))
    assert empty.startswith("an empty axis: no output points, so the kernel is never launched")
    assert _compiled_for(row_sum.explain(np.zeros((5, 0), np.float32)))[0].startswith("split: no")
    one_row, = _compiled_for(row_sum.explain(np.zeros((1, 100), np.float32)))
    assert one_row.startswith("axes of length 1: 0 (NumPy broadcasts them")
    pointwise, = _compiled_for(numfuse.jit(lambda x: x * 2).explain(np.zeros((3, 4), np.float32)))
    assert pointwise == "axes 0,1 collapsed into one loop (contiguous in every buffer)"
    softmax = numfuse.jit(CASES[2].fn)
    fits, = _compiled_for(softmax.explain(np.zeros((2, 100), np.float32)))
    assert fits.startswith("online softmax: no (a row of 400 bytes fits the")
    long, = _compiled_for(softmax.explain(np.zeros((2, CUDA.row_cache_bytes // 4 + 1), np.float32)))
    assert long.startswith(f"online softmax: yes (a row of {CUDA.row_cache_bytes + 4} bytes exceeds")
    last_row_text = numfuse.jit(lambda x: x[-1] * 2).explain(np.zeros((5, 4), np.float32))
    assert _compiled_for(last_row_text) == [  # the row's offset is an argument
        "indexed at their own rank: in_a (strided, or read at computed points)"]
    assert "sizes as arguments: off0=4" in last_row_text
    steps, = _compiled_for(numfuse.jit(lambda x: x[::2, 1:] * 2).explain(np.zeros((5, 4), np.float32)))
    assert "steps and reshaped sizes in indices: in_a[2*i0, i1 + off0] (part of the code" in steps


def test_explain_lists_the_sizes_passed_as_arguments():
    text = numfuse.jit(lambda x: x.mean(axis=1)).explain(np.zeros((4, 100), np.float32))
    assert "sizes as arguments: count0=100.0, no0=4, nr0=100, nrows=4, nred=100" in text


def test_a_batch_of_one_is_another_kernel_and_explain_says_why():
    jf = numfuse.jit(CASES[2].fn)
    one = jf.kernel_sources(np.zeros((1, ROW), np.float32))[0]
    many = jf.kernel_sources(np.zeros((2, ROW), np.float32))[0]
    assert one.code_digest != many.code_digest
    assert "axes of length 1: 0" in jf.explain(np.zeros((1, ROW), np.float32))
