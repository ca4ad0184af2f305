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

The same holds for what the function reads through attributes and constant subscripts
(`config.n`, `self.layer.scale`, `consts.W` of a user module, `CONFIG["eps"]`, `SIZES[0]`, a
class constant `self.EPS`) and
for the helper functions and methods it calls (their globals, closures and attributes, followed
up to _MAX_FUNCTIONS functions, not into NumPy's or numfuse's own): each link of such a chain
is guarded, and each array found is a candidate input, which the trace puts its tracer in
place of while it runs (`swapped_arrays`), so that NumPy's work on it alone is traced too. The
Python scalar attributes of a static argument (a method's `self`) are all guarded, whoever
reads them. An array in such a place that the trace read is read from the place at each call
(compiled.Place): its guard is loosened to an array of the same kind (`loosened`, SameKind),
and those it did not read are not guarded. Not guarded, and so read once, when tracing: items read by a computed key
(`table[i]` of a Python int i that is static), attributes that are properties or slots, and
what is reached some other way (getattr with a computed name); docs/user-guide.md, "Globals
and closures", says so.
"""

from __future__ import annotations

import contextlib
import dis
import functools
import inspect
import operator
import threading
import types
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .traced import is_host_array
from .type_builtin import calls_builtin_type

__all__ = ["Captures", "MISSING", "captures_of", "guards_hold", "loosened", "one_trace_at_a_time", "place_guard"]

_MISSING = object()
MISSING = _MISSING  # what a guard expects of a place that held nothing
# Traces take turns (one_trace_at_a_time): a trace swaps its tracers into attributes and
# containers that other threads' traces and guards read too (swapped_arrays).
_TRACING = threading.RLock()
# Python values compared by value where the object differs (`n = 3` rebinds a new int object).
_BY_VALUE = (bool, int, float, complex, str, bytes, type(None))


class Captures:
    """The candidate arrays (id -> (name, array)), the guards of one trace, and the globals
    and closure cells holding arrays that the function's code names (`traced_function`)."""

    def __init__(self, arrays: dict, guards: tuple, named: tuple = (), assigns: bool = False, swaps: tuple = (),
                 type_holders: tuple = ()):
        self.arrays = arrays
        self.guards = guards
        # (holder, key, array): arrays reached through an attribute, an item or a helper's
        # globals, which the trace puts its tracer in place of while it runs (traced_function).
        self.swaps = swaps
        self.named = named  # ("global", name) or ("closure", index) of each array the code names
        self.assigns = assigns  # the code assigns to a global or closure variable
        # Module globals of followed functions that call the builtin `type` (type_builtin.py).
        self.type_holders = type_holders


def _candidate(value) -> bool:
    """A NumPy array the trace may read as an input: one of a dtype numfuse computes with (an
    object or string array of an object the function does not read must not refuse it)."""
    return is_host_array(value) and getattr(value, "dtype", np.dtype(object)).kind in "biufc"


def _guarded_value(value) -> bool:
    """An array or a Python or NumPy scalar: what a guard compares at each call."""
    return is_host_array(value) or isinstance(value, (*_BY_VALUE, np.generic))


def _assigns(code: types.CodeType) -> bool:
    """Whether `code` (or code nested in it) assigns to a global or to a closure variable."""
    for instruction in dis.get_instructions(code):
        if instruction.opname in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            return True
        if instruction.opname in ("STORE_DEREF", "DELETE_DEREF") and instruction.argval in code.co_freevars:
            return True
    return any(_assigns(c) for c in code.co_consts if isinstance(c, types.CodeType))


def names_read(code: types.CodeType, out: set) -> set:
    """The global names `code` (and code nested in it) reads or assigns: not its attribute
    names, which co_names holds too (`self.x` must not guard a global `x`)."""
    out.update(_global_names(code))
    for const in code.co_consts:
        if isinstance(const, types.CodeType):  # a nested function, lambda or comprehension
            names_read(const, out)
    return out


@functools.lru_cache(maxsize=1024)
def _global_names(code: types.CodeType) -> frozenset:
    return frozenset(i.argval for i in dis.get_instructions(code) if i.opname in _GLOBAL_OPS)


_GLOBAL_OPS = ("LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "DELETE_GLOBAL", "STORE_NAME", "DELETE_NAME")


def with_code(fn):
    """`fn`, or for a callable object its `__call__` bound to it: what holds its code."""
    if not hasattr(fn, "__code__") and isinstance(getattr(type(fn), "__call__", None), types.FunctionType):
        return types.MethodType(type(fn).__call__, fn)
    return fn


def captures_of(fn: Callable, statics=()) -> Captures:
    """The candidate arrays and guards of `fn`; `statics`: (name, value) of its static
    arguments, whose attributes (`self.w`, `self.eps`) are read as its globals are."""
    fn = with_code(fn)
    if isinstance(fn, types.MethodType) and getattr(fn.__func__, "__code__", None) is not None:
        # A bound method (numfuse.jit(obj.method), a classmethod): its object is read as a
        # static argument is, under the name the code gives it (self, cls).
        code = fn.__func__.__code__
        if code.co_argcount:
            statics = [(code.co_varnames[0], fn.__self__)] + list(statics)
    fn = getattr(fn, "__func__", fn)  # a staticmethod or classmethod's function
    code = getattr(fn, "__code__", None)
    module_globals = getattr(fn, "__globals__", None)
    if code is None or module_globals is None:
        return Captures({}, ())
    found = _Found()
    for argument, value in statics:
        attributes = getattr(value, "__dict__", None)
        if not isinstance(attributes, dict) or isinstance(value, (types.ModuleType, type, types.FunctionType)):
            continue
        # Every array and Python scalar attribute: what the function, or a method it calls,
        # reads of `self` (a guard is a dict lookup and a comparison).
        for name, attribute in attributes.items():
            if _candidate(attribute):
                found.array(f"{argument}.{name}", attribute, attributes, name)
            if _guarded_value(attribute):
                found.guard(attributes, name, attribute)
    for name, value in module_globals.items():
        if _candidate(value):
            found.array(f"global {name}", value)
    named = []
    for name in sorted(names_read(code, set())):
        if _candidate(module_globals.get(name)):
            named.append(("global", name))
    for k, (name, cell) in enumerate(zip(code.co_freevars, fn.__closure__ or ())):
        if _candidate(_cell(cell)):
            found.array(f"closure {name}", cell.cell_contents)
            named.append(("closure", k))
    found.function(fn, dict(statics), top=True)
    type_holders = tuple(found.type_holders.values())
    if not isinstance(fn, types.FunctionType):
        return Captures(found.arrays, tuple(found.guards), type_holders=type_holders)
    return Captures(found.arrays, tuple(found.guards), tuple(named), _assigns(code), tuple(found.swaps),
                    type_holders)


# Modules whose functions are not followed: their globals are the library's, not the user's.
_LIBRARIES = ("numpy", "numfuse", "numba", "cupy", "builtins", "functools", "math", "cmath", "typing", "copy")
_MAX_FUNCTIONS = 32  # helper functions followed from one jitted function
_LOADS = ("LOAD_GLOBAL", "LOAD_DEREF", "LOAD_FAST", "LOAD_NAME", "LOAD_CLASSDEREF")


class _Found:
    """What captures_of gathers: candidate arrays and guards, each holder and name once, from
    the function and the helper functions it calls."""

    def __init__(self):
        self.arrays: dict = {}
        self.guards: list = []
        self.swaps: list = []
        self._guarded: set = set()
        self._functions: set = set()
        self.type_holders: dict = {}  # id -> module globals (calls_builtin_type)

    def array(self, name, value, holder=None, key=None) -> None:
        self.arrays.setdefault(id(value), (name, value))
        if type(holder) in (dict, list) and not any(h is holder and k == key for h, k, _ in self.swaps):
            self.swaps.append((holder, key, value))

    def guard(self, holder, name, value) -> None:
        key = (id(holder), name)
        if key not in self._guarded:
            self._guarded.add(key)
            contents = SameContents.of(value)
            self.guards.append((holder, name, value if contents is None else contents))

    def function(self, fn, statics: dict, top: bool = False) -> None:
        """Guard what `fn` reads from its globals and closure, and the attributes it reads of
        them (`config.eps`, `self.layer.scale`), and follow the Python functions it calls."""
        code, module_globals = getattr(fn, "__code__", None), getattr(fn, "__globals__", None)
        seen = (id(fn), tuple(id(v) for v in statics.values()))
        if code is None or module_globals is None or seen in self._functions:
            return
        module = (getattr(fn, "__module__", None) or "").split(".")[0]
        if not top and (len(self._functions) >= _MAX_FUNCTIONS or module in _LIBRARIES):
            return
        self._functions.add(seen)
        if calls_builtin_type(code, module_globals):
            self.type_holders[id(module_globals)] = module_globals
        roots = {}
        for name in names_read(code, set()):
            value = module_globals.get(name, _MISSING)
            if value is _MISSING:
                continue
            roots[name] = value
            if isinstance(value, types.ModuleType):
                continue
            self.guard(module_globals, name, value)
            if _candidate(value):
                # (The jitted function's own globals are replaced in a copy: traced_function.)
                self.array(f"global {name}", value, None if top else module_globals, name)
            self._follow(value)
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            value = _cell(cell)
            if value is _MISSING:
                continue
            roots[name] = value
            self.guard(cell, None, value)
            self._follow(value)
        roots.update(statics)
        for root, links in _attribute_chains(code):
            value, path = roots.get(root, _MISSING), root
            for link in links:
                if value is _MISSING:
                    break
                path += f"[{link.key!r}]" if isinstance(link, _Item) else f".{link}"
                value = self._item(value, link.key, path) if isinstance(link, _Item) else \
                    self._attribute(value, link, path)

    def _item(self, owner, key, path):
        """Guard `owner[key]` of a dict, list or tuple (`CONFIG["eps"]`, `SIZES[0]`), read by a
        constant key; its value, or _MISSING."""
        if type(owner) not in (dict, list, tuple):
            return _MISSING
        value = _current(owner, _Item(key))
        if value is _MISSING:
            return _MISSING
        if _candidate(value):
            self.array(f"global {path}", value, owner, key)
        if type(owner) is not tuple:  # (a tuple's items are fixed: guarding the tuple serves)
            self.guard(owner, _Item(key), value)
        self._follow(value)
        return value

    def _attribute(self, owner, attribute, path):
        """Guard `owner.attribute` where it lives in a dict (a module's or an instance's); its
        value, or _MISSING where it is not such an attribute (a property, a slot)."""
        holder = getattr(owner, "__dict__", None)
        if isinstance(owner, type) or not isinstance(holder, dict) or attribute not in holder:
            return self._class_attribute(owner, attribute, holder)
        value = holder[attribute]
        if _candidate(value):
            self.array(f"global {path}", value, holder, attribute)
        if isinstance(owner, types.ModuleType) and not _guarded_value(value):
            # (np.exp, np.linalg: a module's functions are not guarded, only its arrays and
            # scalars, as a function's globals are; its submodules are looked into.)
            if isinstance(value, types.FunctionType):
                self._follow(value)
            return value if isinstance(value, types.ModuleType) else _MISSING
        self.guard(holder, attribute, value)
        self._follow(value)
        return value

    def _class_attribute(self, owner, attribute, holder):
        """`owner.attribute` found in a class (`self.EPS`, `Config.EPS` of a class constant): a
        number, string or array there is guarded in the class's dict, and, read through an
        instance, its absence from the instance's own dict; a method of an instance's class is
        followed. Its value where guarded, else _MISSING."""
        cls = owner if isinstance(owner, type) else type(owner)
        if isinstance(owner, types.ModuleType):
            return _MISSING
        for klass in cls.__mro__:
            if attribute in klass.__dict__:
                value = klass.__dict__[attribute]
                break
        else:
            return _MISSING
        if not _guarded_value(value):
            if not isinstance(owner, type):
                self._method(owner, attribute)
            return _MISSING
        if isinstance(holder, dict) and not isinstance(owner, type):
            self.guard(holder, attribute, _MISSING)  # an instance attribute set later would hide it
        self.guard(klass.__dict__, attribute, value)
        if _candidate(value):
            self.array(f"global {klass.__name__}.{attribute}", value)
        return value

    def _method(self, owner, attribute) -> None:
        """Follow `owner.attribute(...)`, a method of its class, with its first parameter bound
        to `owner` (`self.helper(x)` reading `self.config.shift`)."""
        raw = inspect.getattr_static(type(owner), attribute, None)
        fn = getattr(raw, "__func__", raw)
        if not isinstance(fn, types.FunctionType):
            return
        first = fn.__code__.co_varnames[:1] if fn.__code__.co_argcount else ()
        if isinstance(raw, staticmethod) or not first:
            self.function(fn, {})
        else:
            self.function(fn, {first[0]: type(owner) if isinstance(raw, classmethod) else owner})

    def _follow(self, value) -> None:
        if isinstance(value, types.FunctionType):
            self.function(value, {})
        elif not isinstance(value, (type, types.ModuleType)) and \
                isinstance(inspect.getattr_static(type(value), "__call__", None), types.FunctionType):
            self._method(value, "__call__")  # a callable object, called as `layer(x)`


def _attribute_chains(code: types.CodeType) -> list:
    """(root name, (link, ...)) of each `name.a["k"].b` the code reads: a global, closure or
    argument name followed by attribute loads (a link: the attribute's name) and subscripts by
    constants (a link: _Item(key)); in nested code, from globals only."""
    chains = []

    def scan(code, top):
        root, links, key = None, [], _MISSING
        for instruction in dis.get_instructions(code):
            if root is not None:
                if instruction.opname in ("LOAD_ATTR", "LOAD_METHOD") and key is _MISSING:
                    links.append(instruction.argval)
                    continue
                if instruction.opname == "LOAD_CONST" and key is _MISSING:
                    key = instruction.argval
                    continue
                if instruction.opname == "BINARY_SUBSCR" and key is not _MISSING:
                    links.append(_Item(key))
                    key = _MISSING
                    continue
                if links:
                    chains.append((root, tuple(links)))
            root, links, key = None, [], _MISSING
            if instruction.opname in _LOADS and (top or instruction.opname == "LOAD_GLOBAL"):
                root = instruction.argval
        if root is not None and links:
            chains.append((root, tuple(links)))
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                scan(const, False)

    scan(code, True)
    return chains


def traced_function(fn, ctx, captures: Captures):
    """`fn` for one trace: a copy of it whose globals (a copy of its module's, which stay as
    they are) and closure cells hold the trace's tracer of each array its code names, so that
    everything NumPy does with them in the function (`W.sum()`, `W.T`, `W * 2`) is traced and
    runs at each call, as in NumPy, not once at the trace. And a check to run after the call:
    the function assigned to a global or closure variable (`global n; n += 1`), which would
    happen only when tracing, raises NeedsGraphBreak: it then runs segment by segment, its
    Python code at every call."""
    from ..errors import NeedsGraphBreak

    # A bound method (numfuse.jit(obj.method)) stays bound to its object.
    bound_to = fn.__self__ if isinstance(fn, types.MethodType) else None
    fn = getattr(fn, "__func__", fn)
    if not (captures.named or captures.assigns) or not isinstance(fn, types.FunctionType):
        return (fn if bound_to is None else types.MethodType(fn, bound_to)), lambda: None
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

    return (copy if bound_to is None else types.MethodType(copy, bound_to)), check


@contextlib.contextmanager
def swapped_arrays(ctx, captures: Captures):
    """While the trace runs, each array reached through an attribute, a container's item or a
    helper function's globals (Captures.swaps) is replaced where it lives by the trace's tracer
    of it, so that what NumPy computes from it (`self.w * 2`, `CONFIG["table"].T`) is traced and
    runs at each call; each is put back after, whatever happens. Traces take turns
    (one_trace_at_a_time), so that no trace on another thread meets this one's tracer there."""
    if not captures.swaps:
        yield
        return
    replaced = []
    with _TRACING:
        try:
            for holder, key, array in captures.swaps:
                if _current(holder, _Item(key)) is array:
                    holder[key] = ctx.external_array(array)
                    replaced.append((holder, key, array))
            yield
        finally:
            for holder, key, array in reversed(replaced):
                holder[key] = array


def _cell(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return _MISSING


@dataclass(frozen=True)
class _Item:
    """A guard's name that is a container's key or index, not an attribute or global."""

    key: object


def _current(holder, name):
    if name is None:
        try:
            return holder.cell_contents
        except ValueError:
            return _MISSING
    if isinstance(name, _Item):
        try:
            return holder[name.key]
        except (IndexError, KeyError, TypeError):
            return _MISSING
    return holder.get(name, _MISSING)


def one_trace_at_a_time():
    """Held by a trace from its captures to its last tracer, and by a run with graph breaks
    (whose Python code reads attributes too): while one holds it, a thread's swapped tracers
    (swapped_arrays) are where another thread's code could read them, so no other trace runs."""
    return _TRACING


class SameKind:
    """A guard's expectation for a place the function itself sets at every call (a replayed
    change, effects.Replay: `self.avg = 0.9 * self.avg + x`): an array of the shape, dtype and
    strides the trace read there, whichever object it is."""

    def __init__(self, array):
        self.kind = (type(array), array.shape, array.dtype, array.strides)

    def matches(self, value) -> bool:
        # (type() first: another thread's tracer answers isinstance as an ndarray)
        return type(value) is self.kind[0] and (type(value), value.shape, value.dtype, value.strides) == self.kind


class SameContents:
    """A guard's expectation for a list or dict of Python numbers and strings (nested ones
    too) that the function reads: the same contents, item by item, of the same types, whichever
    object holds them. The function may iterate it (`for c in COEFS`), sum it or take its
    length, none of which a guard on one item sees; changed in place, it traces again. Larger
    containers (over _CONTENTS_LIMIT items) and those holding anything else keep a guard on
    the object alone (docs/user-guide.md, "Globals and closures")."""

    def __init__(self, container, items: tuple):
        self.type, self.items = type(container), items
        # The objects a flat one holds (its keys too): unchanged, it holds the very same ones
        # (numbers and strings are immutable), which the check at each call tests first, as
        # cheaply as a list comparison.
        held = tuple(container.values()) if self.type is dict else tuple(container)
        self.held = None if any(type(v) in (list, tuple, dict) for v in held) else held
        self.keys = tuple(container) if self.type is dict else None

    @staticmethod
    def of(value) -> "SameContents | None":
        if type(value) not in (list, dict):
            return None
        items = _contents(value, [_CONTENTS_LIMIT])
        return None if items is None else SameContents(value, items)

    def matches(self, value) -> bool:
        if type(value) is not self.type:
            return False
        held = self.held
        if held is not None and len(value) == len(held):
            if self.keys is None:
                if all(map(operator.is_, value, held)):
                    return True
            elif all(map(operator.is_, value, self.keys)) and all(map(operator.is_, value.values(), held)):
                return True
        return _contents(value, [_CONTENTS_LIMIT]) == self.items


_CONTENTS_LIMIT = 256


def _contents(value, budget: list):
    """A comparable key of a list, tuple or dict of Python scalars and strings (floats by their
    bits: -0.0 is not 0.0), or None where it holds something else or more than the budget."""
    budget[0] -= 1
    if budget[0] < 0:
        return None
    kind = type(value)
    if kind in (list, tuple):
        items = tuple(_contents(v, budget) for v in value)
    elif kind is dict:
        items = tuple((_contents(k, budget), _contents(v, budget)) for k, v in value.items())
        items = tuple(x for pair in items for x in pair)
    elif kind is float:
        return (float, value.hex())
    elif kind is complex:
        return (complex, value.real.hex(), value.imag.hex())
    elif kind in (bool, int, str, bytes, type(None)):
        return (kind, value)
    else:
        return None
    if any(x is None for x in items):
        return None
    return (kind, items)


def place_guard(holder: dict, key, kind: str, before):
    """The guard of a place a replayed change sets (`holder[key]`, an object's attribute where
    `kind` is "attributes"): what it held before the call the trace saw, `before` (_MISSING if
    nothing). An array: one of the same kind (its contents are read at each call, or not at
    all); anything else: that value, so that the array the change puts there traces again."""
    name = key if kind == "attributes" and isinstance(key, str) else _Item(key)
    if is_host_array(before):
        return (holder, name, SameKind(before))
    return (holder, name, before)


def loosened(guards: tuple, read: list, swaps: tuple) -> tuple:
    """`guards`, for a plan that reads the arrays of `read` ((holder, key) places) from there at
    each call: theirs ask only for an array of the same kind (SameKind), and those of the other
    places whose arrays the trace could have read (`swaps`, Captures.swaps: every read of them
    was traced) go, as it did not read them. A guard of anything else (a Python scalar) stays."""
    found = []
    for holder, name, expected in guards:
        key = name.key if isinstance(name, _Item) else name
        if is_host_array(expected) and any(holder is h and key == k for h, k in read):
            found.append((holder, name, SameKind(expected)))
        elif not (is_host_array(expected) and any(holder is h and key == k and a is expected for h, k, a in swaps)):
            found.append((holder, name, expected))
    return tuple(found)


def guards_hold(guards: tuple) -> bool:
    """Whether every guarded global and closure cell holds what it held when traced. A guard
    that fails is checked again once no other thread's trace has a tracer swapped in its place
    (one_trace_at_a_time): a call during another thread's trace sees the real array."""
    if _all_hold(guards):
        return True
    with _TRACING:
        return _all_hold(guards)


def _all_hold(guards: tuple) -> bool:
    for holder, name, expected in guards:
        value = _current(holder, name)
        if value is expected:
            continue
        if isinstance(expected, (SameKind, SameContents)):
            if expected.matches(value):
                continue
            return False
        if type(value) is type(expected) and isinstance(value, (*_BY_VALUE, np.generic)):
            try:
                if _same_scalar(value, expected):
                    continue
            except Exception:
                pass
        return False
    return True


def _same_scalar(value, expected) -> bool:
    """Equal values of one type, where a float zero's sign counts (`x + OFF` is -0.0 at x = -0.0
    only where OFF is -0.0) and a NaN is the NaN it was."""
    if value == expected:
        if value == 0 and isinstance(value, (float, complex, np.inexact)):
            return np.signbit(np.real(value)) == np.signbit(np.real(expected)) and \
                np.signbit(np.imag(value)) == np.signbit(np.imag(expected))
        return True
    return value != value and expected != expected  # (NaN)


def changed_guard(guards: tuple) -> str | None:
    """The name of the first guard that no longer holds (for explain and debugging)."""
    for holder, name, expected in guards:
        if not _all_hold(((holder, name, expected),)):
            if isinstance(name, _Item):
                return f"[{name.key!r}]"
            return name if name is not None else "a closure variable"
    return None
