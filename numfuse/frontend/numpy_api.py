"""NumPy's API on traced values: each entry point's rule for shapes and dtypes, and its lowering.

Every rule asks NumPy itself for dtypes: `ufunc.resolve_dtypes` picks the loop (NEP 50 weak Python
scalars included), and a call on zero-size or size-one stand-in arrays raises exactly the error
NumPy would raise (Python integers out of range, empty reductions without identity, bad casts).
Shapes come from `np.broadcast_shapes` and `normalize_axis_tuple`.

Handlers take the trace context first; they never import the tracer (it imports this module).
"""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple  # noqa: F401  (the tracer uses it)

from ..ir.dtypes import check_supported
from ..ir.graph import Literal
from ..errors import LayoutError, TracingError, UnsupportedError, at_user_line, unsupported, user_catches, user_line_noted
from .numpy_complex import FUNCTIONS as COMPLEX_FUNCTIONS
from .numpy_complex import complex_hint, refuse_complex, warn_if_imaginary_dropped
from .numpy_functions import FUNCTIONS as COMPOSED_FUNCTIONS
from .numpy_reductions import REDUCTION_FUNCTIONS
from .numpy_creation import FUNCTIONS as CREATION_FUNCTIONS
from .numpy_indexing import FUNCTIONS as INDEXING_FUNCTIONS
from .numpy_library import FUNCTIONS as LIBRARY_FUNCTIONS
from .numpy_products import FUNCTIONS as PRODUCT_FUNCTIONS
from .numpy_statistics import FUNCTIONS as STATISTICS_FUNCTIONS
from .numpy_views import FUNCTIONS as VIEW_FUNCTIONS
from ..ir.ops import BY_UFUNC, ELEMENTWISE, MULTI_OUTPUT
from .untraced import untraced
from .traced import TracedArray

_PY_TYPES = {"b": bool, "i": int, "u": int, "f": float, "c": complex}
_COMPARISONS = (np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal)


@dataclass
class Operand:
    """One argument of a NumPy call, classified.

    Exactly one of `tracer` (a traced array or runtime scalar) and `value` (a constant scalar) is
    set. `weak` marks Python scalars, which NEP 50 lets the other operands' dtypes decide.
    """

    tracer: Any
    value: Any
    dtype: np.dtype
    weak: bool
    # A constant NumPy computes from the shapes (ir.SizeValue): what it counts, else None.
    size_key: tuple | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        return self.tracer.shape if self.tracer is not None else ()

    def resolve_type(self):
        """What `ufunc.resolve_dtypes` takes for this operand: a dtype, or int/float/complex if
        weak."""
        if self.weak and self.dtype.kind in "iufc":
            return _PY_TYPES[self.dtype.kind]
        return self.dtype

    def stand_in(self):
        """A value NumPy can run the operation on, to raise what it would raise."""
        if self.tracer is None:
            return self.value
        if self.weak:
            return _PY_TYPES[self.dtype.kind](0)
        return np.empty((0,), self.dtype)


def _broadcast_shape(operands: list[Operand]) -> tuple[int, ...]:
    shapes = tuple(tuple(op.shape) for op in operands)
    shape = broadcast_shapes(shapes)
    if shape is None:
        listed = " ".join(str(tuple(s)).replace(" ", "") for s in shapes)
        raise ValueError(
            at_user_line(f"operands could not be broadcast together with shapes {listed}")
        )
    return shape


@functools.lru_cache(maxsize=4096)
def broadcast_shapes(shapes: tuple[tuple[int, ...], ...]) -> tuple[int, ...] | None:
    """NumPy's broadcast of `shapes` (np.broadcast_shapes), or None where they do not
    broadcast. Its own code: np.broadcast_shapes makes an array of each shape, which costs
    more than the rule at every operation of a trace."""
    rank = max((len(s) for s in shapes), default=0)
    result = []
    for axis in range(-rank, 0):
        sizes = {s[axis] for s in shapes if len(s) >= -axis} - {1}
        if len(sizes) > 1:
            return None
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def _loop_dtypes(ufunc: np.ufunc, operands: list[Operand], all_outputs: bool = False, dtype=None,
                 casting: str = "same_kind"):
    """The NumPy loop that runs `ufunc` on these operands: its input dtypes and output dtype
    (with `all_outputs`, the list of its output dtypes)."""
    key = _loop_key(ufunc, operands, all_outputs, (dtype, casting))
    found = _LOOPS.get(key) if key is not None else None
    if found is None:
        found = _find_loop_dtypes(ufunc, operands, all_outputs, dtype, casting)
        if key is not None:
            if len(_LOOPS) >= _LOOPS_KEPT:
                _LOOPS.clear()
            _LOOPS[key] = found
    ins, outs = found
    return list(ins), (list(outs) if all_outputs else outs)


