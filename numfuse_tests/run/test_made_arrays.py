"""Arrays the function makes itself (np.zeros, np.empty, np.full, np.eye, np.arange,
np.linspace, ...) give NumPy's results, written into by slices and masks, and np.triu/np.tril."""

import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import numfuse
from numfuse_tests.helpers import assert_same

RNG = np.random.default_rng(5)
X = RNG.uniform(-2, 2, (4, 5))


def _filled_then_written(x):
    out = np.zeros((4, 5))
    out[1:] = x[1:] * 2.0
    out[0, 0] = x.sum()
    out[out < -1.0] = -1.0
    return out


def _diagonal_loop(x):
    r = np.zeros((5, 5), dtype=x.dtype)
    for k in range(5):
        r[k, k] = np.sqrt(np.sum(x[:, k] ** 2))
    return r


def _empty_like_copy(x):
    e = np.empty_like(x)
    e[:] = x
    f = np.empty((4, 5))  # NumPy leaves it unset: written whole before it is read
    f[...] = 2.0
    return e * f + np.ones_like(x, shape=(5,))


@pytest.mark.parametrize("fn, args", [
    (_filled_then_written, (X,)),
    (_diagonal_loop, (X.astype(np.float32),)),
    (_empty_like_copy, (X,)),
    (lambda x, n: np.ones(n, np.float32) + x[0, :n], (X, 3)),
    (lambda x: np.eye(4, 5, 1) * x + np.identity(5)[:4], (X,)),
    (lambda x: np.arange(5) * x + np.arange(1, 9, 2.5)[None, :1], (X,)),
    (lambda x: np.linspace(0, 1, 5) + np.logspace(0, 2, 5) * x, (X,)),
    (lambda x: np.full((4, 5), x.max()) - x + np.full(5, 7, dtype=np.int8), (X,)),
    (lambda x: np.triu(x, 1) - np.tril(x, -1), (X,)),
    (lambda x: np.tril(x[0]) + np.triu(x[:, :4].reshape(2, 2, 4), -1).sum(), (X,)),
    (lambda x: np.tri(4, 5, -1) * x, (X,)),
    (lambda a, b: np.linspace(a, b, 7), (0.5, 3.0)),
    (lambda a, b: np.linspace(a, b, 5, endpoint=False, dtype=np.int32), (1.0, 9.0)),
    (lambda a: np.linspace(a, a, 4, retstep=True), (2.0,)),
])
def test_made_arrays_match_numpy(fn, args):
    assert_same(numfuse.jit(fn)(*args), fn(*args), 20)


def test_numpy_is_itself_again_after_tracing():
    original = np.zeros
    numfuse.jit(_filled_then_written)(X)
    assert np.zeros is original
    assert isinstance(np.zeros(3), np.ndarray)


def test_other_threads_get_numpys_arrays_while_one_traces():
    seen = []
    started, release = threading.Event(), threading.Event()

    def slow(x):
        started.set()
        release.wait(5)
        return np.zeros(3) + x[0, :3]

    def other():
        started.wait(5)
        seen.append(type(np.zeros(2)))  # np.zeros is replaced now, but not for this thread
        release.set()

    thread = threading.Thread(target=other)
    thread.start()
    got = numfuse.jit(slow)(X)
    thread.join()
    assert seen == [np.ndarray]
    assert_same(got, X[0, :3])


# -- np.array of traced scalars, grids -----------------------------------------------------------


def test_array_of_a_list_of_traced_values_is_traced():
    def f(x):
        a = np.array([x.sum(), x.max(), 1.0])  # NumPy's dtype: float64, the Python float's
        b = np.asarray([[x[0, 0], 2], [x[1, 1], 3]], dtype=np.float32)
        return a, b

    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    jitted = numfuse.jit(f)
    assert jitted.plan(x) is not None  # one graph, no break
    for got, expected in zip(jitted(x), f(x)):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("options", [{}, {"indexing": "ij"}, {"sparse": True}, {"copy": False},
                                     {"sparse": True, "indexing": "ij"}])
