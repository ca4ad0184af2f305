"""Traced values inside the objects a function returns that are no container numfuse rebuilds
(an instance of the user's class, a dataclass, a closure, a generator): `return
Model().fit(X, y)` returns a model whose attributes NumPy's run left holding real arrays.

A function traced once, whose later calls run its plan without its Python code, cannot make
such an object again: its calls run the plain function instead (tracer.trace raises
RunUntraced with `where`'s answer). A run segment by segment runs the Python code at every call,
so the object is new each time: its traced values are replaced in place by their real ones
(`replace`).
"""

from __future__ import annotations

import functools
import numbers
from types import BuiltinFunctionType, FunctionType, GeneratorType, MethodType, ModuleType
from typing import Any, Callable, Iterator

import numpy as np

from .traced import TracedArray

_LEAVES = (str, bytes, numbers.Number, np.ndarray, np.generic, type, ModuleType, BuiltinFunctionType,
           type(None), type(Ellipsis), slice, range, np.dtype)


def _slots(value) -> Iterator[str]:
    for cls in type(value).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__") and hasattr(value, name):
                yield name


def _children(value) -> Iterator[tuple[str, Any, Callable | None]]:
    """(where, child, set(new child) or None) for each value `value` holds."""
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield f"[{i}]", v, (functools.partial(value.__setitem__, i) if isinstance(value, list) else None)
    elif isinstance(value, dict):
        for k, v in list(value.items()):
            yield f"[{k!r}]", v, functools.partial(value.__setitem__, k)
    elif isinstance(value, (set, frozenset)):
        for v in value:
            yield " (an item)", v, None
    elif isinstance(value, FunctionType):
        for name, cell in zip(value.__code__.co_freevars, value.__closure__ or ()):
            try:
                contents = cell.cell_contents
            except ValueError:  # (an empty cell)
                continue
            yield f" (its closure's {name})", contents, functools.partial(setattr, cell, "cell_contents")
        for i, v in enumerate(value.__defaults__ or ()):
            yield f" (its default {i})", v, None
    elif isinstance(value, MethodType):
        yield " (its object)", value.__self__, None
    elif isinstance(value, functools.partial):
        yield " (its arguments)", value.args, None
        yield " (its keywords)", value.keywords, None
    elif isinstance(value, GeneratorType):
        if value.gi_frame is not None:
            for name, v in value.gi_frame.f_locals.items():
                yield f" (its local {name})", v, None
    else:
        attributes = getattr(value, "__dict__", None)
        if isinstance(attributes, dict):
            for name, v in list(attributes.items()):
                yield f".{name}", v, functools.partial(setattr, value, name)
        for name in _slots(value):
            yield f".{name}", getattr(value, name), functools.partial(setattr, value, name)


def _walk(value, path: str, seen: set[int]) -> Iterator[tuple[str, TracedArray, Callable | None]]:
    # (a stack, not recursion: a returned linked structure may be deeper than Python's limit)
    stack = [(value, path)]
    while stack:
        holder, at = stack.pop()
        for where, child, put in _children(holder):
            if isinstance(child, TracedArray):
                yield at + where, child, put
            elif not isinstance(child, _LEAVES) and id(child) not in seen:
                seen.add(id(child))
                stack.append((child, at + where))


def _opaque(value) -> bool:
    return not isinstance(value, _LEAVES + (TracedArray,))


def where(value) -> str | None:
    """Where the first traced value inside `value` (a value flatten_outputs keeps as it is) is,
    in words ("a Model object, at .w_"), or None."""
    if not _opaque(value):
        return None
    for path, _, _ in _walk(value, "", {id(value)}):
        return f"a {type(value).__name__} object, at {path.strip().lstrip('.')}"
    return None


def traced_values(value) -> list[TracedArray]:
    """The traced values inside `value`."""
    if not _opaque(value):
        return []
    return [t for _, t, _ in _walk(value, "", {id(value)})]


def replace(value, real: Callable) -> str | None:
    """Each traced value inside `value` replaced by `real(traced value)` where it is held (an
    attribute, an item of a list or dict, a closure's cell); where one cannot be (a tuple's item,
    a generator's local), what holds it, in words, else None."""
    if not _opaque(value):
        return None
    stuck = None
    for path, traced, put in list(_walk(value, "", {id(value)})):
        if put is None:
            stuck = stuck or f"a {type(value).__name__} object, at {path.strip().lstrip('.')}"
        else:
            put(real(traced))
    return stuck
