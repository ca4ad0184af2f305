"""NumPy's bits where they come from its own loops, bit for bit, on every target.

- Complex np.multiply and np.square (z * w, z * z, z ** 2, z * scalar): NumPy's SIMD loop, whose
  parts are fused multiply-adds on a CPU with FMA and textbook products elsewhere
  (numfuse/ir/numpy_loops.py asks NumPy which); np.cumprod and np.power(z, 2) are NumPy's
  scalar loops, textbook everywhere (np.prod is one too, but numfuse multiplies a row in
  another order, so its bits are not comparable). On this kind of machine the two
  formulas differ in the last bit on about a third of random values, so a test on 4,000 of them
  cannot pass with the wrong one.
- Complex np.abs: NumPy's SIMD loop, the larger part times sqrt(1 + ratio**2) with that sum a
  fused multiply-add where the CPU has one (or the C library's hypot in an older NumPy): a third
  of random values differ from hypot's.
- Real `x * y + z` and a sum of products round the product before adding it, as NumPy does (a GPU
  compiler would fuse them into one rounding: targets/cuda/products.py).
- np.cbrt is the C library's on the CPU target (NumPy's where its loop calls the C library: not
  on a CPU with AVX-512, where it runs SVML's, a few ulp away).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import numfuse
from numfuse.ir.numpy_loops import complex_multiply_fuses

COMPLEX = [np.complex64, np.complex128]
N = 4000


def values(dtype, n=N, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)


def same_bits(got, expected):
    got, expected = np.ascontiguousarray(got), np.ascontiguousarray(expected)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    word = f"u{got.dtype.itemsize // 2 if got.dtype.kind == 'c' else got.dtype.itemsize}"
    differ = np.flatnonzero(got.view(word) != expected.view(word))
    assert differ.size == 0, f"{differ.size} of {got.view(word).size} parts differ in their bits, first at {differ[:5]}"


def on_the_cpu_target() -> bool:
    """Whether the kernels run on the CPU target, whose math functions are glibc's, as NumPy's:
    results built from them are NumPy's bits there."""
    from numfuse.targets import requested

    return requested(None) == "cpu"


def on_a_gpu() -> bool:
    """Whether the kernels run on a real GPU, whose libdevice functions (hypot, log, exp, ...)
    are not glibc's: results built from them are compared within a few ulp there."""
    from numfuse.targets.cuda.device import backend

    return not on_the_cpu_target() and not backend().simulated


def test_the_probe_agrees_with_numpys_own_product():
    """complex_multiply_fuses is NumPy's answer: its product of 400 values equals the fused
    formula's (computed exactly here) on every value where it says fused, else the textbook's."""
    from fractions import Fraction

    z, w = values(np.complex128, 400, 1), values(np.complex128, 400, 2)
    got = z * w

    def fma(a, b, c):
        return float(Fraction(a) * Fraction(b) + Fraction(c))

    fused = np.array([complex(fma(a.real, b.real, -(a.imag * b.imag)), fma(a.real, b.imag, a.imag * b.real))
                      for a, b in zip(z, w)])
    textbook = np.array([complex(a.real * b.real - a.imag * b.imag, a.real * b.imag + a.imag * b.real)
                         for a, b in zip(z, w)])
    assert np.array_equal(got, fused if complex_multiply_fuses() else textbook)
    assert not np.array_equal(fused, textbook)  # the values tell the two apart


@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: np.dtype(d).name)
def test_complex_products_are_numpys_bits(dtype):
    z, w = values(dtype, seed=1), values(dtype, seed=2)
    scalar = dtype(0.3 - 0.7j)

    def products(z, w):
        return z * w, z * z, np.square(z), z ** 2, z * scalar, np.multiply(w, z), z * w + z

    got = numfuse.jit(products)(z, w)
    for g, e in zip(got, products(z, w)):
        same_bits(g, e)


