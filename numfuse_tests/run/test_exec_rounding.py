"""np.round / np.around / ndarray.round with decimals, and np.empty_like."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import numfuse
from numfuse_tests.helpers import check

FLOATS = [np.float16, np.float32, np.float64]
INTS = [np.int8, np.int32, np.int64, np.uint16]


@pytest.mark.parametrize("dtype", FLOATS)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_round_floats_like_numpy(dtype, data):
    x = data.draw(hnp.arrays(dtype, st.integers(0, 12), elements=st.floats(-1e4, 1e4, width=np.finfo(dtype).bits)))
    decimals = data.draw(st.integers(-3, 4))
    check(lambda x: (np.round(x, decimals), np.around(x), x.round(decimals)), x)


@pytest.mark.parametrize("dtype", INTS)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_round_integers_like_numpy(dtype, data):
    info = np.iinfo(dtype)
    x = data.draw(hnp.arrays(dtype, st.integers(0, 12), elements=st.integers(max(info.min, -10**4), min(info.max, 10**4))))
    decimals = data.draw(st.integers(-3, 2))
    check(lambda x: (np.round(x, decimals), x.round(decimals)), x)


def test_round_half_to_even_at_each_decimal():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 0.125, 0.375, 25.0, 35.0, 45.0])
    check(lambda x: (np.round(x), np.round(x, 2), np.round(x, -1)), x)


def test_empty_like_has_the_prototype_shape_and_dtype():
    x = np.arange(6, dtype=np.int16).reshape(2, 3)
    out = numfuse.jit(lambda x: np.empty_like(x, dtype=np.float32))(x)
    assert out.shape == (2, 3) and out.dtype == np.float32
