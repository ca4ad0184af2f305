"""NumPy's shape functions written as compositions of what numfuse already traces: flips and
rotations (slices of step -1, transposes), rolls, stacks and splits (concatenate, slices),
tiles, repeats and pads (concatenate, broadcast_to, reshape).

Each handler follows NumPy's own implementation step for step on traced arrays: the calls
below dispatch back into numfuse, so every piece is a view or an elementwise value that fuses
with its producers and consumers. What NumPy would raise comes from NumPy itself, called on a
stand-in that holds at most one element (numpy_views.stand_in) or none, before anything is
traced; NumPy's results that are views (flip, rot90, split) are views here too.

Handlers take the trace context first; they never import the tracer (it imports this module).
"""

from __future__ import annotations

import operator

import numpy as np
from numpy.lib._arraypad_impl import _as_pairs

from ..errors import unsupported, user_line_noted
from .numpy_views import normalize_axis, stand_in
from .traced import is_host_array

# A composition is one concatenate of this many pieces at most (a tile by 1000 would be a
# value of 1000 branches): beyond it, a broadcast that a reshape materializes.
_MAX_PIECES = 64
_UNROLL_REPEATS = 16


def as_array(ctx, x):
    """np.asanyarray(x) of an argument: a traced array itself, a scalar as a 0-d array."""
    t = ctx.as_tracer(ctx.operand(x))
    return ctx.wrap(t._var) if t._weak or t._numpy_scalar else t


def probe(x) -> np.ndarray:
    """A stand-in of x's shape and dtype holding one element, for NumPy's view functions."""
    return stand_in(x.shape, dtype=x.dtype)


def empty_probe(x) -> np.ndarray:
    """A stand-in of x's ndim and dtype, each dimension cut to at most 1 (emptiness kept)."""
    return np.zeros(tuple(min(s, 1) for s in x.shape), x.dtype)


def fresh(x):
    """A new array of x's values (NumPy's functions that copy never return a view)."""
    return x.copy()


# -- flips and rotations: views -----------------------------------------------------------------


def _flip(ctx, m, axis=None):
    m = as_array(ctx, m)
    with user_line_noted():
        np.flip(probe(m), axis)  # NumPy's AxisError for a bad axis
    if axis is None:
        return m[(slice(None, None, -1),) * m.ndim]
    index = [slice(None)] * m.ndim
    for ax in np.lib.array_utils.normalize_axis_tuple(axis, m.ndim):
        index[ax] = slice(None, None, -1)
    return m[tuple(index)]


def _fliplr(ctx, m):
    m = as_array(ctx, m)
    with user_line_noted():
        np.fliplr(probe(m))
    return m[:, ::-1]


def _flipud(ctx, m):
    m = as_array(ctx, m)
    with user_line_noted():
        np.flipud(probe(m))
    return m[::-1, ...]


def _rot90(ctx, m, k=1, axes=(0, 1)):
    m = as_array(ctx, m)
    with user_line_noted():
        np.rot90(probe(m), k, axes)  # NumPy's checks of axes
    axes = tuple(axes)
    k %= 4
    if k == 0:
        return m[:]
    if k == 2:
        return _flip(ctx, _flip(ctx, m, axes[0]), axes[1])
    perm = list(range(m.ndim))
    perm[axes[0]], perm[axes[1]] = perm[axes[1]], perm[axes[0]]
    if k == 1:
        return np.transpose(_flip(ctx, m, axes[1]), perm)
    return _flip(ctx, np.transpose(m, perm), axes[1])


def _roll(ctx, a, shift, axis=None):
    a = as_array(ctx, a)
    if axis is None:
        return _roll(ctx, a.ravel(), shift, 0).reshape(a.shape)
    if hasattr(shift, "_ctx") and shift.ndim == 0:
        shift = operator.index(shift)  # a scalar argument: jit traces again with it static
    elif hasattr(shift, "_ctx"):
        shift = ctx.concrete(shift, "np.roll's shift")  # the shifts pick the points: a graph break
    with user_line_noted():
        axes = np.lib.array_utils.normalize_axis_tuple(axis, a.ndim, allow_duplicate=True)
        pairs = np.broadcast(shift, axes)
        if pairs.ndim > 1:
            raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    shifts = {ax: 0 for ax in range(a.ndim)}
    for sh, ax in pairs:
        shifts[ax] += int(sh)
    result = a
    for ax, sh in shifts.items():
        n = a.shape[ax]
        offset = sh % n if n else 0
        if offset:
            head = [slice(None)] * a.ndim
            tail = [slice(None)] * a.ndim
            head[ax], tail[ax] = slice(n - offset, None), slice(None, n - offset)
            result = np.concatenate((result[tuple(head)], result[tuple(tail)]), axis=ax)
    return fresh(result) if result is a or result._view else result


