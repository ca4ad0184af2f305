"""Tracer, the proxy array a traced function sees, and _View, a traced view of another one.

A Tracer stands for an array (or a runtime scalar) whose shape and dtype are known and whose values
are not. Operators, ufuncs (`__array_ufunc__`) and NumPy functions (`__array_function__`) on
tracers go to numpy_api.py, whose rules bind new equations in the TraceContext (tracer.py); Python
conversions that need values raise TracingError. Item assignment and in-place operators write a
new version of the array (`update`), through every view down to the array it was taken of.
"""

from __future__ import annotations

import builtins
import operator
import sys
import warnings
from typing import Callable

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import (
    array_flags, numpy_api, numpy_complex, numpy_functions, numpy_indexing, numpy_masked, numpy_products, numpy_reductions, numpy_views,
)
from ..ir import viewmaps
from ..errors import TracingError, UnsupportedError, at_user_line, called_from_numfuse, unsupported, user_line_noted
from ..ir.graph import Aval, Var
from .traced import TracedArray, TracedView
from .untraced import untraced


def _set_shape(tracer, shape) -> None:
    """`x.shape = shape`: NumPy reshapes x in place where that needs no copy (else raises). A
    value the function computed takes the new shape; an array written in place (an argument,
    a made buffer) or a view would need its buffer reshaped under every name for it."""
    ctx = tracer._ctx
    if isinstance(tracer, _View) or tracer._weak or tracer._numpy_scalar or ctx.owner.get(
            ctx.family.get(tracer._var, tracer._var)) is not None:
        raise unsupported("assigning to .shape of an argument, a view or an array written in place",
                          "write x = x.reshape(shape)")
    # (a view: the stand-in itself is shared, and its shape is set here)
    probe = numpy_views.stand_in(tracer.shape, ctx.strides_of(tracer._var)).view() \
        if ctx.strides_of(tracer._var) is not None else None
    if probe is None:
        raise unsupported("assigning to .shape of an array whose memory layout numfuse does not trace",
                          "write x = x.reshape(shape)")
    with user_line_noted():
        probe.shape = shape  # NumPy's errors (a copy needed, sizes that differ)
    tracer._var = ctx.reshape_var(tracer._var, probe.shape)


def _refuse_write(tracer, numpy_message: str):
    if isinstance(tracer._readonly, str):
        raise unsupported(tracer._readonly, "write into x itself with the whole index (x[k, 0] = v, x[:, k] -= v: "
                                            "those are followed), or index with a static int "
                                            "(numfuse.jit(static_argnames=...)) to get a view")
    raise ValueError(at_user_line(numpy_message))


class UnsupportedAttributeError(UnsupportedError, AttributeError):
    """An ndarray attribute or method that numfuse does not trace."""


def _concrete_value_error(what: str, tracer: "Tracer | None" = None) -> TracingError:
    """The refusal of Python code that needs a traced value, where no graph break may run it
    (numfuse.jit(graph_breaks=False)). For a scalar argument used that way,
    `error.input_position` says which, so that jit can retrace with it static."""
    error = TracingError(
        at_user_line(
            f"{what} needs the value of a traced array, which exists only when the kernel runs, "
            "and this function was compiled with graph_breaks=False: write data-dependent choices "
            "with np.where(condition, a, b), pass values that steer the Python code (an axis, a "
            "count) as static arguments (numfuse.jit(static_argnames=(...))), or allow graph breaks"
        )
    )
    error.input_position = None if tracer is None else tracer._input_position
    return error


def _binary(ufunc: np.ufunc, reflected: bool = False) -> Callable:
    if reflected:
        return lambda self, other: numpy_api.apply_ufunc(self._ctx, ufunc, (other, self), {}, True)
    return lambda self, other: numpy_api.apply_ufunc(self._ctx, ufunc, (self, other), {}, True)


