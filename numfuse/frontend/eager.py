"""The rest of a call on NumPy: where a run segment by segment has traced too much.

A function that breaks the graph in a loop (`while residual > tol:`) is traced again at every
call, segment by segment (graph_breaks.py); each traced operation costs tens of microseconds
of Python, where NumPy spends one or two on a small array. A flow solver whose loop runs 800
times, 1,400 operations an iteration, spent over a minute a call so. Past a budget of traced
operations in one call (numpy_fallback.TRACE_BUDGET, as for a trace without breaks), the run
goes on in NumPy from its next break: every live traced value (each Tracer and view the
function still holds, in variables or containers) becomes an *eager* proxy, the same Python
object standing for its real value (an array, a view of one, a NumPy scalar, a Python number),
to which it hands every operation. What those operations make are NumPy's own arrays and
scalars, so the rest of the call runs as the plain function would, and the signature then
runs as the plain function (numpy_fallback.MeasuredChoice).

The real values keep NumPy's sharing: an argument's is the caller's array, a view's a NumPy
view of its base's value, and two traced arrays that NumPy would hold apart (`b = x + 1` and
`c = x + 1`, one equation in the trace) get buffers of their own. Where a live value's real
counterpart is not known (numfuse's copy where NumPy's would be a view, `x[:, k]` for a traced
k; a view whose layout NumPy decides), the switch waits for a later break.
"""

from __future__ import annotations

import copy
import math
import operator
from typing import Any

import numpy as np

from ..ir import viewmaps
from .numpy_masked import MaskedSelection
from .proxy import Tracer, _View

_SET_CLASS = object.__dict__["__class__"].__set__  # (Tracer.__class__ is a read-only property)


