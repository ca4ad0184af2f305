"""Every generated kernel compiles to sm_90 PTX with numba-cuda's real compiler (no GPU needed);
every value has the dtype the IR gives it, float32 kernels compute in float32, nothing spills."""

import numpy as np
import pytest

import numfuse
from numfuse.ir.dtypes import REAL
from numfuse.errors import UnsupportedError
from numfuse.ir.ops import BY_UFUNC
from numfuse.targets.cuda.ptx import compile_kernel, only_libdevice_trig_f64, ptxas_usage
from numfuse_tests.programs import PROGRAMS

TRIG = {np.sin, np.cos, np.tan}


def compile_all(fn, *args):
    jf = numfuse.jit(fn)
    plan = jf.plan(*args)
    sources = jf.kernel_sources(*args)
    assert len(sources) == len(plan.kernels)
    reports = [(kernel, compile_kernel(source, kernel.nest)) for kernel, source in zip(plan.kernels, sources)]
    for kernel, report in reports:
        # Numba infers each value's type from the generated code; it must be the IR's dtype.
        assert report.type_mismatches == [], (kernel.name, report.type_mismatches)
    return reports


def assert_no_spills(report):
    usage = ptxas_usage(report)
    if usage is not None:
        assert usage.spill_stores == 0 and usage.spill_loads == 0, (report.name, usage)


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_program_kernels_compile(program):
    args = program.args(np.random.default_rng(0))
    for kernel, report in compile_all(program.fn, *args):
        assert ".entry" in report.ptx
        assert_no_spills(report)


def _ufuncs_for(dtype, exclude=()):
    """The ufuncs numfuse traces on two arrays of `dtype` (NumPy's loop decides the dtypes)."""
    x = np.ones((2, 3), dtype)
    usable = []
    for ufunc in BY_UFUNC:
        if ufunc in exclude:
            continue
        try:
            numfuse.jit(lambda x, y, u=ufunc: u(*(x, y)[: u.nin])).plan(x, x)
        except (UnsupportedError, TypeError):
            continue
        usable.append(ufunc)
    return usable


@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_every_elementwise_template_compiles(dtype):
    """One kernel per dtype applying every ufunc numfuse supports on it."""
    ufuncs = _ufuncs_for(dtype)
    assert len(ufuncs) >= 30

    def every_op(x, y):
        return tuple(u(*(x, y)[: u.nin]) for u in ufuncs) + (np.where(x > y, x, y), x.astype(np.float32))

    x = np.ones((4, 8), dtype)
    (kernel, report), = compile_all(every_op, x, x)
    assert_no_spills(report)


@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_every_reduction_and_schedule_compiles(dtype):
    def reductions(x):
        return (x.sum(axis=1), x.prod(axis=1), x.max(axis=1), x.min(axis=1), x.any(axis=1), x.all(axis=1),
                x.mean(axis=1), x.sum(axis=0), x.max(axis=0), x.any(axis=0), x.sum(), x.min())

    x = np.ones((16, 4), dtype)  # axis 1: rows; axis 0: columns
    wide = np.ones((4, 16), dtype)
    schedules = set()
    for arg in (x, wide):
        for kernel, report in compile_all(reductions, arg):
            schedules.add(kernel.nest.schedule)
            assert_no_spills(report)
    assert schedules == {"rows", "columns"}


def test_float32_kernels_compute_in_float32():
    ufuncs = _ufuncs_for(np.float32, exclude=TRIG)

    def every_op(x, y):
        outs = tuple(u(*(x, y)[: u.nin]) for u in ufuncs)
        return outs + (x.sum(axis=1), x.max(axis=0), x.mean(), np.clip(x * 0.5, -1, 1))

    x = np.ones((8, 8), np.float32)
    for kernel, report in compile_all(every_op, x, x):
        assert report.f64_instructions == [], (kernel.name, report.f64_instructions[:5])


def test_float32_trig_uses_float64_only_in_libdevice_argument_reduction():
    x = np.ones(8, np.float32)
    (kernel, report), = compile_all(lambda x: (np.sin(x), np.cos(x), np.tan(x)), x)
    assert only_libdevice_trig_f64(report), report.f64_instructions


def test_python_float_scalar_argument_is_cast_on_the_host():
    x = np.ones(8, np.float32)
    (kernel, report), = compile_all(lambda x, s: x * s + 1.0, x, 2.5)
    assert report.f64_instructions == []


