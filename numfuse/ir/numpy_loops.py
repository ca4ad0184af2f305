"""What this process's NumPy computes where its own loops differ by machine: asked of NumPy once,
never assumed from a table.

NumPy multiplies complex arrays in a SIMD loop (loops_arithm_fp.dispatch.c.src) whose parts are
fused multiply-adds wherever the CPU it dispatched to has them (x86-64 with AVX2 or AVX-512, every
aarch64): real = fma(ar, br, -(ai * bi)), imag = fma(ar, bi, ai * br), each product inside
rounded first. On a CPU without FMA the same loop computes the textbook parts, each product
rounded: ar * br - ai * bi and ar * bi + ai * br. Its reduce, accumulate and `at` loops, and
np.power's integer powers, are scalar C and always textbook.
"""

from __future__ import annotations

import functools

import numpy as np


@functools.cache
def complex_multiply_fuses() -> bool:
    """Whether np.multiply and np.square of complex arrays round each part once (fused
    multiply-adds). (1 + e)(1 + e) - (1 + e)(1 + e) with e = 2**-30 is 0 with every product
    rounded and e**2 with the first one fused."""
    z = np.full(16, complex(1 + 2.0**-30, 1 + 2.0**-30))
    fused128 = bool((z * z)[0].real != 0.0)
    w = np.full(16, np.complex64(complex(1 + 2.0**-12, 1 + 2.0**-12)))
    fused64 = bool((w * w)[0].real != 0.0)
    if fused128 != fused64:  # one dispatch target serves both: a NumPy that splits them is new to us
        raise RuntimeError("NumPy fuses complex128 and complex64 products differently; numfuse cannot match it")
    return fused128
