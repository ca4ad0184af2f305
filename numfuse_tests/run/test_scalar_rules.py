"""Rules for scalars that the fuzzer once had to leave out:

- np.clip with Python int bounds outside an integer array's range follows NumPy's _clip (a bound
  beyond the range bounds nothing, one on the far side raises NumPy's OverflowError, NEP 50),
  never a bound wrapped into the dtype;
- np.round of a 0-d array gives a NumPy scalar, whatever the dtype and decimals;
- arithmetic on two Python scalars is Python's: s ** 2 is a Python number, an int to a negative
  int power is a float;
- a 0-d result's NumPy scalar type is NumPy's (np.int64, not np.longlong, which compares equal
  as a dtype)."""

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


@pytest.mark.parametrize("s", [2, 3, -2, 2.5, -1.5, True, False])
def test_powers_of_python_scalars_are_pythons(s):
    def f(x, s):
        return x, s ** 2, s ** 3, s ** -1 if s else 0, s ** 0.5 if s >= 0 else 0, 2 ** -2 + s * 0

    got, expected = numfuse.jit(f)(np.zeros(2), s), f(np.zeros(2), s)
    for g, e in zip(got[1:], expected[1:]):
        assert type(g) is type(e) and g == pytest.approx(e), (g, e)


def test_a_python_int_exponent_argument_that_is_negative():
    def f(x, s, t):
        return x, s ** t

    jf = numfuse.jit(f)
    for s, t in [(2, -1), (2, 3), (3, -2), (2.0, -1)]:
        got, expected = jf(np.zeros(2), s, t)[1], f(np.zeros(2), s, t)[1]
        assert type(got) is type(expected) and got == pytest.approx(expected)


def test_comparison_loops_in_longlong_leave_int64_results_int64():
    def f(x):
        return np.uint64(5) == x, x.sum(), (x + np.int64(1)).sum()

    for x in (np.array(3, np.int16), np.arange(4, dtype=np.int8)):
        got, expected = numfuse.jit(f)(x), f(x)
        assert_same(got, expected)
        # assert_same compares dtypes, and dtype('q') == dtype('l'): compare the scalar types.
        assert [type(g) for g in got] == [type(e) for e in expected]


def _numpy_one_by_one(x, dtype):
    """NumPy's cast element by element: its scalar loop (a whole array may take a SIMD loop,
    which gives other values beyond the signed range)."""
    return np.array([np.array([v]).astype(dtype)[0] for v in x], dtype)


@pytest.mark.parametrize("source", [np.float64, np.float32])
@pytest.mark.parametrize("target", [np.int8, np.int16])
@pytest.mark.parametrize("size", [1, 12, 20])
def test_floats_cast_to_small_signed_ints_wrap_as_numpy_casts_them(source, target, size):
    # Mixing two loud int16 tracks decoded to float: (a + b).astype(np.int16) of 55000.0 is
    # -10536 in NumPy (a C cast through int), where the direct conversion's vector loop saturated
    # to 32767 in some elements (those of the 4-wide tail: it depended on the length).
    values = np.array([55000.0, -55000.0, 300.5, -300.5, 127.9, -128.9, 40000.25, 2.0**31 - 128, np.nan])
    x = np.resize(values.astype(source), size * len(values))
    with np.errstate(invalid="ignore"):
        expected = _numpy_one_by_one(x, target)
        got = numfuse.jit(lambda a: (a + a.dtype.type(0)).astype(target))(x)
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.dtype(target)


@pytest.mark.parametrize("source", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("target", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_floats_cast_to_unsigned_wrap_as_numpy_casts_them(source, target):
    # Negative values wrap (-3.5 -> 2**32 - 3 in uint32), where a direct unsigned conversion
    # saturates; within the signed range each cast goes through, and NaN, NumPy's values.
    signed_range = 2.0 ** (31 if np.dtype(target).itemsize < 4 else 63)
    values = np.array([-3.5, -1.0, -0.5, 0.0, 0.99, 300.7, -129.5, 70000.2, 2.0**31 - 64, -2.0**31,
                       4e9, 5e9 + 1, 1e18, 9e18, 1.5e19, -2.0**62, np.nan], np.float64)
    x = values.astype(source)
    wide = x.astype(np.float64)
    within = np.isnan(wide) | (np.abs(wide) < signed_range)
    if target == np.uint64:
        within |= (wide >= 0) & (wide < 2.0**64)  # through x - 2**63, as NumPy's loop does
    x = x[within]
    with np.errstate(invalid="ignore"):
        expected = _numpy_one_by_one(x, target)
        got = numfuse.jit(lambda a: a.astype(target))(x)
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.dtype(target)


def _python_number_methods(x, v, k):
    if v.is_integer():
        x = x * 2
    return x + k.bit_length() + v.as_integer_ratio()[1]


@pytest.mark.parametrize("v, k", [(3.0, 5), (2.5, 1)])
def test_a_python_number_arguments_own_methods_are_pythons(v, k):
    # (they were refused as "ndarray.is_integer is not supported")
    x = np.ones(3)
    np.testing.assert_array_equal(numfuse.jit(_python_number_methods)(x, v, k), _python_number_methods(x, v, k))
    with pytest.raises(AttributeError, match="'float' object has no attribute 'nope'"):
        numfuse.jit(lambda x, v: x * v.nope())(x, v)
