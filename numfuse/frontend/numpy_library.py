"""NumPy's linear algebra, sorts, scans, FFTs, searches and histograms on traced values: each a
library primitive (library_ops.py) that the plan runs as a step of its own, its producers fused
into the kernel that stores its inputs and its consumers into the kernels after it. The matrix
products are numpy_products.py's; `bind_library` here records any library primitive.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..ir.dtypes import check_supported
from ..errors import at_user_line, unsupported, user_line_noted
from ..ir.library_ops import LIBRARY
from .traced import TracedArray



def traced(ctx, a):
    return ctx.as_tracer(ctx.operand(a))


def bind_library(ctx, prim: str, tracers, params: dict | None = None) -> list:
    """Record library primitive `prim` on `tracers`: one traced value per output."""
    params = dict(params or {})
    # A scalar argument is no buffer: a 0-d copy of it, which a kernel stores, is the operand.
    tracers = [ctx.bind("broadcast", [t._var], (), t.dtype, params=(("shape", ()),))
               if ctx.is_scalar_input(t._var) else t for t in tracers]
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


def check_dtypes(name, *tracers):
    for t in tracers:
        check_supported(t.dtype, name)


def note(ctx, text: str) -> None:
    from ..errors import user_location

    loc = user_location()
    ctx.notes.append(f"{loc.short()}: {text}" if loc is not None else text)


# -- linear algebra -------------------------------------------------------------------------------

try:
    from numpy.linalg._linalg import EighResult, QRResult, SlogdetResult, SVDResult
except ImportError:  # NumPy 2.0's private layout may move; plain namedtuples of NumPy's names
    EighResult = namedtuple("EighResult", "eigenvalues eigenvectors")
    QRResult = namedtuple("QRResult", "Q R")
    SlogdetResult = namedtuple("SlogdetResult", "sign logabsdet")
    SVDResult = namedtuple("SVDResult", "U S Vh")


def _linalg_call(ctx, prim, arrays, params=None):
    outs = bind_library(ctx, prim, [traced(ctx, a) for a in arrays], params)
    note(ctx, f"{LIBRARY[prim].what} runs as a library call")
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
    ta, tb = traced(ctx, a), traced(ctx, b)
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
        t = traced(ctx, a)
        if kind is not None or stable is not None:
            with user_line_noted():  # NumPy's errors for a kind it does not know
                getattr(np, prim)(np.zeros(1, t.dtype), kind=kind, stable=stable)
        if not t.shape and axis is not None:
            with user_line_noted():
                getattr(np, prim)(np.zeros((), t.dtype), axis=axis)  # np.sort's AxisError
            axis = None  # NumPy's argsort of a 0-d value: of it flattened, shape (1,)
        params = {"axis": _axis_param(t, axis, name)}
        if stable or kind in ("stable", "mergesort"):  # (NumPy's 'mergesort' is its stable sort)
            params["kind"] = "stable"
        note(ctx, f"{name} runs as a library call (a sort: CUB on a GPU)")
        return ctx.numpy_scalar(bind_library(ctx, prim, [t], params)[0])

    return handler


def partition(ctx, a, kth, axis=-1, kind="introselect", order=None):
    if order is not None:
        raise unsupported("np.partition(order=...)")
    t = traced(ctx, a)
    kth = tuple(int(k) for k in np.atleast_1d(kth))
    size = t.size if axis is None else t.shape[_axis_param(t, axis, "np.partition")]
    for k in kth:
        if not -size <= k < size:
            raise ValueError(at_user_line(f"kth(={k}) out of bounds ({size})"))
    params = {"kth": kth if len(kth) > 1 else kth[0], "axis": _axis_param(t, axis, "np.partition")}
    note(ctx, "np.partition runs as a library call")
    return ctx.numpy_scalar(bind_library(ctx, "partition", [t], params)[0])


def _scan(prim):
    def handler(ctx, a, axis=None, dtype=None, out=None):
        if out is not None:
            raise unsupported(f"np.{prim}(..., out=...)")
        t = traced(ctx, a)
        if not t.shape and axis is not None:
            with user_line_noted():
                getattr(np, prim)(np.zeros((), t.dtype), axis=axis)
            axis = None  # a scan of a 0-d value along its one axis: shape (1,), as NumPy's
        params = {"axis": _axis_param(t, axis, f"np.{prim}")}
        if dtype is not None:
            params["dtype"] = check_supported(dtype, f"np.{prim}(dtype=...)")
        fused = _fused_scan(ctx, prim, t, params["axis"], params.get("dtype"))
        if fused is not None:
            return fused
        note(ctx, f"np.{prim} runs as a library call (a scan)")
        return ctx.numpy_scalar(bind_library(ctx, prim, [t], params)[0])

    return handler


def _fused_scan(ctx, prim, t, axis, dtype):
    """np.cumsum and friends as a scan primitive, fused with its producers and consumers in one
    pass over each row: the input cast to NumPy's result dtype (add.accumulate casts each element
    first, as this does), NaNs replaced as np.nancumsum replaces them, a flattened scan of the
    C-order ravel. float16 (NumPy rounds every partial result to half) and complex values stay a
    library call; None then."""
    stand_in = np.zeros((1,) * max(t.ndim, 1), t.dtype)
    result = np.dtype(getattr(np, prim)(stand_in, axis=axis, dtype=dtype).dtype)
    if result.kind not in "biuf" or result == np.float16 or t.dtype.kind == "c":
        return None
    x = t
    if prim.startswith("nan") and x.dtype.kind == "f":
        x = np.where(np.isnan(x), x.dtype.type(0 if prim == "nancumsum" else 1), x)
    if axis is None:
        x, axis = x.reshape(-1), 0
    x = ctx.convert(x, result)
    name = "scan_sum" if prim.endswith("cumsum") else "scan_prod"
    return ctx.bind(name, [ctx.atom(x)], x.shape, result, params=(("axes", (axis,)),))


# -- FFTs ------------------------------------------------------------------------------------------


def _fft1(name):
    def handler(ctx, a, n=None, axis=-1, norm=None, out=None):
        if out is not None:
            raise unsupported(f"np.fft.{name}(..., out=...)")
        t = traced(ctx, a)
        ax = _axis_param(t, axis, f"np.fft.{name}")
        if n is None:
            n = 2 * (t.shape[ax] - 1) if name == "irfft" else t.shape[ax]
        if n < 1:
            raise ValueError(at_user_line(f"Invalid number of FFT data points ({n}) specified."))
        params = {"axes": (ax,), "sizes": (int(n),), "norm": norm}
        note(ctx, f"np.fft.{name} runs as a library call (cuFFT on a GPU)")
        return ctx.numpy_scalar(bind_library(ctx, f"fft_{name}", [t], params)[0])

    return handler


def _fftn(name, two=False):
    def handler(ctx, a, s=None, axes=(-2, -1) if two else None, norm=None, out=None):
        if out is not None:
            raise unsupported(f"np.fft.{name}(..., out=...)")
        t = traced(ctx, a)
        if axes is None:
            axes = tuple(range(t.ndim - (len(s) if s is not None else t.ndim), t.ndim))
        axes = tuple(_axis_param(t, ax, f"np.fft.{name}") for ax in axes)
        if s is None:
            s = [t.shape[ax] for ax in axes]
            if name.startswith("irfft"):
                s[-1] = 2 * (t.shape[axes[-1]] - 1)
        params = {"axes": axes, "sizes": tuple(int(v) for v in s), "norm": norm}
        note(ctx, f"np.fft.{name} runs as a library call (cuFFT on a GPU)")
        return ctx.numpy_scalar(bind_library(ctx, f"fft_{name}", [t], params)[0])

    return handler


FUNCTIONS = {
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


# -- searches, interpolation, histograms (library calls) ---------------------------------------------


def _static_scalar(value, what):

    if isinstance(value, TracedArray):
        raise unsupported(f"{what} as a traced value", "pass it as a Python number")
    return None if value is None else float(value) if not isinstance(value, complex) else value


def searchsorted(ctx, a, v, side="left", sorter=None):
    if sorter is not None:
        raise unsupported("np.searchsorted(..., sorter=...)", "sort a first: np.searchsorted(a[sorter], v)")
    if side not in ("left", "right"):
        raise ValueError(at_user_line(f"side must be 'left' or 'right' (got {side!r})"))
    ta, tv = traced(ctx, a), traced(ctx, v)
    if ta.ndim != 1:
        raise ValueError(at_user_line("object too deep for desired array"))
    note(ctx, "np.searchsorted runs as a library call")
    return ctx.numpy_scalar(bind_library(ctx, "searchsorted", [ta, tv], {"side": side})[0])


def digitize(ctx, x, bins, right=False):
    tx, tb = traced(ctx, x), traced(ctx, bins)
    if tb.ndim != 1:
        raise ValueError(at_user_line("bins must be one-dimensional"))
    note(ctx, "np.digitize runs as a library call")
    return ctx.numpy_scalar(bind_library(ctx, "digitize", [tx, tb], {"right": bool(right)})[0])


def interp(ctx, x, xp, fp, left=None, right=None, period=None):
    params = {"left": _static_scalar(left, "np.interp's left"), "right": _static_scalar(right, "np.interp's right"),
              "period": _static_scalar(period, "np.interp's period")}
    tx, txp, tfp = traced(ctx, x), traced(ctx, xp), traced(ctx, fp)
    if txp.ndim != 1 or tfp.ndim != 1 or txp.shape != tfp.shape:
        with user_line_noted():
            np.interp(np.zeros(1), np.zeros(txp.shape), np.zeros(tfp.shape))
    note(ctx, "np.interp runs as a library call")
    return ctx.numpy_scalar(bind_library(ctx, "interp", [tx, txp, tfp], params)[0])


def histogram(ctx, a, bins=10, range=None, density=None, weights=None):

    ta = traced(ctx, a)
    inputs, params = [ta], {"range": None, "density": density, "weighted": weights is not None}
    if range is not None:
        params["range"] = tuple(_static_scalar(r, "np.histogram's range") for r in range)
    if isinstance(bins, str):
        raise unsupported(f"np.histogram(bins={bins!r})", "its number of bins depends on the data; pass a count or edges")
    if isinstance(bins, TracedArray) and bins.ndim == 0:
        import operator

        bins = operator.index(bins)  # a count from a scalar argument: made static
    if isinstance(bins, (TracedArray, list, tuple, np.ndarray)):
        edges = traced(ctx, bins)
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
        inputs.append(traced(ctx, weights))
    note(ctx, "np.histogram runs as a library call")
    counts, edges = bind_library(ctx, "histogram", inputs, params)
    return counts, edges


def bincount(ctx, x, /, weights=None, minlength=0):
    import operator

    tx = traced(ctx, x)
    minlength = operator.index(minlength)
    if tx.ndim != 1 or tx.dtype.kind not in "biu":
        with user_line_noted():
            np.bincount(np.zeros(tx.shape, tx.dtype))
    if minlength <= 0:
        raise unsupported("np.bincount without minlength",
                          "its length is max(x) + 1, known only from the data; pass minlength=N for N bins "
                          "(a larger x raises an error, never a wrong answer)")
    inputs = [tx] + ([traced(ctx, weights)] if weights is not None else [])
    note(ctx, "np.bincount runs as a library call")
    return ctx.numpy_scalar(bind_library(ctx, "bincount", inputs, {"minlength": minlength})[0])


FUNCTIONS.update({
    np.searchsorted: searchsorted,
    np.digitize: digitize,
    np.interp: interp,
    np.histogram: histogram,
    np.bincount: bincount,
})