def test_quickstart_kernel_is_one_reduction_kernel_in_float32():
    x = np.ones((64, 128), np.float32)
    (kernel, report), = compile_all(PROGRAMS[0].fn, x, x)
    assert kernel.nest.kind == "reduction"
    assert report.f64_instructions == []


def test_update_and_strided_kernels_compile():
    """An in-place update (its store at affine indices), a temporary for its right side, a
    reshape's // and % indices, and a Fortran-ordered argument typed as any layout ("A"). Two
    kernels: the temporary, then the update and b's result as parts of one."""

    def jacobi(a, b):
        a[1:-1, 1:-1] = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
        return b.reshape(-1)[::3] * 2.0

    a = np.ones((6, 7), np.float32)
    reports = compile_all(jacobi, a, np.asfortranarray(a))
    assert len(reports) == 2
    for kernel, report in reports:
        assert ".entry" in report.ptx and not report.computes_in_f64, kernel.name
        assert_no_spills(report)
    assert any(b.strided for kernel, _ in reports for b in kernel.nest.buffers)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.bool_], ids=lambda d: np.dtype(d).name)
def test_concatenation_selects_and_writes_through_views_compile(dtype):
    """A select's value has its IR dtype in every branch (Numba unifies the branches' types);
    a store through a reshaped view indexes with // and %. Three kernels: the concatenation and
    the copy of its transpose that NumPy's reshape makes (parts of one kernel), the stack's sum,
    the update."""

    def f(x, y, out):
        joined = np.concatenate([x, ~y if y.dtype == np.bool_ else y * 3], axis=1)
        out.reshape(2, -1)[:, ::2] = joined.T.reshape(2, -1)[:, ::2]
        return joined, np.stack([x, y]).astype(np.float32).sum(axis=0)

    x = np.ones((4, 3), dtype)
    reports = compile_all(f, x, x, np.ones((6, 4), dtype))
    assert len(reports) == 3
    for kernel, report in reports:
        assert ".entry" in report.ptx and not (dtype == np.float32 and report.computes_in_f64), kernel.name
        assert_no_spills(report)


@pytest.mark.parametrize("case", ["transpose", "bias", "stencil", "outer", "3-D transpose", "contiguous"])
def test_pointwise_kernels_divide_by_no_size_per_point_and_index_without_wraparound(case):
    """Several loops (2d schedule): the rows' indices are computed once per row, so the loop over
    a row's points holds no division; and no index gets Numba's negative-index wraparound (a
    shift, an and and an add per axis), as every subscript is cast to uint64. Both fail on the
    flat schedule with signed subscripts (tried)."""
    from benchmarks import workloads
    from benchmarks.ptx_loops import innermost_loops, kernel_costs, loop_cost

    fn, shapes = {
        "transpose": (lambda x: x.T + x, [(64, 64)]),
        "bias": (lambda x, b: x * 2 + b, [(64, 60), (60,)]),
        "stencil": (workloads.stencil, [(100, 102)]),
        "outer": (lambda x, y: x[:, None] * y[None, :], [(50,), (60,)]),
        "3-D transpose": (lambda x: x.transpose(1, 0, 2) * 2, [(8, 16, 12)]),
        "contiguous": (lambda x, y: x * y + 1, [(64, 60), (64, 60)]),
    }[case]
    args = [np.ones(shape, np.float32) for shape in shapes]
    plan = numfuse.jit(fn).plan(*args)
    assert [k.nest.schedule for k in plan.kernels] == ["flat" if case == "contiguous" else "2d"]
    ptx, = numfuse.jit(fn).compile(*args)
    assert kernel_costs(ptx)["wraparounds"] == 0
    storing = [body for body in innermost_loops(ptx) if any(x.startswith("st.global") for x in body)]
    assert storing
    for body in storing:
        assert loop_cost(body)[2] == 0, body  # no division


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_casts_of_floats_to_unsigned_compile_through_signed_conversions(dtype):
    # NumPy's wrap of negative values (run/test_scalar_rules.py): cvt to a signed integer, never
    # the saturating unsigned cvt.
    x = np.ones(8, dtype)
    (kernel, report), = compile_all(lambda a: (a.astype(np.uint8), a.astype(np.uint32), a.astype(np.uint64)), x)
    assert ".entry" in report.ptx
    conversions = [line for line in report.ptx.splitlines() if "cvt.rzi" in line]
    assert conversions and all(".s32." in line or ".s64." in line for line in conversions), conversions
