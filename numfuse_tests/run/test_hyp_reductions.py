"""Reductions against NumPy: sum, prod, max, min, mean, any, all and the ufunc.reduce forms, on
every dtype (NumPy's result dtypes: int32 sum is int64, mean of ints is float64, bool sum is
int64), over axes drawn as int, negative int, tuple or None, with and without keepdims, over
shapes with size-one and zero-size dimensions (sum of nothing is 0, prod 1; max of nothing
raises), with NaN and infinities in float inputs, and several reductions of different shapes
returned from one function.

Float inputs for sum and mean are multiples of 1/16 so that every summation order gives the same
exact result; prod inputs have magnitudes in [1/2, 2] (or 0) so that no partial product
overflows or underflows in float32, whatever the order.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from numfuse.ir.dtypes import REAL
from numfuse_tests.helpers import axis_specs, check_like_numpy

DTYPES = list(REAL)  # every operation; complex: test_hyp_complex.py
KINDS = ["sum", "prod", "max", "min", "mean", "any", "all"]
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)
NONEMPTY = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5)

SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck))


def grid(lo: float, hi: float):
    """Multiples of 1/16 in [lo, hi]: exact in float32 and float64, sums exact in any order."""
    return st.integers(int(lo * 16), int(hi * 16)).map(lambda k: k / 16)


def elements(dtype, kind: str, specials: bool, size: int):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" else -20
        if kind == "prod":
            # No int64 overflow: |product| < 2**31 for at most 30 factors of 2, else only +-1.
            return st.integers(0 if dtype.kind == "u" else -1, 2 if size <= 30 else 1)
        return st.integers(lo, 20)
    if kind == "prod":
        magnitude = grid(0.5, 2.0)
        finite = st.one_of(magnitude, magnitude.map(lambda v: -v), st.just(0.0))
    else:
        finite = grid(-4.0, 4.0)
    if specials:
        return st.one_of(finite, st.sampled_from([math.nan, math.inf, -math.inf]))
    return finite


def reduced_count(shape, axis) -> int:
    if axis is None:
        axes = range(len(shape))
    else:
        axes = [a % len(shape) for a in ((axis,) if isinstance(axis, int) else axis)]
    return max(1, int(np.prod([shape[a] for a in axes], dtype=np.int64)))


def reduction(kind: str, form: str, axis, keepdims: bool, dtype=None):
    extra = {} if dtype is None else {"dtype": dtype}
    if form == "method":
        return lambda x: getattr(x, kind)(axis=axis, keepdims=keepdims, **extra)
    if form == "function":
        function = getattr(np, kind)
        return lambda x: function(x, axis=axis, keepdims=keepdims, **extra)
    # np.<ufunc>.reduce: NumPy's default axis there is 0.
    ufunc = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
             "any": np.logical_or, "all": np.logical_and}[kind]
    return lambda x: ufunc.reduce(x, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=25, **SETTINGS)
@given(data=st.data())
def test_reduction_matches_numpy(kind, data):
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    shape = data.draw(SHAPES, label="shape")
    specials = dtype.kind == "f" and data.draw(st.booleans(), label="specials")
    x = data.draw(hnp.arrays(dtype, shape, elements=elements(dtype, kind, specials, int(np.prod(shape)))), label="x")
    axis = data.draw(axis_specs(len(shape)), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    forms = ["method", "function"] + (["ufunc.reduce"] if kind != "mean" and shape else [])
    form = data.draw(st.sampled_from(forms), label="form")
    result_dtype = None
    if kind in ("sum", "prod", "mean") and form != "ufunc.reduce" and not specials:
        # An explicit accumulation dtype, wide enough for these values.
        choices = [np.int64, np.float32, np.float64] + ([np.int32] if dtype.kind in "biu" else [])
        result_dtype = data.draw(st.one_of(st.none(), st.sampled_from(choices)), label="dtype=")
    check_like_numpy(reduction(kind, form, axis, keepdims, result_dtype), x, reduced=reduced_count(shape, axis))


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=12, **SETTINGS)
@given(data=st.data())
def test_reduction_over_zero_size_axes(kind, data):
    """sum of nothing is 0, prod 1, any False, all True, mean NaN; max and min raise unless the
    output itself is empty; an empty output stays empty."""
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    shape = list(data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), label="shape"))
    zero = data.draw(st.integers(0, len(shape) - 1), label="zero axis")
    shape[zero] = 0
    x = np.zeros(shape, dtype)
    axis = data.draw(axis_specs(len(shape)), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    got = check_like_numpy(reduction(kind, "method", axis, keepdims), x)
    if got is not None and np.size(got) and kind != "mean":
        identity = {"sum": 0, "prod": 1, "any": False, "all": True, "max": None, "min": None}[kind]
        if identity is not None:
            assert np.all(np.asarray(got) == identity)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_result_dtypes_of_reductions(dtype):
    """Each reduction's result dtype is NumPy's (int32 sum -> int64, bool sum -> int64, mean of
    ints -> float64, max keeps the dtype), for full and partial reductions."""
    x = (np.arange(12) % 3).astype(dtype).reshape(3, 4)

    def f(x):
        return (x.sum(), x.sum(axis=0), x.prod(axis=1), x.max(axis=-1), x.min(), x.mean(),
                x.mean(axis=(0, 1), keepdims=True), x.any(axis=0), x.all())

    got = check_like_numpy(f, x, reduced=12)
    expected = f(x)
    assert [np.asarray(g).dtype for g in got] == [np.asarray(e).dtype for e in expected]


FLOATS = [np.dtype(np.float32), np.dtype(np.float64)]


@settings(max_examples=20, **SETTINGS)
@given(dtype=st.sampled_from(FLOATS), shape=NONEMPTY, data=st.data())
def test_nan_in_max_and_min_reductions(dtype, shape, data):
    """A NaN anywhere in a reduced slice makes its max and min NaN; infinities win otherwise."""
    values = st.one_of(grid(-4, 4), st.just(math.nan), st.sampled_from([math.inf, -math.inf]))
    x = data.draw(hnp.arrays(dtype, shape, elements=values), label="x")
    axis = data.draw(axis_specs(len(shape)), label="axis")

    def f(x):
        return x.max(axis=axis), x.min(axis=axis, keepdims=True), np.max(x), np.min(x)

    got = check_like_numpy(f, x)
    axes = None if axis is None else axis
    np.testing.assert_array_equal(np.isnan(got[0]), np.isnan(x).any(axis=axes))
    assert bool(np.isnan(got[2])) == bool(np.isnan(x).any())


@settings(max_examples=20, **SETTINGS)
@given(dtype=st.sampled_from(DTYPES), shape=hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=5), data=st.data())
def test_several_reductions_of_different_shapes_in_one_function(dtype, shape, data):
    x = data.draw(hnp.arrays(dtype, shape, elements=elements(dtype, "sum", False, 0)), label="x")
    a1 = data.draw(axis_specs(len(shape)), label="axis 1")
    a2 = data.draw(axis_specs(len(shape)), label="axis 2")

    def f(x):
        s = x.sum(axis=a1)
        m = x.max(axis=a2, keepdims=True)
        return s, m, x.min(axis=0), x.mean(axis=-1), (x > 0).any(axis=a2), x.sum()

    check_like_numpy(f, x, reduced=x.size)


@settings(max_examples=20, **SETTINGS)
@given(dtype=st.sampled_from(DTYPES), shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5), data=st.data())
def test_reductions_feeding_elementwise_work(dtype, shape, data):
    """A reduction broadcast back against its input (keepdims), and elementwise work after it."""
    x = data.draw(hnp.arrays(dtype, shape, elements=elements(dtype, "sum", False, 0)), label="x")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")

    def f(x):
        centered = x - x.mean(axis=axis, keepdims=True)
        spread = (centered * centered).sum(axis=axis)
        return centered, spread, x.sum(axis=axis) * 2 + 1, x.max(axis=axis, keepdims=True) == x

    if dtype.kind == "b":
        # NumPy has no boolean subtract: numfuse must raise what NumPy raises.
        check_like_numpy(f, x)
    elif 0 in shape and shape[axis] == 0:
        check_like_numpy(f, x)  # max over an empty axis raises in both
    else:
        check_like_numpy(f, x, reduced=max(1, shape[axis]) ** 2)


@settings(max_examples=10, **SETTINGS)
@given(
    dtype=st.sampled_from([np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32), np.dtype(np.uint8)]),
    rows=st.integers(1, 3),
    n=st.integers(17, 66),
    data=st.data(),
)
def test_reductions_of_longer_rows(dtype, rows, n, data):
    """Rows longer than a simulated block: each thread accumulates several points before the
    shared-memory tree combines them; and more rows than blocks."""
    x = data.draw(hnp.arrays(dtype, (rows, n), elements=elements(dtype, "sum", False, rows * n)), label="x")

    def f(x):
        return x.sum(axis=-1), x.max(axis=1), x.mean(axis=0), x.min(), x.T.sum(axis=0), (x > 0).all(axis=1)

    check_like_numpy(f, x, reduced=n * rows)