@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: np.dtype(d).name)
def test_complex_powers_take_numpys_shortcuts_and_only_those(dtype):
    """ndarray.__pow__ with an exact Python int 2 or -1 or float 0.5 is np.square, np.reciprocal
    or np.sqrt; np.power and other exponent types (2.0, np.float64(0.5)) are cpow (whose integer
    exponents multiply). All arithmetic, so NumPy's bits everywhere, but the square root's hypot
    on a GPU."""
    z = values(dtype, seed=6)

    def powers(z):
        return z ** 2, z ** -1, z ** 0.5, z ** 2.0, np.power(z, 2), z ** 3, z ** -2

    got = numfuse.jit(powers)(z)
    for k, (g, e) in enumerate(zip(got, powers(z))):
        if k == 2 and on_a_gpu():
            np.testing.assert_allclose(g, e, rtol=8 * np.finfo(g.real.dtype).eps)
        else:
            same_bits(g, e)


@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: np.dtype(d).name)
def test_complex_products_in_numpys_scalar_loops_are_numpys_bits(dtype):
    z = values(dtype, seed=3).reshape(40, 100)
    z = z / np.abs(z)  # on the unit circle: long products neither overflow nor vanish

    def scalar_loops(z):
        return np.cumprod(z, axis=-1), np.power(z, 2), np.cumprod(z.T, axis=0)

    got = numfuse.jit(scalar_loops)(z)
    for g, e in zip(got, scalar_loops(z)):
        same_bits(g, e)


@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: np.dtype(d).name)
def test_complex_absolute_values_are_numpys_bits(dtype):
    rng = np.random.default_rng(5)
    scale = np.exp(rng.uniform(-30, 30, N))  # parts of very different sizes too
    z = (rng.standard_normal(N) * scale + 1j * rng.standard_normal(N)).astype(dtype)
    specials = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0, 3e38])
    grid = (specials[:, None] + 1j * specials[None, :]).ravel()
    with np.errstate(all="ignore"):
        grid = grid.astype(dtype)
    z = np.concatenate([z, grid, np.array([complex(np.nan, np.inf), complex(np.inf, np.nan)], dtype)])
    same_bits(numfuse.jit(np.abs)(z), np.abs(z))
    same_bits(numfuse.jit(lambda z: abs(z) + 1)(z), np.abs(z) + 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_real_products_round_before_they_are_added(dtype):
    rng = np.random.default_rng(4)
    x, y, z = (rng.standard_normal((50, 80)).astype(dtype) for _ in range(3))

    def multiply_adds(x, y, z):
        return x * y + z, z - x * y, x * y * z + x, (x * y + z).sum(axis=1, dtype=np.float64)

    got = numfuse.jit(multiply_adds)(x, y, z)
    expected = multiply_adds(x, y, z)
    for g, e in zip(got[:3], expected[:3]):
        same_bits(g, e)
    # A sum adds in its own order; each term is still NumPy's rounded x * y + z.
    np.testing.assert_allclose(got[3], expected[3], rtol=1e-12)


def test_the_simulators_fma_rounds_once():
    """targets/cuda/products.simulated_fma against the exact value rounded once, where rounding
    twice (the simulator's own cuda.fma is a * b + c) gives another result: a float64 sum that
    cancels to the low product, and a float32 result whose float64 nearest is a float32 tie."""
    from fractions import Fraction

    from numfuse.targets.cuda.products import simulated_fma

    e = 2.0 ** -30
    a = np.float64(1 + e)
    assert simulated_fma(a, a, np.float64(-1 - 2 * e)) == np.float64(e * e)  # twice: 0.0
    assert np.float64(a * a + np.float64(-1 - 2 * e)) == 0.0
    # float32: a * b + c is 1 + 2**-24 + 2**-54 exactly (a = A 2**-30, b = B 2**-24 with
    # A B = 1 mod 2**30). Its float64 nearest is 1 + 2**-24, a float32 tie, which rounds to
    # even (1.0); the exact value is above the tie and rounds up.
    a, b, c = (np.float32(float.fromhex(h)) for h in ("0x1.000022p-7", "0x1.c3c3c4p-2", "0x1.fe3c3ep-1"))
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    assert exact == 1 + Fraction(1, 2 ** 24) + Fraction(1, 2 ** 54)
    assert np.float32(np.float64(a) * np.float64(b) + np.float64(c)) == np.float32(1.0)
    got = simulated_fma(a, b, c)
    assert got == np.nextafter(np.float32(1.0), np.float32(2.0)) and got.dtype == np.float32, got
    assert np.isnan(simulated_fma(np.float64(np.inf), np.float64(0.0), np.float64(1.0)))
    assert simulated_fma(np.float32(3e38), np.float32(3e38), np.float32(0.0)) == np.float32(np.inf)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_cube_roots_are_the_c_librarys(dtype):
    """np.cbrt calls the C library's cbrt(f); so does the CPU target (Numba's own float32 np.cbrt
    was 1 ulp off on a tenth of values). A GPU's libdevice cbrt and the simulator's (a power of
    1/3) are only close: within 8 ulp here."""
    rng = np.random.default_rng(8)
    x = np.concatenate([rng.standard_normal(N) * np.exp(rng.uniform(-20, 20, N)),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, -8.0, 27.0]]).astype(dtype)
    got = numfuse.jit(np.cbrt)(x)
    if on_the_cpu_target():
        # The C library's bits. NumPy's own are those where its loop calls the C library; on a
        # CPU with AVX-512 it runs its SVML loop instead, a few ulp from them.
        same_bits(got, c_library_cbrt(x))
        np.testing.assert_array_max_ulp(got, np.cbrt(x), maxulp=4)
    else:
        np.testing.assert_array_max_ulp(got, np.cbrt(x), maxulp=8)


