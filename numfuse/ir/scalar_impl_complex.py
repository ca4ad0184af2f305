"""Scalar templates of the complex loops NumPy defines beyond arithmetic (ops.py's 'c' entries).

Written, as scalar_impl.py's templates are, from real math on the parts: `a.real` and `a.imag`
are typed R (float32 for complex64), literals are R(...) so complex64 stays single precision,
and a complex result is built as complex(re, im) (cast back to the loop dtype by the generator).
Each copies NumPy's own loop (numpy/_core/src/umath/loops.c.src, funcs.inc.src, npymath's
npy_math_complex.c.src) or, where NumPy calls the C library (glibc's clog, csqrt, cexp, cpow),
the C99 Annex G function with its special values.

Thresholds are written to hold for both part dtypes (1e-30 is above float32's smallest normal
and harmless in float64); every rescaling is by a power of two, so it changes no rounding.
"""

# ruff: noqa: F821  (R is a template placeholder)

import math


# -- ordering: NumPy's lexicographic CLT/CLE/CGT/CGE (loops.c.src). A NaN imaginary part on
# either side makes a strict real-part comparison false.
def less_complex(a, b):
    return ((a.real < b.real and a.imag == a.imag and b.imag == b.imag)
            or (a.real == b.real and a.imag < b.imag))


def less_equal_complex(a, b):
    return ((a.real < b.real and a.imag == a.imag and b.imag == b.imag)
            or (a.real == b.real and a.imag <= b.imag))


def greater_complex(a, b):
    return ((a.real > b.real and a.imag == a.imag and b.imag == b.imag)
            or (a.real == b.real and a.imag > b.imag))


def greater_equal_complex(a, b):
    return ((a.real > b.real and a.imag == a.imag and b.imag == b.imag)
            or (a.real == b.real and a.imag >= b.imag))


# -- classification and truth
def isnan_complex(a):
    return a.real != a.real or a.imag != a.imag


def isinf_complex(a):
    return math.isinf(a.real) or math.isinf(a.imag)


def isfinite_complex(a):
    return math.isfinite(a.real) and math.isfinite(a.imag)


def logical_and_complex(a, b):
    return (a.real != R(0) or a.imag != R(0)) and (b.real != R(0) or b.imag != R(0))


def logical_or_complex(a, b):
    return (a.real != R(0) or a.imag != R(0)) or (b.real != R(0) or b.imag != R(0))


def logical_xor_complex(a, b):
    return (a.real != R(0) or a.imag != R(0)) != (b.real != R(0) or b.imag != R(0))


def logical_not_complex(a):
    return a.real == R(0) and a.imag == R(0)


# -- sign, reciprocal, rint
def sign_complex(a):
    # NumPy 2: z / |z|, with |z| = hypot (so a finite z whose hypot overflows takes the
    # infinite branch, as in NumPy); 0 for 0; NaN for NaN and for two infinite parts.
    x = a.real
    y = a.imag
    h = math.hypot(x, y)
    re = x / h
    im = y / h
    if h == R(0):
        re = R(0)
        im = R(0)
    if math.isinf(h):
        if math.isinf(x):
            re = R(1) if x > R(0) else R(-1)
            im = R(0)
            if math.isinf(y):
                re = R(math.nan)
                im = R(math.nan)
        else:
            re = R(0)
            im = R(1) if y > R(0) else R(-1)
    if h != h:
        re = R(math.nan)
        im = R(math.nan)
    return complex(re, im)


def reciprocal_complex(a):
    # NumPy's reciprocal loop: Smith's method on 1 / z.
    x = a.real
    y = a.imag
    if math.fabs(y) <= math.fabs(x):
        r = y / x
        d = x + y * r
        re = R(1) / d
        im = -r / d
    else:
        r = x / y
        d = x * r + y
        re = r / d
        im = R(-1) / d
    return complex(re, im)


def rint_complex(a):
    # rint of each part: round half to even, keeping the sign of zero (scalar_impl.rint).
    x = a.real
    y = a.imag
    fx = math.floor(x)
    dx = x - fx
    if dx > R(0.5) or (dx == R(0.5) and math.fmod(fx, R(2)) != R(0)):
        fx = fx + R(1)
    fy = math.floor(y)
    dy = y - fy
    if dy > R(0.5) or (dy == R(0.5) and math.fmod(fy, R(2)) != R(0)):
        fy = fy + R(1)
    re = math.copysign(fx, x)
    im = math.copysign(fy, y)
    if not math.isfinite(x):
        re = x
    if not math.isfinite(y):
        im = y
    return complex(re, im)