def _compared(ufunc: np.ufunc) -> Callable:
    """== and !=: against None (`labels == None`) or a string (`'a' in x`), NumPy compares
    each element with that object: all False (all True for !=), of the array's shape."""
    binary = _binary(ufunc)

    def compare(self, other):
        if self._weak and isinstance(other, (str, bytes)):
            return ufunc is np.not_equal  # (Python's: 1.5 == 'a' is False)
        if other is None or isinstance(other, (str, bytes)):
            value = self._ctx.broadcast(np.bool_(ufunc is np.not_equal), self.shape)
            return self._ctx.numpy_scalar(value) if not self.shape else value
        return binary(self, other)

    return compare


def _inplace(ufunc: np.ufunc) -> Callable:
    def update(self, other):
        return self._update_in_place(ufunc, other)

    return update


def _unary(ufunc: np.ufunc) -> Callable:
    return lambda self: numpy_api.apply_ufunc(self._ctx, ufunc, (self,), {}, True)


def _method(function: Callable) -> Callable:
    return lambda self, *args, **kwargs: function(self, *args, **kwargs)


class _Flat:
    """A traced array's .flat: its points in C order, through a ravel view of it."""

    __slots__ = ("_array", "_writable")

    def __init__(self, array, writable: bool = True):
        self._array = array
        self._writable = writable  # (False: x.ravel() is a copy, which writes would not reach x)

    def __getitem__(self, key):
        picked = self._array.ravel()[key]
        return picked if not picked.shape else picked.copy()  # one point: NumPy's scalar

    def __setitem__(self, key, value):
        if not self._writable:
            raise unsupported("writing through x.flat of an array that is not C-contiguous (or of unknown layout)",
                              "write into x itself (x[np.unravel_index(i, x.shape)] = v)")
        view = self._array.ravel()
        view[key] = _raveled(value)  # (B.flat[i] = A.flat: A's points in C order)

    def __len__(self):
        return self._array.size

    def __iter__(self):
        return iter(self._array.ravel())

    # NumPy's functions and ufuncs take a flatiter as the 1-D array of its points (np.dot(x.flat,
    # y.flat)): here that array is the ravel view, traced whole, not one point at a time.
    __array_priority__ = 1000

    def __array_function__(self, func, types, args, kwargs):
        return func(*_raveled(args), **{k: _raveled(v) for k, v in kwargs.items()})

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return getattr(ufunc, method)(*_raveled(inputs), **kwargs)


def _raveled(value):
    """`value` (an argument, or a tuple or list of them) with each _Flat in it its ravel view."""
    if isinstance(value, _Flat):
        return value._array.ravel()
    if isinstance(value, (tuple, list)):
        return type(value)(_raveled(v) for v in value)
    return value


# (the code of NumPy's as_strided, which asks np.array of its argument: see Tracer.__array__)
_AS_STRIDED_CODE = getattr(as_strided, "__code__", None)


def _called_by(code, depth: int = 4) -> bool:
    """Whether one of the few frames below the caller runs `code` (through np.array and
    numfuse's own np.array while tracing)."""
    frame = sys._getframe(2)
    for _ in range(depth):
        if frame is None:
            return False
        if frame.f_code is code:
            return True
        frame = frame.f_back
    return False

