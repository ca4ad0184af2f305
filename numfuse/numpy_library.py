"""NumPy's matrix products, linear algebra, sorts, scans and FFTs on traced values.

Each becomes a library primitive (library_ops.py) that the plan runs as a step of its own, except
where a fused loop serves better than the library: a product whose iteration space is at most
FUSE_PRODUCT_RATIO times its largest array (a matrix times a vector, a dot product, an outer
product, a batch of tiny matrices) is traced as a broadcast multiply and a sum, which fuses with
its producers and consumers (`A @ v` is one row-reduction kernel). The choice is made from the
shapes, when traced, and `explain` prints it with its reason (ctx.notes).

The products compute as NumPy's matmul does: both operands cast to the result dtype, products
summed in it (int8 @ int8 wraps in int8; bool @ bool is an `or` of `and`s).
"""

from __future__ import annotations

import string
from collections import namedtuple

import numpy as np

from .dtypes import check_supported
from .errors import at_user_line, unsupported, user_line_noted
from .library_ops import LIBRARY, dot_shape, matmul_shape, numpy_error

# A product is fused when its iteration space (every output point times the terms it sums) is
# at most this many times its largest operand or result: then a fused loop reads each operand
# about once, from cache, and saves the stores and loads around a library call. Beyond it a
# tuned library (cuBLAS) wins by blocking for data reuse.
FUSE_PRODUCT_RATIO = 8


def _tracer(ctx, a):
    return ctx.as_tracer(ctx.operand(a))


def bind_library(ctx, prim: str, tracers, params: dict | None = None) -> list:
    """Record library primitive `prim` on `tracers`: one traced value per output."""
    params = dict(params or {})
    avals = [t._aval for t in tracers]
    with user_line_noted():
        outs = LIBRARY[prim].abstract(avals, params)
    for aval in outs:
        check_supported(aval.dtype, f"the result of {LIBRARY[prim].what}")
    items = tuple(params.items())
    results = []
    for k, aval in enumerate(outs):
        extra = (("output", k),) if len(outs) > 1 else ()
        result = ctx.bind(prim, [t._var for t in tracers], aval.shape, aval.dtype,
                          params=items + extra, numpy_scalar=True)
        ctx.strides.pop(result._var, None)  # a new C-contiguous array, whatever its operands' layout
        results.append(result)
    return results


def _note(ctx, text: str) -> None:
    from .errors import user_location

    loc = user_location()
    ctx.notes.append(f"{loc.short()}: {text}" if loc is not None else text)


# -- products -----------------------------------------------------------------------------------


def _check_dtypes(name, *tracers):
    for t in tracers:
        check_supported(t.dtype, name)


def _product_dtype(fn, a, b) -> np.dtype:
    return fn(np.ones((1, 1), a.dtype), np.ones((1, 1), b.dtype)).dtype


def _fused_sum_of_products(ctx, a, b, a_axes, b_axes, sum_axes, dtype):
    """sum over `sum_axes` of a * b, where a and b are laid out (by broadcasting) on a joint
    iteration space: a_axes/b_axes give each operand's axes' positions in it."""
    ndim = 1 + max(max(a_axes, default=-1), max(b_axes, default=-1))
    terms = []
    for t, axes in ((a, a_axes), (b, b_axes)):
        t = ctx.convert(t, dtype)
        order = sorted(range(len(axes)), key=lambda i: axes[i])
        t = np.transpose(t, order) if order != list(range(len(axes))) else t
        placed = sorted(axes)
        shape = [1] * ndim
        for pos, size in zip(placed, t.shape):
            shape[pos] = size
        terms.append(np.reshape(t, tuple(shape)))
    product = terms[0] * terms[1] if dtype.kind != "b" else np.logical_and(terms[0], terms[1])
    if product.dtype != dtype:
        product = ctx.convert(product, dtype)
    if not sum_axes:
        return product
    prim = "reduce_or" if dtype.kind == "b" else "reduce_sum"
    shape = tuple(s for i, s in enumerate(product.shape) if i not in sum_axes)
    params = (("axes", tuple(sum_axes)), ("keepdims", False))
    return ctx.bind(prim, [product._var], shape, dtype, params=params, numpy_scalar=True)


