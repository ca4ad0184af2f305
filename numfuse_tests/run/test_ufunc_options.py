"""Ufunc and reduction options: out= (into arguments and made arrays), where=, dtype=, with
NumPy's values, dtypes, casting errors and returned arrays."""

import numpy as np
import pytest

import numfuse
from numfuse_tests.helpers import assert_same

X = np.random.default_rng(3).uniform(-2, 2, (3, 4))


def check(fn, *args):
    mine = [a.copy() for a in args]
    theirs = [a.copy() for a in args]
    with np.errstate(all="ignore"):
        expected = fn(*theirs)
        got = numfuse.jit(fn)(*mine)
    assert_same(got, expected, 4)
    for m, t in zip(mine, theirs):
        np.testing.assert_array_equal(m, t)


def _into_argument(x):
    np.add(x, 1, out=x)
    return x


def _into_made(x):
    o = np.zeros((3, 4), np.float32)
    np.multiply(x, 2, out=o)
    return o


def _where_into(x):
    o = np.full((3, 4), 5.0)
    np.multiply(x, 2, where=x > 0, out=o)
    return o


def _exp_where_in_place(x):
    np.exp(x, out=x, where=x < 0)
    return x


def _sum_out(x):
    o = np.zeros(4)
    np.sum(x, axis=0, out=o)
    return o


def _max_out_argument(x, o):
    np.max(x, axis=1, out=o)
    return o * 2


def _method_out(x):
    return x.sum(axis=1, out=np.zeros(3, np.float32))


@pytest.mark.parametrize("fn, args", [
    (_into_argument, (X,)),
    (_into_made, (X,)),
    (_where_into, (X,)),
    (_exp_where_in_place, (X,)),
    (lambda x: np.add(x.astype(np.int8), 1, dtype=np.float32), (X,)),
    (lambda x: np.multiply(x, x, dtype=np.float32) + np.less(x, 1, dtype=bool), (X,)),
    (lambda x: np.sqrt(x, where=x > 0) * (x > 0), (X,)),
    (_sum_out, (X,)),
    (_max_out_argument, (X, np.zeros(3))),
    (lambda x: np.sum(x * 3, out=np.zeros((), np.int32)), (X,)),
    (_method_out, (X,)),
])
def test_options_match_numpy(fn, args):
    check(fn, *args)


def test_casting_into_out_raises_numpys_error():
    def f(x):
        o = np.zeros((3, 4), np.int32)
        np.add(x, 1.5, out=o)
        return o

    with pytest.raises(TypeError):
        f(X)
    with pytest.raises(TypeError, match="same_kind"):
        numfuse.jit(f)(X)


def test_dtype_with_unsafe_casting_casts_as_numpy():
    # an image plus float noise into uint8: the operands cast to the loop's dtype, as NumPy does
    # with casting='unsafe' (it was ignored without out=: numfuse raised the same_kind error)
    img, noise = np.array([10, 200, 255], np.uint8), np.array([1.4, -5.2, 3.9])
    fn = lambda a, b: np.add(a, b, casting="unsafe", dtype=np.uint8)  # noqa: E731
    check(fn, img, noise)
    with pytest.raises(TypeError, match="same_kind"):
        numfuse.jit(lambda a, b: np.add(a, b, dtype=np.uint8))(img, noise)
