"""complex64 and complex128 kernels compile to sm_90 PTX with the real compiler: every complex
template (arithmetic, NumPy's division, abs, exp, conjugate, the parts, equality, where), casts
to and from every real dtype, complex literals and scalar arguments, and sums, products and means
in rows, columns, cached and split kernels. Every value has the IR's dtype (Numba's typing of
`complex(re, im)` is complex128: the casts must bring it back), nothing spills, and a complex64
kernel computes in single precision: no f64 instruction, except libdevice's float32 sin/cos
argument reduction behind exp."""

import numpy as np
import pytest

from numfuse.ir.dtypes import COMPLEX, REAL
from numfuse.targets.cuda.ptx import only_libdevice_trig_f64
from numfuse_tests.compile.test_ptx import assert_no_spills, compile_all

C64 = np.dtype(np.complex64)


def only_kernel(fn, *args):
    (kernel, report), = compile_all(fn, *args)
    assert ".entry" in report.ptx
    assert_no_spills(report)
    return kernel, report


def arithmetic(z, w, s):
    return (z + w, z - w, z * w, z / w, -z, +z, z == w, z != w, np.square(z), np.conj(z), z.real, z.imag,
            abs(z), z * s + (1.5 - 2j), np.where(z.real > 0, z, w), z / 0.5, w.imag * z)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_complex_arithmetic_compiles(dtype):
    z = np.ones((4, 8), dtype)
    kernel, report = only_kernel(arithmetic, z, z, 1j)
    ops = {s.op for s in kernel.nest.body if hasattr(s, "op")}
    assert {"divide", "absolute", "conjugate", "real", "imag", "where", "equal"} <= ops
    if dtype == C64:
        assert report.f64_instructions == [], report.f64_instructions[:5]


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_complex_exp_compiles(dtype):
    z = np.ones((4, 8), dtype)
    kernel, report = only_kernel(lambda z: np.exp(z) * 2, z)
    if dtype == C64:
        assert report.f64_instructions, "libdevice's cosf/sinf argument reduction was expected"
        assert only_libdevice_trig_f64(report), report.f64_instructions[:5]


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_casts_to_and_from_every_real_dtype_compile(dtype):
    """Real to complex (float16 through float32), complex to real through the real part, to
    bool through both parts, between the complex dtypes."""
    reals = [np.ones((2, 8), d) for d in REAL]

    def casts(z, *xs):
        into = tuple(x.astype(z.dtype) for x in xs)
        out_of = tuple(z.astype(x.dtype) for x in xs)
        return into + out_of + (z.astype(np.complex64), z.astype(np.complex128))

    with pytest.warns(np.exceptions.ComplexWarning):
        only_kernel(casts, np.ones((2, 8), dtype), *reals)


def test_complex64_beside_real_operands_stays_single_precision():
    """float32, float16, int8 and bool arrays and Python scalars beside complex64: NumPy's loop
    is complex64, and so is every instruction."""
    z = np.ones((4, 8), C64)

    def mixed(z, x, h, i, b, s, f):
        return z * x + h, z / i - b, (z + s) * f, abs(z) + x, np.where(b, z, s)

    kernel, report = only_kernel(mixed, z, z.real.astype(np.float32), np.ones((4, 8), np.float16),
                                 np.ones((4, 8), np.int8), np.ones((4, 8), bool), 2j, 0.5)
    assert report.f64_instructions == [], report.f64_instructions[:5]
    assert {s.dtype for s in kernel.nest.scalars} == {C64}  # cast on the host


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("axis, schedule", [(1, "rows"), (0, "columns")], ids=["rows", "columns"])
def test_complex_reductions_compile(dtype, axis, schedule):
    def reductions(z):
        return (z.sum(axis=axis), z.prod(axis=axis), z.mean(axis=axis), z.any(axis=axis),
                np.count_nonzero(z, axis=axis))

    kernel, report = only_kernel(reductions, np.ones((16, 40), dtype))
    assert kernel.nest.schedule == schedule
    if dtype == C64:
        assert report.f64_instructions == [], report.f64_instructions[:5]


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_split_and_cached_complex_reductions_compile(dtype):
    """A long row split over blocks (complex partial results in global memory), and a centred
    matrix whose rows stay in shared memory (a complex dynamic shared array) between phases."""
    kernel, report = only_kernel(lambda z: (z.sum(), z.mean()), np.ones(20000, dtype))
    assert kernel.nest.split
    cached, report2 = only_kernel(lambda z: z - z.mean(axis=1, keepdims=True), np.ones((8, 300), dtype))
    assert cached.nest.cached and len(cached.nest.phases) == 2
    if dtype == C64:
        assert report.f64_instructions == [] and report2.f64_instructions == []


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_writes_through_the_parts_compile(dtype):
    """z.real[...] = x and z.imag += s rebuild z from its parts (complex_from_parts), in the
    loop dtype's precision."""
    def write_parts(z, x):
        z.real[:, 1:] = x[:, 1:]
        z.imag += 2.0
        return z

    kernels = compile_all(write_parts, np.ones((4, 8), dtype), np.ones((4, 8), np.dtype(dtype).char.lower()))
    ops = {s.op for kernel, _ in kernels for s in kernel.nest.body if hasattr(s, "op")}
    assert "complex_from_parts" in ops
    for _, report in kernels:
        assert_no_spills(report)
        if dtype == C64:
            assert report.f64_instructions == [], report.f64_instructions[:5]
