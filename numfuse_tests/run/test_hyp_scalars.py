"""Scalars against NumPy: Python int, float and bool operands (NEP 50: they take the array's
dtype, and an out-of-range Python int raises, except in comparisons, which NumPy makes exact),
as literals inside the function and as runtime arguments, on either side of an operator; NumPy
scalar arguments and literals (strong types); 0-d array arguments (NumPy returns scalars from
ufuncs on them, arrays from where/astype/zeros_like); functions of Python scalars only (Python's
own result types); and second calls with new scalar values, which must reach the kernel (the
scalar is a runtime argument, not baked into the kernel).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import numfuse
from numfuse.ir.dtypes import REAL
from numfuse_tests.helpers import PYTHON_OPERATORS, assert_same, check_like_numpy

DTYPES = list(REAL)  # every operation; complex: test_hyp_complex.py
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)
SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck))

OPS = {
    **PYTHON_OPERATORS,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "fmax": np.fmax,
    "fmin": np.fmin,
    "fmod": np.fmod,
    "arctan2": np.arctan2,
    "hypot": np.hypot,
    "copysign": np.copysign,
    "logical_and": np.logical_and,
    "logical_xor": np.logical_xor,
}
COMPARISONS = {"<", "<=", ">", ">=", "==", "!="}


def python_scalars(symbol: str, side: str, dtype):
    """Python scalars for `symbol` with an array of `dtype`, kept where NumPy's result is
    defined (no signed overflow, no integer power with a negative exponent) and, for integer
    arrays, inside the dtype's range (out-of-range ints have their own tests below)."""
    dtype = np.dtype(dtype)
    bools = st.booleans()
    floats = st.one_of(
        st.floats(-1e3, 1e3),
        st.sampled_from([0.0, -0.0, 0.5, 2.5, math.nan, math.inf, -math.inf, 1e300]),
    )
    if symbol == "**":
        if side == "right":  # x ** s
            return st.one_of(st.integers(0, 4), st.floats(-3, 3), bools)
        lo, hi = -3, 3
    elif symbol in ("+", "-", "maximum", "minimum", "fmax", "fmin") or symbol in COMPARISONS:
        lo, hi = -100, 100
    elif symbol == "*":
        lo, hi = -5, 5
    else:
        lo, hi = -20, 20
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(lo, int(info.min)), min(hi, int(info.max))
    return st.one_of(st.integers(lo, hi), floats, bools)


def array_values(dtype, symbol: str):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if symbol == "**":
        if dtype.kind in "iu":
            return st.integers(0, 3)
        return st.floats(-3, 3, width=dtype.itemsize * 8)
    if dtype.kind in "iu":
        return st.integers(0 if dtype.kind == "u" else -20, 20)
    return st.one_of(st.floats(-20, 20, width=dtype.itemsize * 8), st.sampled_from([math.nan, math.inf, -0.0]))


@pytest.mark.parametrize("symbol", list(OPS))
@settings(max_examples=20, **SETTINGS)
@given(data=st.data())
def test_python_scalar_with_array(symbol, data):
    op = OPS[symbol]
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    side = data.draw(st.sampled_from(["left", "right"]), label="side")
    how = data.draw(st.sampled_from(["literal", "argument"]), label="how")
    s = data.draw(python_scalars(symbol, side, dtype), label="s")
    x = data.draw(hnp.arrays(dtype, data.draw(SHAPES, label="shape"), elements=array_values(dtype, symbol)), label="x")
    if how == "literal":
        fn = (lambda x: op(s, x)) if side == "left" else (lambda x: op(x, s))
        check_like_numpy(fn, x)
    else:
        fn = (lambda x, s: op(s, x)) if side == "left" else (lambda x, s: op(x, s))
        check_like_numpy(fn, x, s)


BIG_INTS = [-1, 127, 128, 255, 256, 300, -129, 2**31, 2**32, 2**63 - 1, 2**63, -(2**63), 2**64 - 1]


@pytest.mark.parametrize("s", BIG_INTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("how", ["literal", "argument"])
def test_comparisons_with_python_ints_outside_the_dtype_are_exact(how, dtype, s):
    """NumPy compares Python ints with integer arrays exactly, whatever the int's size (also
    next to the dtype's extremes, where a float64 comparison would round)."""
    extremes = [int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)] if dtype.kind in "iu" else []
    x = np.array([0, 1, 5] + extremes, dtype)
    if how == "literal":
        check_like_numpy(lambda x: (x < s, x == s, s >= x, x != s), x)
    else:
        check_like_numpy(lambda x, s: (x < s, x == s, s >= x, x != s), x, s)


