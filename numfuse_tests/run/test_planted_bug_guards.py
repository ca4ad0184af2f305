"""Fixed tests for bugs that, planted by hand, passed the rest of the suite (issue: tests that
catch bugs): a reduction's input read at other rows' points, permutations that are not their
own inverse, and one function called with other dtypes and layouts in turn."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import numfuse
from numfuse_tests.trace.test_plans import SQUARE_ARGS, program_function, programs


def _square(n=6, seed=0):
    return np.random.default_rng(seed).standard_normal((n, n))


@pytest.mark.parametrize("fn", [
    lambda x: (x - x.max(axis=1)).sum(axis=1),        # max of row j read at row i's points
    lambda x: (x - x.max(axis=0)).sum(axis=1),
    lambda x: (x.T - x.sum(axis=1)).max(axis=1),
    lambda x: (x[::-1] * x.mean(axis=1)).sum(axis=1),
    lambda x: (x - x.min(axis=1, keepdims=True).T).sum(axis=0),
    lambda x: np.exp(x - x.max(axis=1)).sum(axis=1) / x.sum(axis=0),
])
def test_reductions_of_reductions_read_at_other_rows_points(fn):
    x = _square()
    np.testing.assert_allclose(numfuse.jit(fn)(x), fn(x), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda x: x.transpose(1, 2, 0) * 2,
    lambda x: x.transpose(2, 0, 1) + x.transpose(2, 0, 1)[:, ::-1],
    lambda x: np.moveaxis(x, 0, -1) - 1,
    lambda x: np.moveaxis(x, -1, 0).sum(axis=1),
    lambda x: x.transpose(1, 2, 0).reshape(3, -1) * 1.5,
])
def test_permutations_that_are_not_their_own_inverse(fn):
    x = np.arange(2 * 3 * 4, dtype=np.float64).reshape(2, 3, 4)
    got, expected = numfuse.jit(fn)(x), fn(x)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_one_function_called_with_other_dtypes_and_layouts_in_turn():
    def f(x):
        return x * 3 + x.sum(axis=-1, keepdims=True)

    jitted = numfuse.jit(f)
    base = np.arange(12).reshape(3, 4)
    for x in (base.astype(np.float32), base.astype(np.int64), np.asfortranarray(base.astype(np.float64)),
              base.astype(np.int8), base.astype(np.float32)[:, ::2], base.astype(np.float32)):
        for _ in range(2):  # the second call takes the fast path
            got, expected = jitted(x), f(x)
            assert got.dtype == expected.dtype, (x.dtype, got.dtype)
            np.testing.assert_array_equal(got, expected)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(square=True))
def test_random_square_programs_with_reductions_run_as_numpy(program):
    """The plan generator's square programs (reductions without keepdims, read at other rows'
    points), planned and run against NumPy."""
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(a.shape).astype(np.float32) for a in SQUARE_ARGS]
    fn = program_function(*program)
    with np.errstate(all="ignore"):
        expected = fn(*args)
    got = numfuse.jit(fn)(*args)
    for g, e in zip(got, expected):
        assert np.shape(g) == np.shape(e) and np.asarray(g).dtype == np.asarray(e).dtype
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)
