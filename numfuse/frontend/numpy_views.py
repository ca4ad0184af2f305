"""Views: basic indexing, reshapes, axis moves and broadcast_to on traced values, and item
assignment (`a[idx] = v`) as a functional `update`.

Every rule runs NumPy itself on a stand-in that holds no memory (`np.lib.stride_tricks.as_strided`
over one element), so NumPy decides result shapes, axis permutations and errors (IndexError,
"cannot reshape", bad axes). A stand-in with a value's notional strides says whether NumPy's
reshape would be a view (`np.reshape(..., copy=False)`); when it would copy, the reshape's
operand is materialized first (`reshape[copy=True]`).

Structural primitives (lower.py evaluates them by mapping indices; nothing is copied):

    slice[start step drop] a      operand dimension k read at start[k] + step[k] * i, or at
                                  start[k] where an integer index dropped it
    reshape[shape copy] a         row-major reshape (also newaxis, expand_dims, squeeze, ravel)
    update[at shape] a v          a with the points `at` (viewmaps.At: an index into a for each
                                  point of a region of `shape`) replaced by v

Writing through a view (`a.T[0] = v`, `a.reshape(4, 6)[1] = v`, `a[:, None][2] = v`) is one
update of the array the views were taken of: proxy.py composes `at` through each view's map
(viewmaps). A reshape or ravel that NumPy returns as a copy is a new array, and writing into it
leaves the original alone, as in NumPy.
"""

from __future__ import annotations

import functools
import operator

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..ir import viewmaps
from ..ir.graph import Var
from ..errors import LayoutError, at_user_line, unsupported, user_line_noted


def stand_in(shape, strides=None, dtype=np.float64) -> np.ndarray:
    """An array of `shape` and element `strides` (default: all 0) that holds one element.
    Read-only, so one is shared by every view of that shape (views are made at most
    operations of a trace, and as_strided costs more than finding one)."""
    return _stand_in(tuple(shape), None if strides is None else tuple(strides), np.dtype(dtype))


@functools.lru_cache(maxsize=1024)
def _stand_in(shape, strides, dtype) -> np.ndarray:
    strides = (0,) * len(shape) if strides is None else strides
    return as_strided(np.zeros(1, dtype), tuple(shape), tuple(s * dtype.itemsize for s in strides), writeable=False)


def c_strides(shape) -> tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def _bound(part):
    """A slice bound as an int: a traced one is one from Python int arguments (made static) or
    from data (its value from a graph break)."""
    if part is None or isinstance(part, (int, np.integer)):
        return part
    if hasattr(part, "_ctx") and part.ndim == 0 and part.dtype.kind in "iub":
        return operator.index(part)
    if not hasattr(part, "_ctx"):  # NumPy's error for x[1.5:]
        raise TypeError(at_user_line("slice indices must be integers or None or have an __index__ method"))
    raise unsupported(f"a slice bound of type {type(part).__name__}", "slice with ints")


def _check_basic(index) -> tuple:
    if not isinstance(index, tuple):
        index = (index,)
    if any(isinstance(item, slice) and any(p is not None and not isinstance(p, (int, np.integer))
                                           for p in (item.start, item.stop, item.step)) for item in index):
        index = tuple(slice(_bound(i.start), _bound(i.stop), _bound(i.step)) if isinstance(i, slice) else i
                      for i in index)
    for item in index:
        if item is None or item is Ellipsis or isinstance(item, slice):
            continue
        if isinstance(item, (float, complex, str, bytes, np.floating, np.complexfloating)):
            # NumPy's own error (x[1.5]), raised at the user's line.
            raise IndexError(at_user_line(
                "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
                "boolean arrays are valid indices"))
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, (int, np.integer)):
            raise unsupported(
                f"indexing with {type(item).__name__} (advanced indexing)",
                "basic indexing works: ints, slices, None and ...",
            )
    return index


