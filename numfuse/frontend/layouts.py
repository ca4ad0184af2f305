"""Memory layouts and buffers of traced arrays: the structural equations a TraceContext binds.

NumPy decides whether a reshape is a view, and how it lays out what it computes, from strides;
numfuse keeps each value's notional element strides (`strides`: C-contiguous where absent, None
where unknown, as for a device argument neither C- nor Fortran-contiguous) and asks NumPy on a
memoryless stand-in (numpy_views). `Layouts` binds the equations that move values without
arithmetic (`transpose`, `slice`, `reshape`, `concatenate`, a copy as `convert`) with the strides
of their results, and item assignment's `update`, which writes a new version of an array into
its first version's buffer (`family`, `latest`), owned by one array object (`owner`, `owns`).

`Layouts` is TraceContext's base class: it uses the context's `bind`, `operand`, `coerce` and
`eqns` (tracer.py).
"""

from __future__ import annotations

import weakref

import numpy as np

from . import numpy_api, numpy_complex, numpy_views
from ..ir import viewmaps
from ..errors import user_line_noted, user_location
from ..ir.graph import Eqn, Var
from .proxy import Tracer

# A Python scalar of each kind a weakly typed (Python scalar) argument has.
_PYTHON_ZERO = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}


class Layouts:
    """A TraceContext's strides of values and versions of buffers, and the equations that keep
    them."""

    def __init__(self) -> None:
        # Notional element strides of views (others are C-contiguous), or None where they are
        # unknown (a strided argument's): whether NumPy's reshape of a value would be a view.
        self.strides: dict[Var, tuple[int, ...] | None] = {}
        # Updated arrays: every version's first version (whose buffer they share), and the
        # latest version of each.
        self.family: dict[Var, Var] = {}
        self.latest: dict[Var, Var] = {}
        # The array object (Tracer) whose buffer each first version is: only it writes there in
        # place; another array object with the same values (a copy) gets its own buffer first.
        # Weakly held: an array object the function no longer holds owns nothing (and is not
        # kept alive to a graph break, graph_breaks.py).
        self.owner: "weakref.WeakValueDictionary[Var, Tracer]" = weakref.WeakValueDictionary()

    # -- strides -------------------------------------------------------------------------------

    def strides_of(self, var: Var) -> tuple[int, ...] | None:
        """`var`'s element strides as NumPy would have them, or None if unknown."""
        if var in self.strides:
            return self.strides[var]
        return numpy_views.c_strides(var.aval.shape)

    def c_contiguous(self, var: Var) -> bool:
        return numpy_views.c_contiguous(var.aval.shape, self.strides_of(var))

    def in_c_order(self, atom) -> bool:
        """Whether NumPy computes from `atom` in C order (always for a literal, 0-d or 1-d)."""
        if not isinstance(atom, Var) or atom.aval.ndim < 2:
            return True
        return numpy_views.c_ordered(atom.aval.shape, self.strides_of(atom))

    # -- views: structural equations -----------------------------------------------------------

    def transpose_var(self, var: Var, perm: tuple[int, ...]) -> Var:
        if perm == tuple(range(len(perm))):
            return var
        shape = tuple(var.aval.shape[p] for p in perm)
        out = self.bind("transpose", [var], shape, var.aval.dtype, params=(("perm", perm),))._var
        old = self.strides_of(var)
        self.strides[out] = None if old is None else tuple(old[p] for p in perm)
        return out

    def slice_var(self, var: Var, region, shape) -> Var:
        """`var` at a region of basic indexing (numpy_views.parse_index)."""
        start, step, drop = region
        if not drop and tuple(shape) == var.aval.shape and all(s == 0 for s in start) and all(s == 1 for s in step):
            return var
        params = (("start", start), ("step", step), ("drop", drop))
        out = self.bind("slice", [var], shape, var.aval.dtype, params=params)._var
        old = self.strides_of(var)
        self.strides[out] = None if old is None else tuple(old[k] * step[k] for k in range(len(start)) if k not in drop)
        return out

    def reshape_var(self, var: Var, shape, ravel: bool = False) -> Var:
        """A row-major reshape (with `ravel`: NumPy's ravel); `copy=True` where NumPy would copy
        (its operand is then materialized by the planner). Where the strides are unknown it is
        read as a view; reshaped() refuses what depends on the difference."""
        shape = tuple(shape)
        if shape == var.aval.shape:
            return var
        strides = self.strides_of(var)
        kind = numpy_views.reshape_kind(var.aval.shape, strides, shape, ravel)
        params = (("shape", shape),) + ((("copy", True),) if kind == "copy" else ())
        out = self.bind("reshape", [var], shape, var.aval.dtype, params=params)._var
        if kind == "copy":
            self.strides.pop(out, None)  # a new C-contiguous array
        elif strides is None:
            self.strides[out] = None
        else:
            reshaped = np.reshape(numpy_views.stand_in(var.aval.shape, strides), shape, copy=False)
            self.strides[out] = tuple(s // 8 for s in reshaped.strides)
        return out

    # -- new arrays ----------------------------------------------------------------------------

    def new_array(self, var: Var, order: str = "C") -> Var:
        """`var`'s values as a new array in NumPy's `order` ("C", or "K": laid out like `var`):
        `var` itself where it is laid out so already, else a copy (never merged with another)."""
        if self.c_contiguous(var):
            return var
        out = self.copy_var(var)
        if order == "C" or self.in_c_order(var):
            self.strides.pop(out, None)
        else:
            self.strides[out] = None  # K order of a layout numfuse does not trace
        return out

    def laid_out_like(self, filled: "Tracer", prototype: "Tracer | None") -> "Tracer":
        """A new array of `filled`'s values (a broadcast fill) laid out as NumPy's *_like lays
        it out: like `prototype` (order "K")."""
        var = filled._var
        in_c = prototype is None or self.in_c_order(prototype._var)
        if in_c and self.c_contiguous(var):
            return filled
        out = self.copy_var(var)
        if in_c:
            self.strides.pop(out, None)
        else:
            self.strides[out] = None
        return Tracer(self, out)

    def copy_var(self, var: Var) -> Var:
        """A new array with `var`'s values (never merged with another copy), laid out as `var`
        is: an update writes into it in place."""
        out = Var(var.aval)
        self.eqns.append(Eqn("convert", (var,), out, (("dtype", var.aval.dtype),), user_location()))
        if var in self.strides:
            self.strides[out] = self.strides[var]
        return out

    def concatenate_var(self, vars_: list[Var], axis: int) -> Var:
        """A new array: the operands (of one dtype) one after another along `axis`."""
        first = vars_[0].aval
        shape = list(first.shape)
        shape[axis] = sum(v.aval.shape[axis] for v in vars_)
        return self.bind("concatenate", vars_, shape, first.dtype, params=(("axis", axis),))._var

    # -- buffers written into ------------------------------------------------------------------

    def update_var(self, var: Var, at, shape, value) -> Var:
        """`var` with the points `at` (viewmaps.At's entries) of a region of `shape` replaced
        by `value`, as `var[index] = value` does: the value is cast unsafely to var's dtype
        (NumPy still refuses Python ints out of range) and broadcast to the region."""
        dtype = var.aval.dtype
        operand = self.operand(value)
        if operand.tracer is None or operand.weak:
            # NumPy's own assignment on a one-element stand-in raises what it would (a Python
            # int out of range, a Python complex into a real array) and warns as it would. A
            # Python scalar argument stands in as a Python scalar of its kind: its value comes
            # at run time, where an int out of range takes NumPy's answer (ScalarOutOfRange).
            stand_in = operand.value if operand.tracer is None else _PYTHON_ZERO[operand.dtype.kind]
            with user_line_noted():
                np.empty((1,), dtype)[...] = stand_in
        else:
            numpy_complex.warn_if_imaginary_dropped(operand.dtype, dtype)
        vshape = numpy_views.value_into(shape, operand.shape)
        if operand.tracer is not None and vshape != operand.shape:
            operand = numpy_api.Operand(Tracer(self, self.reshape_var(operand.tracer._var, vshape)), None, operand.dtype, operand.weak)
        if int(np.prod(shape, dtype=np.int64)) == 0:
            return var
        atom = self.coerce(operand, dtype, shape)
        if isinstance(atom, Var) and self.family.get(atom, atom) is self.family.get(var, var) and \
                not _identity_region(at, shape, var.aval.shape):
            # `x[::-1] = x`: the value is the buffer itself, read at other points than written.
            # NumPy evaluates the right side first (a temporary, where they overlap): a copy.
            atom = self.copy_var(atom)
        params = (("at", viewmaps.At(tuple(at))), ("shape", tuple(shape)))
        out = self.bind("update", [var, atom], var.aval.shape, dtype, params=params)._var
        if var in self.strides:
            self.strides[out] = self.strides[var]  # the same buffer
        root = self.family.setdefault(var, var)
        self.family[out] = root
        self.latest[root] = out
        return out

    def owns(self, tracer: "Tracer", var: Var) -> bool:
        """Whether `var` is a version of the buffer that `tracer` (an array object) owns."""
        return self.owner.get(self.family.get(var, var)) is tracer


def _identity_region(at, shape, full) -> bool:
    """Whether an update of the region `shape` at `at` writes every point of an array of shape
    `full` at its own place (`x[...] = v`)."""
    return tuple(shape) == tuple(full) and tuple(at) == viewmaps.identity_map(tuple(full))