# -- square roots, logarithms, exponentials
def sqrt_complex(a):
    # C99 csqrt (glibc's, which NumPy calls): Algorithm 312 (CACM 10, 1967) on rescaled parts.
    x = a.real
    y = a.imag
    xs = x
    ys = y
    scale = R(1)
    h = math.hypot(x, y)
    if not math.isfinite(math.fabs(x) + h):
        xs = x * R(0.25)
        ys = y * R(0.25)
        scale = R(2)
    if h < R(1e-30):
        xs = x * R(1.2676506002282294e30)  # 2**100
        ys = y * R(1.2676506002282294e30)
        scale = R(8.881784197001252e-16)  # 2**-50
    hs = math.hypot(xs, ys)
    if xs >= R(0):
        t = math.sqrt((xs + hs) * R(0.5))
        re = t * scale
        im = (ys / (R(2) * t)) * scale
    else:
        t = math.sqrt((hs - xs) * R(0.5))
        re = (math.fabs(ys) / (R(2) * t)) * scale
        im = math.copysign(t, ys) * scale
    if x != x:
        re = x
        im = x
    if math.isinf(x):
        if x > R(0):
            re = x
            im = math.copysign(R(0), y) if y == y else y
        else:
            re = R(0) if y == y else y
            im = math.copysign(-x, y)
    if x == R(0) and y == R(0):
        re = R(0)
        im = y
    if math.isinf(y):
        re = R(math.inf)
        im = y
    return complex(re, im)


def log_complex(a):
    # glibc's clog, which NumPy calls (s_clog_template.c): the larger part and the smaller,
    # scaled by a power of two near overflow and underflow; log1p of |z|**2 - 1 where |z| is
    # near 1, that difference computed exactly for a larger part in [0.5, 1) (x2y2m1: float64
    # from exact products summed smallest first; float32 in float64); else log(hypot); the
    # argument from atan2 of the unscaled parts.
    x = a.real
    y = a.imag
    single = R(16777217.0) == R(16777216.0)
    half_max = R(1.7014118346046923e38) if single else R(8.98846567431158e307)
    smallest = R(1.1754943508222875e-38) if single else R(2.2250738585072014e-308)
    eps = R(1.1920928955078125e-07) if single else R(2.220446049250313e-16)
    ax = math.fabs(x)
    ay = math.fabs(y)
    if ax < ay:
        t = ax
        ax = ay
        ay = t
    scale = R(0)
    if ax > half_max:
        scale = R(-1)
        ax = ax * R(0.5)
        ay = ay * R(0.5) if ay >= smallest * R(2) else R(0)
    elif ax < smallest and ay < smallest:
        scale = R(24) if single else R(53)
        ax = ax * (R(16777216.0) if single else R(9007199254740992.0))
        ay = ay * (R(16777216.0) if single else R(9007199254740992.0))
    if ax == R(1) and scale == R(0):
        rr = math.log1p(ay * ay) / R(2)
    elif ax > R(1) and ax < R(2) and ay < R(1) and scale == R(0):
        d = (ax - R(1)) * (ax + R(1))
        if ay >= eps:
            d = d + ay * ay
        rr = math.log1p(d) / R(2)
    elif ax < R(1) and ax >= R(0.5) and ay < eps / R(2) and scale == R(0):
        rr = math.log1p((ax - R(1)) * (ax + R(1))) / R(2)
    elif ax < R(1) and ax >= R(0.5) and scale == R(0) and ax * ax + ay * ay >= R(0.5):
        if single:
            dx = float64(ax)
            dy = float64(ay)
            d = R((dx - float64(1)) * (dx + float64(1)) + dy * dy)
        else:
            # x2y2m1: ax*ax and ay*ay split exactly into high and low parts, and -1, sorted by
            # magnitude (a stable sort: glibc's qsort is a merge sort); from the smallest up,
            # each pair replaced by its sum and that sum's exact error (Dekker), the rest
            # resorted; then summed largest first. In this branch (0.5 <= ax < 1, ay <= ax) -1 is
            # the largest and ax*ax the next, each sum moves past at most one value, so the
            # sorts are the five compare-and-swaps below (checked against the whole algorithm
            # on 21 million pairs near and away from |z| = 1).
            v3 = ax * ax
            v0 = fma(ax, ax, -v3)
            v2 = ay * ay
            v1 = fma(ay, ay, -v2)
            v4 = R(-1)
            if math.fabs(v0) > math.fabs(v1):
                t = v0
                v0 = v1
                v1 = t
            if math.fabs(v1) > math.fabs(v2):
                t = v1
                v1 = v2
                v2 = t
            hi = v1 + v0
            v0 = (v1 - hi) + v0
            v1 = hi
            if math.fabs(v1) > math.fabs(v2):
                t = v1
                v1 = v2
                v2 = t
            hi = v2 + v1
            v1 = (v2 - hi) + v1
            v2 = hi
            if math.fabs(v2) > math.fabs(v3):
                t = v2
                v2 = v3
                v3 = t
            hi = v3 + v2
            v2 = (v3 - hi) + v2
            v3 = hi
            if math.fabs(v3) > math.fabs(v4):
                t = v3
                v3 = v4
                v4 = t
            hi = v4 + v3
            v3 = (v4 - hi) + v3
            v4 = hi
            d = (((v4 + v3) + v2) + v1) + v0
        rr = math.log1p(d) / R(2)
    else:
        rr = math.log(math.hypot(ax, ay)) - scale * R(0.6931471805599453)
    ri = math.atan2(y, x)
    if x != x or y != y:
        ri = R(math.nan)
        rr = R(math.inf) if math.isinf(x) or math.isinf(y) else R(math.nan)
    if x == R(0) and y == R(0):
        ri = math.copysign(R(math.pi) if math.copysign(R(1), x) < R(0) else R(0), y)
        rr = R(-math.inf)
    return complex(rr, ri)


