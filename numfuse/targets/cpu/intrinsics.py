"""What the scalar templates call as `cuda.<name>` (a GPU's intrinsics), for the CPU: the CPU
renderer rewrites `cuda.popc(x)` to `popc(x)` and imports these."""

import math

import llvmlite.ir
import numba
import numba.extending
import numpy as np


@numba.njit(inline="always", nogil=True, cache=True)
def popc(x):
    # The 1-bits of a uint64 (SWAR: what the GPU's popc instruction counts).
    x = x - ((x >> numba.uint64(1)) & numba.uint64(0x5555555555555555))
    x = (x & numba.uint64(0x3333333333333333)) + ((x >> numba.uint64(2)) & numba.uint64(0x3333333333333333))
    x = (x + (x >> numba.uint64(4))) & numba.uint64(0x0F0F0F0F0F0F0F0F)
    return numba.int32((x * numba.uint64(0x0101010101010101)) >> numba.uint64(56))


@numba.extending.intrinsic
def cbrt(typingctx, a):
    # The C library's cbrt and cbrtf, which NumPy's loops call (Numba's np.cbrt of a float32 is
    # its own, 1 ulp from cbrtf on a tenth of values).
    if not isinstance(a, numba.types.Float):
        return None

    def codegen(context, builder, signature, args):
        from numba.core import cgutils

        llvm_type = args[0].type
        name = "cbrtf" if llvm_type == llvmlite.ir.FloatType() else "cbrt"
        function = cgutils.get_or_insert_function(builder.module, llvmlite.ir.FunctionType(llvm_type, [llvm_type]), name)
        return builder.call(function, args)

    return a(a), codegen


# -- float16 -------------------------------------------------------------------------------------
# Numba's CPU compiler has no half-precision type. The CPU target holds a float16 value in a
# float32 (every float16 is one exactly) and keeps it a float16 value: `float16(x)` rounds any
# number to the nearest float16 (ties to even, directly from float64, as NumPy's casts do) and
# returns it as a float32. float16 arrays are passed as their uint16 bits: loads decode them
# (`float16_load`), stores encode them (`float16_bits`).

_F16_MAX_ROUNDING = 65520.0  # half-way between 65504 (the largest float16) and 65536: rounds to inf


@numba.njit(nogil=True, cache=True)
def float16(x):
    d = numba.float64(x)
    if d != d:
        return numba.float32(np.nan)
    a = abs(d)
    if a >= _F16_MAX_ROUNDING:
        return numba.float32(math.copysign(np.inf, d))
    if a == 0.0:
        return numba.float32(d)
    exponent = math.frexp(a)[1] - 1  # a in [2**exponent, 2**(exponent + 1))
    if exponent < -14:
        exponent = -14  # subnormal float16: a fixed quantum of 2**-24
    quantum = math.ldexp(1.0, exponent - 10)
    rounded = np.rint(a / quantum) * quantum  # a / quantum is exact: a power of two apart
    return numba.float32(math.copysign(rounded, d))


@numba.njit(nogil=True, cache=True)
def float16_load(bits):
    b = numba.int64(bits)
    exponent = (b >> 10) & 0x1F
    mantissa = b & 0x3FF
    if exponent == 0:
        value = math.ldexp(numba.float64(mantissa), -24)
    elif exponent == 31:
        value = np.inf if mantissa == 0 else np.nan
    else:
        value = math.ldexp(numba.float64(mantissa + 1024), exponent - 25)
    return numba.float32(-value if b & 0x8000 else value)


@numba.njit(nogil=True, cache=True)
def float16_bits(x):
    """The uint16 bits of the float16 value nearest `x`."""
    v = numba.float64(float16(x))
    if v != v:
        return numba.uint16(0x7E00)
    sign = 0x8000 if math.copysign(1.0, v) < 0 else 0
    a = abs(v)
    if a == np.inf:
        return numba.uint16(sign | 0x7C00)
    if a < 6.103515625e-05:  # 2**-14: subnormal (or zero)
        return numba.uint16(sign | numba.int64(a * 16777216.0))
    exponent = math.frexp(a)[1] - 1
    fraction = numba.int64(math.ldexp(a, 10 - exponent)) - 1024
    return numba.uint16(sign | ((exponent + 15) << 10) | fraction)


# -- bits --------------------------------------------------------------------------------------
# A float from its IEEE bits: a bitcast, which LLVM vectorizes (vector_math.py builds 2**n so).


def _bitcast(name: str, source, result, llvm_type):
    """An intrinsic `name(value)`: the bits of a `source` value (a Numba type) as a `result`,
    one LLVM bitcast."""

    def typer(typingctx, value):
        if value != source:
            return None

        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], llvm_type)

        return result(source), codegen

    typer.__name__ = typer.__qualname__ = name
    return numba.extending.intrinsic(typer)


