"""Targets: choosing one, what planning asks of it, the CPU target's rendered code (without
numba). The layering of the stages and targets: test_layout.py."""

import ast
import os
import warnings

import numpy as np
import pytest

import numfuse
from numfuse import targets
from numfuse.errors import TargetWarning
from numfuse.targets.cpu import CPU
from numfuse.targets.cuda import CUDA
from numfuse_tests.programs import PROGRAMS


def test_an_unknown_target_is_refused_naming_the_choices(monkeypatch):
    with pytest.raises(ValueError, match="auto, cuda, cpu"):
        numfuse.jit(lambda x: x, target="tpu")
    monkeypatch.setenv("NUMFUSE_TARGET", "gpu")
    with pytest.raises(ValueError, match="NUMFUSE_TARGET 'gpu'"):
        numfuse.jit(lambda x: x)


def test_auto_is_cuda_for_device_arrays_or_a_gpu_else_the_cpu_said_once():
    assert targets.choose("auto", device_arguments=True) is CUDA
    assert targets.choose("cpu", device_arguments=False) is CPU
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = targets.choose("auto", device_arguments=False)
        second = targets.choose("auto", device_arguments=False)
    assert first is second is (CUDA if targets.gpu_found() else CPU)
    said = [w for w in caught if issubclass(w.category, TargetWarning)]
    assert len(said) <= 1 and (said or targets.gpu_found() or targets._say_cpu_once.cache_info().hits)


def test_numfuse_target_sets_the_default(monkeypatch):
    monkeypatch.setenv("NUMFUSE_TARGET", "cpu")
    x = np.ones(10)
    assert numfuse.jit(lambda x: x + 1)._compiled((x,), {})[0].target is CPU
    monkeypatch.setenv("NUMFUSE_TARGET", "cuda")
    assert numfuse.jit(lambda x: x + 1)._compiled((x,), {})[0].target is CUDA


