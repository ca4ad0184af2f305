"""Two of NumPy 2's rules for scalars: np.clip with Python int bounds outside an integer array's
range follows NumPy's _clip (a bound beyond the range bounds nothing, one on the far side raises
NumPy's OverflowError, NEP 50), never a bound wrapped into the dtype; and np.round of a 0-d
array gives a NumPy scalar, whatever the dtype and decimals."""

import numpy as np
import pytest

import numfuse
from numfuse_tests.helpers import assert_same

X8 = np.array([-128, -3, 0, 3, 100, 127], np.int8)
U8 = np.array([0, 3, 200, 255], np.uint8)


@pytest.mark.parametrize("x, lo, hi", [
    (U8, -5, None), (U8, -5, 1000), (U8, 1, 1000), (U8, None, 300),
    (X8, 1, 1000), (X8, -1000, 1000), (X8, -1000, 5), (X8, -128, 127), (X8, -129, None),
    (X8, np.int16(-1000), 5), (X8, 0.5, 300), (X8.astype(np.int64), -2**63, 2**63 - 1),
])
def test_python_int_bounds_beyond_the_dtype(x, lo, hi):
    def f(x):
        return np.clip(x, lo, hi), x.clip(lo, hi)

    assert_same(numfuse.jit(f)(x), f(x))


@pytest.mark.parametrize("lo, hi", [(200, 1000), (None, -200), (200, None)])
def test_a_bound_on_the_far_side_raises_as_numpy_does(lo, hi):
    def f(x):
        return np.clip(x, lo, hi)

    with pytest.raises(OverflowError) as numpy_error:
        f(X8)
    with pytest.raises(OverflowError, match=str(numpy_error.value)):
        numfuse.jit(f)(X8)


def test_a_runtime_python_int_bound_beyond_the_dtype():
    def f(x, lo):
        return np.clip(x, lo, None)

    jf = numfuse.jit(f)
    for lo in (5, -1000, 7, -129):
        assert_same(jf(X8, lo), f(X8, lo))


@pytest.mark.parametrize("x", [np.array(15, np.int32), np.array(1.55), np.array(7, np.uint8), np.float32(2.5)])
@pytest.mark.parametrize("decimals", [0, 1, -1])
def test_round_of_a_0d_array_is_a_numpy_scalar(x, decimals):
    def f(x):
        return np.round(x, decimals), x.round(decimals), np.around(x, decimals)

    assert_same(numfuse.jit(f)(x), f(x))
