"""Scalar semantics of every elementwise operation, as small Python template functions.

These functions are never called. Code generators read their source and inline their bodies into
kernels through the AST (see codegen/templates.py), so they are written in the subset that every
target compiles: `math.*`, operators, `if` statements, and

- `T(...)`: the operation's computation dtype (the NumPy loop dtype), filled in by the generator,
  so that literals are typed (`float32(0.5)`, never a float64 `0.5`);
- `R(...)`: the dtype of T's real and imaginary parts (float32 for complex64; T itself for a real
  dtype), for complex templates that compute on the parts;
- `uint64(...)` and the other Numba scalar types, which every target's kernels import;
- one `return`, as the last statement, whose value is the result.

Each function copies NumPy's own C loop for that operation where NumPy's result is not what a
plain `math` call gives (floor division, remainder, rint, maximum's NaN rule, ...).
"""

# ruff: noqa: F821  (T is a template placeholder)

import math


def identity(a):
    return a


def add(a, b):
    return a + b


def subtract(a, b):
    return a - b


def multiply(a, b):
    return a * b


# Signed ints wrap around as NumPy's (two's complement): computed as uint64, whose wraparound
# LLVM keeps. Numba's signed +, - and * let LLVM assume that they do not overflow, so that
# `(x + 2) < 1` compiled to `x < -1` (False for the largest int64, where NumPy wraps to True).
# Narrower ints lose nothing: Numba computes them in 64 bits anyway, and T() truncates.
def add_signed(a, b):
    return T(uint64(a) + uint64(b))


def subtract_signed(a, b):
    return T(uint64(a) - uint64(b))


def multiply_signed(a, b):
    return T(uint64(a) * uint64(b))


def negative_signed(a):
    return T(uint64(0) - uint64(a))


def square_signed(a):
    return T(uint64(a) * uint64(a))


def true_divide(a, b):
    return a / b


def negative(a):
    return -a


def negative_unsigned(a):
    # Wraps like NumPy's unsigned negative: 0 - a modulo 2**bits.
    return T(0) - a


def absolute_float(a):
    return math.fabs(a)


def absolute_int(a):
    return abs(a)


def square(a):
    return a * a


def reciprocal_float(a):
    return T(1) / a


def reciprocal_int(a):
    # NumPy computes 1.0 / a and truncates: 0 except for 1 and -1 (a == 0 is undefined there).
    r = T(0)
    if a == T(1) or a == T(-1):
        r = a
    return r


def reciprocal_unsigned(a):
    r = T(0)
    if a == T(1):
        r = a
    return r


def floor_divide_int(a, b):
    # Python's floor rule; NumPy gives 0 for division by zero, and the negation, wrapped, for
    # a negative int divided by -1 (the minimum // -1 is the minimum: no trap, no 0).
    q = T(0)
    if a < T(0) and b == T(0) - T(1):  # (never for an unsigned T: -1 is no unsigned value)
        q = T(0) - a
    elif b != T(0):
        q = a // b
    return q


def remainder_int(a, b):
    # Sign of the divisor, as in Python; NumPy gives 0 for a zero divisor.
    r = T(0)
    if b != T(0):
        r = a % b
    return r


def fmod_int(a, b):
    # C's truncated remainder (sign of the dividend); 0 for a zero divisor.
    r = T(0)
    if b != T(0):
        r = a % b
        if r != T(0) and ((r < T(0)) != (a < T(0))):
            r = r - b
    return r


def floor_divide_float(a, b):
    # npy_floor_divide: divmod on fmod, then snap the quotient to an integer.
    mod = math.fmod(a, b)
    div = (a - mod) / b
    if mod != T(0) and ((b < T(0)) != (mod < T(0))):
        div = div - T(1)
    q = math.floor(div)
    if div - q > T(0.5):
        q = q + T(1)
    if div == T(0):
        q = math.copysign(T(0), a / b)
    if b == T(0):
        q = a / b
    return q


def remainder_float(a, b):
    # npy_remainder: fmod adjusted to the divisor's sign; a zero remainder takes b's sign.
    mod = math.fmod(a, b)
    if mod != T(0):
        if (b < T(0)) != (mod < T(0)):
            mod = mod + b
    else:
        mod = math.copysign(T(0), b)
    if b == T(0):
        mod = math.fmod(a, b)
    return mod


