"""Tracing: run the user's NumPy function on proxy arrays and record what it does as a Graph.

A Tracer stands for an array (or a runtime scalar) whose shape and dtype are known and whose values
are not. Operators, ufuncs (`__array_ufunc__`) and NumPy functions (`__array_function__`) on
tracers go to numpy_api.py, whose rules bind new equations in the TraceContext.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from . import numpy_api, numpy_complex, numpy_reductions, numpy_views, viewmaps
from .dtypes import check_supported
from .errors import TracingError, UnsupportedError, at_user_line, unsupported, user_line_noted, user_location
from .ir import Atom, Aval, Eqn, Graph, Literal, SizeConst, SizeValue, Var, check_graph
from .numpy_api import Operand


@dataclass(frozen=True)
class ArgSpec:
    """What a traced argument is: an array, a NumPy scalar (strong), or a Python scalar (weak)."""

    kind: str  # "array" | "scalar" | "python"
    aval: Aval
    readonly: bool = False  # an array NumPy will not write into (a broadcast view, say)
    layout: str = "C"  # "C", "F" (Fortran-contiguous), or "A" (neither)
    strides: tuple[int, ...] | None = None  # element strides of an "A" array, where known

    @property
    def weak(self) -> bool:
        return self.kind == "python"

    @property
    def strided(self) -> bool:
        """Not C-contiguous: kernels read it through its strides."""
        return self.layout != "C"


class TraceContext:
    """The equations recorded while one function is traced."""

    def __init__(self) -> None:
        self.inputs: list[Var] = []
        self.eqns: list[Eqn] = []
        self.consts: dict[Var, np.ndarray] = {}
        self._const_by_id: dict[int, tuple[np.ndarray, Var]] = {}
        self._cse: dict[tuple, Var] = {}
        # Notional element strides of views (others are C-contiguous), or None where they are
        # unknown (a strided argument's): whether NumPy's reshape of a value would be a view.
        self.strides: dict[Var, tuple[int, ...] | None] = {}
        # Updated arrays: every version's first version (whose buffer they share), and the
        # latest version of each.
        self.family: dict[Var, Var] = {}
        self.latest: dict[Var, Var] = {}
        # The array object (Tracer) whose buffer each first version is: only it writes there in
        # place; another array object with the same values (a copy) gets its own buffer first.
        self.owner: dict[Var, "Tracer"] = {}

    # -- values --------------------------------------------------------------------------------

    def new_input(self, spec: ArgSpec) -> "Tracer":
        var = Var(spec.aval)
        self.inputs.append(var)
        mutable = spec.kind == "array"
        tracer = Tracer(self, var, weak=spec.weak, numpy_scalar=not mutable, argument=mutable)
        tracer._readonly = spec.readonly
        if mutable:
            self.owner[var] = tracer
            if spec.layout == "F":
                self.strides[var] = numpy_views.f_strides(spec.aval.shape)
            elif spec.layout != "C":
                self.strides[var] = spec.strides
        if not mutable:
            tracer._input_position = len(self.inputs) - 1
        return tracer

    def operand(self, x) -> Operand:
        """Classify a NumPy call's argument (see numpy_api.Operand)."""
        if isinstance(x, Tracer):
            if x._ctx is not self:
                raise TracingError(
                    at_user_line("a traced array from another numfuse.jit trace leaked into this one")
                )
            return Operand(x, None, x.dtype, x._weak)
        if isinstance(x, SizeValue):
            dtype = check_supported(np.asarray(x.value).dtype, "a count")
            return Operand(None, x.value, dtype, False, x.key)
        # NumPy scalars first: np.float64 is a subclass of float, yet strongly typed.
        if isinstance(x, np.generic):
            dtype = check_supported(x.dtype, f"the NumPy scalar {x!r}")
            return Operand(None, x, dtype, False)
        if isinstance(x, bool):
            return Operand(None, np.bool_(x), np.dtype(bool), True)
        if isinstance(x, int):
            return Operand(None, x, np.dtype(np.int64), True)
        if isinstance(x, float):
            return Operand(None, x, np.dtype(np.float64), True)
        if isinstance(x, complex):
            return Operand(None, x, np.dtype(np.complex128), True)
        if isinstance(x, (np.ndarray, list, tuple)):
            array = np.asarray(x)
            dtype = check_supported(array.dtype, "a constant array captured by the function")
            if array.ndim == 0:
                return Operand(None, array[()], dtype, False)
            return Operand(self._const(array), None, dtype, False)
        raise unsupported(f"an operand of type {type(x).__name__}")

    def _const(self, array: np.ndarray) -> "Tracer":
        found = self._const_by_id.get(id(array))
        if found is None:
            var = Var(Aval(array.shape, array.dtype))
            # Copied: the graph keeps the value it was traced with, as JAX does.
            self.consts[var] = np.ascontiguousarray(array).copy()
            # The original is kept too, so that its id is not reused by another array.
            found = self._const_by_id[id(array)] = (array, var)
        return Tracer(self, found[1])

    def as_tracer(self, operand: Operand) -> "Tracer":
        if operand.tracer is not None:
            return operand.tracer
        return self.broadcast(operand.dtype.type(operand.value), ())

    def atom(self, tracer: "Tracer") -> Var:
        return tracer._var

    def numpy_scalar(self, tracer: "Tracer") -> "Tracer":
        """The same value, as NumPy returns it from a reduction: a scalar when 0-d."""
        return Tracer(self, tracer._var, weak=tracer._weak, numpy_scalar=not tracer.shape)

    # -- equations -----------------------------------------------------------------------------

    def bind(self, prim, atoms, shape, dtype, params=(), weak=False, numpy_scalar=False) -> "Tracer":
        """Record `prim[params] atoms` (or find it already recorded) and return its value."""
        aval = Aval(tuple(int(s) for s in shape), np.dtype(dtype))
        # The dtype's char too: np.longlong equals np.int64 as a dtype, yet NumPy's scalars of
        # the two are different types (a comparison's loop casts to 'q', a sum gives 'l').
        key = (prim, tuple(_atom_key(a) for a in atoms), params, aval, aval.dtype.char)
        var = self._cse.get(key)
        if var is None:
            var = Var(aval)
            self.eqns.append(Eqn(prim, tuple(atoms), var, tuple(params), user_location()))
            self._cse[key] = var
            if prim not in _VIEW_PRIMS and aval.ndim > 1 and not all(self.in_c_order(a) for a in atoms):
                # NumPy lays what it computes out like its operands (order "K"): not in C order
                # here, in an order numfuse does not trace.
                self.strides[var] = None
        # A fresh Tracer even for a repeated equation: in-place updates change one Python object.
        return Tracer(self, var, weak=weak, numpy_scalar=numpy_scalar and not shape)

    def coerce(self, operand: Operand, dtype: np.dtype, shape) -> Atom:
        """The operand as an equation input of `dtype`: a Literal, or a Var broadcast to `shape`."""
        if operand.tracer is None:
            value = np.array(operand.value)
            if value.dtype.kind == "c" and np.dtype(dtype).kind not in "cb":
                value = value.real  # the cast's value, without a second ComplexWarning
            value = value.astype(dtype, casting="unsafe")[()]
            if operand.size_key is not None:
                return SizeConst(value, operand.size_key)  # a kernel argument, see ir.SizeConst
            return Literal(value)
        value = self.convert(operand.tracer, dtype)
        if value.shape != tuple(shape):
            value = self.broadcast(value, shape)
        return value._var

    def convert(self, tracer: "Tracer", dtype) -> "Tracer":
        dtype = np.dtype(dtype)
        if tracer.dtype == dtype:
            return tracer
        check_supported(dtype, "astype")
        return self.bind("convert", [tracer._var], tracer.shape, dtype, params=(("dtype", dtype),))

    def broadcast(self, value, shape) -> "Tracer":
        """NumPy broadcasting of a traced value or a NumPy scalar to `shape`."""
        shape = tuple(shape)
        atom = value._var if isinstance(value, Tracer) else Literal(value)
        dtype = atom.aval.dtype
        if isinstance(value, Tracer) and value.shape == shape:
            return value
        out = self.bind("broadcast", [atom], shape, dtype, params=(("shape", shape),))
        if isinstance(atom, Var):
            strides = self.strides_of(atom)
            if strides is None:
                self.strides[out._var] = None
            else:
                probe = numpy_views.stand_in(atom.aval.shape, strides)
                self.strides[out._var] = tuple(s // 8 for s in np.broadcast_to(probe, shape).strides)
        return out

    def transpose(self, tracer: "Tracer", axes=None) -> "Tracer":
        ndim = tracer.ndim
        if axes is None:
            perm = tuple(reversed(range(ndim)))
        else:
            perm = numpy_api.normalize_axis_tuple(axes, ndim)
            if len(perm) != ndim:
                raise ValueError(at_user_line("axes don't match array"))
        return self.permuted(tracer, perm)

    def permuted(self, tracer: "Tracer", perm) -> "Tracer":
        perm = tuple(perm)
        unmap = lambda imap: viewmaps.transpose_operand(perm, imap)  # noqa: E731
        shape = tuple(tracer.shape[p] for p in perm)
        return _view(self, tracer, shape, lambda var: self.transpose_var(var, perm), unmap)

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

    def reshaped(self, tracer: "Tracer", shape, ravel: bool = False) -> "Tracer":
        """NumPy's reshape (or ravel): a view where NumPy gives one, else a copy (a new array
        that writes do not share). Where NumPy's choice depends on strides numfuse does not
        know (a strided argument's), writing through the result, or reading it after its
        array was written, is refused."""
        shape = tuple(shape)
        kind = numpy_views.reshape_kind(tracer.shape, self.strides_of(tracer._var), shape, ravel)
        if kind == "copy":
            return Tracer(self, self.new_array(self.reshape_var(tracer._var, shape, ravel)))
        before = tracer.shape
        unmap = lambda imap: viewmaps.reshape_operand(before, shape, imap)  # noqa: E731
        if kind == "view":
            return _view(self, tracer, shape, lambda v: self.reshape_var(v, shape, ravel), unmap)
        origin = tracer._var
        unsure = f"{'ravel' if ravel else 'reshape'} of an array whose memory layout numfuse does not trace"

        def make(v: Var) -> Var:
            if v is not origin:
                raise unsupported(f"reading a {unsure} after the array was written", _UNSURE_HINT)
            return self.reshape_var(v, shape, ravel)

        return _view(self, tracer, shape, make, unmap, unsure=unsure)

    def broadcast_view(self, tracer: "Tracer", shape) -> "Tracer":
        """np.broadcast_to: a read-only view."""
        make = lambda var: self.broadcast(Tracer(self, var), shape)._var  # noqa: E731
        return _view(self, tracer, shape, make, None, readonly=True)

    def wrap(self, var: Var, weak: bool = False, numpy_scalar: bool = False) -> "Tracer":
        return Tracer(self, var, weak=weak, numpy_scalar=numpy_scalar)

    def view(self, tracer: "Tracer", make, unmap=None, readonly=None, refusal=None, hint="", dtype=None) -> "Tracer":
        """A view of `tracer`, of its shape (and `dtype`, else its dtype), whose value is
        `make(var)` of its base's current value. Writes go through `unmap` (an index map over
        the view to the base's points); without one they are refused with `refusal` (and
        `hint`)."""
        return _View(self, tracer, tracer.shape, make, unmap, readonly,
                     refusal=None if unmap is not None else (refusal or "writing through this view", hint),
                     dtype=dtype)

    def copy_var(self, var: Var) -> Var:
        """A new array with `var`'s values (never merged with another copy), laid out as `var`
        is: an update writes into it in place."""
        out = Var(var.aval)
        self.eqns.append(Eqn("convert", (var,), out, (("dtype", var.aval.dtype),), user_location()))
        if var in self.strides:
            self.strides[out] = self.strides[var]
        return out

    def owns(self, tracer: "Tracer", var: Var) -> bool:
        """Whether `var` is a version of the buffer that `tracer` (an array object) owns."""
        return self.owner.get(self.family.get(var, var)) is tracer

    def concatenate_var(self, vars_: list[Var], axis: int) -> Var:
        """A new array: the operands (of one dtype) one after another along `axis`."""
        first = vars_[0].aval
        shape = list(first.shape)
        shape[axis] = sum(v.aval.shape[axis] for v in vars_)
        return self.bind("concatenate", vars_, shape, first.dtype, params=(("axis", axis),))._var

    def update_var(self, var: Var, at, shape, value) -> Var:
        """`var` with the points `at` (viewmaps.At's entries) of a region of `shape` replaced
        by `value`, as `var[index] = value` does: the value is cast unsafely to var's dtype
        (NumPy still refuses Python ints out of range) and broadcast to the region."""
        dtype = var.aval.dtype
        operand = self.operand(value)
        if operand.tracer is None:
            # NumPy's own assignment on a one-element stand-in raises what it would (a Python
            # int out of range, a Python complex into a real array) and warns as it would.
            with user_line_noted():
                np.empty((1,), dtype)[...] = operand.value
        else:
            numpy_complex.warn_if_imaginary_dropped(operand.dtype, dtype)
        vshape = numpy_views.value_into(shape, operand.shape)
        if operand.tracer is not None and vshape != operand.shape:
            operand = numpy_api.Operand(Tracer(self, self.reshape_var(operand.tracer._var, vshape)), None, operand.dtype, operand.weak)
        if int(np.prod(shape, dtype=np.int64)) == 0:
            return var
        atom = self.coerce(operand, dtype, shape)
        params = (("at", viewmaps.At(tuple(at))), ("shape", tuple(shape)))
        out = self.bind("update", [var, atom], var.aval.shape, dtype, params=params)._var
        if var in self.strides:
            self.strides[out] = self.strides[var]  # the same buffer
        root = self.family.setdefault(var, var)
        self.family[out] = root
        self.latest[root] = out
        return out

    def astype(self, x, dtype, copy: bool = True) -> "Tracer":
        tracer = self.as_tracer(self.operand(x))
        dtype = check_supported(dtype, "astype")
        result = self.convert(tracer, dtype)
        if result is tracer and copy:
            # A copy, as in NumPy (order "K"): a new array object, whose in-place updates stay
            # its own (if it is returned as it is, trace() makes it a real copy).
            result = Tracer(self, self.new_array(tracer._var, "K"))
        if tracer._numpy_scalar:
            result = self.numpy_scalar(result)  # np.float64(1).astype(np.float32) is a scalar
        return result

    def graph(self, outputs: list[Atom], name: str, writebacks=None) -> Graph:
        graph = Graph(list(self.inputs), list(self.eqns), outputs, dict(self.consts), name, writebacks or {})
        check_graph(graph)
        return graph


# Primitives whose result's strides their caller sets (views of the operand, and updates, which
# write into its buffer).
_VIEW_PRIMS = ("broadcast", "transpose", "slice", "reshape", "update")


def _atom_key(atom: Atom):
    if isinstance(atom, Var):
        return ("v", atom.id)
    if isinstance(atom, SizeConst):
        return ("n", atom.aval.dtype.str, atom.key)
    return ("l", atom.aval.dtype.str, atom.value.tobytes())


# ---------------------------------------------------------------------------------------------


class UnsupportedAttributeError(UnsupportedError, AttributeError):
    """An ndarray attribute or method that numfuse does not trace."""


def _concrete_value_error(what: str, tracer: "Tracer | None" = None) -> TracingError:
    """The error for Python code that needs a traced value. For a scalar argument used that
    way, `error.input_position` says which, so that jit can retrace with it static."""
    error = TracingError(
        at_user_line(
            f"{what} needs the value of a traced array, which exists only when the kernel runs. "
            "numfuse traces the function once per input signature, so Python control flow and "
            "conversions cannot depend on array values: write data-dependent choices with "
            "np.where(condition, a, b), and pass values that steer the Python code (an axis, "
            "a count) as static arguments: numfuse.jit(static_argnames=(...))"
        )
    )
    error.input_position = None if tracer is None else tracer._input_position
    return error


def _binary(ufunc: np.ufunc, reflected: bool = False) -> Callable:
    if reflected:
        return lambda self, other: numpy_api.apply_ufunc(self._ctx, ufunc, (other, self), {}, True)
    return lambda self, other: numpy_api.apply_ufunc(self._ctx, ufunc, (self, other), {}, True)


def _inplace(ufunc: np.ufunc) -> Callable:
    def update(self, other):
        return self._update_in_place(ufunc, other)

    return update


def _unary(ufunc: np.ufunc) -> Callable:
    return lambda self: numpy_api.apply_ufunc(self._ctx, ufunc, (self,), {}, True)


def _method(function: Callable) -> Callable:
    return lambda self, *args, **kwargs: function(self, *args, **kwargs)


class Tracer:
    """A proxy array seen by the user's function while it is traced."""

    __slots__ = ("_ctx", "_var", "_weak", "_numpy_scalar", "_argument", "_view", "_input_position", "_readonly")
    __array_priority__ = 1000

    def __init__(self, ctx, var, weak=False, numpy_scalar=False, argument=False):
        self._ctx = ctx
        self._var = var
        self._weak = weak
        self._numpy_scalar = numpy_scalar
        self._argument = argument
        self._view = False
        self._input_position = None  # for a scalar argument: its position among traced inputs
        self._readonly = False  # NumPy refuses writes (a broadcast view)

    # -- attributes ----------------------------------------------------------------------------
    _aval = property(lambda self: self._var.aval)
    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: self._aval.ndim)
    size = property(lambda self: self._aval.size)
    itemsize = property(lambda self: self._aval.dtype.itemsize)
    nbytes = property(lambda self: self._aval.nbytes)
    T = property(lambda self: self._ctx.transpose(self))

    def __repr__(self) -> str:
        return f"Tracer<{self._var.aval}>"

    # -- NumPy protocols -----------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if kwargs.get("out") is not None:
            raise unsupported(f"np.{ufunc.__name__}(..., out=...)", "write `x = ...` instead")
        kwargs.pop("out", None)
        if method == "__call__":
            return numpy_api.apply_ufunc(self._ctx, ufunc, inputs, kwargs)
        if method == "reduce":
            return numpy_reductions.ufunc_reduce(self._ctx, ufunc, inputs, kwargs)
        raise unsupported(f"np.{ufunc.__name__}.{method}")

    def __array_function__(self, func, types, args, kwargs):
        return numpy_api.call_function(self._ctx, func, args, kwargs)

    def __array__(self, dtype=None, copy=None):
        raise _concrete_value_error("Converting a traced array to a NumPy array (np.asarray)")

    # -- operators -----------------------------------------------------------------------------
    __add__, __radd__ = _binary(np.add), _binary(np.add, True)
    __sub__, __rsub__ = _binary(np.subtract), _binary(np.subtract, True)
    __mul__, __rmul__ = _binary(np.multiply), _binary(np.multiply, True)
    __truediv__, __rtruediv__ = _binary(np.true_divide), _binary(np.true_divide, True)
    __floordiv__, __rfloordiv__ = _binary(np.floor_divide), _binary(np.floor_divide, True)
    __mod__, __rmod__ = _binary(np.remainder), _binary(np.remainder, True)
    __pow__, __rpow__ = _binary(np.power), _binary(np.power, True)
    __and__, __rand__ = _binary(np.bitwise_and), _binary(np.bitwise_and, True)
    __or__, __ror__ = _binary(np.bitwise_or), _binary(np.bitwise_or, True)
    __xor__, __rxor__ = _binary(np.bitwise_xor), _binary(np.bitwise_xor, True)
    __lshift__, __rlshift__ = _binary(np.left_shift), _binary(np.left_shift, True)
    __rshift__, __rrshift__ = _binary(np.right_shift), _binary(np.right_shift, True)
    __lt__, __le__ = _binary(np.less), _binary(np.less_equal)
    __gt__, __ge__ = _binary(np.greater), _binary(np.greater_equal)
    __eq__, __ne__ = _binary(np.equal), _binary(np.not_equal)
    __hash__ = None
    __neg__, __pos__ = _unary(np.negative), _unary(np.positive)
    __abs__, __invert__ = _unary(np.absolute), _unary(np.invert)
    __iadd__, __isub__ = _inplace(np.add), _inplace(np.subtract)
    __imul__, __itruediv__ = _inplace(np.multiply), _inplace(np.true_divide)
    __ifloordiv__, __imod__ = _inplace(np.floor_divide), _inplace(np.remainder)
    __ipow__, __iand__ = _inplace(np.power), _inplace(np.bitwise_and)
    __ior__, __ixor__ = _inplace(np.bitwise_or), _inplace(np.bitwise_xor)

    def _update_in_place(self, ufunc, other):
        """`x op= y`: NumPy writes into x's memory, so every name for x sees the new value. An
        argument (or a view) is updated in its buffer; a local array is simply rebound."""
        result = numpy_api.apply_ufunc(self._ctx, ufunc, (self, other), {}, True)
        if self._weak or self._numpy_scalar:
            return result  # Python and NumPy scalars are immutable: `s += 1` rebinds s
        if self._readonly:
            raise ValueError(at_user_line("output array is read-only"))
        other_operand = self._ctx.operand(other)
        with np.errstate(all="ignore"):
            ufunc(np.empty((0,), self.dtype), other_operand.stand_in(), out=np.empty((0,), self.dtype))
        if result.shape != self.shape:
            raise ValueError(
                at_user_line(
                    f"non-broadcastable output operand with shape {self.shape} doesn't match "
                    f"the broadcast shape {result.shape}"
                )
            )
        if self._argument or self._view:
            self._assign_at(viewmaps.identity_map(self.shape), self.shape, result)
            return self
        self._var = self._ctx.convert(result, self.dtype)._var
        return self

    def _assign_at(self, at, shape, value) -> None:
        """Write `value` into this array at the points `at` (an index into it for each point
        of a region of `shape`; see viewmaps.At)."""
        if self._readonly:
            raise ValueError(at_user_line("assignment destination is read-only"))
        ctx = self._ctx
        var = self._var
        if not ctx.owns(self, var):
            var = ctx.copy_var(var)  # this array's own buffer, which the update writes into
            ctx.owner[var] = self
        self._var = ctx.update_var(var, at, shape, value)

    def __matmul__(self, other):
        raise unsupported("the @ operator (np.matmul)")

    __rmatmul__ = __matmul__

    def __divmod__(self, other):
        raise unsupported("divmod (np.divmod)")

    # -- Python conversions that need values ---------------------------------------------------
    def __bool__(self):
        raise _concrete_value_error("Python's `if`, `while`, `and`, `or`, `not` or bool() on an array", self)

    def __float__(self):
        raise _concrete_value_error("float() of a traced array", self)

    def __int__(self):
        raise _concrete_value_error("int() of a traced array", self)

    def __index__(self):
        raise _concrete_value_error("Using a traced value as an index, axis or size", self)

    def __complex__(self):
        raise _concrete_value_error("complex() of a traced array", self)

    def item(self, *args):
        raise _concrete_value_error(".item() of a traced array")

    def tolist(self):
        raise _concrete_value_error(".tolist() of a traced array")

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, index):
        """Basic indexing: a view (index maps, no copy); a scalar where NumPy gives one."""
        ctx = self._ctx
        if self._numpy_scalar and not self.shape:
            raise IndexError(at_user_line("invalid index to scalar variable."))
        region, sliced, final, scalar = numpy_views.parse_index(self.shape, index)

        def make(var):
            return ctx.reshape_var(ctx.slice_var(var, region, sliced), final)

        if scalar:
            return Tracer(ctx, make(self._var), numpy_scalar=True)
        return _view(ctx, self, final, make, numpy_views.index_unmap(region, sliced, final))

    def __setitem__(self, index, value):
        """`a[index] = value`: a new version of a written into a's buffer (an `update`), or
        into the buffer of the array that a is a view of."""
        if self._weak or self._numpy_scalar:
            raise TypeError(at_user_line("a scalar does not support item assignment"))
        region, sliced, final, _ = numpy_views.parse_index(self.shape, index)
        operand = self._ctx.operand(value)
        numpy_views.value_into(final, operand.shape)
        at = numpy_views.index_unmap(region, sliced, final)(viewmaps.identity_map(final))
        if (isinstance(value, _View) and value._base is self and value._unmap is not None
                and value._unsure is None and value.shape == final
                and value._unmap(viewmaps.identity_map(final)) == at):
            # These very points of this array (a[i] *= 2 ends with a[i] = the view a[i],
            # already updated): nothing to write.
            return
        self._assign_at(at, final, value)

    def reshape(self, *shape, order="C", copy=None):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return numpy_api.call_function(self._ctx, np.reshape, (self, tuple(shape)), {"order": order, "copy": copy})

    def ravel(self, order="C"):
        return numpy_api.call_function(self._ctx, np.ravel, (self,), {"order": order})

    def flatten(self, order="C"):
        if order != "C":
            raise unsupported(f"flatten(order={order!r})", "only order='C'")
        return Tracer(self._ctx, self._ctx.new_array(self._ctx.reshape_var(self._var, (self.size,))))

    def squeeze(self, axis=None):
        return np.squeeze(self, axis)

    def swapaxes(self, axis1, axis2):
        return np.swapaxes(self, axis1, axis2)

    def copy(self, order="C"):
        if order != "C":
            raise unsupported(f"copy(order={order!r})", "only order='C'")
        return Tracer(self._ctx, self._ctx.new_array(self._var))

    # -- methods -------------------------------------------------------------------------------
    sum = _method(np.sum)
    prod = _method(np.prod)
    max = _method(np.max)
    min = _method(np.min)
    mean = _method(np.mean)
    var = _method(np.var)
    std = _method(np.std)
    argmax = _method(np.argmax)
    argmin = _method(np.argmin)

    def any(self, *args, **kwargs):
        return numpy_reductions.any_all_method(self._ctx, "any", self, *args, **kwargs)

    def all(self, *args, **kwargs):
        return numpy_reductions.any_all_method(self._ctx, "all", self, *args, **kwargs)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        numpy_complex.warn_if_imaginary_dropped(self.dtype, dtype)
        return self._ctx.astype(self, dtype, copy)

    def conjugate(self):
        if self.dtype.kind != "c" and not self._weak:
            return self  # NumPy's method returns a real array itself (np.conjugate copies)
        # A Python scalar's conjugate is a Python scalar, as its operators' results are.
        return numpy_api.apply_ufunc(self._ctx, np.conjugate, (self,), {}, self._weak)

    def conj(self):
        if self._weak:  # Python's numbers have .conjugate() only
            raise AttributeError(f"'{type(self.dtype.type(0).item()).__name__}' object has no attribute 'conj'")
        return self.conjugate()

    def _set_part(self, value):
        raise unsupported("assigning to x.real or x.imag", "build the new array, e.g. x = new_real + 1j * x.imag")

    real = property(lambda self: numpy_complex.part(self._ctx, self, "real"), _set_part)
    imag = property(lambda self: numpy_complex.part(self._ctx, self, "imag"), _set_part)

    def clip(self, min=None, max=None, out=None, **kwargs):
        return np.clip(self, min, max, out=out, **kwargs)

    def round(self, decimals=0, out=None):
        return numpy_api.round_(self._ctx, self, decimals, out)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return self._ctx.transpose(self, axes or None)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)  # protocol probes (hasattr) must see a plain miss
        error = unsupported(f"ndarray.{name}")
        raise UnsupportedAttributeError(str(error))


