"""Products as NumPy rounds them, for CUDA kernels: `mul(a, b)` and `fma(a, b, c)`.

NVVM contracts a multiply whose result is added (`a * b + c`) into one fused multiply-add by
default (its `-fma=1`; numba-cuda gives no way to turn it off), so `x * y + z` would round once
on a GPU where NumPy rounds twice. The CUDA renderer writes every product of the scalar templates
as `mul(a, b)`, which for floats is libdevice's `dmul_rn` / `fmul_rn` (PTX `mul.rn`, which is
never contracted) and for complex values the textbook product of such parts (what Numba's CPU
code and NumPy's scalar loops compute). Integers multiply as they are. `fma` is one rounding on
purpose, where NumPy's own loop fuses (ir/numpy_loops.py).

On Numba's CUDA simulator the kernel runs as Python on NumPy scalars: `mul` is then a plain
product, and `fma` is computed exactly here (the simulator's `cuda.fma` rounds twice).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np


def simulated_mul(a, b):
    """a * b, each part rounded once, on NumPy scalars."""
    return a * b


def simulated_fma(a, b, c):
    """a * b + c rounded once, in the operands' dtype (float32 or float64)."""
    dtype = np.result_type(a, b, c)
    finite = all(math.isfinite(v) for v in (a, b, c))
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)) if finite else None
    if exact is None or exact == 0:
        # inf and NaN, or an exact zero (whose sign IEEE's round-to-nearest sum decides): the
        # product and the sum as IEEE gives them
        with np.errstate(all="ignore"):
            return dtype.type(dtype.type(a) * dtype.type(b) + dtype.type(c))
    return _round(exact, dtype)


def _round(exact: Fraction, dtype: np.dtype):
    """`exact` rounded to nearest (ties to even) in `dtype`: float64 by Fraction's own correctly
    rounded conversion; float32 from the float64 nearest, corrected where rounding twice moved it
    off the float32 nearest (a float64 result on a float32 tie)."""
    try:
        wide = float(exact)
    except OverflowError:
        return dtype.type(math.copysign(math.inf, exact))
    if dtype == np.float64:
        return np.float64(wide)
    with np.errstate(over="ignore"):
        near = np.float32(wide)
    if not math.isfinite(near) or Fraction(float(near)) == exact:
        return near
    below = near if Fraction(float(near)) < exact else np.nextafter(near, np.float32(-np.inf))
    above = np.nextafter(below, np.float32(np.inf))
    gap_below, gap_above = exact - Fraction(float(below)), Fraction(float(above)) - exact
    if gap_below != gap_above:
        return below if gap_below < gap_above else above
    return below if int(below.view(np.uint32)) % 2 == 0 else above


def _intrinsics():
    """The GPU's `mul` and `fma`: numba-cuda intrinsics calling libdevice (an overload would be
    compiled as a device function, which numba-cuda cannot do without a GPU to ask for its
    compute capability; the compile tier builds PTX on machines without one)."""
    import operator

    from llvmlite import ir
    from numba.cuda import cgutils, types
    from numba.cuda.extending import intrinsic

    def call(builder, name: str, values):
        fnty = ir.FunctionType(values[0].type, [v.type for v in values])
        return builder.call(cgutils.get_or_insert_function(builder.module, fnty, name), list(values))

    def product(builder, x, y):
        return call(builder, "__nv_dmul_rn" if x.type == ir.DoubleType() else "__nv_fmul_rn", [x, y])

    @intrinsic
    def mul(typingctx, a, b):
        numba_sig = typingctx.resolve_function_type(operator.mul, (a, b), {})
        if numba_sig is None:
            return None
        kind = numba_sig.return_type

        def codegen(context, builder, sig, args):
            if not isinstance(kind, (types.Float, types.Complex)):
                return context.get_function(operator.mul, numba_sig)(builder, args)
            x, y = (context.cast(builder, v, t, u) for v, t, u in zip(args, sig.args, numba_sig.args))
            if isinstance(kind, types.Float):
                return product(builder, x, y)
            p, q = context.make_complex(builder, kind, x), context.make_complex(builder, kind, y)
            out = context.make_complex(builder, kind)
            out.real = builder.fsub(product(builder, p.real, q.real), product(builder, p.imag, q.imag))
            out.imag = builder.fadd(product(builder, p.real, q.imag), product(builder, p.imag, q.real))
            return out._getvalue()
        return kind(a, b), codegen

    @intrinsic
    def fma(typingctx, a, b, c):
        if not (isinstance(a, types.Float) and a == b == c):
            return None

        def codegen(context, builder, sig, args):
            return call(builder, "__nv_fma" if args[0].type == ir.DoubleType() else "__nv_fmaf", args)
        return a(a, b, c), codegen

    return mul, fma


try:
    from numba import config as _config
except ImportError:  # the no-numba tier never imports a kernel module
    _config = None
# Whether kernel modules run on Numba's CUDA simulator (as Python), not compiled for a GPU.
SIMULATED = _config is None or bool(_config.ENABLE_CUDASIM)
# What kernel modules import: the GPU's intrinsics, or the simulator's Python.
mul, fma = (simulated_mul, simulated_fma) if SIMULATED else _intrinsics()