# The loops found (a trace asks for the same few at almost every operation: NumPy's rule costs
# tens of microseconds), by what decides them: the operands' dtypes (their char too: 'q' and
# 'l' are equal dtypes of different scalar types), weakness and, for constants, their values
# (a Python int out of an array's range raises). Bounded: a NaN constant equals no key.
_LOOPS: dict = {}
_LOOPS_KEPT = 4096


def _loop_key(ufunc, operands, all_outputs, dtype):
    key = [ufunc, all_outputs, dtype]
    for op in operands:
        key += [op.dtype, op.dtype.char, op.weak, op.tracer is None]
        if op.tracer is None:
            key += [type(op.value), op.value]
    key = tuple(key)
    try:
        hash(key)
    except TypeError:  # an unhashable constant: no cache
        return None
    return key


def _find_loop_dtypes(ufunc: np.ufunc, operands: list[Operand], all_outputs: bool, dtype, casting: str = "same_kind"):
    name = f"np.{ufunc.__name__}"
    if all(op.weak for op in operands):
        types = tuple(op.dtype for op in operands)
    else:
        types = tuple(op.resolve_type() for op in operands)
    # Run NumPy on stand-ins first so that its own errors (bad dtypes, Python ints out of
    # range for the array's dtype) surface unchanged.
    with np.errstate(all="ignore"), user_line_noted():
        ufunc(*[op.stand_in() for op in operands], casting=casting, **({} if dtype is None else {"dtype": dtype}))
    # dtype=: the output's dtype, which picks the loop (NumPy's signature=(None, ..., dtype)).
    if dtype is None:
        resolved = ufunc.resolve_dtypes(types + (None,) * ufunc.nout, casting=casting)
    else:
        resolved = ufunc.resolve_dtypes(types + (None,), signature=(None,) * ufunc.nin + (np.dtype(dtype),),
                                        casting=casting)
    ins, out = list(resolved[: ufunc.nin]), resolved[-1]
    outs = list(resolved[ufunc.nin:])
    # NumPy compares Python ints with integer arrays exactly, even beyond the array's dtype
    # (a literal out of range folds to a constant, see _out_of_range_comparison). For a Python
    # int passed as an argument, whose value is unknown here, compare in int64 (uint64 arrays
    # excepted: there a negative value raises when it is passed).
    if ufunc in _COMPARISONS and any(op.tracer is not None and op.weak and op.dtype.kind in "iu" for op in operands):
        ins = [np.dtype(np.int64) if d.kind in "biu" and d != np.uint64 else d for d in ins]
    for dtype in ins + outs:
        check_supported(dtype, f"{name} computes in it")
    return (ins, outs) if all_outputs else (ins, out)


