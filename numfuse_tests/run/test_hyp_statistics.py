"""Issue 3's statistics against NumPy: var and std (ddof, ddof >= n, keepdims, dtype=, int and
bool inputs), their precision on float32 data far from zero, argmax and argmin (first of ties,
first NaN wins, flat index for axis None), nansum, nanmean, nanmax, nanmin, nanprod, nanvar and
nanstd with NaNs anywhere (all-NaN slices included), ptp, count_nonzero, average, sum, prod and
mean with dtype=, float16 accumulation, empty reductions and bad axes (the same exception as
NumPy, raised at trace time), and result shapes, dtypes and scalar types equal to NumPy's.

Float inputs are multiples of 1/16 (exact sums in any order) unless a test says otherwise."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import numfuse
from numfuse.ir.dtypes import REAL
from numfuse_tests.helpers import assert_same, axis_specs, check_like_numpy, numpy_outcome

SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck))
DTYPES = list(REAL)  # every operation; complex: test_hyp_complex.py
FLOATS = [d for d in DTYPES if d.kind == "f"]
INTS = [d for d in DTYPES if d.kind in "iu"]


def grid(lo: float, hi: float):
    """Multiples of 1/16 in [lo, hi]: exact in every float dtype, sums exact in any order."""
    return st.integers(int(lo * 16), int(hi * 16)).map(lambda k: k / 16)


def values(dtype, kind: str = "sum"):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        if kind == "prod":
            return st.integers(0 if dtype.kind == "u" else -1, 2)
        return st.integers(0 if dtype.kind == "u" else -20, 20)
    if kind == "prod":
        magnitude = grid(0.5, 2.0)
        return st.one_of(magnitude, magnitude.map(lambda v: -v))
    return grid(-4, 4)


@st.composite
def shapes(draw, min_dims=1, max_dims=3, min_side=1, max_side=5, long_side=0):
    """A shape; with long_side, one dimension may be longer than a simulated block (16)."""
    shape = list(draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                                       max_side=max_side), label="shape"))
    if long_side and shape and draw(st.booleans(), label="long"):
        shape[draw(st.integers(0, len(shape) - 1), label="long axis")] = draw(st.integers(17, long_side))
    return tuple(shape)


def reduced_axes(ndim: int, axis) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    return tuple(sorted(a % ndim for a in ((axis,) if isinstance(axis, int) else axis)))


def count(shape, axis) -> int:
    return int(np.prod([shape[a] for a in reduced_axes(len(shape), axis)], dtype=np.int64))


def quiet_numpy(fn, *args, **kwargs):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kwargs)


# -- var and std ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["var", "std"])
@settings(max_examples=25, **SETTINGS)
@given(data=st.data())
def test_var_and_std_match_numpy(kind, data):
    """Every dtype, any axes, keepdims, ddof from 0 to past the count (inf or NaN as in NumPy),
    method or function, with and without dtype=."""
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    shape = data.draw(shapes(min_dims=0, min_side=0, long_side=30))
    x = data.draw(hnp.arrays(dtype, shape, elements=values(dtype)), label="x")
    axis = data.draw(axis_specs(len(shape), int_weight=2), label="axis")
    n = count(shape, axis)
    ddof = data.draw(st.integers(0, n + 1), label="ddof")
    keepdims = data.draw(st.booleans(), label="keepdims")
    result_dtype = data.draw(st.sampled_from([None, None, np.float32, np.float64]), label="dtype=")
    extra = {} if result_dtype is None else {"dtype": result_dtype}
    if data.draw(st.booleans(), label="method"):
        def f(x):
            return getattr(x, kind)(axis=axis, ddof=ddof, keepdims=keepdims, **extra)
    else:
        def f(x):
            return getattr(np, kind)(x, axis=axis, ddof=ddof, keepdims=keepdims, **extra)
    check_like_numpy(f, x, reduced=n * n)


@pytest.mark.parametrize("axis, shape", [(1, (4, 600)), (0, (600, 4)), (None, (4, 600))],
                         ids=["rows", "columns", "full"])
def test_var_of_float32_data_far_from_zero_is_accurate(axis, shape):
    """float32 data of mean 1e4 and unit variance: var, std (ddof=1) and nanvar match NumPy's
    float64 result to float32 accuracy; E[x^2] - E[x]^2 in float32 would be off by over 100%."""
    x = (1e4 + np.random.default_rng(10).standard_normal(shape)).astype(np.float32)
    x64 = x.astype(np.float64)

    def f(x):
        return x.var(axis=axis), x.std(axis=axis, ddof=1), np.nanvar(x, axis=axis)

    got = numfuse.jit(f)(x)
    expected = (x64.var(axis=axis), x64.std(axis=axis, ddof=1), np.nanvar(x64, axis=axis))
    rtol = 2e-5
    for g, e in zip(got, expected):
        assert np.asarray(g).dtype == np.float32
        np.testing.assert_allclose(g, e, rtol=rtol)
    naive = (x * x).mean(axis=axis) - x.mean(axis=axis) ** 2
    assert np.max(np.abs(naive - expected[0]) / expected[0]) > 100 * rtol  # the test has teeth


# -- argmax and argmin ----------------------------------------------------------------------------


def arg_values(dtype):
    """Few distinct values (many ties), and NaN and infinities in floats."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return st.sampled_from([0, 1, 2, int(info.max), int(info.min)])
    return st.one_of(st.sampled_from([0.0, 1.0, 2.0, -1.0]), st.sampled_from([math.nan, math.inf, -math.inf]))


