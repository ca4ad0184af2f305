"""Arrays the traced function makes from their indices: np.arange, np.linspace, np.logspace,
np.eye, np.identity, np.tri, np.indices, np.mgrid and np.ogrid (and the masks of np.triu and
np.tril) as values computed from the `iota` primitive (0, 1, ..., n-1) where a kernel reads them,
never constants loaded from memory.

NumPy decides every value: each builder is handed NumPy's own result, and a formula of the
indices is used only where NumPy's evaluation of that same formula gives NumPy's array bit for
bit (the elementwise operations in it are numfuse's, which compute what NumPy computes). Where no
formula does (an arange of a float32 step past 2**24 points, say), the builder returns None and
the array stays a constant of the trace, as before.
"""

from __future__ import annotations

import numpy as np

_ORIGINAL_ARANGE = np.arange  # NumPy's, captured before any trace replaces np.arange


def iota(ctx, n: int):
    """0, 1, ..., n-1 as int64 (the primitive iota): no memory, computed where it is read."""
    return ctx.bind("iota", [], (n,), np.int64)


def _same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and \
        np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def _indices(n_per_axis, make):
    """One int64 index array per axis, shaped to broadcast: axis k's is (1, ..., n_k, ..., 1)."""
    ndim = len(n_per_axis)
    return [make(n).reshape(tuple(n if a == k else 1 for a in range(ndim))) for k, n in enumerate(n_per_axis)]


def from_indices(ctx, array: np.ndarray, formulas):
    """The first of `formulas` (each a function of one int64 index array per axis of `array`,
    written with NumPy's functions, so that it runs on arrays and on traced values alike) whose
    NumPy evaluation is `array` bit for bit, traced over iotas; None where none is."""
    shape = array.shape
    host = _indices(shape, lambda n: _ORIGINAL_ARANGE(n, dtype=np.int64))
    for formula in formulas:
        try:
            with np.errstate(all="ignore"):
                value = np.broadcast_to(np.asarray(formula(*host)), shape)
        except (OverflowError, ValueError, TypeError):
            continue
        if _same_bits(value, array):
            traced = formula(*_indices(shape, lambda n: iota(ctx, n)))
            if traced.dtype != array.dtype:
                traced = traced.astype(array.dtype)
            return traced if traced.shape == shape else np.broadcast_to(traced, shape)
    return None


def _affine(i, start, delta):
    """i * delta + start, without the multiplication by 1 or the addition of 0 (the same values:
    i is never -0)."""
    value = i if delta == 1 else i * delta
    return value if start == 0 else value + start


def _affine_formulas(array: np.ndarray) -> list:
    """start + i * delta, as NumPy's arange fills an array: in its dtype, and for narrower
    floats also in float64, then cast."""
    dt = array.dtype
    first, second = array[0], array[1]
    if dt.kind in "iu":
        start, delta = int(first), int(second) - int(first)
        if not (-2**63 <= start < 2**63 and -2**63 <= delta < 2**63):
            return []
        return [lambda i: _affine(i, np.int64(start), np.int64(delta)).astype(dt)]
    with np.errstate(all="ignore"):
        delta = second - first
        formulas = [lambda i: _affine(i.astype(dt), first, delta)]
        if dt.kind == "f" and dt.itemsize < 8:
            delta64, first64 = np.float64(second) - np.float64(first), np.float64(first)
            formulas.append(lambda i: (i.astype(np.float64) * delta64 + first64).astype(dt))
    return formulas


def arange(ctx, array: np.ndarray, extra_formulas=()):
    """NumPy's 1-D `array` (an arange, a line of a grid) as start + i * delta."""
    if array.ndim != 1 or array.dtype.kind not in "iuf":
        return None
    n = array.shape[0]
    if n < 2:
        return ctx.broadcast(array[0] if n else array.dtype.type(0), (n,))
    return from_indices(ctx, array, list(extra_formulas) + _affine_formulas(array))


def linspace_values(i, start, stop, num: int, endpoint: bool, dtype, dt):
    """np.linspace's values at the int64 indices `i`, computed as NumPy computes them, with
    `start` and `stop` already of the computing dtype `dt` (Python-valued or traced 0-d): the
    value and the step."""
    div = (num - 1) if endpoint else num
    delta = stop - start
    y = i.astype(dt)
    if div > 0:
        step = delta / div
        if isinstance(step, np.generic):  # NumPy chooses by the step's value (gh-5437's denormals)
            y = y / div * delta if step == 0 else y * step
        else:
            y = np.where(step == 0, y / div * delta, y * step)
    else:
        step = np.nan
        y = y * delta
    y = y + start
    if endpoint and num > 1:
        y = np.where(i == num - 1, stop, y)
    if np.issubdtype(dtype, np.integer):
        y = np.floor(y)
    return y.astype(dtype), step