def parse_index(shape, index):
    """NumPy's basic indexing of an array of `shape`: ((start, step, drop) per dimension, the
    shape after slicing, the result's shape with np.newaxis dimensions, whether NumPy returns
    a scalar)."""
    index = _check_basic(index)
    probe = stand_in(shape)
    with user_line_noted():
        result = probe[index]
    scalar = isinstance(result, np.generic)
    count = sum(1 for i in index if i is not None and i is not Ellipsis)
    expanded = []
    for item in index:
        if item is Ellipsis:
            expanded.extend([slice(None)] * (len(shape) - count))
        else:
            expanded.append(item)
    expanded.extend([slice(None)] * (len(shape) - sum(1 for i in expanded if i is not None)))
    start, step, drop, sliced = [], [], [], []
    k = 0
    for item in expanded:
        if item is None:
            continue
        if isinstance(item, slice):
            first, stop, stride = item.indices(shape[k])
            length = len(range(first, stop, stride))
            start.append(first if length else 0)
            step.append(stride)
            sliced.append(length)
        else:
            i = operator.index(item)
            start.append(i + shape[k] if i < 0 else i)
            step.append(1)
            drop.append(k)
        k += 1
    return (tuple(start), tuple(step), tuple(drop)), tuple(sliced), tuple(result.shape), scalar


def index_unmap(region, sliced, final):
    """The map from a point of `array[index]` (of shape `final`, np.newaxis dimensions
    included) to the array's point, for parse_index's region and shapes."""
    start, step, drop = region
    return lambda imap: viewmaps.slice_operand(start, step, drop, viewmaps.reshape_operand(sliced, final, imap))




def reshape_target(shape, newshape) -> tuple[int, ...]:
    """NumPy's result shape (with -1 resolved), or its error."""
    if isinstance(newshape, (int, np.integer)):
        newshape = (newshape,)
    size = int(np.prod(shape, dtype=np.int64))
    with user_line_noted():
        return tuple(stand_in((size,)).reshape(tuple(operator.index(s) for s in newshape)).shape)


def is_view_reshape(shape, strides, newshape) -> bool:
    """Whether NumPy reshapes an array of these element strides without a copy."""
    try:
        np.reshape(stand_in(shape, strides), newshape, copy=False)
    except ValueError:
        return False
    return True


def reshape_kind(shape, strides, newshape, ravel: bool = False) -> str:
    """"view" or "copy": what NumPy's reshape (or, with `ravel`, ravel: a view only of a
    C-contiguous array) of an array of these element strides returns; "unknown" when the
    strides are unknown (None: a strided argument's) and the answer depends on them."""
    if not ravel and [s for s in shape if s != 1] == [s for s in newshape if s != 1]:
        return "view"  # only size-one dimensions come or go: a view whatever the strides
    if strides is None:
        return "unknown"
    if ravel:
        return "view" if stand_in(shape, strides).flags.c_contiguous else "copy"
    return "view" if is_view_reshape(shape, strides, newshape) else "copy"


def c_ordered(shape, strides) -> bool:
    """Whether what NumPy computes from an array of these strides is laid out in C order (NumPy
    lays a result out like its operands): the axes that move (size above one, stride not 0)
    have decreasing |strides|. False for unknown strides (None)."""
    if strides is None:
        return False
    moving = [abs(s) for n, s in zip(shape, strides) if n > 1 and s != 0]
    return all(a >= b for a, b in zip(moving, moving[1:]))


def c_contiguous(shape, strides) -> bool:
    return strides is not None and stand_in(shape, strides).flags.c_contiguous


def f_strides(shape) -> tuple[int, ...]:
    return tuple(reversed(c_strides(tuple(reversed(shape)))))


def permutation(fn, ndim: int, *args) -> tuple[int, ...]:
    """The axis permutation NumPy's `fn` (swapaxes, moveaxis) makes, and its errors."""
    probe = as_strided(np.zeros(1, np.uint8), (1,) * ndim, tuple(range(1, ndim + 1)), writeable=False)
    with user_line_noted():
        result = fn(probe, *args)
    return tuple(s - 1 for s in result.strides)


