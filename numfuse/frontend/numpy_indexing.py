"""NumPy's integer-array (advanced) indexing on traced values: gathers.

`x[idx]`, `x[:, [0, 2]]`, `x[i, j]` with arrays, `x[k]` for a traced integer scalar,
`np.take` and `np.take_along_axis` become one primitive,

    out = gather[axis=a] x i1 ... ik

whose k index arrays (broadcast to one shape B, cast to int64) replace x's axes a .. a+k-1:
out has shape x.shape[:a] + B + x.shape[a+k:]. Kernels evaluate it as an indirect load inside
the fused loop (lower.py): each index is wrapped where negative, as NumPy does, and an index out
of bounds raises NumPy's IndexError through the kernel's error check (ops.RUNTIME_ERRORS).

NumPy's placement rule is kept: advanced indices next to each other put B where they stand;
separated by a slice (or with an integer among them, which counts as an advanced index) B goes
first. Basic indices (slices, None, ...) are applied first, as a view.
"""

from __future__ import annotations

import operator

import numpy as np

from ..errors import at_user_line, unsupported, user_catches, user_line_noted
from .numpy_views import stand_in
from .traced import TracedArray, TracedView, holds_traced
from .untraced import untraced


def _static_mask(item) -> np.ndarray | None:
    """`item` as a boolean array of at least one dimension whose values are known now (a
    NumPy array, a list of bools), else None."""
    if isinstance(item, TracedArray):
        return None  # (which answers isinstance(item, np.ndarray) as NumPy would)
    if isinstance(item, np.ndarray):
        return item if item.dtype == np.bool_ and item.ndim else None
    if not isinstance(item, list) or not item or holds_traced(item):
        return None
    array = np.asarray(item)
    return array if array.dtype == np.bool_ and array.ndim else None


def normal_index(index, shape=None):
    """`index` as NumPy reads it, in the forms numfuse traces: each range a list (NumPy indexes
    with a range as with the sequence of its ints: x[range(1, 4)] is x[[1, 2, 3]]), a boolean
    mask whose values are known now (a list of bools, a NumPy array) its nonzero positions
    (NumPy's own reading of it, once NumPy has checked its shape against `shape`'s axes), and
    a traced boolean mask's trailing full slices dropped (x[mask, :] is x[mask])."""
    if isinstance(index, range):
        return list(index)
    items = index if isinstance(index, tuple) else (index,)
    masks = [_static_mask(item) for item in items]
    if shape is not None and any(m is not None for m in masks):
        # NumPy's IndexError for a mask of the wrong shape (traced parts as zeros of their own)
        probe = tuple(np.zeros(item.shape, item.dtype) if isinstance(item, TracedArray) else item for item in items)
        with user_line_noted():
            stand_in(shape, dtype=np.uint8)[probe if isinstance(index, tuple) else probe[0]]
        index = tuple(part for item, m in zip(items, masks)
                      for part in ((item,) if m is None else m.nonzero()))
    if not isinstance(index, tuple):
        return index
    # (a tuple inside the index is a sequence, as a list: x[:, (0, 2)] is x[:, [0, 2]])
    index = tuple(list(item) if isinstance(item, (range, tuple)) else item for item in index)
    first = index[0] if index else None
    if isinstance(first, (TracedArray, np.ndarray)) and first.dtype.kind == "b":
        while len(index) > 1 and isinstance(index[-1], slice) and index[-1] == slice(None):
            index = index[:-1]
    return index


def is_advanced(ctx, index) -> bool:
    """Whether `index` holds an integer or boolean array (traced, a list, an ndarray)."""

    items = index if isinstance(index, tuple) else (index,)
    for item in items:
        if isinstance(item, TracedArray) or isinstance(item, (list, np.ndarray)):
            return True
    return False


