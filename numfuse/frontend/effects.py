"""What a function changes besides its result and its arguments' arrays: the items of its
container arguments (`params["w"] = ...`, `history.append(x)`), the attributes of objects it
reaches (`self.cache = x`, `model.state = ...`), items of global dicts and lists, global and
closure variables.

NumPy's function makes each such change at every call, with real values. A trace runs the
Python code once, with traced values, so:

- a full trace watches what the function can reach (`Watch`, made before the call and compared
  after it), and undoes what the trace changed, so that no traced value is left in the user's
  objects. A change that each call makes alike, traced values put somewhere (`self.cache = h`,
  `params["h"] = h`, `history.append(h)` of an argument), is replayed (`Replay`): the values are
  outputs of the plan, and each call puts them there. Any other change (a Python value, a key
  removed, a list of the user's objects that grows) makes the function run segment by segment
  (graph_breaks.py), its Python code at every call, as in NumPy;
- a run segment by segment changes the real objects: at its end (or where it raises), every
  traced value left in them (`Watch.escaped`) gets its value (`settled`), and each container
  argument that the function changed is changed the same way in the caller's container
  (arguments.ContainerCopies.sync).

What is watched: a method's `self` and the static arguments that are objects, the globals the
code names and the closure's cells, and what they hold, MAX_DEPTH links deep (attributes,
dict values, list and tuple items), at most MAX_HOLDERS dicts and lists of at most MAX_ITEMS
items each.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..errors import NeedsGraphBreak, NumfuseError
from .arguments import holds_caller_container, leaves_of, rebuilt_container
from .captures import MISSING, names_read, place_guard, with_code
from .traced import is_host_array
from .proxy import Tracer

__all__ = ["Effects", "Replay", "TraceEffects", "Watch", "after_raise", "after_trace", "replay_of", "settled"]

MAX_DEPTH = 4
MAX_HOLDERS = 256
MAX_ITEMS = 4096  # a longer dict or list is not watched (its snapshot would cost each trace)
# Never followed: their attributes are libraries' state, not the user's.
_OPAQUE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
           np.ndarray, np.generic, np.dtype, np.ufunc, str, bytes, int, float, complex, bool, type(None), Tracer)


class Watch:
    """The dicts, lists and cells a function can change, found from its roots, each with a
    label that names it as the user would (`self`, `global CACHE`, `params['opt']`), and
    what each held when the watch was made."""

    def __init__(self, fn, roots: list[tuple[str, Any]]):
        self.holders: list[tuple[str, str, Any]] = []  # (label, kind, dict | list | _Keys | _Cell)
        self._seen: set[int] = set()
        roots = list(roots)
        fn = with_code(fn)
        if isinstance(fn, types.MethodType):
            roots.append(("self", fn.__self__))
        fn = getattr(fn, "__func__", fn)
        code = getattr(fn, "__code__", None)
        module_globals = getattr(fn, "__globals__", None)
        if code is not None and isinstance(module_globals, dict):
            names = sorted(names_read(code, set()))
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
        if key in self._seen or len(self.holders) >= MAX_HOLDERS or \
                isinstance(holder, (dict, list)) and len(holder) > MAX_ITEMS:
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
                if value is not _ABSENT and leaves_of(value, Tracer, []):
                    found.append((holder, key, value))
        return found


    def locked(self) -> "Callable[[], None]":
        """Make every writeable NumPy array the watched places hold read-only while a trace
        runs; the function it returns makes them writeable again. A trace that writes into
        one with real values (an item read by a computed key, `Q[s][a] += v`, which the trace
        cannot follow) then meets NumPy's read-only error, and the function runs segment by
        segment, as `read_only_error` says, instead of writing once, when tracing."""
        # (Only items of dicts and lists: arrays in attributes and globals are read through
        # their tracers while tracing, captures.swapped_arrays, and other threads use them.)
        arrays = [value for _, kind, holder in self.holders if kind == "items" for _, value in _contents(holder)
                  if type(value) is np.ndarray and value.flags.writeable]
        for array in arrays:
            array.flags.writeable = False

        def unlock() -> None:
            for array in arrays:
                array.flags.writeable = True

        unlock.arrays = arrays
        return unlock

    def kept(self) -> "Callable[[], None]":
        """A copy of every NumPy array the watched places hold now; the function it returns
        puts their values back, and the places' contents (restore): what explain uses to run a
        function and leave what it reaches as it was."""
        arrays = [(value, value.copy()) for _, _, holder in self.holders for _, value in _contents(holder)
                  if isinstance(value, np.ndarray) and value.flags.writeable]

        def put_back() -> None:
            self.restore()
            for array, values in arrays:
                array[...] = values

        return put_back


class _Keys:
    """Some names of a dict (a module's globals that the code names)."""

    def __init__(self, mapping: dict, names: list[str]):
        self.mapping, self.names = mapping, names


class _Cell:
    def __init__(self, cell):
        self.cell = cell


_ABSENT = object()
# Modules whose objects are never followed: their attributes are the library's state.
_LIBRARIES = ("numpy", "numfuse", "numba", "cupy", "functools", "collections")


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


def settled(value, real):
    """`value` with each traced value in it replaced by `real(tracer)`, containers rebuilt
    as their own types."""
    if isinstance(value, Tracer):
        return real(value)
    if isinstance(value, (list, tuple, dict)):
        return rebuilt_container(value, lambda v: settled(v, real))
    return value


class Replay:
    """The changes of a full trace that each call makes again, with the plan's values (as
    torch.compile replays a graph's side effects): the function's value comes with the traced
    values it put somewhere, and `apply` puts each where the function put it. Only changes that
    are the same at every call are replayed (`replay_of`)."""

    def __init__(self, slots: list, labels: list[str]):
        self.slots = slots  # ("holder", dict or list, key) or ("argument", route, key)
        self.labels = labels

    def apply(self, values, arguments) -> None:
        """Put `values` in their places; `arguments`: the call's bound arguments, where the
        routes of container arguments start."""
        for (kind, where, key), value in zip(self.slots, values):
            if kind == "argument":
                container = arguments[where[0]]
                for step in where[1:]:
                    container = container[step]
                where = container
            if isinstance(where, list) and key == len(where):
                where.append(value)
            else:
                where[key] = value

    def __str__(self) -> str:
        return (f"the function sets {', '.join(self.labels)}: each call does so again, with the values "
                "its plan computes (the last outputs)")


def replay_of(watch: Watch, copies=None, ctx=None, swapped=None) -> "tuple[Replay, list, list] | None":
    """What the function changed, as a Replay, the traced values it put there, and the guards
    of the places it set among the user's objects (captures.place_guard: the next call must find
    there what the trace found, or trace again); None where a change is not one a call can make
    again from values alone: a key or item removed, a list of the user's objects that grew, a
    global or closure variable, a Python value put somewhere (a counter `self.calls += 1`), a
    container the function was given put elsewhere, or an array replaced that the trace read as
    a constant (`Q[s] = Q[s] + x` of a computed key s: its contents are not read at each call).
    `swapped`: (id of holder, key) -> array, of the places whose arrays the trace reads at each
    call (captures.swapped_arrays put a tracer there); `ctx`: the trace's context."""
    slots, labels, values, guards = [], [], [], []
    swapped = swapped or {}

    def read_once(holder, key, before) -> bool:
        """Whether the trace read the array `before` (what the place held) other than from the
        place at each call."""
        if ctx is None or not is_host_array(before):
            return False
        read = id(before) in ctx._const_by_id or id(before) in ctx.external_tracers
        return read and (id(holder), key) not in swapped

    def put(slot, label, value) -> bool:
        if not _traced_only(value, copies):
            return False
        slots.append(slot)
        labels.append(label)
        values.append(value)
        return True

    for (label, kind, holder), before in zip(watch.holders, watch.before):
        after = _contents(holder)
        if _same(before, after):
            continue
        if kind not in ("attributes", "items"):
            return None
        if isinstance(holder, dict):
            old = dict(before)
            if [k for k, _ in after[:len(before)]] != [k for k, _ in before]:
                return None  # (a key removed, or the keys reordered: `d.pop(k); d[k] = v`)
            for key, value in after:
                name = f"{label}.{key}" if kind == "attributes" else f"{label}[{key!r}]"
                previous = old.get(key, _ABSENT)
                if previous is value:
                    continue
                previous = swapped.get((id(holder), key), previous)  # (the array a swap put a tracer for)
                if not put(("holder", holder, key), name, value) or read_once(holder, key, previous):
                    return None
                guards.append(place_guard(holder, key, kind, MISSING if previous is _ABSENT else previous))
        else:
            if len(after) != len(before):
                return None
            for (key, value), (_, old_value) in zip(after, before):
                if value is not old_value and (not put(("holder", holder, key), f"{label}[{key}]", value) or
                                               read_once(holder, key, old_value)):
                    return None
                if value is not old_value:
                    guards.append(place_guard(holder, key, kind, swapped.get((id(holder), key), old_value)))
    for copy, _, made, path, route in copies.pairs if copies is not None else ():
        now = tuple(copy.items()) if isinstance(copy, dict) else tuple(enumerate(copy))
        if isinstance(copy, tuple) or _same(made, now):
            continue
        old = dict(made)
        if [k for k, _ in now[:len(made)]] != [k for k, _ in made]:
            return None  # (removed, or reordered)
        for key, value in now:
            if old.get(key, _ABSENT) is not value and not put(("argument", route, key), f"{path}[{key!r}]", value):
                return None
    return Replay(slots, labels), values, guards


def _traced_only(value, copies) -> bool:
    """Whether `value` is traced values only (in plain tuples, lists and dicts): what the plan
    computes at each call."""
    if isinstance(value, Tracer):
        return True
    if copies is not None and copies.is_copy(value):
        return False
    if type(value) in (tuple, list) or isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return len(value) > 0 and all(_traced_only(v, copies) for v in value)
    if type(value) is dict:
        return len(value) > 0 and all(_traced_only(v, copies) for v in value.values())
    return False


@dataclass
class TraceEffects:
    """What one full trace found (`after_trace`): the Replay of its changes, or None; whether
    its result holds container arguments themselves (arguments.CallerContainer)."""

    replay: Replay | None = None
    caller_containers: bool = False
    guards: list = field(default_factory=list)  # of the places the replay sets (replay_of)


def after_trace(watch: Watch, copies, result, ctx, name: str, found: TraceEffects, swapped=None):
    """The trace's value, after the function returned `result`: its changes undone, and
    replayed (the value is then (result, the values put); `found.replay`), or the function runs
    segment by segment (NeedsGraphBreak). A container argument it returns is marked as the
    caller's own."""
    if copies is not None:
        result = copies.returned(result, marked=True)
        found.caller_containers = holds_caller_container(result)
    changed = watch.changed() + (copies.changed() if copies is not None else [])
    if not changed:
        return result
    replayed = replay_of(watch, copies, ctx, swapped)
    watch.restore()
    if replayed is None:
        raise NeedsGraphBreak(f"{name} changes {', '.join(changed)}, which a trace would do once: its Python code "
                              "runs at every call, and what it changes gets its values at the end", None)
    found.replay, found.guards = replayed[0], replayed[2]
    ctx.notes.append(str(replayed[0]))  # (explain prints the trace's notes)
    return result, replayed[1]


def read_only_error(raised: Exception, locked) -> bool:
    """Whether `raised` is NumPy's error for a write into one of the arrays Watch.locked made
    read-only."""
    return bool(getattr(locked, "arrays", None)) and isinstance(raised, ValueError) and "read-only" in str(raised)


def after_raise(watch: Watch, copies, ctx, raised: Exception, name: str, locked=None) -> None:
    """Where the traced function raised: its changes undone; if it wrote into what the caller
    holds before (NumPy's function makes those writes), NeedsGraphBreak: it runs segment by
    segment, and raises where it raises (graph_breaks=False: the exception itself)."""
    changed = watch.changed() or copies is not None and copies.changed()
    watch.restore()  # (no traced value left in the user's objects, whatever happens)
    if read_only_error(raised, locked):
        raise NeedsGraphBreak(f"{name} writes into an array it reaches besides its arguments (an item read by a "
                              "computed key, say), which a trace would write once: it runs segment by segment",
                              raised) from raised
    if isinstance(raised, NumfuseError) or not (changed or ctx.wrote_inputs()):
        return
    raise NeedsGraphBreak(f"{name} raised {type(raised).__name__} when traced, after writing into what the caller "
                          "holds: it runs segment by segment, so that those writes are made", raised) from raised


class Effects:
    """What one run segment by segment changes besides its result: the objects it reaches
    (`watch`) and the copies of its container arguments (arguments.ContainerCopies, or None)."""

    def __init__(self, watch: Watch, copies=None):
        self.watch, self.copies = watch, copies
        self._escaped: list = []

    def tracers(self, ctx) -> list:
        """The traced values (of this run, `ctx`) the run left in what it changed: each needs its
        value."""
        self._escaped = self.watch.escaped()
        found: list = []
        for _, _, value in self._escaped:
            leaves_of(value, Tracer, found)
        for copy in self.copies.changed_copies() if self.copies is not None else ():
            leaves_of(copy, Tracer, found)
        return [t for t in found if t._ctx is ctx]

    def settle(self, real) -> None:
        """Give each traced value that `tracers` found its value, `real(tracer)`, where it was
        left, and change the caller's containers as the function changed their copies."""
        for holder, key, value in self._escaped:
            _set(holder, key, settled(value, real))
        if self.copies is not None:
            self.copies.sync(real)