def apply_ufunc(ctx, ufunc: np.ufunc, args, kwargs, python_operator: bool = False) -> Any:
    """A ufunc call. `python_operator`: reached through `+`, `<`, ... rather than np.add, ...,
    which matters only for Python scalars: 1.5 * 2 is a Python float, np.multiply(1.5, 2) is
    an np.float64."""
    op = BY_UFUNC.get(ufunc)
    name = f"np.{ufunc.__name__}"
    if op is None and ufunc not in MULTI_OUTPUT:
        raise unsupported(name)
    dtype = kwargs.get("dtype")
    if dtype is not None:
        dtype = check_supported(dtype, f"{name}(dtype=...)")
        if ufunc.nout != 1:
            raise unsupported(f"{name}(..., dtype=...)")
    for key, value in kwargs.items():
        if key not in ("casting", "dtype") and value is not None:
            raise unsupported(f"{name}(..., {key}=...)")
    if len(args) != ufunc.nin:
        raise TypeError(at_user_line(f"{name} takes {ufunc.nin} arguments, got {len(args)}"))
    operands = [ctx.operand(a) for a in args]
    if ctx.breaks is not None and ufunc in _LIFTED:
        operands = _python_numbers_as_inputs(ctx, operands)
    if python_operator and all(o.weak for o in operands):
        operands = _python_bools_as_ints(ctx, ufunc, operands)
        if ufunc is np.power:
            operands = _python_negative_power(ctx, operands)
    if op is None:
        return _apply_multi_output(ctx, ufunc, operands, python_operator)
    # (NumPy checks the loop before the shapes; casting= decides whether the operands may be
    # cast to it)
    ins, out = _loop_dtypes(ufunc, operands, dtype=dtype, casting=kwargs.get("casting") or "same_kind")
    shape = _broadcast_shape(operands)
    constant = _out_of_range_comparison(ufunc, operands, ins)
    if constant is not None:
        # A comparison NumPy decides from the values' ranges: a bool array of the result's shape
        # (a NumPy bool scalar when 0-d, as a ufunc on 0-d operands returns).
        return ctx.numpy_scalar(ctx.broadcast(np.bool_(constant), shape))
    if ufunc is np.power:
        fast = _power_fast_path(ctx, operands, ins, python_operator)
        if fast is not None:
            return fast
    if op.half is not None and ins[op.type_from] == np.float16:
        op = ELEMENTWISE[op.half]
    if op.template(ins[op.type_from]) is None:
        raise unsupported(f"{name} on {ins[op.type_from]}", complex_hint() if ins[op.type_from].kind == "c" else "")
    atoms = [ctx.coerce(o, dtype, shape) for o, dtype in zip(operands, ins)]
    weak = python_operator and all(o.weak for o in operands) and out.kind in "bifc"
    result = ctx.bind(op.name, atoms, shape, out, weak=weak, numpy_scalar=True)
    if weak and any(o.tracer is not None for o in operands):
        result = _python_checks(ctx, ufunc, atoms, result)
    return result


# Python's arithmetic on Python numbers (the function's own, on its Python int and float
# arguments, which numfuse computes in int64 and float64): where Python's result would not be
# that, an error, never another number. int: a result beyond int64; int or float: a division
# by zero, which Python refuses.
_PYTHON_INT_CHECKS = {np.add: "python_sum_fits", np.subtract: "python_difference_fits",
                      np.multiply: "python_product_fits"}
_PYTHON_DIVISIONS = (np.true_divide, np.floor_divide, np.remainder)


# Ufuncs whose result depends on a Python number beside an array only through its value, as
# an argument: in a run segment by segment, the number is an input of the segment.
_LIFTED = frozenset({np.add, np.subtract, np.multiply, np.true_divide, np.maximum, np.minimum, np.fmax, np.fmin,
                     np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal})
_EXACT_INT = 1 << 24  # ints a float32 holds exactly: NumPy's cast of the Python int and the input's agree


def _python_numbers_as_inputs(ctx, operands: list[Operand]) -> list[Operand]:
    """In a run segment by segment (graph_breaks.py): a Python float, or a small Python int
    beside a float array, becomes a weak scalar input of the segment rather than a constant,
    so that a segment that differs only in it (`delta / self.n` as a counter grows, a step
    size computed in Python) is the same structure, planned and compiled once."""
    arrays = [o for o in operands if o.tracer is not None and not o.weak]
    if not arrays:
        return operands
    floating = all(o.dtype.kind in "fc" for o in arrays)
    lifted = []
    for o in operands:
        value = o.value
        if o.tracer is None and o.weak and o.size_key is None and (
                type(value) is float or type(value) is int and floating and abs(value) <= _EXACT_INT):
            tracer = ctx.breaks.python_number(value)
            o = Operand(tracer, None, tracer.dtype, True)
        lifted.append(o)
    return lifted


