"""Views, item assignment and strided arguments give NumPy's values; arguments written into end
up as NumPy leaves them."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import numfuse
from numfuse_tests.helpers import assert_same, check


def check_in_place(fn, *args):
    """numfuse.jit(fn) returns what NumPy returns and leaves the arguments as NumPy does."""
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    theirs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with np.errstate(all="ignore"):
        expected = fn(*theirs)
    got = numfuse.jit(fn)(*mine)
    if expected is not None:
        assert_same(got, expected)
    for i, (a, b) in enumerate(zip(mine, theirs)):
        if isinstance(b, np.ndarray):
            np.testing.assert_array_equal(a, b, err_msg=f"argument {i}")
    return got


def rand(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(dtype)


def test_views_match_numpy():
    def f(x):
        return (x.T[::2], x.reshape(3, 10), x.ravel()[3:7], x[None, 1, ..., ::-1], np.expand_dims(x, 1),
                np.swapaxes(x[..., None], 0, 2), np.moveaxis(x, 0, 1) + 1, np.broadcast_to(x[0], (2, 6)),
                x[2, 3] * 2, x.flatten()[::-4], x[:, 1:].reshape(-1), np.squeeze(x[:, :1]))

    check(f, rand(5, 6))


def test_jacobi_step_in_place_matches_numpy():
    def jacobi(a):
        a[1:-1, 1:-1] = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])

    check_in_place(jacobi, rand(6, 7))


def test_updates_of_arguments_locals_and_slices():
    def f(x, out, b):
        x += 1
        x[0] = 7
        out[...] = x * 2
        b[1:, ::2] -= x[:-1, ::2]
        y = np.zeros_like(x)
        y[::-2] = x[::2]  # rows 4, 2, 0 get rows 0, 2, 4
        return y, x.sum()

    check_in_place(f, rand(5, 6), np.zeros((5, 6), np.float32), rand(5, 6, seed=1))


def test_augmented_item_update_and_views_see_it():
    def f(x):
        v = x[1:]
        x[1] *= 3
        w = x.T
        x += 1
        return v.copy(), w + 0

    check_in_place(f, rand(4, 3))


def test_integer_arrays_and_casting_on_assignment():
    def f(a, v):
        a[::2] = v * 1.7  # float64 into int32: truncated, as NumPy's setitem casts
        return a

    check_in_place(f, np.arange(12, dtype=np.int32).reshape(6, 2), np.ones(2))


def test_concatenate_and_stack():
    def f(x, y):
        return (np.concatenate([x, y * 2.0], axis=1), np.stack([x, y], axis=-1), np.concatenate([x, y], axis=None),
                np.concatenate([x.astype(np.float64), y]))

    check(f, rand(3, 4), rand(3, 4, seed=1))


@pytest.mark.parametrize("layout", ["F", "transposed", "negative", "steps", "broadcast"])
def test_strided_arguments_are_read_through_their_strides(layout):
    base = rand(6, 8)
    x = {
        "F": np.asfortranarray(base),
        "transposed": base.T,
        "negative": base[::-1, ::-2],
        "steps": base[1::2, ::3],
        "broadcast": np.broadcast_to(base[0], (5, 8)),
    }[layout]

    def f(x):
        return x * 2.0 + 1.0, x.sum(axis=0), x[1:, :2].T

    got = check(f, x)
    assert got[0].flags.c_contiguous and got[1].flags.c_contiguous
    assert np.shares_memory(got[2], x)  # a view of the argument, as NumPy returns it


def test_strided_argument_written_into_in_place():
    def f(a):
        a[1:] += a[:-1]  # reads a at other points: the right side first, as NumPy

    check_in_place(f, np.asfortranarray(rand(5, 4)))


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_random_slices_match_numpy(data):
    shape = data.draw(st.tuples(st.integers(1, 5), st.integers(1, 5)))
    x = rand(*shape)

    def piece(n):
        start = data.draw(st.integers(-n, n))
        stop = data.draw(st.integers(-n, n))
        step = data.draw(st.sampled_from([1, 2, -1, -2]))
        return slice(start, stop, step)

    index = (piece(shape[0]), piece(shape[1]))
    if x[index].size == 0:
        return
    check(lambda x: x[index] * 2.0 + x[index].sum(axis=0), x)


def test_device_arguments_strided_and_written_in_place():
    from numba import cuda

    x = rand(4, 6)
    got = numfuse.jit(lambda a: a * 2.0, target="cuda")(cuda.to_device(x).T)  # a strided device view, read in place
    np.testing.assert_array_equal(got.copy_to_host(), x.T * 2.0)

    def bump(a):
        a[1:, ::2] += 1.0

    d = cuda.to_device(x)
    numfuse.jit(bump, target="cuda")(d)  # device arrays: the CUDA target in every tier
    expected = x.copy()
    bump(expected)
    np.testing.assert_array_equal(d.copy_to_host(), expected)


def test_time_loops_of_rolls_that_store_every_step_or_two_match_numpy():
    # plan/select_nesting.py: a kernel every two steps of the stencil, every step of the game.
    from numfuse_tests.programs import jacobi_roll as jacobi, life

    rng = np.random.default_rng(5)
    check(jacobi, rng.standard_normal((9, 7)), 5)
    check(life, rng.random((10, 12)) > 0.6, 3)


@pytest.mark.parametrize("fn", [lambda z: np.diag(z), lambda z: np.diagonal(z), lambda z: z.diagonal(1),
                                lambda z: np.diag(z)[::-1]])
def test_a_diagonal_returned_is_a_read_only_view_as_numpys(fn):
    z = np.arange(9.0).reshape(3, 3)
    got = numfuse.jit(fn, numpy_fallback=False)(z)
    assert_same(got, fn(z))
    assert np.shares_memory(got, z) and not got.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        got[0] = 100.0
    assert z[0, 0] == 0.0


def view_of_the_same_dtype_written(z):
    y = z.view(np.float64)
    y[0] = 5.0
    w = z.view(np.ndarray)
    w[1] += 7.0
    return z, y * 2


def test_a_view_as_the_same_dtype_or_ndarray_writes_through_as_numpys():
    z = np.array([1.5, 2.5, 3.0])
    jf = numfuse.jit(view_of_the_same_dtype_written, numpy_fallback=False)
    for _ in range(2):
        expected, ours = z.copy(), z.copy()
        want = view_of_the_same_dtype_written(expected)
        got = jf(ours)
        assert_same(got[1], want[1])
        assert got[0] is ours
        np.testing.assert_array_equal(ours, expected)


def diagonals_after_a_break(z):
    if z[0, 0] > 100:  # a graph break: the function runs segment by segment
        z = z * 2
    return np.diag(z), z.diagonal(1), z.trace()


def test_a_diagonal_returned_after_a_graph_break_is_read_only_too():
    z = np.arange(16.0).reshape(4, 4)
    got = numfuse.jit(diagonals_after_a_break, numpy_fallback=False)(z)
    expected = diagonals_after_a_break(z)
    for ours, theirs in zip(got, expected):
        assert_same(ours, theirs)
    assert not got[0].flags.writeable and not got[1].flags.writeable and np.shares_memory(got[0], z)


def array_without_a_copy(a):
    b = np.array(a, copy=None)  # a itself: no copy is needed (NumPy's)
    b[0] = 5.0
    c = np.array(a, copy=False)
    c[1] = 6.0
    d = np.array(a)  # a copy, by default
    d[2] = 7.0
    e = np.array(a, dtype=np.float32, copy=None)  # a cast: a copy
    e[3] = 8.0
    return a, b is a, c is a, d is a


def test_np_array_copies_only_where_numpy_does():
    got = numfuse.jit(array_without_a_copy, numpy_fallback=False)(np.zeros(5))
    expected = array_without_a_copy(np.zeros(5))
    np.testing.assert_array_equal(got[0], expected[0])
    assert got[1:] == expected[1:] == (True, True, False)


def _ravel_and_write(x, order):
    r = x.ravel(order=order)
    r[2] = 9.0
    return x, r


@pytest.mark.parametrize("order", ["F", "A", "K"])
@pytest.mark.parametrize("layout", ["C", "F"])
def test_ravel_in_column_major_order_is_a_view_where_numpys_is(order, layout):
    # (A battery found ravel(order='F') refused, then its result handed back read-only at a
    # break, so the write raised: NumPy's is a view of a Fortran-ordered array.)
    make = lambda: np.asarray(np.arange(24.0).reshape(2, 3, 4), order=layout)  # noqa: E731
    f = numfuse.jit(_ravel_and_write, static_argnames="order")
    for _ in range(2):
        expected_x, got_x = make(), make()
        expected = _ravel_and_write(expected_x, order)
        got = f(got_x, order)
        for e, g in zip(expected, got):
            np.testing.assert_array_equal(g, e)
        assert np.shares_memory(got[1], got_x) == np.shares_memory(expected[1], expected_x)



_XC = np.arange(6.0).reshape(2, 3)


@pytest.mark.parametrize("fn, x", [
    (lambda x: (x.T * 2).ravel(order="K"), _XC),                 # NumPy lays x.T * 2 out like x.T
    (lambda x: (x * 2).ravel(order="K"), np.asfortranarray(_XC)),
    (lambda x: (x * 2).ravel(order="A"), np.asfortranarray(_XC)),
    (lambda x: (x.T + 1.0).reshape(-1, order="A"), _XC),
    # cs231n's conv_forward_strides: as_strided over np.pad of a Fortran-ordered input
    (lambda x: np.lib.stride_tricks.as_strided(np.pad(x, 1), shape=(4, 5), strides=(40, 8)).copy(),
     np.asfortranarray(_XC)),
    (lambda x: np.lib.stride_tricks.as_strided(x.T, shape=(6,), strides=(8,)).copy(), _XC),
    (lambda x: (x.T * 2).view(np.int32), _XC),
])
def test_what_reads_numpys_memory_layout_is_refused_where_numfuse_does_not_know_it(fn, x):
    # (NumPy's function ran at a graph break on numfuse's real array, laid out in C order: other
    # values, silently)
    with pytest.raises(numfuse.UnsupportedError, match="C-contiguous"):
        numfuse.jit(fn)(x)


@pytest.mark.parametrize("fn", [
    lambda x: (x + 1.0).reshape(-1, order="A"),
    lambda x: np.lib.stride_tricks.as_strided(x * 2, shape=(2, 2), strides=(8, 8)).copy(),
    lambda x: x.T.ravel(order="K"),
    lambda x: (x * 2).view(np.int64) + 1,
])
def test_what_reads_a_c_contiguous_layout_matches_numpy(fn):
    np.testing.assert_array_equal(numfuse.jit(fn)(_XC), fn(_XC))
