"""Run tier for the shift, gcd/lcm, bitwise_count, cbrt, ldexp, nextafter, spacing ufuncs and the
two-output ufuncs (np.divmod, np.frexp, np.modf), against NumPy's own results.

Edge values on every dtype: shifts by 0, 1, width - 1, width, more and negative counts of 0, 1,
-1, the extremes; gcd and lcm of the most negative integer and of zeros; floats at +-0, +-inf,
NaN, the largest and smallest (subnormal) values. Every one of these operations but cbrt is exact
in IEEE arithmetic, so their results must be NumPy's bit for bit, signs of zeros included
(`assert_bits`), besides the dtype and type checks of helpers.assert_same. Small hypothesis runs
draw values and dtype pairs beyond the grids.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import numfuse
from numfuse_tests.helpers import assert_same, check, check_like_numpy

INTS = [np.dtype(t) for t in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")]
FLOATS = [np.dtype(t) for t in ("float16", "float32", "float64")]
HYP = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))


def flat(result) -> list:
    if isinstance(result, tuple):
        return [r for part in result for r in flat(part)]
    return [result]


def assert_bits(got, expected):
    """Same structure and dtypes (assert_same) and the same bits: every float's sign (of zeros
    too), NaN where NumPy has NaN."""
    assert_same(got, expected)
    for g, e in zip(flat(got), flat(expected)):
        g, e = np.asarray(g), np.asarray(e)
        if e.dtype.kind == "f":
            same = (g.view(f"u{e.itemsize}") == e.view(f"u{e.itemsize}")) | (np.isnan(g) & np.isnan(e))
            assert same.all(), f"differ at {np.argwhere(~same)[:5].tolist()}: got {g[~same][:5]}, NumPy {e[~same][:5]}"
        else:
            np.testing.assert_array_equal(g, e)


def exact(fn, *args):
    """numfuse.jit(fn)(*args) is NumPy's fn(*args), bit for bit."""
    with np.errstate(all="ignore"):
        expected = fn(*args)
    assert_bits(numfuse.jit(fn)(*args), expected)