INTEGERS = [d for d in DTYPES if d.kind in "iu"]
ARITHMETIC = ["+", "-", "*", "//", "%", "maximum", "&"]


@pytest.mark.parametrize("how", ["literal", "argument"])
@pytest.mark.parametrize("symbol", ARITHMETIC)
@settings(max_examples=10, **SETTINGS)
@given(
    dtype=st.sampled_from(INTEGERS),
    shape=st.sampled_from([(), (0,), (3,), (2, 0), (2, 3)]),
    s=st.sampled_from([-1, 128, 256, 300, -129, 2**16, 2**31, 2**32, 2**63, -(2**63) - 1]),
)
def test_python_int_out_of_the_dtype_range_raises_like_numpy(how, symbol, dtype, shape, s):
    """NEP 50: int8 array + 300 raises OverflowError (uint8 array - 1 too), whatever the shape,
    when the int is a literal and when it is an argument; in range, it computes."""
    op = OPS[symbol]
    x = np.ones(shape, dtype)
    if how == "literal":
        check_like_numpy(lambda x: op(x, s), x)
    else:
        check_like_numpy(lambda x, s: op(x, s), x, s)


@pytest.mark.parametrize("symbol", ["+", "*", "/", "//", "%", "<", "maximum", "**", "&"])
@settings(max_examples=15, **SETTINGS)
@given(data=st.data())
def test_second_call_with_new_scalar_values(symbol, data):
    """Same shapes, new Python scalar values: the results follow the new values, and no new
    kernel is generated (the scalar is a kernel argument), except for the exponent of `array **
    s`, whose value NumPy's result depends on (bool ** 2 is int8, bool ** 3 int64): that one is
    static, one trace per value."""
    op = OPS[symbol]
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    kind = data.draw(st.sampled_from([int, float, bool]), label="scalar type")
    if symbol == "**":
        values = {int: st.integers(0, 4), float: st.floats(-3, 3), bool: st.booleans()}[kind]
    elif symbol == "&":
        values = {int: st.integers(-20, 20), float: st.just(1.5), bool: st.booleans()}[kind]
    else:
        values = {int: st.integers(-5, 5), float: st.floats(-50, 50), bool: st.booleans()}[kind]
    if kind is int and dtype.kind == "u":
        values = st.integers(0, 4)  # negative ints raise for unsigned arrays (tested above)
    s1, s2 = data.draw(values, label="s1"), data.draw(values, label="s2")
    x = data.draw(hnp.arrays(dtype, data.draw(SHAPES, label="shape"), elements=array_values(dtype, symbol)), label="x")

    def f(x, s):
        y = op(x, s)
        return y, op(s, x), (x * 0 + s) if dtype.kind != "b" else s

    jf = numfuse.jit(f)
    first = check_like_numpy(f, x, s1, jitted=jf)
    second = check_like_numpy(f, x, s2, jitted=jf)
    if first is not None and second is not None and symbol != "**":
        sources = [k.source for k in jf.kernel_sources(x, s1)]
        assert sources == [k.source for k in jf.kernel_sources(x, s2)], "a new kernel for a new scalar value"


def test_second_call_with_new_scalar_value_is_not_stale():
    """The smallest case of the above, with values that cannot coincide."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    jf = numfuse.jit(lambda x, s: (x * s, (x + s).sum(axis=1), s * 2))
    for s in (2.0, -3.5, 0.25):
        assert_same(jf(x, s), (x * s, (x + s).sum(axis=1), s * 2))
    for s in (3, -7):
        assert_same(jf(x, s), (x * s, (x + s).sum(axis=1), s * 2))


NUMPY_SCALARS = st.one_of(
    st.integers(-20, 20).map(np.int8),
    st.integers(-20, 20).map(np.int16),
    st.integers(-20, 20).map(np.int32),
    st.integers(-20, 20).map(np.int64),
    st.integers(0, 20).map(np.uint8),
    st.integers(0, 20).map(np.uint16),
    st.integers(0, 20).map(np.uint32),
    st.integers(0, 20).map(np.uint64),
    st.floats(-20, 20, width=32).map(np.float32),
    st.floats(-20, 20).map(np.float64),
    st.booleans().map(np.bool_),
)


@pytest.mark.parametrize("symbol", ["+", "-", "*", "/", "//", "%", "<", "==", "maximum", "fmin", "&", "copysign"])
@settings(max_examples=20, **SETTINGS)
@given(data=st.data())
def test_numpy_scalar_with_array(symbol, data):
    """NumPy scalars are strong: np.float32(2.0) * int8 array is float32, np.int16(3) + int8
    array is int16."""
    op = OPS[symbol]
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    s = data.draw(NUMPY_SCALARS, label="s")
    how = data.draw(st.sampled_from(["literal", "argument"]), label="how")
    x = data.draw(hnp.arrays(dtype, data.draw(SHAPES, label="shape"), elements=array_values(dtype, symbol)), label="x")
    if how == "literal":
        check_like_numpy(lambda x: (op(x, s), op(s, x)), x)
    else:
        check_like_numpy(lambda x, s: (op(x, s), op(s, x)), x, s)


@settings(max_examples=25, **SETTINGS)
@given(s=NUMPY_SCALARS, t=NUMPY_SCALARS, data=st.data())
def test_numpy_scalar_arguments_only(s, t, data):
    """Functions of NumPy scalars alone return NumPy scalars of NumPy's dtypes."""
    x = np.arange(3.0)

    def f(x, s, t):
        return s + t, s * 2, s > t, np.maximum(s, t), s / 4, x * s

    check_like_numpy(f, x, s, t)