def _python_checks(ctx, ufunc, atoms, result):
    check = None
    if ufunc is np.power and result.dtype.kind in "if":
        if result.dtype.kind == "i":
            check = ctx.bind("python_power_fits", list(atoms), (), np.dtype(bool))
        else:
            for name in ("python_power_defined", "python_power_real"):
                defined = ctx.bind(name, list(atoms), (), np.dtype(bool))
                result = ctx.bind("where", [defined._var, result._var, result._var], (), result.dtype, weak=True,
                                  numpy_scalar=True)
            check = ctx.bind("python_power_finite", [atoms[0], result._var], (), np.dtype(bool))
    elif ufunc in _PYTHON_INT_CHECKS and all(a.aval.dtype.kind == "i" for a in atoms):
        check = ctx.bind(_PYTHON_INT_CHECKS[ufunc], list(atoms), (), np.dtype(bool))
    elif ufunc in _PYTHON_DIVISIONS:
        if isinstance(atoms[1], Literal):
            if atoms[1].value == 0:
                raise ZeroDivisionError(at_user_line("division by zero"))
        else:
            check = ctx.bind("python_divisor_nonzero", [atoms[1]], (), np.dtype(bool))
    if check is None:
        return result
    # (the result depends on the check, so that the check runs where the result is computed)
    return ctx.bind("where", [check._var, result._var, result._var], (), result.dtype, weak=True,
                    numpy_scalar=True)


def _apply_multi_output(ctx, ufunc: np.ufunc, operands: list[Operand], python_operator: bool) -> tuple:
    """np.divmod, np.frexp, np.modf: a tuple of one op per output (ops.MULTI_OUTPUT), each typed
    by the ufunc's own loop. divmod(a, b) of two Python scalars gives Python scalars, as Python's."""
    name = f"np.{ufunc.__name__}"
    ins, outs = _loop_dtypes(ufunc, operands, all_outputs=True)
    shape = _broadcast_shape(operands)
    parts = [ELEMENTWISE[part] for part in MULTI_OUTPUT[ufunc]]
    for part in parts:
        if part.template(ins[part.type_from]) is None:
            raise unsupported(f"{name} on {ins[part.type_from]}",
                              complex_hint() if ins[part.type_from].kind == "c" else "")
    atoms = [ctx.coerce(o, dtype, shape) for o, dtype in zip(operands, ins)]
    weak = python_operator and all(o.weak for o in operands)
    return tuple(ctx.bind(part.name, atoms, shape, out, weak=weak and out.kind in "bifc", numpy_scalar=True)
                 for part, out in zip(parts, outs))


def ufunc_into(ctx, ufunc: np.ufunc, args, kwargs):
    """A ufunc call with out= and/or where=: the result written into `out` (where `where`
    holds, else out's values stay), as NumPy writes it, and `out` returned."""

    name = f"np.{ufunc.__name__}"
    out, where = kwargs.pop("out", None), kwargs.pop("where", True)
    if isinstance(out, tuple):
        if len(out) != 1:
            raise unsupported(f"{name}(..., out=...) of several outputs")
        out = out[0]
    result = apply_ufunc(ctx, ufunc, args, dict(kwargs))
    if out is None:
        # NumPy leaves the points where `where` is False uninitialized: zeros are as good.
        return np.where(where, result, np.zeros((), result.dtype)) if where is not True else result
    if not isinstance(out, TracedArray):
        # Into a NumPy array the function made with NumPy: NumPy writes it, at a graph break.
        refusal = unsupported(f"{name}(..., out=) into an array the function did not receive or make",
                              "pass the array as an argument, or write `x = ...`")
        return untraced(ctx, ufunc, args, {**kwargs, "out": out, "where": where}, refusal,
                        f"{name}(..., out=) into a NumPy array")
    operands = [ctx.operand(a) for a in args]
    with user_line_noted():
        ufunc(*[o.stand_in() for o in operands], out=np.empty((0,), out.dtype),
              casting=kwargs.get("casting", "same_kind"), **({"dtype": kwargs["dtype"]} if kwargs.get("dtype") else {}))
    if tuple(np.broadcast_shapes(result.shape, out.shape)) != out.shape:
        raise ValueError(at_user_line(
            f"non-broadcastable output operand with shape {out.shape} doesn't match the broadcast shape {result.shape}"))
    out[...] = result if where is True else np.where(where, result, out)
    return out


