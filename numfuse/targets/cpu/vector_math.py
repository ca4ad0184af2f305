"""Scalar templates of the CPU target for functions NumPy runs as SIMD loops: branch-free
(selects, not branches), without calls into the C library, so that LLVM vectorizes the loops
they are inlined into. Numba's own math functions are scalar libm calls since it dropped SVML.

exp: Cody-Waite range reduction x = n ln2 + r (n rounded to nearest by the 1.5 * 2**mantissa
trick, exact without fast-math), a polynomial for exp(r) (Cephes' minimax for float32, the
Taylor series to degree 13 for float64, |r| <= ln2 / 2), and 2**n built from its bits, in two
halves so that results in the subnormal range and up to overflow come out of one rounding.
Inputs past the ends are clamped, so exp overflows to inf and underflows to 0 as it should; a
NaN stays NaN. tanh: Cephes' polynomial (float32) or rational function (float64) below 0.625,
1 - 2 / (exp(2|x|) + 1) beyond. log: the exponent and mantissa from the bits, log(m) =
2 atanh((m - 1) / (m + 1)) by its odd series. sin and cos: below. Accuracy against NumPy, within 4 ULP:
numfuse_tests/cpu/test_vector_math.py (a sample of every float32 bit pattern and of float64s),
benchmarks/vector_math_accuracy.py (all float32 inputs).
Polynomials and reductions take fused multiply-adds (intrinsics.fma: one rounding, one vfmadd
instruction), which Numba would never contract by itself.
"""

# ruff: noqa: F821  (T and the bit intrinsics are bound in the generated module)


def exp32(a):
    x = T(88.8) if a > T(88.8) else a
    x = T(-104.0) if x < T(-104.0) else x
    n = fma(x, T(1.4426950408889634), T(12582912.0)) - T(12582912.0)
    r = fma(n, T(-0.693359375), x)
    r = fma(n, T(2.12194440e-4), r)
    p = fma(T(1.9875691500e-4), r, T(1.3981999507e-3))
    p = fma(p, r, T(8.3334519073e-3))
    p = fma(p, r, T(4.1665795894e-2))
    p = fma(p, r, T(1.6666665459e-1))
    p = fma(p, r, T(5.0000001201e-1))
    p = fma(p, r * r, r) + T(1.0)
    # n is within [-150, 128]: converted to int32, which vectorizes (packed float32 to int64
    # conversions do not, before AVX-512); 2**n's two halves stay within int32 too. (Numba
    # widens int32 arithmetic to int64; the int32 casts let LLVM keep it narrow.)
    k = int32(n)
    k1 = int32(k >> int32(1))
    s1 = float32_from_bits(int32((k1 + int32(127)) << int32(23)))
    s2 = float32_from_bits(int32((k - k1 + int32(127)) << int32(23)))
    y = (p * s1) * s2
    return a if a != a else y


def exp64(a):
    x = T(709.8) if a > T(709.8) else a
    x = T(-746.0) if x < T(-746.0) else x
    n = fma(x, T(1.4426950408889634), T(6755399441055744.0)) - T(6755399441055744.0)
    r = fma(n, T(-6.93147180369123816490e-01), x)
    r = fma(n, T(-1.90821492927058770002e-10), r)
    p = fma(T(1.6059043836821613e-10), r, T(2.08767569878681e-09))
    p = fma(p, r, T(2.505210838544172e-08))
    p = fma(p, r, T(2.755731922398589e-07))
    p = fma(p, r, T(2.7557319223985893e-06))
    p = fma(p, r, T(2.48015873015873e-05))
    p = fma(p, r, T(0.0001984126984126984))
    p = fma(p, r, T(0.001388888888888889))
    p = fma(p, r, T(0.008333333333333333))
    p = fma(p, r, T(0.041666666666666664))
    p = fma(p, r, T(0.16666666666666666))
    p = fma(p, r, T(0.5))
    p = fma(p, r * r, r) + T(1.0)
    k = int64(n)
    k1 = k >> int64(1)
    s1 = float64_from_bits((k1 + int64(1023)) << int64(52))
    s2 = float64_from_bits((k - k1 + int64(1023)) << int64(52))
    y = (p * s1) * s2
    return a if a != a else y


def tanh32(a):
    # |a| < 0.625: Cephes' odd polynomial; beyond, 1 - 2 / (exp(2|a|) + 1) (no cancellation
    # there: the result is past 0.55). Both are computed and one selected: no branch.
    z = a * a
    p = fma(T(-5.70498872745e-3), z, T(2.06390887954e-2))
    p = fma(p, z, -T(5.37397155531e-2))
    p = fma(p, z, T(1.33314422036e-1))
    p = fma(p, z, -T(3.33332819422e-1))
    small = fma(p * z, a, a)
    e = exp32(T(2.0) * math.fabs(a))
    large = math.copysign(T(1.0) - T(2.0) / (e + T(1.0)), a)
    y = small if math.fabs(a) < T(0.625) else large
    return a if a == T(0.0) else y  # -0.0 stays -0.0


