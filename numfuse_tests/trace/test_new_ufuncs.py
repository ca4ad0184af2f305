"""Trace tier for the shift, gcd/lcm, bitwise_count, cbrt, ldexp, nextafter, spacing ufuncs and
the two-output ufuncs (np.divmod, np.frexp, np.modf): at trace time, every output's shape and
dtype is NumPy's for every pair of array dtypes, and where NumPy raises numfuse raises the same
exception type. Nothing runs (`jf.graph`); values are the run tier's (run/test_new_ufuncs.py).
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import numfuse
from numfuse.ir.dtypes import COMPLEX, REAL
from numfuse.errors import UnsupportedError
from numfuse.ir.ops import BY_UFUNC, ELEMENTWISE, MULTI_OUTPUT

DTYPES = list(REAL)
BINARY = [np.left_shift, np.right_shift, np.gcd, np.lcm, np.ldexp, np.nextafter, np.divmod]
UNARY = [np.bitwise_count, np.cbrt, np.spacing, np.frexp, np.modf]
NEW = BINARY + UNARY


def flat(result) -> list:
    if isinstance(result, tuple):
        return [r for part in result for r in flat(part)]
    return [np.asarray(result)]


def outcome(fn, *args):
    """(list of (shape, dtype) per output, None) or (None, exception), from NumPy."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return [(r.shape, r.dtype) for r in flat(fn(*args))], None
        except Exception as err:  # noqa: BLE001 - whichever NumPy raises must be mirrored
            return None, err


