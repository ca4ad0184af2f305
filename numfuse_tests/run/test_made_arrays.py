"""Arrays the function makes itself (np.zeros, np.empty, np.full, np.eye, np.arange,
np.linspace, ...) give NumPy's results, written into by slices and masks, and np.triu/np.tril."""

import threading

import numpy as np
import pytest

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