float32_from_bits = _bitcast("float32_from_bits", numba.types.int32, numba.types.float32, llvmlite.ir.FloatType())
float64_from_bits = _bitcast("float64_from_bits", numba.types.int64, numba.types.float64, llvmlite.ir.DoubleType())
float32_bits = _bitcast("float32_bits", numba.types.float32, numba.types.int32, llvmlite.ir.IntType(32))
float64_bits = _bitcast("float64_bits", numba.types.float64, numba.types.int64, llvmlite.ir.IntType(64))




def _sized_bitcast(name: str, kind, results: dict):
    """An intrinsic `name(value)`: the bits of a 32- or 64-bit value of `kind` (a Numba type
    class) as the type `results` holds for its width, one LLVM bitcast."""

    def typer(typingctx, value):
        if not isinstance(value, kind) or value.bitwidth not in results:
            return None
        result = results[value.bitwidth]

        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], context.get_value_type(result))

        return result(value), codegen

    typer.__name__ = typer.__qualname__ = name
    return numba.extending.intrinsic(typer)


# x.view(np.int32) of a float32 (and back): ops.py's float_bits and float_from_bits
float_bits = _sized_bitcast("float_bits", numba.types.Float, {32: numba.types.int32, 64: numba.types.int64})
float_from_bits = _sized_bitcast("float_from_bits", numba.types.Integer,
                                 {32: numba.types.float32, 64: numba.types.float64})


# -- fused multiply-add --------------------------------------------------------------------------
# fma(a, b, c) = a * b + c with one rounding: LLVM's llvm.fma, one vfmadd instruction where the
# CPU has FMA (and libm's correctly rounded fma where it has not: the same bits, slower). Numba
# never contracts a * b + c by itself (that needs fast-math flags, which would also contract the
# user's own arithmetic and part from NumPy's results), so vector_math.py's polynomials ask for it.


@numba.extending.intrinsic
def fma(typingctx, a, b, c):
    if not (isinstance(a, numba.types.Float) and a == b == c):
        return None

    def codegen(context, builder, signature, args):
        llvm_type = args[0].type
        function = builder.module.declare_intrinsic(
            "llvm.fma", [llvm_type], llvmlite.ir.FunctionType(llvm_type, [llvm_type] * 3))
        return builder.call(function, args)

    return a(a, b, c), codegen


# -- select --------------------------------------------------------------------------------------
# select(c, a, b) = a if c else b, with both already computed: one LLVM select, no branch. Numba
# gives every `a if c else b` two basic blocks of its IR, and its copy propagation grows with
# blocks times variables: a kernel of 200 masked sums took 131 s to compile. The renderer uses it
# where both choices are plain values (codegen._ForCpu).


@numba.extending.intrinsic
def select(typingctx, condition, a, b):
    joint = typingctx.unify_pairs(a, b)
    if joint is None or not isinstance(joint, (numba.types.Number, numba.types.Boolean)):
        return None

    def codegen(context, builder, signature, args):
        condition_type, a_type, b_type = signature.args
        truth = context.is_true(builder, condition_type, args[0])
        return builder.select(truth, context.cast(builder, args[1], a_type, joint),
                              context.cast(builder, args[2], b_type, joint))

    return joint(condition, a, b), codegen


# -- software prefetch ---------------------------------------------------------------------------
# prefetch(array, (i, j, ...)): asks the cache for the line holding array[i, j, ...] (its strides,
# no bounds check and no wraparound) without waiting for it; an address past the array's end is
# harmless (a prefetch never faults). A reduction streaming a long row from memory so keeps more
# lines in flight than the hardware prefetchers alone do (lanes._prefetches).


@numba.extending.intrinsic
def prefetch(typingctx, array, indices):
    if not isinstance(array, numba.types.Array) or not isinstance(indices, numba.types.BaseTuple) \
            or len(indices) != array.ndim or not all(isinstance(t, numba.types.Integer) for t in indices):
        return None

    def codegen(context, builder, signature, args):
        from numba.core import cgutils

        array_type, index_types = signature.args
        values = context.make_array(array_type)(context, builder, args[0])
        indices = [context.cast(builder, builder.extract_value(args[1], k), t, numba.types.intp)
                   for k, t in enumerate(index_types)]
        pointer = cgutils.get_item_pointer2(context, builder, data=values.data,
                                            shape=cgutils.unpack_tuple(builder, values.shape, array_type.ndim),
                                            strides=cgutils.unpack_tuple(builder, values.strides, array_type.ndim),
                                            layout=array_type.layout, inds=indices)
        byte_pointer = llvmlite.ir.IntType(8).as_pointer()
        i32 = llvmlite.ir.IntType(32)
        function = builder.module.declare_intrinsic(
            "llvm.prefetch", [byte_pointer], llvmlite.ir.FunctionType(llvmlite.ir.VoidType(), [byte_pointer, i32, i32, i32]))
        # read, keep in every cache level, data cache
        builder.call(function, [builder.bitcast(pointer, byte_pointer), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return numba.types.void(array, indices), codegen