def test_float32_scalar_argument_keeps_float32():
    x = np.linspace(-1, 1, 7).astype(np.float32)
    ints = np.arange(7, dtype=np.int8)

    def f(x, i, s):
        return x * s, i * s, s + 1, s * 2.5, np.sqrt(s), i + np.float32(0.5)

    for s in (np.float32(2.0), np.float32(-0.5)):
        got = check_like_numpy(f, x, ints, s)
        assert [np.asarray(g).dtype for g in got] == [np.float32] * 6


PYTHON_SCALARS = st.one_of(st.integers(-1000, 1000), st.floats(-1e3, 1e3))


@settings(max_examples=30, **SETTINGS)
@given(s=PYTHON_SCALARS, t=PYTHON_SCALARS)
def test_python_scalar_arguments_only_give_python_results(s, t):
    """A function of Python ints and floats computes what Python computes, with Python's types
    (bools: see the next test)."""
    x = np.zeros(2)

    def f(x, s, t):
        return s + t, s - t, s * t, s > t, s == t, -s, abs(s), x + s

    check_like_numpy(f, x, s, t)
    if t != 0:
        check_like_numpy(lambda x, s, t: (s / t, s // t, s % t), x, s, t)


@settings(max_examples=20, **SETTINGS)
@given(s=st.booleans(), t=st.booleans(), n=st.integers(-5, 5))
def test_python_bool_arguments_act_as_python_bools(s, t, n):
    """True + True is 2 and True & False is False (a Python bool), as in Python."""
    x = np.arange(3, dtype=np.int16)
    check_like_numpy(lambda x, s, t: (s & t, s | t, s ^ t, s == t), x, s, t)
    check_like_numpy(lambda x, s, t, n: (s + t, s * n, s + n, x + s), x, s, t, n)


# -- 0-d arrays ---------------------------------------------------------------------------------


@settings(max_examples=25, **SETTINGS)
@given(a=st.sampled_from(DTYPES), b=st.sampled_from(DTYPES), data=st.data())
def test_zero_d_array_arguments(a, b, data):
    """Ufuncs and reductions of 0-d arrays give NumPy scalars; where, astype, zeros_like and .T
    give 0-d arrays; a 0-d array broadcasts against an array. (Next to an empty array:
    test_hyp_programs.py::test_smaller_outputs_next_to_an_empty_output.)"""
    x = data.draw(hnp.arrays(a, (), elements=array_values(a, "+")), label="x")
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=5), label="shape")
    y = data.draw(hnp.arrays(b, shape, elements=array_values(b, "+")), label="y")

    def f(x, y):
        return (x * 2, x + y, np.maximum(x, x), x.sum(), x.max(), x.mean(), np.sum(x, keepdims=True),
                np.where(x > 0, x, 1), x.astype(np.float64), np.zeros_like(x), x.T, x > 1, np.clip(x, 0, 5))

    check_like_numpy(f, x, y)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_zero_d_reductions_give_numpy_scalars(dtype):
    x = np.array(1, dtype)
    check_like_numpy(lambda x: (x.sum(), x.prod(), x.max(), x.min(), x.mean(), x.any(), x.all()), x)
    check_like_numpy(lambda x: (x.sum(axis=None, keepdims=True), x.sum(axis=())), x)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_astype_of_reduction_results_gives_numpy_scalars(dtype):
    """np.float64(3.0).astype(np.int32) is an np.int32, not a 0-d array."""
    x = (np.arange(6) % 3).astype(dtype)
    check_like_numpy(lambda x: (x.sum().astype(np.float32), x.max().astype(np.int16), x.mean().astype(bool)), x)