def test_meshgrid_indices_mgrid_ogrid(options):
    def f(a, b, c):
        grids = np.meshgrid(a, b, c, **options)
        i, j = np.indices((3, 4))
        g = np.mgrid[0:3, 0:4]
        o = np.ogrid[0:3, 0:4]
        return grids, i * 10 + j, g.sum(0), o[0] + o[1]

    args = (np.arange(3.0), np.arange(4.0) * 2, np.arange(2.0) - 1)
    got, expected = numfuse.jit(f)(*args), f(*args)
    assert type(got[0]) is type(expected[0]) and len(got[0]) == len(expected[0])
    for g, e in zip(list(got[0]) + list(got[1:]), list(expected[0]) + list(expected[1:])):
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_array_equal(g, e)


# -- arrays made from their indices (numpy_index_arrays.py): NumPy's values, bit for bit ---------

_INDEXED = settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
_MADE_DTYPES = st.sampled_from([None, np.float32, np.float64, np.int32, np.int64, np.int8, np.uint16])


def _same_bits(got, expected):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got.dtype, got.shape, expected.dtype, expected.shape)
    np.testing.assert_array_equal(got.view(np.uint8), expected.view(np.uint8))


@_INDEXED
@given(start=st.integers(-50, 50) | st.floats(-50, 50, width=32),
       step=st.sampled_from([1, 2, -3, 0.5, 0.1, -0.25, 1 / 3]), count=st.integers(0, 40), dtype=_MADE_DTYPES)
def test_arange_is_numpys_bit_for_bit(start, step, count, dtype):
    stop = start + step * count
    try:
        expected = np.arange(start, stop, step, dtype=dtype)
    except (ValueError, OverflowError):
        return
    fn = lambda x: (np.arange(start, stop, step, dtype=dtype), x * np.arange(start, stop, step, dtype=dtype))  # noqa: E731
    x = np.float64(1.5)
    got = numfuse.jit(fn)(x)
    _same_bits(got[0], expected)
    _same_bits(got[1], x * expected)


@_INDEXED
@given(start=st.floats(-1e3, 1e3), stop=st.floats(-1e3, 1e3), num=st.integers(0, 30), endpoint=st.booleans(),
       dtype=st.sampled_from([None, np.float32, np.int32]))
def test_linspace_and_logspace_are_numpys(start, stop, num, endpoint, dtype):
    fn = lambda: np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)  # noqa: E731
    _same_bits(numfuse.jit(fn)(), fn())
    small = lambda: np.logspace(start / 500, stop / 500, num, endpoint=endpoint)  # noqa: E731
    assert_same(numfuse.jit(small)(), small())  # a power: within the ulps of np.power


@_INDEXED
@given(rows=st.integers(1, 9), cols=st.integers(1, 9), k=st.integers(-10, 10),
       dtype=st.sampled_from([np.float64, np.float32, np.int8, np.bool_]))
def test_eye_tri_triu_tril_are_numpys(rows, cols, k, dtype):
    x = np.arange(rows * cols, dtype=np.float64).reshape(rows, cols) - 7

    def fn(x):
        return np.eye(rows, cols, k, dtype=dtype), np.tri(rows, cols, k, dtype=dtype), np.triu(x, k), np.tril(x, k)

    for got, expected in zip(numfuse.jit(fn)(x), fn(x)):
        _same_bits(got, expected)


@_INDEXED
@given(spec=st.lists(st.tuples(st.integers(-5, 5), st.integers(1, 6), st.sampled_from([1, 2, 0.5, "count"])),
                     min_size=1, max_size=3))
def test_mgrid_ogrid_indices_are_numpys(spec):
    key = tuple(slice(start, start + 2 * n, complex(0, n)) if step == "count" else slice(start, start + n * step, step)
                for start, n, step in spec)
    dims = tuple(n for _, n, _ in spec)

    def fn():
        return np.mgrid[key], np.ogrid[key], np.indices(dims), np.indices(dims, sparse=True)

    got, expected = numfuse.jit(fn)(), fn()
    _same_bits(got[0], expected[0])
    _same_bits(got[2], expected[2])
    for g, e in zip(list(got[1]) + list(got[3]), list(expected[1]) + list(expected[3])):
        _same_bits(g, e)