def _fusable(dtype, sizes: list[int], space: int) -> bool:
    if dtype.kind not in "biuf":
        return False  # complex sums: the library (numfuse's complex reductions are partial)
    return space <= FUSE_PRODUCT_RATIO * max(max(sizes), 1)


def matmul(ctx, a, b, name="np.matmul"):
    a, b = _tracer(ctx, a), _tracer(ctx, b)
    _check_dtypes(name, a, b)
    shape = matmul_shape(a.shape, b.shape)
    if shape is None:
        raise numpy_error(np.matmul, [a._aval, b._aval], ValueError(at_user_line("matmul: shapes do not match")))
    dtype = _product_dtype(np.matmul, a, b)
    k = a.shape[-1]
    space = int(np.prod(shape, dtype=np.int64)) * k
    sizes = [a.size, b.size, int(np.prod(shape, dtype=np.int64))]
    if _fusable(dtype, sizes, space):
        _note(ctx, f"{name} of {list(a.shape)} and {list(b.shape)} fused as a sum of products: its "
                   f"{space} multiply-adds are at most {FUSE_PRODUCT_RATIO}x its largest array")
        # Joint space: batch..., n, k, m, where a 1-D operand has no n (or m) axis at all.
        batch = len(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
        has_n, has_m = a.ndim > 1, b.ndim > 1
        k_axis = batch + has_n
        a_axes = list(range(batch - max(a.ndim - 2, 0), batch)) + ([batch] if has_n else []) + [k_axis]
        b_axes = list(range(batch - max(b.ndim - 2, 0), batch)) + [k_axis] + ([k_axis + 1] if has_m else [])
        return ctx.numpy_scalar(_fused_sum_of_products(ctx, a, b, a_axes, b_axes, [k_axis], dtype))
    _note(ctx, f"{name} of {list(a.shape)} and {list(b.shape)} runs as a library call: {space} "
               f"multiply-adds, more than {FUSE_PRODUCT_RATIO}x its largest array")
    return ctx.numpy_scalar(bind_library(ctx, "matmul", [a, b])[0])


def dot(ctx, a, b, out=None):
    if out is not None:
        raise unsupported("np.dot(..., out=...)")
    ea, eb = ctx.operand(a), ctx.operand(b)
    if not ea.shape or not eb.shape:
        return np.multiply(a, b)  # np.dot with a scalar multiplies
    ta, tb = ctx.as_tracer(ea), ctx.as_tracer(eb)
    if tb.ndim <= 2 or ta.ndim == 1:
        # Within these ranks np.dot is np.matmul (b's batch axes are the only difference).
        if dot_shape(ta.shape, tb.shape) is None:
            raise numpy_error(np.dot, [ta._aval, tb._aval], ValueError(at_user_line("shapes not aligned")))
        return matmul(ctx, ta, tb, "np.dot")
    _note(ctx, f"np.dot of {list(ta.shape)} and {list(tb.shape)} runs as a library call")
    return ctx.numpy_scalar(bind_library(ctx, "dot", [ta, tb])[0])


def vdot(ctx, a, b):
    ta, tb = _tracer(ctx, a), _tracer(ctx, b)
    if ta.size != tb.size:
        raise numpy_error(np.vdot, [ta._aval, tb._aval], ValueError(at_user_line("vectors have different lengths")))
    if ta.dtype.kind == "c":
        ta = np.conjugate(ta)
    return matmul(ctx, np.ravel(ta), np.ravel(tb), "np.vdot")


def inner(ctx, a, b):
    ea, eb = ctx.operand(a), ctx.operand(b)
    if not ea.shape or not eb.shape:
        return np.multiply(a, b)
    ta, tb = ctx.as_tracer(ea), ctx.as_tracer(eb)
    if ta.shape[-1] != tb.shape[-1]:
        raise numpy_error(np.inner, [ta._aval, tb._aval], ValueError(at_user_line("shapes not aligned")))
    return tensordot(ctx, ta, tb, axes=([-1], [-1]), name="np.inner")


def tensordot(ctx, a, b, axes=2, name="np.tensordot"):
    """As NumPy computes it: both operands transposed and reshaped to matrices, one product."""
    ta, tb = _tracer(ctx, a), _tracer(ctx, b)
    try:
        iter(axes)
    except TypeError:
        n = int(axes)
        axes_a, axes_b = list(range(ta.ndim - n, ta.ndim)), list(range(n))
    else:
        axes_a, axes_b = axes
        axes_a = [axes_a] if isinstance(axes_a, int) else list(axes_a)
        axes_b = [axes_b] if isinstance(axes_b, int) else list(axes_b)
    stand = [np.broadcast_to(np.zeros((), t.dtype), t.shape) for t in (ta, tb)]
    if len(axes_a) != len(axes_b) or any(
        ta.shape[i] != tb.shape[j] for i, j in zip(axes_a, axes_b)
    ):
        with user_line_noted():
            np.tensordot(*stand, axes=(axes_a, axes_b))
        raise ValueError(at_user_line("shape-mismatch for sum"))
    axes_a = [i % ta.ndim for i in axes_a]
    axes_b = [j % tb.ndim for j in axes_b]
    free_a = [i for i in range(ta.ndim) if i not in axes_a]
    free_b = [j for j in range(tb.ndim) if j not in axes_b]
    k = int(np.prod([ta.shape[i] for i in axes_a], dtype=np.int64))
    m = int(np.prod([ta.shape[i] for i in free_a], dtype=np.int64))
    n = int(np.prod([tb.shape[j] for j in free_b], dtype=np.int64))
    at = np.reshape(np.transpose(ta, free_a + axes_a), (m, k))
    bt = np.reshape(np.transpose(tb, axes_b + free_b), (k, n))
    result = matmul(ctx, at, bt, name)
    return np.reshape(result, tuple(ta.shape[i] for i in free_a) + tuple(tb.shape[j] for j in free_b))


def outer_product_shapes(subscripts: str, shapes):
    """einsum's parsed subscripts: (input letter strings, output letters, letter sizes)."""
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        ins, out = subscripts.split("->")
    else:
        ins, out = subscripts, None
    terms = ins.split(",")
    if len(terms) != len(shapes):
        raise ValueError(at_user_line("more operands were provided than specified in the subscripts string"
                                      if len(shapes) > len(terms) else "fewer operands provided to einstein sum function than specified in the subscripts string"))
    used = set(c for c in subscripts if c in string.ascii_letters)
    spare = [c for c in string.ascii_letters if c not in used]
    ellipsis_rank = max((len(s) - (len(t) - 3) for t, s in zip(terms, shapes) if "..." in t), default=0)
    dots = "".join(spare[:ellipsis_rank])
    expanded = []
    for t, s in zip(terms, shapes):
        if "..." in t:
            rank = len(s) - (len(t) - 3)
            t = t.replace("...", dots[ellipsis_rank - rank:] if rank else "")
        if len(t) != len(s):
            raise ValueError(at_user_line(f"einstein sum subscripts string contains too many subscripts for operand"))
        expanded.append(t)
    if out is None:
        counts = {}
        for t in expanded:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = dots + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in dots))
    elif "..." in out:
        out = out.replace("...", dots)
    sizes: dict[str, int] = {}
    for t, s in zip(expanded, shapes):
        for c, n in zip(t, s):
            if sizes.get(c, 1) != 1 and n != 1 and sizes[c] != n:
                raise ValueError(at_user_line(f"operands could not be broadcast together with remapped shapes"))
            sizes[c] = max(sizes.get(c, 1), n)
    return expanded, out, sizes


