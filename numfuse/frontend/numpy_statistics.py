"""NumPy's norms, order statistics and covariances on traced values, written as NumPy writes
them: from reductions, products (numpy_products.py) and a sort. np.median and np.percentile sort
along the axis (a library call) and read the middle or the two neighbouring ranks, which fuse
into the kernel after the sort; np.linalg.norm's matrix 2-norm and nuclear norm take singular
values. Each result has NumPy's dtype: NumPy, run on a tiny stand-in, decides it.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ..errors import at_user_line, unsupported, user_line_noted
from .traced import TracedArray, is_traced_value


def _tracer(ctx, a):
    return ctx.as_tracer(ctx.operand(a))


def _result_dtype(fn, t, *args, **kwargs):
    with np.errstate(all="ignore"), user_line_noted():
        return np.asarray(fn(np.ones((2,) * max(t.ndim, 1), t.dtype), *args, **kwargs)).dtype


# -- norms ----------------------------------------------------------------------------------------


def norm(ctx, x, ord=None, axis=None, keepdims=False):
    t = _tracer(ctx, x)
    if t.dtype.kind not in "fc":
        t = t.astype(float)  # NumPy: integers are normed in float64
    if axis is None and ord is None:
        if t.dtype.kind == "c":
            s = t.real * t.real + t.imag * t.imag
        else:
            s = t * t
        result = np.sqrt(np.sum(s))
        return np.reshape(result, (1,) * t.ndim) if keepdims else result
    if axis is None:
        axis = tuple(range(t.ndim))
    axes = normalize_axis_tuple(axis, t.ndim)
    if len(axes) == 1:
        return _vector_norm(t, ord, axes[0], keepdims)
    if len(axes) == 2:
        return _matrix_norm(ctx, t, ord, axes, keepdims)
    raise ValueError(at_user_line("Improper number of dimensions to norm."))


def _vector_norm(t, ord, axis, keepdims):
    a = np.abs(t)
    if ord is None or ord == 2:
        s = (t.real * t.real + t.imag * t.imag) if t.dtype.kind == "c" else t * t
        return np.sqrt(np.sum(s, axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return np.max(a, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return np.min(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return np.sum(t != 0, axis=axis, keepdims=keepdims).astype(t.real.dtype)
    if ord == 1:
        return np.sum(a, axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(at_user_line(f"Invalid norm order '{ord}' for vectors"))
    ord = float(ord)
    absx = a ** ord
    return np.sum(absx, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def _matrix_norm(ctx, t, ord, axes, keepdims):
    row, col = axes
    if row == col:
        raise ValueError(at_user_line("Duplicate axes given."))
    if ord in (2, -2, "nuc"):
        moved = np.moveaxis(t, (row, col), (-2, -1))
        s = np.linalg.svd(moved, compute_uv=False)
        result = np.max(s, axis=-1) if ord == 2 else np.min(s, axis=-1) if ord == -2 else np.sum(s, axis=-1)
    elif ord in (None, "fro"):
        s = (t.real * t.real + t.imag * t.imag) if t.dtype.kind == "c" else t * t
        result = np.sqrt(np.sum(s, axis=axes))
    elif ord in (1, -1):
        if col > row:
            col -= 1
        summed = np.sum(np.abs(t), axis=row)
        result = np.max(summed, axis=col) if ord == 1 else np.min(summed, axis=col)
    elif ord in (np.inf, -np.inf):
        if row > col:
            row -= 1
        summed = np.sum(np.abs(t), axis=col)
        result = np.max(summed, axis=row) if ord == np.inf else np.min(summed, axis=row)
    else:
        raise ValueError(at_user_line("Invalid norm order for matrices."))
    if keepdims:
        shape = list(t.shape)
        shape[axes[0]] = shape[axes[1]] = 1
        result = np.reshape(result, tuple(shape))
    return result


# -- order statistics -------------------------------------------------------------------------------


def _single_axis(t, axis, name):
    if axis is None:
        return np.ravel(t), 0
    axes = normalize_axis_tuple(axis, t.ndim)
    if len(axes) != 1:
        raise unsupported(f"{name} over several axes", "reduce over one axis, or reshape first")
    return t, axes[0]


def _take(t, axis, index):
    key = [slice(None)] * t.ndim
    key[axis] = index
    return t[tuple(key)]


def median(ctx, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    if out is not None:
        raise unsupported("np.median(..., out=...)")
    t = _tracer(ctx, a)
    dtype = _result_dtype(np.median, t)
    x, ax = _single_axis(t, axis, "np.median")
    n = x.shape[ax]
    if n == 0:
        raise unsupported("np.median of an empty axis")
    ordered = np.sort(x, axis=ax)
    middle = _take(ordered, ax, slice((n - 1) // 2, n // 2 + 1))
    result = np.mean(middle, axis=ax)
    if x.dtype.kind in "fc":
        # NumPy sorts NaNs last: a NaN anywhere in a slice makes its median NaN.
        result = np.where(np.isnan(_take(ordered, ax, n - 1)), np.nan, result).astype(result.dtype)
    result = result.astype(dtype) if result.dtype != dtype else result
    return ctx.numpy_scalar(_keep(t, result, axis, keepdims))


def _keep(t, result, axis, keepdims):
    if not keepdims:
        return result
    if axis is None:
        return np.reshape(result, (1,) * t.ndim)
    return np.expand_dims(result, normalize_axis_tuple(axis, t.ndim))


def _lerp(a, b, t):
    """NumPy's _lerp: a + (b - a) t, from the nearer end (its rounding, exactly)."""
    diff = b - a
    return np.where(t >= 0.5, b - diff * (1 - t), a + diff * t)