def test_each_target_plans_with_its_own_thresholds():
    # Long enough to split a row on the GPU, not on the CPU, whose threads are few.
    x = np.ones(CUDA.split_min_reduced * 2)
    assert CUDA.split_min_reduced * 2 < CPU.split_min_reduced
    fn = lambda x: x.sum()  # noqa: E731
    assert numfuse.jit(fn, target="cuda").plan(x).kernels[0].nest.split
    assert not numfuse.jit(fn, target="cpu").plan(x).kernels[0].nest.split
    # A softmax row that fits the CPU's cache but not a GPU block's: online on the GPU only.
    row = np.ones((2, CUDA.row_cache_bytes // 4 + 64), np.float32)
    assert row.shape[1] * 4 < CPU.row_cache_bytes

    def softmax(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def combines(target):
        return {a.combine for k in numfuse.jit(softmax, target=target).plan(row).kernels for a in k.nest.accumulators}

    assert "online_sum" in combines("cuda") and "online_sum" not in combines("cpu")


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_every_program_renders_for_the_cpu(program):
    args = program.args(np.random.default_rng(0))
    f = numfuse.jit(program.fn, target="cpu")
    for source in f.kernel_sources(*args):
        tree = ast.parse(source.source)
        functions = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
        # (first the serial functions of vector_math's templates it calls: nf_vm_exp_float32)
        vector = [n for n in functions if n.startswith("nf_vm_")]
        assert functions == vector + [source.name, f"{source.name}_serial"]
        assert "prange(" in source.source and "cuda." not in source.source


def _cpu_code(fn, *args):
    (source,) = numfuse.jit(fn, target="cpu").kernel_sources(*args)
    # (the kernel's own function, after those of vector_math's templates it calls)
    return f"{source.name}(" + source.source.split(f"def {source.name}(", 1)[1].split("@njit", 1)[0]


def test_the_cpu_code_of_a_row_reduction_reads_as_its_loops():
    # an int64 sum: eight lanes; the row 2 KiB ahead (256 int64) asked of the cache at each step
    code = _cpu_code(lambda x: x.sum(axis=1), np.ones((4, 100), np.int64))
    assert code.splitlines()[:4] == [
        "nf_red_sum(in0, out0, no0, nr0, nrows, nred):",
        "    for row in prange(nrows):",
        "        o0 = row",
        "        acc0_l0 = int64(0)",
    ]
    # the lanes' fixed tree (signed ints add through uint64: scalar_impl.add_signed)
    assert "acc0_l0 = int64(int64(uint64(acc0_l0) + uint64(acc0_l4)))" in code
    assert "        for r0_base in range(0, nr0 - (nr0 - 0) % 8, 8):\n            prefetch(in0, (uint64(o0), uint64(r0_base + 256)))" in code
    # a float32 sum: NumPy's pairwise order (leaves of 128 points on a stack of frames), whose
    # 8 lanes read the points where they are
    code = _cpu_code(lambda x: x.sum(axis=1), np.ones((4, 100), np.float32))
    lines = [line.strip() for line in code.splitlines()]
    assert lines[0] == "nf_red_sum(in0, out0, no0, nr0, nrows, nred, nf_pw_frames, nf_pw_acc0):"
    assert lines[3] == "acc0 = float32(0.0)"
    assert "if nf_len <= 128:" in lines and "nf_half -= nf_half % 8" in lines
    start = lines.index("for r0_base in range(nf_start, nf_whole, 8):")
    assert lines[start - 1:start + 4] == [
        "nf_whole = nf_start + (nf_len - nf_len % 8)",
        "for r0_base in range(nf_start, nf_whole, 8):",
        "r0_l0 = r0_base",
        "v0_l0 = in0[uint64(o0), uint64(r0_l0)]",
        "acc0_l0 = float32(acc0_l0 + v0_l0)",
    ]
    # where the points are arithmetic, each lane computes its own
    code = _cpu_code(lambda x: (x * x).sum(axis=1), np.ones((4, 100), np.float32))
    lines = [line.strip() for line in code.splitlines()]
    start = lines.index("for r0_base in range(nf_start, nf_whole, 8):")
    assert lines[start + 1:start + 5] == [
        "r0_l0 = r0_base",
        "v0_l0 = in0[uint64(o0), uint64(r0_l0)]",
        "v1_l0 = float32(v0_l0 * v0_l0)",
        "acc0_l0 = float32(acc0_l0 + v1_l0)",
    ]
    assert "nf_leaf_acc0" not in code
    # where they call a function (exp), a leaf's values go into the thread's row first
    code = _cpu_code(lambda x: np.exp(x).sum(axis=1), np.ones((4, 100), np.float32))
    lines = [line.strip() for line in code.splitlines()]
    start = lines.index("for jj in range(nf_len):")
    assert lines[start:start + 3] == [
        "for jj in range(nf_len):",  # the leaf's values into the thread's row
        "r0 = nf_start + jj",
        "v0 = in0[uint64(o0), uint64(r0)]",
    ]
    assert "nf_leaf_acc0[nf_slot + uint64(jj)] = v1" in lines
    start = lines.index("acc0_l0 = float32(acc0_l0 + acc0_l1)")  # NumPy's tree of its 8 lanes
    assert lines[start:start + 7] == [
        "acc0_l0 = float32(acc0_l0 + acc0_l1)", "acc0_l2 = float32(acc0_l2 + acc0_l3)",
        "acc0_l4 = float32(acc0_l4 + acc0_l5)", "acc0_l6 = float32(acc0_l6 + acc0_l7)",
        "acc0_l0 = float32(acc0_l0 + acc0_l2)", "acc0_l4 = float32(acc0_l4 + acc0_l6)",
        "acc0_l0 = float32(acc0_l0 + acc0_l4)",
    ]
    assert [line for line in lines if line][-2:] == [
        "acc0 = float32(acc0 + nf_pw_acc0[nf_sv + uint64(0)])", "out0[uint64(o0)] = acc0"]


def test_cpu_prefetch_distance_is_in_bytes():
    code = _cpu_code(lambda x: x.sum(axis=1, dtype=np.int32), np.ones((4, 100), np.int32))
    assert "prefetch(in0, (uint64(o0), uint64(r0_base + 512)))" in code  # int32: 4 bytes a point
    code = _cpu_code(lambda x: x.sum(), np.ones(1 << 16, np.int64))  # a split reduction's chunk
    assert "prefetch(in0, (uint64(r0_base + 256),))" in code


def test_cpu_prefetch_skips_a_gather_whose_index_the_lane_loads():
    # fuzzer seed 1302 (CPU target): the prefetch named the gathered index before the lane loaded it
    code = _cpu_code(lambda x: x[np.array([0, 0, 0])].sum(dtype=np.float64), np.ones((4, 1, 1, 4), np.bool_))
    assert "prefetch(in1" not in code


def test_a_cpu_row_reduction_that_computes_per_point_folds_into_a_scratch_row_first():
    # (an integer sum: a float one adds in NumPy's pairwise order, test above)
    code = _cpu_code(lambda x: (x * x).sum(axis=1), np.ones((4, 100), np.int64))
    lines = [line.strip() for line in code.splitlines()]
    start = lines.index("nf_slot = uint64(get_thread_id() * 64)")
    assert lines[start:start + 12] == [
        "nf_slot = uint64(get_thread_id() * 64)",
        "for jj in range(64):",
        "nf_tmp_acc0[nf_slot + uint64(jj)] = int64(0)",
        "nf_whole = nr0 - (nr0 - 0) % 64",
        "for r0_chunk in range(0, nf_whole, 64):",
        "for jj in range(64):",
        "r0 = r0_chunk + jj",
        "v0 = in0[uint64(o0), uint64(r0)]",
        "v1 = int64(int64(uint64(v0) * uint64(v0)))",
        "acc0_s = nf_tmp_acc0[nf_slot + uint64(jj)]",
        "acc0_s = int64(int64(uint64(acc0_s) + uint64(v1)))",
        "nf_tmp_acc0[nf_slot + uint64(jj)] = acc0_s",
    ]
    assert "for jj in range(nr0 - nf_whole):" in lines  # the short last chunk
    assert "acc0_l7 = int64(int64(uint64(acc0_l7) + uint64(nf_tmp_acc0[nf_slot + uint64(jj) + uint64(7)])))" in lines
    assert not any(line.startswith("for r0_base") for line in lines)  # no unrolled lanes


def test_the_trace_tier_plans_for_cuda():
    assert os.environ.get("NUMFUSE_TARGET") == "cuda"


def test_cpu_code_computes_what_is_the_same_at_every_point_once_before_its_loop():
    # The point a[3, 3] and what is computed from it, before the prange: LLVM would load it again
    # at every point (it cannot tell the stores leave it alone), and keep the loop from vectorizing.
    code = _cpu_code(lambda a: a * (a[3, 3] * 2.0) + a[0], np.ones((6, 6)))
    before, loop = code.split("for row in prange(nrows):")
    assert "= in0[uint64(off0), uint64(off1)]" in before and "v1 * const0" in before
    assert "in0[uint64(off0)" not in loop and "in0[uint64(i0), uint64(i1)]" in loop
    assert "in0[0, uint64(i1)]" in loop  # a[0] varies along the row: it stays


def test_a_short_row_is_one_accumulator_in_order_on_the_cpu():
    # 7 points or fewer: no lanes, no scratch row (NumPy's pairwise sum adds them in order too)
    code = _cpu_code(lambda x: np.exp(x).sum(axis=1), np.ones((64, 7), np.float32))
    assert "        acc0 = float32(0.0)\n        for r0 in range(nr0):\n" in code
    assert "_l1" not in code and "nf_tmp" not in code
    # 8 points or more: lanes, as before
    assert "acc0_l7" in _cpu_code(lambda x: x.sum(axis=1), np.ones((4, 8), np.float32))


def test_a_cpu_columns_reduction_over_several_output_loops_walks_runs_of_the_last():
    # x.sum(axis=1) of [20, 5, 30]: outputs [20, 30] in blocks; each block's outputs in runs along
    # the last loop, whose indices are divided out once a run (templates.output_runs), not at
    # every point of every reduced step
    code = _cpu_code(lambda x: x.sum(axis=1), np.ones((20, 5, 30)))
    lines = [line.strip() for line in code.splitlines()]
    start = lines.index("for r0 in range(nr0):")
    assert lines[start:start + 13] == [
        "for r0 in range(nr0):",
        "nf_row0 = lo",
        "while nf_row0 < hi:",
        "o1 = nf_row0 % no1",
        "nf_row0_q0 = nf_row0 // no1",
        "o0 = nf_row0_q0",
        "nf_run = min(hi - nf_row0, no1 - o1)",
        "nf_first = o1",
        "for nf_k in range(nf_run):",
        "row = nf_row0 + nf_k",
        "o1 = nf_first + nf_k",
        "v0 = in0[uint64(o0), uint64(r0), uint64(o1)]",
        "nf_col_acc0[uint64(row)] = float64(nf_col_acc0[uint64(row)] + v0)",
    ]
    # one output loop: a plain loop over the block
    assert "for row in range(lo, hi):\n                o0 = row\n" in _cpu_code(lambda x: x.sum(axis=0), np.ones((5, 30)))


def test_cpu_choices_between_plain_values_are_selects_without_branches():
    # np.maximum's NaN rule and a masked sum: `a if c else b` of plain values becomes
    # select(c, a, b) (no basic blocks for Numba's passes); `and`/`or` of booleans are & and |.
    code = _cpu_code(lambda x, y: np.maximum(x, y).sum(axis=1) + np.where((x > 0) & (y < 1), x, 0.0).sum(axis=1),
                     np.ones((4, 100)), np.ones((4, 100)))
    points = [line for line in code.splitlines() if line.strip().startswith("v")]  # the points' values
    assert "select(" in code and " and " not in code and " or " not in code
    assert points and not any(" if " in line for line in points)
    from numfuse.targets.cpu.codegen import _ForCpu

    def selected(expr: str) -> str:
        return ast.unparse(_ForCpu({}).visit(ast.parse(expr)))

    assert selected("float64(a if c else -math.inf)") == "float64(select(c, a, -math.inf))"
    assert selected("a[i] if c else b") == "a[i] if c else b"  # a load only where c holds
    assert selected("x / y if y != 0 else z") == "x / y if y != 0 else z"


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_a_reduction_through_a_transpose_is_scheduled_by_memory_order(target):
    # x.T.sum(axis=1) reduces the domain's last axis, which is x's first: neighbouring outputs
    # are neighbours in memory, so "columns" (it ran "rows", 7x slower than NumPy on the CPU)
    x = np.ones((40, 30))

    def schedule(fn, *args):
        (kernel,) = numfuse.jit(fn, target=target).plan(*args).kernels
        return kernel.nest.schedule

    assert schedule(lambda x: x.T.sum(axis=1), x) == "columns"
    assert schedule(lambda x: x.T.sum(axis=0), x) == "rows"
    assert schedule(lambda x: x.sum(axis=1), x) == "rows"
    assert schedule(lambda x: x.sum(axis=0), x) == "columns"
    # the largest input decides: a [40, 30] matrix beside a row of 40
    assert schedule(lambda x, v: (x.T * v).sum(axis=1), x, np.ones(40)) == "columns"
    # a short sum broadcast over many outputs: the output is the largest buffer, contiguous along
    # its last axis, a kept one (mlp's relu(x @ w1 + b1) for x of 3 columns: rows took 8 ms for
    # 2048 x 1000 outputs on one CPU thread, columns 4.8 ms on two)
    def short_sum(x, w, b):
        return np.maximum(x @ w + b, 0)

    assert schedule(short_sum, np.ones((256, 3)), np.ones((3, 100)), np.ones(100)) == "columns"
    assert schedule(lambda x: x.sum(axis=2), np.ones((64, 100, 3))) == "rows"  # the input is the larger
