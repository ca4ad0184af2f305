"""Programs the fuzzer found numfuse getting wrong, each fixed: run against NumPy for good."""

import numpy as np
import pytest

import numfuse
from numfuse_tests.helpers import assert_same


def _masked_signed_into_uint64(x0, x1):
    v = x1.astype(np.uint64) * 1
    v[x0 > 0] = np.int64(0)
    return v


def _flattening_scan_then_mask(x0, x1):
    v = np.cumsum(np.outer(x0, x1)) * 1.0
    v[v > 0.5] = 0.5
    return v


def _scan_after_written_local(x, y):
    v = x * 1.0
    v[0] = 2.0
    return np.cumsum(v), np.sort(y)


def _sorted_scan_of_an_update(x0, x1):
    v1 = x0 * 1
    v1 += np.cumsum(x1)
    w = np.cumsum(v1).copy()
    w.sort()
    return w


FINDINGS = {
    "masked_signed_into_uint64": (_masked_signed_into_uint64, (np.array([0]), np.array([-1]))),
    "flattening_scan_then_mask": (_flattening_scan_then_mask,
                                  (np.array([[127, 0, 0, 0]] + [[0] * 4] * 4, np.int8), np.array([-15, 0, 0, 10]))),
    "scan_after_written_local": (_scan_after_written_local, (np.array([0.0, 1.0]), np.array([3.0, 1.0]))),
    "sorted_scan_of_an_update": (_sorted_scan_of_an_update, (np.zeros((1, 5, 4), np.int16), np.zeros((1, 1, 4), np.int64))),
    "concatenate_python_scalar": (lambda x, s: np.concatenate((x, s), axis=None), (np.array(1.0, np.float32), 0.0)),
    "empty_scan_and_sum": (lambda x: (np.cumsum(-x), (-x).sum()), (np.zeros((0,)),)),
    "empty_sort_and_product": (lambda x: (np.sort(-x), (-x) @ x), (np.zeros((0,)),)),
    "ellipsis_gather_0d_index": (lambda x, i: x[..., i], (np.array([1.0, 2.0]), np.array(0))),
    "einsum_one_against_zero": (lambda a: np.einsum("ij,jk->ik", a, a), (np.zeros((1, 0)),)),
    "scan_of_scalar_argument": (lambda s: np.cumsum(s), (np.int64(3),)),
    "scan_of_0d_along_axis": (lambda x: (np.cumsum(x, axis=0), np.argsort(x)), (np.array(3.0),)),
    # NumPy's power loop checks each element for a negative integer exponent: none, none raised
    "empty_int_to_negative_power": (lambda x: (x[:, :0] ** -1, np.power(x[:0], -2)), (np.ones((2, 3), np.int64),)),
    "einsum_broadcast_factor_inf": (lambda x, s: np.einsum("ij,j->i", x, np.cumsum(s)),
                                    (np.array([[1.0, -2.0, 3.0], [4.0, 5.0, 6.0]]), np.float64(np.inf))),
    "python_int_negative_power_argument": (lambda s: ((-1) ** s, 2 ** s), (-5,)),
    # The CPU target: Numba's np.exp2 and np.log2 for float32 (a float16's) and float64 in one
    # function failed to compile ("Type of #1 arg mismatch: float != double").
    "exp2_log2_of_two_float_widths": (lambda h, d: (np.exp2(h.astype(np.float16)) + np.exp2(d),
                                                    np.log2(h.astype(np.float16) + 2) * np.log2(d + 2)),
                                      (np.array([0, 1]), np.array([-0.4375, -3.9375]))),
}


def _index_by_0d_arrays(x0, x1, x2):
    v0 = x2 * 1.0
    v0[v0 > 0.5] = x0
    v3 = np.zeros_like(v0[np.array([0, 0])], dtype=bool)
    return v3[x1, np.clip(x0, None, 1)]  # 0-d integer arrays: a scalar, as integers give


def _copyto_python_int_where(x0, s0):
    v0 = x0 * 1
    np.copyto(v0, s0, where=v0 > 0.5)
    return (v0,)


# Fuzz seed 1301 (simulator): a Python int argument copied into a uint32 array was checked as an
# int64 array, which same_kind casting refuses; NumPy casts a Python int by its value (NEP 50).
FINDINGS["copyto_python_int_into_uint32"] = (_copyto_python_int_where, (np.array([23, 0, 5], np.uint32), 7))

FINDINGS["index_by_0d_arrays"] = (_index_by_0d_arrays, (np.array(False), np.array(0, np.uint32),
                                                         np.array([[16, -8], [15, -6], [0, 0]])))

# Fuzz seed 1302 (CPU target): a row sum of a gather prefetched at the gathered index before the
# lane had loaded it (a Numba NotDefinedError).
FINDINGS["sum_of_a_gather_on_the_cpu"] = (lambda x: x[np.array([0, 0, 0])].sum(dtype=np.float64),
                                          (np.ones((4, 1, 1, 4), bool),))