_PY_COMPARE = {np.equal: "__eq__", np.not_equal: "__ne__", np.less: "__lt__", np.less_equal: "__le__",
               np.greater: "__gt__", np.greater_equal: "__ge__"}


def _out_of_range_comparison(ufunc, operands, ins) -> bool | None:
    """NumPy compares integers with Python ints beyond their dtype exactly (uint8 < 300 is
    True everywhere): the result is the same for every element, found from the dtype's bounds."""
    if ufunc not in _PY_COMPARE or len(operands) != 2:
        return None
    for i, op in enumerate(operands):
        other = operands[1 - i]
        if op.tracer is None and op.weak and op.dtype.kind in "iu" and other.dtype.kind in "biu":
            info = np.iinfo(ins[1 - i]) if ins[1 - i].kind in "iu" else None
            low, high = (info.min, info.max) if info else (0, 1)
            if not low <= op.value <= high:
                bound = low  # every element compares with op.value as the bound does
                pair = (bound, op.value) if i == 1 else (op.value, bound)
                return bool(getattr(pair[0], _PY_COMPARE[ufunc])(pair[1]))
    return None


def _python_bools_as_ints(ctx, ufunc, operands: list[Operand]) -> list[Operand]:
    """Python's own arithmetic on Python scalars: a bool is the int 0 or 1 (True + True is 2,
    -True is -1), except in comparisons and in &, |, ^ between bools."""
    bools = [o.dtype.kind == "b" for o in operands]
    if not any(bools) or ufunc in _PY_COMPARE:
        return operands
    if all(bools) and ufunc in (np.bitwise_and, np.bitwise_or, np.bitwise_xor):
        return operands
    int64 = np.dtype(np.int64)
    result = []
    for o, is_bool in zip(operands, bools):
        if not is_bool:
            result.append(o)
        elif o.tracer is None:
            result.append(Operand(None, int(o.value), int64, True))
        else:
            result.append(Operand(ctx.convert(o.tracer, int64), None, int64, True))
    return result


def _python_negative_power(ctx, operands: list[Operand]) -> list[Operand]:
    """Python's int ** negative int is a float (NumPy raises): the base as a Python float.
    (An exponent that is a scalar argument was made static, so its value is known here.)"""
    base, exponent = operands
    position = getattr(exponent.tracer, "_input_position", None)
    if base.dtype.kind in "iu" and exponent.dtype.kind in "iu" and position is not None:
        # Python's int ** int is an int or a float by the exponent's sign: its value is needed.
        error = TracingError(at_user_line("the exponent of ** is needed as a value"))
        error.input_position = position
        raise error
    if base.dtype.kind in "iu" and exponent.tracer is None and type(exponent.value) is int and exponent.value < 0:
        f64 = np.dtype(np.float64)
        if base.tracer is not None:
            base = Operand(ctx.wrap(ctx.convert(base.tracer, f64)._var, weak=True), None, f64, True)
        else:
            base = Operand(None, float(base.value), f64, True)
        exponent = Operand(None, float(exponent.value), f64, True)
    return [base, exponent]


def as_dtype(ctx, operand: Operand, dtype: np.dtype):
    """The operand cast to `dtype`: a traced value, or a strong NumPy scalar."""
    if operand.tracer is not None:
        return ctx.convert(operand.tracer, dtype)
    return np.array(operand.value).astype(dtype, casting="unsafe")[()]