def einsum(ctx, *operands, out=None, optimize=False, dtype=None, order="K", casting="safe"):
    if out is not None or dtype is not None:
        raise unsupported("np.einsum(..., out=... or dtype=...)")
    if not operands or not isinstance(operands[0], str):
        raise unsupported("np.einsum with operand lists", "write the subscripts as a string: np.einsum('ij,jk->ik', a, b)")
    subscripts, arrays = operands[0], [_tracer(ctx, x) for x in operands[1:]]
    _check_dtypes("np.einsum", *arrays)
    terms, result, sizes = outer_product_shapes(subscripts, [t.shape for t in arrays])
    shape = tuple(sizes[c] for c in result)
    letters = sorted(sizes, key=lambda c: (c not in result, result.index(c) if c in result else c))
    space = int(np.prod([sizes[c] for c in letters], dtype=np.int64))
    dtype_ = np.einsum(subscripts, *[np.ones((1,) * t.ndim, t.dtype) for t in arrays]).dtype
    repeated = any(len(set(t)) != len(t) for t in terms)
    sizes_all = [t.size for t in arrays] + [int(np.prod(shape, dtype=np.int64))]
    if not repeated and len(arrays) <= 2 and _fusable(dtype_, sizes_all, space):
        _note(ctx, f"np.einsum('{subscripts}') fused as a sum of products: its iteration space "
                   f"({space} points) is at most {FUSE_PRODUCT_RATIO}x its largest array")
        summed = [i for i, c in enumerate(letters) if c not in result]
        if len(arrays) == 1:
            x = ctx.convert(arrays[0], dtype_)
            perm = sorted(range(x.ndim), key=lambda i: letters.index(terms[0][i]))
            x = np.transpose(x, perm)
            placed = [letters.index(terms[0][i]) for i in perm]
            full = [1] * len(letters)
            for pos, size in zip(placed, x.shape):
                full[pos] = size
            x = np.broadcast_to(np.reshape(x, tuple(full)), tuple(sizes[c] for c in letters))
            if summed:
                prim = "reduce_or" if dtype_.kind == "b" else "reduce_sum"
                rshape = tuple(s for i, s in enumerate(x.shape) if i not in summed)
                x = ctx.bind(prim, [x._var], rshape, dtype_, params=(("axes", tuple(summed)), ("keepdims", False)))
            value = x
        else:
            a_axes = [letters.index(c) for c in terms[0]]
            b_axes = [letters.index(c) for c in terms[1]]
            value = _fused_sum_of_products(ctx, arrays[0], arrays[1], a_axes, b_axes, summed, dtype_)
        if value.shape != shape:
            value = np.broadcast_to(value, shape)
        return ctx.numpy_scalar(value)
    _note(ctx, f"np.einsum('{subscripts}') runs as a library call")
    return ctx.numpy_scalar(bind_library(ctx, "einsum", arrays, {"subscripts": subscripts, "shape": shape})[0])


