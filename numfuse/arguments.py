"""What each argument of a call is, for the signature cache key and the tracer: `classify`.

A call's signature is, for each argument: for arrays whether they are NumPy or device arrays
(of any library: runtime/libraries.py), shape, dtype and layout; for Python scalars their type
(the value is a kernel argument); for NumPy scalars their dtype; for static arguments their value.
A random number generator is passed to the function as it is, keyed by its type: its draws
differ at every call, so a function given one runs segment by segment (graph_breaks.py).
"""

from __future__ import annotations

import numpy as np

from .dtypes import check_supported
from .errors import UnsupportedError
from .ir import Aval
from .runtime.libraries import describe as describe_array
from .tracer import ArgSpec

# Generators whose state changes at each draw: never a static value keyed by identity.
RANDOM_STATES = (np.random.Generator, np.random.RandomState, np.random.BitGenerator)


def classify(name: str, value, static: bool):
    """(signature key part, ArgSpec or a static marker) for one argument."""
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
        return ("dev", info.shape, dtype.str, layout), ArgSpec("array", Aval(info.shape, dtype), False, layout)
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
    try:
        hash(value)
    except TypeError:
        raise UnsupportedError(
            f"argument {name!r} of type {type(value).__name__} is neither an array, a scalar nor "
            "a hashable static value"
        ) from None
    # Strings, None, tuples...: Python values that steer the function, keyed by value.
    return ("static", type(value), value), ("static", value)