def quantile(ctx, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
             weights=None, interpolation=None, _scale=1.0, _name="np.quantile"):
    if out is not None or weights is not None or interpolation is not None:
        raise unsupported(f"{_name}(..., out=, weights= or interpolation=)")
    if method != "linear":
        raise unsupported(f"{_name}(method={method!r})", "the default method='linear' is traced")
    t = _tracer(ctx, a)
    if isinstance(q, TracedArray):
        # Its value picks the points read: a scalar argument becomes static (traced again with
        # its value), a computed q is a graph break. NumPy keeps a NumPy scalar's dtype.
        passed = getattr(q, "_passed_as", None)
        value = ctx.concrete(q, f"{_name}'s q")
        q = passed(value.item()) if passed in (bool, int, float) else value[()] if value.ndim == 0 else value
    elif not isinstance(q, (int, float, list, tuple, np.ndarray, np.generic)) or any(
            is_traced_value(v) for v in np.ravel(np.asarray(q, dtype=object))):
        raise unsupported(f"{_name} with a traced q", "pass q as a Python number or list")
    with user_line_noted():
        numpy_fn = np.percentile if _scale != 1.0 else np.quantile
        dtype = np.asarray(numpy_fn(np.ones(2, t.dtype), q)).dtype  # raises NumPy's error for a bad q
    # In q's dtype, as NumPy computes the index and the weight (float64 for Python numbers and
    # integers; a float32 q's point 0.3 * 9 is float32's).
    qs = np.true_divide(q, _scale) if _scale != 1.0 else np.asarray(q)
    if qs.dtype.kind != "f":
        qs = qs.astype(np.float64)
    x, ax = _single_axis(t, axis, _name)
    n = x.shape[ax]
    ordered = np.sort(x, axis=ax)
    if ordered.dtype.kind in "biu":
        ordered = ordered.astype(np.float64)
    results = []
    for value in np.ravel(qs):
        virtual = (n - 1) * value
        lo = int(np.floor(virtual))
        hi = min(lo + 1, n - 1)
        gamma = virtual - lo
        below, above = _take(ordered, ax, lo), _take(ordered, ax, hi)
        # NumPy's gamma has q's dtype: the array's for a Python float, float64 for a list.
        gamma = dtype.type(gamma)
        value_at = _lerp(below, above, gamma)
        if x.dtype.kind == "f":
            value_at = np.where(np.isnan(_take(ordered, ax, n - 1)), np.nan, value_at)
        results.append(_keep(t, value_at.astype(dtype), axis, keepdims))
    if np.ndim(qs) == 0:
        return ctx.numpy_scalar(results[0])
    return np.reshape(np.stack(results), np.shape(qs) + results[0].shape)