def value_into(region_shape, value_shape) -> tuple[int, ...]:
    """The shape a value assigned into a region takes: NumPy drops its leading size-one
    dimensions, then broadcasts it to the region."""
    shape = tuple(value_shape)
    while len(shape) > len(region_shape) and shape[0] == 1:
        shape = shape[1:]
    try:
        if np.broadcast_shapes(shape, region_shape) != tuple(region_shape):
            raise ValueError
    except ValueError:
        raise ValueError(
            at_user_line(
                f"could not broadcast input array from shape {_shape_text(value_shape)} into shape "
                f"{_shape_text(region_shape)}"
            )
        ) from None
    return shape


def _shape_text(shape) -> str:
    """A shape as NumPy's messages write it: (2,3), (3,), ()."""
    sizes = ",".join(str(s) for s in shape)
    return f"({sizes},)" if len(shape) == 1 else f"({sizes})"


def assigned_value(raw, dtype, region_shape, element: bool):
    """The value NumPy writes when `raw` (as the user wrote it) is assigned into a region of an
    array of `dtype`, with NumPy's refusals. Into one element (every index an integer) NumPy
    converts it as one item, which a 0-d array of the dtype shows: a sequence is an error in a
    float or int array (each its own) and its truth value in a bool one. A (nested) list or
    tuple deeper than the region has dimensions is an error, even where its extra dimensions
    have size one (an array may have them)."""
    depth = _depth(raw)
    if element and depth > 0:
        item = np.empty((), dtype)
        plain = isinstance(raw, (list, tuple)) and _plain(raw) or type(raw) is np.ndarray
        shape = (len(raw),) if isinstance(raw, (list, tuple)) else tuple(raw.shape)
        probe = raw if plain else np.zeros(shape, getattr(raw, "dtype", np.float64))
        with user_line_noted():
            item[()] = probe  # NumPy's error, or its item
        if not plain:
            raise unsupported("assigning a traced array into one element of a bool array",
                              "NumPy writes its truth value: write bool(v) or v.any()")
        return item
    if isinstance(raw, (list, tuple)) and depth > len(region_shape):
        raise ValueError(at_user_line(
            "setting an array element with a sequence. The requested array would exceed the maximum number of "
            f"dimension of {len(region_shape)}."))
    return converted_for_assignment(raw, dtype)


def _depth(value) -> int:
    if isinstance(value, (list, tuple)):
        return 1 + max((_depth(v) for v in value), default=0)
    return int(getattr(value, "ndim", 0))


def converted_for_assignment(value, dtype):
    """`value` as NumPy's assignment into an array of `dtype` converts it, where it holds what
    only assignment converts (None, a str or bytes, nested in lists or tuples of Python values):
    an array of `dtype` (None is NaN in a float array, "1.5" is 1.5), or NumPy's error (None
    into an int array). Any other value is returned as it is."""
    if not _converted_item_by_item(value):
        return value
    try:
        shape = np.shape(value)
    except ValueError:
        return value  # ragged: the operand's own refusal says so
    converted = np.empty(shape, dtype)
    with user_line_noted():
        converted[...] = value
    return converted


def _converted_item_by_item(value) -> bool:
    """None, a str or bytes, or a (nested) list or tuple of Python values holding one."""
    if value is None or isinstance(value, (str, bytes)):
        return True
    return isinstance(value, (list, tuple)) and _plain(value) and any(_converted_item_by_item(v) for v in value)


def _plain(value) -> bool:
    """A (nested) list or tuple of Python values only."""
    return all(_plain(v) if isinstance(v, (list, tuple)) else
               v is None or isinstance(v, (str, bytes, bool, int, float, complex)) for v in value)


# -- NumPy functions (reached through __array_function__; see numpy_api.FUNCTIONS) -------------


def _tracer(ctx, a):
    return ctx.as_tracer(ctx.operand(a))


def reshape(ctx, a, shape=None, order="C", *, newshape=None, copy=None):
    x = _tracer(ctx, a)
    if order == "A" and (x.ndim < 2 or ctx.c_contiguous(x._var)):
        order = "C"  # (NumPy's 'A' is 'C' for an array that is not Fortran-contiguous)
    elif order == "A":
        raise layout_refusal("reshape(order='A')", "its order is the memory layout's")
    if order != "C":
        raise unsupported(f"reshape(order={order!r})", "only order='C'")
    target = reshape_target(x.shape, newshape if shape is None else shape)
    if copy:
        return ctx.wrap(ctx.reshape_var(x._var, target))
    result = ctx.reshaped(x, target)
    if copy is False and not result._view and target != x.shape:
        raise ValueError(at_user_line("Unable to avoid creating a copy while reshaping."))
    return result