def log10_complex(a):
    # NumPy's nc_log10: clog, both parts times log10(e).
    z = log_complex(a)
    return complex(R(z.real) * R(0.4342944819032518), R(z.imag) * R(0.4342944819032518))


def log2_complex(a):
    # NumPy's nc_log2: clog, both parts times log2(e).
    z = log_complex(a)
    return complex(R(z.real) * R(1.4426950408889634), R(z.imag) * R(1.4426950408889634))


def log1p_complex(a):
    # NumPy's nc_log1p, as written there: log(hypot(x + 1, y)) + i atan2(y, x + 1).
    x1 = a.real + R(1)
    y = a.imag
    return complex(math.log(math.hypot(x1, y)), math.atan2(y, x1))


def expm1_complex(a):
    # NumPy's nc_expm1: expm1(x) cos y - 2 sin(y/2)**2 + i exp(x) sin y.
    x = a.real
    y = a.imag
    s = math.sin(y * R(0.5))
    return complex(math.expm1(x) * math.cos(y) - R(2) * s * s, math.exp(x) * math.sin(y))


def cexp_parts(x, y):
    # glibc's cexp of x + iy, which NumPy calls (s_cexp_template.c): e^x (cos y + i sin y).
    # Past t = (MAX_EXP - 1) ln 2 (709 in float64, 88 in float32, where R(2**24 + 1) ==
    # R(2**24)) e^x alone overflows where the product may not (exp(89 + 1e-30j) in
    # complex64): the cosine and sine are scaled by e^t once or twice first, and past 3t the
    # parts are the largest float times them. Special values as C99's Annex G.
    single = R(16777217.0) == R(16777216.0)
    t = R(88.0) if single else R(709.0)
    c = math.cos(y)
    s = math.sin(y)
    xs = x
    if x > t and not math.isinf(x):
        et = math.exp(t)
        xs = x - t
        c = c * et
        s = s * et
        if xs > t:
            xs = xs - t
            c = c * et
            s = s * et
    if xs > t and not math.isinf(x):
        largest = R(3.4028234663852886e38) if single else R(1.7976931348623157e308)
        re = largest * c
        im = largest * s
    else:
        e = math.exp(xs)
        re = e * c
        im = e * s
    if math.isinf(x):
        # e^x is inf or 0: the parts take the signs of cos y and sin y (y itself if zero)
        if not math.isfinite(y):
            re = R(math.inf) if x > R(0) else R(0)
            im = (y - y) if x > R(0) else math.copysign(R(0), y)
        elif y == R(0):
            im = y
    elif not math.isfinite(y):
        re = R(math.nan)
        im = R(math.nan)
    if x != x:
        re = R(math.nan)
        im = y if y == R(0) else R(math.nan)
    return complex(re, im)