def _index_tracer(ctx, item, axis: int | None = None, size: int | None = None):
    """An index component as an int64 traced array (a list or ndarray as a constant); `axis`
    and `size`: the axis of the indexed array it indexes, and that axis's length."""

    if isinstance(item, TracedArray):
        t = item
    else:
        # (an empty list indexes as an empty int array, as in NumPy)
        array = np.asarray(item) if not (isinstance(item, list) and not item) else np.zeros(0, np.intp)
        if array.dtype == object:
            raise unsupported("an index list that is not of integers")
        t = ctx.as_tracer(ctx.operand(array if array.ndim else array[()]))
    if t.dtype.kind == "b" and t.ndim == 1 and getattr(item, "ndim", 1) == 1 and size is not None:
        # Beside other index parts, NumPy reads a 1-D boolean array as its nonzero positions
        # (x[1, mask], x[rows[:, None], mask]): their number is the data's (a graph break).
        if t.shape[0] != size:
            raise IndexError(at_user_line(
                f"boolean index did not match indexed array along axis {axis}; size of axis is {size} but "
                f"size of corresponding boolean axis is {t.shape[0]}"))
        positions = np.nonzero(item)[0]
        t = positions if isinstance(positions, TracedArray) else ctx.as_tracer(ctx.operand(positions))
    if t.dtype.kind == "b":
        raise unsupported(
            "indexing with a boolean mask (x[mask])",
            "its result's size depends on the data; write np.where(mask, x, fill) to keep the shape",
        )
    if t.dtype.kind not in "iu":
        raise IndexError(at_user_line(
            "arrays used as indices must be of integer (or boolean) type"))
    return ctx.convert(t, np.int64)


def _caught(index) -> bool:
    """An index with traced integer arrays, in a `try` of the user's that catches IndexError:
    NumPy's bounds check must raise there, so the indexing runs at a graph break."""
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, TracedArray) and i.dtype.kind in "iu" for i in items) and user_catches(IndexError)


_CAUGHT = "inside a try that catches IndexError: it runs where Python can catch NumPy's error"


def getitem(ctx, x, index):
    """x[index] for an index with integer arrays (see the module docstring)."""
    if _caught(index):
        return untraced(ctx, operator.getitem, (x, index), {}, unsupported("x[idx] " + _CAUGHT), f"x[idx] {_CAUGHT}",
                        may_write=False)

    items = list(index) if isinstance(index, tuple) else [index]
    # NumPy gives a scalar where every index is an integer (an int, a NumPy scalar or a 0-d
    # integer array) and there is no Ellipsis or np.newaxis: the indexing is then basic.
    integers_only = all((isinstance(i, (int, np.integer)) and not isinstance(i, bool))
                        or (isinstance(i, (TracedArray, np.ndarray)) and i.ndim == 0) for i in items)
    consumed = sum(1 for i in items if i is not None and i is not Ellipsis)
    if consumed > x.ndim:
        raise IndexError(at_user_line(
            f"too many indices for array: array is {x.ndim}-dimensional, but {consumed} were indexed"))
    # Identity, never ==, to find the Ellipsis: == on a traced index records a comparison.
    at = next((k for k, i in enumerate(items) if i is Ellipsis), None)
    if at is not None:
        items[at:at + 1] = [slice(None)] * (x.ndim - consumed)
    items += [slice(None)] * (x.ndim - sum(1 for i in items if i is not None))
    scalars_only = all(isinstance(i, TracedArray) and i.ndim == 0 or isinstance(i, (int, np.integer, slice))
                       or i is None for i in items)
    for item in items:
        if scalars_only and isinstance(item, TracedArray) and item._weak and ctx.breaks is None \
                and ctx.scalar_inputs_behind(item._var):
            operator.index(item)  # a scalar argument: made static, x[k] is then NumPy's view
    # Advanced components (arrays, and ints beside them) become index arrays; the rest is a view.
    advanced_at, arrays, basic = [], [], []
    out_axis = 0  # the axis of the basic view each kept item stands at
    source_axis = 0  # the axis of x it indexes
    for item in items:
        if item is None:
            basic.append(None)
            out_axis += 1
            continue
        if isinstance(item, slice):
            basic.append(item)
        else:
            if isinstance(item, (bool, np.bool_)):
                raise unsupported("indexing with a Python bool beside index arrays")
            advanced_at.append(out_axis)
            arrays.append(_index_tracer(ctx, item, source_axis, x.shape[source_axis]))
            basic.append(slice(None))
        out_axis += 1
        source_axis += 1
    plain = all(isinstance(b, slice) and b == slice(None) for b in basic)
    view = x if plain else x[tuple(basic)]
    shapes = [a.shape for a in arrays]
    try:
        joint = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        # NumPy's own message, from zero-size stand-ins of the index arrays.
        with user_line_noted():
            np.empty((1,) * len(shapes))[tuple(np.zeros(s, np.intp) for s in shapes)]
        raise
    arrays = [a if a.shape == joint else np.broadcast_to(a, joint) for a in arrays]
    consecutive = advanced_at == list(range(advanced_at[0], advanced_at[0] + len(advanced_at)))
    if not consecutive:
        # NumPy puts the broadcast index dimensions first: move the indexed axes there.
        rest = [a for a in range(view.ndim) if a not in advanced_at]
        view = np.transpose(view, advanced_at + rest)
        advanced_at = list(range(len(advanced_at)))
    axis = advanced_at[0]
    shape = view.shape[:axis] + joint + view.shape[axis + len(arrays):]
    result = gather(ctx, view, axis, arrays, shape, numpy_scalar=integers_only)
    if scalars_only:
        # NumPy's x[k] for an integer scalar k is a view; numfuse's gather is a copy, so
        # writing through it (which would change x in NumPy) is refused, never silently lost.
        result._readonly = "writing into x[k] where k is a traced integer"
        result._indexed_from = (x, index)  # (an in-place update is written back: proxy._update_in_place)
    return result