def _copy(ctx, a, order="K", subok=False):
    if order not in ("K", "A", "C"):
        raise unsupported(f"np.copy(order={order!r})", "only order='C' or 'K'")
    t = ctx.as_tracer(ctx.operand(a))
    # np.copy of a scalar is a 0-d array; of an array, a new array laid out as NumPy lays it.
    return ctx.wrap(ctx.new_array(t._var, "C" if order == "C" else "K"))


# -- stacking and splitting ---------------------------------------------------------------------


def _atleast(ctx, ndmin: int, arys):
    result = []
    for x in arys:
        x = as_array(ctx, x)
        if x.ndim < ndmin:
            if ndmin == 3 and x.ndim == 2:
                x = x[:, :, None]
            elif ndmin == 3 and x.ndim == 1:
                x = x[None, :, None]
            else:
                x = x.reshape((1,) * (ndmin - x.ndim) + x.shape)
        result.append(x)
    return result[0] if len(result) == 1 else tuple(result)


def _atleast_1d(ctx, *arys):
    return _atleast(ctx, 1, arys)


def _atleast_2d(ctx, *arys):
    return _atleast(ctx, 2, arys)


def _atleast_3d(ctx, *arys):
    return _atleast(ctx, 3, arys)


def _each_at_least(ctx, ndmin, tup):
    arrays = _atleast(ctx, ndmin, list(tup))
    return list(arrays) if isinstance(arrays, tuple) else [arrays]


def _hstack(ctx, tup, *, dtype=None, casting="same_kind"):
    arrays = _each_at_least(ctx, 1, tup)
    axis = 0 if arrays and arrays[0].ndim == 1 else 1
    return np.concatenate(arrays, axis, dtype=dtype, casting=casting)


def _vstack(ctx, tup, *, dtype=None, casting="same_kind"):
    return np.concatenate(_each_at_least(ctx, 2, tup), 0, dtype=dtype, casting=casting)


def _dstack(ctx, tup):
    return np.concatenate(_each_at_least(ctx, 3, tup), 2)


def _column_stack(ctx, tup):
    arrays = []
    for v in tup:
        x = as_array(ctx, v)
        if x.ndim < 2:
            x = x.reshape((1,) * (2 - x.ndim) + x.shape).T
        arrays.append(x)
    return np.concatenate(arrays, 1)


def _split_like(numpy_split):
    """np.split and friends: NumPy splits a stand-in (into views, so nothing is allocated), and
    the traced array is cut at the same points along the same axis."""

    def handler(ctx, ary, indices_or_sections, axis=0):
        x = as_array(ctx, ary)
        if not (isinstance(indices_or_sections, (list, tuple)) or is_host_array(indices_or_sections)):
            # A count must be a Python value: a traced one (a scalar argument) raises the
            # TracingError that makes it static, before NumPy dispatches back here with it.
            indices_or_sections = operator.index(indices_or_sections)
        args = (indices_or_sections,) if numpy_split in (np.hsplit, np.vsplit, np.dsplit) else (indices_or_sections, axis)
        with user_line_noted():
            pieces = numpy_split(stand_in(x.shape, dtype=x.dtype), *args)
        if numpy_split is np.hsplit:
            axis = 1 if x.ndim > 1 else 0
        elif numpy_split is np.vsplit:
            axis = 0
        elif numpy_split is np.dsplit:
            axis = 2
        axis = normalize_axis(axis, x.ndim)
        # NumPy's cut points (array_split): the pieces are x[start:stop] along the axis.
        try:
            points = [0] + list(indices_or_sections) + [x.shape[axis]]
        except TypeError:
            each, extras = divmod(x.shape[axis], int(indices_or_sections))
            points = np.cumsum([0] + extras * [each + 1] + (len(pieces) - extras) * [each]).tolist()
        index = [slice(None)] * x.ndim
        result = []
        for start, stop in zip(points[:-1], points[1:]):
            index[axis] = slice(start, stop)
            result.append(x[tuple(index)])
        return result

    return handler


# -- tiles, repeats and pads ---------------------------------------------------------------------


