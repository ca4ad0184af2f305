"""The primitive registry: every primitive of the IR, once, with its kind and its abstract
evaluation rule (the aval of its result from its operands' avals and its parameters).

The kinds, and what reads them:

- "elementwise" (ops.ELEMENTWISE; a scalar template each): fused anywhere;
- "reduction" (ops.REDUCTIONS): the accumulators of a reduction kernel;
- "scan" (ops.REDUCTIONS' scan_sum, scan_prod): an accumulator of a reduction kernel whose
  running value, point by point along the row, is the result (np.cumsum, np.cumprod);
- "view" (broadcast, transpose, slice, reshape): index maps, no arithmetic (viewmaps.py);
- "convert": a cast, elementwise;
- "concatenate": a select between operands by the index along an axis;
- "update": a region of an array's buffer written in place;
- "gather": an indirect load (numpy_indexing.py);
- "iota": 0, 1, ..., n-1 (int64), the index of the point, computed where it is read, never
  memory: the arrays a function makes (np.arange, np.eye, np.indices: numpy_creation.py);
- "library": a library call between kernels (library_ops.py).

`abstract_eval(eqn)` re-derives an equation's aval; `ir.check_graph(graph, abstract_eval)` runs
it on every equation of every traced graph (as JAX's check_jaxpr does; a graph break's segment
once per structure, where it is planned), so a rule that disagrees with what the tracer
recorded is a bug found at once. Dtypes come from NumPy itself
(`ufunc.resolve_dtypes`), never from a table here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .dtypes import complex_dtype, part_dtype
from .graph import Aval, Eqn
from .library_ops import LIBRARY
from .ops import ELEMENTWISE, MULTI_OUTPUT, REDUCTIONS


@dataclass(frozen=True)
class Primitive:
    name: str
    kind: str
    # (operand avals, params, the recorded result) -> the result's aval. The recorded result is
    # only consulted where the parameters leave something open (a slice's lengths).
    abstract: Callable[[list[Aval], dict, Aval], Aval]


def _shape(avals) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*[a.shape for a in avals]))


def _ufunc_rule(ufunc: np.ufunc, output: int = -1):
    def rule(avals, params, out):
        dtypes = ufunc.resolve_dtypes(tuple(a.dtype for a in avals) + (None,) * ufunc.nout)
        return Aval(_shape(avals), dtypes[ufunc.nin:][output])

    return rule


def _same_dtype_as(operand: int):
    return lambda avals, params, out: Aval(_shape(avals), avals[operand].dtype)


def _elementwise_rule(op) -> Callable:
    if op.ufunc is not None:
        return _ufunc_rule(op.ufunc)
    for ufunc, parts in MULTI_OUTPUT.items():
        if op.name in parts:
            return _ufunc_rule(ufunc, parts.index(op.name))
    if op.name in ("real", "imag"):
        return lambda avals, params, out: Aval(avals[0].shape, part_dtype(avals[0].dtype))
    if op.name == "float_bits":
        return lambda avals, params, out: Aval(_shape(avals), np.dtype(f"i{avals[0].dtype.itemsize}"))
    if op.name == "int_bits":
        return lambda avals, params, out: Aval(_shape(avals), np.dtype(params["dtype"]))
    if op.name == "float_from_bits":
        return lambda avals, params, out: Aval(_shape(avals), np.dtype(f"f{avals[0].dtype.itemsize}"))
    if op.name == "complex_from_parts":
        return lambda avals, params, out: Aval(_shape(avals), complex_dtype(avals[0].dtype))
    if op.name == "where":
        return _same_dtype_as(1)
    if op.name == "gather_index":
        return lambda avals, params, out: Aval(_shape(avals), np.dtype(np.int64))
    if op.name == "nonempty" or op.name.startswith("python_"):  # (checks: a bool)
        return lambda avals, params, out: Aval(_shape(avals), np.dtype(bool))
    return _same_dtype_as(0)  # the float16 forms of nextafter and spacing


def _reduction_rule(avals, params, out):
    (a,) = avals
    axes, keepdims = params["axes"], params["keepdims"]
    shape = tuple(1 if i in axes else s for i, s in enumerate(a.shape)) if keepdims else \
        tuple(s for i, s in enumerate(a.shape) if i not in axes)
    return Aval(shape, a.dtype)


def _scan(avals, params, out):
    """A scan keeps its operand's shape and dtype (the frontend casts to NumPy's result dtype
    first); it runs along one axis."""
    (a,) = avals
    if len(params["axes"]) != 1 or not 0 <= params["axes"][0] < a.ndim:
        raise AssertionError(f"scan: one axis of {a.shape}, not {params['axes']}")
    return Aval(a.shape, a.dtype)


def _reduction_of(op) -> Callable:
    if op.scan:
        return _scan
    if op.indexed:
        return lambda avals, params, out: Aval(_reduction_rule(avals, params, out).shape, np.dtype(np.int64))
    if op.combine in ("logical_or", "logical_and"):
        return lambda avals, params, out: Aval(_reduction_rule(avals, params, out).shape, np.dtype(bool))
    return _reduction_rule


def _broadcast(avals, params, out):
    shape = tuple(params["shape"])
    np.broadcast_shapes(avals[0].shape, shape)
    return Aval(shape, avals[0].dtype)


def _transpose(avals, params, out):
    return Aval(tuple(avals[0].shape[p] for p in params["perm"]), avals[0].dtype)


def _slice(avals, params, out):
    """A slice's lengths are not parameters: the recorded result's must fit in the operand."""
    (a,) = avals
    start, step, drop = params["start"], params["step"], params["drop"]
    kept = [k for k in range(a.ndim) if k not in drop]
    if len(kept) != out.ndim:
        raise AssertionError("slice: the result's rank is not the operand's less the dropped axes")
    for k, length in zip(kept, out.shape):
        if length and not (0 <= start[k] < a.shape[k] and 0 <= start[k] + (length - 1) * step[k] < a.shape[k]):
            raise AssertionError(f"slice: {length} points from {start[k]} by {step[k]} leave axis {k} of {a.shape}")
    for k in drop:
        if not 0 <= start[k] < a.shape[k]:
            raise AssertionError(f"slice: index {start[k]} outside axis {k} of {a.shape}")
    return Aval(out.shape, a.dtype)


def _reshape(avals, params, out):
    shape = tuple(params["shape"])
    if int(np.prod(shape, dtype=np.int64)) != avals[0].size:
        raise AssertionError(f"reshape of {avals[0].shape} to {shape}")
    return Aval(shape, avals[0].dtype)


def _convert(avals, params, out):
    return Aval(avals[0].shape, np.dtype(params["dtype"]))


def _concatenate(avals, params, out):
    axis = params["axis"]
    shape = list(avals[0].shape)
    shape[axis] = sum(a.shape[axis] for a in avals)
    return Aval(tuple(shape), avals[0].dtype)


def _update(avals, params, out):
    return Aval(avals[0].shape, avals[0].dtype)


def _gather(avals, params, out):
    x, *indices = avals
    axis = params["axis"]
    joint = _shape(indices)
    if any(i.dtype != np.int64 for i in indices):
        raise AssertionError("gather: index arrays are int64")
    return Aval(x.shape[:axis] + joint + x.shape[axis + len(indices):], x.dtype)


def _iota(avals, params, out):
    if avals or out.ndim != 1:
        raise AssertionError("iota: no operands, one axis")
    return Aval(out.shape, np.dtype(np.int64))


def _library_rule(op) -> Callable:
    def rule(avals, params, out):
        options = {k: v for k, v in params.items() if k != "output"}
        return op.abstract(avals, options)[params.get("output", 0)]

    return rule


PRIMITIVES: dict[str, Primitive] = {}
for _op in ELEMENTWISE.values():
    PRIMITIVES[_op.name] = Primitive(_op.name, "elementwise", _elementwise_rule(_op))
for _op in REDUCTIONS.values():
    PRIMITIVES[_op.name] = Primitive(_op.name, "scan" if _op.scan else "reduction", _reduction_of(_op))
for _name, _rule in (("broadcast", _broadcast), ("transpose", _transpose), ("slice", _slice), ("reshape", _reshape)):
    PRIMITIVES[_name] = Primitive(_name, "view", _rule)
PRIMITIVES["convert"] = Primitive("convert", "convert", _convert)
PRIMITIVES["concatenate"] = Primitive("concatenate", "concatenate", _concatenate)
PRIMITIVES["update"] = Primitive("update", "update", _update)
PRIMITIVES["gather"] = Primitive("gather", "gather", _gather)
PRIMITIVES["iota"] = Primitive("iota", "iota", _iota)
for _op in LIBRARY.values():
    PRIMITIVES[_op.name] = Primitive(_op.name, "library", _library_rule(_op))

VIEWS = frozenset(name for name, p in PRIMITIVES.items() if p.kind == "view")


def kind(prim: str) -> str:
    return PRIMITIVES[prim].kind


def abstract_eval(eqn: Eqn) -> Aval:
    """The aval the registry's rule gives `eqn`'s result."""
    return PRIMITIVES[eqn.prim].abstract([a.aval for a in eqn.inputs], dict(eqn.params), eqn.out.aval)