def tanh64(a):
    z = a * a
    p = (T(-9.64399179425052238628e-1) * z + T(-9.92877231001918586564e1)) * z + T(-1.61468768441708447952e3)
    q = ((z + T(1.12811678491632931402e2)) * z + T(2.23548839060100448583e3)) * z + T(4.84406305325125486048e3)
    small = fma(a * z, p / q, a)
    e = exp64(T(2.0) * math.fabs(a))
    large = math.copysign(T(1.0) - T(2.0) / (e + T(1.0)), a)
    y = small if math.fabs(a) < T(0.625) else large
    return a if a == T(0.0) else y  # -0.0 stays -0.0


def log32(a):
    # a = m * 2**e with m in [sqrt(1/2), sqrt(2)) from the bits (a subnormal scaled up first);
    # log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.172: its odd series to s**11.
    tiny = a < T(1.17549435e-38)
    x = a * T(8388608.0) if tiny else a
    bits = float32_bits(x)  # int32 arithmetic, as in exp32
    e = int32(((bits >> int32(23)) & int32(255)) - int32(127) - (int32(23) if tiny else int32(0)))
    m = float32_from_bits(int32((bits & int32(8388607)) | int32(1065353216)))
    big = m > T(1.41421356)
    m = m * T(0.5) if big else m
    e = int32(e + int32(1)) if big else e
    s = (m - T(1.0)) / (m + T(1.0))
    z = s * s
    p = fma(T(0.09090909), z, T(0.11111111))
    p = fma(p, z, T(0.14285715))
    p = fma(p, z, T(0.2))
    p = fma(p, z, T(0.33333334))
    f = T(e)
    y = fma(f, T(0.693359375), fma(f, T(-2.12194440e-4), fma(T(2.0) * s * z, p, T(2.0) * s)))
    y = T(math.inf) if a == T(math.inf) else y
    y = -T(math.inf) if a == T(0.0) else y
    return T(math.nan) if a < T(0.0) or a != a else y


def log64(a):
    tiny = a < T(2.2250738585072014e-308)
    x = a * T(4503599627370496.0) if tiny else a
    bits = float64_bits(x)
    e = ((bits >> int64(52)) & int64(2047)) - int64(1023) - (int64(52) if tiny else int64(0))
    m = float64_from_bits((bits & int64(4503599627370495)) | int64(4607182418800017408))
    big = m > T(1.4142135623730951)
    m = m * T(0.5) if big else m
    e = e + int64(1) if big else e
    s = (m - T(1.0)) / (m + T(1.0))
    z = s * s
    p = fma(T(1.0 / 23.0), z, T(1.0 / 21.0))
    p = fma(p, z, T(1.0 / 19.0))
    p = fma(p, z, T(1.0 / 17.0))
    p = fma(p, z, T(1.0 / 15.0))
    p = fma(p, z, T(1.0 / 13.0))
    p = fma(p, z, T(1.0 / 11.0))
    p = fma(p, z, T(1.0 / 9.0))
    p = fma(p, z, T(1.0 / 7.0))
    p = fma(p, z, T(1.0 / 5.0))
    p = fma(p, z, T(1.0 / 3.0))
    f = T(e)
    y = fma(f, T(6.93147180369123816490e-01), fma(f, T(1.90821492927058770002e-10), fma(T(2.0) * s * z, p, T(2.0) * s)))
    y = T(math.inf) if a == T(math.inf) else y
    y = -T(math.inf) if a == T(0.0) else y
    return T(math.nan) if a < T(0.0) or a != a else y


# sin and cos: x = n pi/2 + r, |r| <= pi/4, n rounded to nearest (the 1.5 * 2**52 trick), then
# a kernel for sin(r) and cos(r) on [-pi/4, pi/4], and the quadrant n mod 4 picks one (by
# selects). float64: pi/2 in four parts of 33, 33, 33 and 53 bits (fdlibm's pio2_1, pio2_2,
# pio2_3, pio2_3t), so that n times each of the first three is exact while |n| < 2**20 and r
# keeps its relative accuracy even for the arguments closest to a multiple of pi/2, and fdlibm's
# kernels. float32: computed in float64, pi/2 in two parts (of 25 and 53 bits: exact for
# |n| < 2**28) and FreeBSD's float kernels (__kernel_sindf, __kernel_cosdf), rounded once, as
# FreeBSD's sinf does below 2**28 pi/2. Past TRIG_LIMIT (and for inf) the reduction is not
# exact: codegen then computes the loop's points with libm's functions (trig_loops.py).
TRIG_LIMIT = {"float32": 2.0**28, "float64": 1.0e6}


def _sin_kernel64(r):
    z = r * r
    p = fma(float64(1.58969099521155010221e-10), z, float64(-2.50507602534068634195e-08))
    p = fma(p, z, float64(2.75573137070700676789e-06))
    p = fma(p, z, float64(-1.98412698298579493134e-04))
    p = fma(p, z, float64(8.33333333332248946124e-03))
    p = fma(p, z, float64(-1.66666666666666324348e-01))
    return fma(r * z, p, r)


