"""`x.strides` and `x.flags` of a traced array: NumPy's answers, where the trace knows them.

The trace knows an argument's layout exactly (its signature has C, Fortran, or its own
strides), and every view of it is NumPy's own view of a stand-in of that layout. So an
argument's `x.strides` is static (`as_strided(x, shape, x.strides + x.strides)`, a sliding
window, as numpy-100 and the SciPy cookbook write it), and `x.flags` of an argument or a view of
one is NumPy's flags object of that stand-in; `x.flags.writeable = False` of an array the
function made makes it read-only (numpy-100 #43), and views made after it.

Refused, with the reason, where numfuse would have to guess: the layout of what the function
computes (numfuse's own buffers are laid out as it chooses, and NumPy's choice is not always
followed), strides of a view (a NumPy function gets a view's values as an array of its own),
the stride of an axis of length 0 or 1 of what the function computes (whatever made the array:
`x[None]` has 0 there; an argument's own are part of its signature), and
`owndata` of anything but a view.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..errors import unsupported
from ..ir import viewmaps
from . import numpy_views
from .traced import TracedView, root_array

_HINT = "pass or compute a C-contiguous array (x.copy()) whose strides NumPy and numfuse agree on"


def _argument_layout(tracer, what: str) -> np.ndarray:
    """A memoryless stand-in laid out as NumPy's `tracer` is: an argument's (or a global
    array's) own layout, seen through the views taken of it; else the refusal of `what`."""
    ctx = tracer._ctx
    root = root_array(tracer)
    buffer = ctx.family.get(root._var, root._var)
    if buffer not in ctx.inputs or (ctx.breaks is not None and buffer in ctx.breaks.numfuse_layout):
        raise unsupported(f"{what} of an array the function computed",
                          "numfuse follows NumPy's layout of an argument and the views of it, not of what "
                          "the function computes (its own buffers are laid out as numfuse chooses); " + _HINT)
    strides = ctx.strides_of(buffer)
    if strides is None:
        raise unsupported(f"{what} of an argument whose strides are not whole elements", _HINT)
    layout = numpy_views.stand_in(buffer.aval.shape, strides, tracer.dtype)
    if isinstance(tracer, TracedView):
        chain = viewmaps.view_chain(ctx.eqns, tracer._var, root._var)
        if chain is None or tracer.dtype != root.dtype:
            raise unsupported(f"{what} of this view of an argument", _HINT)
        layout = viewmaps.view_through(np, layout, chain)
    return layout


def strides(tracer) -> tuple[int, ...]:
    """x.strides, in bytes: an argument's own, as the caller's array has them."""
    if tracer._weak:
        raise _no_attribute(tracer, "strides")
    if not tracer.shape:
        return ()
    if isinstance(tracer, TracedView):
        # (a view given to a NumPy function, as_strided's argument, is a copy of its own)
        raise unsupported("x.strides of a view", "NumPy functions numfuse does not trace get a view's values "
                                                 "as an array of their own, laid out anew; take the strides "
                                                 "of the argument itself")
    if any(n <= 1 for n in tracer.shape):
        exact = _argument_byte_strides(tracer)
        if exact is None:
            raise unsupported("x.strides of a computed array with an axis of length 0 or 1",
                              "NumPy's stride of such an axis is whatever made the array (x[None] has 0 there), "
                              "which numfuse follows for arguments only; " + _HINT)
        return exact
    return tuple(int(s) for s in _argument_layout(tracer, "x.strides").strides)


def _argument_byte_strides(tracer) -> tuple[int, ...] | None:
    """An argument's own strides, as the caller's array has them (part of its signature where
    an axis of length 0 or 1 makes them its own: arguments.classify), or None."""
    ctx = tracer._ctx
    root = root_array(tracer)
    buffer = ctx.family.get(root._var, root._var)
    if root is not tracer or buffer not in ctx.inputs:
        return None
    if ctx.breaks is not None and buffer in ctx.breaks.numfuse_layout:
        return None  # (a segment's input that numfuse computed: laid out as numfuse chose)
    return ctx.argument_byte_strides.get(buffer)


def _no_attribute(tracer, name: str):
    kind = type(tracer.dtype.type(0).item()).__name__
    return AttributeError(f"'{kind}' object has no attribute '{name}'")


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
            layout = _argument_layout(tracer, "x.flags' contiguity")
            probe = as_strided(np.zeros(1, tracer.dtype), layout.shape, layout.strides)
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
        if isinstance(self._tracer, TracedView):
            return False
        if self._tracer._numpy_scalar and not self._tracer.shape:
            return True
        # (an argument's depends on the caller's array; a computed array's on how NumPy made
        # it: a reshape that copies returns a view of its copy)
        raise unsupported("x.flags.owndata of an array that is not a view",
                          "whether it owns its memory is no part of what numfuse traces")

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
        tracer = self._tracer
        if tracer._numpy_scalar and not tracer.shape:
            raise ValueError("Cannot set flags on array scalars.")
        if name not in ("writeable", "aligned", "writebackifcopy"):
            raise AttributeError(f"attribute '{name}' of 'numpy._core.multiarray.flagsobj' objects is not writable")
        if name != "writeable":
            raise unsupported(f"setting x.flags.{name}", "only x.flags.writeable = False is followed")
        if bool(value) == self.writeable:
            return
        if value:
            raise unsupported("x.flags.writeable = True of a read-only array",
                              "write into a copy (x.copy()) instead")
        if tracer._argument or root_array(tracer)._argument:
            raise unsupported("x.flags.writeable = False of an argument (or a view of one)",
                              "it would make the caller's array read-only: do that outside the function")
        tracer._readonly = True  # (its writes now raise NumPy's error; views taken later inherit it)

    def __eq__(self, other):
        if not isinstance(other, TracedFlags):
            return NotImplemented
        names = ("c_contiguous", "f_contiguous", "writeable", "aligned", "writebackifcopy")
        return self._tracer is other._tracer or all(getattr(self, n) == getattr(other, n) for n in names)

    __hash__ = None

    def __repr__(self) -> str:
        names = ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED", "WRITEBACKIFCOPY")
        return "\n".join(f"  {n} : {self[n]}" for n in names) + "\n"


__all__ = ["TracedFlags", "strides"]
