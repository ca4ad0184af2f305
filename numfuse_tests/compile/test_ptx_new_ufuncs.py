"""The shift, gcd/lcm, bitwise_count, cbrt, ldexp, nextafter, spacing, divmod, frexp and modf
templates compile to sm_90 PTX with numba-cuda's real compiler (no GPU needed): every value has
the IR's dtype, float32 kernels compute in float32 (NumPy's float32 loops do), nothing spills, and
the device functions are the ones meant (libdevice's cbrt, frexp, ldexp, nextafter; popc)."""

from __future__ import annotations

import numpy as np
import pytest

import numfuse
from numfuse.targets.cuda.ptx import compile_kernel, ptxas_usage

INTS = [np.dtype(t) for t in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")]
FLOATS = [np.dtype(t) for t in ("float16", "float32", "float64")]


def compile_all(fn, *args):
    jf = numfuse.jit(fn)
    plan = jf.plan(*args)
    sources = jf.kernel_sources(*args)
    assert len(sources) == len(plan.kernels)
    reports = [(kernel, compile_kernel(source, kernel.nest)) for kernel, source in zip(plan.kernels, sources)]
    for kernel, report in reports:
        assert ".entry" in report.ptx
        assert report.type_mismatches == [], (kernel.name, report.type_mismatches)
        usage = ptxas_usage(report)
        if usage is not None:
            assert usage.spill_stores == 0 and usage.spill_loads == 0, (kernel.name, usage)
    return reports


def one_report(fn, *args):
    (kernel, report), = compile_all(fn, *args)
    return report


def integer_ops(x, n):
    return (x << n, x >> n, np.left_shift(x, 3), np.right_shift(x, 65), np.gcd(x, n), np.lcm(x, n),
            np.bitwise_count(x), np.divmod(x, n))


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_integer_templates_compile(dtype):
    x = np.ones((4, 8), dtype)
    report = one_report(integer_ops, x, x)
    assert "popc.b64" in report.ptx  # bitwise_count: one population count of |x| as uint64
    assert not report.computes_in_f64


def float_ops(x, y, n):
    return (np.cbrt(x), np.nextafter(x, y), np.spacing(x), np.ldexp(x, n), np.frexp(x), np.modf(x),
            np.divmod(x, y))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("exponent", [np.int32, np.int64], ids=["int32", "int64"])
def test_float_templates_compile(dtype, exponent):
    x = np.ones((4, 8), dtype)
    report = one_report(float_ops, x, x, np.ones((4, 8), exponent))
    if dtype != np.float64:
        # NumPy computes float32 (and float16, through float32) in float32: no f64 at all.
        assert report.f64_instructions == [], report.f64_instructions[:5]


def test_float32_cbrt_is_libdevice_cbrtf():
    x = np.ones(64, np.float32)
    report = one_report(lambda x: np.cbrt(x), x)
    assert report.f64_instructions == []
    # __nv_cbrtf inlined (a float32 log2/exp2 estimate refined by FMAs), then a's sign put back
    assert "lg2.approx.f32" in report.ptx and "fma.rn.f32" in report.ptx
    assert "copysign.f32" in report.ptx


def test_float64_templates_compute_in_float64():
    x = np.ones(64, np.float64)
    report = one_report(lambda x, y: (np.nextafter(x, y), np.spacing(x), np.ldexp(x, 3), np.frexp(x)), x, x)
    assert report.computes_in_f64
    # no float32 value in these float64 kernels (no precision lost through a narrower type;
    # libdevice's float64 cbrt, left out here, starts from a float32 estimate by design)
    assert ".f32" not in report.ptx


def test_float16_half_templates_compile_in_float32():
    x = np.ones(64, np.float16)
    report = one_report(lambda x, y: (np.nextafter(x, y), np.spacing(x)), x, x)
    assert report.f64_instructions == []


def test_shift_kernels_use_64_bit_shifts_and_no_wrapped_counts():
    """The count is tested before the shift: a 64-bit shift of a narrow value, never a shift
    by a count the hardware would take modulo 64."""
    x = np.ones(64, np.int8)
    ptx = one_report(lambda x, n: (x << n, x >> n), x, x.copy()).ptx  # (two arrays: one twice is one)
    assert "shl.b64" in ptx and "shr.s64" in ptx
    u = np.ones(64, np.uint16)
    ptx = one_report(lambda x, n: x >> n, u, u.copy()).ptx
    assert "shr.u64" in ptx


def test_integer_kernels_compute_no_floats():
    x = np.ones(64, np.int32)
    report = one_report(integer_ops, x, x)
    body = report.ptx
    assert ".f32" not in body and ".f64" not in body


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_views_as_another_dtype_compile_to_bitcasts(dtype):
    """x.view(int) of a float array and writes through it: float_bits and float_from_bits,
    one mov.b32/mov.b64 each, no conversion instruction and no call."""
    def flip_sign(x):
        bits = x.view(np.uint32 if x.dtype == np.float32 else np.uint64)
        bits ^= np.uint32(1 << 31) if x.dtype == np.float32 else np.uint64(1 << 63)
        return x * 2

    reports = compile_all(flip_sign, np.ones(64, dtype))
    ops = {s.op for kernel, _ in reports for s in kernel.nest.body if hasattr(s, "op")}
    assert {"float_bits", "float_from_bits"} <= ops, ops
    for _, report in reports:
        assert "cvt.rn" not in report.ptx and "call" not in report.ptx
