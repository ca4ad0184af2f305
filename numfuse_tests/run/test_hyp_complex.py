"""complex64 and complex128 against NumPy, on the simulator (or a GPU): arithmetic with arrays,
NumPy scalars and Python scalars of every kind on either side, abs, exp, conjugate, the real and
imaginary parts, equality, where, casts, and the sums, products and means, each with NumPy's
result dtype and Python or NumPy scalar type.

Values: parts in [-10, 10] mixed with NaN, infinities and signed zeros (the comparison checks
NaN and inf positions of each part exactly), except where the result of an infinite value
depends on the order of operations (products of several values) or is undefined (casts of
NaN to integers). Special values get exhaustive grids: every pair of special parts through
division, multiplication and exp, whose C99 special cases NumPy follows.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.exceptions import ComplexWarning

import numfuse
from numfuse.ir.dtypes import COMPLEX
from numfuse_tests.helpers import assert_same, check_like_numpy, planning_target

SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck), database=None)
SPECIALS = [math.nan, math.inf, -math.inf, 0.0, -0.0]
SHAPES = [(), (1,), (3,), (2, 3), (3, 1)]
# Products and quotients of parts up to 10 lose precision against the operands' size, not the
# result's: a cancellation in a*c - b*d. `reduced` widens assert_same's tolerance that much.
MAGNITUDE = 100


def parts(dtype, specials: bool = True):
    """Values of a complex dtype's parts (or of a float dtype), exactly representable."""
    dtype = np.dtype(dtype)
    width = dtype.itemsize * 4 if dtype.kind == "c" else dtype.itemsize * 8
    finite = st.floats(-10, 10, width=width)
    return st.one_of(finite, st.sampled_from(SPECIALS)) if specials else finite


def complex_arrays(dtype, shape, specials: bool = True):
    """Complex arrays whose parts are drawn independently (1j * inf would make a NaN part)."""
    dtype = np.dtype(dtype)
    part = np.dtype(f"f{dtype.itemsize // 2}")

    @st.composite
    def build(draw):
        z = np.empty(shape, dtype)
        z.real = draw(hnp.arrays(part, shape, elements=parts(dtype, specials)))
        z.imag = draw(hnp.arrays(part, shape, elements=parts(dtype, specials)))
        return z

    return build()


def complex_pair(a, b):
    """A complex value of dtype `b`'s kind with parts a and b, without 1j * inf's NaN."""
    z = np.empty((), np.complex128)
    z.real, z.imag = a, b
    return z[()]


# Partners of a complex array: arrays of other dtypes, NumPy scalars, Python scalars.
REAL_PARTNERS = [np.float16, np.float32, np.float64, np.int8, np.int32, np.uint64, np.bool_]


@st.composite
def partners(draw, shape):
    kind = draw(st.sampled_from(["complex array", "real array", "numpy scalar", "python scalar"]))
    if kind == "complex array":
        dtype = draw(st.sampled_from(COMPLEX))
        return draw(complex_arrays(dtype, draw(st.sampled_from([shape, shape[-1:], ()]))))
    if kind == "real array":
        dtype = np.dtype(draw(st.sampled_from(REAL_PARTNERS)))
        elements = st.booleans() if dtype.kind == "b" else st.integers(0, 9) if dtype.kind in "iu" else parts(dtype)
        return draw(hnp.arrays(dtype, draw(st.sampled_from([shape, shape[-1:]])), elements=elements))
    if kind == "numpy scalar":
        dtype = draw(st.sampled_from([np.complex64, np.complex128, np.float32, np.float64, np.int16]))
        if np.dtype(dtype).kind == "c":
            return dtype(complex_pair(draw(parts(dtype)), draw(parts(dtype))))
        return dtype(draw(st.integers(-9, 9)))
    return draw(st.one_of(
        st.builds(complex_pair, parts(np.complex128), parts(np.complex128)).map(complex),
        parts(np.complex128), st.integers(-9, 9), st.booleans(),
    ))


