"""Scans (np.cumsum, np.cumprod, np.nancumsum, np.nancumprod and the methods) are the scan_sum
and scan_prod primitives: a running accumulator of a kernel over rows, its points combined one
after another in NumPy's order, fused with its producers and with the consumers that read it at
its own points. A few long rows the target would run slowly in one worker each, and float16 and
complex scans, are the library's scan instead."""

import numpy as np
import pytest

import numfuse
from numfuse.ir import format_graph
from numfuse.ir.primitives import PRIMITIVES
from numfuse.targets.cuda.device_props import H200
from numfuse.targets.cuda.launch_model import candidate_configs

F32 = np.float32
X = np.ones((6, 40), F32)


def plan(fn, *args, target="cpu"):
    return numfuse.jit(fn, target=target).plan(*args)


def test_scans_are_primitives_of_their_own_kind():
    assert PRIMITIVES["scan_sum"].kind == PRIMITIVES["scan_prod"].kind == "scan"


def test_graph_casts_to_numpys_dtype_then_scans():
    graph = numfuse.jit(lambda a: np.cumsum(a, axis=1)).graph(np.ones((3, 4), np.int32))
    assert format_graph(graph, with_locs=False) == (
        "{ lambda a:i32[3,4] .\n"
        "  let b:i64[3,4] = convert[dtype=i64] a\n"
        "      c:i64[3,4] = scan_sum[axes=(1,)] b\n"
        "  in (c) }"
    )


def test_nan_scans_replace_nans_as_numpy_does():
    graph = numfuse.jit(lambda a: np.nancumprod(a)).graph(np.ones((2, 3)))
    assert format_graph(graph, with_locs=False) == (
        "{ lambda a:f64[2,3] .\n"
        "  let b:bool[2,3] = isnan a\n"
        "      c:f64[2,3] = where b 1.0:f64 a\n"
        "      d:f64[6] = reshape[shape=(6,)] c\n"
        "      e:f64[6] = scan_prod[axes=(0,)] d\n"
        "  in (e) }"
    )


def test_scan_loop_nest_reads_the_running_value():
    p = plan(lambda x: np.cumsum(x * 2.0, axis=1) - 1.0, np.ones((4, 6), F32))
    assert str(p.kernels[0].nest) == (
        "kernel nf_red_multiply_scan_sum_subtract  reduction[rows]\n"
        "  in  in_a:f32[4,6]  const0:f32=2.0\n"
        "  out out_d:f32[4,6]\n"
        "  for o0 < no0:  (no0=4)\n"
        "    acc0:f32 = 0.0 (add, running)\n"
        "    for r0 < nr0:  (nr0=6)\n"
        "      v0 = load in_a[o0, r0]\n"
        "      v1:f32 = multiply v0 const0\n"
        "      acc0 = add acc0 v1\n"
        "      v2:f32 = subtract acc0 1.0:f32\n"
        "      store out_d[o0, r0] = v2"
    )


@pytest.mark.parametrize("fn", [
    lambda x: np.cumsum(x * 2.0, axis=1) / (1.0 + x),
    lambda x: np.cumsum(x, axis=0) + x,
    lambda x: np.cumprod(1.0 + x * 0.01, axis=-1),
    lambda x: x.cumsum(),
    lambda x: np.nancumsum(np.where(x > 0.5, np.nan, x), axis=1),
    lambda x: np.cumsum(np.cumsum(x, axis=1), axis=1),
    lambda x: (np.cumsum(x, axis=1), x.sum(axis=1)),
    lambda x: np.cumsum(x - x.max(axis=1, keepdims=True), axis=1),
    lambda x: np.cumsum(x > 0.5, axis=1),
], ids=["consumer", "columns", "cumprod", "flattened", "nancumsum", "scan of a scan", "beside a sum",
        "after a max (two passes)", "bools"])
def test_a_scan_with_its_producers_and_consumers_is_one_kernel(fn):
    for target in ("cpu", "cuda"):
        p = plan(fn, X, target=target)
        assert len(p.kernels) == 1 and not p.library_steps, str(p)
        assert p.bytes_moved == p.min_bytes, str(p)


def test_a_scan_read_at_other_points_is_stored_for_a_later_kernel():
    p = plan(lambda x: np.diff(np.cumsum(x, axis=1), axis=1), X)
    assert len(p.kernels) == 2 and not p.library_steps
    assert p.kernels[0].reason.startswith("scan_sum b along axes (1,) of [6,40]; writes b")
    assert "split because it reads b from #0" in p.kernels[1].reason
    # Read at its own points, but beside the row's total where it cannot move to a later pass
    # (a max reads it in its own): the reason names the running value.
    p = plan(lambda x: (np.cumsum(x, axis=1) / x.sum(axis=1, keepdims=True), np.cumsum(x, axis=1).max(axis=1)), X)
    assert "is a running value: it is read only at its own point" in p.kernels[1].reason, str(p)