def fmod_float(a, b):
    return math.fmod(a, b)


def power_float(a, b):
    return math.pow(a, b)


def power_int(a, b):
    # Exponentiation by squaring with wrap-around, as NumPy's integer power loop. A negative
    # exponent, for which NumPy raises, is caught by the op's runtime check (ops.py).
    result = T(1)
    base = a
    e = b
    while e > T(0):
        if e % T(2) == T(1):
            result = T(result * base)
        base = T(base * base)
        e = e // T(2)
    return result


def power_signed(a, b):
    # power_int in uint64, as add_signed: with Numba's signed products LLVM took an even power
    # for non-negative, so that `a ** 20 < 0` compiled to False where NumPy's wraps negative.
    result = uint64(1)
    base = uint64(a)
    e = b
    while e > T(0):
        if e % T(2) == T(1):
            result = result * base
        base = base * base
        e = e // T(2)
    return T(result)


def negative_exponent(a, b):
    # The condition under which NumPy's integer power raises (see ops.RUNTIME_ERRORS).
    return b < T(0)


def equal(a, b):
    return a == b


def not_equal(a, b):
    return a != b


def less(a, b):
    return a < b


def less_equal(a, b):
    return a <= b


def greater(a, b):
    return a > b


def greater_equal(a, b):
    return a >= b


def bitwise_and(a, b):
    return a & b


def bitwise_or(a, b):
    return a | b


def bitwise_xor(a, b):
    return a ^ b


def invert_bool(a):
    return not a


def invert_int(a):
    return ~a


def logical_and(a, b):
    return a & b


def logical_or(a, b):
    return a | b


def logical_xor(a, b):
    return a != b


def logical_not(a):
    return not a


# NumPy's logical ufuncs also loop over numbers (truth: != 0, so NaN is true).
def logical_and_num(a, b):
    return (a != T(0)) & (b != T(0))


def logical_or_num(a, b):
    return (a != T(0)) | (b != T(0))


def logical_xor_num(a, b):
    return (a != T(0)) != (b != T(0))


def logical_not_num(a):
    return a == T(0)


def exp(a):
    return math.exp(a)


def exp2(a):
    return math.exp2(a)


def log(a):
    return math.log(a)


def log2(a):
    return math.log2(a)


def log10(a):
    return math.log10(a)


def log1p(a):
    return math.log1p(a)


def expm1(a):
    return math.expm1(a)


def sqrt(a):
    return math.sqrt(a)


def sin(a):
    return math.sin(a)


def cos(a):
    return math.cos(a)


def tan(a):
    return math.tan(a)


def arcsin(a):
    return math.asin(a)


def arccos(a):
    return math.acos(a)


def arctan(a):
    return math.atan(a)


def arcsinh(a):
    return math.asinh(a)


def arccosh(a):
    return math.acosh(a)


def arctanh(a):
    return math.atanh(a)


def arctan2(a, b):
    return math.atan2(a, b)


def hypot(a, b):
    return math.hypot(a, b)


def copysign(a, b):
    return math.copysign(a, b)


def signbit(a):
    return math.copysign(T(1), a) < T(0)


def deg2rad(a):
    return a * (T(math.pi) / T(180))


def rad2deg(a):
    return a * (T(180) / T(math.pi))


def logaddexp(a, b):
    # npy_logaddexp: equal arguments (infinities included) give a + log(2) without NaN.
    d = a - b
    r = d
    if d > T(0):
        r = a + math.log1p(math.exp(-d))
    if d <= T(0):
        r = b + math.log1p(math.exp(d))
    if a == b:
        r = a + T(0.6931471805599453)  # log(2)
    return r


def logaddexp2(a, b):
    d = a - b
    r = d
    if d > T(0):
        r = a + T(1.4426950408889634) * math.log1p(math.exp2(-d))  # log2(e) * log1p
    if d <= T(0):
        r = b + T(1.4426950408889634) * math.log1p(math.exp2(d))
    if a == b:
        r = a + T(1)
    return r


def heaviside(a, h0):
    r = T(1)
    if a < T(0):
        r = T(0)
    if a == T(0):
        r = h0
    if a != a:
        r = a
    return r