# -- linear algebra -------------------------------------------------------------------------------

try:
    from numpy.linalg._linalg import EighResult, QRResult, SlogdetResult, SVDResult
except ImportError:  # NumPy 2.0's private layout may move; plain namedtuples of NumPy's names
    EighResult = namedtuple("EighResult", "eigenvalues eigenvectors")
    QRResult = namedtuple("QRResult", "Q R")
    SlogdetResult = namedtuple("SlogdetResult", "sign logabsdet")
    SVDResult = namedtuple("SVDResult", "U S Vh")


def _linalg_call(ctx, prim, arrays, params=None):
    outs = bind_library(ctx, prim, [_tracer(ctx, a) for a in arrays], params)
    _note(ctx, f"{LIBRARY[prim].what} runs as a library call")
    return [ctx.numpy_scalar(o) for o in outs]


def solve(ctx, a, b):
    return _linalg_call(ctx, "linalg_solve", [a, b])[0]


def inv(ctx, a):
    return _linalg_call(ctx, "linalg_inv", [a])[0]


def cholesky(ctx, a, /, *, upper=False):
    params = {"upper": True} if upper else {}
    return _linalg_call(ctx, "linalg_cholesky", [a], params)[0]


def det(ctx, a):
    return _linalg_call(ctx, "linalg_det", [a])[0]


def slogdet(ctx, a):
    return SlogdetResult(*_linalg_call(ctx, "linalg_slogdet", [a]))


def qr(ctx, a, mode="reduced"):
    if mode not in ("reduced", "complete", "r"):
        raise unsupported(f"np.linalg.qr(mode={mode!r})")
    outs = _linalg_call(ctx, "linalg_qr", [a], {"mode": mode} if mode != "reduced" else {})
    return outs[0] if mode == "r" else QRResult(*outs)


