"""Library primitives: operations that run as a library call between fused kernels.

Matrix products, linear algebra, sorts, FFTs and scans are not loop nests numfuse generates: a
plan runs each as one step of its own (planner.LibraryStep) through NumPy (the simulator, or a
machine without CuPy) or CuPy (cuBLAS, cuSOLVER, cuFFT, CUB) on the call's stream, reading and
writing the plan's buffers. Their producers fuse into the kernel that stores the library's
inputs, their consumers into the kernels after it.

Each primitive is declared once here: its abstract-evaluation rule (the avals of its outputs
from the avals of its inputs and its parameters), its NumPy implementation, its CuPy one, and
the prose `explain` prints. Shapes come from each rule; dtypes from NumPy itself, run on tiny
stand-ins of the operands' dtypes (never a hand-written table). A primitive with several outputs
(np.linalg.svd, say) binds one equation per output, told apart by the parameter `output`; the
planner runs them as one step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import note_user_line
from .graph import Aval


@dataclass(frozen=True)
class LibraryOp:
    name: str
    # (input avals, params) -> output avals; raises NumPy's error for bad shapes
    abstract: Callable[[list[Aval], dict], list[Aval]]
    # (xp, input arrays, params) -> output arrays, where xp is numpy or cupy
    run: Callable
    what: str  # explain's prose


# A product is fused when its iteration space (every output point times the terms it sums) is
# at most this many times its largest operand or result: then a fused loop reads each operand
# about once, from cache, and saves the stores and loads around a library call. Beyond it a
# tuned library (cuBLAS) wins by blocking for data reuse.
FUSE_PRODUCT_RATIO = 8


def fused_by_size(dtype, sizes: list[int], space: int, terms: int, computed: bool = False) -> tuple[bool, str]:
    """Whether a product of this result dtype, operand and result sizes, iteration space and
    number of terms per sum fuses, and why: the rule of a target that does not say otherwise
    (which fuses whether or not an operand is `computed`)."""
    if dtype.kind not in "biuf":
        return False, "complex sums run in the library"  # numfuse's complex reductions are partial
    if space <= FUSE_PRODUCT_RATIO * max(max(sizes), 1):
        return True, f"its {space} multiply-adds are at most {FUSE_PRODUCT_RATIO}x its largest array"
    return False, f"{space} multiply-adds, more than {FUSE_PRODUCT_RATIO}x its largest array"


def _batch(*shapes) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*shapes))


def _stand_in(aval: Aval, core: int = 2) -> np.ndarray:
    """A tiny, well-conditioned array of `aval`'s dtype and rank, for NumPy to pick dtypes."""
    ndim = aval.ndim
    if ndim >= 2:
        eye = np.eye(core, dtype=aval.dtype) if aval.dtype.kind != "b" else np.eye(core, dtype=bool)
        return eye.reshape((1,) * (ndim - 2) + (core, core))
    return np.ones((core,) * ndim, aval.dtype)


def _dtypes(fn: Callable, avals: list[Aval], **kwargs) -> list[np.dtype]:
    """The dtypes of `fn`'s results, as NumPy computes them for these operand dtypes."""
    with np.errstate(all="ignore"):
        result = fn(*[_stand_in(a) for a in avals], **kwargs)
    if isinstance(result, tuple):
        return [np.asarray(r).dtype for r in result]
    return [np.asarray(result).dtype]


def numpy_error(fn: Callable, avals: list[Aval], fallback: Exception, **kwargs) -> Exception:
    """NumPy's own error for operands of these shapes, found on zero-stride stand-ins (NumPy
    checks shapes before it computes), or `fallback` where NumPy does not raise."""
    stand_ins = [np.broadcast_to(np.zeros((), a.dtype), a.shape) for a in avals]
    try:
        with np.errstate(all="ignore"):
            fn(*stand_ins, **kwargs)
    except Exception as err:  # noqa: BLE001  (NumPy's error, whatever it is, is the one to raise)
        return note_user_line(err)
    return fallback


# -- matrix products ----------------------------------------------------------------------------


def matmul_shape(a: tuple, b: tuple) -> tuple | None:
    """np.matmul's result shape (gufunc (n?,k),(k,m?)->(n?,m?)), or None where NumPy raises."""
    if len(a) == 0 or len(b) == 0:
        return None
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        return None
    try:
        batch = _batch(a2[:-2], b2[:-2])
    except ValueError:
        return None
    out = batch + (a2[-2], b2[-1])
    if len(b) == 1:
        out = out[:-1]
    if len(a) == 1:
        out = out[:-2] + out[-1:] if len(b) != 1 else out[:-1]
    return out


