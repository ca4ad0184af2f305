"""Result dtypes and shapes at trace time are NumPy's, errors included.

Every case runs the same function twice: with NumPy on real arrays, and traced by numfuse
(`jf.graph(...)`, nothing runs). Where NumPy returns, the traced output's aval has NumPy's shape
and dtype. Where NumPy raises, numfuse raises the same exception type while tracing.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import numfuse
from numfuse.ir.ops import BY_UFUNC

DTYPES = [
    np.dtype(name)
    for name in (
        "bool", "int8", "int16", "int32", "int64",
        "uint8", "uint16", "uint32", "uint64", "float32", "float64",
    )
]
UFUNCS = sorted(BY_UFUNC, key=lambda u: u.__name__)
BINARY = [u for u in UFUNCS if u.nin == 2]
UNARY = [u for u in UFUNCS if u.nin == 1]

SETTINGS = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    derandomize=True,
    database=None,
)


def numpy_outcome(fn, *args):
    """(result as an array, None) or (None, the exception NumPy raised)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return np.asarray(fn(*args)), None
        except Exception as err:  # noqa: BLE001 - any NumPy error must be mirrored
            return None, err


def traced_outcome(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return numfuse.jit(fn).graph(*args), None
        except Exception as err:  # noqa: BLE001
            return None, err


def assert_like_numpy(fn, *args, what=""):
    expected, np_err = numpy_outcome(fn, *args)
    graph, nf_err = traced_outcome(fn, *args)
    label = f"{what} with {[getattr(a, 'dtype', a) for a in args]}"
    if np_err is not None:
        assert nf_err is not None, f"{label}: NumPy raises {np_err!r}, numfuse traced:\n{graph}"
        assert isinstance(nf_err, type(np_err)), (
            f"{label}: NumPy raises {type(np_err).__name__}({np_err}), numfuse "
            f"{type(nf_err).__name__}({nf_err})"
        )
        return
    assert nf_err is None, f"{label}: NumPy gives {expected.dtype}{expected.shape}, numfuse raised {nf_err!r}"
    aval = graph.outputs[0].aval
    assert (aval.shape, aval.dtype) == (expected.shape, expected.dtype), (
        f"{label}: numfuse {aval}, NumPy {expected.dtype}{list(expected.shape)}"
    )


# -- strategies ----------------------------------------------------------------------------------

dims = st.integers(0, 3)
base_shapes = st.lists(dims, min_size=0, max_size=3).map(tuple)


@st.composite
def broadcastable_to(draw, shape):
    """A shape that broadcasts with `shape`: leading axes dropped, some sizes made 1."""
    keep = draw(st.integers(0, len(shape)))
    tail = shape[len(shape) - keep:]
    return tuple(draw(st.sampled_from([s, 1])) for s in tail)


# Python literals: anything NumPy may accept or reject for a dtype (out of range ints raise
# OverflowError against small integer arrays), within what fits int64 or uint64.
python_literals = st.one_of(
    st.integers(-(2**63), 2**64 - 1),
    st.sampled_from([0, 1, -1, 2, 127, 128, 255, 256, -129, 300, 65536, 2**31, 2**32, 2**63 - 1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
)
# Python scalar arguments: their value is a kernel argument, so numfuse types them by their type
# alone (NEP 50). Values that fit every dtype, so that NumPy's result depends on the type only.
python_arguments = st.one_of(
    st.integers(0, 100), st.floats(-100, 100, allow_nan=False), st.booleans()
)


@st.composite
def operand(draw, shape):
    kind = draw(st.sampled_from(["array", "array", "literal", "argument"]))
    if kind == "array":
        return "array", np.ones(shape, draw(st.sampled_from(DTYPES)))
    if kind == "literal":
        return "literal", draw(python_literals)
    return "argument", draw(python_arguments)


def build(ufunc, operands):
    """The function to trace (array and argument operands become its parameters) and its args."""
    args, slots = [], []
    for kind, value in operands:
        if kind == "literal":
            slots.append(("literal", value))
        else:
            slots.append(("param", len(args)))
            args.append(value)

    def fn(*params):
        values = [value if kind == "literal" else params[value] for kind, value in slots]
        return ufunc(*values)

    return fn, args


# -- ufuncs --------------------------------------------------------------------------------------


@SETTINGS
@given(st.data())
def test_binary_ufunc_promotion_and_errors(data):
    ufunc = data.draw(st.sampled_from(BINARY), label="ufunc")
    shape = data.draw(base_shapes, label="shape")
    first = data.draw(operand(shape), label="first")
    second = data.draw(operand(data.draw(broadcastable_to(shape))), label="second")
    if data.draw(st.booleans()):
        first, second = second, first
    if first[0] == "literal" and second[0] == "literal":  # numfuse would trace nothing
        first = ("array", np.ones(shape, data.draw(st.sampled_from(DTYPES))))
    fn, args = build(ufunc, [first, second])
    assert_like_numpy(fn, *args, what=f"np.{ufunc.__name__}({first[0]}, {second[0]}) {first[1]!r:.40} {second[1]!r:.40}")


FLOAT_BINARY = [u for u in BINARY if any(t.startswith("dd") for t in u.types)]


@SETTINGS
@given(st.sampled_from(FLOAT_BINARY), st.sampled_from([np.float32, np.float64]), base_shapes, base_shapes,
       st.booleans())
def test_binary_ufunc_shapes(ufunc, dtype, shape1, shape2, wide_second):
    """Any two shapes: NumPy's broadcast shape, or its ValueError (on float operands, which
    every ufunc drawn here has a loop for)."""
    first = np.ones(shape1, dtype)
    second = np.ones(shape2, np.float64 if wide_second else dtype)
    assert_like_numpy(lambda a, b: ufunc(a, b), first, second, what=f"np.{ufunc.__name__}")


def test_dtype_error_comes_before_shape_error():
    """NumPy resolves the loop before it broadcasts: a bool subtract of unbroadcastable shapes
    is a TypeError, not a ValueError."""
    a, b = np.ones(2, bool), np.ones(3, bool)
    for fn in (lambda x, y: x - y, lambda x, y: np.bitwise_and(x.astype(np.float32), y)):
        assert_like_numpy(fn, a, b, what="dtype and shape errors together")


@SETTINGS
@given(st.sampled_from(UNARY), st.sampled_from(DTYPES), base_shapes)
def test_unary_ufunc_promotion(ufunc, dtype, shape):
    assert_like_numpy(lambda x: ufunc(x), np.ones(shape, dtype), what=f"np.{ufunc.__name__}")


@pytest.mark.parametrize("ufunc", BINARY, ids=lambda u: u.__name__)
def test_every_array_dtype_pair(ufunc):
    """Exhaustive over the 121 array dtype pairs: the loop NumPy picks is the one traced."""
    for a, b in itertools.product(DTYPES, DTYPES):
        assert_like_numpy(lambda x, y: ufunc(x, y), np.ones((2, 3), a), np.ones(3, b), what=f"np.{ufunc.__name__}")


@pytest.mark.parametrize("ufunc", BINARY, ids=lambda u: u.__name__)
def test_python_scalar_arguments_are_weak(ufunc):
    """Python int, float and bool arguments (and pairs of them, with no array at all)."""
    for dtype, value in itertools.product(DTYPES, [0, 3, 2.5, True]):
        x = np.ones((2, 2), dtype)
        assert_like_numpy(lambda a, s: ufunc(a, s), x, value, what=f"np.{ufunc.__name__}")
        assert_like_numpy(lambda s, a: ufunc(s, a), value, x, what=f"np.{ufunc.__name__}")
    for s, t in itertools.product([2, 2.5, False], repeat=2):
        assert_like_numpy(lambda a, b: ufunc(a, b), s, t, what=f"np.{ufunc.__name__}")


def test_numpy_scalars_are_strong():
    """NumPy scalars take part in promotion with their own dtype, as literals and as arguments
    (np.float32 array + np.float64(0.5) is float64). All binary ufuncs, all dtype pairs."""
    failures = []
    # Every dtype pair for an arithmetic, a comparison and a float-only ufunc; pairs where
    # a strong scalar changes the result for the others.
    full = {np.add, np.less, np.arctan2}
    few = [(np.dtype(np.float32), np.dtype(np.float64)), (np.dtype(np.int8), np.dtype(np.int64)),
           (np.dtype(np.uint8), np.dtype(np.int8)), (np.dtype(bool), np.dtype(np.uint16))]
    for ufunc in BINARY:
        pairs = itertools.product(DTYPES, DTYPES) if ufunc in full else few
        for dtype, scalar_dtype in pairs:
            scalar = scalar_dtype.type(1)
            x = np.ones(3, dtype)
            for fn, args, what in [
                (lambda a, s: ufunc(a, s), (x, scalar), "argument"),
                (lambda s, a: ufunc(s, a), (scalar, x), "argument"),
                (lambda a: ufunc(a, scalar), (x,), "literal"),
            ]:
                try:
                    assert_like_numpy(fn, *args, what=f"np.{ufunc.__name__} with the {what} {scalar!r}")
                except AssertionError as err:
                    failures.append(str(err).splitlines()[0])
    assert not failures, f"{len(failures)} mismatches, e.g.:\n" + "\n".join(failures[:10])


def test_float64_scalar_is_not_a_python_float():
    """np.float64 subclasses Python's float, yet NumPy treats it as a strong float64."""
    x = np.ones(3, np.float32)
    assert (x + np.float64(0.5)).dtype == np.float64
    graph = numfuse.jit(lambda a, s: a + s).graph(x, np.float64(0.5))
    assert graph.outputs[0].aval.dtype == np.float64
    graph = numfuse.jit(lambda a: a * np.float64(0.5)).graph(x)
    assert graph.outputs[0].aval.dtype == np.float64


# -- literals and NumPy's errors -----------------------------------------------------------------


@pytest.mark.parametrize(
    "fn, dtype, error",
    [
        (lambda x: np.add(x, 300), np.uint8, OverflowError),
        (lambda x: x + 300, np.uint8, OverflowError),
        (lambda x: 300 - x, np.uint8, OverflowError),
        (lambda x: x * -1, np.uint16, OverflowError),
        (lambda x: x + 2**40, np.int32, OverflowError),
        (lambda x: x + 2**64, np.uint64, OverflowError),
        (lambda x: x ** -1, np.int32, ValueError),
        (lambda x: np.bitwise_and(x, 1), np.float32, TypeError),
        (lambda x: x - True, np.bool_, TypeError),
        (lambda x: -x, np.bool_, TypeError),
        (lambda x: x.sum(axis=2), np.float32, np.exceptions.AxisError),
        (lambda x: x.max(axis=-3), np.float32, np.exceptions.AxisError),
        (lambda x: np.mean(x, axis=(0, 5)), np.float32, np.exceptions.AxisError),
        (lambda x: x.sum(axis=(0, 0)), np.float32, ValueError),
        (lambda x: x + np.ones((3, 2), np.float32), np.float32, ValueError),
        (lambda x: np.where(x > 0, x, np.ones(7)), np.float32, ValueError),
    ],
)
def test_numpy_errors_at_trace_time(fn, dtype, error):
    x = np.ones((2, 3), dtype)
    with pytest.raises(error):
        with np.errstate(all="ignore"):
            fn(x)
    with pytest.raises(error):
        numfuse.jit(fn).graph(x)


@pytest.mark.parametrize("fn", [lambda x: x.max(axis=0), lambda x: np.min(x), lambda x: np.amax(x, axis=(0, 1))])
def test_reduction_without_identity_over_empty_axis(fn):
    x = np.ones((0, 3), np.float32)
    with pytest.raises(ValueError):
        fn(x)
    with pytest.raises(ValueError):
        numfuse.jit(fn).graph(x)
    # Over a non-empty axis of an empty array there is nothing to complain about.
    graph = numfuse.jit(lambda a: a.max(axis=1)).graph(x)
    assert graph.outputs[0].aval.shape == (0,)


@pytest.mark.parametrize(
    "fn, dtype",
    [
        (lambda x: np.exp(x), np.uint8),
        (lambda x: np.sqrt(x), np.int8),
        (lambda x: np.sin(x), np.bool_),
        (lambda x: np.rint(x), np.int8),
        (lambda x: x.sum(dtype=np.float16), np.float32),
        (lambda x: x.astype(np.float16), np.float32),
        (lambda x: x + np.float16(1), np.int8),
    ],
)
def test_float16_results_like_numpy(fn, dtype):
    """Where NumPy computes in float16 (np.exp of uint8, say), numfuse does too."""
    x = np.ones(4, dtype)
    with np.errstate(all="ignore"):
        assert np.asarray(fn(x)).dtype == np.float16
    assert numfuse.jit(fn).graph(x).outputs[0].aval.dtype == np.float16


@pytest.mark.parametrize("literal", [300, -1, 2**63, 2**64, -(2**63) - 1])
def test_comparison_with_out_of_range_int_literal(literal):
    """NumPy compares Python ints exactly against any integer dtype, even past uint64."""
    for dtype in (np.uint8, np.int64, np.uint64):
        x = np.ones(3, dtype)
        for fn in (lambda a: a < literal, lambda a: a == literal, lambda a: literal >= a):
            assert_like_numpy(fn, x, what=f"comparison with {literal}")


def test_out_of_range_comparison_is_exact_for_int64():
    """int64 < 2**63 is True for every int64, and 2**63 - 1 == 2**63 is False; computing the
    comparison in float64 rounds 2**63 - 1 up to 2**63 and gets both wrong. No integer operand
    may pass through a float conversion."""
    x = np.array([2**63 - 1, 0], np.int64)
    assert (x < 2**63).all() and not (x == 2**63).any()
    for fn in (lambda a: a < 2**63, lambda a: a == 2**63, lambda a: a >= 2**63):
        graph = numfuse.jit(fn).graph(x)
        lossy = [
            e for e in graph.eqns
            if e.prim == "convert" and e.inputs[0].aval.dtype.kind in "iu" and e.out.aval.dtype.kind == "f"
        ]
        assert not lossy, f"int64 converted to float for an exact comparison:\n{graph}"


# -- NumPy functions with scalar operands ---------------------------------------------------------

SCALARS = [0, 1, -1, 300, 2.5, True, np.float32(1), np.int8(2), np.uint64(3), np.float64(1)]


def _as_dtype(v):
    return v.dtype if isinstance(v, np.generic) else type(v)


ARRAY_FUNCTIONS = {
    "where": [
        lambda a, v: np.where(a > 0, a, v),
        lambda a, v: np.where(a > 0, v, a),
        lambda a, v: np.where(a > 0, v, 2),
    ],
    "clip": [
        lambda a, v: np.clip(a, v, None),
        lambda a, v: np.clip(a, None, v),
        lambda a, v: np.clip(a, v, v),
        lambda a, v: a.clip(v),
    ],
    "full_like": [lambda a, v: np.full_like(a, v)],
    "zeros_like": [lambda a, v: np.zeros_like(a, dtype=_as_dtype(v)), lambda a, v: np.ones_like(a)],
    "astype": [lambda a, v: a.astype(_as_dtype(v)), lambda a, v: np.astype(a, _as_dtype(v))],
}


@pytest.mark.parametrize("name", list(ARRAY_FUNCTIONS))
def test_array_functions_with_scalars(name):
    """np.where, np.clip, np.full_like, ... with literal scalars (NumPy's dtypes and errors:
    np.full_like(uint8 array, 300) raises OverflowError) and with scalar arguments."""
    for dtype, value, fn in itertools.product(DTYPES, SCALARS, ARRAY_FUNCTIONS[name]):
        x = np.ones((2, 3), dtype)
        assert_like_numpy(lambda a: fn(a, value), x, what=f"{name} with the literal {value!r}")
        # As an argument (its value unknown while tracing) where it is an operand, not a dtype,
        # with values that fit every dtype.
        if name in ("where", "clip", "full_like") and not (isinstance(value, int) and not 0 <= value <= 100):
            assert_like_numpy(fn, x, value, what=f"{name} with the argument {value!r}")


# -- reductions ----------------------------------------------------------------------------------

REDUCTIONS = ["sum", "prod", "max", "min", "mean", "any", "all"]
NO_VALUE = object()


@st.composite
def axis_arguments(draw, ndim):
    choice = draw(st.integers(0, 4))
    if choice == 0:
        return NO_VALUE
    if choice == 1:
        return None
    if choice == 2:
        return draw(st.integers(-ndim - 1, ndim))  # sometimes out of range
    return tuple(draw(st.lists(st.integers(-ndim, max(ndim - 1, 0)), max_size=3)))  # maybe repeated


@SETTINGS
@given(st.data())
def test_reduction_promotion_and_errors(data):
    kind = data.draw(st.sampled_from(REDUCTIONS), label="kind")
    method = data.draw(st.booleans(), label="method")
    # 0-d arrays have their own test: NumPy's reductions accept axis=0 and axis=-1 on them.
    shape = data.draw(st.lists(dims, min_size=1, max_size=3).map(tuple), label="shape")
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    kwargs = {}
    axis = data.draw(axis_arguments(len(shape)), label="axis")
    if axis is not NO_VALUE:
        kwargs["axis"] = axis
    keepdims = data.draw(st.sampled_from([NO_VALUE, True, False]), label="keepdims")
    if keepdims is not NO_VALUE:
        kwargs["keepdims"] = keepdims
    # dtype= is valid for sum, prod and mean; np.max/np.min/np.any/np.all reject it (TypeError).
    # (ndarray.any/all(dtype=) are checked in a test of their own.)
    if not (method and kind in ("any", "all")) and data.draw(st.booleans(), label="with dtype"):
        kwargs["dtype"] = data.draw(st.sampled_from(DTYPES + [np.dtype(np.float16)]), label="dtype=")
    if method:
        fn = lambda x: getattr(x, kind)(**kwargs)  # noqa: E731
    else:
        fn = lambda x: getattr(np, kind)(x, **kwargs)  # noqa: E731
    what = f"{'x.' if method else 'np.'}{kind}({kwargs}) on {dtype}{list(shape)}"
    assert_like_numpy(fn, np.ones(shape, dtype), what=what)


@pytest.mark.parametrize("kind", REDUCTIONS)
def test_reductions_of_0d_arrays(kind):
    """A quirk NumPy keeps: reductions (not mean) of a 0-d array accept axis=0 and axis=-1,
    while axis=(0,) and axis=1 raise AxisError."""
    for dtype in (np.dtype(bool), np.dtype(np.int32), np.dtype(np.float32)):
        x = np.ones((), dtype)
        for kwargs in ({"axis": 0}, {"axis": -1}, {"axis": (0,)}, {"axis": 1}, {"axis": ()}, {"axis": None},
                       {"axis": 0, "keepdims": True}):
            assert_like_numpy(lambda a: getattr(np, kind)(a, **kwargs), x, what=f"np.{kind}({kwargs}) of a 0-d array")


@pytest.mark.parametrize("kind", REDUCTIONS)
def test_every_reduction_dtype(kind):
    for dtype in DTYPES:
        for axis, keepdims in [(None, False), (1, False), (0, True), ((0, 1), True), (-1, False)]:
            assert_like_numpy(
                lambda x: getattr(np, kind)(x, axis=axis, keepdims=keepdims),
                np.ones((3, 4), dtype),
                what=f"np.{kind}(axis={axis}, keepdims={keepdims})",
            )


@pytest.mark.parametrize("kind", ["sum", "prod", "mean"])
def test_reduction_dtype_argument(kind):
    for dtype, acc in itertools.product(DTYPES, DTYPES):
        assert_like_numpy(
            lambda x: getattr(np, kind)(x, axis=0, dtype=acc), np.ones((2, 3), dtype), what=f"np.{kind}(dtype={acc})"
        )


@pytest.mark.parametrize("kind", ["any", "all"])
def test_any_all_methods_accept_dtype_bool(kind):
    """ndarray.any/all take dtype= (only bool has a loop); np.any/np.all do not."""
    x = np.ones((2, 3), np.float32)
    assert_like_numpy(lambda a: getattr(a, kind)(axis=1, dtype=bool), x, what=f"x.{kind}(dtype=bool)")
    assert_like_numpy(lambda a: getattr(a, kind)(dtype=np.float64), x, what=f"x.{kind}(dtype=float64)")
    assert_like_numpy(lambda a: getattr(np, kind)(a, dtype=bool), x, what=f"np.{kind}(dtype=bool)")


@pytest.mark.parametrize(
    "ufunc", [np.add, np.multiply, np.maximum, np.minimum, np.logical_or, np.logical_and], ids=lambda u: u.__name__
)
def test_ufunc_reduce(ufunc):
    for dtype in DTYPES:
        x = np.ones((2, 3), dtype)
        for kwargs in ({}, {"axis": 1}, {"axis": None}, {"axis": 1, "keepdims": True}, {"axis": 2}):
            assert_like_numpy(lambda a: ufunc.reduce(a, **kwargs), x, what=f"np.{ufunc.__name__}.reduce({kwargs})")
        assert_like_numpy(lambda a: ufunc.reduce(a, 0), x, what=f"np.{ufunc.__name__}.reduce(x, 0)")
        empty = np.ones((0, 3), dtype)
        assert_like_numpy(lambda a: ufunc.reduce(a), empty, what=f"np.{ufunc.__name__}.reduce(empty)")


@pytest.mark.parametrize(
    "ufunc", [np.add, np.multiply, np.maximum, np.minimum, np.logical_or, np.logical_and], ids=lambda u: u.__name__
)
def test_ufunc_reduce_dtype_argument(ufunc):
    for dtype, acc in itertools.product([np.dtype(bool), np.dtype(np.int8), np.dtype(np.float32)], DTYPES):
        assert_like_numpy(
            lambda a: ufunc.reduce(a, axis=1, dtype=acc), np.ones((2, 3), dtype),
            what=f"np.{ufunc.__name__}.reduce(dtype={acc})",
        )


# -- where the traced value comes back as: ndarray, NumPy scalar or Python scalar ----------------


def _kind_of(value) -> str:
    if isinstance(value, np.ndarray):
        return "array"
    if isinstance(value, np.generic):
        return "numpy_scalar"
    assert isinstance(value, (bool, int, float)), type(value)
    return "python"


RESULT_KINDS = {
    "array + 1": (lambda x: x + 1, (np.ones(3),)),
    "0-d array + 1": (lambda x: x + 1, (np.ones(()),)),
    "x.sum()": (lambda x: x.sum(), (np.ones(3),)),
    "x.sum(keepdims)": (lambda x: x.sum(axis=0, keepdims=True), (np.ones(3),)),
    "x.sum() * s": (lambda x, s: x.sum() * s, (np.ones(3), 2)),
    "s * 2": (lambda s: s * 2, (3,)),
    "s / 2": (lambda s: s / 2, (3,)),
    "s > 2": (lambda s: s > 2, (3,)),
    "-s": (lambda s: -s, (2.5,)),
    "np.float32(2) * s": (lambda s: np.float32(2) * s, (3,)),
    "np.exp(s)": (lambda s: np.exp(s), (1.5,)),
    "np.multiply(s, 2)": (lambda s: np.multiply(s, 2), (3,)),
    "np.maximum(s, t)": (lambda s, t: np.maximum(s, t), (3, 2.5)),
}


@pytest.mark.parametrize("case", list(RESULT_KINDS))
def test_result_kind_matches_numpy(case):
    """Operators on Python scalars give Python scalars; NumPy calls give NumPy scalars."""
    fn, args = RESULT_KINDS[case]
    with np.errstate(all="ignore"):
        expected = _kind_of(fn(*args))
    assert numfuse.jit(fn).trace(*args).leaf_kinds == [expected]