def svd(ctx, a, full_matrices=True, compute_uv=True, hermitian=False):
    params = {"full_matrices": bool(full_matrices), "compute_uv": bool(compute_uv)}
    if hermitian:
        params["hermitian"] = True
    outs = _linalg_call(ctx, "linalg_svd", [a], params)
    return SVDResult(*outs) if compute_uv else outs[0]


def eigh(ctx, a, UPLO="L"):
    return EighResult(*_linalg_call(ctx, "linalg_eigh", [a], {"UPLO": UPLO} if UPLO != "L" else {}))


def eigvalsh(ctx, a, UPLO="L"):
    return _linalg_call(ctx, "linalg_eigvalsh", [a], {"UPLO": UPLO} if UPLO != "L" else {})[0]


def pinv(ctx, a, rcond=None, hermitian=False, *, rtol=np._NoValue):
    params = {}
    if rcond is not None:
        params["rcond"] = float(rcond)
    if rtol is not np._NoValue and rtol is not None:
        params["rtol"] = float(rtol)
    if hermitian:
        params["hermitian"] = True
    return _linalg_call(ctx, "linalg_pinv", [a], params)[0]


def lstsq(ctx, a, b, rcond=None):
    ta, tb = _tracer(ctx, a), _tracer(ctx, b)
    m, n = ta.shape if ta.ndim == 2 else (0, 0)
    params = {"rcond": None if rcond is None else float(rcond), "residuals": (1 if tb.ndim == 1 else tb.shape[-1]) if m > n else 0}
    return tuple(_linalg_call(ctx, "linalg_lstsq", [ta, tb], params))


def matrix_power(ctx, a, n):
    import operator

    return _linalg_call(ctx, "linalg_matrix_power", [a], {"n": operator.index(n)})[0]


# -- sorts and scans ---------------------------------------------------------------------------


def _axis_param(t, axis, name):
    if axis is None:
        return None
    from numpy.lib.array_utils import normalize_axis_index

    with user_line_noted():
        return normalize_axis_index(int(axis), max(t.ndim, 1))


def _axis_call(prim, name):
    def handler(ctx, a, axis=-1, kind=None, order=None, *, stable=None):
        if order is not None:
            raise unsupported(f"{name}(order=...)", "structured arrays are not traced")
        t = _tracer(ctx, a)
        if not t.shape and axis is not None:
            with user_line_noted():
                getattr(np, prim)(np.zeros((), t.dtype), axis=axis)  # np.sort's AxisError
            axis = None  # NumPy's argsort of a 0-d value: of it flattened, shape (1,)
        params = {"axis": _axis_param(t, axis, name)}
        if stable or kind == "stable":
            params["kind"] = "stable"
        _note(ctx, f"{name} runs as a library call (a sort: CUB on a GPU)")
        return ctx.numpy_scalar(bind_library(ctx, prim, [t], params)[0])

    return handler


def partition(ctx, a, kth, axis=-1, kind="introselect", order=None):
    if order is not None:
        raise unsupported("np.partition(order=...)")
    t = _tracer(ctx, a)
    kth = tuple(int(k) for k in np.atleast_1d(kth))
    size = t.size if axis is None else t.shape[_axis_param(t, axis, "np.partition")]
    for k in kth:
        if not -size <= k < size:
            raise ValueError(at_user_line(f"kth(={k}) out of bounds ({size})"))
    params = {"kth": kth if len(kth) > 1 else kth[0], "axis": _axis_param(t, axis, "np.partition")}
    _note(ctx, "np.partition runs as a library call")
    return ctx.numpy_scalar(bind_library(ctx, "partition", [t], params)[0])


def _scan(prim):
    def handler(ctx, a, axis=None, dtype=None, out=None):
        if out is not None:
            raise unsupported(f"np.{prim}(..., out=...)")
        t = _tracer(ctx, a)
        if not t.shape and axis is not None:
            with user_line_noted():
                getattr(np, prim)(np.zeros((), t.dtype), axis=axis)
            axis = None  # a scan of a 0-d value along its one axis: shape (1,), as NumPy's
        params = {"axis": _axis_param(t, axis, f"np.{prim}")}
        if dtype is not None:
            params["dtype"] = check_supported(dtype, f"np.{prim}(dtype=...)")
        _note(ctx, f"np.{prim} runs as a library call (a scan)")
        return ctx.numpy_scalar(bind_library(ctx, prim, [t], params)[0])

    return handler