class Tracer(TracedArray):
    """A proxy array seen by the user's function while it is traced."""

    __slots__ = ("_ctx", "_var", "_weak", "_numpy_scalar", "_argument", "_view", "_input_position", "_readonly",
                 "_passed_as", "_indexed_from", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, ctx, var, weak=False, numpy_scalar=False, argument=False):
        self._ctx = ctx
        self._var = var
        self._weak = weak
        self._numpy_scalar = numpy_scalar
        self._argument = argument
        self._view = False
        self._input_position = None  # for a scalar argument: its position among traced inputs
        # NumPy refuses writes (a broadcast view): True; or a str, the refusal of numfuse, where
        # NumPy's result would be a view but numfuse's is a copy (x[k] for a traced index k).
        self._readonly = False
        self._passed_as = None  # a scalar argument's Python or NumPy type (see __class__)
        # (array, index) of x[k] for a traced integer k: NumPy's view, numfuse's copy; an
        # in-place update of it is written back there (x[:, k] -= v), as through NumPy's view.
        self._indexed_from = None
        if ctx.breaks is not None:
            ctx.breaks.track(self)  # live at a graph break: its value is kept (graph_breaks.py)

    @property
    def __class__(self):
        """What isinstance (which consults __class__ after the real type) answers as for the
        value NumPy would have: a scalar argument's type as passed (a Python int is an int, a
        np.float32 a np.floating), and an array NumPy's ndarray (for a trace of NumPy arrays;
        of device arrays, whose library one trace does not know, the tracer). So the user's
        `if isinstance(pad, int):` and `if not isinstance(x, np.ndarray): x = np.asarray(x)`
        take NumPy's branch. Scalars computed in the trace answer as the tracer. numfuse's
        own checks ask the real type (traced.is_host_array). type(x) is the tracer's."""
        cls = type(self)
        passed = getattr(self, "_passed_as", None)  # (a view has none)
        if passed is not None:
            return passed
        try:
            scalar, ctx = self._weak or self._numpy_scalar, self._ctx
        except AttributeError:  # not initialized yet
            return cls
        if scalar and not self._aval.shape:
            return cls
        return ctx.array_class or cls

    # -- attributes ----------------------------------------------------------------------------
    _aval = property(lambda self: self._var.aval)
    shape = property(lambda self: self._aval.shape, lambda self, value: _set_shape(self, value))
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: self._aval.ndim)
    size = property(lambda self: self._aval.size)
    itemsize = property(lambda self: self._aval.dtype.itemsize)
    nbytes = property(lambda self: self._aval.nbytes)
    strides = property(lambda self: array_flags.strides(self))  # (where the trace knows NumPy's)
    flags = property(lambda self: array_flags.TracedFlags(self) if not self._weak else
                     getattr(self._aval.dtype.type(0).item(), "flags"))  # (a Python number has none)
    # (a NumPy scalar's methods give a scalar where the result is 0-d: s.T, s.copy() are s)
    T = property(lambda self: self if self._numpy_scalar else self._ctx.transpose(self))

    def __repr__(self) -> str:
        # repr(x) in the user's code is NumPy's (a graph break), as print(x) is; numfuse's own
        # messages, and its debugging, show the traced value's type.
        if called_from_numfuse():
            return f"Tracer<{self._var.aval}>"
        value = self._ctx.concrete(self, "repr() of a traced array")
        if self._weak:
            return repr(value[()].item())  # a Python scalar's
        return repr(value[()] if self._numpy_scalar else value)

    def __str__(self) -> str:
        # print(x) in the user's code shows the values, as NumPy's (a graph break); numfuse's
        # own messages show the traced value's type.
        if called_from_numfuse():
            return repr(self)
        return str(self._ctx.concrete(self, "print() or str() of a traced array")[()])

    def __format__(self, spec: str) -> str:
        if called_from_numfuse():
            return format(repr(self), spec)
        return format(self._ctx.concrete(self, "formatting a traced array (f-string)")[()], spec)

    # -- NumPy protocols -----------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        try:
            return self._traced_ufunc(ufunc, method, inputs, kwargs)
        except UnsupportedError as refusal:
            # A ufunc, method or dtype numfuse does not trace (np.sin of complex values,
            # np.add.accumulate): NumPy's, on the real arrays at a graph break.
            name = f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
            call = ufunc if method == "__call__" else getattr(ufunc, method)
            return untraced(self._ctx, call, inputs, kwargs, refusal,
                                      f"{name} with these operands is not traced ({str(refusal).splitlines()[0]})")

    def _traced_ufunc(self, ufunc, method, inputs, kwargs):
        if method == "__call__" and (kwargs.get("out") is not None or kwargs.get("where", True) is not True) \
                and ufunc is not np.matmul and ufunc not in numpy_functions.COMPOSED_UFUNCS:
            return numpy_api.ufunc_into(self._ctx, ufunc, inputs, kwargs)
        if kwargs.get("out") is not None:
            raise unsupported(f"np.{ufunc.__name__}.{method}(..., out=...)", "write `x = ...` instead")
        kwargs.pop("out", None)
        kwargs.pop("where", None) if kwargs.get("where", None) is True else None
        if ufunc is np.matmul and method == "__call__":
            if kwargs:
                raise unsupported(f"np.matmul(..., {', '.join(kwargs)}=...)")
            return numpy_products.matmul(self._ctx, *inputs)
        if method == "__call__" and ufunc in numpy_functions.COMPOSED_UFUNCS:
            return numpy_functions.COMPOSED_UFUNCS[ufunc](self._ctx, *inputs, **kwargs)
        if method == "__call__":
            return numpy_api.apply_ufunc(self._ctx, ufunc, inputs, kwargs)
        if method == "outer":
            return numpy_functions.ufunc_outer(self._ctx, ufunc, inputs, kwargs)
        if method == "reduce":
            return numpy_reductions.ufunc_reduce(self._ctx, ufunc, inputs, kwargs)
        if method == "at":
            return numpy_indexing.ufunc_at(self._ctx, ufunc, inputs, kwargs)
        raise unsupported(f"np.{ufunc.__name__}.{method}")

    def __array_function__(self, func, types, args, kwargs):
        return numpy_api.call_function(self._ctx, func, args, kwargs)

    def __array__(self, dtype=None, copy=None):
        what = "Converting a traced array to a NumPy array (np.asarray)"
        breaks = self._ctx.breaks
        if breaks is not None and not breaks.given_in_numpys_layout(self) and _called_by(_AS_STRIDED_CODE):
            # as_strided reads the array's memory: NumPy's layout of it, which numfuse's real
            # array (in C order) is not (a trace without breaks stops below, and the run segment
            # by segment that follows meets this check)
            raise numpy_views.layout_refusal("as_strided of an array not C-contiguous in NumPy (or of a layout "
                                             "numfuse does not know)", "its windows are over the memory's order")
        if copy:
            return np.array(self._ctx.concrete(self, what), dtype=dtype, copy=True)  # its own array
        # The array's buffer, read-only (Python's writes would not reach traced code), kept
        # current by later traced writes (graph_breaks.Breaker.value_of).
        value = self._ctx.concrete(self, what, expose=True)
        return value if dtype is None or np.dtype(dtype) == value.dtype else value.astype(dtype)

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
    __eq__, __ne__ = _compared(np.equal), _compared(np.not_equal)

    def __hash__(self):
        """A scalar's hash is its value's (a dict key, a set member: `if s not in Q`), which
        needs the value (a scalar argument becomes static; else a graph break); an array has
        none, as in NumPy."""
        if not (self._weak or self._numpy_scalar):
            raise TypeError("unhashable type: 'numpy.ndarray'")
        return hash(self._ctx.concrete(self, "hash() of a traced scalar (a dict key or a set member)")[()])
    __neg__, __pos__ = _unary(np.negative), _unary(np.positive)
    __abs__, __invert__ = _unary(np.absolute), _unary(np.invert)
    __iadd__, __isub__ = _inplace(np.add), _inplace(np.subtract)
    __imul__, __itruediv__ = _inplace(np.multiply), _inplace(np.true_divide)
    __ifloordiv__, __imod__ = _inplace(np.floor_divide), _inplace(np.remainder)
    __ipow__, __iand__ = _inplace(np.power), _inplace(np.bitwise_and)
    __ior__, __ixor__ = _inplace(np.bitwise_or), _inplace(np.bitwise_xor)
    __ilshift__, __irshift__ = _inplace(np.left_shift), _inplace(np.right_shift)
    __divmod__, __rdivmod__ = _binary(np.divmod), _binary(np.divmod, True)

    def _update_in_place(self, ufunc, other):
        """`x op= y`: NumPy writes into x's memory, so every name for x sees the new value. An
        argument (or a view) is updated in its buffer; a local array is simply rebound."""
        result = numpy_api.apply_ufunc(self._ctx, ufunc, (self, other), {}, True)
        if self._weak or self._numpy_scalar:
            return result  # Python and NumPy scalars are immutable: `s += 1` rebinds s
        if self._readonly and self._indexed_from is None:
            _refuse_write(self, "output array is read-only")
        other_operand = self._ctx.operand(other)
        with np.errstate(all="ignore"), user_line_noted():  # (NumPy's casting rule for out=, and its error)
            ufunc(np.empty((0,), self.dtype), other_operand.stand_in(), out=np.empty((0,), self.dtype))
        if result.shape != self.shape:
            raise ValueError(
                at_user_line(
                    f"non-broadcastable output operand with shape {self.shape} doesn't match "
                    f"the broadcast shape {result.shape}"
                )
            )
        if self._indexed_from is not None:
            base, index = self._indexed_from
            updated = self._ctx.convert(result, self.dtype)
            base[index] = updated  # (checks that the base is writable)
            updated = Tracer(self._ctx, updated._var)
            updated._readonly, updated._indexed_from = self._readonly, self._indexed_from
            return updated
        if self._argument or self._view:
            self._assign_at(viewmaps.identity_map(self.shape), self.shape, result)
            return self
        self._var = self._ctx.convert(result, self.dtype)._var
        return self

    def _check_writable(self) -> None:
        """Raise what a write into this array raises (NumPy's read-only error), writing nothing."""
        if self._readonly:
            _refuse_write(self, "assignment destination is read-only")

    def _assign_at(self, at, shape, value, through_view: bool = False) -> None:
        """Write `value` into this array at the points `at` (an index into it for each point
        of a region of `shape`; see viewmaps.At). `through_view`: written through a view of
        it, which checked that it may write (its flag, taken when it was made)."""
        if not through_view:
            self._check_writable()
        ctx = self._ctx
        var = self._var
        if not ctx.owns(self, var):
            var = ctx.copy_var(var)  # this array's own buffer, which the update writes into
            ctx.owner[var] = self
        self._var = ctx.update_var(var, at, shape, value)
        if ctx.breaks is not None:
            ctx.breaks.written(self)

    def __matmul__(self, other):
        return numpy_products.matmul(self._ctx, self, other, "the @ operator")

    def __rmatmul__(self, other):
        return numpy_products.matmul(self._ctx, other, self, "the @ operator")

    def __imatmul__(self, other):
        # NumPy computes the product into a new array, then copies it into self.
        result = numpy_products.matmul(self._ctx, self, other, "the @= operator")
        if result.shape != self.shape:
            raise ValueError(at_user_line("matmul: Output operand 0 has a mismatch in its core dimension"))
        self[...] = result
        return self

    def dot(self, b, out=None):
        return numpy_products.dot(self._ctx, self, b, out)

    def cumsum(self, axis=None, dtype=None, out=None):
        return np.cumsum(self, axis, dtype, out)

    def cumprod(self, axis=None, dtype=None, out=None):
        return np.cumprod(self, axis, dtype, out)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return np.diagonal(self, offset, axis1, axis2)  # (a read-only view, as NumPy's)

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        return np.trace(self, offset, axis1, axis2, dtype, out)

    def argsort(self, axis=-1, kind=None, order=None, *, stable=None):
        return np.argsort(self, axis, kind, order, stable=stable)

    def sort(self, axis=-1, kind=None, order=None, *, stable=None):
        """In place, as ndarray.sort: the sorted values written into this array."""
        self[...] = np.sort(self, axis, kind, order, stable=stable)

    def partition(self, kth, axis=-1, kind="introselect", order=None):
        self[...] = np.partition(self, kth, axis, kind, order)

    # -- Python conversions that need values: a graph break (tracer.TraceContext.concrete) ----
    def __bool__(self):
        return bool(self._ctx.concrete(self, "Python's `if`, `while`, `and`, `or`, `not` or bool() on an array"))

    def __float__(self):
        value = self._ctx.concrete(self, "float() of a traced array")
        with user_line_noted():
            return float(value)

    def __int__(self):
        value = self._ctx.concrete(self, "int() of a traced array")
        with user_line_noted():
            return int(value)

    def __index__(self):
        return operator.index(self._ctx.concrete(self, "Using a traced value as an index, axis or size"))

    def __complex__(self):
        return complex(self._ctx.concrete(self, "complex() of a traced array"))

    def __round__(self, ndigits=None):
        """round() of a scalar as NumPy's (a NumPy scalar with ndigits, else a Python int) or
        Python's (a Python number argument); an array has none, as in NumPy."""
        if not (self._numpy_scalar or self._weak):
            raise TypeError(at_user_line("type numpy.ndarray doesn't define __round__ method"))
        if self._weak or ndigits is None:
            return round(self._ctx.concrete(self, "round() of a traced value").item(), ndigits)
        return np.round(self, ndigits)

    def item(self, *args):
        value = self._ctx.concrete(self, ".item() of a traced array")
        with user_line_noted():
            return value.item(*args)

    def tolist(self):
        return self._ctx.concrete(self, ".tolist() of a traced array").tolist()

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __contains__(self, value):
        # NumPy's `value in x`: (x == value).any(), not a search row by row (Python's
        # fallback, whose row comparisons have no truth value). A scalar is no container.
        if self._weak or self._numpy_scalar:
            kind = type(self.dtype.type(0).item()).__name__ if self._weak else f"numpy.{self.dtype.name}"
            raise TypeError(at_user_line(f"argument of type '{kind}' is not iterable"))
        return (self == value).any()

    def __getitem__(self, index):
        """Basic indexing: a view (index maps, no copy); a scalar where NumPy gives one."""
        ctx = self._ctx
        if self._numpy_scalar and not self.shape:
            # A NumPy scalar's own indexing: s[()] is s, s[...] and s[None] index a new 0-d
            # array of it; anything else NumPy refuses.
            if index == ():
                return self
            if not (index is Ellipsis or index is None or isinstance(index, tuple) and
                    all(i is Ellipsis or i is None for i in index)):
                raise IndexError(at_user_line("invalid index to scalar variable."))
            return Tracer(ctx, ctx.new_array(self._var))[index]
        index = numpy_indexing.normal_index(numpy_masked.compacted_in_index(index), self.shape)
        rows = numpy_indexing.rows_selected(ctx, self, index)
        if rows is not None:
            return rows  # x[rows] for rows the data chose: NumPy's array, from a graph break
        mask = numpy_indexing.mask_of(ctx, self, index, reading=True)
        if mask is not None:
            return numpy_masked.select(ctx, self, mask)  # x[mask]: its size depends on the data
        if numpy_indexing.is_advanced(ctx, index):
            return numpy_indexing.getitem(ctx, self, index)  # a gather: a new array
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
        index = numpy_indexing.normal_index(numpy_masked.compacted_in_index(index), self.shape)
        mask = numpy_indexing.mask_of(self._ctx, self, index)
        if mask is not None:
            value = numpy_views.converted_for_assignment(value, self.dtype)
            return numpy_indexing.masked_assign(self._ctx, self, mask, value)
        if numpy_indexing.is_advanced(self._ctx, index):
            if self._readonly:
                _refuse_write(self, "assignment destination is read-only")
            value = numpy_views.converted_for_assignment(value, self.dtype)
            return numpy_indexing.scatter(self._ctx, self, index, value)
        region, sliced, final, element = numpy_views.parse_index(self.shape, index)
        value = numpy_views.assigned_value(value, self.dtype, final, element)
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
        if self._numpy_scalar and tuple(shape) == ():
            return self
        return numpy_api.call_function(self._ctx, np.reshape, (self, tuple(shape)), {"order": order, "copy": copy})

    def ravel(self, order="C"):
        return numpy_api.call_function(self._ctx, np.ravel, (self,), {"order": order})

    @property
    def flat(self):
        """x.flat: indexing it reads (a copy, as NumPy's flatiter gives) and writes x's points in
        C order (sklearn's `cov.flat[::n + 1] += shrink`, the diagonal). Of an array whose C-order
        ravel is a copy (a Fortran-ordered argument), reads only."""
        from .numpy_views import reshape_kind

        return _Flat(self, reshape_kind(self.shape, self._ctx.strides_of(self._var), (self.size,), True) == "view")

    def flatten(self, order="C"):
        if order != "C":
            raise unsupported(f"flatten(order={order!r})", "only order='C'")
        return Tracer(self._ctx, self._ctx.new_array(self._ctx.reshape_var(self._var, (self.size,))))

    def squeeze(self, axis=None):
        if self._numpy_scalar and axis in (None, ()):
            return self
        return np.squeeze(self, axis)

    def swapaxes(self, axis1, axis2):
        return np.swapaxes(self, axis1, axis2)

    def copy(self, order="C"):
        if order != "C":
            raise unsupported(f"copy(order={order!r})", "only order='C'")
        if self._numpy_scalar:
            return self
        return Tracer(self._ctx, self._ctx.new_array(self._var))

    def __copy__(self):
        """copy.copy and copy.deepcopy of an array: a new array of its values, as NumPy's."""
        return self if self._weak or self._numpy_scalar else self.copy()

    def __deepcopy__(self, memo):
        return self.__copy__()

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

    def view(self, dtype=None, type=None):
        """x.view(): the same elements, writes through it reaching x (x[...], a view of all of
        x); a view as another dtype or type is not traced (a graph break runs NumPy's)."""
        if isinstance(dtype, builtins.type) and issubclass(dtype, np.ndarray):
            dtype, type = None, dtype  # x.view(np.ndarray): the type, as NumPy reads it
        if type is np.ndarray:
            type = None  # (a traced array is NumPy's own ndarray)
        if dtype is not None and np.dtype(dtype) == self.dtype:
            dtype = None  # the same elements: a traced view (writes through it reach x)
        if dtype is not None and type is None:
            view = numpy_views.reinterpreting_view(self._ctx, self, np.dtype(dtype))
            if view is not None:
                return view
        if dtype is not None or type is not None:
            options = {"dtype": dtype} if dtype is not None else {}
            return Tracer.__getattr__(self, "view")(**options, **({"type": type} if type is not None else {}))
        return self[...]

    def fill(self, value):
        """x.fill(v): every element set to v, in place (through a view, into its base)."""
        self[...] = value

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        with user_line_noted(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (its warnings are the next line's, at the user's line)
            # NumPy's errors: a cast `casting` forbids, a bad dtype or order
            np.empty(0, self.dtype).astype(dtype, order=order, casting=casting, subok=subok, copy=copy)
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

    def _set_part(which: str):
        def set_part(self, value):
            # x.real = v writes the part in place, as x.real[...] = v (NumPy's setter)
            if self._weak or self._numpy_scalar:
                raise AttributeError(f"attribute '{which}' of '{type(self.dtype.type(0)).__name__}' objects "
                                     "is not writable")
            if which == "imag" and self.dtype.kind != "c":
                raise TypeError(at_user_line("array does not have imaginary part to set"))
            numpy_complex.part(self._ctx, self, which)[...] = value

        return set_part

    real = property(lambda self: numpy_complex.part(self._ctx, self, "real"), _set_part("real"))
    imag = property(lambda self: numpy_complex.part(self._ctx, self, "imag"), _set_part("imag"))

    def clip(self, min=None, max=None, out=None, **kwargs):
        return np.clip(self, min, max, out=out, **kwargs)

    def round(self, decimals=0, out=None):
        return numpy_api.round_(self._ctx, self, decimals, out)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        if self._numpy_scalar and not axes:
            return self
        return self._ctx.transpose(self, axes or None)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)  # protocol probes (hasattr) must see a plain miss
        if self._weak:
            # A Python number argument's own methods (v.is_integer(), k.bit_length()): Python's,
            # on its value (which makes the argument static, as any Python use of it does).
            python_type = type(self.dtype.type(0).item())
            if not hasattr(python_type, name):
                raise AttributeError(f"'{python_type.__name__}' object has no attribute '{name}'")
            return getattr(self._ctx.concrete(self, f"{python_type.__name__}.{name}").item(), name)
        error = UnsupportedAttributeError(str(unsupported(f"ndarray.{name}")))
        if not callable(getattr(np.ndarray, name, None)):
            raise error
        ctx = self._ctx

        def method(*args, **kwargs):
            # An ndarray method numfuse does not trace (x.fill(0), x.nonzero()): NumPy's, on
            # the real array at a graph break (writing into it where it owns its buffer).
            return untraced(ctx, _call_method(name), (self,) + args, kwargs, error,
                                      f"ndarray.{name} is not traced")

        return method