def exp_complex(a):
    z = cexp_parts(a.real, a.imag)
    return z


def exp2_complex(a):
    # NumPy's nc_exp2: cexp(z log 2).
    z = cexp_parts(a.real * R(0.6931471805599453), a.imag * R(0.6931471805599453))
    return z


def power_complex(a, b):
    # NumPy's npy_cpow: 1 for a zero exponent; 0 or NaN for a zero base; repeated
    # multiplication for integer exponents in (-100, 100) (unrolled for 1, 2, 3; a reciprocal
    # by Smith's division for negative ones); otherwise the C library's cpow, cexp(b clog a).
    ar = a.real
    ai = a.imag
    br = b.real
    bi = b.imag
    # cexp(b * clog(a)), the general case (cexp_parts). clog's parts come back in
    # R exactly (they were computed in it).
    lg = log_complex(a)
    lr = R(lg.real)
    li = R(lg.imag)
    # b * log(a) as C99 multiplies (libgcc's __muldc3): where both parts come out NaN,
    # infinities are recovered from the operands' infinite parts.
    mc = br
    md = bi
    ma = lr
    mb = li
    x = mc * ma - md * mb
    y = mc * mb + md * ma
    if x != x and y != y:
        recalc = False
        if math.isinf(mc) or math.isinf(md):
            mc = math.copysign(R(1) if math.isinf(mc) else R(0), mc)
            md = math.copysign(R(1) if math.isinf(md) else R(0), md)
            if ma != ma:
                ma = math.copysign(R(0), ma)
            if mb != mb:
                mb = math.copysign(R(0), mb)
            recalc = True
        if math.isinf(ma) or math.isinf(mb):
            ma = math.copysign(R(1) if math.isinf(ma) else R(0), ma)
            mb = math.copysign(R(1) if math.isinf(mb) else R(0), mb)
            if mc != mc:
                mc = math.copysign(R(0), mc)
            if md != md:
                md = math.copysign(R(0), md)
            recalc = True
        if not recalc and (math.isinf(br * lr) or math.isinf(bi * li) or math.isinf(br * li)
                           or math.isinf(bi * lr)):
            if mc != mc:
                mc = math.copysign(R(0), mc)
            if md != md:
                md = math.copysign(R(0), md)
            if ma != ma:
                ma = math.copysign(R(0), ma)
            if mb != mb:
                mb = math.copysign(R(0), mb)
            recalc = True
        if recalc:
            x = R(math.inf) * (mc * ma - md * mb)
            y = R(math.inf) * (mc * mb + md * ma)
    ez = cexp_parts(x, y)
    re = R(ez.real)
    im = R(ez.imag)
    # Integer exponents: binary powering from 1 + 0i, as NumPy's loop.
    if bi == R(0) and br > R(-100) and br < R(100) and math.floor(br) == br:
        pr = ar
        pi = ai
        qr = R(1)
        qi = R(0)
        n = math.fabs(br)
        while n > R(0):
            if math.fmod(n, R(2)) == R(1):
                tr = qr * pr - qi * pi
                qi = qr * pi + qi * pr
                qr = tr
            n = math.floor(n * R(0.5))
            if n > R(0):
                tr = pr * pr - pi * pi
                pi = pr * pi + pi * pr
                pr = tr
        re = qr
        im = qi
        if br < R(0):
            # 1 / q by Smith's method (NumPy's cdiv with a = 1).
            if math.fabs(qr) >= math.fabs(qi):
                if qr == R(0) and qi == R(0):
                    re = R(1) / math.fabs(qr)
                    im = R(0) / math.fabs(qi)
                else:
                    rat = qi / qr
                    scl = R(1) / (qr + qi * rat)
                    re = (R(1) + R(0) * rat) * scl
                    im = (R(0) - rat) * scl
            else:
                rat = qr / qi
                scl = R(1) / (qi + qr * rat)
                re = (rat + R(0)) * scl
                im = (R(0) * rat - R(1)) * scl
        if br == R(1):
            re = ar
            im = ai
        if br == R(2):
            re = ar * ar - ai * ai
            im = ar * ai + ai * ar
        if br == R(3):
            sr = ar * ar - ai * ai
            si = ar * ai + ai * ar
            re = ar * sr - ai * si
            im = ar * si + ai * sr
    if ar == R(0) and ai == R(0):
        re = R(0) if br > R(0) else R(math.nan)
        im = R(0) if br > R(0) else R(math.nan)
    if br == R(0) and bi == R(0):
        re = R(1)
        im = R(0)
    return complex(re, im)


