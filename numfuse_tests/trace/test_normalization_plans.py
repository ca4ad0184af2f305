"""Persistent multi-phase reduction plans (issue 3): each normalization is one kernel that reads its
input once while a row fits on chip, over the last axis ("rows"), axis 0 and middle axes
("columns"); several reductions of one iteration space share a kernel; a longer row keeps what
fits on chip, reads the rest once per phase in the fewest phases, and explain names the limit;
few long rows are split over blocks; a reduction read at other rows' points is not fused."""

import re

import numpy as np
import pytest

import numfuse
from numfuse.targets.cuda import CUDA
from numfuse_tests.normalizations import BY_NAME, PATTERNS

F16, F32, F64 = np.float16, np.float32, np.float64

# (id, shape, axis, schedule): the last axis of a matrix, axis 0 of a C-ordered matrix, the middle
# axis of a 3-D array, axis 0 of a 3-D array, and the last two axes of a 3-D array as a tuple.
AXES = [
    ("last", (8, 64), -1, "rows"),
    ("axis0", (64, 8), 0, "columns"),
    ("middle", (4, 32, 5), 1, "columns"),
    ("axis0_3d", (16, 3, 5), 0, "columns"),
    ("last_two", (4, 8, 6), (1, 2), "rows"),
]


def phases_of(nest):
    return [tuple(a.combine for a in p.accumulators) for p in nest.phases]


def ones(shape, dtype=F32):
    return np.ones(shape, dtype)


def pattern_args(pattern, shape, axis, dtype=F32):
    return pattern.args(np.ones(shape, dtype), axis)


def single_kernel(fn, *args):
    jf = numfuse.jit(fn)
    plan = jf.plan(*args)
    assert len(plan.kernels) == 1, str(plan)
    return jf, plan, plan.kernels[0]


# -- part 1: every normalization, over every kind of axis, is one kernel reading x once ----------


@pytest.mark.parametrize("shape, axis, schedule", [a[1:] for a in AXES], ids=[a[0] for a in AXES])
@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.name)
def test_normalization_is_one_cached_kernel_at_minimum_bytes(pattern, shape, axis, schedule):
    """One kernel in the pattern's phases, x kept on chip, each argument read once."""
    args = pattern_args(pattern, shape, axis)
    _, plan, kernel = single_kernel(pattern.at(axis), *args)
    nest = kernel.nest
    assert phases_of(nest) == list(pattern.phases)
    assert nest.schedule == schedule
    assert nest.cached == ("in_a",), nest.strategy  # x, the first argument, is kept on chip
    assert nest.strategy == f"{schedule}, cached in_a"
    assert not nest.split
    assert kernel.notes == []
    assert kernel.passes == {}
    assert plan.bytes_moved == plan.min_bytes, str(plan)
    # min_bytes: each argument read once and the result written once.
    out = plan.graph.outputs[0].aval
    assert plan.min_bytes == sum(a.nbytes for a in args) + out.nbytes


@pytest.mark.parametrize("dtype", [F16, F64, np.int32, np.bool_], ids=lambda d: np.dtype(d).name)
def test_centering_of_other_dtypes_is_one_cached_kernel(dtype):
    """Integers and booleans are converted inside the kernel: the cache keeps the narrow input."""
    x = ones((6, 40), dtype)
    _, plan, kernel = single_kernel(lambda x: x - x.mean(axis=1, keepdims=True), x)
    assert phases_of(kernel.nest) == [("add",), ()]
    assert kernel.nest.cached == ("in_a",)
    assert kernel.nest.buffer("in_a").dtype == np.dtype(dtype)
    assert plan.bytes_moved == plan.min_bytes


def sorted_phases(nest):
    return [tuple(sorted(p)) for p in phases_of(nest)]