def _power_fast_path(ctx, operands, ins, python_operator):
    """x ** 2 is square, x ** 0.5 sqrt and complex z ** -1 reciprocal, as in NumPy; negative int
    powers raise."""
    base, exponent = operands
    position = getattr(exponent.tracer, "_input_position", None)
    python_float_power = base.weak and exponent.weak and base.dtype.kind == "f" and exponent.dtype.kind in "iu"
    if python_operator and base.tracer is not None and position is not None and not python_float_power:
        # `array ** s` for a scalar argument s: NumPy's result depends on s's value (bool ** 2
        # is int8 but bool ** 3 int64; float ** 0.5 is sqrt, which keeps -0.0): make s static.
        # (Not a Python float ** a Python int, `b1 ** t`: Python's pow, a float for any t.)
        error = TracingError(at_user_line("the exponent of ** is needed as a value"))
        error.input_position = position
        raise error
    if exponent.tracer is not None or base.tracer is None:
        return None
    value = exponent.value
    if python_operator and base.weak and exponent.weak:
        return None  # two Python scalars: Python's pow, not NumPy's square and sqrt shortcuts
    if ins[0].kind in "iu" and value < 0 and base.tracer.size != 0:  # NumPy's loop checks each element
        raise ValueError(at_user_line("Integers to negative integer powers are not allowed."))
    # For complex arrays only the operator's own shortcuts apply (ndarray.__pow__ with an exact
    # Python int 2 or -1, or float 0.5): np.power(z, 2) and z ** 2.0 are NumPy's cpow, whose textbook
    # products differ from np.square's fused ones (ir/numpy_loops.py), and np.power(z, 0.5) is
    # cpow, not sqrt. For real arrays every form gives the same bits.
    operator_shortcut = python_operator and type(value) in (int, float)
    if value == 2 and (ins[0].kind != "c" or (operator_shortcut and type(value) is int)):
        if python_operator and type(value) is int:
            # ndarray.__pow__ squares the array itself: bool ** 2 is int8 (np.power gives int64).
            return apply_ufunc(ctx, np.square, (base.tracer,), {})
        return apply_ufunc(ctx, np.square, (as_dtype(ctx, base, ins[0]),), {})
    if value == -1 and ins[0].kind == "c" and operator_shortcut and type(value) is int:
        return apply_ufunc(ctx, np.reciprocal, (as_dtype(ctx, base, ins[0]),), {})
    if value == 0.5 and (ins[0].kind == "f" or (ins[0].kind == "c" and operator_shortcut and type(value) is float)):
        return apply_ufunc(ctx, np.sqrt, (as_dtype(ctx, base, ins[0]),), {})
    return None


# ---------------------------------------------------------------------------------------------
# Reductions


# ---------------------------------------------------------------------------------------------
# Array functions (np.where, np.clip, ...), reached through __array_function__


def _where(ctx, condition, x=None, y=None):
    if x is None or y is None:
        raise unsupported("np.where with one argument (np.nonzero)", "its result's shape depends on the data")
    operands = [ctx.operand(a) for a in (condition, x, y)]
    shape = _broadcast_shape(operands)
    with np.errstate(all="ignore"):
        dtype = np.where(np.empty(0, bool), operands[1].stand_in(), operands[2].stand_in()).dtype
    dtype = check_supported(dtype, "np.where's result")
    mask = ctx.coerce(operands[0], np.dtype(bool), shape)
    atoms = [mask, ctx.coerce(operands[1], dtype, shape), ctx.coerce(operands[2], dtype, shape)]
    return ctx.bind("where", atoms, shape, dtype)


def _clip(ctx, a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue, max=np._NoValue, **kwargs):
    if out is not None or kwargs:
        raise unsupported("np.clip(..., out=...)")
    lo = None if a_min is np._NoValue and min is np._NoValue else (a_min if a_min is not np._NoValue else min)
    hi = None if a_max is np._NoValue and max is np._NoValue else (a_max if a_max is not np._NoValue else max)
    if lo is None and hi is None:
        return apply_ufunc(ctx, np.positive, (a,), {})  # NumPy 2: np.positive(a), a copy
    # clip(a, lo, hi) is minimum(maximum(a, lo), hi) with NaN propagating, as NumPy's clip loop,
    # computed in the dtype NumPy's clip picks for these operands.
    x, low, high = (None if v is None else ctx.operand(v) for v in (a, lo, hi))
    if x.dtype.kind in "iu":
        # NumPy's _clip: a Python int bound beyond an integer array's range bounds nothing
        # (NEP 50: it is not cast into the dtype, where it would wrap).
        info = np.iinfo(x.dtype)
        if low is not None and low.tracer is None and type(low.value) is int and low.value <= info.min:
            low = None
        if high is not None and high.tracer is None and type(high.value) is int and high.value >= info.max:
            high = None
        if low is None and high is None:
            return apply_ufunc(ctx, np.positive, (a,), {})
    with np.errstate(all="ignore"):
        dtype = np.clip(x.stand_in(), None if low is None else low.stand_in(), None if high is None else high.stand_in()).dtype
    dtype = check_supported(dtype, "np.clip's result")
    refuse_complex("np.clip", dtype)  # NumPy orders complex values lexicographically
    result = as_dtype(ctx, x, dtype)
    for ufunc, bound in ((np.maximum, low), (np.minimum, high)):
        if bound is None:
            continue
        if bound.tracer is None and type(bound.value) is int:
            # A Python int: NumPy's ufunc rules raise where it does not fit (not a wrapped cast).
            result = apply_ufunc(ctx, ufunc, (result, bound.value), {})
        else:
            result = apply_ufunc(ctx, ufunc, (result, as_dtype(ctx, bound, dtype)), {})
    return result