def int_edges(dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    values = [0, 1, 2, 3, 5, 6, 12, 18, int(info.max), int(info.max) - 1]
    if info.min < 0:
        values += [-1, -3, -12, int(info.min), int(info.min) + 1]
    return np.array(values, dtype)


def shift_counts(dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    w = info.bits
    counts = [0, 1, w - 1, w, w + 1, 2 * w, 63, 64, 65, 100, 127]
    if info.min < 0:
        counts += [-1, -w, -(w + 1), int(info.min)]
    return np.array([c for c in counts if info.min <= c <= info.max], dtype)


def grid(a, b):
    return np.meshgrid(a, b, indexing="ij")


def float_edges(dtype) -> np.ndarray:
    fi = np.finfo(dtype)
    values = [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, -2.5, 3.0, 0.1, -7.75, 1000.0, math.inf, -math.inf, math.nan,
              float(fi.max), -float(fi.max), float(fi.smallest_subnormal), -float(fi.smallest_subnormal),
              float(fi.tiny), -float(fi.tiny), 2.0 * float(fi.smallest_subnormal), float(fi.tiny) * 2]
    return np.array(values, dtype)


# -- shifts ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_shifts_of_edge_values_by_every_kind_of_count(dtype):
    x, n = grid(int_edges(dtype), shift_counts(dtype))
    exact(lambda x, n: (np.left_shift(x, n), np.right_shift(x, n), x << n, x >> n), x, n)


def test_shift_values_are_numpys_rules():
    """Independently of NumPy's run: past the width everything is shifted out (-1 for a
    negative value shifted right), negative counts too."""
    x = np.array([1, -1, 5, -128, 127], np.int8)
    got_l, got_r = numfuse.jit(lambda x, n: (x << n, x >> n))(x, np.full(5, 8, np.int8))
    assert got_l.tolist() == [0, 0, 0, 0, 0]
    assert got_r.tolist() == [0, -1, 0, -1, 0]
    got_l, got_r = numfuse.jit(lambda x, n: (x << n, x >> n))(x, np.full(5, -1, np.int8))
    assert got_l.tolist() == [0, 0, 0, 0, 0] and got_r.tolist() == [0, -1, 0, -1, 0]
    got = numfuse.jit(lambda x: x << 7)(x)
    assert got.tolist() == [-128, -128, -128, 0, -128]
    u = np.array([1, 2**63, 2**64 - 1], np.uint64)
    got_l, got_r = numfuse.jit(lambda x, n: (x << n, x >> n))(u, np.array([63, 1, 64], np.uint64))
    assert got_l.tolist() == [2**63, 0, 0] and got_r.tolist() == [0, 2**62, 0]


@pytest.mark.parametrize("dtype", [np.dtype(np.int16), np.dtype(np.uint32), np.dtype(np.int64)], ids=str)
def test_shift_by_python_ints_and_scalars(dtype):
    x = int_edges(dtype)

    def f(x):
        return x << 0, x >> 1, x << 3, 1 << x[:3], np.right_shift(x, 2), x >> x[0]

    check(f, x)


def test_shift_of_bools_computes_in_int8():
    a = np.array([True, False, True])
    check(lambda a, b: (a << b, a >> b, np.left_shift(a, 9)), a, np.array([True, True, False]))


@pytest.mark.parametrize("op", ["<<=", ">>="])
def test_in_place_shifts(op):
    x = int_edges(np.int32)
    n = np.array([1, 31, 32, -1, 0, 5, 33, 2, 7, 40, 4, 31, 1, 0, 64][: x.size], np.int32)

    def f(x, n):
        y = x.copy()
        if op == "<<=":
            y <<= n
            y[:2] <<= 1
        else:
            y >>= n
            y[:2] >>= 1
        return y

    exact(f, x, n)


def test_in_place_shift_writes_an_argument():
    x = int_edges(np.int16)
    expected = x.copy()
    expected <<= 3

    def f(x):
        x <<= 3

    numfuse.jit(f)(x)
    np.testing.assert_array_equal(x, expected)


@HYP
@given(data=st.data())
def test_shifts_hypothesis(data):
    a = data.draw(st.sampled_from(INTS + [np.dtype(bool)]), label="a")
    b = data.draw(st.sampled_from(INTS + [np.dtype(bool)]), label="b")
    x = data.draw(hnp.arrays(a, st.integers(0, 12)), label="x")
    n = data.draw(hnp.arrays(b, x.shape, elements=st.integers(0, 1) if b == bool else
                             st.integers(max(-70, int(np.iinfo(b).min)), min(70, int(np.iinfo(b).max)))), label="n")
    check_like_numpy(lambda x, n: (x << n, np.right_shift(x, n)), x, n)


# -- gcd, lcm, bitwise_count -------------------------------------------------------------------


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_gcd_lcm_bitwise_count_of_edge_values(dtype):
    x, y = grid(int_edges(dtype), int_edges(dtype))
    exact(lambda x, y: (np.gcd(x, y), np.lcm(x, y), np.bitwise_count(x)), x, y)


def test_gcd_lcm_values():
    """Independently of NumPy: Euclid's values, |INT_MIN| as an unsigned number, lcm wrapping."""
    a = np.array([12, -18, 0, 0, -128, 7, 100], np.int8)
    b = np.array([18, 12, 5, 0, 0, 13, 30], np.int8)
    g, m, c = numfuse.jit(lambda a, b: (np.gcd(a, b), np.lcm(a, b), np.bitwise_count(a)))(a, b)
    assert g.tolist() == [6, 6, 5, 0, -128, 1, 10]
    assert m.tolist() == [36, 36, 0, 0, 0, 91, 44]  # 300 modulo 256
    assert c.tolist() == [2, 2, 0, 0, 1, 3, 3] and c.dtype == np.uint8


@HYP
@given(data=st.data())
def test_gcd_lcm_hypothesis(data):
    a = data.draw(st.sampled_from(INTS), label="a")
    b = data.draw(st.sampled_from(INTS), label="b")
    x = data.draw(hnp.arrays(a, st.integers(0, 12)), label="x")
    y = data.draw(hnp.arrays(b, x.shape), label="y")
    check_like_numpy(lambda x, y: (np.gcd(x, y), np.lcm(x, y), np.bitwise_count(y)), x, y)


# -- floating point ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_nextafter_and_divmod_of_edge_pairs(dtype):
    x, y = grid(float_edges(dtype), float_edges(dtype))
    exact(lambda x, y: (np.nextafter(x, y), np.divmod(x, y), divmod(y, x)), x, y)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_spacing_frexp_modf_of_edge_values(dtype):
    x = float_edges(dtype)
    exact(lambda x: (np.spacing(x), np.frexp(x), np.modf(x)), x)


def test_float_decomposition_values():
    """Independently of NumPy: C's frexp (0 exponent for inf and NaN), modf's signed zeros,
    spacing of zeros and of negatives, nextafter across zero."""
    x = np.array([-0.0, 8.0, -3.0, math.inf, -math.inf, math.nan, 5e-324])
    m, e = numfuse.jit(lambda x: np.frexp(x))(x)
    assert e.dtype == np.int32 and e.tolist() == [0, 4, 2, 0, 0, 0, -1073]
    assert math.copysign(1, m[0]) == -1 and m[1] == 0.5 and m[2] == -0.75 and m[3] == math.inf
    frac, whole = numfuse.jit(lambda x: np.modf(x))(x)
    assert [math.copysign(1, v) for v in frac[:5]] == [-1, 1, -1, 1, -1] and (frac[:5] == 0).all()
    assert whole[:5].tolist() == [-0.0, 8.0, -3.0, math.inf, -math.inf]
    s = numfuse.jit(lambda x: np.spacing(x))(np.array([0.0, -0.0, -1.0, 1.0]))
    assert s.tolist() == [5e-324, 5e-324, -2.0**-52, 2.0**-52]
    n = numfuse.jit(lambda x, y: np.nextafter(x, y))(np.array([5e-324, -5e-324, 0.0]), np.array([-1.0, 1.0, -1.0]))
    assert n.tolist() == [0.0, -0.0, -5e-324] and math.copysign(1, n[1]) == -1


def test_float16_steps_are_float16_ulps():
    h = np.float16
    x = np.array([1, -1, 65504, -65504, 2**-14, -(2**-14), 2**-24, 0, -0.0, 2.5], h)
    nx, sp = numfuse.jit(lambda x: (np.nextafter(x, h(np.inf)), np.spacing(x)))(x)
    assert nx.tolist() == np.nextafter(x, h(np.inf)).tolist()
    assert nx[0] == h(1) + h(2**-10) and nx[2] == np.inf
    # NumPy's float16 spacing steps toward +inf whatever the sign: spacing(-1) is +2**-11
    assert sp[1] == h(2**-11) and sp[3] == h(32) and sp[2] == np.inf


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_ldexp_with_int32_and_int64_exponents(dtype):
    exps = np.array([0, 1, -1, 3, -24, 15, 127, -149, 1023, -1074, 2000, -2000, 2**31 - 1, -(2**31)], np.int64)
    x, n = grid(float_edges(dtype), exps)
    exact(lambda x, n: np.ldexp(x, n), x, n)
    exact(lambda x, n: np.ldexp(x, n), x, n.astype(np.int32))
    # int64 exponents beyond the C int range clamp (NumPy's loop): 0 or inf
    big = np.array([2**40, -(2**40), 2**62, -(2**63)], np.int64)
    exact(lambda x, n: np.ldexp(x, n), np.ones(4, dtype), big)
    exact(lambda x: (np.ldexp(x, 3), np.ldexp(x, -3)), float_edges(dtype))


def test_ldexp_of_integer_mantissas():
    """NumPy computes ldexp of small integers in float16, of int32 in float64."""
    check(lambda a, n: np.ldexp(a, n), np.array([1, -3, 100], np.int8), np.array([2, -1, 5], np.int8))
    check(lambda a, n: np.ldexp(a, n), np.array([1, -3, 100], np.int32), np.array([2, -1, 5], np.int64))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_cbrt(dtype):
    # Within helpers' float tolerance, not bit-exact (libm's cbrt on each side). float64 stays
    # below 1e30 in magnitude: the simulator's cuda.cbrt is x ** (1/3), whose rounded exponent
    # loses log(x) * 2e-17 relative accuracy (libdevice's cbrt on a GPU is within 1 ulp).
    x = float_edges(dtype)
    if dtype == np.float64:
        x = x[~(np.abs(x) > 1e30)]
    x = np.concatenate([x, np.array([8, -27, 64, 1e-3, 2.0], dtype)])
    got = check(lambda x: np.cbrt(x), x)
    assert_bits(got[np.isinf(x) | (x == 0) | np.isnan(x)], np.cbrt(x)[np.isinf(x) | (x == 0) | np.isnan(x)])
    check(lambda x: np.cbrt(x), np.array([-8, 0, 27, 125], np.int16))


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_divmod_of_integer_edges(dtype):
    """Python's floor rules, 0 and 0 for a zero divisor. MIN divided by -1 overflows, which C
    leaves undefined (a GPU may differ from NumPy): left out."""
    x, y = grid(int_edges(dtype), int_edges(dtype))
    if np.iinfo(dtype).min < 0:
        keep = ~((x == np.iinfo(dtype).min) & (y == -1))
        x, y = x[keep], y[keep]
    c = -7 if np.iinfo(dtype).min < 0 else 7
    exact(lambda x, y: (np.divmod(x, y), divmod(x, 7), divmod(c, y)), x, y)


def test_two_output_ufuncs_of_scalars():
    check(lambda x: np.frexp(x), np.float32(6.0))
    check(lambda x: np.modf(x), -2.25)
    check(lambda a, b: divmod(a, b), 7, -2)
    check(lambda a, b: divmod(a, b), np.int16(-7), np.int16(2))
    check(lambda x, y: np.divmod(x, y), np.arange(6.0).reshape(2, 3), 2.5)


@HYP
@given(data=st.data())
def test_float_ufuncs_hypothesis(data):
    dtype = data.draw(st.sampled_from(FLOATS), label="dtype")
    width = 8 * dtype.itemsize
    values = st.floats(width=width, allow_nan=True, allow_infinity=True)
    x = data.draw(hnp.arrays(dtype, st.integers(0, 12), elements=values), label="x")
    y = data.draw(hnp.arrays(dtype, x.shape, elements=values), label="y")
    n = data.draw(hnp.arrays(np.int32, x.shape, elements=st.integers(-1100, 1100)), label="n")
    exact(lambda x, y, n: (np.nextafter(x, y), np.spacing(x), np.frexp(x), np.modf(y), np.ldexp(x, n),
                           np.divmod(x, y)), x, y, n)


def _values(dtype, wide):
    """Wide: the dtype's whole range, but MIN of a signed type (MIN // -1 is undefined in C);
    else small values, as exponents and shift counts."""
    if dtype == bool:
        return st.booleans()
    if dtype.kind == "f":
        return st.floats(width=8 * dtype.itemsize) if wide else st.sampled_from([0.0, -0.0, 1.5, math.inf, math.nan])
    info = np.iinfo(dtype)
    if wide:
        return st.integers(int(info.min) + (info.min < 0), int(info.max))
    return st.integers(-3 if info.min < 0 else 0, 3)


@HYP
@given(data=st.data())
def test_mixed_dtypes_hypothesis(data):
    """Any two real dtypes: NumPy's loop, result and dtype (or its TypeError)."""
    dtypes = INTS + FLOATS + [np.dtype(bool)]
    a = data.draw(st.sampled_from(dtypes), label="a")
    b = data.draw(st.sampled_from(dtypes), label="b")
    x = data.draw(hnp.arrays(a, 4, elements=_values(a, True)), label="x")
    y = data.draw(hnp.arrays(b, 4, elements=_values(b, False)), label="y")
    for fn in (lambda x, y: np.ldexp(x, y), lambda x, y: np.nextafter(x, y), lambda x, y: np.divmod(x, y),
               lambda x, y: np.gcd(x, y), lambda x, y: x << y):
        check_like_numpy(fn, x, y)
