"""What a function changes besides its result and its arguments' arrays: the items of its
container arguments (`params["w"] = ...`, `history.append(x)`), the attributes of objects it
reaches (`self.cache = x`, `model.state = ...`), items of global dicts and lists, global and
closure variables.

NumPy's function makes each such change at every call, with real values. A trace runs the
Python code once, with traced values, so:

- a full trace watches what the function can reach (`Watch`, made before the call and compared
  after it): a change makes the function run segment by segment (graph_breaks.py), its Python
  code at every call, as in NumPy; what the trace changed is undone first, so that no traced
  value is left in the user's objects;
- a run segment by segment changes the real objects: at its end (or where it raises), every
  traced value left in them (`Watch.escaped`) gets its value (`settled`), and each container
  argument that the function changed is changed the same way in the caller's container
  (arguments.ContainerCopies.sync).

What is watched: a method's `self` and the static arguments that are objects, the globals the
code names and the closure's cells, and what they hold, MAX_DEPTH links deep (attributes,
dict values, list and tuple items), at most MAX_HOLDERS dicts and lists in all.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

from .proxy import Tracer

__all__ = ["Effects", "Watch", "settled", "tracers_in"]

MAX_DEPTH = 2
MAX_HOLDERS = 256
# Never followed: their attributes are libraries' state, not the user's.
_OPAQUE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
           np.ndarray, np.generic, np.dtype, np.ufunc, str, bytes, int, float, complex, bool, type(None), Tracer)


def _names_named(code: types.CodeType, out: set) -> set:
    out.update(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _names_named(const, out)
    return out


class Watch:
    """The dicts, lists and cells a function can change, found from its roots, each with a
    label that names it as the user would (`self`, `global CACHE`, `params['opt']`), and
    what each held when the watch was made."""

    def __init__(self, fn, roots: list[tuple[str, Any]]):
        self.holders: list[tuple[str, str, Any]] = []  # (label, kind, dict | list | _Keys | _Cell)
        self._seen: set[int] = set()
        roots = list(roots)
        if isinstance(fn, types.MethodType):
            roots.append(("self", fn.__self__))
        fn = getattr(fn, "__func__", fn)
        code = getattr(fn, "__code__", None)
        module_globals = getattr(fn, "__globals__", None)
        if code is not None and isinstance(module_globals, dict):
            names = sorted(_names_named(code, set()))
            # The module's globals that the code names: `H = x` under `global H`.
            self._add("global", "globals", _Keys(module_globals, names))
            roots += [(n, module_globals[n]) for n in names if n in module_globals]
            for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
                self._add(name, "cell", _Cell(cell))
                try:
                    roots.append((name, cell.cell_contents))
                except ValueError:  # an empty cell
                    pass
        frontier = roots
        for _ in range(MAX_DEPTH):
            reached = []
            for label, value in frontier:
                reached += self._follow(label, value)
            frontier = reached
        self.before = [_contents(h) for _, _, h in self.holders]

    def _add(self, label: str, kind: str, holder) -> bool:
        key = id(holder.mapping if isinstance(holder, _Keys) else holder)
        if key in self._seen or len(self.holders) >= MAX_HOLDERS:
            return False
        self._seen.add(key)
        self.holders.append((label, kind, holder))
        return True

    def _follow(self, label: str, value) -> list:
        """Watch what `value` lets the function change; the values it holds, to follow."""
        if isinstance(value, _OPAQUE):
            return []
        if isinstance(value, dict):
            if not self._add(label, "items", value):
                return []
            return [(f"{label}[{k!r}]", v) for k, v in list(value.items())[:MAX_HOLDERS]]
        if isinstance(value, list):
            if not self._add(label, "items", value):
                return []
            return [(f"{label}[{i}]", v) for i, v in enumerate(value[:MAX_HOLDERS])]
        if isinstance(value, tuple):
            return [(f"{label}[{i}]", v) for i, v in enumerate(value[:MAX_HOLDERS])]
        attributes = getattr(value, "__dict__", None)
        if type(attributes) is not dict or type(value).__module__.split(".")[0] in _LIBRARIES:
            return []
        if not self._add(label, "attributes", attributes):
            return []
        return [(f"{label}.{k}", v) for k, v in list(attributes.items())[:MAX_HOLDERS]]

    def changed(self) -> list[str]:
        """What changed since the watch was made, as the user names it: `self.cache`,
        `global H`, `CACHE['x']`, `history`."""
        found = []
        for (label, kind, holder), before in zip(self.holders, self.before):
            after = _contents(holder)
            if _same(before, after):
                continue
            if kind in ("attributes", "globals"):
                old = dict(before)
                key = next((k for k, v in after if old.get(k, _ABSENT) is not v),
                           next((k for k, _ in before if k not in dict(after)), None))
                found.append(f"global {key}" if kind == "globals" else f"{label}.{key}")
            else:
                found.append(label)
        return found

    def restore(self) -> None:
        """Put back what each holder held when the watch was made."""
        for (_, _, holder), before in zip(self.holders, self.before):
            if not _same(before, _contents(holder)):
                _put(holder, before)

    def escaped(self) -> list[tuple[Any, Any, Any]]:
        """(holder, key, value) of each item that holds a traced value now."""
        found = []
        for _, _, holder in self.holders:
            for key, value in _contents(holder):
                if value is not _ABSENT and tracers_in(value, []):
                    found.append((holder, key, value))
        return found


class _Keys:
    """Some names of a dict (a module's globals that the code names)."""

    def __init__(self, mapping: dict, names: list[str]):
        self.mapping, self.names = mapping, names


class _Cell:
    def __init__(self, cell):
        self.cell = cell


_ABSENT = object()
# Modules whose objects are never followed: their attributes are the library's state.
_LIBRARIES = ("numpy", "numfuse", "numba", "cupy", "builtins", "functools", "collections")


def _contents(holder) -> tuple:
    """(key, value) of each item."""
    if isinstance(holder, _Keys):
        return tuple((n, holder.mapping.get(n, _ABSENT)) for n in holder.names)
    if isinstance(holder, _Cell):
        try:
            return ((None, holder.cell.cell_contents),)
        except ValueError:
            return ((None, _ABSENT),)
    if isinstance(holder, dict):
        return tuple(holder.items())
    return tuple(enumerate(holder))


def _same(before: tuple, after: tuple) -> bool:
    return len(before) == len(after) and all(
        a[1] is b[1] and (a[0] is b[0] or a[0] == b[0]) for a, b in zip(before, after))


def _put(holder, contents: tuple) -> None:
    if isinstance(holder, _Keys):
        for name, value in contents:
            if value is _ABSENT:
                holder.mapping.pop(name, None)
            else:
                holder.mapping[name] = value
    elif isinstance(holder, _Cell):
        if contents[0][1] is _ABSENT:
            del holder.cell.cell_contents
        else:
            holder.cell.cell_contents = contents[0][1]
    elif isinstance(holder, dict):
        holder.clear()
        holder.update(contents)
    else:
        holder[:] = [v for _, v in contents]


def _set(holder, key, value) -> None:
    if isinstance(holder, _Keys):
        holder.mapping[key] = value
    elif isinstance(holder, _Cell):
        holder.cell.cell_contents = value
    else:
        holder[key] = value


def tracers_in(value, found: list) -> list:
    """Every traced value inside `value`, through lists, tuples and dicts."""
    if isinstance(value, Tracer):
        found.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            tracers_in(v, found)
    elif isinstance(value, dict):
        for v in value.values():
            tracers_in(v, found)
    return found


def settled(value, real):
    """`value` with each traced value in it replaced by `real(tracer)`, containers rebuilt
    as their own types."""
    if isinstance(value, Tracer):
        return real(value)
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return type(value)(*(settled(v, real) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(settled(v, real) for v in value)
    if isinstance(value, dict):
        items = {k: settled(v, real) for k, v in value.items()}
        if type(value) is dict:
            return items
        value.update(items)  # (a dict subclass keeps its type and its other state)
        return value
    return value


class Effects:
    """What one run segment by segment changes besides its result: the objects it reaches
    (`watch`) and the copies of its container arguments (arguments.ContainerCopies, or None)."""

    def __init__(self, watch: Watch, copies=None):
        self.watch, self.copies = watch, copies
        self._escaped: list = []

    def tracers(self) -> list:
        """The traced values the run left in what it changed: each needs its value."""
        self._escaped = self.watch.escaped()
        found: list = []
        for _, _, value in self._escaped:
            tracers_in(value, found)
        for copy in self.copies.changed_copies() if self.copies is not None else ():
            tracers_in(copy, found)
        return found

    def settle(self, real) -> None:
        """Give each traced value that `tracers` found its value, `real(tracer)`, where it was
        left, and change the caller's containers as the function changed their copies."""
        for holder, key, value in self._escaped:
            _set(holder, key, settled(value, real))
        if self.copies is not None:
            self.copies.sync(real)
