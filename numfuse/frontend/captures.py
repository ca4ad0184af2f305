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

The NumPy array attributes of a static argument (`self.w` of a method's `self`) are candidate
inputs too, each guarded by identity (`self.w = new_array` traces again). Not guarded: other
attributes (`self.scale`, `config.n` of a global `config`), and the Python scalars read by
helper functions the function calls; those are read when tracing, as constants
(docs/user-guide.md, "Globals and closures").
"""

from __future__ import annotations

import dis
import types
from typing import Callable

import numpy as np

__all__ = ["Captures", "captures_of", "guards_hold"]

_MISSING = object()
# Python values compared by value where the object differs (`n = 3` rebinds a new int object).
_BY_VALUE = (bool, int, float, complex, str, bytes, type(None))


class Captures:
    """The candidate arrays (id -> (name, array)), the guards of one trace, and the globals
    and closure cells holding arrays that the function's code names (`traced_function`)."""

    def __init__(self, arrays: dict, guards: tuple, named: tuple = (), assigns: bool = False):
        self.arrays = arrays
        self.guards = guards
        self.named = named  # ("global", name) or ("closure", index) of each array the code names
        self.assigns = assigns  # the code assigns to a global or closure variable


def _assigns(code: types.CodeType) -> bool:
    """Whether `code` (or code nested in it) assigns to a global or to a closure variable."""
    for instruction in dis.get_instructions(code):
        if instruction.opname in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            return True
        if instruction.opname in ("STORE_DEREF", "DELETE_DEREF") and instruction.argval in code.co_freevars:
            return True
    return any(_assigns(c) for c in code.co_consts if isinstance(c, types.CodeType))


def _names_read(code: types.CodeType, out: set) -> set:
    out.update(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):  # a nested function, lambda or comprehension
            _names_read(const, out)
    return out


def captures_of(fn: Callable, statics=()) -> Captures:
    """The candidate arrays and guards of `fn`; `statics`: (name, value) of its static
    arguments, whose array attributes (`self.w`) are candidates too, guarded by identity."""
    fn = getattr(fn, "__func__", fn)  # a staticmethod or classmethod's function
    code = getattr(fn, "__code__", None)
    module_globals = getattr(fn, "__globals__", None)
    if code is None or module_globals is None:
        return Captures({}, ())
    arrays: dict = {}
    guards: list = []
    for argument, value in statics:
        attributes = getattr(value, "__dict__", None)
        if not isinstance(attributes, dict) or isinstance(value, (types.ModuleType, type, types.FunctionType)):
            continue
        for name, attribute in attributes.items():
            if isinstance(attribute, np.ndarray):
                arrays[id(attribute)] = (f"{argument}.{name}", attribute)
                guards.append((attributes, name, attribute))
    for name, value in module_globals.items():
        if isinstance(value, np.ndarray):
            arrays[id(value)] = (f"global {name}", value)
    named = []
    for name in sorted(_names_read(code, set())):
        value = module_globals.get(name, _MISSING)
        if value is _MISSING or isinstance(value, types.ModuleType):
            continue
        guards.append((module_globals, name, value))
        if isinstance(value, np.ndarray):
            named.append(("global", name))
    for k, (name, cell) in enumerate(zip(code.co_freevars, fn.__closure__ or ())):
        try:
            value = cell.cell_contents
        except ValueError:  # a cell not yet filled (a name the function defines later)
            continue
        if isinstance(value, np.ndarray):
            arrays[id(value)] = (f"closure {name}", value)
            named.append(("closure", k))
        guards.append((cell, None, value))
    if not isinstance(fn, types.FunctionType):
        return Captures(arrays, tuple(guards))
    return Captures(arrays, tuple(guards), tuple(named), _assigns(code))


def traced_function(fn, ctx, captures: Captures):
    """`fn` for one trace: a copy of it whose globals (a copy of its module's, which stay as
    they are) and closure cells hold the trace's tracer of each array its code names, so that
    everything NumPy does with them in the function (`W.sum()`, `W.T`, `W * 2`) is traced and
    runs at each call, as in NumPy, not once at the trace. And a check to run after the call:
    the function assigned to a global or closure variable (`global n; n += 1`), which would
    happen only when tracing, raises NeedsGraphBreak: it then runs segment by segment, its
    Python code at every call."""
    from ..errors import NeedsGraphBreak

    fn = getattr(fn, "__func__", fn)
    if not (captures.named or captures.assigns) or not isinstance(fn, types.FunctionType):
        return fn, lambda: None
    new_globals = dict(fn.__globals__)
    # Every cell copied, so that what the trace assigns to one does not reach the real cell.
    cells = [types.CellType() if _cell(c) is _MISSING else types.CellType(_cell(c)) for c in fn.__closure__ or ()]
    for kind, key in captures.named:
        if kind == "global":
            new_globals[key] = ctx.external_array(new_globals[key])
        else:
            cells[key].cell_contents = ctx.external_array(cells[key].cell_contents)
    globals_before = dict(new_globals)
    cells_before = [_cell(c) for c in cells]
    closure = tuple(cells) if fn.__closure__ is not None else None
    copy = types.FunctionType(fn.__code__, new_globals, fn.__name__, fn.__defaults__, closure)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__

    def check() -> None:
        changed = [k for k, v in new_globals.items() if globals_before.get(k, _MISSING) is not v]
        changed += [fn.__code__.co_freevars[k] for k, c in enumerate(cells) if _cell(c) is not cells_before[k]]
        if changed:
            names = ", ".join(repr(n) for n in changed)
            reason = (f"{fn.__qualname__} assigns to {names} (a global or closure variable), which a trace would "
                      "do once: its Python code runs at every call")
            raise NeedsGraphBreak(reason, None)

    return copy, check


def _cell(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return _MISSING


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
        if type(value) is type(expected) and isinstance(value, (*_BY_VALUE, np.generic)):
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
