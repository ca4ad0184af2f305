"""`x.strides` and `x.flags` of a traced array: NumPy's answers, where the trace knows them.

The trace keeps each value's notional strides as NumPy would lay it out (layouts.py): an
argument's from its signature (C, Fortran, or its own strides), a view's as NumPy makes it
(decided on stand-ins, numpy_views.py), a computed value's in C order or unknown (NumPy lays a
result out like its operands, in an order numfuse does not always follow). So `x.strides` is
static (`as_strided(x, shape, x.strides + x.strides)`, a sliding window, as numpy-100 and the
SciPy cookbook write it), and `x.flags` is a read-only flags object whose `writeable` may be
turned off for an array the function made (`Z.flags.writeable = False`, numpy-100 #43).

Refused, with the reason, where numfuse would have to guess: strides NumPy decides from layouts
numfuse does not trace; an argument's axis of length 0 or 1, whose stride in the caller's array
is whatever made it (`x[None]` has stride 0 there) and no part of the signature; a value carried
across a graph break, which lives in numfuse's own buffer; `owndata` of an argument.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..errors import unsupported
from .traced import TracedView

_HINT = "pass or compute a C-contiguous array (x.copy()) whose strides NumPy and numfuse agree on"


def _root(tracer):
    while isinstance(tracer, TracedView):
        tracer = tracer._base
    return tracer


def _known_strides(tracer, what: str) -> tuple[int, ...]:
    """`tracer`'s element strides as NumPy's would be, or the refusal of `what`."""
    ctx = tracer._ctx
    root = _root(tracer)
    buffer = ctx.family.get(root._var, root._var)
    if buffer in ctx.inputs:
        carried = ctx.breaks is not None and buffer in ctx.breaks.numfuse_layout
        if carried:
            raise unsupported(f"{what} of a value computed before a graph break",
                              "it lives in numfuse's buffer, laid out as numfuse chose; " + _HINT)
        if what.endswith("strides") and any(n <= 1 for n in buffer.aval.shape) and any(n <= 1 for n in tracer.shape):
            raise unsupported(f"{what} of an argument with an axis of length 0 or 1",
                              "NumPy's stride of such an axis is whatever made the caller's array "
                              "(x[None] has 0 there), which is no part of numfuse's signature; " + _HINT)
    strides = ctx.strides_of(tracer._var)
    if strides is None:
        raise unsupported(f"{what} of an array whose memory layout numfuse does not trace",
                          "NumPy lays out what it computes from arrays not in C order like them; " + _HINT)
    return tuple(strides)


def _no_attribute(tracer, name: str):
    kind = type(tracer.dtype.type(0).item()).__name__
    return AttributeError(f"'{kind}' object has no attribute '{name}'")


def strides(tracer) -> tuple[int, ...]:
    """x.strides, in bytes."""
    if tracer._weak:
        raise _no_attribute(tracer, "strides")
    if not tracer.shape:
        return ()
    return tuple(s * tracer.dtype.itemsize for s in _known_strides(tracer, "x.strides"))


# NumPy's flags by their names and letters (numpy.ndarray.flags).
_KEYS = {"C_CONTIGUOUS": "c_contiguous", "C": "c_contiguous", "CONTIGUOUS": "c_contiguous",
         "F_CONTIGUOUS": "f_contiguous", "F": "f_contiguous", "FORTRAN": "f_contiguous",
         "OWNDATA": "owndata", "O": "owndata", "WRITEABLE": "writeable", "W": "writeable",
         "ALIGNED": "aligned", "A": "aligned", "WRITEBACKIFCOPY": "writebackifcopy", "X": "writebackifcopy",
         "FNC": "fnc", "FORC": "forc", "BEHAVED": "behaved", "B": "behaved", "CARRAY": "carray", "CA": "carray",
         "FARRAY": "farray", "FA": "farray"}


class TracedFlags:
    """x.flags of a traced array: NumPy's flags, read by name (`flags.c_contiguous`) or key
    (`flags['C_CONTIGUOUS']`, `flags['W']`): NumPy's own flags object of a one-element array
    of the same shape, strides and writeability answers all but `owndata`."""

    __slots__ = ("_tracer",)

    def __init__(self, tracer):
        object.__setattr__(self, "_tracer", tracer)

    def _numpys(self):
        tracer = self._tracer
        if tracer.shape:
            itemsize = tracer.dtype.itemsize
            strides = tuple(s * itemsize for s in _known_strides(tracer, "x.flags' contiguity"))
            probe = as_strided(np.zeros(1, tracer.dtype), tracer.shape, strides)
        else:
            probe = np.zeros((), tracer.dtype)  # (a 0-d array, a NumPy scalar)
        if not self.writeable:
            probe.flags.writeable = False
        return probe.flags

    @property
    def writeable(self) -> bool:
        if self._tracer._numpy_scalar and not self._tracer.shape:
            return False  # (NumPy's scalars are immutable)
        return self._tracer._readonly is not True  # (a str: numfuse's refusal, NumPy's view writes)

    @property
    def owndata(self) -> bool:
        tracer = self._tracer
        if isinstance(tracer, TracedView):
            return False
        if tracer._argument or tracer._var in tracer._ctx.inputs:
            raise unsupported("x.flags.owndata of an argument",
                              "whether the caller's array owns its memory is no part of numfuse's signature")
        return True

    def __getattr__(self, name):
        if name.startswith("_") or name in ("num",):
            raise AttributeError(name)
        return getattr(self._numpys(), name)

    def __getitem__(self, key):
        name = _KEYS.get(key) if isinstance(key, str) else None
        if name is None:
            raise KeyError("Unknown flag")
        return getattr(self, name)

    def __setitem__(self, key, value):
        name = _KEYS.get(key) if isinstance(key, str) else None
        if name is None:
            raise KeyError("Unknown flag")
        setattr(self, name, value)

    def __setattr__(self, name, value):
        if name != "writeable":
            raise unsupported(f"setting x.flags.{name}", "only x.flags.writeable = False is followed")
        tracer = self._tracer
        if bool(value) == self.writeable:
            return
        if value:
            raise unsupported("x.flags.writeable = True of a read-only array",
                              "write into a copy (x.copy()) instead")
        if tracer._argument or _root(tracer)._argument:
            raise unsupported("x.flags.writeable = False of an argument (or a view of one)",
                              "it would make the caller's array read-only: do that outside the function")
        tracer._readonly = True  # (its writes now raise NumPy's error; views taken later inherit it)

    def __repr__(self) -> str:
        names = ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED", "WRITEBACKIFCOPY")
        return "\n".join(f"  {n} : {self[n]}" for n in names) + "\n"


__all__ = ["TracedFlags", "strides"]