def test_arange_of_a_value_from_data_takes_it_at_a_graph_break():
    def counted(x):
        x[0] = 5.0  # done, as before NumPy's arange
        return np.arange(x[1:].sum()) * x[0], np.arange(x.argmax())

    for length in (4, 6):
        mine, theirs = np.ones(length), np.ones(length)
        got, expected = numfuse.jit(counted)(mine), counted(theirs)
        for g, e in zip(got, expected):
            assert g.dtype == e.dtype
            np.testing.assert_array_equal(g, e)
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("fn", [
    lambda x: np.linspace(0, x.max(), 5),
    lambda x: np.linspace(0.5, x.max(), 4),
    lambda x: np.linspace(x.max(), 1, 3),
    lambda x: np.linspace(0, x.max(), 4, dtype=np.float64),  # computed in float32, then cast
    lambda x: np.linspace(x[0], x[1], 5, endpoint=False),
])
def test_linspace_of_a_float32_endpoint_and_python_numbers_computes_in_float32(fn):
    # NumPy weighs a Python number beside a float32 endpoint as weak: float32, not float64.
    x = np.array([1.0, 3.3], np.float32)
    jf = numfuse.jit(fn, numpy_fallback=False)
    for _ in range(2):
        assert_same(jf(x), fn(x))


ZEROS3 = np.zeros(3)
STOPS3 = np.array([0.0, 2.5, -4.0])  # its first endpoint pair has a zero step


@pytest.mark.parametrize("fn, args", [
    (lambda a, b: np.linspace(a, b, 5), (ZEROS3 + 1.0, np.arange(3.0))),
    # a zero step anywhere: NumPy computes i / div * delta for the whole array
    (lambda a, b: np.linspace(a, b, 7), (ZEROS3, STOPS3)),
    (lambda a, b: np.linspace(a, b, 5, axis=1), (np.zeros((2, 3), np.float32), np.ones(3, np.float32))),
    (lambda a, b: np.linspace(a, b, 4, axis=-1, endpoint=False), (np.arange(3), np.arange(3) * 2)),
    (lambda a, b: np.linspace(a, b, 6, dtype=np.int32), (ZEROS3, STOPS3 * 7)),
    (lambda a, b: np.linspace(a, b, 1, retstep=True), (ZEROS3, STOPS3)),
    (lambda a, b: np.linspace(a, b, 5, retstep=True), (ZEROS3, STOPS3)),
    (lambda a, b: np.linspace(a[0], b, 5) * 2, (np.ones(3, np.float32), 3.0)),
    (lambda a, b: np.logspace(a, b, 4), (ZEROS3, STOPS3)),
    (lambda a, b: np.logspace(a, b, 4, base=2.0, axis=1), (np.zeros((2, 3), np.float32), np.ones(3, np.float32))),
    (lambda a, b: np.logspace(a, b, 4, base=np.array([2.0, 3.0, 10.0])), (ZEROS3, STOPS3)),
    # a 0-d array base is not weak: float32 endpoints give float64, as in NumPy
    (lambda a, b: np.logspace(a, b, 4, base=np.array(10.0)), (np.zeros(3, np.float32), np.ones(3, np.float32))),
    (lambda a, b: np.logspace(a.sum(), b, 4, dtype=np.float32), (ZEROS3, 2.0)),
])
def test_linspace_and_logspace_of_traced_array_endpoints_are_numpys(fn, args):
    # (they were refused: "np.linspace with traced array endpoints or axis")
    # (a power's last bit may differ from NumPy's libm pow, as for any np.power)
    assert_same(numfuse.jit(fn, numpy_fallback=False)(*args), fn(*args))
