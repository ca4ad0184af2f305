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
