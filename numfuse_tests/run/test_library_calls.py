"""Library calls and fused products run and give NumPy's results: matrix products in every
rank NumPy's rules allow (fused or through the library), linear algebra, sorts, scans and FFTs
between fused kernels, in-place updates around them, and their errors."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import numfuse
from numfuse_tests.helpers import assert_same

RNG = np.random.default_rng(7)


def rand(*shape, dtype=np.float64, low=-2.0, high=2.0):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return RNG.random(shape) > 0.5
    if dtype.kind in "iu":
        low = 0 if dtype.kind == "u" else -4
        return RNG.integers(low, 5, shape).astype(dtype)
    if dtype.kind == "c":
        return (RNG.uniform(low, high, shape) + 1j * RNG.uniform(low, high, shape)).astype(dtype)
    return RNG.uniform(low, high, shape).astype(dtype)


def check(fn, *args, reduced=1, **jit_options):
    expected = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got = numfuse.jit(fn, **jit_options)(*mine)
    assert_same(got, expected, reduced)
    return got


# -- matrix products ------------------------------------------------------------------------------

MATMUL_SHAPES = [
    ((5, 4), (4, 3)), ((4,), (4, 3)), ((5, 4), (4,)), ((4,), (4,)), ((2, 5, 4), (4, 3)),
    ((5, 4), (3, 4, 2)), ((2, 1, 3, 4), (5, 4, 2)), ((3, 2, 2), (3, 2, 2)), ((1, 4), (4, 1)),
    ((20, 30), (30, 25)), ((3, 20, 30), (30, 25)),
]


@pytest.mark.parametrize("a, b", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int8, np.bool_, np.complex64])
def test_matmul_matches_numpy(a, b, dtype):
    check(lambda x, y: x @ y, rand(*a, dtype=dtype), rand(*b, dtype=dtype), reduced=a[-1])


@pytest.mark.parametrize("da, db", [(np.int32, np.float32), (np.uint8, np.int8), (np.bool_, np.int16),
                                    (np.float32, np.float64)])
def test_mixed_dtype_products_match_numpy(da, db):
    check(lambda x, y: np.matmul(x, y), rand(6, 5, dtype=da), rand(5, 4, dtype=db), reduced=5)
    check(lambda x, y: np.matmul(x, y), rand(30, 40, dtype=da), rand(40, 20, dtype=db), reduced=40)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(batch=st.lists(st.integers(1, 3), max_size=2), n=st.integers(1, 5), k=st.integers(1, 6),
       m=st.integers(1, 5), one_d=st.sampled_from(["", "a", "b", "ab"]))
def test_matmul_shapes_match_numpy(batch, n, k, m, one_d):
    a = (k,) if "a" in one_d else tuple(batch) + (n, k)
    b = (k,) if "b" in one_d else (m and (k, m))
    check(lambda x, y: x @ y, rand(*a), rand(*b), reduced=k)


def test_integer_products_wrap_as_numpy():
    x = np.full((4, 30), 100, np.int8)
    check(lambda a, b: a @ b, x, x.T.copy())  # int8 sums wrap in int8
    check(lambda a, b: a @ b, np.full((40, 30), 100, np.int8), np.full((30, 40), 3, np.int8))


def test_dot_vdot_inner_tensordot_einsum_match_numpy():
    a, b = rand(3, 4, 5), rand(6, 5, 2)
    check(lambda x, y: np.dot(x, y), a, b, reduced=5)
    check(lambda x, y: np.dot(x, y), rand(4, 5), rand(5), reduced=5)
    check(lambda x, y: np.dot(x, 2.0) + np.dot(3, y), rand(4), rand(4))
    check(lambda x, y: np.vdot(x, y), rand(2, 3, dtype=np.complex128), rand(6, dtype=np.complex128), reduced=6)
    check(lambda x, y: np.vdot(x, y), rand(2, 3, dtype=np.int32), rand(3, 2, dtype=np.int32))
    check(lambda x, y: np.inner(x, y), rand(2, 3, 5), rand(4, 5), reduced=5)
    check(lambda x, y: np.tensordot(x, y, axes=([1, 0], [0, 1])), rand(3, 4, 5), rand(4, 3, 2), reduced=12)
    check(lambda x, y: np.einsum("bij,bjk->bik", x, y), rand(2, 20, 20), rand(2, 20, 20), reduced=20)
    check(lambda x, y: np.einsum("ij,kj->ik", x, y) + 1.0, rand(5, 3), rand(4, 3), reduced=3)
    check(lambda x: np.einsum("ii->i", x), rand(4, 4))
    check(lambda x: np.einsum("ijk->kj", x), rand(2, 3, 4), reduced=2)
    check(lambda x, y: np.einsum("i,j->ij", x, y), rand(5), rand(3))


def test_einsum_of_a_broadcast_factor_sums_first_as_numpy():
    # NumPy sums x over j, then multiplies by v's one value: inf * (1 - 2 + 3) is inf, where
    # inf * each term, summed, would be NaN. Sizes one and zero on j keep NumPy's order too.
    x = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, 6.0]])
    check(lambda a, v: np.einsum("ij,j->i", a, v), x, np.array([np.inf]), reduced=3)
    check(lambda a, v: np.einsum("j,ij->i", v, a) + 1.0, x, np.array([-np.inf]), reduced=3)
    check(lambda a, v: np.einsum("ij,j->", a, v), x, np.array([2.5]), reduced=6)
    check(lambda a, v: np.einsum("ij,j->i", a, v), np.ones((2, 0)), np.array([np.inf]))
    check(lambda a, v: np.einsum("ij,jk->ik", a, v), x, np.full((1, 2), np.inf), reduced=3)
    # Only where j is NumPy's inner loop, the other operand's innermost axis in memory: summed
    # along another axis (a Fortran-ordered or transposed operand, or "ij,i->j"), NumPy
    # multiplies each term, and inf * 0 or inf - inf is NaN (a fuzzer case: NaN where numfuse
    # gave inf).
    y = np.array([[1.0, -2.0, 0.0], [4.0, 5.0, 6.0]])
    check(lambda a, v: np.einsum("ij,j->i", a, v), np.asfortranarray(y), np.array([np.inf]), reduced=3)
    check(lambda a, v: np.einsum("...j,...j->...", v, a.T), y.T.copy(), np.array([np.inf]), reduced=3)
    check(lambda a, v: np.einsum("ij,i->j", a, v), y.T.copy(), np.array([np.inf]), reduced=3)


def test_product_with_producers_and_consumers_matches_numpy():
    def layer(x, w, b):
        h = np.maximum(x * 0.5 + 1.0, 0.0) @ w + b
        return np.tanh(h), h.sum(axis=1), (h - h.max(axis=1, keepdims=True)).mean()

    check(layer, rand(40, 30, dtype=np.float32), rand(30, 20, dtype=np.float32), rand(20, dtype=np.float32), reduced=30 * 20)


def test_transposed_arguments_are_read_in_place():
    x, w = rand(30, 40), rand(25, 30)
    fn = lambda a, b: (a.T @ b.T) * 2.0  # noqa: E731
    plan = numfuse.jit(fn).plan(x, w)
    assert len(plan.library_steps) == 1 and plan.library_steps[0].views
    check(fn, x, w, reduced=30)
    f_ordered = np.asfortranarray(rand(30, 40))
    check(lambda a, b: a @ b + 1.0, f_ordered, rand(40, 20), reduced=40)


def test_chained_products_and_in_place_updates_match_numpy():
    def f(x, w):
        y = x @ w
        y[0] = 0.0
        y *= 2.0
        return y @ w.T

    check(f, rand(30, 40), rand(40, 30), reduced=1200)

    def g(x, w):
        x[1:3] = 1.0  # the product reads the updated argument
        return x @ w

    check(g, rand(30, 40), rand(40, 30), reduced=40)


# -- linear algebra, sorts, scans, FFTs ---------------------------------------------------------

SPD = rand(5, 5) @ rand(5, 5).T + 5 * np.eye(5)


@pytest.mark.parametrize("fn, args", [
    (lambda a, b: np.linalg.solve(a, b) * 2.0, (SPD, rand(5))),
    (lambda a, b: np.linalg.solve(a + 1.0, b), (np.stack([SPD] * 2).astype(np.float32), rand(2, 5, 3, dtype=np.float32))),
    (lambda a: np.linalg.inv(a) - 1.0, (SPD,)),
    (lambda a: np.linalg.cholesky(a @ a.T + np.eye(5)), (SPD,)),
    (lambda a: np.linalg.det(a * 2.0), (np.stack([SPD] * 3),)),
    (lambda a: np.linalg.slogdet(a), (SPD.astype(np.float32),)),
    (lambda a: np.abs(np.linalg.qr(a).R), (rand(6, 4),)),
    (lambda a: np.linalg.svd(a, compute_uv=False), (rand(6, 4),)),
    (lambda a: np.linalg.eigvalsh(a + a.T), (rand(5, 5),)),
    (lambda a: np.linalg.eigh(a).eigenvalues.sum(), (SPD,)),
    (lambda a: np.linalg.pinv(a) @ a, (rand(6, 4),)),
    (lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0], (rand(8, 3), rand(8))),
    (lambda a: np.linalg.matrix_power(a, 3), (rand(4, 4, dtype=np.int64),)),
    (lambda x: np.sort(x * -1.0, axis=0)[-1], (rand(6, 5),)),
    (lambda x: np.sort(x, axis=None), (rand(3, 5, dtype=np.int16),)),
    (lambda x: np.argsort(x, axis=1, kind="stable"), (rand(4, 6, dtype=np.int8),)),
    (lambda x: np.partition(x, 2, axis=1)[:, 2], (rand(4, 6),)),
    (lambda x: np.cumsum(x * 2.0, axis=1).max(axis=1), (rand(4, 6, dtype=np.float32),)),
    (lambda x: np.cumsum(x), (rand(3, 4, dtype=np.int32),)),
    (lambda x: x.cumprod(axis=0), (rand(3, 4, dtype=np.uint8),)),
    (lambda x: np.nancumsum(np.where(x > 1.0, np.nan, x), axis=0), (rand(5, 3),)),
    (lambda x: np.abs(np.fft.rfft(x, axis=1)), (rand(4, 8, dtype=np.float32),)),
    (lambda x: np.fft.irfft(np.fft.rfft(x)), (rand(3, 8),)),
    (lambda x: np.fft.ifft2(np.fft.fft2(x)).real, (rand(4, 6),)),
    (lambda x: np.fft.fftn(x, axes=(0, 2)), (rand(2, 3, 4),)),
])
def test_library_functions_match_numpy(fn, args):
    check(fn, *args, reduced=25)


def test_in_place_sort_writes_the_callers_array():
    x = rand(4, 5)
    expected = x.copy()
    expected.sort(axis=1)

    def f(a):
        a.sort(axis=1)
        return a[:, 0] * 1.0

    got = numfuse.jit(f)(x)
    np.testing.assert_array_equal(x, expected)
    np.testing.assert_array_equal(got, expected[:, 0])


def test_singular_matrix_raises_numpys_error():
    with pytest.raises(np.linalg.LinAlgError):
        numfuse.jit(lambda a: np.linalg.inv(a))(np.ones((3, 3)))


def test_lstsq_residuals_of_a_rank_deficient_matrix_are_refused_not_wrong():
    a = np.ones((6, 3))
    with pytest.raises(ValueError, match="residuals"):
        numfuse.jit(lambda a, b: np.linalg.lstsq(a, b, rcond=None))(a, rand(6))


def test_repeated_calls_reuse_the_plan_and_give_fresh_results():
    fn = numfuse.jit(lambda x, w: np.tanh(x @ w))
    for seed in range(3):
        x, w = rand(20, 30), rand(30, 10)
        assert_same(fn(x, w), np.tanh(x @ w), 30)


# -- norms, order statistics, covariances ---------------------------------------------------------

STAT_X = rand(5, 6, dtype=np.float32)
STAT_NAN = STAT_X.copy()
STAT_NAN[1, 2] = np.nan
NORM_ORDS_VECTOR = [None, 1, 2, 3, 0, np.inf, -np.inf, 0.5]
NORM_ORDS_MATRIX = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@pytest.mark.parametrize("order", NORM_ORDS_VECTOR, ids=str)
def test_vector_norms_match_numpy(order):
    check(lambda a: np.linalg.norm(a, ord=order, axis=1), STAT_X, reduced=6)
    check(lambda a: np.linalg.norm(a, ord=order, axis=0, keepdims=True), rand(4, 3, dtype=np.int16), reduced=4)


@pytest.mark.parametrize("order", NORM_ORDS_MATRIX, ids=str)
def test_matrix_norms_match_numpy(order):
    check(lambda a: np.linalg.norm(a, ord=order), STAT_X, reduced=30)
    check(lambda a: np.linalg.norm(a, ord=order, axis=(2, 0)), rand(3, 2, 4), reduced=12)


@pytest.mark.parametrize("fn", [
    lambda a: np.median(a),
    lambda a: np.median(a, axis=0),
    lambda a: np.median(a, axis=1, keepdims=True),
    lambda a: np.percentile(a, 30.0, axis=1),
    lambda a: np.percentile(a, [10, 50, 90], axis=0),
    lambda a: np.quantile(a, 0.25),
    lambda a: np.quantile(a, (0.0, 1.0), axis=1, keepdims=True),
    lambda a: np.cov(a),
    lambda a: np.cov(a, rowvar=False, bias=True),
    lambda a: np.cov(a[0], a[1], ddof=2),
    lambda a: np.corrcoef(a),
    lambda a: np.corrcoef(a[:, 0], a[:, 1]),
])
@pytest.mark.parametrize("x", [STAT_X, STAT_NAN, rand(4, 6, dtype=np.int32)], ids=["f32", "nan", "i32"])
def test_order_statistics_and_covariances_match_numpy(fn, x):
    check(fn, x, reduced=30)


# -- searches, interpolation, histograms -----------------------------------------------------------

SAMPLES = RNG.uniform(0, 10, 20).astype(np.float32)
BINS = np.linspace(0, 10, 6)


@pytest.mark.parametrize("fn", [
    lambda x: np.searchsorted(np.sort(x), x * 0.5),
    lambda x: np.searchsorted(BINS, x, side="right") + 1,
    lambda x: np.digitize(x, BINS, right=True),
    lambda x: np.interp(x * 2, BINS, BINS ** 2),
    lambda x: np.interp(x, BINS, BINS ** 2, left=-1.0, right=99.0),
    lambda x: np.histogram(x * 2),
    lambda x: np.histogram(x, bins=4, range=(0, 5))[0].sum(),
    lambda x: np.histogram(x, bins=BINS, density=True),
    lambda x: np.histogram(x, bins=3, weights=x * 2),
    lambda x: np.bincount(x.astype(np.int64), minlength=12),
    lambda x: np.bincount(x.astype(np.int32), weights=x, minlength=10),
])
def test_searches_and_histograms_match_numpy(fn):
    check(fn, SAMPLES, reduced=20)


def test_bincount_longer_than_planned_raises_rather_than_truncates():
    with pytest.raises(ValueError, match="depends on the data"):
        numfuse.jit(lambda x: np.bincount(x.astype(np.int64), minlength=5))(SAMPLES)


STAT_ALL_NAN_ROW = STAT_NAN.copy()
STAT_ALL_NAN_ROW[3, :] = np.nan


@pytest.mark.parametrize("fn", [
    lambda a: np.nanmedian(a, axis=1),
    lambda a: np.nanmedian(a),
    lambda a: np.nanmedian(a, axis=0, keepdims=True),
    lambda a: np.nanmedian(a.astype(np.float64), axis=1),
    lambda a: np.i0(a * 5.0),
    lambda a: np.i0((a * 5).astype(np.int32)),
])
@pytest.mark.parametrize("x", [STAT_X, STAT_NAN, STAT_ALL_NAN_ROW], ids=["f32", "nan", "nan_row"])
def test_nanmedian_and_i0_match_numpy(fn, x):
    with np.errstate(all="ignore"):
        check(fn, x, reduced=6)


_HASHES = np.array([1, 5, 2**63, 2**64 - 2], np.uint64)


@pytest.mark.parametrize("fn", [
    lambda h: np.searchsorted(h, 2**63 + 1),
    lambda h: np.digitize(2**63 + 1, h),
    lambda h: np.searchsorted(h, [2**63 + 1, 5]),
    lambda h: (np.add.at(h, [0, 1], 2**63), h)[1],
])
def test_python_ints_past_int64_are_numpys_uint64(fn):
    # uint64 hash keys written as Python int constants: NumPy makes them uint64 (numfuse's int64
    # conversion raised OverflowError, naming no line)
    mine, theirs = _HASHES.copy(), _HASHES.copy()
    assert_same(numfuse.jit(fn)(mine), fn(theirs))
    np.testing.assert_array_equal(mine, theirs)


def test_a_mergesort_argsort_is_stable_as_numpys():
    # scipy's rankdata(method='ordinal') sorts with kind='mergesort', NumPy's stable sort: ties
    # in their order (numfuse took it for the default, unstable sort)
    a = np.array([3, 1, 3, 1, 2, 3, 1, 2, 2, 1] * 30)
    for fn in (lambda a: np.argsort(a, kind="mergesort"), lambda a: a.argsort(kind="mergesort"),
               lambda a: np.argsort(a.reshape(30, 10), axis=0, kind="mergesort")):
        np.testing.assert_array_equal(numfuse.jit(fn)(a), fn(a))