def sinh(a):
    return math.sinh(a)


def cosh(a):
    return math.cosh(a)


def tanh(a):
    return math.tanh(a)


def floor(a):
    return math.floor(a)


def ceil(a):
    return math.ceil(a)


def trunc(a):
    return math.trunc(a)


def rint(a):
    # Round half to even, keeping the sign of zero (rint(-0.4) is -0.0).
    f = math.floor(a)
    d = a - f
    if d > T(0.5) or (d == T(0.5) and math.fmod(f, T(2)) != T(0)):
        f = f + T(1)
    return math.copysign(f, a)


def sign_float(a):
    s = a
    if a > T(0):
        s = T(1)
    if a < T(0):
        s = T(-1)
    if a == T(0):
        s = T(0)
    return s


def sign_int(a):
    s = T(0)
    if a > T(0):
        s = T(1)
    if a < T(0):
        s = T(-1)
    return s


def sign_unsigned(a):
    s = T(0)
    if a > T(0):
        s = T(1)
    return s


def maximum(a, b):
    # NumPy (2.x, its SIMD and scalar loops alike): (a > b || isnan(a)) ? a : b, so NaN wins
    # from either side, and of two equal values the second: np.maximum(-0.0, 0.0) is 0.0.
    return a if (a > b) | (a != a) else b


def minimum(a, b):
    return a if (a < b) | (a != a) else b


def fmax(a, b):
    # NumPy: (a >= b || isnan(b)) ? a : b, so NaN loses unless both are NaN.
    return a if (a >= b or b != b) else b


def fmin(a, b):
    return a if (a <= b or b != b) else b


def isnan(a):
    return a != a


def isinf_float(a):
    return math.isinf(a)


def isfinite_float(a):
    return math.isfinite(a)


def never(a):
    # isinf of an integer: a != a is False for every integer, typed as a boolean.
    return a != a


def always(a):
    return a == a


def where(c, a, b):
    return a if c else b


def to_bool(a):
    return a != T(0)


def logical_or_reduce(a, b):
    return a | b


def logical_and_reduce(a, b):
    return a & b


# argmax and argmin: whether the candidate (b, its index bi) replaces the best so far (a, ai).
# NumPy returns the first index of the extreme value, and the first NaN over anything; candidates
# arrive out of order across threads, so ties and NaNs compare indices.
def argmax_pick(a, ai, b, bi):
    return (b != b and (a == a or bi < ai)) or (a == a and (b > a or (b == a and bi < ai)))


def argmin_pick(a, ai, b, bi):
    return (b != b and (a == a or bi < ai)) or (a == a and (b < a or (b == a and bi < ai)))


# The online softmax (a sum of exp(x - max) accumulated while the max still grows). The sum so
# far is rescaled by online_scale when the max moves; equal maxima (both -inf, both +inf) need
# no rescale. A -inf point adds nothing, whatever the max; a row of -inf ends up NaN as in NumPy
# (the caller sets it), and +inf or NaN points give NaN through exp as in NumPy.
def online_scale(m_old, m_new):
    return T(1) if m_old == m_new else math.exp(m_old - m_new)


def online_term(v, m):
    return T(0) if v == -math.inf else math.exp(v - m)


# Complex templates. The parts are `a.real` and `a.imag` (typed R); a result is built as
# complex(re, im), which Numba types as complex128, and the generator's cast to the result dtype
# narrows it back: for complex64 the widening and narrowing cancel (the compile tier checks that
# the PTX of complex64 kernels has no f64).
def true_divide_complex(a, b):
    # NumPy's complex division loop: Smith's method, scaled by b's larger part. A zero divisor
    # gives the parts divided by zero (inf or nan), as NumPy does, where plain complex division
    # would raise.
    ar = a.real
    ai = a.imag
    br = b.real
    bi = b.imag
    abs_br = math.fabs(br)
    abs_bi = math.fabs(bi)
    if abs_br >= abs_bi:
        if abs_br == R(0) and abs_bi == R(0):
            re = ar / abs_br
            im = ai / abs_br
        else:
            rat = bi / br
            scl = R(1) / (br + bi * rat)
            re = (ar + ai * rat) * scl
            im = (ai - ar * rat) * scl
    else:
        rat = br / bi
        scl = R(1) / (bi + br * rat)
        re = (ar * rat + ai) * scl
        im = (ai * rat - ar) * scl
    return complex(re, im)


