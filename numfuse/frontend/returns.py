"""Results as NumPy returns them, where the plan's outputs are not yet: a view of an argument
as the same view of the caller's array (tracer.returned_view), an argument traced as a view of
the base of arguments sharing memory as the caller's object, and arrays computed from an
ndarray subclass as that class."""

from __future__ import annotations

import numpy as np

from ..ir.graph import Var
from .tracer import returned_view


def as_numpy_returns(compiled, outputs, traced_values, wrapper, arguments=()) -> list:
    """The outputs as NumPy returns them: a view of an argument as a view of the caller's
    array (tracer.returned_view), and arrays computed from an ndarray subclass as that class
    (its __array_wrap__, as NumPy's ufuncs call it)."""
    outputs = list(outputs)
    for k, (argument, chain) in compiled.traced.views.items():
        outputs[k] = view_or_copy(traced_values[argument], chain, outputs[k])
    for k, position in compiled.traced.returned.items():
        outputs[k] = arguments[position]  # the argument itself, as NumPy returns it
    for k, (other, chain) in compiled.traced.output_views.items():
        outputs[k] = view_or_copy(outputs[other], chain, outputs[k])  # a view of that result, as NumPy's
    for k, first in compiled.traced.same_as.items():
        outputs[k] = outputs[first]  # (`return y, y`: the same array object twice, as NumPy's)
    for k in compiled.traced.readonly:
        if isinstance(outputs[k], np.ndarray):  # (x.imag of a real x: zeros NumPy makes read-only)
            outputs[k].flags.writeable = False
    if wrapper is not None:
        reaching = inputs_reaching(compiled.traced.graph)
        for k, (value, kind) in enumerate(zip(outputs, compiled.traced.leaf_kinds)):
            if kind == "array" and type(value) is np.ndarray and k not in compiled.traced.views:
                # Wrapped by the subclass arguments it is computed from, as NumPy's ufuncs
                # wrap: not one made inside, or computed from plain arrays only.
                found = subclass_wrapper([traced_values[j] for j in reaching[k] if j < len(traced_values)])
                if found is not None:
                    outputs[k] = found.__array_wrap__(value, None, False)
    return outputs


def view_or_copy(base, chain, computed):
    """`chain` applied to `base` by its own library (NumPy's, CuPy's, Numba's device arrays'
    slicing, transpose and reshape): a view of the caller's array; where the library cannot
    make that view (a broadcast of a Numba device array, a library without views), the
    `computed` result, a new array of the view's values."""
    if isinstance(base, np.ndarray) or type(base).__module__.split(".")[0] == "cupy":
        view = returned_view(base, chain)
        return base.view() if view is base else view  # (x[:], x.view(): a new array object, as NumPy's)
    try:
        view = returned_view(base, chain)
    except Exception:  # (what the library's own view methods raise varies)
        return computed
    return view if type(view) is type(computed) else computed


def subclass_wrapper(values):
    """The array argument of an ndarray subclass whose __array_wrap__ NumPy would call on a
    result (the highest __array_priority__), or None."""
    subclassed = [v for v in values if isinstance(v, np.ndarray) and type(v) is not np.ndarray]
    if not subclassed:
        return None
    return max(subclassed, key=lambda v: getattr(v, "__array_priority__", 0.0))


def inputs_reaching(graph) -> list[set[int]]:
    """For each output of `graph`, the positions of the inputs it is computed from."""
    positions = {v: {k} for k, v in enumerate(graph.inputs)}
    for eqn in graph.eqns:
        found: set[int] = set()
        for atom in eqn.inputs:
            if isinstance(atom, Var):
                found |= positions.get(atom, set())
        positions[eqn.out] = found
    return [positions.get(o, set()) if isinstance(o, Var) else set() for o in graph.outputs]
