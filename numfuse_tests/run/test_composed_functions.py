"""NumPy functions that numfuse composes from slices, concatenates, broadcasts, reshapes, ufuncs
and reductions (numpy_shapes.py, numpy_numerics.py) give NumPy's values, dtypes and shapes."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import numfuse
from numfuse_tests.helpers import assert_same, check


def rand(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(dtype)


def ints(*shape, dtype=np.int32, seed=0):
    return np.random.default_rng(seed).integers(-5, 6, shape).astype(dtype)


X = rand(4, 6)
X3 = rand(2, 3, 4, seed=1)
V = rand(7, seed=2)


# -- flips, rolls, rotations -----------------------------------------------------------------------


def test_flips_and_rotations():
    def f(x, y):
        return (np.flip(x), np.flip(x, 0) + 1, np.flip(y, (0, 2)), np.fliplr(x), np.flipud(y),
                np.rot90(x), np.rot90(x, 2), np.rot90(x, -1), np.rot90(y, 1, (2, 0)), np.rot90(x, 4))

    check(f, X, X3)


def test_rolls():
    def f(x, y):
        return (np.roll(x, 3), np.roll(x, -7, 1), np.roll(x, (1, 2), (0, 1)), np.roll(y, 2, (1, 1)),
                np.roll(y, (5, -1), (0, 2)), np.roll(x, 0), np.roll(x, 4, 1))

    check(f, X, X3)


def test_roll_of_an_argument_without_shift_is_a_copy():
    def f(x):
        y = np.roll(x, 0, 0)
        y[0] = 5
        return y, x + 0

    check(f, X)


def test_copy():
    def f(x, s):
        y = np.copy(x)
        y[1] = 0
        return y, x * 1, np.copy(s), np.copy(x.T), np.copy(x[::2], order="C")

    check(f, X, np.float32(2.5))


# -- stacks and splits -----------------------------------------------------------------------------


def test_stacks():
    def f(x, v, s):
        return (np.hstack([x, x[:, :2]]), np.hstack([v, v[:3]]), np.vstack([x, x[:1]]), np.vstack([v, v]),
                np.dstack([x, x]), np.dstack([v, v]), np.column_stack([v, v]), np.column_stack([x[:, 0], x]),
                np.hstack([s, s]), np.vstack([v.astype(np.int16), v]), np.hstack((x, x), dtype=np.float64),
                np.atleast_2d(v), np.atleast_3d(x), np.atleast_1d(s))

    check(f, X, V, np.float32(3))


def test_splits():
    def f(x, y):
        return (np.split(x, 2), np.split(x, [1, 4], axis=1), np.array_split(x, 3, axis=1),
                np.array_split(y, 4, axis=-1), np.hsplit(x, 3), np.vsplit(x, [1]), np.split(x, [5, 2]),
                [p + 1 for p in np.array_split(x.ravel(), 5)])

    check(f, X, X3)


def test_split_pieces_are_views_that_write_through():
    def f(x):
        a, b = np.split(x, 2)
        b[0] = 9
        return x

    mine, theirs = X.copy(), X.copy()
    expected = f(theirs)
    got = numfuse.jit(f)(mine)
    assert_same(got, expected)
    np.testing.assert_array_equal(mine, theirs)


# -- tiles, repeats, pads ------------------------------------------------------------------------


def test_tiles_and_repeats():
    def f(x, v):
        return (np.tile(x, 2), np.tile(x, (2, 1)), np.tile(v, (2, 3)), np.tile(x, (1, 1)), np.tile(v, 20),
                np.repeat(x, 2), np.repeat(x, 3, axis=1), np.repeat(v, [1, 0, 2, 1, 1, 3, 1]),
                np.repeat(x, [2, 1, 0, 1], axis=0), np.repeat(v, 20), np.repeat(x, 0, axis=1), np.tile(x, 0))

    check(f, X, V)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap"])
def test_pad_modes(mode):
    def f(x, v):
        return (np.pad(x, 2, mode), np.pad(x, ((1, 3), (0, 2)), mode), np.pad(v, (9, 4), mode),
                np.pad(x, ((0, 0), (5, 7)), mode) * 2)

    check(f, X, V)


def test_pad_constant_values():
    def f(x, c):
        return (np.pad(x, 1, constant_values=7), np.pad(x, ((1, 2), (2, 1)), constant_values=((1, 2), (3, 4))),
                np.pad(x.astype(np.int32), 1, constant_values=2.7), np.pad(x, 2, constant_values=c),
                np.pad(x.astype(np.uint8), 1, constant_values=300), np.pad(x, {1: (2, 0), 0: 1}))

    check(f, X, 1.5)


# -- products ------------------------------------------------------------------------------------


def test_outer_products():
    def f(x, v, i):
        return (np.outer(x, v), np.outer(v, v[:3]), np.add.outer(v, v), np.subtract.outer(x, v[:2]),
                np.maximum.outer(v, x[0]), np.greater.outer(v, v), np.multiply.outer(i, v), np.add.outer(v, 2.5))

    check(f, X, V, ints(3))


def test_kron():
    def f(x, v, i):
        return np.kron(x, x[:2, :3]), np.kron(v[:3], x), np.kron(x, 2), np.kron(i, v[:2]), np.kron(v, i)

    check(f, X, V, ints(3))


def test_cross():
    a, b = rand(5, 3), rand(5, 3, seed=3)

    def f(a, b):
        return (np.cross(a, b), np.cross(a[0], b), np.cross(a.T, b.T, axisa=0, axisb=0, axisc=0),
                np.cross(a, b[1]), np.cross(a.T, b.T, axis=0))

    check(f, a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        check(lambda a, b: (np.cross(a[:, :2], b[:, :2]), np.cross(a[0, :2], b[1, :2]), np.cross(a[:, :2], b),
                            np.cross(a, b[:, :2])), a, b)
        check(lambda a, b: np.cross(a, b), ints(4, 3), ints(4, 3, seed=1))


# -- differences, gradients, integrals -------------------------------------------------------------


def test_diff():
    def f(x, v, i):
        return (np.diff(x), np.diff(x, 2, 0), np.diff(v, 3), np.diff(v, prepend=0.5), np.diff(x, axis=0, append=x[:1]),
                np.diff(i), np.diff(i > 0), np.diff(v, 0), np.diff(x, prepend=1, append=2))

    check(f, X, V, ints(9))


def test_gradient():
    def f(x, v, i):
        return (np.gradient(v), np.gradient(x), np.gradient(x, 0.5), np.gradient(x, 2.0, 3, axis=(1, 0)),
                np.gradient(x, axis=1, edge_order=2), np.gradient(v, 0.25, edge_order=2), np.gradient(i),
                np.gradient(x[:2], axis=0))

    check(f, X, V, ints(6))


def test_trapezoid():
    def f(x, v):
        return (np.trapezoid(v), np.trapezoid(x), np.trapezoid(x, dx=0.5, axis=0), np.trapezoid(v, x=np.cumsum(np.ones(7))),
                np.trapezoid(x, x=x, axis=0))

    check(f, X, V, reduced=6)


# -- convolutions --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("lengths", [(9, 4), (4, 9), (6, 6), (7, 1), (1, 5), (8, 3)])
def test_convolve_and_correlate(mode, lengths):
    a, v = rand(lengths[0], seed=4), rand(lengths[1], seed=5)
    check(lambda a, v: (np.convolve(a, v, mode), np.correlate(a, v, mode)), a, v, reduced=min(lengths))


def test_convolve_integers_bools_and_complex():
    a, v = ints(10), ints(3, seed=1)
    check(lambda a, v: (np.convolve(a, v), np.correlate(a, v, "same"), np.convolve(a > 0, v > 0)), a, v)
    z = (rand(8, seed=6) + 1j * rand(8, seed=7)).astype(np.complex64)
    w = (rand(3, seed=8) + 1j * rand(3, seed=9)).astype(np.complex64)
    check(lambda z, w: (np.correlate(z, w, "full"), np.correlate(w, z, "same"), np.convolve(z, w)), z, w, reduced=3)


def test_convolution_keeps_inf_where_numpy_does():
    a = np.array([1.0, np.inf, 2.0, -0.0, 3.0], np.float32)
    v = np.array([0.5, -0.0, 2.0], np.float32)
    check(lambda a, v: (np.convolve(a, v), np.correlate(a, v, "same"), np.convolve(v, a, "valid")), a, v, reduced=3)


# -- comparisons ---------------------------------------------------------------------------------


def test_isclose_with_nan_and_inf():
    a = np.array([1.0, np.nan, np.inf, -np.inf, np.inf, 1e-9, 0.0, 2.0, np.nan], np.float64)
    b = np.array([1.0 + 1e-6, np.nan, np.inf, np.inf, np.nan, 0.0, -0.0, 2.1, 1.0], np.float64)

    def f(a, b, i):
        return (np.isclose(a, b), np.isclose(a, b, equal_nan=True), np.isclose(a, b, rtol=0.1, atol=0.0),
                np.isclose(a, 1.0), np.isclose(1.0, a), np.isclose(i, 3), np.isclose(i, i + 1, atol=1),
                np.isclose(a[0], b[0]), np.isclose(a.astype(np.float32), b))

    check(f, a, b, ints(9))


def test_allclose_and_array_equal_are_python_bools():
    a, b = rand(5), rand(5) + np.float32(1e-7)
    c = np.array([1.0, np.nan, 2.0])

    def f(a, b, c, i):
        return (np.allclose(a, b), np.allclose(a, b + 1), np.allclose(c, c), np.allclose(c, c, equal_nan=True),
                np.array_equal(a, a), np.array_equal(a, b), np.array_equal(c, c), np.array_equal(c, c, equal_nan=True),
                np.array_equal(i, i), np.array_equal(a, a[:2]))

    got = numfuse.jit(f)(a, b, c, ints(3))
    expected = f(a, b, c, ints(3))
    for g, e in zip(got, expected):
        assert type(g) is bool and g == e  # Python's bools, as NumPy returns
    assert got[-1] is False  # different shapes: known at the trace


# -- elementwise functions --------------------------------------------------------------------------


def test_elementwise_compositions():
    x = np.array([-2.5, -1.0, -0.5, -0.0, 0.0, 0.3, 1.0, 2.7, np.inf, -np.inf, np.nan], np.float32)

    def f(x, i, s):
        return (np.fix(x), np.fix(i), np.sinc(x), np.sinc(i), np.sinc(s), np.angle(x), np.angle(x, deg=True),
                np.angle(i), np.float_power(x, 2), np.float_power(np.abs(x), 0.5), np.float_power(i, -1),
                np.float_power(2, i), np.clip(x), np.clip(i), np.float_power(x, x))

    check(f, x, ints(11), 0.5)


def test_angle_of_complex():
    z = (rand(6) + 1j * rand(6, seed=1)).astype(np.complex64)
    check(lambda z: (np.angle(z), np.angle(z, deg=True), np.angle(z[0])), z)


# -- diagonals -----------------------------------------------------------------------------------


def test_diagonals_and_traces():
    def f(x, y, v):
        return (np.diagonal(x), np.diagonal(x, 2), np.diagonal(x, -1), np.diagonal(x.T), np.diagonal(y, 1, 2, 0),
                np.trace(x), np.trace(x, 1), np.trace(y, axis1=1, axis2=2), np.trace(x.astype(np.int8)),
                np.diag(x), np.diag(x, -2), np.diag(v), np.diag(v, 2), np.diag(v, -3) + 1, np.diagonal(x, 9))

    check(f, X, X3, V, reduced=4)


# -- scalar arguments and views ----------------------------------------------------------------


def test_scalar_arguments():
    # A shift or repeat count passed as an argument is made static (jit traces again with it);
    # a spacing or tolerance stays a run-time scalar.
    def f(x, k, h):
        return (np.roll(x, k), np.repeat(x, k, 1), np.gradient(x, h), np.trapezoid(x, dx=h), np.isclose(x, h),
                np.isclose(h, x, atol=h), np.float_power(x, k), np.pad(x, 1, constant_values=h))

    check(f, X, 2, 0.5, reduced=6)
    check(f, X, 3, np.float32(0.25), reduced=6)


def test_flip_and_rot90_are_views_that_write_through():
    def f(x):
        np.flip(x)[0, 0] = -1
        np.rot90(x)[1] = 7
        np.fliplr(x)[:, 0] += 1
        return x

    mine, theirs = X.copy(), X.copy()
    assert_same(numfuse.jit(f)(mine), f(theirs))
    np.testing.assert_array_equal(mine, theirs)


# -- hypothesis --------------------------------------------------------------------------------------


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 6), m=st.integers(1, 6), shift=st.integers(-9, 9), left=st.integers(0, 8),
       right=st.integers(0, 8), mode=st.sampled_from(["constant", "edge", "reflect", "symmetric", "wrap"]))
def test_hyp_shapes(n, m, shift, left, right, mode):
    x = rand(n, m, seed=n * 7 + m)
    check(lambda x: (np.roll(x, shift), np.roll(x, shift, 1), np.pad(x, ((left, right), (right, left)), mode)), x)


@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 12), m=st.integers(1, 12), mode=st.sampled_from(["full", "same", "valid"]))
def test_hyp_convolutions(n, m, mode):
    a, v = rand(n, seed=n), rand(m, seed=100 + m)
    check(lambda a, v: (np.convolve(a, v, mode), np.correlate(a, v, mode)), a, v, reduced=min(n, m))


@settings(max_examples=10, deadline=None)
@given(shape=st.tuples(st.integers(3, 5), st.integers(3, 6)), n=st.integers(0, 2), edge=st.sampled_from([1, 2]),
       offset=st.integers(-6, 6))
def test_hyp_numerics(shape, n, edge, offset):
    x = rand(*shape, seed=sum(shape))
    check(lambda x: (np.diff(x, n), np.gradient(x, 0.5, edge_order=edge), np.diagonal(x, offset), np.trace(x, offset),
                     np.kron(x, x[:2])), x, reduced=6)