def real(value, values: dict[int, tuple[Any, Any]]):
    """`value` with each eager proxy in it (in tuples, lists, dicts and sets) its real value."""
    if isinstance(value, (Tracer, EagerSelection)):
        found = values.get(id(value))
        if found is None or found[0] is not value:
            raise RuntimeError("numfuse internal error: a traced value without its real value, after the call "
                               "went on in NumPy (numfuse/frontend/eager.py)")
        return found[1]
    if isinstance(value, (list, tuple)) and not (isinstance(value, tuple) and hasattr(type(value), "_fields")):
        return type(value)(real(v, values) for v in value)
    if isinstance(value, tuple):
        return type(value)(*(real(v, values) for v in value))
    if isinstance(value, dict):
        return {real(k, values): real(v, values) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return type(value)(real(v, values) for v in value)
    return value


def _value(proxy):
    return object.__getattribute__(proxy, "_ctx").breaks.eager[id(proxy)][1]


def _values(proxy) -> dict:
    return object.__getattribute__(proxy, "_ctx").breaks.eager


def _binary(op, reflected=False):
    if reflected:
        return lambda self, other: op(real(other, _values(self)), _value(self))
    return lambda self, other: op(_value(self), real(other, _values(self)))


def _inplace(op):
    def update(self, other):
        value = _value(self)
        result = op(value, real(other, _values(self)))
        return self if result is value else result  # (an array written in place stays this object)

    return update


def _unary(op):
    return lambda self, *args: op(_value(self), *args)


# NumPy reads these before __array__: np.asarray(proxy) would be a new array over the value's
# memory, not the value itself (as np.asarray of an array is that array).
_HIDDEN = frozenset({"__array_interface__", "__array_struct__"})


def _getattribute(self, name):
    # numfuse's own fields are the proxy's; everything else, dunders included, the value's.
    if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
        return object.__getattribute__(self, name)
    if name in _HIDDEN:
        raise AttributeError(name)
    return getattr(_value(self), name)


def _getattr(self, name):
    # (after _getattribute's AttributeError: a private name the proxy lacks, or a hidden one)
    if name in _HIDDEN:
        raise AttributeError(name)
    return getattr(_value(self), name)


def _setattr(self, name, value):
    if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
        object.__setattr__(self, name, value)
    else:
        setattr(_value(self), name, real(value, _values(self)))


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    values = _values(self)
    result = getattr(ufunc, method)(*real(inputs, values), **real(kwargs, values))
    out = kwargs.get("out")
    if out is None:
        return result
    # NumPy returns the out= arrays themselves: here the proxies the function holds.
    outs = out if isinstance(out, tuple) else (out,)
    if isinstance(result, tuple):
        return tuple(o if real(o, values) is r else r for o, r in zip(outs, result))
    return outs[0] if real(outs[0], values) is result else result


def _array_function(self, func, types, args, kwargs):
    values = _values(self)
    return func(*real(args, values), **real(kwargs, values))


def _array(self, dtype=None, copy=None):
    if copy:
        return np.array(_value(self), dtype=dtype, copy=True)
    return np.asarray(_value(self), dtype=dtype)


def _pow(self, other, modulo=None):
    other = real(other, _values(self))
    return pow(_value(self), other) if modulo is None else pow(_value(self), other, modulo)


def _setitem(self, index, value):
    values = _values(self)
    _value(self)[real(index, values)] = real(value, values)


def _namespace() -> dict:
    ns: dict[str, Any] = {"__slots__": (), "__getattribute__": _getattribute, "__setattr__": _setattr,
                          "__getattr__": _getattr,
                          "__array_ufunc__": _array_ufunc, "__array_function__": _array_function,
                          "__array__": _array, "__pow__": _pow, "__rpow__": _binary(pow, True),
                          "__ipow__": _inplace(operator.ipow), "__setitem__": _setitem,
                          "__getitem__": _binary(operator.getitem),
                          "__delitem__": lambda self, index: operator.delitem(_value(self), real(index, _values(self))),
                          "__contains__": _binary(operator.contains),
                          "__divmod__": _binary(divmod), "__rdivmod__": _binary(divmod, True),
                          "__copy__": _unary(copy.copy),
                          "__deepcopy__": lambda self, memo: copy.deepcopy(_value(self), memo),
                          "__reduce_ex__": lambda self, protocol: _value(self).__reduce_ex__(protocol),
                          "__format__": _unary(format), "__round__": _unary(round)}
    for name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "and", "or", "xor", "lshift", "rshift",
                 "matmul"):
        op = getattr(operator, name + ("_" if name in ("and", "or") else ""))
        ns[f"__{name}__"] = _binary(op)
        ns[f"__r{name}__"] = _binary(op, True)
        ns[f"__i{name}__"] = _inplace(getattr(operator, f"i{name}"))
    for name in ("lt", "le", "gt", "ge", "eq", "ne"):
        ns[f"__{name}__"] = _binary(getattr(operator, name))
    for name, op in (("neg", operator.neg), ("pos", operator.pos), ("abs", abs), ("invert", operator.invert),
                     ("bool", bool), ("float", float), ("int", int), ("index", operator.index),
                     ("complex", complex), ("len", len), ("iter", iter), ("hash", hash), ("repr", repr),
                     ("str", str), ("trunc", math.trunc), ("floor", math.floor), ("ceil", math.ceil),
                     ("dir", dir)):
        ns[f"__{name}__"] = _unary(op)
    return ns


_NAMESPACE = _namespace()
EagerTracer = type("EagerTracer", (Tracer,), {**_NAMESPACE, "__doc__": "A Tracer that stands for its real value."})
EagerView = type("EagerView", (_View,), {**_NAMESPACE, "__doc__": "A traced view that stands for its real view."})
EagerSelection = type("EagerSelection", (MaskedSelection,),
                      {**_NAMESPACE, "__doc__": "x[mask] that stands for NumPy's x[mask], computed."})


def is_eager(value) -> bool:
    return isinstance(value, (EagerTracer, EagerView, EagerSelection))


# Where Python's own code asks a traced value for a Python value: TraceContext.concrete, then
# the Tracer's method that Python called (proxy.py).
_CONVERSIONS = frozenset({"concrete", "__bool__", "__float__", "__int__", "__index__", "__complex__", "__round__",
                          "__hash__", "__repr__", "__str__", "__format__", "item", "tolist"})
# numfuse's frames between the run and the function (jit_function's calls, arguments' wrappers).
_CALLERS = ("numfuse.jit_function", "numfuse.frontend.arguments")