def modeled_bytes(kernel) -> int:
    """A kernel's bytes as the model counts them: each buffer read `passes` times, written once."""
    reads = sum(round(v.aval.nbytes * kernel.passes.get(v, 1)) for v in kernel.reads)
    return reads + sum(v.aval.nbytes for v in kernel.writes)


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.name)
def test_normalization_of_a_long_row_takes_the_fewest_passes(pattern):
    """A float32 row of twice CUDA.row_cache_bytes: still one kernel, in the fewest phases (a sum of
    exp(x - max) joins the max's pass); the first half of the row stays on chip and the rest is
    read once per phase; parameters are read once; explain names the limit hit."""
    n = CUDA.row_cache_bytes // 4 * 2
    args = pattern.args(ones((2, n)), -1)
    jf, plan, kernel = single_kernel(pattern.at(-1), *args)
    assert sorted_phases(kernel.nest) == list(pattern.phases_when_long)
    assert not kernel.nest.split
    phases = len(pattern.phases_when_long)
    x = plan.graph.inputs[0]
    reads = uncached_share(n, CUDA.row_cache_bytes // 4, phases)
    assert kernel.passes.get(x, 1) == pytest.approx(reads)
    assert all(v is x for v in kernel.passes)  # weight and bias: read once
    assert plan.bytes_moved == modeled_bytes(kernel)
    out = plan.graph.outputs[0].aval
    assert plan.bytes_moved == round(args[0].nbytes * reads) + sum(a.nbytes for a in args[1:]) + out.nbytes
    assert plan.bytes_moved < plan.min_bytes + (len(pattern.phases) - 1) * args[0].nbytes
    assert kernel.notes
    if reads > 1:
        assert any(f"{CUDA.row_cache_bytes}-byte" in note and "in_a" in note for note in kernel.notes), kernel.notes
    text = jf.explain(*args).splitlines()
    for note in kernel.notes:
        assert f"   limit: {note}" in text


def uncached_share(row_length: int, capacity: int, phases: int) -> float:
    """Reads of a row whose first `capacity` points stay on chip and whose others are read
    from memory by each of `phases` phases."""
    return 1 + (phases - 1) * max(0, row_length - capacity) / row_length


@pytest.mark.parametrize("outputs, rows", [(2, 2), (3, 4), (40, CUDA.column_cache_rows)])
def test_long_columns_cache_what_fits_for_several_neighbouring_outputs(outputs, rows):
    """A columns block caches CUDA.column_cache_rows neighbouring outputs' rows (or as many as there
    are, rounded up to a power of two): each keeps its share of the cache."""
    n = CUDA.row_cache_bytes // 4 + 60
    x = ones((n, outputs))
    jf, plan, kernel = single_kernel(BY_NAME["l2_normalize"].at(0), x)
    assert kernel.nest.schedule == "columns"
    assert kernel.nest.cached == ("in_a",)
    reads = uncached_share(n, CUDA.row_cache_bytes // (rows * 4), 2)
    assert plan.bytes_moved == round(x.nbytes * reads) + x.nbytes == modeled_bytes(kernel)
    assert "limit:" in jf.explain(x)


@pytest.mark.parametrize("dtype", [F16, F32, F64], ids=lambda d: np.dtype(d).name)
def test_row_cache_limit_is_exact(dtype):
    """The longest row that fits the cache is read once; one point more is read again."""
    itemsize = np.dtype(dtype).itemsize
    fits = CUDA.row_cache_bytes // itemsize
    l2 = BY_NAME["l2_normalize"].at(-1)
    _, cached_plan, cached = single_kernel(l2, ones((3, fits), dtype))
    assert cached.nest.cached == ("in_a",) and cached.notes == [] and cached.passes == {}
    assert cached_plan.bytes_moved == cached_plan.min_bytes
    _, plan, longer = single_kernel(l2, ones((3, fits + 1), dtype))
    assert longer.nest.cached == ("in_a",) and len(longer.notes) == 1
    nbytes = 3 * (fits + 1) * itemsize
    assert plan.bytes_moved == round(nbytes * uncached_share(fits + 1, fits, 2)) + nbytes
    assert plan.bytes_moved > plan.min_bytes


@pytest.mark.parametrize("dtype", [F32, F64], ids=lambda d: np.dtype(d).name)
def test_softmax_goes_online_only_when_the_row_does_not_fit(dtype):
    """Three exact passes over a cached row; two (max and rescaled sum together) over a longer
    one."""
    fits = CUDA.row_cache_bytes // np.dtype(dtype).itemsize
    softmax = BY_NAME["softmax"]
    _, _, kernel = single_kernel(softmax.at(-1), ones((3, fits), dtype))
    assert phases_of(kernel.nest) == list(softmax.phases)
    _, _, kernel = single_kernel(softmax.at(-1), ones((3, fits + 1), dtype))
    assert sorted_phases(kernel.nest) == list(softmax.phases_when_long)
    assert any("online softmax" in note for note in kernel.notes), kernel.notes


def updated_accumulators(stmts) -> set[str]:
    """Accumulator names that statements update (guards included)."""
    names = set()
    for s in stmts:
        updated = (getattr(s, "acc", None), getattr(s, "max_acc", None), getattr(s, "sum_acc", None))
        names.update(n for n in updated if n)
        names |= updated_accumulators(getattr(s, "body", ()))
    return names


def softmax_and_its_sum(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True), e.sum(axis=1)


@pytest.mark.parametrize("fn, n", [
    (BY_NAME["softmax"].at(1), 100),
    (BY_NAME["softmax"].at(1), CUDA.row_cache_bytes // 4 + 60),
    (lambda x: (BY_NAME["softmax"].fn(x), BY_NAME["logsumexp"].fn(x), BY_NAME["log_softmax"].fn(x)), 100),
    (softmax_and_its_sum, 100),
    (softmax_and_its_sum, CUDA.row_cache_bytes // 4 + 60),
], ids=["softmax", "softmax_online", "three", "softmax_and_sum", "softmax_and_sum_online"])
def test_every_accumulator_is_updated_in_its_phase(fn, n):
    _, _, kernel = single_kernel(fn, ones((4, n)))
    for phase in kernel.nest.phases:
        names = {a.name for a in phase.accumulators}
        assert names <= updated_accumulators(phase.body), str(kernel.nest)


def test_note_of_a_partly_cached_column_states_the_limit_hit():
    """A column of 2000 float32 is 8000 bytes: whatever the note says, it must not say that
    this row does not fit a 40960-byte cache."""
    _, _, kernel = single_kernel(BY_NAME["l2_normalize"].at(0), ones((2000, 64)))
    for note in kernel.notes:
        stated = re.search(r"\((\d+) points, (\d+) bytes\) does not fit the (\d+)-byte", note)
        assert stated is None or int(stated[2]) > int(stated[3]), note


def test_partly_cached_column_softmax_takes_the_fewest_passes():
    x = ones((2000, 64))
    _, plan, kernel = single_kernel(BY_NAME["softmax"].at(0), x)
    capacity = CUDA.row_cache_bytes // (CUDA.column_cache_rows * 4)
    online = round(x.nbytes * uncached_share(2000, capacity, 2)) + x.nbytes
    assert plan.bytes_moved <= online, kernel.notes


def test_two_inputs_share_the_row_cache():
    """Two float32 inputs: each gets half of the cache; a row longer than that reads the rest
    of both from memory again, and the note names both."""

    def centered_product(x, y):
        z = x * y
        return z - z.mean(axis=1, keepdims=True)

    half = CUDA.row_cache_bytes // 8
    _, plan, kernel = single_kernel(centered_product, ones((3, half)), ones((3, half)))
    assert sorted(kernel.nest.cached) == ["in_a", "in_b"]
    assert plan.bytes_moved == plan.min_bytes
    n = half + 100
    _, plan, kernel = single_kernel(centered_product, ones((3, n)), ones((3, n)))
    assert sorted(kernel.nest.cached) == ["in_a", "in_b"]
    reads = uncached_share(n, half, 2)
    assert kernel.passes == {v: pytest.approx(reads) for v in plan.graph.inputs}
    assert plan.bytes_moved == 2 * round(3 * n * 4 * reads) + 3 * n * 4
    assert "in_a" in kernel.notes[0] and "in_b" in kernel.notes[0]


def test_mixed_width_cached_rows_are_ordered_widest_first():
    def centered_product(x, y):
        z = x * y
        return z - z.mean(axis=1, keepdims=True)

    _, plan, kernel = single_kernel(centered_product, ones((3, 100), F16), ones((3, 100), F64))
    assert kernel.nest.cached == ("in_b", "in_a")
    assert plan.bytes_moved == plan.min_bytes


# -- part 2: several reductions over one iteration space in one kernel ---------------------------


def mean_and_var(x, axis=1):
    return x.mean(axis=axis), x.var(axis=axis)


def sum_and_max(x, axis=1):
    return x.sum(axis=axis), x.max(axis=axis)


def cosine_similarity(a, b, axis=1):
    return (a * b).sum(axis=axis) / np.sqrt((a * a).sum(axis=axis) * (b * b).sum(axis=axis))


def full_statistics(x, axis=None):
    return x.sum(), x.max(), x.min(), np.mean(x), x.std(), np.ptp(x), x.argmax()


@pytest.mark.parametrize("axis, schedule", [(1, "rows"), (0, "columns")])
@pytest.mark.parametrize(
    "fn, inputs, phases, reductions",
    [
        (mean_and_var, 1, [{"add"}, {"add"}], 2),
        (sum_and_max, 1, [{"add", "maximum"}], 2),
        (cosine_similarity, 2, [{"add"}], 3),
    ],
    ids=["mean_and_var", "sum_and_max", "cosine_similarity"],
)
def test_several_reductions_share_one_kernel(fn, inputs, phases, reductions, axis, schedule):
    args = [ones((12, 20)) for _ in range(inputs)]
    _, plan, kernel = single_kernel(lambda *a: fn(*a, axis=axis), *args)
    assert [set(p) for p in phases_of(kernel.nest)] == phases
    assert len(kernel.nest.accumulators) >= reductions
    assert kernel.nest.schedule == schedule
    assert plan.bytes_moved == plan.min_bytes, str(plan)


def test_several_full_reductions_share_one_kernel():
    _, plan, kernel = single_kernel(full_statistics, ones((8, 64)))
    first, second = phases_of(kernel.nest)
    # std's sum of squared deviations is the second pass; everything else is in the first.
    assert set(first) == {"add", "maximum", "minimum", "argmax"}
    assert second == ("add",)
    assert kernel.nest.outer == ()
    assert plan.bytes_moved == plan.min_bytes


def test_var_with_ddof_and_std_share_one_kernel():
    def f(x):
        return x.var(axis=1, ddof=1), x.std(axis=1), x.mean(axis=1, keepdims=True)

    _, plan, kernel = single_kernel(f, ones((5, 30)))
    assert phases_of(kernel.nest) == [("add",), ("add",)]
    assert plan.bytes_moved == plan.min_bytes


def test_nan_statistics_share_one_kernel():
    def f(x):
        return (np.nansum(x, axis=1), np.nanmean(x, axis=1), np.nanmax(x, axis=1), np.nanmin(x, axis=1),
                np.nanvar(x, axis=1), np.count_nonzero(x, axis=1), np.ptp(x, axis=1), x.argmin(axis=1))

    _, plan, kernel = single_kernel(f, ones((5, 30)))
    assert len(kernel.nest.phases) == 2
    assert plan.bytes_moved == plan.min_bytes


# -- strategies in explain -----------------------------------------------------------------------


def test_explain_prints_each_strategy():
    x = ones((6, 40))
    rows = numfuse.jit(BY_NAME["softmax"].at(1)).explain(x)
    assert "(reduction, rows, cached in_a)" in rows
    assert "3 passes over each row (phases)" in rows
    assert "in_a kept in shared memory from the first pass" in rows
    assert "limit:" not in rows
    columns = numfuse.jit(BY_NAME["softmax"].at(0)).explain(x)
    assert "(reduction, columns, cached in_a)" in columns
    assert "strategy: columns: threads side by side take neighbouring outputs" in columns
    plain = numfuse.jit(lambda x: x.sum(axis=1)).explain(x)
    assert "(reduction, rows)" in plain and "passes over each row" not in plain
    split = numfuse.jit(lambda x: x.sum(axis=1)).explain(ones((2, CUDA.split_min_reduced)))
    assert "(reduction, rows, split)" in split
    assert "each row split over several blocks" in split
    assert f"limit: 2 row(s) of {CUDA.split_min_reduced} reduced points" in split


# -- split rows ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn, shape, schedule",
    [
        (lambda x: (x.sum(axis=1), x.argmax(axis=1)), (2, 10000), "rows"),
        (lambda x: x.sum(), (CUDA.split_min_reduced,), "rows"),
        (lambda x: (x.max(axis=0), np.nansum(x, axis=0)), (CUDA.split_min_reduced, 3), "columns"),
        (lambda x: x.min(axis=1), (CUDA.split_max_rows - 1, CUDA.split_min_reduced), "rows"),
    ],
    ids=["sum_argmax", "full", "columns", "most_rows"],
)
def test_few_long_rows_are_split(fn, shape, schedule):
    _, plan, kernel = single_kernel(fn, ones(shape))
    assert kernel.nest.split
    assert kernel.nest.schedule == schedule
    assert kernel.nest.strategy == f"{schedule}, split"
    assert len(kernel.nest.phases) == 1
    assert plan.bytes_moved == plan.min_bytes


@pytest.mark.parametrize(
    "fn, shape",
    [
        (lambda x: x.sum(axis=1), (CUDA.split_max_rows, CUDA.split_min_reduced)),  # enough rows
        (lambda x: x.sum(axis=1), (2, CUDA.split_min_reduced - 1)),  # rows too short
        (BY_NAME["softmax"].at(1), (2, 10000)),  # several phases: cached instead
        (lambda x: x.var(axis=1), (2, 10000)),
    ],
    ids=["many_rows", "short_rows", "softmax", "var"],
)
def test_rows_that_are_not_split(fn, shape):
    _, _, kernel = single_kernel(fn, ones(shape))
    assert not kernel.nest.split
    assert "split" not in kernel.nest.strategy


# -- what must not fuse --------------------------------------------------------------------------


def test_reduction_read_at_other_rows_points_is_a_second_kernel():
    plan = numfuse.jit(lambda x: x - x.max(axis=1)).plan(ones((6, 6)))
    assert len(plan.kernels) == 2
    assert "another row's result" in plan.kernels[1].reason


def test_reduction_over_other_axes_of_a_reduction_is_a_second_kernel():
    plan = numfuse.jit(lambda x: (x / x.sum(axis=0)).sum(axis=1)).plan(ones((5, 7)))
    assert len(plan.kernels) == 2
    assert "written by an earlier kernel" in plan.kernels[1].reason
    assert plan.bytes_moved > plan.min_bytes


def test_softmax_of_a_row_sum_reads_it_from_an_earlier_kernel():
    """softmax over axis 0 of values that need the axis-1 sums: two iteration spaces, two
    kernels, the second still one persistent kernel."""

    def f(x):
        return BY_NAME["softmax"].fn(x - x.sum(axis=1, keepdims=True), axis=0)

    plan = numfuse.jit(f).plan(ones((8, 16)))
    assert len(plan.kernels) == 2
    assert phases_of(plan.kernels[1].nest) == [("maximum",), ("add",), ()]
    assert plan.kernels[1].reason.count("split because") == 1
