"""Scalar templates of the bit-level, integer-theoretic and floating-point-decomposition ufuncs:
shifts, gcd and lcm, bitwise_count, cbrt, ldexp, frexp, modf, nextafter and spacing.

Written in the subset scalar_impl.py describes (`math.*`, operators, `if`/`while`, `T(...)` the
computation dtype, one final `return`); these also use the kernel module's dtype constructors
(`int32`, `int64`, `uint64`) and `cuda.popc` / `cuda.cbrt`, which generated kernel modules import.
Each copies NumPy's C loop where a plain operator would differ from it (shift counts past the
width, gcd of the most negative integer, frexp of inf, spacing of a zero).

Integer templates widen to 64 bits before shifting or dividing, so that one template serves every
width: the generator casts the value back to the result dtype, which keeps its low bits (what
NumPy's C loop does when it truncates to the narrow type).
"""

# ruff: noqa: F821  (T, int32, int64, uint64 and cuda are template placeholders / kernel names)

import math


# -- a float's bits (x.view(np.int32) of a float32 array) -----------------------------------------
# float_bits and float_from_bits are the targets' bitcasts (intrinsics of the kernel module).
def bits_of_float(a):
    return float_bits(a)


def float_of_bits(a):
    return float_from_bits(a)


def same_bits(a):
    # a signed integer as the unsigned one of its size, or back: the generator's C cast of the
    # value to the result dtype keeps its bits
    return a


# -- shifts ----------------------------------------------------------------------------------------
# NumPy (npy_lshift, npy_rshift): a count outside [0, width) shifts everything out: 0, or for a
# right shift of a negative signed value, -1. Inside, a << b keeps the low bits of the result.
# A count in [width, 64) of a narrow type gives those values through the 64-bit shift and the
# cast back; 64 and beyond (or negative) is tested, as the hardware shift would wrap the count.
def left_shift_int(a, b):
    r = T(0)
    if b >= T(0) and b < T(64):
        r = T(int64(a) << int64(b))
    return r


def left_shift_unsigned(a, b):
    r = T(0)
    if b < T(64):
        r = T(uint64(a) << uint64(b))
    return r


def right_shift_int(a, b):
    # An arithmetic shift by 63 of the widened value is the sign (0 or -1) for every width.
    s = b
    if b < T(0) or b > T(63):
        s = T(63)
    return T(int64(a) >> int64(s))


def right_shift_unsigned(a, b):
    r = T(0)
    if b < T(64):
        r = T(uint64(a) >> uint64(b))
    return r


# -- gcd, lcm, bitwise_count -----------------------------------------------------------------------
# NumPy takes absolute values as unsigned numbers (the most negative int8, -128, is 128), computes
# in unsigned arithmetic and casts back: gcd(-128, 0) is -128 in int8, lcm wraps modulo 2**width.
# -(a + 1) + 1 computes |a| without overflowing in either type.
def gcd(a, b):
    x = uint64(a) if a >= T(0) else uint64(-(a + T(1))) + uint64(1)
    y = uint64(b) if b >= T(0) else uint64(-(b + T(1))) + uint64(1)
    while y != uint64(0):
        t = x % y
        x = y
        y = t
    return x