def numfuse_frame(frame) -> bool:
    """Whether `frame` runs numfuse's own code."""
    if frame is None:
        return False
    module = frame.f_globals.get("__name__", "")
    return module == "numfuse" or module.startswith("numfuse.")


def at_user_level(frame) -> bool:
    """Whether `frame` (the caller of Breaker.value_of) is a conversion that Python's own code
    asked for, with no operation of numfuse under way below it: then every value numfuse made
    so far has reached the function, and the switch to NumPy leaves nothing half traced. (x[a:b]
    with traced bounds breaks inside numfuse's indexing, which goes on tracing after it.)"""
    conversions = 0
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        name = frame.f_code.co_name
        if module == "numfuse.frontend.graph_breaks" and name == "run_segmented":
            return True
        if numfuse_frame(frame):
            if conversions >= 0 and name in _CONVERSIONS and conversions < 2:
                conversions += 1
            elif not module.startswith(_CALLERS):
                return False
        else:
            conversions = -1  # (past the conversion: only the calls' own frames may follow)
        frame = frame.f_back
    return False


def real_values(breaker) -> dict[int, tuple[Any, Any]] | None:
    """After a break's run: each live traced value's real counterpart, by id (the proxy kept
    with it, so that its id stays its own), or None where one is not known (the module
    docstring says when)."""
    ctx = breaker.ctx
    live = [t for t in list(breaker._tracked.values()) if isinstance(t, Tracer)]
    if any(t._indexed_from is not None or isinstance(t._readonly, str) for t in live):
        return None
    roots = [t for t in live if not isinstance(t, _View)]
    views = [t for t in live if isinstance(t, _View)]
    found: dict[int, tuple[Any, Any]] = {}
    held: dict[int, Tracer] = {}  # each array object by its id: the root that holds it
    locking: list[np.ndarray] = []  # made read-only once the views of them are made
    # The root that owns a buffer (an argument, an array written in place) keeps it; another
    # root over the same value gets a copy, as NumPy's would be an array of its own.
    for t in sorted(roots, key=lambda t: not ctx.owns(t, t._var)):
        value = breaker.values[t._var]
        if not isinstance(value, np.ndarray) and not (t._weak or t._numpy_scalar):
            value = breaker.to_host(value)  # a device array: the host's copy is its value from now on
        if isinstance(value, np.ndarray):
            if id(value) in held:
                value = value.copy()
            elif t._readonly is True and value.flags.writeable and id(value) not in breaker.caller_arrays:
                locking.append(value)  # (read-only in NumPy too: a broadcast, flags.writeable = False)
            held[id(value)] = t
        found[id(t)] = (t, value)
    for view in views:
        if view._unsure is not None or view._refusal is not None:
            return None
        chain = breaker.view_chain(view)
        if chain is None or id(chain[0]) not in found:
            return None
        base = found[id(chain[0])][1]
        value = viewmaps.view_through(np, base, chain[1])
        if value is base:
            value = value.view()
        elif not np.may_share_memory(value, base) and value.size:
            return None  # (NumPy's reshape copied: not the view the trace followed)
        if view._readonly is True and value.flags.writeable:
            value.flags.writeable = False  # (np.diagonal's, as NumPy's)
        found[id(view)] = (view, value)
    for value in locking:
        value.flags.writeable = False
    return found


def switch(breaker, found: dict[int, tuple[Any, Any]]) -> None:
    """Make every live traced value an eager proxy of its real value (`found`, real_values')."""
    for selection in [s for s in list(breaker._tracked.values()) if isinstance(s, MaskedSelection)]:
        if selection._value is None:  # NumPy's x[mask], of the values it was taken of
            selection._value = found[id(selection.values)][1][found[id(selection.mask)][1]]
        found[id(selection)] = (selection, selection._value)
    breaker.eager = found
    for t, _ in found.values():
        cls = EagerSelection if isinstance(t, MaskedSelection) else EagerView if isinstance(t, _View) else EagerTracer
        _SET_CLASS(t, cls)


__all__ = ["EagerTracer", "EagerView", "is_eager", "real", "real_values", "switch"]