def c_library_cbrt(x: np.ndarray) -> np.ndarray:
    """cbrt(f) of the C library, value by value (ctypes)."""
    import ctypes
    import ctypes.util

    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    single = x.dtype == np.float32
    function = libm.cbrtf if single else libm.cbrt
    kind = ctypes.c_float if single else ctypes.c_double
    function.restype, function.argtypes = kind, [kind]
    return np.array([function(float(v)) for v in x], dtype=x.dtype)


@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: np.dtype(d).name)
def test_complex_logarithms_are_glibcs(dtype):
    """np.log of complex values is glibc's clog (log1p of an exactly computed |z|**2 - 1 near
    |z| = 1, scalings near overflow and underflow, special values), and np.log10, np.log2 and
    np.power build on it: the CPU target's are NumPy's bits; a GPU's libdevice log1p, log and
    atan2 (and the simulator's NumPy float32 functions) are within a few ulp."""
    rng = np.random.default_rng(9)
    theta = rng.uniform(-np.pi, np.pi, N)
    near_one = (1 + rng.standard_normal(N) * np.exp(rng.uniform(-35, -1, N))) * np.exp(1j * theta)
    spread = rng.standard_normal(N) * np.exp(rng.uniform(-700, 700, N)) \
        + 1j * rng.standard_normal(N) * np.exp(rng.uniform(-700, 700, N))
    specials = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0, -1.0, 5e-324, 1e308])
    with np.errstate(all="ignore"):
        z = np.concatenate([near_one, 0.7 * np.exp(1j * theta), spread,
                            (specials[:, None] + 1j * specials[None, :]).ravel()]).astype(dtype)
        w = values(dtype, z.size, seed=10)

    def logarithms(z, w):  # the powers of moderate values (cexp's overflow edge is another matter)
        return np.log(z), np.log10(z), np.log2(z), z[:2 * N] ** w[:2 * N]

    got = numfuse.jit(logarithms)(z, w)
    with np.errstate(all="ignore"):
        expected = logarithms(z, w)
    for g, e in zip(got, expected):
        if on_the_cpu_target():
            same_bits(g, e)
        else:
            finite = np.isfinite(e)
            np.testing.assert_array_equal(np.isfinite(g), finite)
            np.testing.assert_allclose(g[finite], e[finite], rtol=64 * np.finfo(g.real.dtype).eps,
                                       atol=64 * np.finfo(g.real.dtype).tiny)


