"""What each argument of a call is, for the signature cache key and the tracer: `classify`.

A call's signature is, for each argument: for arrays whether they are NumPy or device arrays
(of any library: the caller passes `describe_array`, the CUDA target's targets/cuda/libraries.py,
so that tracing imports no target), shape, dtype and layout; for Python scalars their type
(the value is a kernel argument); for NumPy scalars their dtype; for static arguments their value.
The float objects np.nan, np.inf, math.nan and math.inf are static: the function may ask `v is
np.nan`, which only the object itself answers as in NumPy (any other NaN is another object, and
a kernel argument). So are Python bools, in a function whose code asks `is True` or `is False`
(`compares_bools_by_identity`).
A random number generator is passed to the function as it is, keyed by its type: its draws
differ at every call, so a function given one runs segment by segment (graph_breaks.py).
"""

from __future__ import annotations

import dis
import functools
import inspect
from types import CodeType
from typing import Any

import numpy as np

from ..ir.dtypes import NAMED_FLOATS, check_supported
from ..errors import UnsupportedError
from ..ir.graph import Aval
from .traced import is_host_array
from .proxy import Tracer
from .tracer import ArgSpec

# Generators whose state changes at each draw: never a static value keyed by identity.
RANDOM_STATES = (np.random.Generator, np.random.RandomState, np.random.BitGenerator)


