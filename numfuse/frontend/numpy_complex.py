"""Complex values on traced arrays: their parts (`x.real`, `x.imag`, np.real, np.imag), the
ComplexWarning NumPy gives when a cast drops the imaginary part, and the refusal of NumPy
functions numfuse does not compute on complex values.

Complex arithmetic itself is the op table's (ops.py: the 'c' templates of scalar_impl.py), and
its dtypes are NumPy's, as for every ufunc: a ufunc without a complex template is refused where
it is traced (np.log on complex64), never computed some other way.

Handlers take the trace context first; they never import the tracer (it imports this module).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from numpy.exceptions import ComplexWarning

from ..ir import viewmaps
from ..ir.dtypes import part_dtype
from ..errors import unsupported
from ..ir.ops import ELEMENTWISE, REDUCTIONS
from . import numpy_warnings
from .reduction_kinds import REDUCTION_KINDS, UFUNC_REDUCTIONS


def complex_operations() -> list[str]:
    """What numfuse computes on complex values, from the op table: the operations with a
    complex template, and the reductions whose combining operation has one."""
    def takes_complex(kind: str) -> bool:
        reduction = REDUCTION_KINDS[kind]
        return reduction.converts_to_bool or "c" in ELEMENTWISE[REDUCTIONS[reduction.prim].combine].impls

    names = [f"np.{op.ufunc.__name__}" for op in ELEMENTWISE.values() if op.ufunc and "c" in op.impls]
    names += [f"np.{op.name}" for op in ELEMENTWISE.values() if not op.ufunc and "c" in op.impls and hasattr(np, op.name)]
    names += [f"np.{kind}" for kind in REDUCTION_KINDS if takes_complex(kind) and "." not in REDUCTION_KINDS[kind].numpy_name]
    # Compositions of the above.
    names += ["np.average", "np.count_nonzero"]
    names += [f"np.{u.__name__}.reduce" for u, kind in UFUNC_REDUCTIONS.items() if takes_complex(kind)]
    return names


def complex_hint() -> str:
    return "on complex values numfuse computes " + ", ".join(complex_operations())


def refuse_complex(name: str, dtype) -> None:
    """UnsupportedError for a NumPy function that numfuse does not compute on complex values
    (NumPy does: a composition written for real values would give a wrong answer)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        raise unsupported(f"{name} on {dtype}", complex_hint())


def warn_if_imaginary_dropped(source, target) -> None:
    """NumPy's ComplexWarning for a cast of complex values to a real dtype other than bool (the
    cast keeps the real part; to bool it tests both parts, without a warning)."""
    try:
        target = np.dtype(target)
    except TypeError:
        return  # not a dtype: the cast itself refuses it
    if np.dtype(source).kind == "c" and target.kind not in "cb":
        numpy_warnings.warn("Casting complex values to real discards the imaginary part", ComplexWarning)


def part(ctx, tracer, which: str):
    """`x.real` or `x.imag` as NumPy gives them.

    Of a complex array: a view of that part, computed by the `real` or `imag` operation, so it
    sees later updates of x as NumPy's view does; writing through it writes that part of x in
    place, as in NumPy: x becomes the complex value of the part so written and x's other part
    (`_write_part`). Of a real array: x.real is x itself (a view that writes
    through) and x.imag is zeros that NumPy makes read-only. Of a scalar: a scalar of the same
    kind (Python's True.real is the int 1)."""
    dtype = tracer.dtype
    scalar = tracer._weak or tracer._numpy_scalar
    if dtype.kind == "c":
        if scalar:
            return ctx.bind(which, [ctx.atom(tracer)], (), part_dtype(dtype), weak=tracer._weak,
                            numpy_scalar=tracer._numpy_scalar)

        def make(var):
            return ctx.bind(which, [var], var.aval.shape, part_dtype(dtype))._var

        def rewrite(at, shape, value):
            _write_part(ctx, tracer, which, at, shape, value)

        view = ctx.view(tracer, make, dtype=part_dtype(dtype), rewrite=rewrite)
        view._var  # the operation is recorded now, at the user's line (later only if x changes)
        return view
    if tracer._weak and dtype.kind == "b":
        int64 = np.dtype(np.int64)
        tracer = ctx.bind("convert", [ctx.atom(tracer)], (), int64, params=(("dtype", int64),), weak=True)
        dtype = int64
    if which == "imag":
        zeros = ctx.broadcast(dtype.type(0), tracer.shape)
        if scalar:
            return ctx.wrap(ctx.atom(zeros), weak=tracer._weak, numpy_scalar=tracer._numpy_scalar)
        zeros._readonly = True
        return zeros
    return tracer  # x.real of a real x is x itself, as in NumPy


def _write_part(ctx, array, which: str, at, shape, value) -> None:
    """`value` written at the points `at` (a region of `shape`) of complex `array`'s part
    `which`: the part's values so updated, in an array of their own, then the whole of `array`
    set to the complex values of both parts (its other part as it was: the bits of each part
    kept, NaNs and infinities too, which arithmetic such as re + 1j * im would not)."""
    whole = array._var
    full, part = whole.aval.shape, part_dtype(whole.aval.dtype)
    other = "imag" if which == "real" else "real"
    written = ctx.wrap(ctx.new_array(ctx.bind(which, [whole], full, part)._var))
    written._assign_at(at, shape, value, through_view=True)
    kept = ctx.bind(other, [whole], full, part)._var
    parts = [written._var, kept] if which == "real" else [kept, written._var]
    rebuilt = ctx.bind("complex_from_parts", parts, full, whole.aval.dtype)
    array._assign_at(viewmaps.identity_map(full), full, rebuilt, through_view=True)


def _part_function(which: str) -> Callable:
    def handler(ctx, val):
        return part(ctx, ctx.as_tracer(ctx.operand(val)), which)

    handler.__name__ = which
    return handler


FUNCTIONS: dict[Callable, Callable] = {
    np.real: _part_function("real"),
    np.imag: _part_function("imag"),
}
