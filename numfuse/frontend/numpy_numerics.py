"""NumPy's numerical functions written as compositions of what numfuse already traces: products
(outer, ufunc.outer, kron, cross), differences and integrals (diff, gradient, trapezoid),
convolutions (convolve, correlate: a sum of shifted slices, one per tap), comparisons (isclose,
allclose, array_equal), elementwise functions NumPy writes in Python (fix, sinc, angle,
float_power) and diagonals (diagonal, diag, trace).

Each handler follows NumPy's implementation step for step on traced arrays (the calls below
dispatch back into numfuse), so dtypes, Python-scalar promotion (NEP 50) and errors are NumPy's;
where NumPy checks its arguments, it checks them here on stand-ins that hold at most one element.

np.allclose and np.array_equal return a Python bool in NumPy, which needs the values: here they
return the traced answer as a weak traced bool (a Python bool once the kernel ran, promoting as
one in what follows), except where NumPy decides from the shapes alone (np.array_equal of
different shapes is False).

Handlers take the trace context first; they never import the tracer (it imports this module).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from ..errors import at_user_line, unsupported, user_line_noted
from . import numpy_warnings
from .numpy_shapes import as_array, empty_probe, probe

# np.convolve and np.correlate unroll the shorter operand: one shifted slice per element.
MAX_TAPS = 64


def _is_traced(x) -> bool:
    return hasattr(x, "_ctx")


def _as_0d_array(ctx, x):
    """NumPy's functions that write into np.empty(()) return a 0-d array, not a scalar."""
    return ctx.wrap(x._var) if _is_traced(x) and x._numpy_scalar else x


# -- products -----------------------------------------------------------------------------------


def _outer(ctx, a, b, out=None):
    if out is not None:
        raise unsupported("np.outer(..., out=...)")
    a, b = as_array(ctx, a), as_array(ctx, b)
    return np.multiply(a.ravel()[:, None], b.ravel()[None, :])


def ufunc_outer(ctx, ufunc, inputs, kwargs):
    """`ufunc.outer(A, B)`: A's axes, then B's, broadcast against each other (proxy.py's
    __array_ufunc__ sends the method here)."""
    if ufunc.nin != 2:
        raise ValueError(at_user_line("outer product only supported for binary functions"))
    if len(inputs) != 2:
        raise TypeError(at_user_line(f"{ufunc.__name__}.outer() takes exactly 2 arguments ({len(inputs)} given)"))
    a, b = (as_array(ctx, x) for x in inputs)  # ufunc.outer converts both to arrays
    return ufunc(a.reshape(a.shape + (1,) * b.ndim), b, **kwargs)


def _kron(ctx, a, b):
    b = as_array(ctx, b)
    a = as_array(ctx, a)
    if a.ndim < b.ndim:
        a = a.reshape((1,) * (b.ndim - a.ndim) + a.shape)
    nda, ndb = a.ndim, b.ndim
    if nda == 0 or ndb == 0:
        return np.multiply(a, b)
    nd = max(nda, ndb)
    as_ = (1,) * max(0, ndb - nda) + a.shape
    bs = (1,) * max(0, nda - ndb) + b.shape
    a_arr = np.expand_dims(a.reshape(as_), tuple(range(1, nd * 2, 2)))
    b_arr = np.expand_dims(b.reshape(bs), tuple(range(0, nd * 2, 2)))
    return np.multiply(a_arr, b_arr).reshape(tuple(x * y for x, y in zip(as_, bs)))


