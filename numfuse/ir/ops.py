"""The primitive table: every operation the IR knows, declared once.

An elementwise primitive names the NumPy ufunc whose dtype resolution it follows, and the scalar
template (scalar_impl.py) that computes it for each kind of loop dtype: 'b' bool, 'i' signed
integer, 'u' unsigned integer, 'f' float, 'c' complex. A kind missing from `impls` means NumPy
has a loop that numfuse cannot run, which the tracer reports as UnsupportedError naming the
operation and the dtype (np.log on complex64, say).

Reduction primitives name the elementwise primitive that combines two partial results and the
identity that starts an accumulator. Structural primitives (convert, broadcast, transpose) move or
retype values without arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import scalar_impl as S
from . import scalar_impl_bits as B
from . import scalar_impl_complex as C
from .numpy_loops import complex_absolute, complex_multiply_fuses
from ..errors import UnsupportedError


@dataclass(frozen=True)
class RuntimeCheck:
    """A condition on an operation's operands under which NumPy raises, tested in the kernel.

    Where it holds, the kernel writes `code` to its error buffer; the runtime raises
    RUNTIME_ERRORS[code] after the launch. Operands listed in `reads` that are literals were
    checked at trace time, so no test is generated for them."""

    code: int
    template: Callable
    reads: tuple[int, ...]


# code -> (exception, message): NumPy's own.
RUNTIME_ERRORS: dict[int, tuple[type, str]] = {
    1: (ValueError, "Integers to negative integer powers are not allowed."),
    2: (IndexError, "index out of bounds: an index array held an index beyond its axis's size"),
    3: (ValueError, "zero-size array to reduction operation maximum or minimum which has no identity "
                    "(the max or min of an empty x[mask])"),
    4: (ValueError, "invalid entry in choice array"),
    5: (OverflowError, "Python int arithmetic on int arguments went beyond int64, in which numfuse computes "
                       "it (Python's ints have no bound): make the argument static "
                       "(numfuse.jit(static_argnames=...)) to compute it in Python"),
    6: (ZeroDivisionError, "division by zero (of Python numbers passed as arguments)"),
    7: (ZeroDivisionError, "0.0 cannot be raised to a negative power"),
    8: (OverflowError, "(34, 'Numerical result out of range')"),
    9: (UnsupportedError, "a negative Python float argument to a fractional power is a complex number in Python "
                          "((-8.0) ** (1/3)), which numfuse computes as a float: make the argument static "
                          "(numfuse.jit(static_argnames=...)) to compute it in Python"),
}

_NEGATIVE_INT_POWER = RuntimeCheck(1, S.negative_exponent, reads=(1,))
# A gather's index against the size of the axis it indexes (numpy_indexing.py).
GATHER_CHECK = RuntimeCheck(2, S.index_out_of_bounds, reads=(0,))
# The count of a masked selection whose max or min is taken (numpy_masked.py).
_EMPTY_SELECTION = RuntimeCheck(3, S.is_zero, reads=(0,))
# np.choose's index against the number of choices (numpy_numerics.py).
_CHOICE = RuntimeCheck(4, S.outside_choices, reads=(0,))
# Python's own arithmetic on Python numbers passed as arguments (numpy_api.python_checks)
_PYTHON_SUM = RuntimeCheck(5, S.sum_leaves_int64, reads=(0, 1))
_PYTHON_DIFFERENCE = RuntimeCheck(5, S.difference_leaves_int64, reads=(0, 1))
_PYTHON_PRODUCT = RuntimeCheck(5, S.product_leaves_int64, reads=(0, 1))
_PYTHON_DIVISOR = RuntimeCheck(6, S.is_zero, reads=(0,))
_PYTHON_POWER = RuntimeCheck(5, S.power_leaves_int64, reads=(0, 1))
_PYTHON_ZERO_POWER = RuntimeCheck(7, S.zero_to_negative_power, reads=(0, 1))
_PYTHON_POWER_OVERFLOW = RuntimeCheck(8, S.power_overflowed, reads=(0, 1))
_PYTHON_COMPLEX_POWER = RuntimeCheck(9, S.power_is_complex, reads=(0, 1))


@dataclass(frozen=True)
class ElementwiseOp:
    name: str
    nin: int
    impls: dict[str, Callable] = field(repr=False)
    ufunc: np.ufunc | None = None
    # Which operand's dtype the template's T(...) means (where: the value operands, not the mask).
    type_from: int = 0
    checks: dict[str, RuntimeCheck] = field(default_factory=dict, repr=False)
    # The op that computes float16 loops, where computing in float16's compute dtype (float32)
    # and rounding would not give NumPy's result (nextafter steps by float16's ulp).
    half: str | None = None

    def check(self, dtype: np.dtype) -> RuntimeCheck | None:
        return self.checks.get(np.dtype(dtype).kind)

    def template(self, dtype: np.dtype) -> Callable | None:
        kind = np.dtype(dtype).kind
        if kind == "u" and "u" not in self.impls:
            kind = "i"
        return self.impls.get(kind)


@dataclass(frozen=True)
class ReduceOp:
    name: str
    combine: str  # an ElementwiseOp name, or "argmax" / "argmin" (scalar_impl's pick templates)
    ufunc: np.ufunc | None
    # A scan (np.cumsum, np.cumprod): the accumulator's running value at every point of the
    # row, in the row's order, a result of the input's shape (scan_sum[axes=(a,)]).
    scan: bool = False

    @property
    def indexed(self) -> bool:
        """argmax and argmin: the result is the flat reduced index of the value combined."""
        return self.combine in ("argmax", "argmin")

    def identity(self, dtype: np.dtype):
        """The accumulator's start value, in the dtype of the values combined."""
        dtype = np.dtype(dtype)
        if self.combine == "add":
            return dtype.type(0)
        if self.combine == "multiply_scalar_loop":
            return dtype.type(1)
        if self.combine == "logical_or":
            return np.bool_(False)
        if self.combine == "logical_and":
            return np.bool_(True)
        if self.combine in ("fmax", "fmin") and dtype.kind == "f":
            # fmax(nan, x) is x, and a slice of NaNs stays NaN as in np.nanmax.
            return dtype.type(np.nan)
        largest = self.combine in ("maximum", "fmax", "argmax")
        if dtype.kind == "b":
            return np.bool_(not largest)
        if dtype.kind == "f":
            return dtype.type(-np.inf if largest else np.inf)
        info = np.iinfo(dtype)
        return dtype.type(info.min if largest else info.max)