def gather(ctx, x, axis: int, indices, shape, numpy_scalar: bool = True):
    """Record `gather[axis] x indices...` (int64 index arrays of one shape)."""
    for k, i in enumerate(indices):
        if x.shape[axis + k] == 0 and i.size:
            raise IndexError(at_user_line(
                f"index is out of bounds for axis {axis + k} with size 0"))
    atoms = [x._var] + [i._var for i in indices]
    return ctx.bind("gather", atoms, shape, x.dtype, params=(("axis", axis),), numpy_scalar=numpy_scalar and not shape)


def take(ctx, a, indices, axis=None, out=None, mode="raise"):
    if out is not None:
        raise unsupported("np.take(..., out=...)")
    if mode != "raise":
        raise unsupported(f"np.take(mode={mode!r})", "the default mode='raise' is traced")
    x = ctx.as_tracer(ctx.operand(a))
    if axis is None:
        x, axis = np.ravel(x), 0
    from numpy.lib.array_utils import normalize_axis_index

    with user_line_noted():
        axis = normalize_axis_index(int(axis), x.ndim)
    idx = _index_tracer(ctx, indices)
    shape = x.shape[:axis] + idx.shape + x.shape[axis + 1:]
    return ctx.numpy_scalar(gather(ctx, x, axis, [idx], shape))


def take_along_axis(ctx, arr, indices, axis=-1):
    x = ctx.as_tracer(ctx.operand(arr))
    idx = _index_tracer(ctx, indices)
    if axis is None:
        x, axis = np.ravel(x), 0
        if idx.ndim != 1:
            raise ValueError(at_user_line("when axis=None, `indices` must have a single dimension."))
    from numpy.lib.array_utils import normalize_axis_index

    with user_line_noted():
        axis = normalize_axis_index(int(axis), x.ndim)
    if idx.ndim != x.ndim:
        raise ValueError(at_user_line("`indices` and `arr` must have the same number of dimensions"))
    try:
        shape = list(np.broadcast_shapes(tuple(1 if d == axis else s for d, s in enumerate(x.shape)),
                                         tuple(1 if d == axis else s for d, s in enumerate(idx.shape))))
    except ValueError as err:
        raise ValueError(at_user_line(str(err))) from None
    shape[axis] = idx.shape[axis]
    shape = tuple(shape)
    # Every other axis indexes with its own position: x[i0, ..., idx, ..., in] (NumPy's fancy
    # index of aranges), the aranges as small constant index arrays.
    arrays = []
    for d in range(x.ndim):
        if d == axis:
            arrays.append(np.broadcast_to(idx, shape))
        else:
            ar = np.arange(x.shape[d], dtype=np.int64).reshape([-1 if e == d else 1 for e in range(x.ndim)])
            arrays.append(np.broadcast_to(ctx.as_tracer(ctx.operand(ar)), shape))
    return gather(ctx, x, 0, arrays, shape)


FUNCTIONS = {
    np.take: take,
    np.take_along_axis: take_along_axis,
}


# -- writes through a boolean mask -----------------------------------------------------------------


def _select(x, mask):
    """NumPy's x[mask], on real arrays."""
    return x[mask]