BINARY = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "np.add": lambda a, b: np.add(a, b),
    "np.subtract": lambda a, b: np.subtract(a, b),
    "np.multiply": lambda a, b: np.multiply(a, b),
    "np.divide": lambda a, b: np.divide(a, b),
    "np.not_equal": lambda a, b: np.not_equal(a, b),
}
JITTED = {name: numfuse.jit(fn) for name, fn in BINARY.items()}


@pytest.mark.parametrize("name", list(BINARY))
@settings(max_examples=12, **SETTINGS)
@given(data=st.data())
def test_binary_arithmetic_with_every_kind_of_partner(name, data):
    dtype = data.draw(st.sampled_from(COMPLEX), label="dtype")
    shape = data.draw(st.sampled_from(SHAPES), label="shape")
    z = data.draw(complex_arrays(dtype, shape), label="z")
    other = data.draw(partners(shape), label="other")
    swap = data.draw(st.booleans(), label="swap")
    args = (other, z) if swap else (z, other)
    check_like_numpy(BINARY[name], *args, reduced=MAGNITUDE, jitted=JITTED[name])


def unary_ops(z):
    return (abs(z), np.absolute(z), -z, +z, np.negative(z), np.conj(z), np.conjugate(z), z.conjugate(),
            np.exp(z), np.square(z), z.real, z.imag, np.real(z), np.imag(z))


def unary_array_ops(z):
    # (Python's complex has no .conj(); its ** 2 is a known numfuse bug for Python scalars.)
    return unary_ops(z) + (z.conj(), z ** 2, np.power(z, 2))


UNARY = numfuse.jit(unary_ops)
UNARY_ARRAY = numfuse.jit(unary_array_ops)


@settings(max_examples=15, **SETTINGS)
@given(data=st.data())
def test_unary_operations_on_arrays(data):
    dtype = data.draw(st.sampled_from(COMPLEX), label="dtype")
    z = data.draw(complex_arrays(dtype, data.draw(st.sampled_from(SHAPES[1:]), label="shape")), label="z")
    check_like_numpy(unary_array_ops, z, reduced=MAGNITUDE, jitted=UNARY_ARRAY)


@settings(max_examples=10, **SETTINGS)
@given(data=st.data())
def test_unary_operations_on_scalars(data):
    """NumPy complex scalars give NumPy scalars; Python complex scalars give Python scalars where
    Python's own operators and methods do (abs(s) is a float, s.real a float), NumPy scalars
    from ufuncs."""
    re, im = data.draw(parts(np.complex64), label="re"), data.draw(parts(np.complex64), label="im")
    value = data.draw(st.sampled_from([np.complex64, np.complex128, complex]), label="type")(complex_pair(re, im))
    check_like_numpy(unary_ops, value, reduced=MAGNITUDE, jitted=UNARY)


@settings(max_examples=12, **SETTINGS)
@given(data=st.data())
def test_where_and_mixed_expressions(data):
    dtype = data.draw(st.sampled_from(COMPLEX), label="dtype")
    z = data.draw(complex_arrays(dtype, (2, 3)), label="z")
    x = data.draw(hnp.arrays(np.float32, (3,), elements=parts(np.float32)), label="x")
    s = data.draw(st.builds(complex_pair, parts(np.complex64, False), parts(np.complex64, False)).map(complex), label="s")

    def f(z, x, s):
        mixed = (z * x + s) / (1.5 - 2j)
        return np.where(x > 0, z, x), np.where(z == z, mixed, 0), np.where(x > 0, s, z.real), abs(mixed) + x

    check_like_numpy(f, z, x, s, reduced=MAGNITUDE)


# -- casts ----------------------------------------------------------------------------------------

CAST_TARGETS = [np.complex64, np.complex128, np.float16, np.float32, np.float64, np.int8, np.int64,
                np.uint8, np.bool_]


