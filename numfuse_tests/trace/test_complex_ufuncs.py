"""The complex loops of scalar_impl_complex.py at trace time: each ufunc traces on complex64 and
complex128 operands (alone, beside real arrays, Python and NumPy scalars) to NumPy's result
dtype and shape, and the ufuncs still without a complex loop are refused naming the dtype."""

from __future__ import annotations

import numpy as np
import pytest

import numfuse
from numfuse.ir.dtypes import COMPLEX
from numfuse.ir.ops import BY_UFUNC
from numfuse_tests.trace.test_complex import assert_traces_like_numpy

UNARY = [np.sqrt, np.log, np.log10, np.log2, np.log1p, np.expm1, np.exp2, np.isnan, np.isinf, np.isfinite,
         np.sign, np.reciprocal, np.rint, np.logical_not]
BINARY = [np.power, np.less, np.less_equal, np.greater, np.greater_equal, np.logical_and, np.logical_or,
          np.logical_xor]
Z = np.array([[1 + 2j, 3 - 1j, 0.5j], [2, -1j, 1 + 1j]], np.complex64)
X = np.array([[0.5, 1.5, -2.0], [3.0, 0.0, 1.0]], np.float32)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("ufunc", UNARY, ids=lambda u: u.__name__)
def test_unary_complex_loops_trace_to_numpys_dtype(ufunc, dtype):
    assert "c" in BY_UFUNC[ufunc].impls
    assert_traces_like_numpy(lambda z: ufunc(z), Z.astype(dtype))
    assert_traces_like_numpy(lambda z: ufunc(z[0, 0]), Z.astype(dtype))


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("ufunc", BINARY, ids=lambda u: u.__name__)
def test_binary_complex_loops_trace_to_numpys_dtype(ufunc, dtype):
    assert "c" in BY_UFUNC[ufunc].impls
    z = Z.astype(dtype)
    for args in ((z, z), (z, X), (X, z), (z, X.astype(np.float64)), (z[0], z)):
        assert_traces_like_numpy(lambda a, b: ufunc(a, b), *args)
    for scalar in (2, 2.5, 1j, np.float32(0.5), np.complex128(1j), True):
        assert_traces_like_numpy(lambda a: ufunc(a, scalar), z)
        assert_traces_like_numpy(lambda a: ufunc(scalar, a), z)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_python_operators_on_complex(dtype):
    z = Z.astype(dtype)
    assert_traces_like_numpy(lambda a: (a ** 2, a ** 0.5, 2 ** a, a ** a, a < a, a >= 1, 1j > a), z)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("ufunc", [np.arcsin, np.arccos, np.arctan, np.arcsinh, np.arccosh, np.arctanh, np.maximum, np.minimum,
                                   np.fmax, np.fmin], ids=lambda u: u.__name__)
def test_ufuncs_without_a_complex_loop_are_refused(ufunc, dtype):
    z = Z.astype(dtype)
    assert "c" not in BY_UFUNC[ufunc].impls
    with pytest.raises(numfuse.UnsupportedError, match=rf"np\.{ufunc.__name__} on {np.dtype(dtype)}"):
        numfuse.jit(lambda a: ufunc(*[a] * ufunc.nin), graph_breaks=False).graph(z)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_complex_max_and_min_reductions_are_refused(dtype):
    z = Z.astype(dtype)
    for fn in (np.max, np.min, np.maximum.reduce, np.nanmax):
        with pytest.raises(numfuse.UnsupportedError):
            numfuse.jit(lambda a: fn(a), graph_breaks=False).graph(z)


def test_a_template_that_calls_another_is_inlined_whole():
    import ast

    from numfuse.ir import scalar_impl_complex as C
    from numfuse.codegen.templates import inline

    stmts, result = inline(C.log10_complex, [ast.Name("a", ast.Load())], "complex64", "k_", "float32")
    source = "\n".join(ast.unparse(s) for s in stmts) + "\n" + ast.unparse(result)
    assert "log_complex" not in source  # the call became log's statements
    assert "k_z__x = a.real" in source and "k_z__ri = math.atan2(k_z__y, k_z__x)" in source
    assert "k_z = complex(k_z__rr, k_z__ri)" in source
    assert "R(" not in source and "float32(k_z.real) * float32(0.4342944819032518)" in source