# -- FFTs ------------------------------------------------------------------------------------------


def _fft1(name):
    def handler(ctx, a, n=None, axis=-1, norm=None, out=None):
        if out is not None:
            raise unsupported(f"np.fft.{name}(..., out=...)")
        t = _tracer(ctx, a)
        ax = _axis_param(t, axis, f"np.fft.{name}")
        if n is None:
            n = 2 * (t.shape[ax] - 1) if name == "irfft" else t.shape[ax]
        if n < 1:
            raise ValueError(at_user_line(f"Invalid number of FFT data points ({n}) specified."))
        params = {"axes": (ax,), "sizes": (int(n),), "norm": norm}
        _note(ctx, f"np.fft.{name} runs as a library call (cuFFT on a GPU)")
        return ctx.numpy_scalar(bind_library(ctx, f"fft_{name}", [t], params)[0])

    return handler


def _fftn(name, two=False):
    def handler(ctx, a, s=None, axes=(-2, -1) if two else None, norm=None, out=None):
        if out is not None:
            raise unsupported(f"np.fft.{name}(..., out=...)")
        t = _tracer(ctx, a)
        if axes is None:
            axes = tuple(range(t.ndim - (len(s) if s is not None else t.ndim), t.ndim))
        axes = tuple(_axis_param(t, ax, f"np.fft.{name}") for ax in axes)
        if s is None:
            s = [t.shape[ax] for ax in axes]
            if name.startswith("irfft"):
                s[-1] = 2 * (t.shape[axes[-1]] - 1)
        params = {"axes": axes, "sizes": tuple(int(v) for v in s), "norm": norm}
        _note(ctx, f"np.fft.{name} runs as a library call (cuFFT on a GPU)")
        return ctx.numpy_scalar(bind_library(ctx, f"fft_{name}", [t], params)[0])

    return handler


FUNCTIONS = {
    np.dot: dot,
    np.vdot: vdot,
    np.inner: inner,
    np.tensordot: tensordot,
    np.einsum: einsum,
    np.linalg.solve: solve,
    np.linalg.inv: inv,
    np.linalg.cholesky: cholesky,
    np.linalg.det: det,
    np.linalg.slogdet: slogdet,
    np.linalg.qr: qr,
    np.linalg.svd: svd,
    np.linalg.eigh: eigh,
    np.linalg.eigvalsh: eigvalsh,
    np.linalg.pinv: pinv,
    np.linalg.lstsq: lstsq,
    np.linalg.matrix_power: matrix_power,
    np.sort: _axis_call("sort", "np.sort"),
    np.argsort: _axis_call("argsort", "np.argsort"),
    np.partition: partition,
    np.cumsum: _scan("cumsum"),
    np.cumprod: _scan("cumprod"),
    np.nancumsum: _scan("nancumsum"),
    np.nancumprod: _scan("nancumprod"),
    np.fft.fft: _fft1("fft"),
    np.fft.ifft: _fft1("ifft"),
    np.fft.rfft: _fft1("rfft"),
    np.fft.irfft: _fft1("irfft"),
    np.fft.fft2: _fftn("fft2", two=True),
    np.fft.ifft2: _fftn("ifft2", two=True),
    np.fft.rfft2: _fftn("rfft2", two=True),
    np.fft.irfft2: _fftn("irfft2", two=True),
    np.fft.fftn: _fftn("fftn"),
    np.fft.ifftn: _fftn("ifftn"),
    np.fft.rfftn: _fftn("rfftn"),
    np.fft.irfftn: _fftn("irfftn"),
}
if hasattr(np, "linalg") and hasattr(np.linalg, "matmul"):
    FUNCTIONS[np.linalg.matmul] = lambda ctx, a, b: matmul(ctx, a, b, "np.linalg.matmul")


# -- searches, interpolation, histograms (library calls) ---------------------------------------------


def _static_scalar(value, what):
    from .proxy import Tracer

    if isinstance(value, Tracer):
        raise unsupported(f"{what} as a traced value", "pass it as a Python number")
    return None if value is None else float(value) if not isinstance(value, complex) else value


