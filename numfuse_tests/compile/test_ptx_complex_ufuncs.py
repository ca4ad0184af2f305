"""Every complex template of scalar_impl_complex.py compiles to sm_90 PTX with the real compiler,
for complex64 and complex128: the results have the IR's dtypes, nothing spills, and a complex64
kernel computes in single precision (no f64 instruction, except libdevice's float32 sin/cos
argument reduction where the template calls sin or cos, and where a template takes a complex
logarithm, glibc's clogf's |z|**2 - 1 near |z| = 1, which it computes in float64)."""

import dataclasses

import numpy as np
import pytest

from numfuse.ir.dtypes import COMPLEX
from numfuse.targets.cuda.ptx import only_libdevice_trig_f64
from numfuse_tests.compile.test_ptx import assert_no_spills, compile_all

C64 = np.dtype(np.complex64)
UNARY = {np.sqrt: False, np.log: False, np.log10: False, np.log2: False, np.log1p: False, np.expm1: True,
         np.exp2: True, np.isnan: False, np.isinf: False, np.isfinite: False, np.sign: False,
         np.reciprocal: False, np.rint: False, np.logical_not: False, np.sin: True, np.cos: True, np.tan: True,
         np.sinh: True, np.cosh: True, np.tanh: True}
# The templates that take glibc's clog (log_complex), and the float64 instructions of its
# float32 x2y2m1: (x - 1)(x + 1) + y * y in float64, rounded once to float32.
CLOG = {np.log, np.log10, np.log2, np.power}
CLOG_F64 = {"cvt.f64.f32", "add.f64", "mul.rn.f64", "cvt.rn.f32.f64"}
BINARY = {np.power: True, np.less: False, np.less_equal: False, np.greater: False, np.greater_equal: False,
          np.logical_and: False, np.logical_or: False, np.logical_xor: False}


def _check(fn, args, trig, dtype, op):
    (kernel, report), = compile_all(fn, *args)
    assert ".entry" in report.ptx
    assert_no_spills(report)
    assert op in {s.op for s in kernel.nest.body if hasattr(s, "op")}
    if dtype == C64:
        f64 = report.f64_instructions
        if op in {u.__name__ for u in CLOG}:
            assert f64, "clogf's float64 |z|**2 - 1 was expected"
            f64 = [line for line in f64 if line.split()[0] not in CLOG_F64]
        if trig:
            assert only_libdevice_trig_f64(dataclasses.replace(report, f64_instructions=f64)), f64[:5]
        else:
            assert f64 == [], f64[:5]


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("ufunc", list(UNARY), ids=lambda u: u.__name__)
def test_unary_complex_template_compiles(ufunc, dtype):
    z = np.ones((4, 8), dtype)
    _check(lambda z: ufunc(z), (z,), UNARY[ufunc], np.dtype(dtype), ufunc.__name__)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("ufunc", list(BINARY), ids=lambda u: u.__name__)
def test_binary_complex_template_compiles(ufunc, dtype):
    z = np.ones((4, 8), dtype)
    _check(lambda z, w: ufunc(z, w), (z, z), BINARY[ufunc], np.dtype(dtype), ufunc.__name__)


def test_complex64_power_of_real_and_scalar_exponents_stays_single_precision():
    z = np.ones((4, 8), C64)
    (kernel, report), = compile_all(lambda z, x: (z ** x, z ** 2, z ** 0.5, 2 ** z), z, np.ones((4, 8), np.float32))
    assert_no_spills(report)
    f64 = [line for line in report.f64_instructions if line.split()[0] not in CLOG_F64]
    assert only_libdevice_trig_f64(dataclasses.replace(report, f64_instructions=f64)), f64[:5]