def rows_selected(ctx, x, index):
    """x[mask] for a traced mask of x's leading axes (rows chosen by the data): NumPy's array,
    computed at a graph break; None where `index` is no such mask."""

    mask = index[0] if isinstance(index, tuple) and len(index) == 1 else index
    if not isinstance(mask, (TracedArray, np.ndarray)) or mask.dtype.kind != "b" or mask.shape == x.shape:
        return None
    refusal = unsupported("x[mask] with a mask of another shape than x's",
                          "its result's size depends on the data; reduce x[mask] whole with a mask of x's shape")
    return untraced(ctx, _select, (x, mask), {}, refusal, "x[mask] with a mask of x's leading axes",
                    may_write=False)


def _bools(items: list) -> bool:
    """Whether a (nested) list holds Python or NumPy bools only."""
    return bool(items) and all(_bools(v) if isinstance(v, list) else isinstance(v, (bool, np.bool_)) for v in items)


def mask_of(ctx, x, index, reading: bool = False):
    """The traced boolean mask of `x[mask] = v` (a mask of x's shape, or of its leading
    dimensions), or None where `index` is not one."""

    if isinstance(index, tuple) and len(index) == 1:
        index = index[0]
    if isinstance(index, list) and _bools(index):
        index = np.asarray(index)  # a list of bools is a mask, as NumPy reads it
    if isinstance(index, np.ndarray) and index.dtype == bool:
        index = ctx.as_tracer(ctx.operand(index))
    if not isinstance(index, TracedArray) or index.dtype.kind != "b":
        return None
    if reading:
        if index.shape == x.shape:
            return index
        raise unsupported("x[mask] with a mask of another shape than x's",
                          "its result's size depends on the data; reduce x[mask] whole with a mask of x's shape")
    if index.ndim == 0 or index.ndim > x.ndim or index.shape != x.shape[:index.ndim]:
        with user_line_noted():
            np.empty(x.shape)[np.zeros(index.shape, bool)]  # NumPy's IndexError for the shape
        raise IndexError(at_user_line("boolean index did not match indexed array"))
    return np.reshape(index, index.shape + (1,) * (x.ndim - index.ndim))


def masked_assign(ctx, x, mask, value) -> None:
    """x[mask] = value for a value that broadcasts to every selected element (a scalar, or for a
    mask of x's leading dimensions, a row): x = where(mask, value, x), written in place."""
    from .numpy_masked import MaskedSelection

    if isinstance(value, MaskedSelection):
        # x[m] = f(x[m]): the selection's values at the selected points, written back.
        if value.mask._var is not mask._var or value.values.shape != x.shape:
            raise unsupported("x[mask] = a selection of another mask", "use one mask on both sides")
        x[...] = np.where(mask, value.values, x)
        return
    operand = ctx.operand(value)
    rank = _mask_rank(mask, x)
    trailing = x.shape[rank:]
    if operand.shape and tuple(operand.shape) not in ((1,), tuple(trailing)) and int(np.prod(operand.shape)) != 1:
        # One value per selected element: where each goes depends on the data. The selected
        # points come from np.nonzero at a graph break, then a scatter writes them, as NumPy
        # assigns them, in C order (and raises its error for a count that differs).
        selected = int(np.prod(operand.shape[:1] or (1,)))
        points = np.nonzero(np.reshape(mask, mask.shape[:rank]))
        count = int(points[0].shape[0])
        if operand.shape[0] != count and int(np.prod(operand.shape)) != count * int(np.prod(trailing)):
            raise ValueError(at_user_line(
                f"NumPy boolean array indexing assignment cannot assign {selected} input values to the "
                f"{count} output values where the mask is true"))
        scatter(ctx, x, points, value)
        return
    if operand.shape and int(np.prod(operand.shape)) == 1:
        value = np.reshape(value, ())
    x[...] = np.where(mask, _cast_for_assignment(ctx, value, x.dtype), x)


def _cast_for_assignment(ctx, value, dtype):
    """`value` cast into `dtype` as NumPy's item assignment casts it (unsafely; NumPy's own
    errors for a Python int out of range), so that np.where keeps x's dtype."""
    operand = ctx.operand(value)
    if operand.tracer is not None:
        return ctx.convert(operand.tracer, dtype)
    probe = np.empty((1,), dtype)
    with user_line_noted():
        probe[...] = operand.value
    return probe[0]


def _mask_rank(mask, x) -> int:
    """The number of x's leading dimensions the (reshaped) mask selects over."""
    rank = mask.ndim
    while rank > 0 and mask.shape[rank - 1] == 1 and x.shape[rank - 1] != 1:
        rank -= 1
    return rank