def ravel(ctx, a, order="C"):
    if order not in ("C", "F", "K", "A"):
        raise unsupported(f"ravel(order={order!r})", "only order='C', 'F', 'A' or 'K'")
    x = _tracer(ctx, a)
    strides = ctx.strides_of(x._var)
    fortran = strides is not None and x.ndim > 1 and stand_in(x.shape, strides).flags.f_contiguous
    if order == "F" or order in ("A", "K") and fortran and not ctx.c_contiguous(x._var):
        # Column-major order is the reversed axes' row-major order, a view exactly where NumPy's
        # is one (x is Fortran-contiguous, its transpose C-contiguous).
        return ctx.reshaped(np.transpose(x), (x.size,), ravel=True)
    if order == "K" and x.ndim > 1 and not ctx.c_contiguous(x._var) or \
            order == "A" and x.ndim > 1 and strides is None:
        # NumPy then reads the array in its memory order: strides numfuse does not always know
        # (what NumPy computes from a transposed array is laid out like it).
        raise layout_refusal(f"ravel(order={order!r}) of an array neither C- nor Fortran-contiguous, or of "
                             "a layout numfuse does not know", "its order is the memory layout's")
    return ctx.reshaped(x, (x.size,), ravel=True)


def layout_refusal(what: str, why: str) -> LayoutError:
    return LayoutError(str(unsupported(what, f"{why}; make the array C-contiguous first with "
                                             "np.ascontiguousarray(x), or use order='C'")))


def expand_dims(ctx, a, axis):
    x = _tracer(ctx, a)
    with user_line_noted():
        shape = np.expand_dims(stand_in(x.shape), axis).shape
    return ctx.reshaped(x, shape)


def squeeze(ctx, a, axis=None):
    x = _tracer(ctx, a)
    with user_line_noted():
        shape = np.squeeze(stand_in(x.shape), axis).shape
    if shape == x.shape and not (x._weak or x._numpy_scalar):
        return x  # nothing to squeeze: NumPy returns the array itself
    return ctx.reshaped(x, shape)


def swapaxes(ctx, a, axis1, axis2):
    x = _tracer(ctx, a)
    return ctx.permuted(x, permutation(np.swapaxes, x.ndim, axis1, axis2))


def moveaxis(ctx, a, source, destination):
    x = _tracer(ctx, a)
    return ctx.permuted(x, permutation(np.moveaxis, x.ndim, source, destination))


def broadcast_to(ctx, array, shape, subok=False):
    x = _tracer(ctx, array)
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    with user_line_noted():
        shape = np.broadcast_to(stand_in(x.shape), tuple(shape)).shape
    return ctx.broadcast_view(x, shape)


def _joined(ctx, name, arrays, axis, dtype, casting, out):
    if out is not None:
        raise unsupported(f"np.{name}(..., out=...)")
    operands = [ctx.operand(a) for a in arrays]
    if not operands:
        raise ValueError(at_user_line("need at least one array to concatenate"))
    # A Python scalar stands in as itself: NEP 50 lets the arrays' dtype decide.
    probes = [o.stand_in() if o.weak else np.zeros((1,) * len(o.shape), o.dtype) for o in operands]
    with user_line_noted():
        if name == "stack":
            kind = np.stack(probes, axis, dtype=dtype, casting=casting)
        else:
            kind = np.concatenate(probes, axis, dtype=dtype, casting=casting)
    return operands, kind.dtype, kind.ndim


