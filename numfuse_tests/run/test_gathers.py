"""Gathers run inside fused kernels and give NumPy's values: every placement of index arrays,
negative indices, gathers inside reductions and of earlier kernels' results, np.take and
np.take_along_axis, and NumPy's IndexError for an index out of bounds."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import numfuse
from numfuse_tests.helpers import assert_same

RNG = np.random.default_rng(11)
X = RNG.uniform(-2, 2, (5, 6)).astype(np.float32)
X3 = RNG.uniform(-2, 2, (3, 4, 5))
I = np.array([4, 0, -1, 2, 2])


def check(fn, *args, reduced=1):
    expected = fn(*args)
    got = numfuse.jit(fn)(*args)
    assert_same(got, expected, reduced)


@pytest.mark.parametrize("fn, args", [
    (lambda x, i: x[i], (X, I)),
    (lambda x, i: np.exp(x)[:, i] * 2.0, (X, I)),
    (lambda x: x[:, [0, 2]] - x[[1, -1]][:, :2].sum(axis=0), (X,)),
    (lambda x, i, j: x[i, j], (X, I, np.array([5, 1, 0, 3, -6]))),
    (lambda x, i: x[i[:, None], i[None, :]], (X[:, :5].copy(), I)),
    (lambda x, i: x[1, :, i[:3]], (X3, I)),
    (lambda x, i: x[i[:3] % 3, :, 1], (X3, I)),
    (lambda x, i: x[..., i], (X3, I)),
    (lambda x, i: x[i % 3, ::-1, 1:4], (X3, I)),
    (lambda x, i: x.T[i], (X, I)),
    (lambda x, i: x[i.astype(np.int32)][i.astype(np.uint8) % 5], (X, I)),
    (lambda x, i: np.take(x, i, axis=1) + np.take(x, i * 3), (X, I)),
    (lambda x, i: np.take_along_axis(x, i, axis=1), (X, np.argsort(X, axis=1))),
    (lambda x: np.take_along_axis(x, np.argsort(x, axis=0)[:2], axis=0), (X,)),
    (lambda x, i: (x - x.max(axis=1, keepdims=True))[i], (X, I)),
    (lambda x, i: x.sum(axis=0)[i], (X, I)),
    (lambda x: x[np.argmax(x.sum(axis=1))] * 2.0, (X,)),
])
def test_gathers_match_numpy(fn, args):
    check(fn, *args, reduced=6)


def test_gathered_rows_reduced_in_one_kernel_match_numpy():
    fn = lambda x, i: (x[i] * 2.0).sum(axis=1)  # noqa: E731
    assert len(numfuse.jit(fn).plan(X, I).kernels) == 1
    check(fn, X, I, reduced=6)


def test_embedding_lookup_and_loss_match_numpy():
    table = RNG.uniform(-1, 1, (10, 4)).astype(np.float32)
    tokens = RNG.integers(0, 10, (3, 7))
    targets = RNG.integers(0, 4, (3, 7))

    def f(table, tokens, targets):
        logits = table[tokens]  # (3, 7, 4)
        logp = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
        picked = np.take_along_axis(logp, targets[..., None], axis=-1)
        return -picked.mean()

    check(f, table, tokens, targets, reduced=21 * 4)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(rows=st.integers(1, 6), cols=st.integers(1, 6), data=st.data())
def test_random_row_and_column_gathers_match_numpy(rows, cols, data):
    x = RNG.uniform(-2, 2, (rows, cols))
    i = np.array(data.draw(st.lists(st.integers(-rows, rows - 1), min_size=1, max_size=6)))
    j = np.array(data.draw(st.lists(st.integers(-cols, cols - 1), min_size=1, max_size=6)))
    check(lambda x, i, j: x[i][:, j] + x[:, j].sum(axis=0), x, i, j, reduced=rows)


@pytest.mark.parametrize("bad", [[5], [-6], [0, 9]])
def test_index_out_of_bounds_raises_index_error(bad):
    with pytest.raises(IndexError):
        X[np.array(bad)]
    fn = numfuse.jit(lambda x, i: x[i] + 1.0)
    with pytest.raises(IndexError):
        fn(X, np.array(bad))
    # The function stays usable after the error.
    assert_same(fn(X, I), X[I] + 1.0)


# -- writes through a boolean mask ---------------------------------------------------------------


def check_in_place(fn, *args):
    mine = [a.copy() for a in args]
    theirs = [a.copy() for a in args]
    expected = fn(*theirs)
    got = numfuse.jit(fn)(*mine)
    assert_same(got, expected, 30)
    for i, (m, t) in enumerate(zip(mine, theirs)):
        assert_same(m, t, 30, f"argument {i}")


def _zero_positive(x):
    x[x > 0] = 0.0
    return x


def _clip_local(x):
    y = x * 2.0
    y[y < -1.0] = -1
    return y.sum(axis=1)


def _rows(x):
    x[x[:, 0] > 0] = np.arange(6.0, dtype=np.float32)
    return x


def _put(x):
    np.putmask(x, x > 1.0, 7.0)
    return x


def _copy_where(x, y):
    np.copyto(x, y, where=y > 0)
    return x * 1.0


def _int_truncates(x):
    x[x > 0] = 1.5  # cast into the int array as NumPy's assignment casts
    return x


def _unit_then_scaled(x, top):
    # py/clip2.py's clip: the selection's values through a helper that makes an array of its
    # size, written back one value per selected element.
    def limit(v, epsilon=1e-6):
        out = np.empty(shape=v.shape, dtype=v.dtype)
        small = np.abs(v) < epsilon
        out[small] = 0
        out[~small] = v[~small] / np.abs(v[~small])
        return out

    mask = np.abs(x) > top
    x[mask] = limit(x[mask]) * top
    return x


def _row_per_selected_row(x):
    m = x.sum(axis=1) > 0
    x[m] = np.arange(m.sum() * x.shape[1], dtype=x.dtype).reshape(-1, x.shape[1])
    return x


def test_one_value_per_selected_element_is_written_in_numpys_order():
    z = RNG.standard_normal(50) + 1j * RNG.standard_normal(50)
    z[3] = 0
    check_in_place(_unit_then_scaled, z, np.float64(0.5))
    check_in_place(_row_per_selected_row, X)
    with pytest.raises(ValueError, match="cannot assign 7 input values"):
        numfuse.jit(lambda x: x.__setitem__(x > 0, np.arange(7.0)))(np.ones(5))


@pytest.mark.parametrize("fn, args", [
    (_zero_positive, (X,)),
    (_clip_local, (X,)),
    (_rows, (X,)),
    (_put, (X,)),
    (_copy_where, (X, -X)),
    (_int_truncates, ((X * 3).astype(np.int32),)),
])
def test_masked_writes_match_numpy(fn, args):
    check_in_place(fn, *args)


# -- writes through index arrays -------------------------------------------------------------------

IDX = np.array([1, 3, 1, -1])  # a repeated index: NumPy's last write wins, every ufunc.at counts


def _assign(x, i):
    x[i] = 7.0
    return x


def _assign_rows(x, i):
    y = x * 2.0
    y[i] = np.arange(4.0, dtype=np.float32)[:, None]
    return y + 1.0


def _add_at(x, i):
    np.add.at(x, i, 1.0)
    return x


def _columns(x, i):
    x[:, i[:2]] = x[:, :2] * 10.0
    return x.sum(axis=0)


def _max_at_pairs(x, i):
    np.maximum.at(x, (i, i % 6), 5.0)
    return x


def _then_gather(x, i):
    x[i, 0] = -1.0
    return x[i]


def _histogram_like(x, i):
    counts = np.zeros_like(x[0])
    np.add.at(counts, i % 6, 1.0)
    return counts


def _int_subtract_at(x, i):
    y = (x * 10).astype(np.int32)
    np.subtract.at(y, i, 3)
    return y


@pytest.mark.parametrize("fn", [_assign, _assign_rows, _add_at, _columns, _max_at_pairs, _then_gather,
                                _histogram_like, _int_subtract_at])
def test_scatters_match_numpy(fn):
    check_in_place(fn, X, IDX)


def _into_a_slice(x, i):
    x[1:][i % 3] = -2.0
    return x


def _into_a_reshape(x, i):
    v = x.reshape(-1, 3)
    v[:, i % 3] += 1.0  # duplicates: NumPy's last write
    return x


def _at_into_a_strided_view(x, i):
    np.add.at(x[::2, ::-1], i % 2, 10.0)  # duplicates accumulate
    return x


def _into_a_transpose_of_a_local(x, i):
    y = x * 2.0
    y.T[i % 4] = 0.5
    return y


def _put_and_place_into_views(x):
    y = x + 1.0
    np.put(y[1:, ::2], [0, 4, -1], [7.0, 8.0])
    np.place(y[::-1], y[::-1] > 5.0, [1.0, 2.0, 3.0])
    return y


def _slices_beside_the_index_arrays(x, i):
    x[i % 5, 1:] = -1.0
    x[1:4, i] += 2.0
    np.add.at(x, (slice(None, None, 2), i), 1.0)
    x[i % 5, ::-2] = np.arange(3.0, dtype=x.dtype)
    return x


@pytest.mark.parametrize("fn", [_into_a_slice, _into_a_reshape, _at_into_a_strided_view, _into_a_transpose_of_a_local,
                                _slices_beside_the_index_arrays])
def test_scatters_into_views_match_numpy(fn):
    check_in_place(fn, X, IDX)


def test_put_and_place_into_views_match_numpy():
    check_in_place(_put_and_place_into_views, X)


@pytest.mark.parametrize("x, ufunc, value", [
    # ufunc.at runs NumPy's loop for both operands, then casts to the array's dtype: these loops
    # are wider than the array (the fuzzer found the first: 0 - 5 - 5 in float64 is 2**64 - 16,
    # which becomes 0 in uint64, not 2**64 - 10).
    (np.array([0, 3, 2**63 + 7], np.uint64), np.add, np.int64(-5)),
    (np.array([-2, 5, 1], np.int64), np.add, 0.5),
    (np.array([2**62 + 1, 5, 0], np.int64), np.maximum, np.uint64(3)),
    (np.array([2**62 + 1, 5, 0], np.int64), np.subtract, np.float64(1.0)),
    (np.array([100, 7, -3], np.int8), np.multiply, np.int16(3)),
    (np.array([7, 1, 200], np.uint8), np.subtract, np.int16(9)),
    (np.array([1.0, 2.5, -0.0], np.float32), np.add, np.float64(3e-8)),
    (np.array([100, 7, -3], np.int8), np.add, 300),
    # A Python scalar counts as an array of its own dtype here, unlike in a ufunc's call.
    (np.array([2**62 + 1, 5, 0], np.uint64), np.add, -1),
    (np.array([1.0, 2.5, -0.0], np.float32), np.add, 2.0**-24 + 2.0**-50),
    (np.array([1.0, 2.5, -0.0], np.complex64), np.subtract, 1j * (2.0**-24 + 2.0**-50)),
])
def test_ufunc_at_computes_in_numpys_loop_dtype(x, ufunc, value):
    def at(x, i, v):
        ufunc.at(x, i, v)
        return x * 1

    def at_python_scalar(x, i):
        ufunc.at(x, i, value)
        return x * 1

    i = np.array([0, 0, 2, 1])
    with np.errstate(all="ignore"):
        if isinstance(value, (int, float)):
            check_in_place(at_python_scalar, x, i)
        else:
            check_in_place(at, x, i, np.asarray(value))


def test_a_scatter_is_one_library_call_in_the_arrays_buffer():
    plan = numfuse.jit(_assign).plan(X.copy(), IDX)
    assert [s.prim for s in plan.library_steps] == ["scatter"]
    assert plan.aliases  # the scatter's result is a version of the argument: no new buffer


def test_a_scatter_out_of_bounds_raises_index_error():
    with pytest.raises(IndexError):
        numfuse.jit(_assign)(X.copy(), np.array([0, 9]))


# -- reading through a boolean mask ------------------------------------------------------------------


@pytest.mark.parametrize("fn", [
    lambda x: x[x > 0].sum(),
    lambda x: x[x > 0].mean(),
    lambda x: np.sum(x[x < 0] ** 2),
    lambda x: x[x > 0.5].max() - x[x < 0.5].min(),
    lambda x: (x[x > 1] * 2).prod(),
    lambda x: (2 - x[x > 0]).sum() + np.mean(x[x > 0]),
    lambda x: (x[x > 0] > 1).sum(),
    lambda x: x[x > 9].mean(),  # empty: NaN, as NumPy's mean of an empty slice
    lambda x: x[x > 0].any() & x[x < 9].all(),
    lambda x: np.abs(x[x < 0]).sum(),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_reductions_of_masked_selections_match_numpy(fn, dtype):
    x = (X * 3).astype(dtype)
    with np.errstate(all="ignore"):
        expected = fn(x)
    with np.errstate(all="ignore"):
        assert_same(numfuse.jit(fn)(x), expected, 30)


def _power_back(x):
    x[x > 0] = x[x > 0] ** -1.5  # npbench's nbody
    return x


def _add_through_mask(x):
    x[x > 0] += 1
    return x


@pytest.mark.parametrize("fn", [_power_back, _add_through_mask])
def test_writing_a_selection_back_matches_numpy(fn):
    check_in_place(fn, X)


def test_max_of_an_empty_selection_raises_numpys_error():
    with pytest.raises(ValueError):
        X[X > 9].max()
    with pytest.raises(ValueError, match="zero-size array"):
        numfuse.jit(lambda x: x[x > 9].max())(X)


# -- np.put, np.place, np.choose ---------------------------------------------------------------------


def _put_lists(x):
    np.put(x, [0, 5, -1], [1.0, 2.0, 3.0])
    return x


def _put_clip(x):
    y = x * 2.0
    np.put(y, np.array([2, 30]), 9.0, mode="clip")
    return y


def _place_cycles(x):
    np.place(x, x > 0, [10.0, 20.0])
    return x


@pytest.mark.parametrize("fn", [_put_lists, _put_clip, _place_cycles])
def test_put_and_place_match_numpy(fn):
    check_in_place(fn, X)


def _put_scalar_arguments(x, i, v):
    np.put(x, i, v)
    np.putmask(x, x > 3.0, v)
    return x * 2.0


def test_put_of_scalar_arguments_matches_numpy():
    # np.put(x, i, v) with Python numbers for i and v: kernel arguments, which the library call
    # reads from a 0-d copy (they were refused: "pass it as a 0-d array")
    expected = _put_scalar_arguments(X.ravel().copy(), 3, 7.5)
    got = numfuse.jit(_put_scalar_arguments)(X.ravel().copy(), 3, 7.5)
    assert_same(got, expected)


def test_put_out_of_bounds_raises_index_error():
    with pytest.raises(IndexError):
        numfuse.jit(_put_lists)(np.ones(2))


CHOICE = RNG.integers(0, 3, X.shape)


@pytest.mark.parametrize("fn", [
    lambda a, x: np.choose(a, [x, -x, x * 2]),
    lambda a, x: np.choose(a % 2, [x[0], 7.0]),
])
def test_choose_matches_numpy(fn):
    check(fn, CHOICE, X)


@pytest.mark.parametrize("bad", [[0, 3], [-1, 0]])
def test_choose_out_of_range_raises_numpys_value_error(bad):
    fn = lambda a, x: np.choose(a, [x, -x, x])  # noqa: E731
    with pytest.raises(ValueError, match="invalid entry in choice array"):
        fn(np.array(bad), np.ones(2))
    with pytest.raises(ValueError, match="invalid entry in choice array"):
        numfuse.jit(fn)(np.array(bad), np.ones(2))


def test_an_in_place_update_of_x_k_for_a_traced_k_writes_x_as_numpys_view():
    # cs231n's svm_loss_naive: dW[:, y[i]] -= X[i, :], with y[i] from data
    def svm_step(dW, X, y):
        for i in range(X.shape[0]):
            dW[:, y[i]] -= X[i, :]
        return dW

    def column(x, y):
        col = x[:, y[0]]
        col *= 2.0  # writes x, as NumPy's view col does
        col += 1.0
        return x, col

    rng = np.random.default_rng(0)
    dW, X, y = rng.random((4, 3)), rng.random((5, 4)), np.array([0, 2, 1, 2, 0])
    np.testing.assert_array_equal(numfuse.jit(svm_step)(dW.copy(), X, y), svm_step(dW.copy(), X, y))
    x = rng.random((3, 3))
    for got, expected in zip(numfuse.jit(column)(x.copy(), y[1:]), column(x.copy(), y[1:])):
        np.testing.assert_array_equal(got, expected)


def _gathered_statistics(data, idx):
    # a bootstrap's statistics of a resample: x = data[idx]; its sum beside its max takes a pass
    # of its own over the row (pairwise.sums_apart), which read x[...] without computing the
    # gathered index (a compile error in the serial function, under 32,768 points)
    x = data[idx]
    return x.sum(), x.max(), x.mean(), np.argmax(x), np.cumsum(x)


@pytest.mark.parametrize("n", [50, 300])
def test_a_gathers_sum_beside_a_max_or_cumsum_matches_numpy(n):
    rng = np.random.default_rng(n)
    data, idx = rng.random(n), rng.integers(-n, n, n)
    assert_same(numfuse.jit(_gathered_statistics, numpy_fallback=False)(data, idx), _gathered_statistics(data, idx))