def _add_int64_at_into_a_uint64_cumsum(x):
    v = (x.cumsum(axis=None) * 1).copy()
    np.add.at(v, np.array([0, 0]), np.int64(-5))
    return v


# Fuzz seed 1302 (CPU target, and the simulator too): np.add.at of int64 values into uint64 ran
# in uint64 (2**64 - 10), where NumPy's loop is float64's (2**64, which becomes 0 in uint64).
FINDINGS["add_at_in_numpys_loop_dtype"] = (_add_int64_at_into_a_uint64_cumsum,
                                           (np.array(4294967295, dtype=np.uint32),))
FINDINGS["add_at_in_numpys_loop_dtype_from_zero"] = (_add_int64_at_into_a_uint64_cumsum,
                                                     (np.array(0, dtype=np.uint32),))


@pytest.mark.parametrize("name", sorted(FINDINGS))
def test_fuzzer_findings_match_numpy(name):
    fn, args = FINDINGS[name]
    with np.errstate(all="ignore"):
        expected = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    got = numfuse.jit(fn)(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    assert_same(got, expected)



def test_python_int_out_of_a_dtypes_range_in_a_function_with_graph_breaks():
    # Found by the fuzzer (seed 9001): in a segmented run a Python int argument that does not
    # fit the dtype it is used in must get NumPy's value-dependent answer, not an error.
    def f(x0, x1, s0):
        v0 = np.clip(x0, s0, 1)
        v1 = np.unique(x1)
        return v1, v0

    jitted = numfuse.jit(f)
    for args in [(np.array(0, dtype=np.uint8), np.array(np.nan), -1),
                 (np.array(255, dtype=np.uint8), np.array(np.nan), 0)]:
        got, expected = jitted(*args), f(*args)
        for g, e in zip(got, expected):
            assert type(g) is type(e) and np.asarray(g).dtype == np.asarray(e).dtype
            np.testing.assert_array_equal(g, e)


def test_a_constant_point_of_a_concatenation_read_through_a_reshape():
    # Found by the fuzzer (seed 1201), wrong before this session too: np.roll of a stack reads
    # its flat point 7, row 7 // 4 of the concatenation; the constant row was taken as 0 (the
    # first operand) where it is a DivMod of a constant.
    def f(x0):
        v1 = x0.astype(np.float64) * 1
        v1[...] = 1
        return np.roll(np.vstack([v1, x0]), 1)

    x0 = np.zeros(4, dtype=np.int64)
    assert_same(numfuse.jit(f)(x0), f(x0))
    x = np.arange(12.0).reshape(3, 4)
    g = lambda a: np.concatenate([a, a * 2]).ravel()[[7, 13, 20]]  # noqa: E731
    assert_same(numfuse.jit(g)(x), g(x))


def test_putmask_with_a_mask_of_the_same_size_and_another_shape():
    # Found by the fuzzer (seed 3221), refused before this session too: NumPy's putmask asks
    # for a mask of the data's size, read in C order, not of its shape.
    def f(x0, s0):
        v0 = x0.sum(axis=None, keepdims=True, dtype=np.bool)
        v2 = v0 * 1.0
        np.putmask(v2, np.maximum.reduce(v0), s0)
        return v2

    def g(x, m):
        np.putmask(x, m, -1.0)
        return x

    x0 = np.arange(5.0).reshape(5, 1, 1)
    assert_same(numfuse.jit(f)(x0, 2.5), f(x0, 2.5))
    x, m = np.arange(6.0).reshape(2, 3), (np.arange(6) % 2 == 0).reshape(3, 2)
    assert_same(numfuse.jit(g)(x.copy(), m), g(x.copy(), m))
    with pytest.raises(ValueError, match="same size"):
        numfuse.jit(g)(x.copy(), np.ones((2, 2), bool))


def test_signed_int_arithmetic_wraps_before_a_comparison():
    # Found by the fuzzer (seed 3221) on the CPU target, wrong before this session too:
    # Numba's signed + lets LLVM assume no overflow, so (x + 2) < 0.5 compiled to x < -1.5
    # and answered False for the largest int64, where NumPy wraps around and answers True.
    big, small = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    x = np.array([big, 0, -5, small], dtype=np.int64)
    for f in (lambda x: (x + np.int64(2)) < 0.5, lambda x: (x - np.int64(3)) > 0, lambda x: (x * np.int64(2)) < 0,
              lambda x: -x < 0, lambda x: np.square(x) < 0, lambda x: (x.astype(np.int8) * np.int8(100)) < 0):
        assert_same(numfuse.jit(f)(x), f(x))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8, np.uint64])
def test_an_integer_power_that_wraps_keeps_its_sign_and_remainders(dtype):
    # Found by a battery of public-style code on the CPU target: the power loop's signed
    # products let LLVM take an even power for non-negative, so 20 ** 20 (wrapped negative in
    # int64) was not < 0, and its % 7 and // 7 were computed as unsigned.
    a = np.arange(0, 40, 5).astype(dtype)

    def f(a, b):
        return a ** 20 % 7, a ** 20 < 0, a ** 20 // 7, a ** a % 7, a ** b < 1

    with np.errstate(all="ignore"):
        expected = f(a, a[::-1].copy())
    for got, want in zip(numfuse.jit(f, numpy_fallback=False)(a, a[::-1].copy()), expected):
        assert_same(got, want)


