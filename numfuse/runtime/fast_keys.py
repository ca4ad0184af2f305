"""The key of a call on the fast path, for every target: per positional argument its type, and
for arrays what the full path's signature holds besides (shape, dtype, strides; the getters of
each array type are registered by the target that meets it first); for static arguments their
value. `None` where only the full path can classify a call."""

from __future__ import annotations

import operator
from typing import Callable, Sequence

import numpy as np

from ..ir.dtypes import NAMED_FLOATS

# Types whose key is the type alone: the value is a kernel argument.
_SCALAR_TYPES = (bool, int, float, complex) + tuple(
    np.dtype(c).type for c in "?bBhHiIlLqQefdFD"
)


def ndarray_key(array: np.ndarray) -> tuple:
    # What the full path's signature holds of a NumPy array (arguments.classify): its layout
    # and strides through `strides`, and whether it is writeable.
    return array.shape, array.dtype, array.strides, array.flags.writeable


# type -> what of a value of that type goes in the key besides its type (C-level getters,
# for speed). NumPy arrays are known from the start: every target meets them, and so does the
# plain function that a signature numpy_fallback chose runs; device array types are added as
# their libraries first meet them.
_KEYS: dict[type, Callable] = {t: operator.attrgetter("__class__") for t in _SCALAR_TYPES}
_KEYS[np.ndarray] = ndarray_key
# The float objects np.nan and the like are static (frontend/arguments.py), and so are bools
# in some functions: keyed by their value.
_KEYS[bool] = bool
_KEYS[float] = lambda value: NAMED_FLOATS.get(id(value))


def register_array_type(cls: type, key: Callable) -> None:
    _KEYS[cls] = key


def fast_key(args: Sequence, static: frozenset[int]) -> tuple | None:
    """The key of a positional call, or None where only the full path can classify it."""
    if not static:
        parts = []
        for value in args:
            kind = type(value)
            if kind is np.ndarray:  # (inline: the most common argument, at every call)
                parts.append((kind, (value.shape, value.dtype, value.strides, value.flags.writeable)))
                continue
            key = _KEYS.get(kind)
            if key is None:
                return None
            parts.append((kind, key(value)))
        return tuple(parts)
    parts = []
    for i, value in enumerate(args):
        if i in static:
            part = _static_part(value)
            try:
                hash(part)
            except TypeError:  # an array where a scalar made the argument static: the full path
                return None
            parts.append(part)
            continue
        key = _KEYS.get(type(value))
        if key is None:
            return None
        parts.append((type(value), key(value)))
    return tuple(parts)


def _static_part(value):
    """A static value with its type and, for floats, its bits (as arguments.static_key: Python
    finds -0.0 equal to 0.0, and a trace with one gives the other's sign)."""
    kind = type(value)
    if kind is tuple:
        return (kind, tuple([_static_part(v) for v in value]))
    if isinstance(value, (float, np.floating)):
        return (kind, float(value).hex())
    if isinstance(value, (complex, np.complexfloating)):
        return (kind, repr(complex(value)))
    return (kind, value)