@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: np.dtype(d).name)
def test_complex_exponentials_are_glibcs(dtype):
    """np.exp and np.exp2 of complex values are glibc's cexp: past t = 709 (88 in float32) the
    cosine and sine are scaled by e^t first, and C99's special values, signed zeros included
    (exp(-inf - inf j) is 0 - 0j). A value whose parts are both infinite, NaN or zero is NumPy's
    on every target; the others are NumPy's bits on the CPU target and within a few ulp (their
    infinities and NaNs where NumPy's are) on a GPU."""
    rng = np.random.default_rng(11)
    big = 709.0 if dtype == np.complex128 else 88.0
    edge = rng.uniform(big - 5, 3.2 * big, N) + 1j * rng.uniform(-10, 10, N)
    real_axis = rng.uniform(big - 1, big + 1.5, 200) + 0j
    spread = rng.standard_normal(N) * 30 + 1j * rng.standard_normal(N) * 30
    specials = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0])
    finite = np.array([1.0, -1.0, big + 0.5, 3.5 * big])
    parts = np.concatenate([specials, finite])
    with np.errstate(all="ignore"):  # (parts built one by one: 1j * inf would make a NaN real part)
        grid = np.array([complex(re, im) for re in specials for im in specials])
        mixed = [complex(re, im) for re in parts for im in parts if re in finite or im in finite]
        z = np.concatenate([edge, real_axis, spread, mixed]).astype(dtype)
        special = grid.astype(dtype)
        both = np.concatenate([special, z])

    def exponentials(z):
        return np.exp(z), np.exp2(z)

    got = numfuse.jit(exponentials)(both)
    with np.errstate(all="ignore"):
        expected = exponentials(both)
    for g, e in zip(got, expected):
        same_bits(g[:special.size], e[:special.size])
        if on_the_cpu_target():
            same_bits(g, e)
        else:
            g, e = g[special.size:], e[special.size:]
            finite = np.isfinite(e)
            np.testing.assert_array_equal(np.isfinite(g), finite)
            np.testing.assert_allclose(g[finite], e[finite], rtol=64 * np.finfo(g.real.dtype).eps)


def adam_step(w, g, m, v, t, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    m_hat = m / (1 - b1 ** t)  # Python floats: Python's pow (libm's), not multiplications
    v_hat = v / (1 - b2 ** t)
    return w - lr * m_hat / (np.sqrt(v_hat) + eps), m, v


def test_a_power_of_python_floats_is_pythons_and_the_step_count_needs_no_new_trace():
    jf = numfuse.jit(adam_step, numpy_fallback=False)
    rng = np.random.default_rng(7)
    w, m, v = rng.random(N), np.zeros(N), np.zeros(N)
    for t in range(1, 9):
        g = rng.random(N)
        got = jf(w, g, m, v, t)
        expected = adam_step(w, g, m, v, t)
        for ours, theirs in zip(got, expected):
            if os.environ.get("NUMFUSE_TARGET") == "cpu":
                np.testing.assert_array_equal(ours, theirs)  # 0.9 ** 4 as x * x * x * x is an ulp off
            else:  # (the device's pow: the simulator's is NumPy's power loop, a GPU's CUDA's)
                np.testing.assert_allclose(ours, theirs, rtol=1e-12)
        w, m, v = expected
    assert len(jf._cache) == 1  # t is a traced Python int, not a constant of each trace


@pytest.mark.skipif(os.environ.get("NUMFUSE_TARGET") != "cpu",
                    reason="the CPU target's templates: the CUDA target computes powers with the device's pow "
                           "(the simulator with NumPy's)")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [3, 4])
def test_small_integer_powers_are_one_rounding_from_the_exact_power(n, dtype):
    # NumPy's power loop is a pow correct to within an ulp; products of products are up to two
    # ulps off (x ** 3 differed in a quarter of these values, x ** 4 in half): here the power
    # matches libm's pow, correctly rounded but for the rarest values.
    import math

    x = (np.random.default_rng(n).random(N) * 6 - 3).astype(dtype)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1e-30, 2.5], dtype)
    got = numfuse.jit(lambda x: x ** n, numpy_fallback=False)(np.concatenate([specials, x]))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got[:len(specials)], specials ** n)
    assert np.array_equal(np.signbit(got[:len(specials)]), np.signbit(specials ** n))
    libm = np.array([math.pow(float(v), n) for v in x]).astype(dtype)
    assert np.mean(got[len(specials):] != libm) < 0.005