def _cross(ctx, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa, axisb, axisc = (axis,) * 3
    a, b = as_array(ctx, a), as_array(ctx, b)
    with user_line_noted():
        if a.ndim < 1 or b.ndim < 1:
            raise ValueError("At least one array has zero dimension")
        axisa = normalize_axis_index(axisa, a.ndim, msg_prefix="axisa")
        axisb = normalize_axis_index(axisb, b.ndim, msg_prefix="axisb")
    a, b = np.moveaxis(a, axisa, -1), np.moveaxis(b, axisb, -1)
    na, nb = a.shape[-1], b.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(at_user_line("incompatible dimensions for cross product\n(dimension must be 2 or 3)"))
    if na == 2 or nb == 2:
        numpy_warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of 3-dimensional vectors "
                            "instead. (deprecated in NumPy 2.0)", DeprecationWarning)
    shape = np.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    if na == 3 or nb == 3:
        with user_line_noted():
            axisc = normalize_axis_index(axisc, len(shape) + 1, msg_prefix="axisc")
    dtype = np.promote_types(a.dtype, b.dtype)
    a, b = a.astype(dtype), b.astype(dtype)
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    if na == 2 and nb == 2:
        return _as_0d_array(ctx, np.multiply(a0, b1) - a1 * b0)
    cp2 = np.multiply(a0, b1) - a1 * b0
    if na == 2:  # a2 = 0
        b2 = b[..., 2]
        cp0, cp1 = np.multiply(a1, b2), np.negative(np.multiply(a0, b2))
    elif nb == 2:  # b2 = 0
        a2 = a[..., 2]
        cp0, cp1 = np.negative(np.multiply(a2, b1)), np.multiply(a2, b0)
    else:
        a2, b2 = a[..., 2], b[..., 2]
        cp0, cp1 = np.multiply(a1, b2) - np.multiply(a2, b1), np.multiply(a2, b0) - np.multiply(a0, b2)
    parts = [np.broadcast_to(p, shape) for p in (cp0, cp1, cp2)]
    return np.moveaxis(np.stack(parts, -1), -1, axisc)


# -- differences, gradients, integrals ----------------------------------------------------------


