"""A float's bits as an integer and back, for CUDA kernels: `float_bits(x)` (float32 to int32,
float64 to int64) and `float_from_bits(n)`, one LLVM bitcast each (x.view(np.int32) of a float32
array: ops.py's float_bits and float_from_bits). On Numba's CUDA simulator, NumPy's scalar view.
"""

from __future__ import annotations

import numpy as np

from .products import SIMULATED


def simulated_float_bits(value):
    return value.view(np.int32 if value.dtype.itemsize == 4 else np.int64)


def simulated_float_from_bits(value):
    return value.view(np.float32 if value.dtype.itemsize == 4 else np.float64)


def _intrinsics():
    """numba-cuda intrinsics (no device function: the compile tier builds PTX without a GPU)."""
    from llvmlite import ir
    from numba.cuda import types
    from numba.cuda.extending import intrinsic

    @intrinsic
    def float_bits(typingctx, value):
        if not isinstance(value, types.Float) or value.bitwidth not in (32, 64):
            return None

        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir.IntType(value.bitwidth))
        return (types.int32 if value.bitwidth == 32 else types.int64)(value), codegen

    @intrinsic
    def float_from_bits(typingctx, value):
        if not isinstance(value, types.Integer) or value.bitwidth not in (32, 64):
            return None

        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir.FloatType() if value.bitwidth == 32 else ir.DoubleType())
        return (types.float32 if value.bitwidth == 32 else types.float64)(value), codegen

    return float_bits, float_from_bits


# What kernel modules import: the GPU's intrinsics, or the simulator's Python.
float_bits, float_from_bits = (simulated_float_bits, simulated_float_from_bits) if SIMULATED else _intrinsics()
