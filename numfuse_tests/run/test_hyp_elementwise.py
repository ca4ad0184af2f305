"""Every elementwise operation of numfuse/ir/ops.py against NumPy, on every input dtype, with
hypothesis drawing shapes (rank 0-3, size-one and zero-size dimensions), broadcasting pairs and
values.

Values stay inside each operation's well-defined domain: no logarithm of negatives or zero, no
exp overflow, no integer overflow of signed types, no integer powers with negative exponents and
no integer reciprocal of zero. Integer division and remainder by zero are drawn (NumPy defines
them as 0), and so are NaN, infinities and signed zeros wherever IEEE arithmetic defines the
result.

Where NumPy has no loop for the input dtypes, numfuse must raise the same kind of error. Where
NumPy's loop computes in float16 (np.exp of uint8, say), numfuse computes in float32 and rounds to
float16 after each operation, as NumPy does.
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
from numfuse.ir.ops import ELEMENTWISE
from numfuse_tests.helpers import PYTHON_OPERATORS, check_like_numpy

DTYPES = list(REAL)  # every operation; complex: test_hyp_complex.py
UNARY = sorted(name for name, op in ELEMENTWISE.items() if op.ufunc is not None and op.nin == 1)
BINARY = sorted(name for name, op in ELEMENTWISE.items() if op.ufunc is not None and op.nin == 2)
SPECIALS = [math.nan, math.inf, -math.inf, 0.0, -0.0]

FEW = settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
SOME = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))


# -- value domains ------------------------------------------------------------------------------


class Domain:
    """Where one operand's values come from: [lo, hi] (integers: the integers inside), whether
    0 is excluded, and whether NaN, +-inf and +-0 may appear (floats only)."""

    def __init__(self, lo, hi, specials=False, nonzero=False):
        self.lo, self.hi, self.specials, self.nonzero = lo, hi, specials, nonzero


def domains(name: str, loop_kind: str) -> list[Domain]:
    """Per-operand domains of ufunc `name` computing in a loop of kind 'b', 'i', 'u' or 'f'."""
    integer_loop = loop_kind in "biu"
    if integer_loop:
        table = {
            "add": (-60, 60),
            "subtract": (-60, 60),
            "multiply": (-11, 11),
            "square": (-11, 11),
            "floor_divide": (-20, 20),
            "remainder": (-20, 20),
            "fmod": (-20, 20),
        }
        if name == "power":
            return [Domain(-3, 3), Domain(0, 4)]
        if name == "reciprocal":
            return [Domain(-5, 5, nonzero=True)]
        lo, hi = table.get(name, (-20, 20))
        return [Domain(lo, hi)] * ELEMENTWISE[name].nin
    positive = {"log": (1e-3, 100.0), "log2": (1e-3, 100.0), "log10": (1e-3, 100.0), "sqrt": (0.0, 100.0)}
    bounded = {
        "log1p": (-0.99, 100.0),
        "arcsin": (-1.0, 1.0),
        "arccos": (-1.0, 1.0),
        "arctanh": (-0.99, 0.99),
        "arccosh": (1.0, 100.0),
        "tan": (-1.5, 1.5),
    }
    if name in positive:
        return [Domain(*positive[name])]
    if name in bounded:
        return [Domain(*bounded[name])]
    if name == "power":
        return [Domain(0.1, 4.0), Domain(-3.0, 3.0)]
    # Everything else is defined by IEEE arithmetic on the whole line, specials included.
    return [Domain(-10.0, 10.0, specials=True)] * ELEMENTWISE[name].nin


def elements(dtype: np.dtype, dom: Domain):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.just(True) if dom.nonzero else st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(math.ceil(dom.lo), int(info.min)), min(math.floor(dom.hi), int(info.max))
        if lo > hi:  # arctanh's open interval on integers: only 0
            lo = hi = 0
        values = st.integers(lo, hi)
        return values.filter(lambda v: v != 0) if dom.nonzero else values
    width = 32 if dtype == np.float32 else 64
    values = st.floats(*representable(dom.lo, dom.hi, dtype), width=width)
    if dom.nonzero:
        values = values.filter(lambda v: v != 0)
    if dom.specials:
        values = st.one_of(values, st.sampled_from(SPECIALS))
    return values


def representable(lo: float, hi: float, dtype) -> tuple[float, float]:
    """[lo, hi] shrunk to bounds that `dtype` holds exactly (hypothesis requires that)."""
    t = np.dtype(dtype).type
    a, b = t(lo), t(hi)
    if a < lo:
        a = np.nextafter(a, t(np.inf))
    if b > hi:
        b = np.nextafter(b, t(-np.inf))
    return float(a), float(b)


def arrays(dtype, shape, dom: Domain):
    return hnp.arrays(np.dtype(dtype), shape, elements=elements(dtype, dom))


# -- comparing ----------------------------------------------------------------------------------


def loop_kind(ufunc, in_dtypes) -> str | None:
    """The kind of the loop NumPy picks for these input dtypes, or None if there is none."""
    try:
        resolved = ufunc.resolve_dtypes(tuple(in_dtypes) + (None,) * ufunc.nout)
    except Exception:  # noqa: BLE001
        return None
    return resolved[ELEMENTWISE[ufunc.__name__].type_from].kind


def ufunc_fn(ufunc):
    if ufunc.nin == 1:
        return lambda x: ufunc(x)
    return lambda x, y: ufunc(x, y)


# -- unary --------------------------------------------------------------------------------------

SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)
PAIRS = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=5)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", UNARY)
@FEW
@given(data=st.data())
def test_unary_op_on_every_dtype(name, dtype, data):
    ufunc = ELEMENTWISE[name].ufunc
    kind = loop_kind(ufunc, [dtype]) or np.dtype(dtype).kind
    shape = data.draw(SHAPES, label="shape")
    x = data.draw(arrays(dtype, shape, domains(name, kind)[0]), label="x")
    check_like_numpy(ufunc_fn(ufunc), x)


# -- binary, both operands of one dtype ---------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", BINARY)
@FEW
@given(data=st.data())
def test_binary_op_on_every_dtype_with_broadcasting(name, dtype, data):
    ufunc = ELEMENTWISE[name].ufunc
    kind = loop_kind(ufunc, [dtype, dtype]) or np.dtype(dtype).kind
    shapes = data.draw(PAIRS, label="shapes").input_shapes
    doms = domains(name, kind)
    x = data.draw(arrays(dtype, shapes[0], doms[0]), label="x")
    y = data.draw(arrays(dtype, shapes[1], doms[1]), label="y")
    check_like_numpy(ufunc_fn(ufunc), x, y)


# -- binary, mixed dtypes (NumPy's promotion picks the loop) ------------------------------------


def draw_mixed_pair(data, name, ufunc):
    """Two arrays of independently drawn dtypes and broadcastable shapes, inside `name`'s domain."""
    a, b = data.draw(st.sampled_from(DTYPES), label="a"), data.draw(st.sampled_from(DTYPES), label="b")
    kind = loop_kind(ufunc, [a, b]) or "f"
    shapes = data.draw(PAIRS, label="shapes").input_shapes
    doms = domains(name, kind)
    x = data.draw(arrays(a, shapes[0], doms[0]), label="x")
    y = data.draw(arrays(b, shapes[1], doms[1]), label="y")
    return x, y