def lcm(a, b):
    x = uint64(a) if a >= T(0) else uint64(-(a + T(1))) + uint64(1)
    y = uint64(b) if b >= T(0) else uint64(-(b + T(1))) + uint64(1)
    g = x
    h = y
    while h != uint64(0):
        t = g % h
        g = h
        h = t
    r = uint64(0)
    if g != uint64(0):
        r = (x // g) * y
    return r


def bitwise_count(a):
    # The 1-bits of |a| (NumPy's definition for signed types).
    x = uint64(a) if a >= T(0) else uint64(-(a + T(1))) + uint64(1)
    return cuda.popc(x)


# -- floating-point decomposition ------------------------------------------------------------------
def cbrt(a):
    # libdevice's cbrt on a GPU (within 1 ulp, as glibc's). The simulator's cuda.cbrt is
    # a ** (1/3), NaN for a negative a: so the root of |a|, with a's sign put back (cbrt(-0.0)
    # is -0.0, as in NumPy).
    return math.copysign(cuda.cbrt(math.fabs(a)), a)


def ldexp(a, n):
    # NumPy's int64 loop clamps an exponent beyond the C int range to its bounds (the result is
    # then 0 or inf anyway); libdevice's ldexp takes an int32.
    e = n
    if n > 2147483647:
        e = 2147483647
    if n < -2147483648:
        e = -2147483648
    return math.ldexp(a, int32(e))


def frexp_mantissa(a):
    return math.frexp(a)[0]


def frexp_exponent(a):
    # glibc (NumPy) stores 0 for inf and NaN; CUDA leaves the exponent unspecified there.
    e = math.frexp(a)[1]
    if not math.isfinite(a):
        e = int32(0)
    return e


def modf_fraction(a):
    # C's modf: the fractional part has a's sign (modf(-3.0) is -0.0), and is +-0 for +-inf.
    f = math.copysign(a - math.trunc(a), a)
    if math.isinf(a):
        f = math.copysign(T(0), a)
    return f


def modf_integral(a):
    return math.trunc(a)


def nextafter(a, b):
    return math.nextafter(a, b)


def spacing(a):
    # npy_spacing: the distance to the next value away from zero, NaN for inf; of either zero the
    # smallest positive subnormal (spacing(-0.0) > 0).
    r = math.nextafter(a, math.copysign(T(math.inf), a)) - a
    if a == T(0):
        r = math.nextafter(T(0), T(1))
    if math.isinf(a):
        r = T(math.nan)
    return r


# float16 nextafter and spacing, computed in float32 on float16 values (numfuse's float16 compute
# dtype): a float32 nextafter would step by float32's ulp. float16 has 11 significant bits,
# normal exponents from -14: a value m * 2**e (frexp, 0.5 <= |m| < 1) steps by 2**(e - 11), or by
# 2**-24 among the subnormals; toward zero from a power of two (not the smallest normal) by half
# of that. Every result is a float16 value, so the cast to float16 after the template is exact,
# except the step past the largest one (65504 + 32), which that cast rounds to inf, as NumPy does.
def nextafter_half(a, b):
    m, e = math.frexp(a)
    step = math.ldexp(T(1), int32(max(e - 11, -24)))
    if (b > a) != (a > T(0)) and math.fabs(m) == T(0.5) and e - 1 > -14:
        step = step * T(0.5)
    r = a + math.copysign(step, b - a)
    if r == T(0):
        r = math.copysign(T(0), a)  # from the smallest subnormal toward zero: a zero of a's sign
    if a == T(0):
        r = math.copysign(T(5.960464477539063e-08), b)  # 2**-24
    if math.isinf(a):
        r = math.copysign(T(65504), a)
    if a == b:
        r = a  # npy_half_nextafter keeps x (C's nextafter returns y: nextafter(0.0, -0.0) is -0.0)
    if a != a or b != b:
        r = a + b
    return r


def spacing_half(a):
    # npy_half_spacing is the step toward +inf for either sign (spacing(float16(-1)) is +2**-11,
    # where float32's spacing(-1) is -2**-23): NaN for inf, inf past the largest value.
    m, e = math.frexp(a)
    r = math.ldexp(T(1), int32(max(e - 11, -24)))
    if a < T(0) and math.fabs(m) == T(0.5) and e - 1 > -14:
        r = r * T(0.5)
    if a == T(65504):
        r = T(math.inf)
    if a == T(0):
        r = T(5.960464477539063e-08)  # 2**-24
    if math.isinf(a):
        r = T(math.nan)
    if a != a:
        r = a
    return r
