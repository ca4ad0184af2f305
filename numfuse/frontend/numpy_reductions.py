"""NumPy's reductions on traced values: sum, prod, max, min, mean, any, all, argmax, argmin and
the NaN-ignoring forms as primitives; var, std, ptp, count_nonzero, average and the nan* statistics
as compositions written the way NumPy's own `_methods.py` and `nanfunctions.py` write them, so
that they round and promote exactly as NumPy does (var is two-pass: the mean, then the sum of
squared deviations, which the planner runs as two phases of one kernel).

Each entry point first runs NumPy's own function on a stand-in array of the same rank (size one,
or zero where the input is empty): that gives the result dtype and raises whatever NumPy raises,
such as AxisError for a bad axis or ValueError for the maximum of an empty array.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Callable

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ..ir.dtypes import check_supported, compute_dtype
from ..errors import at_user_line, unsupported, user_line_noted
from . import numpy_warnings
from .numpy_complex import complex_hint, refuse_complex
from .reduction_kinds import REDUCTION_KINDS, UFUNC_REDUCTIONS
from ..ir.ops import ELEMENTWISE, REDUCTIONS
from ..ir.graph import SizeValue
from .traced import TracedArray


def _refuse(name: str, **options) -> None:
    """Options numfuse does not take (out=, where=, initial=), unless left at their default."""
    for key, value in options.items():
        if value is not None and value is not np._NoValue and not (key == "where" and value is True):
            raise unsupported(f"{name}(..., {key}=...)")


def _stand_in(ctx, a):
    """The traced operand, and a NumPy array of its rank and dtype: size one, or zero where the
    input is empty."""
    xt = ctx.as_tracer(ctx.operand(a))
    return xt, np.empty(tuple(0 if s == 0 else 1 for s in xt.shape), xt.dtype)


def _numpy_result(name: str, fn: Callable, *args, **kwargs) -> np.dtype:
    # The stand-in holds arbitrary values: NumPy's warnings about them (all-NaN slices, degrees
    # of freedom) say nothing about the user's data.
    with np.errstate(all="ignore"), warnings.catch_warnings(), user_line_noted():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = fn(*args, **kwargs)
    return check_supported(np.asarray(result).dtype, f"result of {name}")


def _axes(xt, axis) -> tuple[int, ...]:
    # A 0-d array reduces over nothing, whatever axis 0 or -1 NumPy accepted for it.
    if xt.ndim == 0:
        return ()
    return tuple(range(xt.ndim)) if axis is None else normalize_axis_tuple(axis, xt.ndim)


def _reduced_shape(shape, axes, keepdims: bool) -> tuple[int, ...]:
    return tuple(1 if i in axes else s for i, s in enumerate(shape) if keepdims or i not in axes)


def _count(shape, axes) -> int:
    return int(np.prod([shape[i] for i in axes], dtype=np.int64))


def _count_key(ctx, xt, axes, what="count", *extra) -> tuple:
    """What a count counts, so that each count is its own kernel argument (ir.SizeConst)."""
    return (what, ctx.atom(xt).id, tuple(axes), *extra)


def reduce(ctx, kind: str, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
           stand_in: Callable | None = None, name: str | None = None):
    """A one-primitive reduction as NumPy computes it; `stand_in` is the NumPy callable that
    decides its dtype and errors (np.sum and friends, or a ufunc's reduce), `name` what errors
    call it (the user's spelling)."""
    red = REDUCTION_KINDS[kind]
    name = name or f"np.{red.numpy_name}"
    _refuse(name, out=out, initial=initial, where=where)
    if keepdims is np._NoValue:
        keepdims = False
    xt, array = _stand_in(ctx, a)
    if dtype is not None:
        dtype = check_supported(dtype, f"{name}(dtype=...)")
    kwargs = {} if dtype is None else {"dtype": dtype}
    out_dtype = _numpy_result(name, stand_in or red.stand_in, array, axis=axis, keepdims=bool(keepdims), **kwargs)
    axes = _axes(xt, axis)
    if kind == "mean" and _count(xt.shape, axes) == 0:
        numpy_warnings.warn("Mean of empty slice", RuntimeWarning)
    acc = np.dtype(bool) if red.converts_to_bool else out_dtype
    if kind == "mean" and dtype is None and out_dtype == np.float16:
        acc = np.dtype(np.float32)  # NumPy's mean of float16 sums and divides in float32
    prim = red.prim
    if kind in ("fmax", "fmin") and acc.kind != "f":
        prim = "reduce_max" if kind == "fmax" else "reduce_min"  # no NaN to skip
    if ELEMENTWISE[REDUCTIONS[prim].combine].template(compute_dtype(acc)) is None:
        # NumPy orders complex values lexicographically; numfuse has no template for that.
        raise unsupported(f"{name} on {acc}", complex_hint() if acc.kind == "c" else "")
    value = ctx.convert(xt, acc)
    if axes:
        params = (("axes", axes), ("keepdims", bool(keepdims)))
        if prim == "reduce_sum" and acc.kind == "f" and xt.dtype != acc:
            # NumPy casts the input into buffers of np.getbufsize() points and adds their sums
            # one after another (a target that follows NumPy's order reads it: the CPU's).
            params += (("buffered", int(np.getbufsize())),)
        shape = _reduced_shape(xt.shape, axes, keepdims)
        value = ctx.bind(prim, [ctx.atom(value)], shape, acc, params=params, numpy_scalar=True)
    if kind == "mean":
        value = _divide_by_count(value, _count(xt.shape, axes), _count_key(ctx, xt, axes))
        value = ctx.convert(value, out_dtype)
    if value._weak:  # np.sum(3.0) of a Python number is NumPy's float64, strongly typed
        value = ctx.wrap(value._var)
    return ctx.numpy_scalar(value)  # NumPy's reductions return scalars for 0-d results




def ufunc_reduce(ctx, ufunc: np.ufunc, args, kwargs):
    """np.add.reduce(x, axis=0) and friends; NumPy's default axis here is 0."""
    kind = UFUNC_REDUCTIONS.get(ufunc)
    if kind is None:
        raise unsupported(f"np.{ufunc.__name__}.reduce")
    names = ("array", "axis", "dtype", "out", "keepdims", "initial", "where")
    bound = dict(zip(names, args), **kwargs)
    bound.setdefault("axis", 0)
    a = bound.pop("array")
    return reduce(ctx, kind, a, **bound, stand_in=ufunc.reduce, name=f"np.{ufunc.__name__}.reduce")


def any_all_method(ctx, kind: str, a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """ndarray.any and .all, which (unlike np.any) take a dtype, as logical_or.reduce does."""
    stand_in = None if dtype is None else (np.logical_or if kind == "any" else np.logical_and).reduce
    return reduce(ctx, kind, a, axis, dtype, out, keepdims, where=where, stand_in=stand_in)


# ---------------------------------------------------------------------------------------------
# argmax and argmin: an indexed primitive (the flat index over the reduced axes, as NumPy counts)


def arg_reduce(ctx, kind: str, a, axis=None, out=None, *, keepdims=np._NoValue):
    name = f"np.{kind}"
    _refuse(name, out=out)
    keepdims = False if keepdims is np._NoValue else bool(keepdims)
    xt, array = _stand_in(ctx, a)
    out_dtype = _numpy_result(name, getattr(np, kind), array, axis=axis, keepdims=keepdims)
    refuse_complex(name, xt.dtype)
    if axis is None:
        axes = tuple(range(xt.ndim))
    else:
        axes = normalize_axis_tuple(axis, xt.ndim) if xt.ndim else ()
    if not axes:  # a 0-d array: its only index
        return ctx.numpy_scalar(ctx.broadcast(out_dtype.type(0), ()))
    # axis=None gives a flat index, and with keepdims a result of all ones.
    shape = _reduced_shape(xt.shape, axes, keepdims)
    params = (("axes", axes), ("keepdims", keepdims))
    prim = "reduce_argmax" if kind == "argmax" else "reduce_argmin"
    value = ctx.bind(prim, [ctx.atom(xt)], shape, out_dtype, params=params, numpy_scalar=True)
    return ctx.numpy_scalar(value)


# ---------------------------------------------------------------------------------------------
# Compositions, each following NumPy's implementation step by step (its roundings included)


def _divide_into(value, count):
    """`np.true_divide(value, count, out=value, casting='unsafe')`: computed in the dtype NumPy's
    loop picks for the pair, stored back in value's dtype."""
    quotient = np.true_divide(value, count)
    return quotient.astype(value.dtype) if quotient.dtype != value.dtype else quotient


def _divide_by_count(value, count, key: tuple):
    """NumPy's `true_divide(value, np.intp(count), out=value, casting='unsafe')` (mean's and
    var's division: float64 arithmetic for a float32 value, then back to float32). Where value
    is a float whose dtype holds the count exactly (float32: up to 2**24), dividing in that
    dtype gives the same result (float64 has more than twice float32's digits, plus two, so
    rounding twice is innocuous) and keeps float32 kernels free of float64. The count is a
    kernel argument (ir.SizeValue), not a constant in the code."""
    dtype = value.dtype
    count = np.intp(count) if isinstance(count, int) else count  # NumPy's count is an intp
    # A complex value divides its parts by the count (Smith's division by n + 0j is exactly
    # a/n + b/n j): the part dtype decides, as for floats.
    part = np.dtype(dtype.char.lower()) if dtype.kind == "c" else dtype
    if dtype.kind in "fc" and part.type(count) == count:
        return np.true_divide(value, SizeValue(part.type(count), key))
    return _divide_into(value, SizeValue(count, key))


def _degrees_of_freedom(ddof, correction):
    """var's and std's ddof, or its Array API spelling `correction` (not both)."""
    if correction is np._NoValue:
        return ddof
    if ddof != 0:
        raise ValueError(at_user_line("ddof and correction can't be provided simultaneously."))
    return correction


def var(ctx, a, axis=None, dtype=None, out=None, ddof=0, keepdims=np._NoValue, *, where=np._NoValue,
        mean=np._NoValue, correction=np._NoValue, name="np.var"):
    _refuse(name, out=out, where=where, mean=mean)
    ddof = _degrees_of_freedom(ddof, correction)
    keepdims = False if keepdims is np._NoValue else bool(keepdims)
    xt, array = _stand_in(ctx, a)
    if dtype is not None:
        dtype = check_supported(dtype, f"{name}(dtype=...)")
    numpy_fn = np.var if name == "np.var" else np.std
    result_dtype = _numpy_result(name, numpy_fn, array, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    # NumPy's complex variance is of |x - mean|**2; the squares below are of real deviations.
    refuse_complex(name, xt.dtype if dtype is None else dtype)
    axes = _axes(xt, axis)
    count = _count(xt.shape, axes)
    if ddof >= count:
        numpy_warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning)
    if dtype is None and xt.dtype.kind in "biu":
        dtype = np.dtype(np.float64)
    arrmean = _divide_by_count(reduce(ctx, "sum", xt, axes, dtype, keepdims=True), count, _count_key(ctx, xt, axes))
    deviation = np.subtract(xt, arrmean)
    squares = np.square(deviation) if xt.dtype.kind != "b" else np.multiply(deviation, deviation)
    total = reduce(ctx, "sum", squares, axes, dtype, keepdims=keepdims)
    dof_key = _count_key(ctx, xt, axes) if ddof == 0 else _count_key(ctx, xt, axes, "dof", ddof)
    result = _divide_by_count(total, np.maximum(np.intp(count) - ddof, 0), dof_key)
    if name == "np.std":
        result = np.sqrt(result)
    return ctx.numpy_scalar(ctx.convert(result, result_dtype))


def std(ctx, a, axis=None, dtype=None, out=None, ddof=0, keepdims=np._NoValue, *, where=np._NoValue,
        mean=np._NoValue, correction=np._NoValue):
    return var(ctx, a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction,
               name="np.std")


def _replace_nan(xt):
    """NumPy's nanfunctions' _replace_nan(a, 0): NaNs replaced by zero, and the NaN mask (None
    for dtypes without NaN)."""
    if xt.dtype.kind != "f":
        return xt, None
    mask = np.isnan(xt)
    return np.where(mask, xt.dtype.type(0), xt), mask


def nan_reduce(ctx, kind: str, a, axis=None, dtype=None, out=None, keepdims=np._NoValue, initial=np._NoValue,
               where=np._NoValue):
    """np.nansum, np.nanprod, np.nanmax, np.nanmin."""
    name = f"np.nan{kind}"
    _refuse(name, out=out, initial=initial, where=where)
    keepdims = False if keepdims is np._NoValue else bool(keepdims)
    xt, array = _stand_in(ctx, a)
    kwargs = {} if kind in ("max", "min") else {"dtype": dtype}
    _numpy_result(name, getattr(np, f"nan{kind}"), array, axis=axis, keepdims=keepdims, **kwargs)
    # NumPy replaces complex NaNs too; _replace_nan below only knows real ones.
    refuse_complex(name, xt.dtype)
    if kind in ("max", "min"):
        return reduce(ctx, "f" + kind, xt, axis, keepdims=keepdims, stand_in=getattr(np, f"nan{kind}"))
    replaced, _ = _replace_nan(xt)
    if kind == "prod" and xt.dtype.kind == "f":
        replaced = np.where(np.isnan(xt), xt.dtype.type(1), xt)
    return reduce(ctx, kind, replaced, axis, dtype, keepdims=keepdims)


def nanmean(ctx, a, axis=None, dtype=None, out=None, keepdims=np._NoValue, *, where=np._NoValue):
    _refuse("np.nanmean", out=out, where=where)
    keepdims = False if keepdims is np._NoValue else bool(keepdims)
    xt, array = _stand_in(ctx, a)
    result_dtype = _numpy_result("np.nanmean", np.nanmean, array, axis=axis, dtype=dtype, keepdims=keepdims)
    refuse_complex("np.nanmean", xt.dtype)
    replaced, mask = _replace_nan(xt)
    if mask is None:
        return reduce(ctx, "mean", xt, axis, dtype, keepdims=keepdims)
    count = reduce(ctx, "sum", np.logical_not(mask), axis, np.intp, keepdims=keepdims)
    total = reduce(ctx, "sum", replaced, axis, dtype, keepdims=keepdims)
    return ctx.numpy_scalar(ctx.convert(_divide_into(total, count), result_dtype))


def nanvar(ctx, a, axis=None, dtype=None, out=None, ddof=0, keepdims=np._NoValue, *, where=np._NoValue,
           mean=np._NoValue, correction=np._NoValue, name="np.nanvar"):
    _refuse(name, out=out, where=where, mean=mean)
    ddof = _degrees_of_freedom(ddof, correction)
    keepdims = False if keepdims is np._NoValue else bool(keepdims)
    xt, array = _stand_in(ctx, a)
    numpy_fn = np.nanvar if name == "np.nanvar" else np.nanstd
    result_dtype = _numpy_result(name, numpy_fn, array, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    refuse_complex(name, xt.dtype)
    replaced, mask = _replace_nan(xt)
    if mask is None:
        return var(ctx, xt, axis, dtype, None, ddof, keepdims, name=name.replace("nan", ""))
    count = reduce(ctx, "sum", np.logical_not(mask), axis, np.intp, keepdims=True)
    avg = _divide_into(reduce(ctx, "sum", replaced, axis, dtype, keepdims=True), count)
    deviation = np.subtract(replaced, avg).astype(replaced.dtype)
    deviation = np.where(mask, replaced.dtype.type(0), deviation)
    total = reduce(ctx, "sum", np.multiply(deviation, deviation), axis, dtype, keepdims=keepdims)
    if not keepdims:
        count = reduce(ctx, "sum", np.logical_not(mask), axis, np.intp, keepdims=False)
    dof = np.subtract(count, ddof)
    result = np.where(dof <= 0, np.nan, _divide_into(total, dof)).astype(total.dtype)
    if name == "np.nanstd":
        result = np.sqrt(result)
    return ctx.numpy_scalar(ctx.convert(result, result_dtype))


def nanstd(ctx, a, axis=None, dtype=None, out=None, ddof=0, keepdims=np._NoValue, *, where=np._NoValue,
           mean=np._NoValue, correction=np._NoValue):
    return nanvar(ctx, a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction,
                  name="np.nanstd")


def ptp(ctx, a, axis=None, out=None, keepdims=np._NoValue):
    _refuse("np.ptp", out=out)
    keepdims = False if keepdims is np._NoValue else bool(keepdims)
    xt, array = _stand_in(ctx, a)
    _numpy_result("np.ptp", np.ptp, array, axis=axis, keepdims=keepdims)
    refuse_complex("np.ptp", xt.dtype)
    largest = reduce(ctx, "max", xt, axis, keepdims=keepdims)
    smallest = reduce(ctx, "min", xt, axis, keepdims=keepdims)
    return ctx.numpy_scalar(np.subtract(largest, smallest))


def count_nonzero(ctx, a, axis=None, *, keepdims=False):
    xt, array = _stand_in(ctx, a)
    _numpy_result("np.count_nonzero", np.count_nonzero, array, axis=axis, keepdims=keepdims)
    return reduce(ctx, "sum", xt.astype(bool), axis, np.intp, keepdims=keepdims)


def average(ctx, a, axis=None, weights=None, returned=False, *, keepdims=np._NoValue):
    if weights is not None:
        raise unsupported("np.average(..., weights=...)")
    if returned:
        raise unsupported("np.average(..., returned=True)")
    xt, array = _stand_in(ctx, a)
    kwargs = {} if keepdims is np._NoValue else {"keepdims": keepdims}
    _numpy_result("np.average", np.average, array, axis=axis, **kwargs)
    return reduce(ctx, "mean", xt, axis, keepdims=False if keepdims is np._NoValue else keepdims)


def _into(ctx, kind: str, result, out):
    """np.<kind>(..., out=out): the result written into `out` (of the result's shape, as NumPy
    requires; cast unsafely, as NumPy's reductions cast into out), and `out` returned."""

    if not isinstance(out, TracedArray) or out._numpy_scalar:
        raise unsupported(f"np.{kind}(..., out=) into an array the function did not receive or make",
                          "pass the array as an argument, or write `x = ...`")
    if out.shape != result.shape:
        raise ValueError(at_user_line(f"output parameter for reduction operation {kind} has the wrong "
                                      f"shape: {out.shape} where the result has {result.shape}"))
    out[...] = result
    return out


def _bound(kind: str, numpy_function, implementation):
    """A handler that takes the arguments exactly as NumPy's own function does."""
    signature = inspect.signature(numpy_function)

    def handler(ctx, *args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as err:
            raise TypeError(at_user_line(f"np.{kind}(): {err}")) from None
        arguments = dict(bound.arguments)
        out = arguments.pop("out", None)
        result = implementation(ctx, **arguments)
        return result if out is None else _into(ctx, kind, result, out)

    handler.__name__ = kind
    return handler


def _primitive(kind):
    return lambda ctx, **arguments: reduce(ctx, kind, **arguments)


def _nan_primitive(kind):
    return lambda ctx, **arguments: nan_reduce(ctx, kind, **arguments)


def _arg(kind):
    return lambda ctx, **arguments: arg_reduce(ctx, kind, **arguments)


REDUCTION_FUNCTIONS: dict[Callable, Callable] = {
    np.sum: _bound("sum", np.sum, _primitive("sum")),
    np.prod: _bound("prod", np.prod, _primitive("prod")),
    np.max: _bound("max", np.max, _primitive("max")),
    np.amax: _bound("max", np.amax, _primitive("max")),
    np.min: _bound("min", np.min, _primitive("min")),
    np.amin: _bound("min", np.amin, _primitive("min")),
    np.any: _bound("any", np.any, _primitive("any")),
    np.all: _bound("all", np.all, _primitive("all")),
    np.mean: _bound("mean", np.mean, _primitive("mean")),
    np.argmax: _bound("argmax", np.argmax, _arg("argmax")),
    np.argmin: _bound("argmin", np.argmin, _arg("argmin")),
    np.var: _bound("var", np.var, var),
    np.std: _bound("std", np.std, std),
    np.nansum: _bound("nansum", np.nansum, _nan_primitive("sum")),
    np.nanprod: _bound("nanprod", np.nanprod, _nan_primitive("prod")),
    np.nanmax: _bound("nanmax", np.nanmax, _nan_primitive("max")),
    np.nanmin: _bound("nanmin", np.nanmin, _nan_primitive("min")),
    np.nanmean: _bound("nanmean", np.nanmean, nanmean),
    np.nanvar: _bound("nanvar", np.nanvar, nanvar),
    np.nanstd: _bound("nanstd", np.nanstd, nanstd),
    np.ptp: _bound("ptp", np.ptp, ptp),
    np.count_nonzero: _bound("count_nonzero", np.count_nonzero, count_nonzero),
    np.average: _bound("average", np.average, average),
}