@settings(max_examples=15, **SETTINGS)
@given(data=st.data())
def test_astype_follows_numpy(data):
    """To complex: exact. To a real dtype: the real part (NumPy's ComplexWarning is given at
    trace time); to bool: either part nonzero. Parts stay where integer casts are defined."""
    dtype = data.draw(st.sampled_from(COMPLEX), label="dtype")
    target = np.dtype(data.draw(st.sampled_from(CAST_TARGETS), label="target"))
    integer = target.kind in "iu"
    z = data.draw(complex_arrays(dtype, (2, 3), specials=not integer), label="z")
    if target.kind == "u":
        z.real = np.abs(z.real)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ComplexWarning)
        check_like_numpy(lambda z: (z.astype(target), np.astype(z, target)), z)
    real = data.draw(hnp.arrays(np.float32, (4,), elements=parts(np.float32)), label="real")
    check_like_numpy(lambda x: (x.astype(dtype), x + np.zeros(4, dtype), x.real, x.imag, np.conj(x)), real)


def test_astype_to_a_real_dtype_warns_as_numpy_does():
    z = np.array([1 + 2j, 3 - 4j], np.complex64)
    with pytest.warns(ComplexWarning):
        got = numfuse.jit(lambda z: z.astype(np.float32))(z)
    assert_same(got, z.real.copy())
    with warnings.catch_warnings():
        warnings.simplefilter("error", ComplexWarning)  # to complex and to bool: no warning, as in NumPy
        numfuse.jit(lambda z: (z.astype(bool), z.astype(np.complex128)))(z)


# -- reductions -----------------------------------------------------------------------------------


def sums(z):
    return (z.sum(), z.sum(axis=0), z.sum(axis=-1, keepdims=True), np.sum(z, axis=1), z.mean(),
            np.mean(z, axis=0), np.average(z, axis=1), np.add.reduce(z), z.any(axis=1), np.all(z),
            np.count_nonzero(z, axis=0))


SUMS = numfuse.jit(sums)


@settings(max_examples=10, **SETTINGS)
@given(data=st.data())
def test_sum_and_mean_accumulate_in_numpys_dtype(data):
    """NumPy sums complex64 in complex64 (mean too): so does numfuse, in rows and columns."""
    dtype = data.draw(st.sampled_from(COMPLEX), label="dtype")
    shape = data.draw(st.sampled_from([(3, 4), (4, 1), (1, 5)]), label="shape")
    z = data.draw(complex_arrays(dtype, shape), label="z")
    check_like_numpy(sums, z, reduced=int(np.prod(shape)), jitted=SUMS)


def products(z):
    return z.prod(), z.prod(axis=1), np.prod(z, axis=0, keepdims=True), np.multiply.reduce(z, axis=1)


PRODUCTS = numfuse.jit(products)


@settings(max_examples=8, **SETTINGS)
@given(data=st.data())
def test_products_of_finite_values(data):
    # Finite parts: with infinities, which part of a product of three becomes NaN depends on the
    # order the factors are combined in, in NumPy as on the device.
    dtype = data.draw(st.sampled_from(COMPLEX), label="dtype")
    z = data.draw(complex_arrays(dtype, (2, 3), specials=False), label="z") / 4
    check_like_numpy(products, z, reduced=MAGNITUDE, jitted=PRODUCTS)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_long_rows_split_over_blocks_and_cached_columns(dtype):
    """A sum of 10000 points (or as many as the target splits) splits its row over blocks,
    whose complex partial results the last block combines; a centred matrix keeps its columns
    on chip between two phases."""
    rng = np.random.default_rng(7)
    n = max(10000, planning_target().split_min_reduced)
    z = (rng.normal(size=n) + 1j * rng.normal(size=n)).astype(dtype)
    jf = numfuse.jit(lambda z: (z.sum(), z.mean()))
    assert jf.plan(z).kernels[0].nest.split
    got = jf(z)
    assert_same(got, (z.sum(), z.mean()), reduced=n)
    m = (rng.normal(size=(6, 5)) + 1j * rng.normal(size=(6, 5))).astype(dtype)
    centred = numfuse.jit(lambda m: m - m.mean(axis=0, keepdims=True))
    nest = centred.plan(m).kernels[0].nest
    assert nest.schedule == "columns" and nest.cached
    assert_same(centred(m), m - m.mean(axis=0, keepdims=True), reduced=6)


# -- special values: every pair -------------------------------------------------------------------