def searchsorted(ctx, a, v, side="left", sorter=None):
    if sorter is not None:
        raise unsupported("np.searchsorted(..., sorter=...)", "sort a first: np.searchsorted(a[sorter], v)")
    if side not in ("left", "right"):
        raise ValueError(at_user_line(f"side must be 'left' or 'right' (got {side!r})"))
    ta, tv = _tracer(ctx, a), _tracer(ctx, v)
    if ta.ndim != 1:
        raise ValueError(at_user_line("object too deep for desired array"))
    _note(ctx, "np.searchsorted runs as a library call")
    return ctx.numpy_scalar(bind_library(ctx, "searchsorted", [ta, tv], {"side": side})[0])


def digitize(ctx, x, bins, right=False):
    tx, tb = _tracer(ctx, x), _tracer(ctx, bins)
    if tb.ndim != 1:
        raise ValueError(at_user_line("bins must be one-dimensional"))
    _note(ctx, "np.digitize runs as a library call")
    return ctx.numpy_scalar(bind_library(ctx, "digitize", [tx, tb], {"right": bool(right)})[0])


def interp(ctx, x, xp, fp, left=None, right=None, period=None):
    params = {"left": _static_scalar(left, "np.interp's left"), "right": _static_scalar(right, "np.interp's right"),
              "period": _static_scalar(period, "np.interp's period")}
    tx, txp, tfp = _tracer(ctx, x), _tracer(ctx, xp), _tracer(ctx, fp)
    if txp.ndim != 1 or tfp.ndim != 1 or txp.shape != tfp.shape:
        with user_line_noted():
            np.interp(np.zeros(1), np.zeros(txp.shape), np.zeros(tfp.shape))
    _note(ctx, "np.interp runs as a library call")
    return ctx.numpy_scalar(bind_library(ctx, "interp", [tx, txp, tfp], params)[0])


def histogram(ctx, a, bins=10, range=None, density=None, weights=None):
    from .proxy import Tracer

    ta = _tracer(ctx, a)
    inputs, params = [ta], {"range": None, "density": density, "weighted": weights is not None}
    if range is not None:
        params["range"] = tuple(_static_scalar(r, "np.histogram's range") for r in range)
    if isinstance(bins, str):
        raise unsupported(f"np.histogram(bins={bins!r})", "its number of bins depends on the data; pass a count or edges")
    if isinstance(bins, Tracer) and bins.ndim == 0:
        import operator

        bins = operator.index(bins)  # a count from a scalar argument: made static
    if isinstance(bins, (Tracer, list, tuple, np.ndarray)):
        edges = _tracer(ctx, bins)
        if edges.ndim != 1:
            raise ValueError(at_user_line("`bins` must be 1d, when an array"))
        inputs.append(edges)
        params["bins"] = None
    else:
        import operator

        params["bins"] = operator.index(bins)
        if params["bins"] < 1:
            raise ValueError(at_user_line("`bins` must be positive, when an integer"))
    if weights is not None:
        inputs.append(_tracer(ctx, weights))
    _note(ctx, "np.histogram runs as a library call")
    counts, edges = bind_library(ctx, "histogram", inputs, params)
    return counts, edges


def bincount(ctx, x, /, weights=None, minlength=0):
    import operator

    tx = _tracer(ctx, x)
    minlength = operator.index(minlength)
    if tx.ndim != 1 or tx.dtype.kind not in "biu":
        with user_line_noted():
            np.bincount(np.zeros(tx.shape, tx.dtype))
    if minlength <= 0:
        raise unsupported("np.bincount without minlength",
                          "its length is max(x) + 1, known only from the data; pass minlength=N for N bins "
                          "(a larger x raises an error, never a wrong answer)")
    inputs = [tx] + ([_tracer(ctx, weights)] if weights is not None else [])
    _note(ctx, "np.bincount runs as a library call")
    return ctx.numpy_scalar(bind_library(ctx, "bincount", inputs, {"minlength": minlength})[0])


FUNCTIONS.update({
    np.searchsorted: searchsorted,
    np.digitize: digitize,
    np.interp: interp,
    np.histogram: histogram,
    np.bincount: bincount,
})
