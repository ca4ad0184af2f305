"""Building a program one operation at a time while NumPy runs it, and replaying one.

Every value's shape, dtype and concrete elements are known as the program grows: NumPy itself
says whether an operation is valid (no hand table of loops or promotions), the op's `Rules` say
whether its arguments are inside the domain every device defines, and the error model
(numerics.py) says how exact each result must be, or that the operation would compare rounding
noise. An operation that fails any of these is not added.

`evaluate` runs a given program the same way on other inputs (a second call), and `replay` on all
of its calls: the repro reducer (reduce.py) edits programs and replays them for their tolerances.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import catalog as C
from . import numerics as N
from .program import (
    ARRAY,
    NUMPY_SCALAR,
    PYTHON_SCALAR,
    Call,
    Input,
    Op,
    Program,
    scalar_literal,
)

MAX_RESULT = 256  # elements of any value (broadcasting transposed values can grow them)
SAFETY = 4  # tolerance = SAFETY x the error model's bound


@dataclass
class Value:
    value: Any  # what NumPy computed
    err: Any  # absolute error bound per element, None if exact (numerics.py)
    # (value index, axis order) of every value this one is computed from, through transposes
    # (itself included, unless it is a transpose: a view).
    reads: frozenset = frozenset()

    @property
    def kind(self) -> str:
        if isinstance(self.value, np.ndarray):
            return ARRAY
        return NUMPY_SCALAR if isinstance(self.value, np.generic) else PYTHON_SCALAR

    @property
    def dtype(self) -> np.dtype:
        return np.asarray(self.value).dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return np.shape(self.value)

    def same_type(self, other: Value) -> bool:
        return (self.kind, self.dtype, self.shape) == (other.kind, other.dtype, other.shape)


@dataclass(frozen=True)
class Rules:
    """How one operation is checked and how exact its result is.

    domain(args, result): whether the op's arguments (operand values in operand order) are
    where every device defines it. ufunc: its rounding under the error model. reduction:
    (kind, axis, keepdims) of a reduction of operand 0. free_zero_sign: NumPy leaves the sign of
    a zero result to its loops. ulps: the op's own rounding beyond what its ufunc says."""

    label: str
    domain: Callable | None = None
    ufunc: np.ufunc | None = None
    reduction: tuple | None = None
    free_zero_sign: bool = False
    ulps: float = 0
    transpose: tuple | None = None  # the axis order of a transpose
    view: str | None = None  # another view (a slice, a reshape): its spelling
    exact_operands: bool = False  # the result is discrete and must not follow rounding (argmax)
    reads_values: bool = True  # False: only the operand's shape and dtype matter (zeros_like)
    # error(run, operands, errs, result): the op's own error bound beyond what the corners of its
    # operands' intervals give (a sum of products, a scan, a sort); may raise numerics.Unstable.
    error: Callable | None = None


def own_error(rules: Rules, result, model: N.ErrorModel):
    if np.asarray(result).dtype.kind != "f":
        return None
    err = None
    if rules.ufunc in C.TRANSCENDENTAL:
        err = N.rounding_error(result, N.TRANSCENDENTAL_ULPS)
    elif rules.ufunc in C.MULTIPLIES and model.fma:
        err = N.rounding_error(result, 1)
    if rules.ulps:
        err = N.combine(err, N.rounding_error(result, rules.ulps))
    if rules.free_zero_sign or rules.ufunc in C.FREE_ZERO_SIGN:
        err = N.free_zero_sign(result, err)
    return err


def reduction_error(result, reduction: tuple, x, x_err):
    kind, axis, keepdims = reduction
    axes = C.reduced_axes(axis, np.ndim(x))
    count = math.prod(np.shape(x)[a] for a in axes)
    err = N.reduction_error(kind, x, x_err, axes, keepdims, result, count)
    return N.free_zero_sign(result, err)