# -- trigonometric and hyperbolic: glibc's csinh, ccosh and ctanh, which NumPy calls (npymath's
# npy_csinh, ...), with their C99 Annex G special values; csin, ccos and ctan are glibc's own
# identities of them (csin z = -i csinh(iz), ccos z = ccosh(iz), ctan z = -i ctanh(iz)), exact
# in floating point. Where sinh x alone overflows the product need not: glibc then scales by
# e^t, t = (MAX_EXP - 1) ln 2 (709 in float64, 88 in float32; R(2**24 + 1) == R(2**24) only in
# float32). glibc's branches for a subnormal part (sin y = y, cos y = 1) and for a negligible
# sinh in ctanh's denominator give what the plain formulas give, so they are left out. The
# parts' functions return complex(re, im), whose parts the callers narrow back to R exactly.
def sinh_parts(x, y):
    single = R(16777217.0) == R(16777216.0)
    t = R(88.0) if single else R(709.0)
    negative = math.copysign(R(1), x) < R(0)
    rx = math.fabs(x)
    s = math.sin(y)
    c = math.cos(y)
    re = x - x
    im = y - y
    if math.isfinite(x) and math.isfinite(y):
        if negative:
            c = -c
        if rx > t:
            et = math.exp(t)
            r = rx - t
            s = s * (et / R(2))
            c = c * (et / R(2))
            if r > t:
                r = r - t
                s = s * et
                c = c * et
            if r > t:
                big = R(3.4028234663852886e38) if single else R(1.7976931348623157e308)
                re = big * c
                im = big * s
            else:
                e = math.exp(r)
                re = e * c
                im = e * s
        else:
            re = math.sinh(rx) * c
            im = math.cosh(rx) * s
    elif math.isfinite(x):
        re = x if x == R(0) else y - y
    elif math.isinf(x):
        if math.isfinite(y) and y != R(0):
            re = math.copysign(rx, c)
            im = math.copysign(rx, s)
            if negative:
                re = -re
        elif y == R(0):
            re = x
            im = y
        else:
            re = rx
    else:
        re = x
        im = y if y == R(0) else x
    return complex(re, im)


def cosh_parts(x, y):
    single = R(16777217.0) == R(16777216.0)
    t = R(88.0) if single else R(709.0)
    rx = math.fabs(x)
    s = math.sin(y)
    c = math.cos(y)
    re = y - y
    im = y - y
    if math.isfinite(x) and math.isfinite(y):
        if rx > t:
            if math.copysign(R(1), x) < R(0):
                s = -s
            et = math.exp(t)
            r = rx - t
            s = s * (et / R(2))
            c = c * (et / R(2))
            if r > t:
                r = r - t
                s = s * et
                c = c * et
            if r > t:
                big = R(3.4028234663852886e38) if single else R(1.7976931348623157e308)
                re = big * c
                im = big * s
            else:
                e = math.exp(r)
                re = e * c
                im = e * s
        else:
            re = math.cosh(x) * c
            im = math.sinh(x) * s
    elif math.isfinite(x):
        if x == R(0):
            im = R(0)
    elif math.isinf(x):
        if math.isfinite(y) and y != R(0):
            re = math.copysign(rx, c)
            im = math.copysign(rx, s) * math.copysign(R(1), x)
        elif y == R(0):
            re = rx
            im = y * math.copysign(R(1), x)
        else:
            re = rx
    else:
        re = x
        im = y if y == R(0) else x
    return complex(re, im)