def percentile(ctx, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
               weights=None, interpolation=None):
    return quantile(ctx, a, q, axis, out, overwrite_input, method, keepdims, weights=weights,
                    interpolation=interpolation, _scale=100.0, _name="np.percentile")


# -- covariance -----------------------------------------------------------------------------------


def cov(ctx, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    if fweights is not None or aweights is not None:
        raise unsupported("np.cov(..., fweights= or aweights=)")
    t = _tracer(ctx, m)
    if t.ndim > 2:
        raise ValueError(at_user_line("m has more than 2 dimensions"))
    result_dtype = np.result_type(t.dtype, np.float64) if dtype is None else np.dtype(dtype)
    x = np.reshape(t, (1, -1)) if t.ndim < 2 else t
    x = x.astype(result_dtype)
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if y is not None:
        other = _tracer(ctx, y)
        other = (np.reshape(other, (1, -1)) if other.ndim < 2 else other).astype(result_dtype)
        if not rowvar and other.shape[0] != 1:
            other = other.T
        x = np.concatenate((x, other), axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    fact = max(x.shape[1] - ddof, 0)
    centred = x - np.mean(x, axis=1, keepdims=True)
    c = np.matmul(centred, np.conjugate(centred).T) if centred.dtype.kind == "c" else np.matmul(centred, centred.T)
    # NumPy multiplies by 1 / fact (inf where there are no degrees of freedom left).
    c = c * (1.0 / fact if fact else np.inf)
    return np.reshape(c, ()) if c.shape == (1, 1) else c


def corrcoef(ctx, x, y=None, rowvar=True, *, dtype=None):
    c = cov(ctx, x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = _diagonal(c)
    stddev = np.sqrt(d.real if d.dtype.kind == "c" else d)
    c = c / stddev[:, None]
    c = c / stddev[None, :]
    return np.clip(c, -1, 1) if c.dtype.kind != "c" else c


def _diagonal(c):
    """The diagonal of a square traced matrix, as a strided view of its flat form."""
    n = c.shape[0]
    return np.ravel(c)[:: n + 1]


FUNCTIONS = {
    np.linalg.norm: norm,
    np.median: median,
    np.quantile: quantile,
    np.percentile: percentile,
    np.cov: cov,
    np.corrcoef: corrcoef,
}


def nanmedian(ctx, a, axis=None, out=None, overwrite_input=False, keepdims=np._NoValue):
    """NumPy's nanmedian: the median of each slice's values that are not NaN. NumPy sorts NaNs
    last, so with k such values the middle ones are at ranks (k - 1) // 2 and k // 2 of the
    sorted slice, read by a gather; a slice of NaNs only (k = 0) reads a NaN."""
    if out is not None:
        raise unsupported("np.nanmedian(..., out=...)")
    keepdims = False if keepdims is np._NoValue else keepdims
    t = _tracer(ctx, a)
    dtype = _result_dtype(np.nanmedian, t)
    if t.dtype.kind not in "fc":
        return median(ctx, t, axis=axis, keepdims=keepdims)  # no NaN to skip
    x, ax = _single_axis(t, axis, "np.nanmedian")
    ordered = np.sort(x, axis=ax)
    count = np.sum(np.logical_not(np.isnan(x)), axis=ax, keepdims=True)
    low = np.take_along_axis(ordered, (count - 1) // 2, axis=ax)
    high = np.take_along_axis(ordered, count // 2, axis=ax)
    result = np.squeeze(np.mean(np.concatenate([low, high], axis=ax), axis=ax, keepdims=True), axis=ax)
    result = result.astype(dtype) if result.dtype != dtype else result
    return ctx.numpy_scalar(_keep(t, result, axis, keepdims))


FUNCTIONS[np.nanmedian] = nanmedian