def _diff(ctx, a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    if n == 0:
        return a
    if n < 0:
        raise ValueError(at_user_line("order must be non-negative but got " + repr(n)))
    a = as_array(ctx, a)
    nd = a.ndim
    if nd == 0:
        raise ValueError(at_user_line("diff requires input that is at least one dimensional"))
    with user_line_noted():
        axis = normalize_axis_index(axis, nd)
    combined = []
    for extra in (prepend, None, append):
        if extra is None:
            combined.append(a)
        elif extra is not np._NoValue:
            extra = as_array(ctx, extra)
            if extra.ndim == 0:
                shape = list(a.shape)
                shape[axis] = 1
                extra = np.broadcast_to(extra, tuple(shape))
            combined.append(extra)
    if len(combined) > 1:
        a = np.concatenate(combined, axis)
    later = tuple(slice(1, None) if k == axis else slice(None) for k in range(nd))
    earlier = tuple(slice(None, -1) if k == axis else slice(None) for k in range(nd))
    op = np.not_equal if a.dtype == np.bool_ else np.subtract
    for _ in range(n):
        a = op(a[later], a[earlier])
    return a


def _gradient(ctx, f, *varargs, axis=None, edge_order=1):
    f = as_array(ctx, f)
    N = f.ndim
    with user_line_noted():
        axes = tuple(range(N)) if axis is None else normalize_axis_tuple(axis, N)
    n = len(varargs)
    if n == 0:
        dx = [1.0] * len(axes)
    elif n == 1 and np.ndim(varargs[0]) == 0:
        dx = list(varargs) * len(axes)
    elif n == len(axes):
        dx = list(varargs)
        if any(np.ndim(d) != 0 for d in dx):
            raise unsupported("np.gradient with coordinate arrays", "pass scalar spacings")
    else:
        raise TypeError(at_user_line("invalid number of arguments"))
    if edge_order > 2:
        raise ValueError(at_user_line("'edge_order' greater than 2 not supported"))
    otype = f.dtype
    if otype.kind not in "fc":
        if otype.kind in "iu":
            f = f.astype(np.float64)
        otype = np.dtype(np.float64)

    outvals = []
    for ax, h in zip(axes, dx):
        if f.shape[ax] < edge_order + 1:
            raise ValueError(at_user_line(
                "Shape of array too small to calculate a numerical gradient, "
                "at least (edge_order + 1) elements are required."))

        def at(index, ax=ax):
            # f at `index` along the axis, kept as a dimension of length one (or the slice).
            full = tuple(index if k == ax else slice(None) for k in range(N))
            return f[full] if isinstance(index, slice) else np.expand_dims(f[full], ax)

        interior = (at(slice(2, None)) - at(slice(None, -2))) / (2. * h)
        if edge_order == 1:
            first = (at(1) - at(0)) / h
            last = (at(-1) - at(-2)) / h
        else:
            first = (-1.5 / h) * at(0) + (2. / h) * at(1) + (-0.5 / h) * at(2)
            last = (0.5 / h) * at(-3) + (-2. / h) * at(-2) + (1.5 / h) * at(-1)
        # NumPy writes the three parts into one array of otype.
        outvals.append(np.concatenate([p.astype(otype) for p in (first, interior, last)], ax))
    return outvals[0] if len(axes) == 1 else tuple(outvals)


def _trapezoid(ctx, y, x=None, dx=1.0, axis=-1):
    y = as_array(ctx, y)
    if x is None:
        d = dx
    else:
        x = as_array(ctx, x)
        if x.ndim == 1:
            d = _diff(ctx, x)
            shape = [1] * y.ndim
            shape[axis] = d.shape[0]
            d = d.reshape(shape)
        else:
            d = _diff(ctx, x, axis=axis)
    later = [slice(None)] * y.ndim
    earlier = [slice(None)] * y.ndim
    later[axis] = slice(1, None)
    earlier[axis] = slice(None, -1)
    return (d * (y[tuple(later)] + y[tuple(earlier)]) / 2.0).sum(axis)


# -- convolutions -------------------------------------------------------------------------------


def _identity_zero(dtype):
    """What adding changes nothing: -0.0 (x + -0.0 is x, signed zeros included)."""
    return np.array(complex(-0.0, -0.0) if dtype.kind == "c" else -0.0).astype(dtype)[()]


def _correlation_window(ctx, a, v, conj, start, length):
    """Positions [start, start + length) of the full correlation sum_j a[k - (m-1) + j] *
    v[j] (conjugated with `conj`), len(v) <= len(a): one shifted slice of a per tap of v,
    padded with -0.0 outside its reach."""
    n, m = a.shape[0], v.shape[0]
    zero = _identity_zero(a.dtype)
    total = None
    for j in range(m):
        first = m - 1 - j  # where a[0] * v[j] lands
        i0, i1 = max(start - first, 0), min(start + length - first, n)
        if i1 <= i0:
            continue
        tap = np.conjugate(v[j]) if conj else v[j]
        before = first + i0 - start
        after = length - before - (i1 - i0)
        parts = [a[i0:i1] * tap]
        if before:
            parts.insert(0, ctx.broadcast(zero, (before,)))
        if after:
            parts.append(ctx.broadcast(zero, (after,)))
        term = np.concatenate(parts) if len(parts) > 1 else parts[0]
        total = term if total is None else total + term
    return total


def _convolution(ctx, name, a, v, mode):
    a, v = as_array(ctx, a), as_array(ctx, v)
    with user_line_noted():
        dtype = getattr(np, name)(empty_probe(a), empty_probe(v), mode).dtype
    a, v = (x.reshape((1,)) if x.ndim == 0 else x for x in (a, v))
    mode = {"valid": 0, "same": 1, "full": 2}[mode.lower()] if isinstance(mode, str) else int(mode)
    n, m = a.shape[0], v.shape[0]
    longest, taps = max(n, m), min(n, m)
    if taps > MAX_TAPS:
        raise unsupported(f"np.{name} of two operands of {n} and {m} elements",
                          f"the shorter one is unrolled into one slice per element, at most {MAX_TAPS}")
    a, v = a.astype(dtype, copy=False), v.astype(dtype, copy=False)
    start, length = ((taps - 1, longest - taps + 1), ((taps - 1) // 2, longest), (0, n + m - 1))[mode]
    if name == "convolve":
        if m > n:
            a, v = v, a
        return _correlation_window(ctx, a, v[::-1], False, start, length)
    conj = dtype.kind == "c"
    if n >= m:
        return _correlation_window(ctx, a, v, conj, start, length)
    # a shorter than v: the correlation of v with a, reversed (and conjugated).
    if mode == 1:
        start = taps // 2
    window = _correlation_window(ctx, v, a, conj, n + m - 1 - start - length, length)[::-1]
    return np.conjugate(window) if conj else window


def _convolve(ctx, a, v, mode="full"):
    return _convolution(ctx, "convolve", a, v, mode)


def _correlate(ctx, a, v, mode="valid"):
    return _convolution(ctx, "correlate", a, v, mode)


# -- comparisons --------------------------------------------------------------------------------


def _isclose(ctx, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    # NumPy keeps Python scalars (weak) as they are and makes everything else an array.
    x, y, atol, rtol = (v if _is_traced(v) or isinstance(v, (int, float, complex)) else np.asanyarray(v)
                        for v in (a, b, atol, rtol))
    if not (_is_traced(rtol) or _is_traced(atol)):
        np.isclose(0.0, 0.0, rtol, atol)  # NumPy's warning for bad tolerances (any shape of them)
    if _is_traced(y) and y._weak:  # a Python scalar at run time
        if y.dtype.kind in "biu":  # float(y)
            y = ctx.wrap(ctx.convert(y, np.float64)._var, weak=True)
    elif hasattr(y, "dtype"):
        # y in the dtype that holds it and a Python float.
        dt = np.result_type(np.zeros(0, y.dtype), 1.)
        y = y.astype(dt, copy=False) if _is_traced(y) else np.asanyarray(y, dtype=dt)
    elif isinstance(y, int):
        y = float(y)
    result = np.less_equal(abs(x - y), atol + rtol * abs(y)) & np.isfinite(y) | (x == y)
    if equal_nan:
        result = result | np.isnan(x) & np.isnan(y)
    return result[()] if _is_traced(result) and not result._numpy_scalar else result


def _python_bool(ctx, answer):
    """A traced bool as the Python bool NumPy returns: weak in what follows (`allclose(a, b) +
    x` promotes as a Python bool does) and a `bool` when returned."""
    return ctx.wrap(ctx.atom(answer), weak=True)


def _allclose(ctx, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """NumPy returns a Python bool: so does the trace (a weak traced bool)."""
    return _python_bool(ctx, np.all(_isclose(ctx, a, b, rtol, atol, equal_nan)))


def _array_equal(ctx, a1, a2, equal_nan=False):
    """NumPy returns a Python bool: False for different shapes (known now), else the traced
    answer as a weak traced bool (a Python bool when returned)."""
    a1, a2 = as_array(ctx, a1), as_array(ctx, a2)
    if a1.shape != a2.shape:
        return False
    if not equal_nan or (a1.dtype.kind in "biu" and a2.dtype.kind in "biu"):
        return _python_bool(ctx, np.all(a1 == a2))
    n1, n2 = np.isnan(a1), np.isnan(a2)
    # NaN where the other is NaN, and every other pair equal.
    return _python_bool(ctx, np.all(np.where(n1 | n2, n1 == n2, a1 == a2)))


# -- elementwise functions NumPy writes in Python -----------------------------------------------


def _fix(ctx, x, out=None):
    if out is not None:
        raise unsupported("np.fix(..., out=...)")
    return np.trunc(x)


def _sinc(ctx, x):
    x = np.pi * as_array(ctx, x)
    eps = np.finfo(x.dtype).eps if x.dtype.kind == "f" else 1e-20
    y = np.where(x, x, eps)
    return np.sin(y) / y


def _angle(ctx, z, deg=False):
    z = as_array(ctx, z)
    if z.dtype.kind == "c":
        zimag, zreal = z.imag, z.real
    else:
        zimag, zreal = 0, z
    a = np.arctan2(zimag, zreal)
    if deg:
        a *= 180 / np.pi
    return a


def _float_power(ctx, x1, x2, **kwargs):
    """np.float_power is a ufunc numfuse does not have: np.power in its loop's dtype (float64,
    complex128), both operands cast to it first. Both are traced so that np.power's
    square/sqrt shortcuts for a constant exponent do not apply (float_power calls pow)."""
    for key, value in kwargs.items():
        if value is not None and key != "casting":
            raise unsupported(f"np.float_power(..., {key}=...)")
    operands = [ctx.operand(x) for x in (x1, x2)]
    with np.errstate(all="ignore"), user_line_noted():
        dtype = np.float_power(*[o.stand_in() for o in operands]).dtype
    base, exponent = (ctx.convert(ctx.as_tracer(o), dtype) if o.tracer is not None
                      else ctx.broadcast(np.array(o.value).astype(dtype)[()], ()) for o in operands)
    return np.power(base, exponent)


# -- diagonals ----------------------------------------------------------------------------------


def _diagonal(ctx, a, offset=0, axis1=0, axis2=1):
    a = as_array(ctx, a)
    with user_line_noted():
        shape = np.diagonal(probe(a), offset, axis1, axis2).shape
    axis1, axis2 = normalize_axis_index(axis1, a.ndim), normalize_axis_index(axis2, a.ndim)
    x = np.moveaxis(a, (axis1, axis2), (-2, -1))
    rows, cols = x.shape[-2:]
    # Element (i, i + offset) of each matrix is at i * (cols + 1) + offset in its rows.
    start = offset if offset >= 0 else -offset * cols
    flat = x.reshape(x.shape[:-2] + (rows * cols,))
    result = flat[..., start::cols + 1][..., :shape[-1]]
    result._readonly = True  # NumPy's diagonal is a read-only view
    return result


def _trace(ctx, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    if out is not None:
        raise unsupported("np.trace(..., out=...)")
    return _diagonal(ctx, a, offset, axis1, axis2).sum(-1, dtype=dtype)


def _diag(ctx, v, k=0):
    v = as_array(ctx, v)
    if v.ndim == 2:
        return _diagonal(ctx, v, k)
    if v.ndim != 1:
        raise ValueError(at_user_line("Input must be 1- or 2-d."))
    n = v.shape[0] + abs(k)
    m = v.shape[0]
    zero = np.zeros((), v.dtype)[()]
    # v[i] at flat position first + i * (n + 1) of the n-by-n result: each v[i] followed by
    # n zeros, after `first` zeros, cut or padded to n * n, is that flat array.
    first = k if k >= 0 else -k * n
    rows = np.concatenate([v[:, None], ctx.broadcast(zero, (m, n))], axis=1).ravel()
    tail = n * n - first - rows.shape[0]
    parts = [ctx.broadcast(zero, (first,)), rows] + ([ctx.broadcast(zero, (tail,))] if tail > 0 else [])
    return np.concatenate(parts)[:n * n].reshape(n, n)


FUNCTIONS = {
    np.outer: _outer,
    np.kron: _kron,
    np.cross: _cross,
    np.diff: _diff,
    np.gradient: _gradient,
    np.trapezoid: _trapezoid,
    np.convolve: _convolve,
    np.correlate: _correlate,
    np.isclose: _isclose,
    np.allclose: _allclose,
    np.array_equal: _array_equal,
    np.fix: _fix,
    np.sinc: _sinc,
    np.angle: _angle,
    np.float_power: _float_power,  # a ufunc: proxy.py's __array_ufunc__ sends it here
    np.diagonal: _diagonal,
    np.trace: _trace,
    np.diag: _diag,
}

# Ufuncs numfuse composes rather than having in its op table.
COMPOSED_UFUNCS = {np.float_power: _float_power}


# -- np.i0 and np.choose -----------------------------------------------------------------------------


def i0(ctx, x):
    """NumPy's np.i0: its own Chebyshev series (numpy's _i0_1 below 8, _i0_2 above), run on the
    traced values, both branches computed and the right one kept."""
    from numpy.lib._function_base_impl import _i0_1, _i0_2

    t = ctx.as_tracer(ctx.operand(x))
    if t.dtype.kind == "c":
        raise TypeError(at_user_line("i0 not supported for complex values"))
    if t.dtype.kind != "f":
        t = t.astype(float)
    t = np.abs(t)
    with np.errstate(all="ignore"):
        return np.where(t <= 8.0, _i0_1(t), _i0_2(t))


def choose(ctx, a, choices, out=None, mode="raise"):
    """np.choose: choices[a[i]][i], as a gather of the stacked choices (NumPy's IndexError for
    an index out of range comes from the gather's check)."""
    if out is not None or mode != "raise":
        raise unsupported(f"np.choose(..., {'out=' if out is not None else f'mode={mode!r}'})")
    index = ctx.as_tracer(ctx.operand(a))
    operands = [ctx.operand(c) for c in choices]
    options = [ctx.as_tracer(o) for o in operands]
    shape = tuple(np.broadcast_shapes(index.shape, *[c.shape for c in options]))
    # NEP 50: a Python scalar among the choices takes the arrays' dtype.
    dtype = np.result_type(*[o.stand_in() for o in operands])
    stacked = np.stack([np.broadcast_to(c.astype(dtype), shape) for c in options])
    from ..ir.graph import Literal

    picks = np.broadcast_to(index, shape).astype(np.int64)
    # NumPy's mode="raise" refuses an index outside [0, n) with a ValueError (no negative index
    # wraps): checked in the kernel (ops.RUNTIME_ERRORS), before the gather reads.
    picks = ctx.bind("choice_index", [picks._var, Literal(np.int64(len(options)))], shape, np.int64)
    return ctx.numpy_scalar(np.take_along_axis(stacked, picks[None], axis=0)[0])


FUNCTIONS[np.i0] = i0
FUNCTIONS[np.choose] = choose
