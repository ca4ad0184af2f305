"""Persistent normalization kernels against NumPy (issue 3): softmax, log_softmax, logsumexp, layer
norm, RMS norm, standardization and L2 normalization over shapes and axes (int, negative, tuple,
None) drawn by hypothesis, in float16, float32 and float64; rows kept on chip (long rows, short
rows several to a block, columns), rows too long for the cache (partly cached; softmax online,
with infinities and NaN), split rows, and several reductions in one kernel.

Inputs are multiples of 1/16 so that sums are exact in any order and a constant row centers to
exactly zero on both sides."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import numfuse
from numfuse_tests.helpers import check_like_numpy, planning_target, tolerance
from numfuse_tests.normalizations import BY_NAME, PATTERNS

TARGET = planning_target()  # the thresholds of the target these tests run on

SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck))
FLOATS = [np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)]


def grid(lo: float, hi: float):
    return st.integers(int(lo * 16), int(hi * 16)).map(lambda k: k / 16)


@st.composite
def shapes_and_axes(draw, max_side=10, long_side=40):
    """A shape of 1 to 3 dimensions and an axis spec over it: an int (maybe negative), a tuple
    of distinct axes, or None. One reduced dimension may be longer than a simulated block."""
    shape = list(draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=max_side), label="shape"))
    ndim = len(shape)
    kind = draw(st.sampled_from(["int", "int", "int", "tuple", "none"]), label="axis kind")
    if kind == "none":
        axis = None
        axes = list(range(ndim))
    elif kind == "int":
        axis = draw(st.integers(-ndim, ndim - 1), label="axis")
        axes = [axis % ndim]
    else:
        axes = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True), label="axes")
        axis = tuple(a - ndim if draw(st.booleans()) else a for a in axes)
        axes = [a % ndim for a in axes]
    if draw(st.booleans(), label="long"):
        shape[axes[0]] = draw(st.integers(max_side, long_side), label="long side")
    reduced = int(np.prod([shape[a] for a in axes]))
    return tuple(shape), axis, reduced


# Results of at most about one in magnitude, or a log of a sum: their absolute tolerance scales
# with the result, not with the count reduced (softmax's outputs are about 1/n).
SCALED = {"softmax", "log_softmax", "logsumexp", "l2_normalize"}


def assert_close_to_scale(got, expected, reduced: int):
    """Finite values within the helpers' rtol and an atol of 16 ulps of the largest result."""
    got, expected = np.asarray(got), np.asarray(expected)
    finite = np.isfinite(expected)
    if not finite.any():
        return
    rtol, _ = tolerance(expected.dtype, reduced)
    atol = 16 * float(np.finfo(expected.dtype).eps) * float(np.max(np.abs(expected[finite])))
    np.testing.assert_allclose(got[finite], expected[finite], rtol=rtol, atol=atol)


def run_pattern(pattern, x, axis, reduced):
    """The pattern over `axis` against NumPy: types, shapes, NaN and inf positions and values."""
    args = pattern.args(x, axis)
    fn = pattern.at(axis)
    got = check_like_numpy(fn, *args, reduced=reduced)
    if pattern.name in SCALED:
        with np.errstate(all="ignore"):
            expected = fn(*args)
        assert_close_to_scale(got, expected, reduced)
    return got


# Each example is a new signature: on the CPU target a new LLVM compile (about a second), so
# half as many there.
@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.name)
@settings(max_examples=10 if planning_target().name == "cpu" else 20, **SETTINGS)
@given(data=st.data())
def test_normalization_matches_numpy(pattern, data):
    dtype = data.draw(st.sampled_from(FLOATS), label="dtype")
    shape, axis, reduced = data.draw(shapes_and_axes())
    x = data.draw(hnp.arrays(dtype, shape, elements=grid(-4, 4)), label="x")
    run_pattern(pattern, x, axis, reduced)