_UNSURE_HINT = (
    "NumPy's result is a view or a copy depending on that layout (a device argument neither C- "
    "nor Fortran-contiguous, or what NumPy computed from arrays not in C order and laid out like "
    "them); make the array C-contiguous first with .copy()"
)


def _view(ctx, base: Tracer, shape, make, unmap, readonly=None, unsure=None) -> Tracer:
    """A view of `base`; of a NumPy scalar (`x.sum().reshape(1)`), a new array: NumPy's
    scalars are immutable, so writing into what their methods return changes only that."""
    if base._numpy_scalar or base._weak:
        array = Tracer(ctx, make(base._var))
        array._readonly = bool(readonly)  # np.broadcast_to's result stays read-only
        return array
    return _View(ctx, base, shape, make, unmap, readonly, unsure)


class _View(Tracer):
    """A view of another traced array (x.T, x[1:], x.reshape(...)): like a NumPy view it shows
    later updates of its base (`make` builds it from the base's latest version), and writing
    through it writes into the base: `unmap` takes an index map over the view to the base's
    points (viewmaps), so a chain of views composes into one update of the array at the root.
    `unsure` says why writing is refused (NumPy's reshape of a strided argument may copy)."""

    __slots__ = ("_base", "_make", "_unmap", "_unsure", "_seen", "_shape", "_refusal", "_dtype")

    def __init__(self, ctx, base: Tracer, shape, make, unmap, readonly=None, unsure=None, refusal=None,
                 dtype=None):
        self._ctx = ctx
        self._base = base
        self._shape = tuple(shape)  # known without building the view (which binds equations)
        self._make = make
        self._unmap = unmap
        self._unsure = unsure
        self._refusal = refusal  # (what, hint): writes refused outright (a complex part)
        self._dtype = base.dtype if dtype is None else dtype  # a complex array's .real: its part's
        self._seen = (None, None)
        self._weak = False
        self._numpy_scalar = False
        self._argument = False
        self._view = True
        self._input_position = None
        self._readonly = base._readonly if readonly is None else readonly

    @property
    def _aval(self) -> Aval:
        return Aval(self._shape, self._dtype)

    @property
    def _var(self) -> Var:
        base_var = self._base._var
        if self._seen[0] is not base_var:
            self._seen = (base_var, self._make(base_var))
        return self._seen[1]

    def _assign_at(self, at, shape, value) -> None:
        if self._readonly:
            raise ValueError(at_user_line("assignment destination is read-only"))
        if self._refusal is not None:
            raise unsupported(*self._refusal)
        if self._unsure is not None:
            raise unsupported(f"writing through a {self._unsure}", _UNSURE_HINT)
        self._base._assign_at(self._unmap(at), shape, value)