def test_a_scan_beside_a_whole_row_value_runs_in_the_pass_after_it():
    # The division needs the row's total and the running value at once: the total in the first
    # pass, the running sums and the division in the second (the row cached between them).
    for target in ("cpu", "cuda"):
        p = plan(lambda x: np.cumsum(x, axis=1) / x.sum(axis=1, keepdims=True), X, target=target)
        assert len(p.kernels) == 1 and not p.library_steps, str(p)
        nest = p.kernels[0].nest
        assert [[a.running for a in phase.accumulators] for phase in nest.phases] == [[False], [True]]
        assert p.bytes_moved == p.min_bytes
    # Unless another reduction reads the running value in the first pass.
    p = plan(lambda x: (np.cumsum(x, axis=1) / x.sum(axis=1, keepdims=True), np.cumsum(x, axis=1).max(axis=1)), X)
    assert len(p.kernels) == 2, str(p)


def test_few_long_rows_are_the_librarys_scan_on_a_gpu_and_fused_on_the_cpu():
    x = np.ones(1 << 16, F32)
    fn = lambda x: np.cumsum(x * 2.0) + 1.0  # noqa: E731
    gpu = plan(fn, x, target="cuda")
    assert [s.name if hasattr(s, "nest") else "library " + s.prim for s in gpu.steps] == [
        "nf_pw_multiply", "library cumsum", "nf_pw_add"]
    explained = numfuse.jit(fn, target="cuda").explain(x)
    assert "np.cumsum at" in explained and "runs as a library call: 1 row(s) of 65536 points" in explained
    cpu = plan(fn, x, target="cpu")
    assert len(cpu.kernels) == 1 and not cpu.library_steps
    many_rows = plan(lambda x: np.cumsum(x, axis=1), np.ones((64, 1 << 14), F32), target="cuda")
    assert not many_rows.library_steps


@pytest.mark.parametrize("dtype", [np.float16, np.complex64])
def test_float16_and_complex_scans_stay_library_calls(dtype):
    p = plan(lambda x: np.cumsum(x, axis=1), np.ones((3, 4), dtype))
    assert [s.prim for s in p.library_steps] == ["cumsum"]


def test_a_cuda_scan_runs_each_row_in_one_thread():
    for shape, axis in [((300, 64), 1), ((64, 300), 0)]:
        nest = plan(lambda x: np.cumsum(x, axis=axis), np.ones(shape, F32), target="cuda").kernels[0].nest
        assert nest.scans and not nest.split
        for config in candidate_configs(nest, H200):
            ntr = config.block[0] if nest.schedule == "rows" else config.block[1]
            assert ntr == 1, config


def test_explain_says_how_a_scan_runs():
    x = np.ones((4, 6), F32)
    assert "a scan: one thread per row, its points in order" in numfuse.jit(
        lambda x: np.cumsum(x, axis=1), target="cuda").explain(x)
    assert "a scan: each row's running value in that thread" in numfuse.jit(
        lambda x: np.cumsum(x, axis=1), target="cpu").explain(x)


def test_a_long_reduction_body_folds_into_one_accumulator_on_the_cpu():
    # Eight lanes of a long body (complex arithmetic here) took minutes to compile.
    from numfuse.targets.cpu.lanes import LANES_MAX_STATEMENTS

    def long(x, y):
        z = x
        for k in range(LANES_MAX_STATEMENTS):
            z = z * y + k
        return z.sum(axis=1)

    x = np.ones((4, 64), np.complex128)
    source = numfuse.jit(long, target="cpu").kernel_sources(x, x)[0]
    assert "acc0_l1" not in source.source
    short = numfuse.jit(lambda x, y: (x * y).sum(axis=1), target="cpu").kernel_sources(x, x)[0]
    assert "acc0_l1" in short.source


def test_a_reduction_of_scans_of_two_passes_reads_them_from_an_earlier_kernel():
    # (A fuzzer case: NotFusable. The sum reads d's running value, made in the first pass, and
    # e's, made in the second: no one pass has both.)
    def two_pass_scans(x):
        d = np.cumsum(x)
        e = np.cumsum(x * d.sum())
        return (e * d).sum()

    for target in ("cpu", "cuda"):
        plan = numfuse.jit(two_pass_scans, target=target).plan(np.ones(6))
        assert [len(k.nest.phases) for k in plan.kernels] == [2, 1], target