def _cos_kernel64(r):
    z = r * r
    p = fma(float64(-1.13596475577881948265e-11), z, float64(2.08757232129817482790e-09))
    p = fma(p, z, float64(-2.75573143513906633035e-07))
    p = fma(p, z, float64(2.48015872894767294178e-05))
    p = fma(p, z, float64(-1.38888888888741095749e-03))
    p = fma(p, z, float64(4.16666666666666019037e-02))
    return float64(1.0) - fma(-(z * z), p, float64(0.5) * z)


def _sin_kernel32(r):
    z = r * r
    w = z * z
    s = z * r
    return (r + s * (float64(-0.16666666641626524) + z * float64(0.008333329385889463))) + \
        s * w * (float64(-0.00019839334836096632) + z * float64(2.718311493989822e-06))


def _cos_kernel32(r):
    z = r * r
    w = z * z
    return ((float64(1.0) + z * float64(-0.499999997251031)) + w * float64(0.04166662332373906)) + \
        (w * z) * (float64(-0.001388676377460993) + z * float64(2.439044879627741e-05))


def _round64(x):
    return (x + float64(6755399441055744.0)) - float64(6755399441055744.0)


def _quarter64(n):
    """n - 4 round(n / 4): n mod 4, or that less 4 (in -2 .. 2)."""
    k = _round64(n * float64(0.25))
    return n - float64(4.0) * k


def _quadrant(q, s, c):
    """sin(n pi/2 + r) from q, n mod 4 or that less 4, s = sin r and c = cos r: 0 sin r,
    1 cos r, 2 -sin r, 3 -cos r. cos(x) = sin(x + pi/2): q + 1."""
    minus_c = (q == float64(-1.0)) | (q == float64(3.0))
    return s if q == float64(0.0) else (c if q == float64(1.0) else (-c if minus_c else -s))


def _trig64(x, shift):
    """sin(x) (shift 0.0) or cos(x) (shift 1.0), x a float64."""
    n = _round64(x * float64(0.6366197723675814))
    r = fma(n, float64(-1.57079632673412561417e+00), x)
    r = fma(n, float64(-6.07710050630396597660e-11), r)
    r = fma(n, float64(-2.02226624871116645580e-21), r)
    r = fma(n, float64(-8.47842766036889956997e-32), r)
    q = _quarter64(n)
    s = _sin_kernel64(r)
    c = _cos_kernel64(r)
    y = _quadrant(q + shift, s, c)
    return y


def _trig32(x, shift):
    """sin(x) or cos(x) as _trig64, x a float32 value in float64."""
    n = _round64(x * float64(0.6366197723675814))
    r = fma(n, float64(-1.58932547735281966916e-08), fma(n, float64(-1.57079631090164184570e+00), x))
    q = _quarter64(n)
    s = _sin_kernel32(r)
    c = _cos_kernel32(r)
    y = _quadrant(q + shift, s, c)
    return y


def sin64(a):
    y = _trig64(a, float64(0.0))
    return a if a == T(0.0) else y  # -0.0 stays -0.0


def cos64(a):
    y = _trig64(a, float64(1.0))
    return y


def sin32(a):
    y = _trig32(float64(a), float64(0.0))
    return a if a == T(0.0) else T(y)


def cos32(a):
    y = _trig32(float64(a), float64(1.0))
    return T(y)


# Small integer powers (x ** 3, x ** 4): NumPy's power loop is a correctly rounded pow to
# within an ulp, where products of products are up to two ulps off (a quarter of x ** 3 and
# half of x ** 4 differed from NumPy's). float64: the products with their rounding errors,
# which fma gives exactly, added back (x * x = p + ep exactly, and so on), a result one
# rounding from the exact power in all but the rarest cases; where the power is 0, inf or NaN,
# the plain product (its sign and special values, which the corrections would spoil).
# float32: the products in float64 (x ** 2 exact there), rounded once to float32.


def cube64(x):
    p = x * x
    ep = fma(x, x, -p)
    c = p * x
    ec = fma(p, x, -c)
    corrected = c + (ec + ep * x)
    return select((c != T(0.0)) & (math.fabs(c) < T(math.inf)), corrected, c)


def fourth64(x):
    p = x * x
    ep = fma(x, x, -p)
    q = p * p
    eq = fma(p, p, -q)
    corrected = q + (eq + T(2.0) * p * ep)
    return select((q != T(0.0)) & (q < T(math.inf)), corrected, q)


def cube32(x):
    w = float64(x)
    return T(w * w * w)


def fourth32(x):
    w = float64(x)
    s = w * w
    return T(s * s)


# x ** n for a constant n of these, by the compute dtype's name
POWERS = {
    3.0: {"float64": cube64, "float32": cube32},
    4.0: {"float64": fourth64, "float32": fourth32},
}

# op name -> {compute dtype name: template}
TEMPLATES = {
    "exp": {"float32": exp32, "float64": exp64},
    "tanh": {"float32": tanh32, "float64": tanh64},
    "log": {"float32": log32, "float64": log64},
    "sin": {"float32": sin32, "float64": sin64},
    "cos": {"float32": cos32, "float64": cos64},
}
# The functions whose templates hold only within TRIG_LIMIT.
LIMITED = ("sin", "cos")