def _matmul_abstract(avals, params):
    a, b = avals
    shape = matmul_shape(a.shape, b.shape)
    if shape is None:
        raise numpy_error(np.matmul, avals, ValueError("matmul: shapes do not match"))
    dtype = np.matmul(np.ones((1, 1), a.dtype), np.ones((1, 1), b.dtype)).dtype
    return [Aval(shape, dtype)]


def dot_shape(a: tuple, b: tuple) -> tuple | None:
    """np.dot's N-D rule: a sum over a's last axis and b's second-to-last (its only, if 1-D)."""
    if len(a) == 0 or len(b) == 0:
        return None
    kb = 0 if len(b) == 1 else len(b) - 2
    if a[-1] != b[kb]:
        return None
    return a[:-1] + b[:kb] + b[kb + 1:]


def _dot_abstract(avals, params):
    a, b = avals
    shape = dot_shape(a.shape, b.shape)
    if shape is None:
        raise numpy_error(np.dot, avals, ValueError("shapes not aligned"))
    dtype = np.dot(np.ones((1, 1), a.dtype), np.ones((1, 1), b.dtype)).dtype
    return [Aval(shape, dtype)]


def _einsum_abstract(avals, params):
    subscripts, shape = params["subscripts"], params["shape"]
    dtype = np.einsum(subscripts, *[np.ones((1,) * a.ndim, a.dtype) for a in avals]).dtype
    return [Aval(shape, dtype)]


# -- linear algebra -----------------------------------------------------------------------------


def _square(a: Aval, fn, avals, **kwargs) -> int:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise numpy_error(fn, avals, np.linalg.LinAlgError("Last 2 dimensions of the array must be square"), **kwargs)
    return a.shape[-1]


def _linalg(fn_name: str, shapes: Callable, square: bool = True, what: str = ""):
    """A np.linalg function whose outputs' shapes `shapes(avals, params)` gives."""
    fn = getattr(np.linalg, fn_name)

    def abstract(avals, params):
        options = {k: v for k, v in params.items() if k != "output"}
        if square:
            _square(avals[0], fn, avals, **options)
        elif avals[0].ndim < 2:
            raise numpy_error(fn, avals, np.linalg.LinAlgError(
                f"{avals[0].ndim}-dimensional array given. Array must be at least two-dimensional"), **options)
        out_shapes = shapes(avals, params)
        dtypes = _dtypes(fn, avals, **options)
        return [Aval(s, d) for s, d in zip(out_shapes, dtypes)]

    def run(xp, arrays, params):
        options = {k: v for k, v in params.items() if k != "output"}
        upper = False
        if xp is not np:
            # CuPy's np.linalg has no `hermitian` (a speed hint: the result is the same), no
            # pinv `rtol` (its `rcond` means the same) and no cholesky `upper` (the transpose).
            options.pop("hermitian", None)
            if "rtol" in options:
                options["rcond"] = options.pop("rtol")
            upper = options.pop("upper", False)
        result = getattr(xp.linalg, fn_name)(*arrays, **options)
        if upper:
            result = xp.swapaxes(result, -1, -2).conj()
        return list(result) if isinstance(result, tuple) else [result]

    return LibraryOp(f"linalg_{fn_name}", abstract, run, what or f"np.linalg.{fn_name}")


def _solve_shapes(avals, params):
    a, b = avals
    if b.ndim == 1:
        if b.shape[0] != a.shape[-1]:
            raise numpy_error(np.linalg.solve, avals, ValueError("solve: shapes do not match"))
        return [a.shape[:-1]]
    if b.shape[-2] != a.shape[-1]:
        raise numpy_error(np.linalg.solve, avals, ValueError("solve: shapes do not match"))
    return [_batch(a.shape[:-2], b.shape[:-2]) + b.shape[-2:]]


def _qr_shapes(avals, params):
    a = avals[0]
    *batch, m, n = a.shape
    k = min(m, n)
    mode = params.get("mode", "reduced")
    if mode == "r":
        return [tuple(batch) + (k, n)]
    if mode == "complete":
        return [tuple(batch) + (m, m), tuple(batch) + (m, n)]
    return [tuple(batch) + (m, k), tuple(batch) + (k, n)]


def _svd_shapes(avals, params):
    *batch, m, n = avals[0].shape
    batch, k = tuple(batch), min(m, n)
    if not params.get("compute_uv", True):
        return [batch + (k,)]
    if params.get("full_matrices", True):
        return [batch + (m, m), batch + (k,), batch + (n, n)]
    return [batch + (m, k), batch + (k,), batch + (k, n)]