@settings(max_examples=40, **SETTINGS)
@given(data=st.data())
def test_argmax_and_argmin_match_numpy(data):
    """First occurrence of ties, the first NaN wins, the flat index for axis None, keepdims,
    method or function, rows longer than a block and several rows per block."""
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    shape = data.draw(shapes(min_dims=0, long_side=70))
    x = data.draw(hnp.arrays(dtype, shape, elements=arg_values(dtype)), label="x")
    axis = data.draw(axis_specs(len(shape), tuples=False, int_weight=2), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    if data.draw(st.booleans(), label="method"):
        def f(x):
            return x.argmax(axis=axis, keepdims=keepdims), x.argmin(axis=axis, keepdims=keepdims)
    else:
        def f(x):
            return np.argmax(x, axis=axis, keepdims=keepdims), np.argmin(x, axis, keepdims=keepdims)
    check_like_numpy(f, x)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("axis", [1, 0, None], ids=["rows", "columns", "flat"])
def test_first_nan_wins_argmax_and_argmin(dtype, axis):
    """NaNs after the maximum, several NaNs in one slice (the first wins), ties spread over
    the threads of a block."""
    x = np.zeros((5, 70), dtype)
    x[:, 10] = x[:, 50] = 5
    x[:, 20] = x[:, 60] = -5
    x[0, 65] = x[0, 33] = np.nan
    x[3, 3] = np.nan
    x[4, 69] = np.nan
    if axis == 0:
        x = np.ascontiguousarray(x.T)

    def f(x):
        return x.argmax(axis=axis), x.argmin(axis=axis), np.argmax(x, axis=axis, keepdims=True)

    got = check_like_numpy(f, x)
    if axis is None:
        assert got[0] == got[1] == np.flatnonzero(np.isnan(x))[0]


def test_argmax_of_axis_none_is_the_flat_index_of_a_3d_array():
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5) % 7
    got = check_like_numpy(lambda x: (x.argmax(), np.argmin(x), x.argmax(keepdims=True), x.argmin(axis=-2)), x)
    assert got[2].shape == (1, 1, 1)


# -- the NaN-ignoring functions -------------------------------------------------------------------

NAN_FUNCTIONS = ["nansum", "nanmean", "nanmax", "nanmin", "nanprod", "nanvar", "nanstd"]