def _copies_along(x, axis: int, count: int, inner: bool):
    """x with each element (inner) or the whole of x (not inner) along `axis` repeated
    `count` times: one concatenate of a few pieces, or a broadcast that a reshape flattens."""
    shape = x.shape
    if count == 0:
        return x[(slice(None),) * axis + (slice(0, 0),)]
    if not inner and count <= _UNROLL_REPEATS:
        return np.concatenate([x] * count, axis)
    split = shape[:axis] + ((shape[axis], 1) if inner else (1, shape[axis])) + shape[axis + 1:]
    y = x.reshape(split)
    joined = shape[:axis] + (shape[axis] * count,) + shape[axis + 1:]
    if inner and count <= _UNROLL_REPEATS:
        return np.concatenate([y] * count, axis + 1).reshape(joined)
    wide = list(split)
    wide[axis + (1 if inner else 0)] = count
    return np.broadcast_to(y, tuple(wide)).reshape(joined)


def _tile(ctx, A, reps):
    x = as_array(ctx, A)
    try:
        tup = tuple(reps)
    except TypeError:
        tup = (reps,)
    tup = tuple(operator.index(r) for r in tup)
    with user_line_noted():
        np.tile(empty_probe(x), tup)  # NumPy's errors (negative repeats)
    d = len(tup)
    if x.ndim < d:
        x = x.reshape((1,) * (d - x.ndim) + x.shape)
    tup = (1,) * (x.ndim - d) + tup
    result = x
    for axis, count in enumerate(tup):
        if count != 1:
            result = _copies_along(result, axis, count, inner=False)
    return fresh(result) if result is x or result._view else result


def _repeat(ctx, a, repeats, axis=None):
    x = as_array(ctx, a)
    if axis is None:
        x, axis = x.ravel(), 0
    with user_line_noted():
        axis = normalize_axis(axis, x.ndim)
    if hasattr(repeats, "_ctx") and getattr(repeats, "ndim", 0):
        raise unsupported("np.repeat with traced repeats", "its result's shape depends on the data")
    counts = np.asarray(operator.index(repeats) if np.ndim(repeats) == 0 else repeats)
    with user_line_noted():
        # NumPy's errors: negative counts, a sequence that does not match the axis.
        np.repeat(np.zeros((0, x.shape[axis]), x.dtype), counts, axis=1)
    n = x.shape[axis]
    if counts.ndim == 0 or counts.size == 1:
        count = int(counts.reshape(-1)[0]) if counts.size else 0
        if count == 1:
            return fresh(x)
        if count == 0 or n == 0:
            return x[(slice(None),) * axis + (slice(0, 0),)].copy()
        return _copies_along(x, axis, count, inner=True)
    # A static sequence of counts: runs of count 1 are slices, larger counts broadcasts.
    pieces, start = [], None
    for i, c in enumerate([int(c) for c in counts] + [0]):
        if c == 1:
            start = i if start is None else start
            continue
        if start is not None:
            pieces.append((start, i, 1))
            start = None
        if c > 1:
            pieces.append((i, i + 1, c))
    if len(pieces) > _MAX_PIECES:
        raise unsupported(f"np.repeat with {len(pieces)} distinct runs of counts",
                          f"numfuse composes at most {_MAX_PIECES} pieces")
    parts = []
    for begin, end, c in pieces:
        index = (slice(None),) * axis + (slice(begin, end),)
        part = x[index]
        if c > 1:
            shape = list(part.shape)
            shape[axis] = c
            part = np.broadcast_to(part, tuple(shape))
        parts.append(part)
    if not parts:
        return x[(slice(None),) * axis + (slice(0, 0),)].copy()
    return fresh(np.concatenate(parts, axis)) if len(parts) > 1 else fresh(parts[0])


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def _pad(ctx, array, pad_width, mode="constant", **kwargs):
    x = as_array(ctx, array)
    if callable(mode) or mode not in _PAD_MODES and mode in ("empty", "linear_ramp", "maximum", "mean", "median", "minimum"):
        raise unsupported(f"np.pad(mode={getattr(mode, '__name__', mode)!r})", f"modes {', '.join(_PAD_MODES)} are")
    values = kwargs.get("constant_values", 0)
    traced_value = hasattr(values, "_ctx")
    checked = dict(kwargs, constant_values=0) if traced_value else kwargs
    with user_line_noted():
        # NumPy's errors: pad widths, modes, keywords, empty axes, constants out of range.
        np.pad(empty_probe(x), pad_width, mode, **checked)
        if isinstance(pad_width, dict):  # {axis: width or (before, after)}, as NumPy reads it
            pairs = [(0, 0)] * x.ndim
            for ax, width in pad_width.items():
                pairs[ax] = (width, width) if isinstance(width, int) else tuple(width)
            pad_width = pairs
        widths = _as_pairs(np.asarray(pad_width), x.ndim, as_index=True)
    if kwargs.get("reflect_type", "even") == "odd":
        raise unsupported("np.pad(reflect_type='odd')", "reflect_type='even' is")
    result = x
    for axis, (left, right) in enumerate(widths):
        left, right = int(left), int(right)
        if not left and not right:
            continue
        if mode == "constant":
            result = _pad_constant(ctx, result, axis, left, right, values, traced_value)
        else:
            result = _pad_from_indices(ctx, result, axis, left, right, mode)
    return fresh(result) if result is x or result._view else result