def putmask(ctx, a, mask, values):
    x = a
    m = ctx.as_tracer(ctx.operand(mask))
    if m.size != x.size:
        raise ValueError(at_user_line("putmask: mask and data must be the same size"))
    if m.shape != x.shape:
        m = m.reshape(x.shape)  # (NumPy asks for the same size only: the mask is read in C order)
    operand = ctx.operand(values)
    if operand.shape and int(np.prod(operand.shape)) != 1:
        raise unsupported("np.putmask with an array of values", "values repeat along the selected elements in NumPy; pass a scalar")
    masked_assign(ctx, x, m.astype(bool), values)


def copyto(ctx, dst, src, casting="same_kind", where=True):
    s = ctx.operand(src)
    if s.tracer is None:
        probe = s.value
    elif s.weak:  # a Python scalar argument: NumPy casts it by its kind, as a Python value (NEP 50)
        probe = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}[s.dtype.kind]
    else:
        probe = np.empty((0,), s.dtype)
    with user_line_noted():
        np.copyto(np.empty((0,), dst.dtype), probe, casting=casting)
    src_b = src if s.tracer is not None else s.value
    if where is True:
        dst[...] = src_b
        return
    m = ctx.as_tracer(ctx.operand(where))
    dst[...] = np.where(m, _cast_for_assignment(ctx, src_b, dst.dtype), dst)


FUNCTIONS[np.putmask] = putmask
FUNCTIONS[np.copyto] = copyto


# -- writes through index arrays: scatters ----------------------------------------------------------


def scatter(ctx, x, index, value, ufunc: str | None = None, name: str = "x[idx] = v") -> None:
    """x[index] = value (ufunc None), or np.<ufunc>.at(x, index, value): a library call that
    writes into x's buffer in place (library_ops.py's scatter), x then its new version."""
    if _caught(index):
        func = operator.setitem if ufunc is None else getattr(np, ufunc).at
        return untraced(ctx, func, (x, index, value), {}, unsupported(f"{name} {_CAUGHT}"), f"{name} {_CAUGHT}")

    if isinstance(x, TracedView):
        _through_copy(x, lambda copy: scatter(ctx, copy, index, value, ufunc, name))
        return
    items = list(index) if isinstance(index, tuple) else [index]
    at = next((k for k, i in enumerate(items) if i is Ellipsis), None)
    if at is not None:
        items[at:at + 1] = [slice(None)] * (x.ndim - sum(1 for i in items if i is not Ellipsis))
    if len(items) > x.ndim:
        raise IndexError(at_user_line(
            f"too many indices for array: array is {x.ndim}-dimensional, but {len(items)} were indexed"))
    advanced_at = [k for k, i in enumerate(items) if not isinstance(i, slice)]
    if any(isinstance(i, slice) and i != slice(None) for i in items) and not any(i is None for i in items):
        # x[idx, 1:] = v is x[:, 1:][idx] = v: the slices' view, scattered into at the same axes.
        view = x[tuple(i if isinstance(i, slice) else slice(None) for i in items)]
        scatter(ctx, view, tuple(slice(None) if isinstance(i, slice) else i for i in items), value, ufunc, name)
        return
    if any(i is None for i in items) or advanced_at != list(range(advanced_at[0], advanced_at[0] + len(advanced_at))):
        raise unsupported(f"{name} with np.newaxis beside the index arrays, or index arrays apart",
                          "index arrays next to each other, with ':' for the other axes")
    arrays = [_index_tracer(ctx, items[k], k, x.shape[k]) for k in advanced_at]
    try:
        joint = tuple(np.broadcast_shapes(*[a.shape for a in arrays]))
    except ValueError:
        with user_line_noted():
            np.empty((1,) * len(arrays))[tuple(np.zeros(a.shape, np.intp) for a in arrays)]
        raise
    arrays = [a if a.shape == joint else np.broadcast_to(a, joint) for a in arrays]
    axis = advanced_at[0]
    region = x.shape[:axis] + joint + x.shape[axis + len(arrays):]
    operand = ctx.operand(value)
    with user_line_noted():
        # NumPy's own casting rules and errors, on one-element stand-ins.
        # (a Python scalar argument stands in as a Python scalar: NumPy refuses a complex one
        # into a real array, where it casts an array's values with a ComplexWarning)
        stand_in = operand.value if operand.tracer is None else \
            operand.dtype.type(0).item() if operand.weak else np.zeros(1, operand.dtype)
        if ufunc is None:
            np.zeros(1, x.dtype)[[0]] = stand_in
            dtype = x.dtype
        else:
            getattr(np, ufunc).at(np.zeros(1, x.dtype), [0], stand_in)
            # ufunc.at runs NumPy's loop for x and the values as arrays (a Python scalar too, so
            # its own dtype counts), then casts to x's dtype: np.add.at of -1 into uint64 adds in
            # float64. v keeps that loop's dtype.
            dtype = getattr(np, ufunc)(np.zeros(1, x.dtype), np.asarray(stand_in)).dtype
        np.broadcast_shapes(operand.shape, region)
    v = ctx.convert(ctx.as_tracer(operand), dtype)
    write_in_place(ctx, x, "scatter", [v] + arrays, (("axis", axis), ("ufunc", ufunc)))