# The index an argmax or argmin accumulator starts with: larger than any index, so that the first
# point that ties with the identity value replaces it.
NO_INDEX = np.iinfo(np.int64).max


def _all(fn):
    return {"b": fn, "i": fn, "u": fn, "f": fn}


def _num(fn):
    return {"i": fn, "u": fn, "f": fn}


def _ints(fn):
    return {"b": fn, "i": fn, "u": fn}


def _float(fn):
    return {"f": fn}


def _real(fn):
    """Every real kind NumPy loops over for a ufunc that also has complex loops."""
    return {"i": fn, "u": fn, "f": fn}


def _ew(ufunc, impls, name=None, nin=None, type_from=0, checks=None, half=None):
    return ElementwiseOp(
        name=name or ufunc.__name__,
        nin=nin if nin is not None else ufunc.nin,
        impls=impls,
        ufunc=ufunc,
        type_from=type_from,
        checks=checks or {},
        half=half,
    )


# Complex * and np.square as this NumPy's SIMD loop rounds them (numpy_loops.py); its reduce,
# accumulate and `at` loops multiply by the textbook formula ("multiply_scalar_loop").
_COMPLEX_PRODUCT = C.multiply_complex_fused if complex_multiply_fuses() else S.multiply
_COMPLEX_SQUARE = C.square_complex_fused if complex_multiply_fuses() else S.square
# Complex np.abs as this NumPy's loop computes it: its SIMD form, or the C library's hypot.
_COMPLEX_ABSOLUTE = {"fused": C.absolute_complex_fused, "unfused": C.absolute_complex_unfused,
                     "hypot": S.absolute_complex}[complex_absolute()]