@st.composite
def with_nans(draw, dtype, shape, axis, kind):
    """An array with NaNs placed nowhere, at random, everywhere, or on whole slices that the
    reduction then sees as all-NaN (float dtypes only)."""
    x = draw(hnp.arrays(dtype, shape, elements=values(dtype, kind)), label="values")
    if np.dtype(dtype).kind != "f" or x.size == 0:
        return x
    placement = draw(st.sampled_from(["none", "random", "all", "slices"]), label="NaN placement")
    if placement == "random":
        x[draw(hnp.arrays(bool, shape), label="mask")] = np.nan
    elif placement == "all":
        x[...] = np.nan
    elif placement == "slices":
        kept = [a for a in range(len(shape)) if a not in reduced_axes(len(shape), axis)]
        if kept:  # whole reduced slices at one index of a kept axis
            k = draw(st.sampled_from(kept), label="kept axis")
            index = [slice(None)] * len(shape)
            index[k] = draw(st.integers(0, shape[k] - 1), label="index")
            x[tuple(index)] = np.nan
        else:
            x.flat[draw(st.integers(0, x.size - 1), label="flat index")] = np.nan
    return x


@pytest.mark.parametrize("name", NAN_FUNCTIONS)
@settings(max_examples=15, **SETTINGS)
@given(data=st.data())
def test_nan_function_matches_numpy(name, data):
    dtype = data.draw(st.sampled_from(FLOATS * 3 + [np.dtype(np.int32), np.dtype(np.bool_)]), label="dtype")
    shape = data.draw(shapes(min_side=0, long_side=30))
    axis = data.draw(axis_specs(len(shape), int_weight=2), label="axis")
    x = data.draw(with_nans(dtype, shape, axis, "prod" if name == "nanprod" else "sum"))
    keepdims = data.draw(st.booleans(), label="keepdims")
    kwargs = {"axis": axis, "keepdims": keepdims}
    if name in ("nanvar", "nanstd"):
        kwargs["ddof"] = data.draw(st.integers(0, 2), label="ddof")
    function = getattr(np, name)
    n = count(shape, axis)
    check_like_numpy(lambda x: function(x, **kwargs), x, reduced=n * n if "var" in name or "std" in name else n)


def test_nan_functions_of_all_nan_and_partly_nan_rows():
    """Rows: no NaN, one NaN, all but one NaN, all NaN (NumPy's NaN, 0 or warnings' values)."""
    x = np.arange(1, 29, dtype=np.float32).reshape(4, 7) / 4
    x[1, 3] = np.nan
    x[2, 1:] = np.nan
    x[3, :] = np.nan

    def f(x):
        return tuple(getattr(np, name)(x, axis=1) for name in NAN_FUNCTIONS) + (
            np.nanmean(x), np.nanmax(x, axis=0), np.nanvar(x, axis=1, ddof=1))

    got = check_like_numpy(f, x, reduced=49)
    expected = quiet_numpy(f, x)
    assert np.isnan(expected[1][3]) and np.isnan(got[1][3])  # nanmean of an all-NaN row