@pytest.mark.parametrize("name", BINARY)
@SOME
@given(data=st.data())
def test_binary_op_on_mixed_dtypes(name, data):
    ufunc = ELEMENTWISE[name].ufunc
    x, y = draw_mixed_pair(data, name, ufunc)
    check_like_numpy(ufunc_fn(ufunc), x, y)


# -- operators ----------------------------------------------------------------------------------

OPERATORS = PYTHON_OPERATORS
OPERATOR_UFUNC = {
    "+": "add", "-": "subtract", "*": "multiply", "/": "divide", "//": "floor_divide",
    "%": "remainder", "**": "power", "&": "bitwise_and", "|": "bitwise_or", "^": "bitwise_xor",
    "<": "less", "<=": "less_equal", ">": "greater", ">=": "greater_equal", "==": "equal",
    "!=": "not_equal",
}


@pytest.mark.parametrize("symbol", list(OPERATORS))
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_python_operators(symbol, data):
    name = OPERATOR_UFUNC[symbol]
    ufunc = ELEMENTWISE[name].ufunc
    x, y = draw_mixed_pair(data, name, ufunc)
    check_like_numpy(OPERATORS[symbol], x, y)


UNARY_OPERATORS = {"-": lambda x: -x, "+": lambda x: +x, "abs": lambda x: abs(x), "~": lambda x: ~x}
UNARY_OPERATOR_UFUNC = {"-": "negative", "+": "positive", "abs": "absolute", "~": "invert"}