@pytest.mark.parametrize("shape, axis", [((5, 300), -1), ((37, 6), -1), ((40, 7), 0)],
                         ids=["long_rows", "rows_sharing_blocks", "columns"])
@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.name)
def test_normalization_of_cached_rows_matches_numpy(pattern, shape, axis):
    """Rows longer than a block; short rows several to a block, more rows than the grid's
    blocks; columns, several outputs to a block: each row at its own place in shared memory."""
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    plan = numfuse.jit(pattern.at(axis)).plan(*pattern.args(x, axis))
    assert len(plan.kernels) == 1 and plan.kernels[0].nest.cached == ("in_a",)
    run_pattern(pattern, x, axis, shape[axis])


@pytest.mark.parametrize(
    "name, shape, axis, dtype",
    [("softmax", (2, TARGET.row_cache_bytes // 4 + 60), -1, np.float32),
     ("layer_norm", (2, TARGET.row_cache_bytes // 8 + 80), 1, np.float64),
     ("logsumexp", (TARGET.row_cache_bytes // 4 + 60, 2), 0, np.float32)],
    ids=["softmax_rows", "layer_norm_rows_float64", "logsumexp_columns"],
)
def test_normalization_of_rows_too_long_for_the_cache_matches_numpy(name, shape, axis, dtype):
    """Rows just over the cache: the first points of each row stay on chip, the others are read
    from memory in each phase (logsumexp: one online pass)."""
    pattern = BY_NAME[name]
    x = (np.random.default_rng(4).standard_normal(shape) * 3).astype(dtype)
    plan = numfuse.jit(pattern.at(axis)).plan(*pattern.args(x, axis))
    assert len(plan.kernels) == 1 and plan.kernels[0].notes
    run_pattern(pattern, x, axis, shape[axis])


def special_rows(n: int) -> np.ndarray:
    """Rows for the online softmax: a maximum that grows at every point, one that only
    shrinks, all -inf (NaN in NumPy), -inf points and a +inf, a NaN among the last points."""
    x = np.random.default_rng(11).standard_normal((5, n)).astype(np.float32)
    x[0] = np.linspace(-20, 20, n)
    x[1] = np.linspace(20, -20, n)
    x[2] = -np.inf
    x[3, ::7] = -np.inf
    x[3, n - 3] = np.inf
    x[4, n - 5] = np.nan
    return x


@pytest.mark.parametrize("name, axis", [("softmax", -1), ("log_softmax", -1), ("logsumexp", -1), ("softmax", 0)],
                         ids=["softmax", "log_softmax", "logsumexp", "softmax_columns"])
def test_online_softmax_of_special_rows_matches_numpy(name, axis):
    """Rows too long for the cache: the sum of exp(x - max) is accumulated in the max's pass and
    rescaled as the maximum grows; infinities and NaN end as NumPy's three passes end."""
    n = TARGET.row_cache_bytes // 4 + 60
    x = special_rows(n)
    if axis == 0:
        x = np.ascontiguousarray(x.T)
    pattern = BY_NAME[name]
    nest = numfuse.jit(pattern.at(axis)).plan(x).kernels[0].nest
    assert "online_sum" in {a.combine for a in nest.accumulators}
    run_pattern(pattern, x, axis, n)


def test_online_softmax_with_a_second_sum_of_the_same_exponentials_matches_numpy():
    x = np.zeros((1, TARGET.row_cache_bytes // 4 + 60), np.float32)

    def softmax_and_sum(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True), e.sum(axis=1)

    check_like_numpy(softmax_and_sum, x, reduced=x.shape[1])


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint16, np.bool_], ids=lambda d: np.dtype(d).name)
def test_centering_of_integers_and_booleans_matches_numpy(dtype):
    """The cached row keeps the input's dtype; the kernel converts it in each phase."""
    x = np.random.default_rng(5).integers(0, 3, (7, 45)).astype(dtype)
    check_like_numpy(lambda x: (x - x.mean(axis=1, keepdims=True), x.std(axis=0)), x, reduced=45)


def test_rows_of_two_dtypes_cached_together_match_numpy():
    """float16 and float64 rows side by side in one block's shared memory."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((6, 37)).astype(np.float16)
    y = rng.standard_normal((6, 37))

    def centered_product(x, y):
        z = x * y
        return z - z.mean(axis=1, keepdims=True), (z * z).sum(axis=1)

    plan = numfuse.jit(centered_product).plan(x, y)
    assert sorted(plan.kernels[0].nest.cached) == ["in_a", "in_b"]
    check_like_numpy(centered_product, x, y, reduced=37)


def test_softmax_of_a_transposed_input_matches_numpy():
    x = np.random.default_rng(7).standard_normal((20, 9)).astype(np.float32)
    check_like_numpy(BY_NAME["softmax"].at(1), x.T, reduced=20)
    check_like_numpy(BY_NAME["log_softmax"].at(0), np.asfortranarray(x), reduced=20)


# -- several reductions in one kernel -------------------------------------------------------------


def mean_and_var(x, axis):
    return x.mean(axis=axis), x.var(axis=axis)


def sum_and_max(x, axis):
    return x.sum(axis=axis, keepdims=True), x.max(axis=axis)


def cosine_similarity(x, axis):
    y = x * 0.5 - 1.0
    return (x * y).sum(axis=axis) / np.sqrt((x * x).sum(axis=axis) * (y * y).sum(axis=axis))


def full_statistics(x, axis):
    return x.sum(), x.max(), x.min(), np.mean(x), x.std(), np.ptp(x), x.argmax()


@pytest.mark.parametrize("fn", [mean_and_var, sum_and_max, cosine_similarity, full_statistics],
                         ids=lambda f: f.__name__)
@settings(max_examples=10, **SETTINGS)
@given(data=st.data())
def test_several_reductions_in_one_kernel_match_numpy(fn, data):
    dtype = data.draw(st.sampled_from(FLOATS[1:]), label="dtype")
    shape, axis, reduced = data.draw(shapes_and_axes(max_side=8, long_side=30))
    x = data.draw(hnp.arrays(dtype, shape, elements=grid(-4, 4)), label="x")
    if fn is cosine_similarity:
        x = x + np.asarray(0.25, dtype)  # no all-zero row: 0/0 would hide a wrong sum
    check_like_numpy(lambda x: fn(x, axis), x, reduced=reduced)


# -- split rows -----------------------------------------------------------------------------------


def test_few_long_rows_split_over_blocks_match_numpy():
    """Two rows of 10000 (or as many as the target splits), each split over several blocks, the
    last block of a row combining their partial results: a tie for the maximum across chunks
    goes to the first, and a NaN in a later chunk beats every number of an earlier one."""
    n = max(10000, TARGET.split_min_reduced)
    x = np.random.default_rng(8).standard_normal((2, n)).astype(np.float32)
    x[0, 100] = x[0, 6000] = 10.0
    x[0, 9000] = -10.0
    x[1, 7777] = x[1, 9000] = np.nan

    def f(x):
        return (x.sum(axis=1), x.argmax(axis=1), x.argmin(axis=1), np.nanmax(x, axis=1),
                x.min(axis=1, keepdims=True), np.nansum(x, axis=1))

    jitted = numfuse.jit(f)
    assert [k.nest.split for k in jitted.plan(x).kernels] == [True]
    check_like_numpy(f, x, reduced=n, jitted=jitted)


def test_full_reduction_split_over_blocks_matches_numpy():
    x = np.random.default_rng(9).standard_normal(TARGET.split_min_reduced)

    def f(x):
        return x.sum(), x.argmin(), np.nanmin(x), x.max()

    jitted = numfuse.jit(f)
    assert [k.nest.split for k in jitted.plan(x).kernels] == [True]
    check_like_numpy(f, x, reduced=TARGET.split_min_reduced, jitted=jitted)
