"""Tracing: run the user's NumPy function on proxy arrays and record what it does as a Graph.

A Tracer stands for an array (or a runtime scalar) whose shape and dtype are known and whose values
are not. Operators, ufuncs (`__array_ufunc__`) and NumPy functions (`__array_function__`) on
tracers go to numpy_api.py, whose rules bind new equations in the TraceContext.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from . import numpy_api, numpy_reductions, numpy_views
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
    strided: bool = False  # not C-contiguous: kernels read it through its strides

    @property
    def weak(self) -> bool:
        return self.kind == "python"


class TraceContext:
    """The equations recorded while one function is traced."""

    def __init__(self) -> None:
        self.inputs: list[Var] = []
        self.eqns: list[Eqn] = []
        self.consts: dict[Var, np.ndarray] = {}
        self._const_by_id: dict[int, tuple[np.ndarray, Var]] = {}
        self._cse: dict[tuple, Var] = {}
        # Notional element strides of views (others are C-contiguous): whether NumPy's reshape
        # of a value would be a view.
        self.strides: dict[Var, tuple[int, ...]] = {}
        # Updated arrays: every version's first version (whose buffer they share), and the
        # latest version of each.
        self.family: dict[Var, Var] = {}
        self.latest: dict[Var, Var] = {}

    # -- values --------------------------------------------------------------------------------

    def new_input(self, spec: ArgSpec) -> "Tracer":
        var = Var(spec.aval)
        self.inputs.append(var)
        mutable = spec.kind == "array"
        tracer = Tracer(self, var, weak=spec.weak, numpy_scalar=not mutable, argument=mutable)
        tracer._readonly = spec.readonly
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
        key = (prim, tuple(_atom_key(a) for a in atoms), params, aval)
        var = self._cse.get(key)
        if var is None:
            var = Var(aval)
            self.eqns.append(Eqn(prim, tuple(atoms), var, tuple(params), user_location()))
            self._cse[key] = var
        # A fresh Tracer even for a repeated equation: in-place updates change one Python object.
        return Tracer(self, var, weak=weak, numpy_scalar=numpy_scalar and not shape)

    def coerce(self, operand: Operand, dtype: np.dtype, shape) -> Atom:
        """The operand as an equation input of `dtype`: a Literal, or a Var broadcast to `shape`."""
        if operand.tracer is None:
            value = np.array(operand.value).astype(dtype, casting="unsafe")[()]
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
        return self.bind("broadcast", [atom], shape, dtype, params=(("shape", shape),))

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
        return _View(self, tracer, lambda var: self.transpose_var(var, tuple(perm)))

    def strides_of(self, var: Var) -> tuple[int, ...]:
        return self.strides.get(var) or numpy_views.c_strides(var.aval.shape)

    def transpose_var(self, var: Var, perm: tuple[int, ...]) -> Var:
        if perm == tuple(range(len(perm))):
            return var
        shape = tuple(var.aval.shape[p] for p in perm)
        out = self.bind("transpose", [var], shape, var.aval.dtype, params=(("perm", perm),))._var
        self.strides[out] = tuple(self.strides_of(var)[p] for p in perm)
        return out

    def slice_var(self, var: Var, region, shape) -> Var:
        """`var` at a region of basic indexing (numpy_views.parse_index)."""
        start, step, drop = region
        if not drop and tuple(shape) == var.aval.shape and all(s == 0 for s in start) and all(s == 1 for s in step):
            return var
        params = (("start", start), ("step", step), ("drop", drop))
        out = self.bind("slice", [var], shape, var.aval.dtype, params=params)._var
        old = self.strides_of(var)
        self.strides[out] = tuple(old[k] * step[k] for k in range(len(start)) if k not in drop)
        return out

    def find_slice(self, var: Var, region, shape) -> Var | None:
        """The value `slice_var` made of `var` at `region` before, if any (binding nothing)."""
        start, step, drop = region
        if not drop and tuple(shape) == var.aval.shape and all(s == 0 for s in start) and all(s == 1 for s in step):
            return var
        params = (("start", start), ("step", step), ("drop", drop))
        return self._cse.get(("slice", (_atom_key(var),), params, Aval(tuple(shape), var.aval.dtype)))

    def reshape_var(self, var: Var, shape) -> Var:
        """A row-major reshape; `copy=True` where NumPy's reshape would copy (its operand is
        then materialized by the planner)."""
        shape = tuple(shape)
        if shape == var.aval.shape:
            return var
        strides = self.strides_of(var)
        view = numpy_views.is_view_reshape(var.aval.shape, strides, shape)
        params = (("shape", shape),) + ((("copy", True),) if not view else ())
        out = self.bind("reshape", [var], shape, var.aval.dtype, params=params)._var
        if view:
            reshaped = np.reshape(numpy_views.stand_in(var.aval.shape, strides), shape, copy=False)
            self.strides[out] = tuple(s // 8 for s in reshaped.strides)
        return out

    def reshaped(self, tracer: "Tracer", shape) -> "Tracer":
        """NumPy's reshape: a view where NumPy gives one, else a copy."""
        var = self.reshape_var(tracer._var, shape)
        if var is not tracer._var and var not in self.strides:  # NumPy copies
            return Tracer(self, var)
        return _View(self, tracer, lambda v: self.reshape_var(v, shape))

    def broadcast_view(self, tracer: "Tracer", shape) -> "Tracer":
        """np.broadcast_to: a read-only view."""
        def make(var):
            out = self.broadcast(Tracer(self, var), shape)._var
            if out is not var:
                probe = numpy_views.stand_in(var.aval.shape, self.strides_of(var))
                self.strides[out] = tuple(s // 8 for s in np.broadcast_to(probe, shape).strides)
            return out

        return _View(self, tracer, make, None, readonly=True)

    def wrap(self, var: Var) -> "Tracer":
        return Tracer(self, var)

    def copy_var(self, var: Var) -> Var:
        """A new array with `var`'s values (never merged with another copy): an update writes
        into it in place."""
        out = Var(var.aval)
        self.eqns.append(Eqn("convert", (var,), out, (("dtype", var.aval.dtype),), user_location()))
        return out

    def empty_var(self, shape, dtype) -> Var:
        """A new array whose every point later updates write (concatenate, stack)."""
        out = Var(Aval(tuple(shape), np.dtype(dtype)))
        self.eqns.append(Eqn("empty", (), out, (("shape", tuple(shape)),), user_location()))
        return out

    def update_var(self, var: Var, region, shape, value) -> Var:
        """`var` with `region` (of `shape`) replaced by `value`, as `var[index] = value` does:
        the value is cast unsafely to var's dtype (NumPy still refuses Python ints out of range)
        and broadcast to the region."""
        dtype = var.aval.dtype
        operand = self.operand(value)
        if operand.tracer is None:
            with user_line_noted():
                np.copyto(np.empty((), dtype), operand.value, casting="unsafe")
        vshape = numpy_views.value_into(shape, operand.shape)
        if operand.tracer is not None and vshape != operand.shape:
            operand = numpy_api.Operand(Tracer(self, self.reshape_var(operand.tracer._var, vshape)), None, operand.dtype, operand.weak)
        if int(np.prod(shape, dtype=np.int64)) == 0:
            return var
        atom = self.coerce(operand, dtype, shape)
        params = (("start", region[0]), ("step", region[1]), ("drop", region[2]), ("shape", tuple(shape)))
        out = self.bind("update", [var, atom], var.aval.shape, dtype, params=params)._var
        root = self.family.setdefault(var, var)
        self.family[out] = root
        self.latest[root] = out
        return out

    def astype(self, x, dtype, copy: bool = True) -> "Tracer":
        tracer = self.as_tracer(self.operand(x))
        dtype = check_supported(dtype, "astype")
        result = self.convert(tracer, dtype)
        if result is tracer and copy:
            # A copy, as in NumPy: a new array object, whose in-place updates stay its own (if
            # it is returned as it is, trace() makes it a real copy).
            result = Tracer(self, tracer._var)
        if tracer._numpy_scalar:
            result = self.numpy_scalar(result)  # np.float64(1).astype(np.float32) is a scalar
        return result

    def graph(self, outputs: list[Atom], name: str, writebacks=None) -> Graph:
        graph = Graph(list(self.inputs), list(self.eqns), outputs, dict(self.consts), name, writebacks or {})
        check_graph(graph)
        return graph


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
    shape = property(lambda self: self._var.aval.shape)
    dtype = property(lambda self: self._var.aval.dtype)
    ndim = property(lambda self: self._var.aval.ndim)
    size = property(lambda self: self._var.aval.size)
    itemsize = property(lambda self: self._var.aval.dtype.itemsize)
    nbytes = property(lambda self: self._var.aval.nbytes)
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
            full = ((0,) * self.ndim, (1,) * self.ndim, ())
            self._assign(full, self.shape, result)
            return self
        self._var = self._ctx.convert(result, self.dtype)._var
        return self

    def _assign(self, region, shape, value) -> None:
        """Write `value` into `region` (start, step, drop) of this array, of `shape`."""
        if self._readonly:
            raise ValueError(at_user_line("assignment destination is read-only"))
        ctx = self._ctx
        var = self._var
        if var not in ctx.family and not (self._argument and var in ctx.inputs):
            var = ctx.copy_var(var)  # this array's own buffer, which the update writes into
        self._var = ctx.update_var(var, region, shape, value)

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
        return _View(ctx, self, make, region if final == sliced else None)

    def __setitem__(self, index, value):
        """`a[index] = value`: a new version of a written into a's buffer (an `update`)."""
        if self._weak or self._numpy_scalar:
            raise TypeError(at_user_line("a scalar does not support item assignment"))
        region, sliced, final, _ = numpy_views.parse_index(self.shape, index)
        operand = self._ctx.operand(value)
        numpy_views.value_into(final, operand.shape)
        if isinstance(value, Tracer) and value._var is self._ctx.find_slice(self._var, region, sliced):
            return  # a[i] *= 2 ends with a[i] = (the view, already updated): nothing to write
        self._assign(region, sliced, value)

    def reshape(self, *shape, order="C", copy=None):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return numpy_api.call_function(self._ctx, np.reshape, (self, tuple(shape)), {"order": order, "copy": copy})

    def ravel(self, order="C"):
        return numpy_api.call_function(self._ctx, np.ravel, (self,), {"order": order})

    def flatten(self, order="C"):
        if order != "C":
            raise unsupported(f"flatten(order={order!r})", "only order='C'")
        return Tracer(self._ctx, self._ctx.reshape_var(self._var, (self.size,)))

    def squeeze(self, axis=None):
        return np.squeeze(self, axis)

    def swapaxes(self, axis1, axis2):
        return np.swapaxes(self, axis1, axis2)

    def copy(self, order="C"):
        return self._ctx.astype(self, self.dtype, True)

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
        return self._ctx.astype(self, dtype, copy)

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


class _View(Tracer):
    """A view of another traced array (x.T, x[1:], x.reshape(...)): like a NumPy view it shows
    later updates of its base. `region` is where it sits in its base when it is a plain slice
    of it; writing through it then writes into the base. Writing through other views is
    refused."""

    __slots__ = ("_base", "_make", "_region", "_seen")

    def __init__(self, ctx, base: Tracer, make, region=None, readonly=None):
        self._ctx = ctx
        self._base = base
        self._make = make
        self._region = region
        self._seen = (None, None)
        self._weak = False
        self._numpy_scalar = False
        self._argument = False
        self._view = True
        self._input_position = None
        self._readonly = base._readonly if readonly is None else readonly

    @property
    def _var(self) -> Var:
        base_var = self._base._var
        if self._seen[0] is not base_var:
            self._seen = (base_var, self._make(base_var))
        return self._seen[1]

    def _assign(self, region, shape, value) -> None:
        if self._readonly:
            raise ValueError(at_user_line("assignment destination is read-only"))
        if self._region is None:
            raise unsupported(
                "writing through a transposed, reshaped or np.newaxis view",
                "write into the original array with an index instead",
            )
        self._base._assign(numpy_views.compose(self._region, region), shape, value)


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