def tanh_parts(x, y):
    single = R(16777217.0) == R(16777216.0)
    t = R(44.0) if single else R(354.0)
    s = math.sin(y)
    c = math.cos(y)
    re = x
    im = y
    if math.isfinite(x) and math.isfinite(y):
        if math.fabs(x) > t:
            e2t = math.exp(R(2) * t)
            re = math.copysign(R(1), x)
            im = R(4) * s * c
            r = math.fabs(x) - t
            im = im / e2t
            if r > t:
                im = im / e2t
            else:
                im = im / math.exp(R(2) * r)
        else:
            sh = math.sinh(x)
            ch = math.cosh(x)
            den = sh * sh + c * c
            re = sh * ch / den
            im = s * c / den
    elif math.isinf(x):
        re = math.copysign(R(1), x)
        if math.isfinite(y) and math.fabs(y) > R(1):
            im = math.copysign(R(0), s * c)
        else:
            im = math.copysign(R(0), y)
    elif y != R(0):
        nan = (x - x) + (y - y)  # a part is infinite or NaN here
        if x != R(0):
            re = nan
        im = nan
    return complex(re, im)


def sinh_complex(a):
    h = sinh_parts(a.real, a.imag)
    return complex(R(h.real), R(h.imag))


def cosh_complex(a):
    h = cosh_parts(a.real, a.imag)
    return complex(R(h.real), R(h.imag))


def tanh_complex(a):
    h = tanh_parts(a.real, a.imag)
    return complex(R(h.real), R(h.imag))


def sin_complex(a):
    h = sinh_parts(-a.imag, a.real)
    im = -R(h.real)
    if math.isinf(a.imag) and not math.isfinite(a.real):
        im = math.fabs(im)  # glibc's csin: NaN + i inf there, where -i csinh(iz) is NaN - i inf
    return complex(R(h.imag), im)


def cos_complex(a):
    h = cosh_parts(-a.imag, a.real)
    return complex(R(h.real), R(h.imag))


def tan_complex(a):
    h = tanh_parts(-a.imag, a.real)
    return complex(R(h.imag), -R(h.real))


# -- products as NumPy's SIMD loop computes them where the CPU has fused multiply-adds
# (ir/numpy_loops.py): each part one fma over a product rounded first. `fma` is the target's
# (one rounding: LLVM's llvm.fma on a CPU, libdevice's on a GPU).
def multiply_complex_fused(a, b):
    re = fma(a.real, b.real, -(a.imag * b.imag))
    im = fma(a.real, b.imag, a.imag * b.real)
    return complex(re, im)


def square_complex_fused(a):
    re = fma(a.real, a.real, -(a.imag * a.imag))
    im = fma(a.real, a.imag, a.imag * a.real)
    return complex(re, im)


# -- np.abs as NumPy's SIMD loop computes it (loops_unary_complex.dispatch): the larger part times
# sqrt(ratio * ratio + 1), that sum one fma where the CPU has FMA (ir/numpy_loops.py asks NumPy
# which form). An infinite part gives inf even beside a NaN; a NaN part, NaN.
def simd_absolute_parts(a):
    # complex(smaller / larger, larger); the ratio is 0 where the larger part is 0 or a part is
    # infinite, and an infinite part makes the larger inf, a NaN one (only) NaN.
    re = math.fabs(a.real)
    im = math.fabs(a.imag)
    larger = re if re > im else im
    smaller = im if re > im else re
    ratio = R(0)
    if larger != R(0) and not math.isinf(smaller):
        ratio = smaller / larger
    if re != re or im != im:
        larger = R(math.nan)
    if math.isinf(re) or math.isinf(im):
        ratio = R(0)
        larger = R(math.inf)
    return complex(ratio, larger)


def absolute_complex_fused(a):
    p = simd_absolute_parts(a)
    return math.sqrt(fma(R(p.real), R(p.real), R(1))) * R(p.imag)


def absolute_complex_unfused(a):
    p = simd_absolute_parts(a)
    return math.sqrt(R(p.real) * R(p.real) + R(1)) * R(p.imag)