def _fill_like(ctx, a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    base = ctx.operand(a)
    target = base.shape if shape is None else np.broadcast_to(np.empty((), bool), shape).shape
    dtype = check_supported(base.dtype if dtype is None else dtype, "np.*_like(dtype=...)")
    operand = ctx.operand(fill_value)
    if operand.tracer is None:
        # NumPy's full_like copies the value in with unsafe casting, which still refuses a
        # Python int out of range.
        fill = np.empty((), dtype)
        with user_line_noted():
            np.copyto(fill, operand.value, casting="unsafe")
        filled = ctx.broadcast(fill[()], target)
    else:
        warn_if_imaginary_dropped(operand.dtype, dtype)
        filled = ctx.broadcast(ctx.convert(operand.tracer, dtype), target)
    # Of another shape, C order (NumPy keeps the prototype's layout only for its own shape).
    return ctx.laid_out_like(filled, base.tracer if shape is None else None)


def _zeros_like(ctx, a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return _fill_like(ctx, a, 0, dtype, order, subok, shape)


def _ones_like(ctx, a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return _fill_like(ctx, a, 1, dtype, order, subok, shape)


def _empty_like(ctx, prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    # NumPy leaves the values unspecified; zeros are as good as any, and deterministic.
    return _fill_like(ctx, prototype, 0, dtype, order, subok, shape)


def round_(ctx, a, decimals=0, out=None):
    """np.round as NumPy computes it: rint(a * 10**d) / 10**d (or the reverse for d < 0), in
    a's dtype, or in float64 and cast back for integers. Of a 0-d array or a scalar, a NumPy
    scalar, as NumPy returns whatever the dtype and decimals."""
    if out is not None:
        raise unsupported("np.round(..., out=...)")
    result = _rounded(ctx, a, decimals)
    return ctx.wrap(result._var, numpy_scalar=True) if result.ndim == 0 else result


def _rounded(ctx, a, decimals):
    decimals = operator.index(decimals)
    x = ctx.as_tracer(ctx.operand(a))
    with np.errstate(all="ignore"), user_line_noted():
        np.round(np.empty((0,), x.dtype), decimals)
    refuse_complex("np.round", x.dtype)
    integer = x.dtype.kind in "iu"
    if integer and decimals >= 0:
        return ctx.astype(x, x.dtype)
    if decimals == 0:
        return apply_ufunc(ctx, np.rint, (x,), {})
    scale = 10.0 ** abs(decimals)
    first, second = (np.multiply, np.true_divide) if decimals > 0 else (np.true_divide, np.multiply)
    y = ctx.convert(x, np.float64) if integer else x
    y = apply_ufunc(ctx, second, (apply_ufunc(ctx, np.rint, (apply_ufunc(ctx, first, (y, scale), {}),), {}), scale), {})
    return ctx.convert(y, x.dtype) if integer else y


def _astype(ctx, x, dtype, /, *, copy=True, device=None):
    warn_if_imaginary_dropped(ctx.operand(x).dtype, dtype)
    return ctx.astype(x, dtype, copy)


def _transpose(ctx, a, axes=None):
    return ctx.transpose(ctx.as_tracer(ctx.operand(a)), axes)


def _concrete(fn):
    """np.shape and friends: answered from the aval, on a stand-in that holds no memory."""

    def handler(ctx, a, *args, **kwargs):
        operand = ctx.operand(a)
        stand_in = np.broadcast_to(np.empty((), operand.dtype), operand.shape)
        return fn(stand_in, *args, **kwargs)

    return handler


def _result_type(ctx, *arrays_and_dtypes):
    stand_ins = []
    for item in arrays_and_dtypes:
        if isinstance(item, (np.dtype, type, str)):
            stand_ins.append(item)
        else:
            operand = ctx.operand(item)
            # A Python scalar as one (NEP 50: weak), not as its type (float is float64)
            stand_ins.append(operand.stand_in() if operand.weak else operand.dtype)
    with user_line_noted():
        return np.result_type(*stand_ins)


FUNCTIONS: dict[Callable, Callable] = {
    **REDUCTION_FUNCTIONS,
    **VIEW_FUNCTIONS,
    **LIBRARY_FUNCTIONS,
    **PRODUCT_FUNCTIONS,
    **INDEXING_FUNCTIONS,
    **CREATION_FUNCTIONS,
    **STATISTICS_FUNCTIONS,
    **COMPLEX_FUNCTIONS,
    **COMPOSED_FUNCTIONS,
    np.where: _where,
    np.clip: _clip,
    np.zeros_like: _zeros_like,
    np.ones_like: _ones_like,
    np.full_like: _fill_like,
    np.empty_like: _empty_like,
    np.round: round_,
    np.around: round_,
    np.astype: _astype,
    np.transpose: _transpose,
    np.shape: _concrete(np.shape),
    np.ndim: _concrete(np.ndim),
    np.size: _concrete(np.size),
    np.result_type: _result_type,
}


def function_name(func) -> str:
    module = getattr(func, "__module__", "") or ""
    module = module.replace("numpy._core.", "numpy.").replace("numpy.core.", "numpy.")
    module = "np" if module in ("numpy", "numpy.fromnumeric", "numpy.multiarray", "numpy.numeric") else module.replace("numpy", "np")
    return f"{module}.{func.__name__}"


def call_function(ctx, func, args, kwargs):
    handler = FUNCTIONS.get(func)
    if handler is not None and getattr(func, "__module__", None) == "numpy.linalg" \
            and user_catches(np.linalg.LinAlgError):
        # NumPy's LinAlgError (a singular matrix) must raise where the user's try catches it.
        what = f"{function_name(func)} inside a try that catches LinAlgError: it runs where Python can catch it"
        return untraced(ctx, func, args, kwargs, unsupported(what), what)
    if handler is None:
        return untraced(ctx, func, args, kwargs, unsupported(function_name(func)), f"{function_name(func)} is not traced")
    try:
        return handler(ctx, *args, **kwargs)
    except LayoutError:
        raise  # (NumPy's function on numfuse's C-ordered array would give other values)
    except UnsupportedError as refusal:
        # An argument numfuse does not trace (np.max(x, initial=0)): NumPy's function runs on
        # the real arrays at a graph break.
        return untraced(ctx, func, args, kwargs, refusal,
                        f"{function_name(func)} with these arguments is not traced ({str(refusal).splitlines()[0]})")


# Python operators on traced values, and the NumPy calls they stand for.
OPERATORS: dict[str, np.ufunc] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "truediv": np.true_divide,
    "floordiv": np.floor_divide,
    "mod": np.remainder,
    "pow": np.power,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "lshift": np.left_shift,
    "rshift": np.right_shift,
    "divmod": np.divmod,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
}
UNARY_OPERATORS: dict[str, np.ufunc] = {
    "neg": np.negative,
    "pos": np.positive,
    "abs": np.absolute,
    "invert": np.invert,
}

# What the docs' operations table lists beside the ufuncs and functions (see support.py).
SUPPORTED_METHODS = (
    "sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin", "any", "all", "astype", "clip",
    "round", "transpose", "reshape", "ravel", "flatten", "squeeze", "swapaxes", "copy", "conj", "conjugate",
    "dot", "cumsum", "cumprod", "sort", "argsort", "partition", "diagonal", "trace",
)
SUPPORTED_ATTRIBUTES = ("T", "shape", "ndim", "dtype", "size", "itemsize", "nbytes", "real", "imag", "flat", "strides",
                        "flags")

__all__ = ["apply_ufunc", "call_function", "Operand", "OPERATORS", "UNARY_OPERATORS"]