class Builder:
    """The program so far: inputs, accepted ops, and every value NumPy computed for them."""

    def __init__(self, model: N.ErrorModel):
        self.model = model
        self.inputs: list[Input] = []
        self.values: list[Value] = []
        self.ops: list[Op] = []
        self.orders: dict[int, set] = {}  # value index -> axis orders it is read in

    def add_input(self, inp: Input) -> None:
        self.inputs.append(inp)
        index = len(self.values)
        self.values.append(Value(inp.value, None, frozenset({(index, tuple(range(np.ndim(inp.value))))})))

    def reads(self, operands: tuple[int, ...], rules: Rules, ndim: int) -> frozenset | None:
        """What the new value is computed from, through which axis orders."""
        own = {(len(self.values), tuple(range(ndim)))}
        if not rules.reads_values:
            return frozenset(own)
        reads = set().union(*(self.values[i].reads for i in operands))
        if rules.transpose is not None:
            # An order of another rank (through a reduction or broadcasting) stays distinct.
            reads = {(base, tuple(order[k] for k in rules.transpose) if len(order) == len(rules.transpose)
                      else (order, rules.transpose)) for base, order in reads}
        elif rules.view is not None:
            reads = {(base, (order, rules.view)) for base, order in reads}
        for base, order in reads:
            self.orders.setdefault(base, set()).add(order)
        # A transpose is a view: reading it reads what it was computed from.
        view = rules.transpose is not None or rules.view is not None
        return frozenset(reads if view else reads | own)

    def add(self, lines: tuple[str, ...], operands: tuple[int, ...], rules: Rules) -> bool:
        """Run the op in NumPy on the current values; keep it if NumPy accepts it, its arguments
        are in its domain, and it is stable under the error model."""
        unique = list(dict.fromkeys(operands))
        names = [f"p{i}" for i in range(len(self.values))]
        code = compile("\n".join(Op(lines, operands).render(names, "out")), "<fuzz op>", "exec")

        def run(*vals):
            namespace = {"np": np, **{names[i]: v for i, v in zip(unique, vals)}}
            exec(code, namespace)  # noqa: S102
            return namespace["out"]

        vals = [self.values[i].value for i in unique]
        errs = [self.values[i].err for i in unique]
        if rules.exact_operands and any(e is not None and np.any(e > 0) for e in errs):
            return False  # which element is largest could follow the rounding
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = run(*vals)
                if np.size(result) > MAX_RESULT or np.asarray(result).dtype not in C.DTYPES:
                    return False
                if rules.domain is not None and not rules.domain([self.values[i].value for i in operands], result):
                    return False
                result, err = N.corners(run, vals, errs)
                if rules.reduction is not None:
                    x = self.values[operands[0]]
                    err = N.combine(err, reduction_error(result, rules.reduction, x.value, x.err))
                if rules.error is not None:
                    err = N.combine(err, rules.error(run, vals, errs, result))
                err = N.combine(err, own_error(rules, result, self.model))
                err = N.check_usable(result, err)
                reads = self.reads(operands, rules, np.ndim(result))
                if reads is None:
                    return False
        except N.Unstable:
            return False
        except (TypeError, ValueError, ArithmeticError, IndexError):
            return False  # NumPy refuses it (no loop, bad axis, shape or index, int out of range)
        self.ops.append(Op(lines, operands, rules))
        self.values.append(Value(result, err, reads))
        return True

    def tolerances(self, outputs: list[int]) -> list:
        """Per output, the tolerance of each element (0: exact)."""
        result = []
        for k in outputs:
            v = self.values[k]
            result.append(np.zeros(v.shape) if v.err is None else SAFETY * np.broadcast_to(v.err, v.shape))
        return result

    def program(self, outputs: list[int]) -> Program:
        """The program with these outputs and their tolerances, without dead code."""
        return Program(self.inputs, self.ops, outputs, self.tolerances(outputs)).pruned()


def evaluate(program: Program, inputs: list[Input], model: N.ErrorModel) -> Builder | None:
    """The program's ops run on `inputs`, or None if one is no longer valid, in its domain or
    stable there."""
    b = Builder(model)
    for inp in inputs:
        b.add_input(inp)
    for op in program.ops:
        if not b.add(op.lines, op.operands, op.rules):
            return None
    return b


def replay(program: Program, model: N.ErrorModel) -> tuple[Program, list[Value]] | None:
    """The program evaluated afresh for every call (tolerances included) with the first call's
    values, or None if an operation is invalid, out of its domain or unstable in some call."""
    first = evaluate(program, program.inputs, model)
    if first is None:
        return None
    again = []
    for call in program.again:
        b = evaluate(program, call.inputs, model)
        if b is None:
            return None
        again.append(Call(call.inputs, b.tolerances(program.outputs)))
    fresh = Program(program.inputs, program.ops, program.outputs, first.tolerances(program.outputs), again,
                    program.packing, program.shared, program.concurrent)
    return fresh, first.values


def literal(v) -> str:
    """A constant in program text, parenthesized when negative (x ** (-1.5))."""
    if isinstance(v, np.generic):
        return f"np.{v.dtype.name}({scalar_literal(v.item())})"
    text = scalar_literal(v)
    return f"({text})" if text.startswith("-") else text


__all__ = ["ARRAY", "NUMPY_SCALAR", "PYTHON_SCALAR", "Builder", "Rules", "Value", "literal", "replay"]