def _pad_constant(ctx, x, axis, left, right, values, traced_value):
    if traced_value:
        if values.ndim:
            raise unsupported("np.pad with traced constant_values that are an array", "pass a scalar")
        pair = (values, values)
    else:
        pair = _as_pairs(values, x.ndim)[axis]
    parts = []
    for width, value in zip((left, right), pair):
        shape = list(x.shape)
        shape[axis] = width
        if traced_value:
            fill = ctx.convert(value, x.dtype)
        else:
            fill = np.empty((), x.dtype)
            fill[...] = value  # NumPy assigns the value into the padded array
            fill = fill[()]
        parts.append(ctx.broadcast(fill, tuple(shape)))
    return np.concatenate([parts[0], x, parts[1]], axis)


def _pad_from_indices(ctx, x, axis, left, right, mode):
    """Edge, reflect, symmetric, wrap: each padded position along `axis` copies one position
    of x, the one NumPy's pad of np.arange gives; runs of consecutive positions are slices."""
    n = x.shape[axis]
    source = np.pad(np.arange(n), (left, right), mode).tolist()
    runs = []  # (first, step, length)
    for i in source:
        if runs:
            first, step, length = runs[-1]
            if length == 1 and abs(i - first) <= 1:
                runs[-1] = (first, i - first, 2)
                continue
            if i == first + step * length:
                runs[-1] = (first, step, length + 1)
                continue
        runs.append((i, 0, 1))
    if len(runs) > _MAX_PIECES:
        raise unsupported(f"np.pad(mode={mode!r}) of {left}+{right} positions around {n}",
                          f"numfuse composes at most {_MAX_PIECES} pieces; pad in steps or with fewer positions")
    parts = []
    for first, step, length in runs:
        index = [slice(None)] * x.ndim
        if step == 0:
            index[axis] = slice(first, first + 1)
            shape = list(x.shape)
            shape[axis] = length
            parts.append(np.broadcast_to(x[tuple(index)], tuple(shape)))
            continue
        last = first + step * (length - 1)
        stop = last + step
        index[axis] = slice(first, None if stop < 0 else stop, step)
        parts.append(x[tuple(index)])
    return np.concatenate(parts, axis)


def _meshgrid(ctx, *xi, copy=True, sparse=False, indexing="xy"):
    """np.meshgrid: each input raveled, laid along its own axis and broadcast to the grid
    (with indexing='xy' the first two axes swapped, as NumPy's)."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    arrays = [np.ravel(x) for x in xi]
    ndim = len(arrays)
    grid = [a.shape[0] for a in arrays]
    axes = list(range(ndim))
    if indexing == "xy" and ndim > 1:
        axes[0], axes[1] = 1, 0
        grid[0], grid[1] = grid[1], grid[0]
    out = []
    for a, axis in zip(arrays, axes):
        shape = [1] * ndim
        shape[axis] = a.shape[0]
        v = a.reshape(shape)
        if not sparse:
            v = np.broadcast_to(v, tuple(grid))
        out.append(v.copy() if copy else v)
    return tuple(out)


FUNCTIONS = {
    np.meshgrid: _meshgrid,
    np.flip: _flip,
    np.fliplr: _fliplr,
    np.flipud: _flipud,
    np.rot90: _rot90,
    np.roll: _roll,
    np.copy: _copy,
    np.atleast_1d: _atleast_1d,
    np.atleast_2d: _atleast_2d,
    np.atleast_3d: _atleast_3d,
    np.hstack: _hstack,
    np.vstack: _vstack,
    np.dstack: _dstack,
    np.column_stack: _column_stack,
    np.split: _split_like(np.split),
    np.array_split: _split_like(np.array_split),
    np.hsplit: _split_like(np.hsplit),
    np.vsplit: _split_like(np.vsplit),
    np.dsplit: _split_like(np.dsplit),
    np.tile: _tile,
    np.repeat: _repeat,
    np.pad: _pad,
}