def linspace(ctx, array: np.ndarray, start, stop, num: int, endpoint: bool, dtype):
    """Static-endpoint np.linspace (NumPy's `array`, 1-D) from its indices."""
    if array.ndim != 1:
        return None
    dt = np.result_type(start, stop, 1.0)
    start_dt, stop_dt = dt.type(start), dt.type(stop)
    formula = lambda i: linspace_values(i, start_dt, stop_dt, num, endpoint, array.dtype, dt)[0]  # noqa: E731
    return from_indices(ctx, array, [formula])


def _argument(args, kwargs, position: int, name: str, default):
    return args[position] if len(args) > position else kwargs.get(name, default)


def eye(ctx, array: np.ndarray, args, kwargs, k_position: int = 2):
    """np.eye and np.identity: 1 where column - row == k."""
    if array.ndim != 2:
        return None
    k = int(_argument(args, kwargs, k_position, "k", 0)) if k_position is not None else 0
    return from_indices(ctx, array, [lambda i, j: (j - i == k).astype(array.dtype)])


def tri(ctx, array: np.ndarray, args, kwargs):
    """np.tri: 1 where column - row <= k."""
    if array.ndim != 2:
        return None
    k = int(_argument(args, kwargs, 2, "k", 0))
    return from_indices(ctx, array, [lambda i, j: (j - i <= k).astype(array.dtype)])


def triangle_mask(ctx, rows: int, cols: int, k: int, lower: bool):
    """np.tril's kept points (column - row <= k) or np.triu's (column - row >= k), as bools."""
    i = iota(ctx, rows).reshape(rows, 1)
    j = iota(ctx, cols).reshape(1, cols)
    return (j - i <= k) if lower else (j - i >= k)


def indices(ctx, result, dtype):
    """np.indices: each axis's arange (its dtype's) broadcast over the grid, stacked; sparse,
    each reshaped to its axis."""
    sparse = isinstance(result, tuple)
    lines = []
    shape = tuple(a.shape[k] for k, a in enumerate(result)) if sparse else result.shape[1:]
    for k, n in enumerate(shape):
        line = arange(ctx, _ORIGINAL_ARANGE(n, dtype=dtype))
        if line is None:
            return None
        lines.append(line.reshape(tuple(n if a == k else 1 for a in range(len(shape)))))
    if sparse:
        return tuple(lines)
    if not lines:
        return None
    return np.stack([np.broadcast_to(line, shape) for line in lines])


def _grid_line_formula(key: slice, dtype):
    """nd_grid's values along one axis: i * step + start, with its step for a count (`5j`)."""
    start = 0 if key.start is None else key.start
    step = 1 if key.step is None else key.step
    if isinstance(step, (complex, np.complexfloating)):
        step = int(abs(step))
        if step != 1:
            step = (key.stop - start) / float(step - 1)
    return lambda i: (i.astype(dtype) * step + start).astype(dtype)


def grid(ctx, result, key, sparse: bool):
    """np.mgrid[key] (dense: one array, the axes stacked) or np.ogrid[key] (sparse: a tuple),
    NumPy's `result`, from each axis's line."""
    if isinstance(key, slice):
        return arange(ctx, result, [_grid_line_formula(key, result.dtype)])
    if not sparse:
        # NumPy's dense grid is one array, and code unpacks it and reshapes the parts in place
        # (Xi, Yi = np.mgrid[...]; Xi.shape = n): views numfuse cannot reshape in place. It
        # stays NumPy's own array, as np.mgrid made it before numfuse traced it.
        return None
    keys = tuple(key)
    arrays = list(result) if sparse else [result[k] for k in range(len(keys))]
    ndim = len(keys)
    traced = []
    for k, (part, slice_k) in enumerate(zip(arrays, keys)):
        if not isinstance(slice_k, slice):
            return None
        if not part.size:
            return None
        line = part[tuple(slice(None) if a == k else 0 for a in range(ndim))]
        value = arange(ctx, np.ascontiguousarray(line), [_grid_line_formula(slice_k, part.dtype)])
        if value is None:
            return None
        value = value.reshape(tuple(-1 if a == k else 1 for a in range(ndim)))
        traced.append(value if sparse else np.broadcast_to(value, part.shape))
    return tuple(traced) if sparse else np.stack(traced)