def classify(name: str, value, static: bool, describe_array):
    """(signature key part, ArgSpec or a static marker) for one argument. `describe_array(name,
    value)`: its ArrayInfo (shape, dtype, layout, library), None for a value that is no array."""
    if static:
        key = static_key(value)
        try:
            hash(key)
        except TypeError:
            raise UnsupportedError(f"static argument {name!r} must be hashable, got {type(value).__name__}") from None
        return ("static", key), ("static", value)
    if isinstance(value, RANDOM_STATES):
        return ("random", type(value)), ("static", value)
    info = describe_array(name, value)
    if info is not None:
        dtype = check_supported(info.dtype, f"argument {name!r}")
        # The layout ("C", "F" or "A") is part of the key: kernels read a strided array through
        # its strides, and whether NumPy's reshape of it is a view depends on its strides. Those
        # of a NumPy array that is neither C- nor Fortran-contiguous are part of it too.
        layout = info.layout
        if info.library.on_host:
            readonly = not value.flags.writeable
            strides = None
            if layout == "A" and all(s % dtype.itemsize == 0 for s in value.strides):
                strides = tuple(s // dtype.itemsize for s in value.strides)
            # The strides of an axis of length 0 or 1 are whatever made the array: only its own
            # answer x.strides (np.ones((1, 3)) has 24 there, x[None] 0).
            exact = tuple(value.strides) if any(n <= 1 for n in info.shape) else None
            spec = ArgSpec("array", Aval(info.shape, dtype), readonly, layout, strides, byte_strides=exact)
            return ("np", info.shape, dtype.str, layout, readonly, strides, exact), spec
        # The library is not part of the key: the same kernels serve every kind of device array.
        # A non-contiguous one is read in place through its strides.
        return ("dev", info.shape, dtype.str, layout), ArgSpec("array", Aval(info.shape, dtype), False, layout, on_host=False)
    # NumPy strings are str and bytes: static like them.
    if isinstance(value, (np.str_, np.bytes_)):
        return ("static", static_key(value)), ("static", value)
    # NumPy scalars first: np.float64 is a subclass of float, yet strongly typed.
    if isinstance(value, np.generic):
        dtype = check_supported(value.dtype, f"argument {name!r}")
        return ("npscalar", dtype.str), ArgSpec("scalar", Aval((), dtype))
    if isinstance(value, bool):
        return ("py", bool), ArgSpec("python", Aval((), np.dtype(bool)))
    if type(value) is float and id(value) in NAMED_FLOATS:
        return ("static", ("float object", NAMED_FLOATS[id(value)])), ("static", value)
    if isinstance(value, int):
        return ("py", int), ArgSpec("python", Aval((), np.dtype(np.int64)))
    if isinstance(value, float):
        return ("py", float), ArgSpec("python", Aval((), np.dtype(np.float64)))
    if isinstance(value, complex):
        return ("py", complex), ArgSpec("python", Aval((), np.dtype(np.complex128)))
    # (a set of Python values steers the function like a frozenset)
    key = static_key(frozenset(value) if isinstance(value, set) else value)
    try:
        hash(key)
    except TypeError:
        raise UnsupportedError(
            f"argument {name!r} of type {type(value).__name__} is neither an array, a scalar nor "
            "a hashable static value"
        ) from None
    # Strings, None, tuples...: Python values that steer the function, keyed by value.
    return ("static", key), ("static", value)


def static_key(value):
    """A static value's part of the key: its value, with the type of everything in it (Python
    finds (1,), (1.0,), (True,) and (np.float64(1),) equal; NumPy's rules do not); a slice
    (unhashable before Python 3.12) by its bounds. `static_value` gives the value back."""
    if isinstance(value, tuple):  # (a namedtuple too)
        return (type(value), tuple(static_key(v) for v in value))
    if isinstance(value, frozenset):
        return (type(value), frozenset(static_key(v) for v in value))
    if isinstance(value, slice):
        return (slice, (static_key(value.start), static_key(value.stop), static_key(value.step)))
    if isinstance(value, (float, complex, np.inexact)):
        return (type(value), _Bits(value))
    return (type(value), value)


class _Bits:
    """A float in a static key, equal to another of the same bits: -0.0 is not 0.0 (Python
    finds them equal, and a trace with one gives the other's sign: `x + c` at x = -0.0), and a
    NaN is equal to itself."""

    __slots__ = ("value", "_bits")

    def __init__(self, value):
        self.value = value
        self._bits = np.asarray(value).tobytes()

    def __eq__(self, other):
        return isinstance(other, _Bits) and self._bits == other._bits

    def __hash__(self):
        return hash(self._bits)

    def __repr__(self):
        return repr(self.value)


def static_value(key):
    """The value a static_key was made from (for printing a signature)."""
    kind, body = key
    if kind is slice:
        return slice(*(static_value(k) for k in body))
    if isinstance(kind, type) and issubclass(kind, tuple):
        items = [static_value(k) for k in body]
        return kind(*items) if hasattr(kind, "_fields") else kind(items)
    if kind is frozenset:
        return frozenset(static_value(k) for k in body)
    return body.value if isinstance(body, _Bits) else body


# -- containers of arrays ----------------------------------------------------------------------


def _is_array(value, describe_array) -> bool:
    if is_host_array(value):
        return True
    if value is None or isinstance(value, (list, tuple, dict, str, bytes, int, float, complex, np.generic)):
        return False
    try:
        return describe_array("", value) is not None  # a device array of some library
    except UnsupportedError:
        return True  # an array numfuse refuses: classify says why


def has_array_leaf(value, describe_array) -> bool:
    """Whether `value` is a container to flatten into its leaves: a dict or a list (not
    hashable, so never a static value), or a tuple or namedtuple with an array or such a
    container inside (a tuple of Python values stays one static value, as a shape)."""
    if isinstance(value, (dict, list)):
        return True
    if isinstance(value, tuple):
        return any(_is_array(v, describe_array) or has_array_leaf(v, describe_array) for v in value)
    return False


def _flatten(value, name: str, names: list, leaves: list, describe_array):
    """The structure of `value` (a hashable description: types, lengths, dict keys), with its
    leaves (arrays and scalars) appended to `leaves`, named by their path."""
    if isinstance(value, dict):
        keys = list(value)
        return ("dict", type(value), tuple(keys),
                tuple(_flatten(value[k], f"{name}[{k!r}]", names, leaves, describe_array) for k in keys))
    if isinstance(value, list) or isinstance(value, tuple) and has_array_leaf(value, describe_array):
        fields = getattr(type(value), "_fields", None)  # a namedtuple's leaves by field name
        paths = [f"{name}.{f}" for f in fields] if fields else [f"{name}[{i}]" for i in range(len(value))]
        return ("seq", type(value), tuple(_flatten(v, p, names, leaves, describe_array) for v, p in zip(value, paths)))
    names.append(name)
    leaves.append(value)
    return ("leaf",)


def _unflatten(tree, leaves, copies: "ContainerCopies | None" = None, original=None, path: str = "",
               route: tuple = ()):
    kind = tree[0]
    if kind == "leaf":
        leaf = next(leaves)
        if copies is not None:
            copies.leaves[id(leaf)] = original
        return leaf
    if kind == "dict":
        _, cls, keys, children = tree
        items = {k: _unflatten(c, leaves, copies, None if original is None else original[k], f"{path}[{k!r}]",
                               route + (k,))
                 for k, c in zip(keys, children)}
        made = items if cls is dict else cls(items)
    else:
        _, cls, children = tree
        parts = [None] * len(children) if original is None else list(original)
        items = [_unflatten(c, leaves, copies, o, f"{path}[{i}]", route + (i,))
                 for i, (c, o) in enumerate(zip(children, parts))]
        if cls is list or cls is tuple:
            made = cls(items)
        else:
            made = cls(*items) if hasattr(cls, "_fields") else cls(items)  # a namedtuple, or a subclass
    if copies is not None:
        copies.add(made, original, path, route)
    return made


class ContainerCopies:
    """The containers one call of the function was given: each a copy of the caller's (a
    dict, list, tuple or namedtuple, its leaves the arguments' traced values), with what it
    held when made. What the function did to a copy (`params["b"] = x`, `xs.append(y)`) is
    changed the same way in the caller's container by `sync` (effects.py)."""

    def __init__(self):
        # (copy, caller's, its items when made, its path as the user writes it, its route: the
        # argument's position among the bound arguments, then each key or index down to it)
        self.pairs: list[tuple[Any, Any, tuple, str, tuple]] = []
        self.leaves: dict[int, Any] = {}  # id of a leaf given -> the caller's value
        self._caller_of: dict[int, Any] = {}  # id of a copy -> the caller's container

    def add(self, copy, original, path: str, route: tuple) -> None:
        self.pairs.append((copy, original, _items_of(copy), path, route))
        self._caller_of[id(copy)] = original

    def changed(self) -> list[str]:
        """The caller's containers whose copies the function changed: `params`, `xs[0]`."""
        return [path for copy, _, made, path, _ in self.pairs if not _same_items(made, _items_of(copy))]

    def changed_copies(self) -> list:
        """The copies the function changed."""
        return [copy for copy, _, made, _, _ in self.pairs if not _same_items(made, _items_of(copy))]

    def is_copy(self, value) -> bool:
        return id(value) in self._caller_of

    def returned(self, value, marked: bool = False):
        """`value` (what the function returns) with each copy in it replaced by the caller's
        container, as NumPy's function returns the object it was given (`return params`); or,
        `marked`, by a CallerContainer naming it (for a trace: `caller_containers` puts the
        call's own in its place)."""
        if id(value) in self._caller_of:
            if not marked:
                return self._caller_of[id(value)]
            return CallerContainer(next(route for copy, _, _, _, route in self.pairs if copy is value))
        if isinstance(value, (list, tuple, dict)):
            return rebuilt_container(value, lambda v: self.returned(v, marked))
        return value

    def sync(self, real) -> None:
        """Change each caller's container as the function changed its copy: a value the
        function put there is `real(traced value)` (or the Python value itself), a leaf or a
        container it was given is the caller's own."""

        def caller_value(value):
            if id(value) in self._caller_of:
                return self._caller_of[id(value)]
            if id(value) in self.leaves:
                return self.leaves[id(value)]
            if isinstance(value, (list, tuple, dict)):
                return rebuilt_container(value, caller_value)  # made by the function: items of ours inside
            return real(value) if isinstance(value, Tracer) else value

        updates = []
        for copy, original, made, _, _ in self.pairs:
            if isinstance(original, (dict, list)) and not _same_items(made, _items_of(copy)):
                updates.append((original, [(k, caller_value(v)) for k, v in _items_of(copy)]))
        for original, items in updates:  # (all computed first: one may hold another)
            if isinstance(original, dict):
                original.clear()
                original.update(items)
            else:
                original[:] = [v for _, v in items]


class CallerContainer:
    """Where a traced function's result holds a container argument itself: its route."""

    def __init__(self, route: tuple):
        self.route = route


def caller_containers(value, arguments):
    """`value` with each CallerContainer replaced by that container of the call's `arguments`
    (the bound arguments), or None where it holds none."""
    if isinstance(value, CallerContainer):
        container = arguments[value.route[0]]
        for step in value.route[1:]:
            container = container[step]
        return container
    if isinstance(value, (list, tuple, dict)):
        return rebuilt_container(value, lambda v: caller_containers(v, arguments))
    return value


def holds_caller_container(value) -> bool:
    if isinstance(value, CallerContainer):
        return True
    if isinstance(value, (list, tuple)):
        return any(holds_caller_container(v) for v in value)
    if isinstance(value, dict):
        return any(holds_caller_container(v) for v in value.values())
    return False

def _items_of(container) -> tuple:
    if isinstance(container, dict):
        return tuple(container.items())
    return tuple(enumerate(container))


def _same_items(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x[1] is y[1] and x[0] == y[0] for x, y in zip(a, b))


def leaves_of(value, kind: type, found: list) -> list:
    """Every `kind` object inside `value`, through lists, tuples and dicts, in order."""
    if isinstance(value, kind):
        found.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            leaves_of(v, kind, found)
    elif isinstance(value, dict):
        for v in value.values():
            leaves_of(v, kind, found)
    return found


def rebuilt_container(value, each):
    """A new container of `value`'s type holding each(item) (a dict subclass: the same object,
    its items replaced, so that it keeps its other state)."""
    if isinstance(value, dict):
        items = {k: each(v) for k, v in value.items()}
        if type(value) is dict:
            return items
        value.update(items)  # (a dict subclass: the same object, its items given their values)
        return value
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return type(value)(*(each(v) for v in value))
    return type(value)(each(v) for v in value)


def flatten_containers(names, values, call, describe_array, keep=frozenset()):
    """(names, values, call) with each container argument (but those named in `keep`: static
    arguments) replaced by its leaves; the new call rebuilds the containers (of their own types)
    from the leaves and calls the old one. Its `structure` attribute describes them, for the
    signature's key."""
    flat_names, flat_values, trees = [], [], []
    for name, value in zip(names, values):
        if name not in keep and has_array_leaf(value, describe_array):
            leaf_names, leaves = [], []
            trees.append((_flatten(value, name, leaf_names, leaves, describe_array), len(leaves)))
            flat_names += leaf_names
            flat_values += leaves
        else:
            trees.append(None)
            flat_names.append(name)
            flat_values.append(value)

    def rebuilt(fn, vals, copies: ContainerCopies | None = None):
        vals = iter(vals)
        args = [next(vals) if tree is None else _unflatten(tree[0], vals, copies, value, name, (position,))
                for position, (tree, name, value) in enumerate(zip(trees, names, values))]
        return call(fn, args)

    rebuilt.structure = tuple(t[0] if t is not None else None for t in trees)
    return flat_names, flat_values, rebuilt


def compares_bools_by_identity(fn) -> bool:
    """Whether `fn`'s code (its nested functions' too) asks `x is True`, `x is not False` and
    the like: its Python bool arguments must then be the objects themselves (static), which a
    traced stand-in is not."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    fn = inspect.unwrap(getattr(fn, "__func__", fn))
    code = getattr(fn, "__code__", None)
    return code is not None and _code_compares_bools(code)


def _code_compares_bools(code: CodeType) -> bool:
    instructions = list(dis.get_instructions(code))
    for k, ins in enumerate(instructions):
        if ins.opname == "IS_OP" and any(p.opname == "LOAD_CONST" and type(p.argval) is bool
                                         for p in instructions[max(0, k - 2):k]):
            return True
    return any(isinstance(c, CodeType) and _code_compares_bools(c) for c in code.co_consts)