# -- ptp, count_nonzero, average ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["ptp", "count_nonzero", "average"])
@settings(max_examples=15, **SETTINGS)
@given(data=st.data())
def test_ptp_count_nonzero_and_average_match_numpy(name, data):
    """Every dtype (ptp of bool raises TypeError as in NumPy; ptp of ints wraps as NumPy's
    subtract does), any axes, keepdims; count_nonzero counts NaN."""
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    shape = data.draw(shapes(min_dims=0, min_side=0, long_side=30))
    if name == "ptp" and dtype.kind in "iu":
        elements = hnp.from_dtype(dtype)  # max - min overflows
    elif name == "count_nonzero" and dtype.kind == "f":
        elements = st.one_of(st.sampled_from([0.0, -0.0, math.nan, math.inf]), grid(-1, 1))
    else:
        elements = values(dtype)
    x = data.draw(hnp.arrays(dtype, shape, elements=elements), label="x")
    axis = data.draw(axis_specs(len(shape), int_weight=2), label="axis")
    kwargs = {"axis": axis}
    if data.draw(st.booleans(), label="keepdims"):
        kwargs["keepdims"] = True
    function = getattr(np, name)
    check_like_numpy(lambda x: function(x, **kwargs), x, reduced=count(shape, axis) if shape else 1)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_count_nonzero_of_axis_none_has_numpy_type(dtype):
    x = (np.arange(24) % 3).astype(dtype).reshape(2, 3, 4)
    jitted = numfuse.jit(lambda x: (np.count_nonzero(x), np.count_nonzero(x, axis=None, keepdims=True),
                                    np.count_nonzero(x, axis=(0, 2))))
    got = jitted(x)
    expected = (np.count_nonzero(x), np.count_nonzero(x, axis=None, keepdims=True), np.count_nonzero(x, axis=(0, 2)))
    assert [type(g) for g in got] == [type(e) for e in expected]
    assert_same(got, expected)


