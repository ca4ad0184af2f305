"""What a function reads besides its arguments: its globals and its closure.

NumPy reads a global or closure array's contents when the function runs, and Python looks a
global name up at each call. A trace runs once, so:

- every NumPy array among the function's globals and closure cells is a candidate input
  (`Captures.arrays`): one the trace reads becomes an input of the graph, passed at each call
  with its current contents (tracer.TraceContext._const);
- the names the function's code reads from its globals, and its closure cells, are guarded
  (`Captures.guards`): at each call (fast path included) each must still hold the object it
  held when traced, or an equal Python scalar or string; else jit traces again. A global that
  is rebound (`W = new_array`, `scale = 3.0`), a helper function redefined: a new trace.

Not guarded: attributes of objects (`self.w`, `config.scale` where `config` is a global whose
attribute changes), and the globals of helper functions the function calls; those are read
when tracing, as constants (docs/user-guide.md, "Globals and closures").
"""

from __future__ import annotations

import types
from typing import Callable

import numpy as np

__all__ = ["Captures", "captures_of", "guards_hold"]

_MISSING = object()
# Python values compared by value where the object differs (`n = 3` rebinds a new int object).
_BY_VALUE = (bool, int, float, complex, str, bytes, type(None))


class Captures:
    """The candidate arrays (id -> (name, array)) and the guards of one trace."""

    def __init__(self, arrays: dict, guards: tuple):
        self.arrays = arrays
        self.guards = guards

    def array_named(self, name: str):
        return next(a for n, a in self.arrays.values() if n == name)


def _names_read(code: types.CodeType, out: set) -> set:
    out.update(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):  # a nested function, lambda or comprehension
            _names_read(const, out)
    return out


def captures_of(fn: Callable) -> Captures:
    fn = getattr(fn, "__func__", fn)  # a staticmethod or classmethod's function
    code = getattr(fn, "__code__", None)
    module_globals = getattr(fn, "__globals__", None)
    if code is None or module_globals is None:
        return Captures({}, ())
    arrays: dict = {}
    guards: list = []
    for name, value in module_globals.items():
        if isinstance(value, np.ndarray):
            arrays[id(value)] = (f"global {name}", value)
    for name in sorted(_names_read(code, set())):
        value = module_globals.get(name, _MISSING)
        if value is _MISSING or isinstance(value, types.ModuleType):
            continue
        guards.append((module_globals, name, value))
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:  # a cell not yet filled (a name the function defines later)
            continue
        if isinstance(value, np.ndarray):
            arrays[id(value)] = (f"closure {name}", value)
        guards.append((cell, None, value))
    return Captures(arrays, tuple(guards))


def _current(holder, name):
    if name is None:
        try:
            return holder.cell_contents
        except ValueError:
            return _MISSING
    return holder.get(name, _MISSING)


def guards_hold(guards: tuple) -> bool:
    """Whether every guarded global and closure cell holds what it held when traced."""
    for holder, name, expected in guards:
        value = _current(holder, name)
        if value is expected:
            continue
        if type(value) is type(expected) and isinstance(value, _BY_VALUE):
            try:
                if value == expected:
                    continue
            except Exception:
                pass
        return False
    return True


def changed_guard(guards: tuple) -> str | None:
    """The name of the first guard that no longer holds (for explain and debugging)."""
    for holder, name, expected in guards:
        if not guards_hold(((holder, name, expected),)):
            return name if name is not None else "a closure variable"
    return None