def absolute_complex(a):
    # npy_cabs: hypot of the parts, so an infinite part gives inf even beside a NaN.
    return math.hypot(a.real, a.imag)


def conjugate(a):
    return a.conjugate()


def real_part(a):
    return a.real


def imag_part(a):
    return a.imag


def complex_from_parts(re, im):
    return complex(re, im)


def gather_index(i, n):
    # NumPy wraps a negative index once; one still out of range was reported by
    # index_out_of_bounds, and is kept in range here so that the load stays in bounds.
    j = i
    if j < T(0):
        j = j + n
    if j < T(0):
        j = T(0)
    if j >= n:
        j = n - T(1)
    return j


def index_out_of_bounds(i, n):
    # Where NumPy raises IndexError for an index array's value (see ops.RUNTIME_ERRORS).
    bad = i >= n
    if i < T(0) - n:
        bad = True
    return bad


def is_nonzero(n):
    return n != T(0)


# Python's arithmetic on Python ints (arguments numfuse computes in int64): where it would
# leave int64 (see ops.RUNTIME_ERRORS), tested without leaving it.
def sum_leaves_int64(a, b):
    return (b > T(0) and a > T(9223372036854775807) - b) or (b < T(0) and a < T(-9223372036854775808) - b)


def difference_leaves_int64(a, b):
    return (b < T(0) and a > T(9223372036854775807) + b) or (b > T(0) and a < T(-9223372036854775808) + b)


def product_leaves_int64(a, b):
    # a * b beyond [MIN, MAX], by the bound over one factor: b > MAX / a is b > MAX // a for a
    # positive a; b < MIN / a is b < ceil(MIN / a) = (MIN + a - 1) // a; for a negative a,
    # b < MAX / a is b < ceil(MAX / a) = (MAX + a + 1) // a (none of them leaves int64).
    big = False
    if a > T(0):
        big = (b > T(0) and b > T(9223372036854775807) // a) or (
            b < T(0) and b < (T(-9223372036854775808) + a - T(1)) // a)
    elif a < T(0):
        big = (b > T(0) and a < (T(-9223372036854775808) + b - T(1)) // b) or (
            b < T(0) and b < (T(9223372036854775807) + a + T(1)) // a)
    return big


def power_leaves_int64(a, b):
    # Python's a ** b (b >= 0, a constant) beyond int64, from the power in float64: exact for a
    # power of two, and no other perfect power comes within float64's spacing of 2**63; -2**63
    # itself (a negative base, an odd exponent) fits.
    p = math.pow(math.fabs(a), b)
    return p > 9.223372036854775808e18 or (
        p == 9.223372036854775808e18 and not (a < T(0) and b % T(2) == T(1)))


def zero_to_negative_power(a, b):
    # Python's 0.0 ** -n raises (NumPy's pow gives inf).
    return a == T(0) and b < T(0)


def power_is_complex(a, b):
    # Python's float ** float of a finite negative base and a finite fractional exponent is
    # complex (pow gives NaN).
    return a < T(0) and not math.isinf(a) and not math.isinf(b) and b == b and math.floor(b) != b


def power_overflowed(a, r):
    # Python's float ** int raises where the power of a finite base overflows (pow gives inf;
    # 0.0 to a negative power is zero_to_negative_power's error).
    return math.isinf(r) and not math.isinf(a) and a != T(0)


def no_operand_problem(a, b):
    # (the value of a check's operation: the check is what counts)
    return True


def is_zero(n):
    # A count NumPy cannot reduce (see ops.RUNTIME_ERRORS).
    return n == T(0)


def choice_in_range(i, n):
    # An index outside the choices was reported by outside_choices: kept in range for the read.
    j = i
    if j < T(0):
        j = T(0)
    if j >= n:
        j = n - T(1)
    return j


def outside_choices(i, n):
    # Where np.choose(mode="raise") raises (see ops.RUNTIME_ERRORS).
    bad = i < T(0)
    if i >= n:
        bad = True
    return bad
