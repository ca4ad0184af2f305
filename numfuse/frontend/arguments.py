"""What each argument of a call is, for the signature cache key and the tracer: `classify`.

A call's signature is, for each argument: for arrays whether they are NumPy or device arrays
(of any library: the caller passes `describe_array`, the CUDA target's targets/cuda/libraries.py,
so that tracing imports no target), shape, dtype and layout; for Python scalars their type
(the value is a kernel argument); for NumPy scalars their dtype; for static arguments their value.
A random number generator is passed to the function as it is, keyed by its type: its draws
differ at every call, so a function given one runs segment by segment (graph_breaks.py).
"""

from __future__ import annotations

import numpy as np

from ..ir.dtypes import check_supported
from ..errors import UnsupportedError
from ..ir.graph import Aval
from .traced import is_host_array
from .tracer import ArgSpec

# Generators whose state changes at each draw: never a static value keyed by identity.
RANDOM_STATES = (np.random.Generator, np.random.RandomState, np.random.BitGenerator)


def classify(name: str, value, static: bool, describe_array):
    """(signature key part, ArgSpec or a static marker) for one argument. `describe_array(name,
    value)`: its ArrayInfo (shape, dtype, layout, library), None for a value that is no array."""
    if static:
        try:
            hash(value)
        except TypeError:
            raise UnsupportedError(f"static argument {name!r} must be hashable, got {type(value).__name__}") from None
        return ("static", type(value), value), ("static", value)
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
            spec = ArgSpec("array", Aval(info.shape, dtype), readonly, layout, strides)
            return ("np", info.shape, dtype.str, layout, readonly, strides), spec
        # The library is not part of the key: the same kernels serve every kind of device array.
        # A non-contiguous one is read in place through its strides.
        return ("dev", info.shape, dtype.str, layout), ArgSpec("array", Aval(info.shape, dtype), False, layout, on_host=False)
    # NumPy strings are str and bytes: static like them.
    if isinstance(value, (np.str_, np.bytes_)):
        return ("static", type(value), value), ("static", value)
    # NumPy scalars first: np.float64 is a subclass of float, yet strongly typed.
    if isinstance(value, np.generic):
        dtype = check_supported(value.dtype, f"argument {name!r}")
        return ("npscalar", dtype.str), ArgSpec("scalar", Aval((), dtype))
    if isinstance(value, bool):
        return ("py", bool), ArgSpec("python", Aval((), np.dtype(bool)))
    if isinstance(value, int):
        return ("py", int), ArgSpec("python", Aval((), np.dtype(np.int64)))
    if isinstance(value, float):
        return ("py", float), ArgSpec("python", Aval((), np.dtype(np.float64)))
    if isinstance(value, complex):
        return ("py", complex), ArgSpec("python", Aval((), np.dtype(np.complex128)))
    if isinstance(value, set):
        value_key = frozenset(value)  # a set of Python values steers the function like a frozenset
    else:
        value_key = value
    try:
        hash(value_key)
    except TypeError:
        raise UnsupportedError(
            f"argument {name!r} of type {type(value).__name__} is neither an array, a scalar nor "
            "a hashable static value"
        ) from None
    # Strings, None, tuples...: Python values that steer the function, keyed by value.
    return ("static", type(value), value_key), ("static", value)


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


def _unflatten(tree, leaves):
    kind = tree[0]
    if kind == "leaf":
        return next(leaves)
    if kind == "dict":
        _, cls, keys, children = tree
        items = {k: _unflatten(c, leaves) for k, c in zip(keys, children)}
        return items if cls is dict else cls(items)
    _, cls, children = tree
    items = [_unflatten(c, leaves) for c in children]
    if cls is list or cls is tuple:
        return cls(items)
    return cls(*items) if hasattr(cls, "_fields") else cls(items)  # a namedtuple, or a subclass


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

    def rebuilt(fn, vals):
        vals = iter(vals)
        args = [next(vals) if tree is None else _unflatten(tree[0], vals) for tree in trees]
        return call(fn, args)

    rebuilt.structure = tuple(t[0] if t is not None else None for t in trees)
    return flat_names, flat_values, rebuilt