_ELEMENTWISE = [
    # arithmetic
    # On bools NumPy adds as `or` and multiplies as `and` (Numba would give an int).
    # Complex + and - are Numba's, which compute as NumPy's loops do (no C99 inf recovery);
    # complex * and square are _COMPLEX_PRODUCT and _COMPLEX_SQUARE; complex division is
    # NumPy's own loop (Numba's raises on a zero divisor).
    _ew(np.add, {"b": S.logical_or, **_num(S.add), "i": S.add_signed, "c": S.add}),
    _ew(np.subtract, {**_num(S.subtract), "i": S.subtract_signed, "c": S.subtract}),
    _ew(np.multiply, {"b": S.logical_and, **_num(S.multiply), "i": S.multiply_signed, "c": _COMPLEX_PRODUCT}),
    _ew(np.true_divide, {"f": S.true_divide, "c": S.true_divide_complex}),
    _ew(np.floor_divide, {"i": S.floor_divide_int, "u": S.floor_divide_int, "f": S.floor_divide_float}),
    _ew(np.remainder, {"i": S.remainder_int, "u": S.remainder_int, "f": S.remainder_float}),
    _ew(np.fmod, {"i": S.fmod_int, "u": S.remainder_int, "f": S.fmod_float}),
    _ew(np.power, {"i": S.power_signed, "u": S.power_int, "f": S.power_float, "c": C.power_complex}, checks={"i": _NEGATIVE_INT_POWER}),
    _ew(np.negative, {"i": S.negative_signed, "u": S.negative_unsigned, "f": S.negative, "c": S.negative}),
    _ew(np.positive, {**_num(S.identity), "c": S.identity}),
    _ew(np.absolute, {"b": S.identity, "i": S.absolute_int, "u": S.identity, "f": S.absolute_float,
                      "c": _COMPLEX_ABSOLUTE}),
    _ew(np.fabs, _float(S.absolute_float)),
    _ew(np.square, {**_num(S.square), "i": S.square_signed, "c": _COMPLEX_SQUARE}),
    # NumPy's conjugate of a real dtype copies it (bool goes through its int8 loop).
    _ew(np.conjugate, {**_real(S.identity), "c": S.conjugate}),
    _ew(np.reciprocal, {"i": S.reciprocal_int, "u": S.reciprocal_unsigned, "f": S.reciprocal_float,
                         "c": C.reciprocal_complex}),
    _ew(np.sign, {"i": S.sign_int, "u": S.sign_unsigned, "f": S.sign_float, "c": C.sign_complex}),
    # comparisons
    _ew(np.equal, {**_all(S.equal), "c": S.equal}),
    _ew(np.not_equal, {**_all(S.not_equal), "c": S.not_equal}),
    _ew(np.less, {**_all(S.less), "c": C.less_complex}),
    _ew(np.less_equal, {**_all(S.less_equal), "c": C.less_equal_complex}),
    _ew(np.greater, {**_all(S.greater), "c": C.greater_complex}),
    _ew(np.greater_equal, {**_all(S.greater_equal), "c": C.greater_equal_complex}),
    _ew(np.maximum, _all(S.maximum)),
    _ew(np.minimum, _all(S.minimum)),
    _ew(np.fmax, _all(S.fmax)),
    _ew(np.fmin, _all(S.fmin)),
    # bitwise and logical
    _ew(np.bitwise_and, _ints(S.bitwise_and)),
    _ew(np.bitwise_or, _ints(S.bitwise_or)),
    _ew(np.bitwise_xor, _ints(S.bitwise_xor)),
    _ew(np.invert, {"b": S.invert_bool, "i": S.invert_int, "u": S.invert_int}),
    _ew(np.left_shift, {"i": B.left_shift_int, "u": B.left_shift_unsigned}),
    _ew(np.right_shift, {"i": B.right_shift_int, "u": B.right_shift_unsigned}),
    _ew(np.bitwise_count, {"i": B.bitwise_count, "u": B.bitwise_count}),
    _ew(np.gcd, {"i": B.gcd, "u": B.gcd}),
    _ew(np.lcm, {"i": B.lcm, "u": B.lcm}),
    _ew(np.logical_and, {"b": S.logical_and, **_num(S.logical_and_num), "c": C.logical_and_complex}),
    _ew(np.logical_or, {"b": S.logical_or, **_num(S.logical_or_num), "c": C.logical_or_complex}),
    _ew(np.logical_xor, {"b": S.logical_xor, **_num(S.logical_xor_num), "c": C.logical_xor_complex}),
    _ew(np.logical_not, {"b": S.logical_not, **_num(S.logical_not_num), "c": C.logical_not_complex}),
    # exponents and logarithms
    _ew(np.exp, {"f": S.exp, "c": C.exp_complex}),
    _ew(np.exp2, {"f": S.exp2, "c": C.exp2_complex}),
    _ew(np.log, {"f": S.log, "c": C.log_complex}),
    _ew(np.log2, {"f": S.log2, "c": C.log2_complex}),
    _ew(np.log10, {"f": S.log10, "c": C.log10_complex}),
    _ew(np.log1p, {"f": S.log1p, "c": C.log1p_complex}),
    _ew(np.expm1, {"f": S.expm1, "c": C.expm1_complex}),
    _ew(np.sqrt, {"f": S.sqrt, "c": C.sqrt_complex}),
    _ew(np.cbrt, _float(B.cbrt)),
    # trigonometric and hyperbolic
    _ew(np.sin, {"f": S.sin, "c": C.sin_complex}),
    _ew(np.cos, {"f": S.cos, "c": C.cos_complex}),
    _ew(np.tan, {"f": S.tan, "c": C.tan_complex}),
    _ew(np.arcsin, _float(S.arcsin)),
    _ew(np.arccos, _float(S.arccos)),
    _ew(np.arctan, _float(S.arctan)),
    _ew(np.arctan2, _float(S.arctan2)),
    _ew(np.hypot, _float(S.hypot)),
    _ew(np.sinh, {"f": S.sinh, "c": C.sinh_complex}),
    _ew(np.cosh, {"f": S.cosh, "c": C.cosh_complex}),
    _ew(np.tanh, {"f": S.tanh, "c": C.tanh_complex}),
    _ew(np.arcsinh, _float(S.arcsinh)),
    _ew(np.arccosh, _float(S.arccosh)),
    _ew(np.arctanh, _float(S.arctanh)),
    _ew(np.copysign, _float(S.copysign)),
    _ew(np.deg2rad, _float(S.deg2rad)),
    _ew(np.radians, _float(S.deg2rad)),
    _ew(np.rad2deg, _float(S.rad2deg)),
    _ew(np.degrees, _float(S.rad2deg)),
    _ew(np.logaddexp, _float(S.logaddexp)),
    _ew(np.logaddexp2, _float(S.logaddexp2)),
    _ew(np.heaviside, _float(S.heaviside)),
    # rounding
    _ew(np.floor, {"b": S.identity, "i": S.identity, "u": S.identity, "f": S.floor}),
    _ew(np.ceil, {"b": S.identity, "i": S.identity, "u": S.identity, "f": S.ceil}),
    _ew(np.trunc, {"b": S.identity, "i": S.identity, "u": S.identity, "f": S.trunc}),
    _ew(np.rint, {"f": S.rint, "c": C.rint_complex}),
    # classification
    _ew(np.isnan, {"b": S.never, "i": S.never, "u": S.never, "f": S.isnan, "c": C.isnan_complex}),
    _ew(np.isinf, {"b": S.never, "i": S.never, "u": S.never, "f": S.isinf_float, "c": C.isinf_complex}),
    _ew(np.isfinite, {"b": S.always, "i": S.always, "u": S.always, "f": S.isfinite_float,
                      "c": C.isfinite_complex}),
    _ew(np.signbit, _float(S.signbit)),
    # floating-point representation (ldexp's exponent operand is an int32 or int64 loop dtype)
    _ew(np.ldexp, _float(B.ldexp)),
    _ew(np.nextafter, _float(B.nextafter), half="nextafter_half"),
    _ew(np.spacing, _float(B.spacing), half="spacing_half"),
    ElementwiseOp("nextafter_half", 2, _float(B.nextafter_half)),
    ElementwiseOp("spacing_half", 1, _float(B.spacing_half)),
    # the outputs of the two-output ufuncs, one op each (see MULTI_OUTPUT)
    ElementwiseOp("frexp_mantissa", 1, _float(B.frexp_mantissa)),
    ElementwiseOp("frexp_exponent", 1, _float(B.frexp_exponent)),
    ElementwiseOp("modf_fraction", 1, _float(B.modf_fraction)),
    ElementwiseOp("modf_integral", 1, _float(B.modf_integral)),
    # not ufuncs: np.where's select, and the parts of a complex value (x.real, x.imag; of a real
    # value they are the value itself and zeros, which the tracer makes without an operation)
    ElementwiseOp("where", 3, {**_all(S.where), "c": S.where}, type_from=1),
    ElementwiseOp("real", 1, {"c": S.real_part}),
    ElementwiseOp("imag", 1, {"c": S.imag_part}),
    # a float's bits as the signed integer of its size, and back (x.view(another dtype))
    ElementwiseOp("float_bits", 1, {"f": B.bits_of_float}),
    ElementwiseOp("float_from_bits", 1, {"i": B.float_of_bits}),
    ElementwiseOp("int_bits", 1, {"i": B.same_bits, "u": B.same_bits}),
    # a complex value from its two parts (a write through x.real or x.imag: the other part kept)
    ElementwiseOp("complex_from_parts", 2, {"f": S.complex_from_parts}),
    # np.multiply's reduce, accumulate and at loops (np.prod, np.cumprod, np.multiply.at):
    # NumPy's scalar C, complex products by the textbook formula on every machine
    ElementwiseOp("multiply_scalar_loop", 2, {"b": S.logical_and, **_num(S.multiply), "c": S.multiply}),
    # a gather's index (int64) wrapped where negative and kept in bounds, against the size
    ElementwiseOp("gather_index", 2, {"i": S.gather_index}, checks={"i": GATHER_CHECK}),
    # a count (int64) that must not be zero: whether it is not
    ElementwiseOp("nonempty", 1, {"i": S.is_nonzero}, checks={"i": _EMPTY_SELECTION}),
    # np.choose's index (int64), checked against the number of choices
    ElementwiseOp("choice_index", 2, {"i": S.choice_in_range}, checks={"i": _CHOICE}),
    # Checks of Python's arithmetic on Python numbers passed as arguments, which NumPy's code
    # leaves to Python: an int result beyond int64 (Python's is exact), a division by zero
    # (Python raises). Each is True, and raises where Python's would.
    ElementwiseOp("python_sum_fits", 2, {"i": S.no_operand_problem}, checks={"i": _PYTHON_SUM}),
    ElementwiseOp("python_difference_fits", 2, {"i": S.no_operand_problem}, checks={"i": _PYTHON_DIFFERENCE}),
    ElementwiseOp("python_product_fits", 2, {"i": S.no_operand_problem}, checks={"i": _PYTHON_PRODUCT}),
    ElementwiseOp("python_divisor_nonzero", 1, {"i": S.is_nonzero, "f": S.is_nonzero, "c": S.is_nonzero},
                  checks={"i": _PYTHON_DIVISOR, "f": _PYTHON_DIVISOR, "c": _PYTHON_DIVISOR}),
    # a ** b of Python numbers: an int power beyond int64; a float 0.0 to a negative power, and
    # a finite float's power that overflows (on the base and the power's result), which raise
    ElementwiseOp("python_power_fits", 2, {"i": S.no_operand_problem}, checks={"i": _PYTHON_POWER}),
    ElementwiseOp("python_power_defined", 2, {"f": S.no_operand_problem}, checks={"f": _PYTHON_ZERO_POWER}),
    ElementwiseOp("python_power_finite", 2, {"f": S.no_operand_problem}, checks={"f": _PYTHON_POWER_OVERFLOW}),
    ElementwiseOp("python_power_real", 2, {"f": S.no_operand_problem}, checks={"f": _PYTHON_COMPLEX_POWER}),
]