def concatenate(ctx, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """`concatenate[axis]` of the inputs in the result's dtype: one value, that kernels
    evaluate point by point like any elementwise one (each point reads the input whose range
    holds it)."""
    flat_dtype = None
    if axis is None:
        # The dtype of the arrays as passed (a Python scalar among them is weak), then raveled.
        flat_dtype = _joined(ctx, "concatenate", arrays, None, dtype, casting, out)[1]
        arrays = [ravel(ctx, a) for a in arrays]
        axis = 0
    operands, result_dtype, ndim = _joined(ctx, "concatenate", arrays, axis, dtype, casting, out)
    result_dtype = flat_dtype or result_dtype
    axis = normalize_axis(axis, ndim)
    first = operands[0].shape
    for i, o in enumerate(operands[1:], 1):
        for k in range(ndim):
            if k != axis and o.shape[k] != first[k]:
                raise ValueError(at_user_line(
                    "all the input array dimensions except for the concatenation axis must match "
                    f"exactly, but along dimension {k}, the array at index 0 has size {first[k]} "
                    f"and the array at index {i} has size {o.shape[k]}"
                ))
    pieces = [ctx.convert(ctx.as_tracer(o), result_dtype)._var for o in operands]
    return ctx.wrap(ctx.concatenate_var(pieces, axis))


def stack(ctx, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    operands, result_dtype, ndim = _joined(ctx, "stack", arrays, axis, dtype, casting, out)
    axis = normalize_axis(axis, ndim)
    first = operands[0].shape
    if any(o.shape != first for o in operands):
        raise ValueError(at_user_line("all input arrays must have the same shape"))
    shape = list(first)
    shape.insert(axis, 1)
    pieces = [ctx.reshape_var(ctx.convert(ctx.as_tracer(o), result_dtype)._var, shape) for o in operands]
    return ctx.wrap(ctx.concatenate_var(pieces, axis))


def normalize_axis(axis, ndim: int) -> int:
    from numpy.lib.array_utils import normalize_axis_index

    with user_line_noted():
        return normalize_axis_index(operator.index(axis), ndim)


FUNCTIONS = {
    np.reshape: reshape,
    np.ravel: ravel,
    np.expand_dims: expand_dims,
    np.squeeze: squeeze,
    np.swapaxes: swapaxes,
    np.moveaxis: moveaxis,
    np.broadcast_to: broadcast_to,
    np.concatenate: concatenate,
    np.stack: stack,
}


# -- x.view(another dtype of its size): the same bits read as that dtype --------------------------


def _reinterpreted(ctx, var: Var, source: np.dtype, target: np.dtype) -> Var:
    """`var`'s bits as `target` (same itemsize): integers of one size are C casts of each other
    (the same bits); a float is float_bits' signed integer, an integer float_from_bits' float."""
    def convert(v: Var, dtype) -> Var:
        dtype = np.dtype(dtype)
        return v if v.aval.dtype == dtype else ctx.bind("int_bits", [v], v.aval.shape, dtype,
                                                         params=(("dtype", dtype),))._var
    signed = np.dtype(f"i{source.itemsize}")
    if source.kind == "f":
        var = ctx.bind("float_bits", [var], var.aval.shape, signed)._var
    if target.kind == "f":
        return ctx.bind("float_from_bits", [convert(var, signed)], var.aval.shape, target)._var
    return convert(var, target)


def reinterpreting_view(ctx, tracer, dtype: np.dtype):
    """`x.view(dtype)` for another dtype of x's itemsize (float32 and int32 or uint32, int64 and
    uint64, ...): a view whose values are x's bits read as `dtype`, and whose writes write those
    bits into x (numpy-100's `Z.view(np.int32)[:] = Z`, a sign flip by `^= 0x80000000`); None
    where it is not such a view (another size, float16, complex, bool, a scalar)."""
    source = tracer.dtype
    if tracer._weak or tracer._numpy_scalar or source.itemsize != dtype.itemsize or \
            source.kind not in "iuf" or dtype.kind not in "iuf" or \
            ("f" in (source.kind, dtype.kind) and source.itemsize not in (4, 8)):
        return None

    def rewrite(at, shape, value):
        bits = ctx.convert(ctx.as_tracer(ctx.operand(value)), dtype)
        tracer._assign_at(at, shape, ctx.wrap(_reinterpreted(ctx, bits._var, dtype, source)), through_view=True)

    return ctx.view(tracer, lambda var: _reinterpreted(ctx, var, source, dtype), dtype=dtype, rewrite=rewrite)