def _percentile_f32(x):
    return np.percentile(x, np.float32(30))


def _percentile_2d(x):
    return np.percentile(x, [[10, 20], [50, 90]])


def _quantile_2d_axis(x):
    return np.quantile(x.reshape(5, 2), [[0.1, 0.2], [0.5, 0.9]], axis=0)


def _isclose_made_rtol(a, b):
    return np.isclose(a[:2], b[:2], rtol=np.array([0.0, 0.5])), np.allclose(a, b, atol=np.array(0.01) + a * 0)


@pytest.mark.parametrize("f", [_percentile_f32, _percentile_2d, _quantile_2d_axis, _isclose_made_rtol])
def test_statistics_and_tolerances_of_a_battery_of_public_style_code(f):
    # Found by a battery on the CPU target: a float32 q's index and weight were computed in
    # float64 (NumPy keeps q's dtype), a 2-D q and an array tolerance made inside the function
    # crashed inside numfuse.
    x = np.arange(10.0)
    args = (x,) if f.__code__.co_argcount == 1 else (x, x + 0.3)
    got, want = numfuse.jit(f)(*args), f(*args)
    for g, w in zip(got if isinstance(want, tuple) else [got], want if isinstance(want, tuple) else [want]):
        assert_same(g, w)


def test_quantile_of_a_scalar_argument_and_roll_by_an_array_argument():
    # A NumPy scalar q passed as an argument recursed into numfuse's own quantile; an array of
    # shifts for np.roll crashed. q becomes static (its value picks the points), the shifts
    # are a graph break.
    def q_of(x, q):
        return np.quantile(x, q), np.percentile(x.astype(np.float32), q * 100)

    def roll(x, shift):
        return np.roll(x, shift, axis=(0, 1)) * 2

    jitted = numfuse.jit(q_of)
    x = np.arange(10.0)
    for q in (np.float64(0.3), np.float64(0.75), np.float32(0.3)):
        for g, w in zip(jitted(x, q), q_of(x, q)):
            assert_same(g, w)
    grid = np.arange(12.0).reshape(3, 4)
    for shift in (np.array([1, 1]), np.array([2, -1])):
        assert_same(numfuse.jit(roll)(grid, shift), roll(grid, shift))


def test_an_argument_made_static_for_its_value_can_be_an_array_at_a_later_call():
    # np.histogram(x, bins): bins=2 made `bins` static (its value shapes the result); a later
    # call with an array of edges was refused ("static argument 'bins' must be hashable").
    def hist(x, bins):
        return np.histogram(x, bins=bins)

    x = np.random.default_rng(0).random(50)
    jitted = numfuse.jit(hist)
    for bins in (2, np.array([0.0, 0.2, 0.5, 1.0]), 3, np.array([0.0, 0.5, 1.0])):
        for g, w in zip(jitted(x, bins), hist(x, bins)):
            assert_same(g, w)


def _diagonal_written(x):
    d = np.einsum("ii->i", x)
    d[0] = 5.0
    return x


def _transpose_written(x):
    t = np.einsum("ij->ji", x)
    t[0, 1] += 7.0
    return x, t * 2, np.einsum("...ij->...ji", x[None]) + 1


@pytest.mark.parametrize("f, shape", [(_diagonal_written, (3, 3)), (_transpose_written, (2, 3))])
def test_einsum_of_one_operand_that_sums_nothing_is_a_view(f, shape):
    # Found by a battery on the CPU target: NumPy's einsum('ii->i', x) and ('ij->ji', x) are
    # writeable views of x; numfuse's were copies, so writes through them were lost.
    x = np.arange(float(np.prod(shape))).reshape(shape)
    got, want = numfuse.jit(f, numpy_fallback=False)(x.copy()), f(x.copy())
    for g, w in zip(got if isinstance(got, tuple) else [got], want if isinstance(want, tuple) else [want]):
        assert_same(g, w)
    view = numfuse.jit(lambda x: np.einsum("ij->ji", x), numpy_fallback=False)(x)
    assert np.shares_memory(view, x)


def test_a_reduction_of_a_python_number_is_a_numpy_scalar():
    # Found by a battery: np.sum(3.0) of a Python float argument came back as a Python float
    # (and np.max(5) as an int); NumPy's are np.float64 and np.int64, strongly typed after.
    def f(a):
        return np.sum(a), np.max(a), np.prod(a), np.sum(a) * np.float32(2), np.ones(2, np.float32) * np.amin(a)

    for value in (3.0, 5, True):
        for got, want in zip(numfuse.jit(f, numpy_fallback=False)(value), f(value)):
            assert type(got) is type(want)
            assert_same(got, want)