ELEMENTWISE: dict[str, ElementwiseOp] = {op.name: op for op in _ELEMENTWISE}
BY_UFUNC: dict[np.ufunc, ElementwiseOp] = {op.ufunc: op for op in _ELEMENTWISE if op.ufunc}

# Ufuncs with two outputs: one elementwise op per output, each on all of the ufunc's inputs and
# typed by the ufunc's own loop (np.divmod's outputs are np.floor_divide's and np.remainder's,
# bit for bit, signed zeros, inf and NaN included).
MULTI_OUTPUT: dict[np.ufunc, tuple[str, ...]] = {
    np.divmod: ("floor_divide", "remainder"),
    np.frexp: ("frexp_mantissa", "frexp_exponent"),
    np.modf: ("modf_fraction", "modf_integral"),
}

REDUCTIONS: dict[str, ReduceOp] = {
    op.name: op
    for op in [
        ReduceOp("reduce_sum", "add", np.add),
        ReduceOp("reduce_prod", "multiply_scalar_loop", np.multiply),
        ReduceOp("reduce_max", "maximum", np.maximum),
        ReduceOp("reduce_min", "minimum", np.minimum),
        ReduceOp("reduce_or", "logical_or", np.logical_or),
        ReduceOp("reduce_and", "logical_and", np.logical_and),
        ReduceOp("reduce_fmax", "fmax", np.fmax),
        ReduceOp("reduce_fmin", "fmin", np.fmin),
        ReduceOp("reduce_argmax", "argmax", None),
        ReduceOp("reduce_argmin", "argmin", None),
        ReduceOp("scan_sum", "add", np.add, scan=True),
        ReduceOp("scan_prod", "multiply_scalar_loop", np.multiply, scan=True),
    ]
}

# convert[dtype] a           cast to dtype (C casts; to bool means != 0)
# broadcast[shape] a         NumPy broadcasting of a to shape
# transpose[perm] a          axis permutation
# (structural primitives: tracer.py and layouts.py bind them, lower.py turns them into index maps)


def is_reduction(prim: str) -> bool:
    """A reduction or a scan: the accumulators of a kernel over rows."""
    return prim in REDUCTIONS


def is_scan(prim: str) -> bool:
    return prim in REDUCTIONS and REDUCTIONS[prim].scan