SPECIAL_PARTS = [0.0, -0.0, 1.0, -2.5, 1e-30, math.pi, 89.0, 710.0, 1e3, math.inf, -math.inf, math.nan]


def special_grid(dtype):
    values = [complex_pair(a, b) for a in SPECIAL_PARTS for b in SPECIAL_PARTS]
    return np.array(values, dtype)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_special_values_exhaustively(dtype):
    """Every pair of special parts through exp and abs, and every pair of such values through
    division (NumPy's Smith's method: a zero divisor gives inf or NaN parts) and
    multiplication: NaN and inf land where NumPy puts them."""
    z = special_grid(dtype)
    a, b = np.repeat(z, z.size), np.tile(z, z.size)
    check_like_numpy(lambda z: (np.exp(z), abs(z), np.conj(z), -z, z == z), z)
    check_like_numpy(lambda a, b: (a / b, a * b, a + b, a - b, a != b), a, b, reduced=MAGNITUDE)


# -- scalars and views ----------------------------------------------------------------------------


@settings(max_examples=10, **SETTINGS)
@given(data=st.data())
def test_complex_scalar_arguments_are_runtime_values(data):
    """A Python complex argument is weak (it takes a float32 array to complex64, as in NumPy 2)
    and a kernel argument: a second call with another value gives that value's result."""
    x = data.draw(hnp.arrays(np.float32, (4,), elements=parts(np.float32)), label="x")
    s, t = (data.draw(st.builds(complex_pair, parts(np.complex64), parts(np.complex64)).map(complex), label=n)
            for n in ("s", "t"))
    for value in (s, t, np.complex64(t), np.complex128(s)):
        check_like_numpy(scalar_ops, x, value, reduced=MAGNITUDE, jitted=SCALAR_OPS)


def scalar_ops(x, s):
    return x * s, s * 2, abs(s), s.real, s.imag, s.conjugate(), np.exp(s) - s, s == s


SCALAR_OPS = numfuse.jit(scalar_ops)


def _spectral_step(v, dt):
    # pmocz/navier-stokes-spectral-python: v = np.real(np.fft.ifftn(...)), then v += dt * rhs;
    # v is a view of a complex temporary, written through in place
    v = np.real(np.fft.ifftn(np.fft.fftn(v)))
    v += dt * v
    return v


def _part_writes(z, m):
    z.real[m] = np.nan
    z.imag[~m] *= -1
    w = z[1:]
    w.imag[:, :1] = np.inf
    r = z.real
    z *= 2
    r[0] = 7.0  # into z, after its doubling
    return z, r


def _part_setters(z, x):
    z.real = z.imag
    x.real = 5.0  # x.real of a real array is x
    z.imag += 1
    return z * 2, x


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_writing_through_complex_parts_writes_numpys_values(dtype):
    z = ((np.arange(6.0) + 1j * np.arange(6.0)[::-1]).reshape(2, 3)).astype(dtype)
    m = z.real > 2
    for fn, args in [(_part_writes, (z, m)), (_part_setters, (z, np.arange(3.0)))]:
        mine, theirs = [a.copy() for a in args], [a.copy() for a in args]
        assert_same(numfuse.jit(fn)(*mine), fn(*theirs))
        for a, b in zip(mine, theirs):
            np.testing.assert_array_equal(a, b)
    v = np.arange(8.0, dtype=z.real.dtype).reshape(2, 4)
    assert_same(numfuse.jit(_spectral_step)(v, 0.5), _spectral_step(v, 0.5), reduced=8)


def test_parts_are_views_that_see_updates():
    """z.real and z.imag read z's current values after an in-place update, as NumPy's views
    do; x.real of a real array writes through to x, and x.imag is zeros."""

    def f(z, x):
        re, im = z.real, z.imag
        z += 1 - 2j
        x = x.copy()
        x.real[1:] = 7.0
        return re, im, z, x, x.imag, np.real(x) * 2

    z = np.array([[1 + 2j, -3j], [4, 0.5 + 0.25j]], np.complex64)
    x = np.array([1.5, 2.5, -3.5], np.float64)
    got = numfuse.jit(f)(z.copy(), x)
    assert_same(got, f(z.copy(), x))
