"""`type(x)` in a traced function answers as for the value NumPy would have.

isinstance consults a Tracer's `__class__` (proxy.Tracer.__class__), but the builtin `type`
reads the real type, which no object can change: `type(x) is np.ndarray` or `type(n) is
float` of a traced argument would take the other branch than NumPy's, silently. So while a
trace runs, the module globals of the functions it follows whose code calls the builtin
(captures._Found) hold `type` bound to `NUMPY_TYPE`, which answers `type(tracer)` as the
tracer's `__class__` and is the builtin in everything else (`type(a, b, c)`, isinstance and
issubclass against it). The name is removed after the trace, whatever happens; traces take
turns (captures.one_trace_at_a_time). A module that binds `type` itself is left as it is.
Code of other modules (not followed: a library's) sees the builtin.
"""

from __future__ import annotations

import builtins
import contextlib
import dis
import types

from .traced import TracedArray

__all__ = ["NUMPY_TYPE", "calls_builtin_type", "numpy_type_visible"]


class _NumpyTypeMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, builtins.type)

    def __subclasscheck__(cls, subclass) -> bool:
        return issubclass(subclass, builtins.type)

    def __call__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs:
            value = args[0]
            return value.__class__ if isinstance(value, TracedArray) else builtins.type(value)
        return builtins.type(*args, **kwargs)

    def __getitem__(cls, item):  # type[int] in an annotation
        return builtins.type[item]

    def __repr__(cls) -> str:
        return repr(builtins.type)


class NUMPY_TYPE(metaclass=_NumpyTypeMeta):
    """The builtin `type`, but that a traced value's type is NumPy's (see the module)."""


NUMPY_TYPE.__name__ = NUMPY_TYPE.__qualname__ = "type"


def calls_builtin_type(code: types.CodeType, module_globals: dict) -> bool:
    """Whether `code` (or code nested in it) reads the global name `type`, the builtin."""
    if "type" in module_globals:
        return False
    return _loads_type(code)


def _loads_type(code: types.CodeType) -> bool:
    if "type" in code.co_names:
        for instruction in dis.get_instructions(code):
            if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME") and instruction.argval == "type":
                return True
    return any(_loads_type(c) for c in code.co_consts if isinstance(c, types.CodeType))


@contextlib.contextmanager
def numpy_type_visible(holders):
    """While the block runs, each of `holders` (module globals) binds `type` to NUMPY_TYPE."""
    added = []
    try:
        for holder in holders:
            if "type" not in holder:
                holder["type"] = NUMPY_TYPE
                added.append(holder)
        yield
    finally:
        for holder in added:
            if holder.get("type") is NUMPY_TYPE:
                del holder["type"]