def traced(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            graph = numfuse.jit(fn).graph(*args)
        except Exception as err:  # noqa: BLE001
            return None, err, None
    return [(v.aval.shape, v.aval.dtype) for v in graph.outputs], None, graph


def assert_like_numpy(fn, *args, what=""):
    expected, np_err = outcome(fn, *args)
    got, nf_err, graph = traced(fn, *args)
    label = f"{what} on {[getattr(a, 'dtype', type(a).__name__) for a in args]}"
    if np_err is not None:
        assert nf_err is not None, f"{label}: NumPy raises {np_err!r}, numfuse traced\n{graph}"
        assert isinstance(nf_err, type(np_err)), f"{label}: NumPy {np_err!r}, numfuse {nf_err!r}"
        return
    assert nf_err is None, f"{label}: NumPy gives {expected}, numfuse raised {nf_err!r}"
    assert got == expected, f"{label}: numfuse {got}, NumPy {expected}\n{graph}"
    return graph


def test_the_new_ufuncs_are_in_the_op_table():
    for ufunc in NEW:
        assert ufunc in BY_UFUNC or ufunc in MULTI_OUTPUT, ufunc
    for parts in MULTI_OUTPUT.values():
        assert all(part in ELEMENTWISE for part in parts)


@pytest.mark.parametrize("ufunc", BINARY, ids=lambda u: u.__name__)
def test_every_array_dtype_pair(ufunc):
    """All 144 pairs of real dtypes, with broadcasting: NumPy's loop (or its TypeError)."""
    for a, b in itertools.product(DTYPES, DTYPES):
        assert_like_numpy(lambda x, y: ufunc(x, y), np.ones((2, 3), a), np.ones(3, b), what=ufunc.__name__)


@pytest.mark.parametrize("ufunc", UNARY, ids=lambda u: u.__name__)
def test_every_dtype_unary(ufunc):
    for dtype in DTYPES:
        graph = assert_like_numpy(lambda x: ufunc(x), np.ones((2, 3), dtype), what=ufunc.__name__)
        assert graph is None or len(graph.outputs) == ufunc.nout


@pytest.mark.parametrize("ufunc", NEW, ids=lambda u: u.__name__)
def test_complex_operands_raise_as_numpy(ufunc):
    """NumPy has no complex loop for any of these: its TypeError, not a kernel."""
    for dtype in COMPLEX:
        x = np.ones(3, dtype)
        expected, np_err = outcome(lambda *a: ufunc(*a), *([x] * ufunc.nin))
        assert np_err is not None
        assert_like_numpy(lambda *a: ufunc(*a), *([x] * ufunc.nin), what=ufunc.__name__)


@pytest.mark.parametrize("ufunc", BINARY, ids=lambda u: u.__name__)
def test_python_scalars_are_weak(ufunc):
    """Python ints, floats and bools beside arrays (literals and arguments), and two Python
    scalars: NumPy's NEP 50 loop, or its error (a literal out of the array dtype's range)."""
    for dtype, value in itertools.product(DTYPES, [0, 3, 200, -1, 2**40, 2.5, True]):
        x = np.ones((2, 2), dtype)
        assert_like_numpy(lambda a: ufunc(a, value), x, what=f"{ufunc.__name__}(x, {value!r})")
        assert_like_numpy(lambda a: ufunc(value, a), x, what=f"{ufunc.__name__}({value!r}, x)")
        if value in (0, 3, 2.5, True):  # an argument's value is unknown at trace time: one that fits
            assert_like_numpy(lambda a, s: ufunc(a, s), x, value, what=f"{ufunc.__name__}(x, s)")
    for s, t in itertools.product([2, 2.5, False], repeat=2):
        assert_like_numpy(lambda a, b: ufunc(a, b), s, t, what=ufunc.__name__)


OPERATORS = {
    "<<": lambda x, y: x << y,
    ">>": lambda x, y: x >> y,
    "divmod": lambda x, y: divmod(x, y),
}


@pytest.mark.parametrize("symbol", list(OPERATORS))
def test_operators_on_every_dtype_pair(symbol):
    fn = OPERATORS[symbol]
    for a, b in itertools.product(DTYPES, DTYPES):
        assert_like_numpy(fn, np.ones((2, 3), a), np.ones(3, b), what=symbol)
    for dtype, value in itertools.product(DTYPES, [0, 3, 300, -1, 2.5, True]):
        x = np.ones(3, dtype)
        assert_like_numpy(lambda a: fn(a, value), x, what=f"x {symbol} {value!r}")
        assert_like_numpy(lambda a: fn(value, a), x, what=f"{value!r} {symbol} x")


def test_shift_operators_trace_the_shift_ufuncs():
    graph = numfuse.jit(lambda x, y: (x << y, x >> 3, 1 << x)).graph(np.ones(4, np.int32), np.ones(4, np.int32))
    prims = [e.prim for e in graph.eqns]
    assert prims.count("left_shift") == 2 and prims.count("right_shift") == 1


def _shift_in_place(x, y, op):
    if op == "<<":
        x <<= y
    else:
        x >>= y
    return x


@pytest.mark.parametrize("op", ["<<", ">>"])
def test_in_place_shifts_follow_numpy_casting(op):
    """`x <<= y` keeps x's dtype where NumPy's same_kind casting allows it, and raises NumPy's
    error where it does not (uint8 <<= int64 array computes in int64)."""
    for a, b in itertools.product(DTYPES, DTYPES):
        x, y = np.ones(3, a), np.ones(3, b)

        def fn(x, y):
            x = x.copy()
            return _shift_in_place(x, y, op)

        assert_like_numpy(fn, x, y, what=f"{op}=")


def test_in_place_shift_of_an_argument_writes_it():
    def fn(x):
        x <<= 2
        x[0] >>= 1
        return x.sum()

    graph = numfuse.jit(fn).graph(np.ones(4, np.int16))
    prims = [e.prim for e in graph.eqns]
    assert "left_shift" in prims and "right_shift" in prims


def test_divmod_is_floor_divide_and_remainder():
    graph = numfuse.jit(lambda x, y: np.divmod(x, y)).graph(np.ones(3), np.ones(3))
    assert [e.prim for e in graph.eqns] == ["floor_divide", "remainder"]
    graph = numfuse.jit(lambda x: np.frexp(x)).graph(np.ones(3, np.float32))
    assert [(e.prim, str(e.out.aval.dtype)) for e in graph.eqns] == [
        ("frexp_mantissa", "float32"), ("frexp_exponent", "int32")]


def test_two_output_ufuncs_of_a_0d_value_have_two_0d_outputs():
    result = numfuse.jit(lambda x: np.modf(x)).trace(np.float64(2.5))
    assert result.graph.outputs[0].aval.shape == ()
    assert len(result.graph.outputs) == 2


def test_float16_nextafter_and_spacing_step_by_float16_ulps():
    """float16 loops use their own ops (a float32 nextafter would step by float32's ulp)."""
    x = np.ones(3, np.float16)
    graph = numfuse.jit(lambda x: (np.nextafter(x, x), np.spacing(x))).graph(x)
    assert [e.prim for e in graph.eqns] == ["nextafter_half", "spacing_half"]
    graph = numfuse.jit(lambda x: (np.nextafter(x, x), np.spacing(x))).graph(x.astype(np.float32))
    assert [e.prim for e in graph.eqns] == ["nextafter", "spacing"]
    # an integer argument that NumPy computes in float16 takes the float16 op too
    graph = numfuse.jit(lambda x: np.spacing(x)).graph(np.ones(3, np.int8))
    assert [e.prim for e in graph.eqns][-1] == "spacing_half"


def test_ldexp_exponent_dtypes():
    """int32 and int64 exponents are two loops; a Python int literal beyond int32 raises, as in
    NumPy; the exponent is not converted to the mantissa's dtype."""
    f = np.ones(3, np.float32)
    graph = assert_like_numpy(lambda x, n: np.ldexp(x, n), f, np.ones(3, np.int64))
    (eqn,) = graph.eqns
    assert [a.aval.dtype for a in eqn.inputs] == [np.float32, np.int64]
    with pytest.raises(OverflowError):
        np.ldexp(f, 2**40)
    with pytest.raises(OverflowError):
        numfuse.jit(lambda x: np.ldexp(x, 2**40)).graph(f)


def test_unsupported_keywords_and_wrong_arity():
    x = np.ones(3)
    with pytest.raises(UnsupportedError):
        numfuse.jit(lambda x: np.frexp(x, out=(x, x)), graph_breaks=False).graph(x)
    with pytest.raises(TypeError):
        numfuse.jit(lambda x: np.divmod(x), graph_breaks=False).graph(x)
    with pytest.raises(UnsupportedError):
        numfuse.jit(lambda x: np.modf(x, dtype=np.float32), graph_breaks=False).graph(x)


def test_new_ufuncs_in_the_docs_table():
    from numfuse.frontend.support import supported_operations_markdown

    table = supported_operations_markdown()
    for ufunc in NEW:
        assert f"`np.{ufunc.__name__}`" in table
    assert "`<<`" in table and "`>>`" in table and "divmod" in table
