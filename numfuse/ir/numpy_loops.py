"""What this process's NumPy computes where its own loops differ by machine: asked of NumPy once,
never assumed from a table.

NumPy multiplies complex arrays in a SIMD loop (loops_arithm_fp.dispatch.c.src) whose parts are
fused multiply-adds wherever the CPU it dispatched to has them (x86-64 with AVX2 or AVX-512, every
aarch64): real = fma(ar, br, -(ai * bi)), imag = fma(ar, bi, ai * br), each product inside
rounded first. On a CPU without FMA the same loop computes the textbook parts, each product
rounded: ar * br - ai * bi and ar * bi + ai * br. Its reduce, accumulate and `at` loops, and
np.power's integer powers, are scalar C and always textbook.

np.abs of complex arrays is a SIMD loop too (loops_unary_complex.dispatch): the larger part times
sqrt(1 + (smaller / larger)**2), that sum a fused multiply-add where the CPU has one; NumPy
before 2.0 called the C library's hypot.

Where complex64 and complex128 would answer differently (no NumPy we know of), complex128's answer
is taken.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np


def _fma(a, b, c, dtype):
    """a * b + c rounded once, in float64 (the probes are float64)."""
    return dtype.type(float(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))))


@functools.cache
def complex_multiply_fuses() -> bool:
    """Whether np.multiply and np.square of complex arrays round each part once (fused
    multiply-adds). (1 + e)(1 + e) - (1 + e)(1 + e) with e = 2**-30 is 0 with every product
    rounded and e**2 with the first one fused."""
    z = np.full(16, complex(1 + 2.0**-30, 1 + 2.0**-30))
    return bool((z * z)[0].real != 0.0)


def _simd_absolute(z, fused: bool):
    part = np.dtype(z.real.dtype)
    re, im = abs(z.real), abs(z.imag)
    larger, smaller = max(re, im), min(re, im)
    ratio = smaller / larger
    inside = _fma(ratio, ratio, 1, part) if fused else part.type(ratio * ratio + part.type(1))
    return part.type(np.sqrt(inside) * larger)


# Values on which the three forms of np.abs each give another float64 (found by a search over
# random parts; the probe checks that they still tell the forms apart).
_ABSOLUTE_PROBES = [("-0x1.626d9d95463e3p-2", "0x1.011a3793d8bc0p-3"), ("-0x1.8280738fe35fdp+0", "-0x1.2eb848d20040ap+0"),
                    ("-0x1.6631c3f9192e1p-2", "-0x1.1eef7a8bbd516p+0"), ("0x1.3d71d3c3b332bp+0", "-0x1.38d04ff2eba9ep+0")]


@functools.cache
def complex_absolute() -> str:
    """How np.abs computes on complex arrays: "fused" (the SIMD loop with an fma), "unfused" (the
    SIMD loop without) or "hypot" (the C library's)."""
    z = np.array([complex(float.fromhex(re), float.fromhex(im)) for re, im in _ABSOLUTE_PROBES])
    forms = {"fused": [_simd_absolute(v, True) for v in z], "unfused": [_simd_absolute(v, False) for v in z],
             "hypot": list(np.hypot(z.real, z.imag))}
    got = list(np.abs(z))
    return next((form for form, values in forms.items() if values == got), "hypot")