# -- sum, prod and mean with dtype= ---------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sum", "prod", "mean"])
@settings(max_examples=15, **SETTINGS)
@given(data=st.data())
def test_dtype_argument_of_sum_prod_mean_matches_numpy(kind, data):
    """The accumulation dtype: narrower (int8 sums wrap, as in NumPy), wider, or another kind
    (float inputs summed as ints are truncated first)."""
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    result_dtype = data.draw(st.sampled_from([np.int8, np.uint8, np.int32, np.int64, np.uint64, np.float16,
                                              np.float32, np.float64]), label="dtype=")
    if kind == "mean" and np.dtype(result_dtype).kind in "iu":
        result_dtype = np.float32  # NumPy's mean in an int dtype divides into an int: not this test
    shape = data.draw(shapes(min_dims=0, long_side=30))
    elements = values(dtype, kind)
    if kind == "sum" and dtype.kind in "iu":
        elements = st.integers(0 if dtype.kind == "u" else -100, 100)
    x = data.draw(hnp.arrays(dtype, shape, elements=elements), label="x")
    axis = data.draw(axis_specs(len(shape), int_weight=2), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    if data.draw(st.booleans(), label="method"):
        def f(x):
            return getattr(x, kind)(axis=axis, dtype=result_dtype, keepdims=keepdims)
    else:
        def f(x):
            return getattr(np, kind)(x, axis=axis, dtype=result_dtype, keepdims=keepdims)
    check_like_numpy(f, x, reduced=count(shape, axis))


# -- float16 accumulates in float32 ---------------------------------------------------------------


@pytest.mark.parametrize("shape, axis", [((3000,), None), ((2, 3000), 1), ((3000, 2), 0)],
                         ids=["full", "rows", "columns"])
def test_float16_reductions_accumulate_in_float32(shape, axis):
    """3000 ones: a float16 accumulator stops at 2048 (2048 + 1 rounds back to 2048); NumPy's
    sums, means and variances of float16 data accumulate in float32."""
    x = np.ones(shape, np.float16)
    x.flat[::7] = 1.5

    def f(x):
        return (x.sum(axis=axis), x.mean(axis=axis), np.nansum(x, axis=axis), np.nanmean(x, axis=axis),
                x.var(axis=axis), np.average(x, axis=axis))

    got = check_like_numpy(f, x, reduced=3000)
    stalled = np.add.accumulate(x.reshape(-1) if axis is None else x, axis=axis or 0, dtype=np.float16)
    assert np.all(np.asarray(got[0]) > np.asarray(stalled.max()))


# -- empty reductions and bad axes ----------------------------------------------------------------

EMPTY_VALUES = {
    "sum": np.sum, "prod": np.prod, "nansum": np.nansum, "nanprod": np.nanprod, "count_nonzero": np.count_nonzero,
    "mean": np.mean, "var": np.var, "std": np.std, "nanmean": np.nanmean, "nanvar": np.nanvar,
    "average": np.average,
}
EMPTY_RAISES = {
    "max": np.max, "min": np.min, "argmax": np.argmax, "argmin": np.argmin, "ptp": np.ptp,
    "nanmax": np.nanmax, "nanmin": np.nanmin,
}


@pytest.mark.parametrize("name", sorted(EMPTY_VALUES))
@pytest.mark.parametrize("dtype", [np.float32, np.int16], ids=lambda d: np.dtype(d).name)
def test_empty_reductions_give_numpy_values(name, dtype):
    """sum of nothing is 0, prod 1, count 0, means and variances NaN; empty outputs stay empty
    (np.average of an empty output raises ZeroDivisionError in NumPy, and so in numfuse)."""
    function = EMPTY_VALUES[name]
    x = np.zeros((3, 0), dtype)
    got = check_like_numpy(lambda x: (function(x, axis=1), function(x)), x)
    assert got[0].shape == (3,)
    check_like_numpy(lambda x: function(x.T, axis=1), x)


@pytest.mark.parametrize("name", sorted(EMPTY_RAISES))
def test_empty_reductions_without_identity_raise_value_error_at_trace_time(name):
    function = EMPTY_RAISES[name]
    x = np.zeros((3, 0), np.float32)
    for fn in (lambda x: function(x, axis=1), lambda x: function(x)):
        status, error = numpy_outcome(fn, x)
        assert status == "raises" and type(error) is ValueError
        with pytest.raises(ValueError):
            numfuse.jit(fn).plan(x)  # nothing runs: tracing raises
        check_like_numpy(fn, x)
    # Over the non-empty axis, the output is empty and nothing raises.
    check_like_numpy(lambda x: function(x, axis=0), x)


BAD_AXIS_FUNCTIONS = {
    "sum": np.sum, "mean": np.mean, "var": np.var, "std": np.std, "argmax": np.argmax, "argmin": np.argmin,
    "nansum": np.nansum, "nanmean": np.nanmean, "nanmax": np.nanmax, "nanvar": np.nanvar, "ptp": np.ptp,
    "count_nonzero": np.count_nonzero, "average": np.average,
}


@pytest.mark.parametrize("axis", [2, -3, (0, 2), (1, 1), (0, -2)], ids=str)
@pytest.mark.parametrize("name", sorted(BAD_AXIS_FUNCTIONS))
def test_bad_axis_raises_what_numpy_raises_at_trace_time(name, axis):
    """Out of range: numpy.exceptions.AxisError; repeated: ValueError; a tuple for argmax:
    TypeError; always the type NumPy raises, when tracing."""
    function = BAD_AXIS_FUNCTIONS[name]
    x = np.ones((3, 4), np.float32)

    def f(x):
        return function(x, axis=axis)

    status, error = numpy_outcome(f, x)
    assert status == "raises"
    if isinstance(axis, int):
        assert type(error) is np.exceptions.AxisError
    with pytest.raises(type(error)):
        numfuse.jit(f).plan(x)


# -- result types ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_results_have_numpy_shapes_dtypes_and_scalar_types(dtype):
    """0-d results are NumPy scalars of NumPy's type; arrays have NumPy's shape and dtype."""
    x = (np.arange(12) % 5).astype(dtype).reshape(3, 4)
    numeric = dtype.kind != "b"

    def f(x):
        results = [x.argmax(), np.argmin(x, axis=0), np.count_nonzero(x), np.average(x, axis=1),
                   x.var(), np.std(x, axis=0, keepdims=True), np.nansum(x), np.nanmax(x, axis=1),
                   np.nanmean(x), np.nanvar(x, axis=(0, 1), keepdims=True), x.mean(dtype=np.float32)]
        if numeric:
            results.append(np.ptp(x))
        return tuple(results)

    got = check_like_numpy(f, x, reduced=144)
    expected = quiet_numpy(f, x)
    assert [type(g) for g in got] == [type(e) for e in expected]
