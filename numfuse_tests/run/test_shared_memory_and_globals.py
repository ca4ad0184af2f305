"""Arguments that share memory (aliasing.py) and arrays and scalars read from globals and
closures (captures.py): NumPy's results, with no error, on every target."""

import numpy as np
import pytest

import numfuse


def both(fn, make_args):
    """Run fn as NumPy and as numfuse on fresh arguments from make_args (which returns the
    arrays to compare afterwards first, then the call's arguments)."""
    expected_state, expected_args = make_args()
    expected = fn(*expected_args)
    got_state, got_args = make_args()
    got = numfuse.jit(fn)(*got_args)
    for e, g in zip(expected_state, got_state):
        np.testing.assert_array_equal(g, e)
    if expected is not None:
        np.testing.assert_array_equal(got, expected)


def write_then_read(a, b):
    a[:] = b * 2
    a += b
    return a * b


def test_the_same_array_passed_twice_sees_its_own_writes():
    def args():
        x = np.arange(5.0)
        return [x], [x, x]
    both(write_then_read, args)


def test_overlapping_slices_of_one_array():
    def shift(a, b):
        a[:] = b + 1
        a *= b
        return b.sum()

    def args():
        base = np.arange(8.0)
        return [base], [base[:6], base[2:]]
    both(shift, args)


@pytest.mark.parametrize("views", [
    lambda m: (m[:, :-1], m[:, 1:]),
    lambda m: (m[1:], m[:-1]),
    lambda m: (m, m.T),
    lambda m: (m[::2], m[1::2]),
    lambda m: (m[0], m[:, 1]),
    lambda m: (m[::-1], m),
    lambda m: (m[1:3, None, 1:], m[2:4, None, :-1]),
])
def test_views_of_one_matrix(views):
    def smooth(a, b):
        a += 0.5 * b
        return a - b

    def args():
        m = np.arange(36.0).reshape(6, 6)
        return [m], list(views(m))
    both(smooth, args)


def test_a_written_argument_that_overlaps_one_only_read_keeps_numpy_order():
    def axpy(y, x):
        y += 2 * x
        y += x  # reads x after y's first update: x is part of y

    def args():
        base = np.arange(10.0)
        return [base], [base[:8], base[1:9]]
    both(axpy, args)


def test_fast_path_calls_with_and_then_without_sharing():
    f = numfuse.jit(write_then_read)
    for i in range(3):  # the fast path serves separate arrays; the same one twice does not take it
        x, y = np.arange(4.0), np.arange(4.0) + i
        xe, ye = x.copy(), y.copy()
        np.testing.assert_array_equal(f(x, y), write_then_read(xe, ye))
        np.testing.assert_array_equal(x, xe)
        z, ze = np.arange(4.0) + i, np.arange(4.0) + i
        np.testing.assert_array_equal(f(z, z), write_then_read(ze, ze))
        np.testing.assert_array_equal(z, ze)


def test_arrays_that_overlap_but_are_only_read():
    f = numfuse.jit(lambda a, b: a * b + 1)
    base = np.arange(10.0)
    np.testing.assert_array_equal(f(base[:6], base[4:]), base[:6] * base[4:] + 1)


def test_overlap_of_another_dtype_that_is_written_is_refused_with_the_names():
    def f(a, b):
        a += 1
        return b + 0

    x = np.zeros(4, np.int32)
    with pytest.raises(numfuse.UnsupportedError, match="arguments 'a' and 'b' share memory"):
        numfuse.jit(f)(x, x.view(np.float32))


# -- globals and closures ----------------------------------------------------------------------

WEIGHTS = np.ones(4)
SCALE = 2.0


def uses_globals(x):
    return x * WEIGHTS + SCALE


def test_a_global_array_is_read_at_each_call():
    global WEIGHTS
    f = numfuse.jit(uses_globals)
    x = np.arange(4.0)
    saved = WEIGHTS
    try:
        np.testing.assert_array_equal(f(x), uses_globals(x))
        WEIGHTS[:] = 3.0  # changed in place
        np.testing.assert_array_equal(f(x), uses_globals(x))
        np.testing.assert_array_equal(f(x), uses_globals(x))  # (the fast path too)
        WEIGHTS = np.full(4, 5.0)  # rebound
        np.testing.assert_array_equal(f(x), uses_globals(x))
        WEIGHTS = np.arange(4, dtype=np.int32)  # rebound with another dtype
        got = f(x)
        assert got.dtype == uses_globals(x).dtype
        np.testing.assert_array_equal(got, uses_globals(x))
    finally:
        WEIGHTS = saved


def test_a_rebound_global_scalar_traces_again():
    global SCALE
    f = numfuse.jit(uses_globals)
    x = np.arange(4.0)
    saved = SCALE
    try:
        f(x)
        f(x)
        SCALE = -1.5
        np.testing.assert_array_equal(f(x), uses_globals(x))
        SCALE = 7  # an int now
        np.testing.assert_array_equal(f(x), uses_globals(x))
    finally:
        SCALE = saved


def test_closure_arrays_and_scalars():
    table = np.arange(3.0)
    factor = 2.0

    def g(x):
        return x * table * factor

    f = numfuse.jit(g)
    x = np.ones(3)
    np.testing.assert_array_equal(f(x), g(x))
    table[0] = 10.0
    np.testing.assert_array_equal(f(x), g(x))
    factor = 4.0  # noqa: F841 (read by g through its closure cell)
    np.testing.assert_array_equal(f(x), g(x))