# ---------------------------------------------------------------------------------------------


@dataclass
class TraceResult:
    graph: Graph
    out_tree: Any  # the return value's structure; see flatten_outputs
    leaf_kinds: list[str]  # per graph output: "array", "numpy_scalar" or "python"


def flatten_outputs(value, leaves: list) -> Any:
    """The return value with each Tracer replaced by ('__leaf__', index) into `leaves`."""
    if isinstance(value, Tracer):
        leaves.append(value)
        return ("__leaf__", len(leaves) - 1)
    if isinstance(value, tuple):
        return ("__tuple__", [flatten_outputs(v, leaves) for v in value])
    if isinstance(value, list):
        return ("__list__", [flatten_outputs(v, leaves) for v in value])
    if isinstance(value, dict):
        return ("__dict__", {k: flatten_outputs(v, leaves) for k, v in value.items()})
    return ("__const__", value)


def unflatten_outputs(tree, values: Sequence) -> Any:
    tag, body = tree
    if tag == "__leaf__":
        return values[body]
    if tag == "__tuple__":
        return tuple(unflatten_outputs(t, values) for t in body)
    if tag == "__list__":
        return [unflatten_outputs(t, values) for t in body]
    if tag == "__dict__":
        return {k: unflatten_outputs(t, values) for k, t in body.items()}
    return body


