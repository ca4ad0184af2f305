"""Fused scans against NumPy: np.cumsum, np.cumprod, np.nancumsum, np.nancumprod and the
methods, along every axis and flattened, with NumPy's result dtypes, fused with producers and
consumers; float16 and complex through the library's scan. A fused scan combines each row's
points in NumPy's order, so integer scans are exact and float ones round as NumPy's do."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import numfuse
from numfuse_tests.helpers import assert_same

RNG = np.random.default_rng(11)


def _values(shape, dtype):
    if np.dtype(dtype) == np.bool_:
        return RNG.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return RNG.integers(max(info.min, -5), min(info.max, 5), shape, endpoint=True).astype(dtype)
    if np.dtype(dtype).kind == "c":
        return (RNG.uniform(0.5, 1.5, shape) + 1j * RNG.uniform(-0.5, 0.5, shape)).astype(dtype)
    return RNG.uniform(0.5, 1.5, shape).astype(dtype)


@pytest.mark.parametrize("fn, args", [
    (lambda x: np.cumsum(x * 2.0, axis=1) / (1.0 + x), (_values((4, 9), np.float32),)),
    (lambda x: np.cumsum(x, axis=0) - x, (_values((50, 7), np.float64),)),
    (lambda x: x.cumprod(axis=-1) + x.cumsum().reshape(x.shape), (_values((5, 6), np.float64),)),
    (lambda x: np.cumsum(x - x.max(axis=1, keepdims=True), axis=1), (_values((5, 33), np.float32),)),
    (lambda x: (np.cumsum(x, axis=1), x.sum(axis=1), np.cumsum(np.cumsum(x, 1), 1)), (_values((3, 8), np.float64),)),
    (lambda x: np.cumsum(x, axis=1) / x.sum(axis=1, keepdims=True), (_values((4, 10), np.float64),)),
    (lambda x: np.diff(np.cumsum(x, axis=1), axis=1), (_values((4, 10), np.float64),)),
    (lambda x: np.nancumsum(np.where(x > 1.2, np.nan, x), axis=0), (_values((6, 5), np.float64),)),
    (lambda x: np.nancumprod(np.where(x > 1.2, np.nan, x)), (_values((6, 5), np.float32),)),
    (lambda x: np.cumsum(x > 1.0, axis=0), (_values((6, 5), np.float64),)),
    (lambda x: np.cumsum(x, axis=1, dtype=np.float32), (_values((3, 8), np.int16),)),
    (lambda x: np.cumprod(x, axis=1), (_values((3, 12), np.int8),)),  # in int64, as NumPy
    (lambda x: np.cumsum(x, axis=1), (_values((3, 8), np.float16),)),  # the library's
    (lambda x: np.cumsum(x * 2, axis=0), (_values((3, 8), np.complex64),)),  # the library's
    (lambda x: np.cumsum(x.T, axis=1), (_values((7, 5), np.float64),)),
    (lambda x: np.cumsum(x, axis=1) + 1, (_values((3, 4, 5), np.float32),)),
    (lambda x: np.cumsum(x.sum()), (_values((3,), np.float64),)),
])
def test_scans_match_numpy(fn, args):
    assert_same(numfuse.jit(fn)(*args), fn(*args), args[0].size)


def test_an_updated_buffer_scanned_in_place():
    def f(x):
        y = x.copy()
        y[1:] = np.cumsum(y[:-1], axis=0)
        return y

    x = _values((6, 5), np.float64)
    assert_same(numfuse.jit(f)(x), f(x), 6)


def test_a_long_flattened_scan_matches_numpy():
    x = _values(20000, np.float64)
    assert_same(numfuse.jit(lambda x: np.cumsum(x * 0.5) + 1.0)(x), np.cumsum(x * 0.5) + 1.0, x.size)


_DTYPES = st.sampled_from([np.float32, np.float64, np.int32, np.int8, np.uint8, np.bool_, np.int64])


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3), dtype=_DTYPES,
       which=st.sampled_from(["cumsum", "cumprod", "nancumsum", "nancumprod"]), axis_choice=st.integers(-4, 3),
       consumer=st.sampled_from(["none", "add", "multiply", "max"]))
def test_random_scans_match_numpy(shape, dtype, which, axis_choice, consumer):
    x = _values(tuple(shape), dtype)
    axis = None if axis_choice < -len(shape) or axis_choice >= len(shape) else axis_choice

    def fn(x):
        scanned = getattr(np, which)(x, axis=axis)
        if consumer == "add":
            return scanned + 1
        if consumer == "multiply":
            return scanned * x.reshape(scanned.shape) if axis is not None else scanned * 2
        if consumer == "max":
            return scanned.max(axis=-1)
        return scanned

    assert_same(numfuse.jit(fn)(x), fn(x), x.size)


def _two_pass_scans(x):
    d = np.cumsum(x)
    e = np.cumsum(x * d.sum())
    return (e * d).sum(), e


def test_a_reduction_of_scans_of_two_passes():
    # (A fuzzer case that raised NotFusable: the sum reads scans of the first and second passes.)
    for x in (np.arange(1.0, 7.0), np.array([3], np.int32), np.linspace(-1, 1, 40).astype(np.float32)):
        assert_same(numfuse.jit(_two_pass_scans)(x), _two_pass_scans(x), x.size * x.size)