@pytest.mark.parametrize("symbol", list(UNARY_OPERATORS))
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_unary_python_operators(symbol, data):
    name = UNARY_OPERATOR_UFUNC[symbol]
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    kind = loop_kind(ELEMENTWISE[name].ufunc, [dtype]) or "f"
    x = data.draw(arrays(dtype, data.draw(SHAPES, label="shape"), domains(name, kind)[0]), label="x")
    check_like_numpy(UNARY_OPERATORS[symbol], x)


# -- semantics that differ between languages ----------------------------------------------------

SIGNED = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64)]


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    dtype=st.sampled_from(SIGNED),
    shape=st.integers(0, 40),
    data=st.data(),
)
def test_integer_floor_division_and_remainder_follow_python_sign_rules(dtype, shape, data):
    a = data.draw(hnp.arrays(dtype, shape, elements=st.integers(-30, 30)), label="a")
    b = data.draw(hnp.arrays(dtype, shape, elements=st.integers(-7, 7)), label="b")

    def f(a, b):
        return a // b, a % b, np.fmod(a, b), np.floor_divide(b, 3), np.remainder(-7, b)

    check_like_numpy(f, a, b)
    # Independently of NumPy: Python's own rules, and 0 for a zero divisor.
    q, r = numfuse.jit(lambda a, b: (a // b, a % b))(a, b)
    for ai, bi, qi, ri in zip(a.tolist(), b.tolist(), q.tolist(), r.tolist()):
        assert (qi, ri) == ((ai // bi, ai % bi) if bi else (0, 0)), (ai, bi, qi, ri)


INTS = [d for d in DTYPES if d.kind in "iub"]


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(a=st.sampled_from(INTS), b=st.sampled_from(INTS), shapes=PAIRS, data=st.data())
def test_integer_true_division_gives_float64(a, b, shapes, data):
    x = data.draw(arrays(a, shapes.input_shapes[0], Domain(-20, 20)), label="x")
    y = data.draw(arrays(b, shapes.input_shapes[1], Domain(-20, 20)), label="y")
    got = numfuse.jit(lambda x, y: x / y)(x, y)
    assert np.asarray(got).dtype == np.float64
    check_like_numpy(lambda x, y: (x / y, np.true_divide(y, x)), x, y)


FLOATS = [np.dtype(np.float32), np.dtype(np.float64)]


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(dtype=st.sampled_from(FLOATS), shapes=PAIRS, data=st.data())
def test_maximum_minimum_propagate_nan_and_fmax_fmin_ignore_it(dtype, shapes, data):
    values = st.one_of(st.floats(-5, 5, width=dtype.itemsize * 8), st.just(math.nan), st.sampled_from([math.inf, -math.inf]))
    x = data.draw(hnp.arrays(dtype, shapes.input_shapes[0], elements=values), label="x")
    y = data.draw(hnp.arrays(dtype, shapes.input_shapes[1], elements=values), label="y")

    def f(x, y):
        return np.maximum(x, y), np.minimum(x, y), np.fmax(x, y), np.fmin(x, y)

    check_like_numpy(f, x, y)
    mx, mn, fmx, fmn = numfuse.jit(f)(x, y)
    xb, yb = np.broadcast_arrays(x, y)
    either = np.isnan(xb) | np.isnan(yb)
    both = np.isnan(xb) & np.isnan(yb)
    np.testing.assert_array_equal(np.isnan(mx), either)
    np.testing.assert_array_equal(np.isnan(mn), either)
    np.testing.assert_array_equal(np.isnan(fmx), both)
    np.testing.assert_array_equal(np.isnan(fmn), both)