def trace(fn: Callable, specs: Sequence[ArgSpec | tuple[str, Any]], name: str | None = None) -> TraceResult:
    """Trace `fn` once. Each spec is an ArgSpec (a traced argument) or ("static", value)."""
    ctx = TraceContext()
    args = [ctx.new_input(s) if isinstance(s, ArgSpec) else s[1] for s in specs]
    arguments = [a for a in args if isinstance(a, Tracer)]
    initial = [a._var for a in arguments]
    result = fn(*args)
    leaves: list[Tracer] = []
    tree = flatten_outputs(result, leaves)
    for leaf in leaves:
        if leaf._ctx is not ctx:
            raise TracingError("the function returned a traced array from another trace")
    kinds = ["python" if t._weak else "numpy_scalar" if t._numpy_scalar else "array" for t in leaves]
    outputs = []
    for t in leaves:
        var = t._var
        if (var in ctx.consts or var in ctx.inputs) and not any(t is a for a in arguments):
            # Not the argument itself but a copy of it (x.astype(x.dtype)): a new array.
            var = ctx.bind("convert", [var], t.shape, t.dtype, params=(("dtype", t.dtype),))._var
        elif var in ctx.family and ctx.latest.get(ctx.family[var]) is not var:
            # An earlier version of an array updated since: its buffer holds the latest.
            var = ctx.copy_var(var)
        outputs.append(var)
    # Arguments written into: their final versions go back into the caller's arrays.
    writebacks = {
        ctx.inputs.index(v0): a._var for a, v0 in zip(arguments, initial) if a._var is not v0
    }
    graph = ctx.graph(outputs, name or getattr(fn, "__name__", "f"), writebacks)
    return TraceResult(graph, tree, kinds)
