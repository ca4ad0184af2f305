"""Every complex template of scalar_impl_complex.py compiles to sm_90 PTX with the real compiler,
for complex64 and complex128: the results have the IR's dtypes, nothing spills, and a complex64
kernel computes in single precision (no f64 instruction, except libdevice's float32 sin/cos
argument reduction where the template calls sin or cos)."""

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
BINARY = {np.power: True, np.less: False, np.less_equal: False, np.greater: False, np.greater_equal: False,
          np.logical_and: False, np.logical_or: False, np.logical_xor: False}


def _check(fn, args, trig, dtype, op):
    (kernel, report), = compile_all(fn, *args)
    assert ".entry" in report.ptx
    assert_no_spills(report)
    assert op in {s.op for s in kernel.nest.body if hasattr(s, "op")}
    if dtype == C64:
        if trig:
            assert only_libdevice_trig_f64(report), report.f64_instructions[:5]
        else:
            assert report.f64_instructions == [], report.f64_instructions[:5]


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
    assert only_libdevice_trig_f64(report), report.f64_instructions[:5]