def _lstsq_shapes(avals, params):
    a, b = avals
    m, n = a.shape
    if b.ndim not in (1, 2) or b.shape[0] != m:
        raise numpy_error(np.linalg.lstsq, avals, np.linalg.LinAlgError("Incompatible dimensions"), rcond=None)
    k = 1 if b.ndim == 1 else b.shape[1]
    # The residuals are empty unless a has full rank N < M: their size depends on the data,
    # checked when the step runs (see LibraryOp run of lstsq).
    return [(n,) + b.shape[1:], (k,) if m > n else (0,), (), (min(m, n),)]


def _run_lstsq(xp, arrays, params):
    x, residuals, rank, s = xp.linalg.lstsq(*arrays, rcond=params.get("rcond"))
    if residuals.shape != (params["residuals"],):
        raise ValueError(
            "np.linalg.lstsq: the residuals' size depends on the matrix's rank, which numfuse "
            "fixed when it traced the call (a rank-deficient matrix, or M <= N); use only "
            "lstsq(...)[0] (the solution) or compute the residuals from it"
        )
    return [x, residuals, xp.asarray(rank, dtype=xp.int32), s]


def _lstsq_abstract(avals, params):
    if avals[0].ndim != 2:
        raise numpy_error(np.linalg.lstsq, avals, np.linalg.LinAlgError("lstsq takes 2-D arrays"), rcond=None)
    shapes = _lstsq_shapes(avals, params)
    dtypes = _dtypes(np.linalg.lstsq, avals, rcond=None)
    return [Aval(s, d) for s, d in zip(shapes, dtypes)]


def _matrix_power(xp, arrays, params):
    return [xp.linalg.matrix_power(arrays[0], params["n"])]


def _matrix_power_abstract(avals, params):
    _square(avals[0], np.linalg.matrix_power, avals, n=params["n"])
    return [Aval(avals[0].shape, _dtypes(np.linalg.matrix_power, avals, n=params["n"])[0])]


# -- sorts, scans and FFTs ----------------------------------------------------------------------


def _axis_op(fn_name: str, index_dtype: bool = False, module: str = ""):
    """A function of one array along one axis (None: the flattened array), of the same shape."""

    def numpy_fn():
        return getattr(np, fn_name)

    def abstract(avals, params):
        a = avals[0]
        options = {k: v for k, v in params.items() if k != "output"}
        shape = (a.size,) if options.get("axis", -1) is None or a.ndim == 0 else a.shape  # 0-d: (1,)
        probe = np.ones((2,) * max(a.ndim, 1), a.dtype)
        if "kth" in options:
            probe = np.ones(tuple(max(s, 2) for s in a.shape) or (2,), a.dtype)
            options["kth"] = 0
        dtype = numpy_fn()(probe, **options).dtype
        return [Aval(shape, dtype)]

    def run(xp, arrays, params):
        options = {k: v for k, v in params.items() if k != "output"}
        return [getattr(xp, fn_name)(arrays[0], **options)]

    return LibraryOp(fn_name, abstract, run, f"np.{fn_name}")


def _fft_abstract_for(fn_name: str):
    fn = getattr(np.fft, fn_name)

    def abstract(avals, params):
        a = avals[0]
        shape = list(a.shape)
        real_out = fn_name in ("irfft", "irfftn", "irfft2")
        for axis, n in zip(params["axes"], params["sizes"]):
            shape[axis] = n
        if fn_name in ("rfft", "rfftn", "rfft2"):
            last = params["axes"][-1]
            shape[last] = params["sizes"][-1] // 2 + 1
        probe = np.ones((4,) * a.ndim, a.dtype)
        kwargs = {"norm": params["norm"]}
        dtype = fn(probe, **kwargs).dtype
        if real_out:
            dtype = np.fft.irfft(np.ones(4, a.dtype), norm=params["norm"]).dtype
        return [Aval(tuple(shape), dtype)]

    def run(xp, arrays, params):
        f = getattr(xp.fft, fn_name)
        if fn_name in ("fft", "ifft", "rfft", "irfft"):
            return [f(arrays[0], n=params["sizes"][0], axis=params["axes"][0], norm=params["norm"])]
        return [f(arrays[0], s=params["sizes"], axes=params["axes"], norm=params["norm"])]

    return LibraryOp(f"fft_{fn_name}", abstract, run, f"np.fft.{fn_name}")


def _run_matmul(xp, arrays, params):
    return [xp.matmul(*arrays)]


def _run_dot(xp, arrays, params):
    return [xp.dot(*arrays)]


def _run_einsum(xp, arrays, params):
    return [xp.einsum(params["subscripts"], *arrays)]