def _call_method(name: str):
    def call(array, *args, **kwargs):
        return getattr(array, name)(*args, **kwargs)

    call.__name__ = f"ndarray.{name}"
    return call


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


class _View(Tracer, TracedView):
    """A view of another traced array (x.T, x[1:], x.reshape(...)): like a NumPy view it shows
    later updates of its base (`make` builds it from the base's latest version), and writing
    through it writes into the base: `unmap` takes an index map over the view to the base's
    points (viewmaps), so a chain of views composes into one update of the array at the root.
    `unsure` says why writing is refused (NumPy's reshape of a strided argument may copy).
    `rewrite(at, shape, value)`, for a view that is no index map of its base (a complex
    array's .real), writes into the base itself."""

    __slots__ = ("_base", "_make", "_unmap", "_unsure", "_seen", "_shape", "_refusal", "_dtype", "_rewrite")

    def __init__(self, ctx, base: Tracer, shape, make, unmap, readonly=None, unsure=None, refusal=None,
                 dtype=None, rewrite=None):
        self._ctx = ctx
        self._base = base
        self._shape = tuple(shape)  # known without building the view (which binds equations)
        self._make = make
        self._unmap = unmap
        self._unsure = unsure
        self._refusal = refusal  # (what, hint): writes refused outright
        self._rewrite = rewrite
        self._dtype = base.dtype if dtype is None else dtype  # a complex array's .real: its part's
        self._seen = (None, None)
        self._weak = False
        self._numpy_scalar = False
        self._argument = False
        self._view = True
        self._input_position = None
        self._readonly = base._readonly if readonly is None else readonly
        self._indexed_from = None
        if ctx.breaks is not None:
            ctx.breaks.track(self)  # (its real view, should the call go on in NumPy: eager.py)

    @property
    def _aval(self) -> Aval:
        return Aval(self._shape, self._dtype)

    @property
    def _var(self) -> Var:
        base_var = self._base._var
        if self._seen[0] is not base_var:
            self._seen = (base_var, self._make(base_var))
        return self._seen[1]

    def _check_writable(self) -> None:
        # (a view takes its base's read-only flag when made: one made before
        # `x.flags.writeable = False` stays writeable, as NumPy's does)
        if self._readonly:
            raise ValueError(at_user_line("assignment destination is read-only"))
        view = self
        while isinstance(view, _View):  # what numfuse refuses to write through, down the chain
            if view._refusal is not None:
                raise unsupported(*view._refusal)
            if view._unsure is not None:
                raise unsupported(f"writing through a {view._unsure}", _UNSURE_HINT)
            view = view._base

    def _assign_at(self, at, shape, value, through_view: bool = False) -> None:
        if not through_view:
            self._check_writable()
        if self._rewrite is not None:
            self._rewrite(at, shape, value)
            return
        self._base._assign_at(self._unmap(at), shape, value, through_view=True)