def _through_copy(view, write) -> None:
    """A scatter (or np.put, np.place) into a traced view: `write` into a copy of the view's
    values, then the copy written back through the view, which NumPy's writes reach its base
    as (a strided view's np.put works on such a copy in NumPy too). The view's own refusals
    (read-only, a reshape that may copy) come first."""
    view._check_writable()  # the view's refusal, before anything is traced for the write
    copy = view.copy()
    write(copy)
    view[...] = copy


def write_in_place(ctx, x, prim: str, operands, params) -> None:
    """x becomes `prim[params] x operands...`, an in-place library call (library_ops.IN_PLACE):
    a new version of x in x's buffer."""
    # A scalar argument (a value, or an int index: z[i] = 1, np.put(x, i, v)) is a kernel
    # argument, not a buffer: the library call reads the value a kernel stores (a convert to
    # its own dtype: a copy).
    operands = [ctx.bind("convert", [a._var], a.shape, a.dtype, params=(("dtype", a.dtype),))
                if ctx.is_scalar_input(a._var) else a for a in operands]
    var = x._var
    if not ctx.owns(x, var):
        var = ctx.copy_var(var)  # this array's own buffer, which the call writes into
        ctx.owner[var] = x
    out = ctx.bind(prim, [var] + [t._var for t in operands], x.shape, x.dtype, params=params)._var
    if var in ctx.strides:
        ctx.strides[out] = ctx.strides[var]  # the same buffer
    root = ctx.family.setdefault(var, var)
    ctx.family[out] = root
    ctx.latest[root] = out
    x._var = out


def put(ctx, a, ind, v, mode="raise"):
    """np.put: values written at flat indices of `a`, in place (NumPy's order and modes)."""

    if not isinstance(a, TracedArray):
        raise unsupported("np.put into an array the function did not receive or make")
    if isinstance(a, TracedView):
        _through_copy(a, lambda copy: put(ctx, copy, ind, v, mode))
        return
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(at_user_line(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})"))
    indices = _index_tracer(ctx, ind)
    values = ctx.convert(ctx.as_tracer(ctx.operand(v)), a.dtype)
    write_in_place(ctx, a, "put", [indices, values], (("mode", mode),))


def place(ctx, arr, mask, vals):
    """np.place: the selected elements set to vals in order, repeated as needed, in place."""

    if not isinstance(arr, TracedArray):
        raise unsupported("np.place into an array the function did not receive or make")
    if isinstance(arr, TracedView):
        _through_copy(arr, lambda copy: place(ctx, copy, mask, vals))
        return
    m = ctx.as_tracer(ctx.operand(mask))
    if m.size != arr.size:
        raise ValueError(at_user_line("place: mask and data must be the same size"))
    values = ctx.convert(ctx.as_tracer(ctx.operand(vals)), arr.dtype)
    write_in_place(ctx, arr, "place", [m.astype(bool), values], ())


_AT_UFUNCS = {np.add: "add", np.subtract: "subtract", np.multiply: "multiply", np.maximum: "maximum",
              np.minimum: "minimum"}


def ufunc_at(ctx, ufunc, args, kwargs):
    name = _AT_UFUNCS.get(ufunc)
    if name is None or kwargs or len(args) != 3:
        raise unsupported(f"np.{ufunc.__name__}.at" + ("" if name else " (add, subtract, multiply, maximum and minimum are traced)"))
    x, index, value = args
    scatter(ctx, x, index if isinstance(index, tuple) else (index,), value, name, f"np.{name}.at")


FUNCTIONS[np.put] = put
FUNCTIONS[np.place] = place