_OPS = [
    LibraryOp("matmul", _matmul_abstract, _run_matmul, "a matrix product (np.matmul; cuBLAS on a GPU)"),
    LibraryOp("dot", _dot_abstract, _run_dot, "np.dot's N-D product (cuBLAS on a GPU)"),
    LibraryOp("einsum", _einsum_abstract, _run_einsum, "a contraction (np.einsum; cuTENSOR or cuBLAS on a GPU)"),
    _linalg("solve", _solve_shapes),
    _linalg("inv", lambda avals, p: [avals[0].shape]),
    _linalg("cholesky", lambda avals, p: [avals[0].shape]),
    _linalg("det", lambda avals, p: [avals[0].shape[:-2]]),
    _linalg("slogdet", lambda avals, p: [avals[0].shape[:-2]] * 2),
    _linalg("qr", _qr_shapes, square=False),
    _linalg("svd", _svd_shapes, square=False),
    _linalg("eigh", lambda avals, p: [avals[0].shape[:-1], avals[0].shape]),
    _linalg("eigvalsh", lambda avals, p: [avals[0].shape[:-1]]),
    _linalg("pinv", lambda avals, p: [avals[0].shape[:-2] + avals[0].shape[-1:] + avals[0].shape[-2:-1]],
            square=False),
    LibraryOp("linalg_lstsq", _lstsq_abstract, _run_lstsq, "np.linalg.lstsq"),
    LibraryOp("linalg_matrix_power", _matrix_power_abstract, _matrix_power, "np.linalg.matrix_power"),
    _axis_op("sort"),
    _axis_op("argsort"),
    _axis_op("partition"),
    _axis_op("cumsum"),
    _axis_op("cumprod"),
    _axis_op("nancumsum"),
    _axis_op("nancumprod"),
]
for _name in ("fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "fftn", "ifftn", "rfft2", "rfftn", "irfft2", "irfftn"):
    _OPS.append(_fft_abstract_for(_name))

LIBRARY: dict[str, LibraryOp] = {op.name: op for op in _OPS}


def is_library(prim: str) -> bool:
    return prim in LIBRARY



# -- scatters: writes through index arrays, in place ---------------------------------------------
#
# `scatter[axis, ufunc] x v i1 ... ik` is x with the points x[:, ..., i1, ..., ik, ...] (the
# index arrays at axes axis .. axis+k-1) set to v (ufunc None: NumPy's `x[idx] = v`, where the
# last of repeated indices wins) or combined with v by the ufunc (`np.add.at`: every repeat
# counts). Its result is a new version of x in x's buffer (planner: an in-place library call).

IN_PLACE = {"scatter", "put", "place"}


def _scatter_abstract(avals, params):
    return [avals[0]]


def _wrapped(xp, index, size):
    if bool(((index < -size) | (index >= size)).any()):
        raise IndexError(f"index out of bounds for an axis of size {size}")
    return xp.where(index < 0, index + size, index)


def _run_scatter(xp, arrays, params):
    x, value, *indices = arrays
    axis, ufunc = params["axis"], params["ufunc"]
    if xp is np:
        x = np.array(x)  # the host copy of the buffer, written and copied back
        key = (slice(None),) * axis + tuple(indices)
        if ufunc is None:
            x[key] = value
        else:
            getattr(np, ufunc).at(x, key, value)
        return [x]
    dims = x.shape[axis:axis + len(indices)]
    indices = [_wrapped(xp, i, n) for i, n in zip(indices, dims)]
    joint = xp.broadcast_shapes(*[i.shape for i in indices]) if hasattr(xp, "broadcast_shapes") else \
        np.broadcast_shapes(*[i.shape for i in indices])
    flat_idx = [xp.broadcast_to(i, joint).ravel() for i in indices]
    region = x.shape[:axis] + tuple(joint) + x.shape[axis + len(indices):]
    value = xp.broadcast_to(xp.asarray(value, dtype=x.dtype), region)
    value = value.reshape(x.shape[:axis] + (-1,) + x.shape[axis + len(indices):])
    pre = (slice(None),) * axis
    if ufunc is None:
        # NumPy's order: the last of repeated indices wins; the GPU's scatter has no order, so
        # only each index's last occurrence is written.
        flat = xp.ravel_multi_index(tuple(flat_idx), dims)
        _, first_from_end = xp.unique(flat[::-1], return_index=True)
        keep = flat.size - 1 - first_from_end
        x[pre + tuple(i[keep] for i in flat_idx)] = value[pre + (keep,)]
        return [x]
    import cupyx

    combine = {"add": cupyx.scatter_add, "maximum": cupyx.scatter_max, "minimum": cupyx.scatter_min}.get(ufunc)
    if combine is None:
        raise NotImplementedError(f"np.{ufunc}.at on a GPU")
    combine(x, pre + tuple(flat_idx), value)
    return [x]


LIBRARY["scatter"] = LibraryOp("scatter", _scatter_abstract, _run_scatter,
                               "a write through index arrays (x[idx] = v, np.add.at), in place")


# -- searches, interpolation, histograms -------------------------------------------------------------


def _probe(aval: Aval) -> np.ndarray:
    """A small increasing array of `aval`'s dtype and rank (bins and sample points are sorted)."""
    return np.arange(2 ** max(aval.ndim, 1), dtype=aval.dtype).reshape((2,) * aval.ndim) if aval.ndim else \
        aval.dtype.type(1)


def _function(name: str, shapes: Callable, what: str):
    """A NumPy function run as a library call, its outputs' shapes from `shapes(avals, params)`
    and their dtypes from NumPy on small stand-ins."""

    def abstract(avals, params):
        options = {k: v for k, v in params.items() if k != "output"}
        with np.errstate(all="ignore"):
            result = getattr(np, name)(*[_probe(a) for a in avals], **options)
        results = result if isinstance(result, tuple) else (result,)
        return [Aval(s, np.asarray(r).dtype) for s, r in zip(shapes(avals, params), results)]

    def run(xp, arrays, params):
        options = {k: v for k, v in params.items() if k != "output"}
        result = getattr(xp, name)(*arrays, **options)
        return list(result) if isinstance(result, tuple) else [result]

    return LibraryOp(name, abstract, run, what)


def _histogram_call(xp, arrays, params):
    a, rest = arrays[0], list(arrays[1:])
    bins = params["bins"] if params["bins"] is not None else rest.pop(0)
    weights = rest.pop(0) if params["weighted"] else None
    return xp.histogram(a, bins=bins, range=params["range"], density=params["density"], weights=weights)


def _histogram_abstract(avals, params):
    n = params["bins"] if params["bins"] is not None else avals[1].shape[0] - 1
    probe = [_probe(avals[0])] + [np.arange(n + 1, dtype=a.dtype) if k == 1 and params["bins"] is None
                                   else np.ones(2 ** avals[0].ndim, a.dtype).reshape(avals[0].ndim * (2,))
                                   for k, a in enumerate(avals[1:], start=1)]
    probe_params = dict(params, bins=n) if params["bins"] is not None else params
    with np.errstate(all="ignore"):
        counts, edges = _histogram_call(np, probe, probe_params)
    return [Aval((n,), counts.dtype), Aval((n + 1,), edges.dtype)]


def _histogram_run(xp, arrays, params):
    return list(_histogram_call(xp, arrays, params))


def _bincount_run(xp, arrays, params):
    weights = arrays[1] if len(arrays) > 1 else None
    return [xp.bincount(arrays[0], weights=weights, minlength=params["minlength"])]


def _bincount_abstract(avals, params):
    weights = np.ones(2, avals[1].dtype) if len(avals) > 1 else None
    dtype = np.bincount(np.zeros(2, avals[0].dtype), weights=weights).dtype
    return [Aval((params["minlength"],), dtype)]


LIBRARY["histogram"] = LibraryOp("histogram", _histogram_abstract, _histogram_run, "np.histogram")
LIBRARY["bincount"] = LibraryOp("bincount", _bincount_abstract, _bincount_run, "np.bincount")
LIBRARY["searchsorted"] = _function("searchsorted", lambda avals, p: [avals[1].shape], "np.searchsorted (a binary search)")
LIBRARY["digitize"] = _function("digitize", lambda avals, p: [avals[0].shape], "np.digitize (a binary search)")
LIBRARY["interp"] = _function("interp", lambda avals, p: [avals[0].shape], "np.interp")


def _run_put(xp, arrays, params):
    x, indices, values = arrays
    if xp is np or params["mode"] == "raise":
        host = np.array(x if xp is np else x.get())  # CuPy's put has no mode="raise"
        np.put(host, indices if xp is np else indices.get(), values if xp is np else values.get(), mode=params["mode"])
        return [host if xp is np else xp.asarray(host)]
    xp.put(x, indices, values, mode=params["mode"])
    return [x]


def _run_place(xp, arrays, params):
    x, mask, values = arrays
    x = np.array(x) if xp is np else x
    xp.place(x, mask, values)
    return [x]


LIBRARY["put"] = LibraryOp("put", _scatter_abstract, _run_put, "np.put, in place")
LIBRARY["place"] = LibraryOp("place", _scatter_abstract, _run_place, "np.place, in place")
