"""What NumPy's rules (numpy_*.py) know of a traced array, without importing the Tracer.

The Tracer (proxy.py) stands in for an array and receives NumPy's protocols, which it hands to
the rules; the rules in turn test their arguments for traced arrays and get new ones from the
TraceContext (tracer.py). So that the rules need not import proxy.py, which imports them, they
test against these bases, which Tracer and its views derive from."""

from __future__ import annotations

import numpy as np


class TracedArray:
    """A traced array: a Tracer (proxy.py). Attributes: `_ctx` its TraceContext, `_var` the
    graph variable it holds now, with `shape`, `dtype`, `ndim` and the flags the Tracer sets."""

    __slots__ = ()


class TracedView(TracedArray):
    """A traced view of another traced array (proxy._View): writes through it reach its base."""

    __slots__ = ()


def root_array(tracer):
    """The traced array at the end of `tracer`'s chain of views (`tracer` itself if no view)."""
    while isinstance(tracer, TracedView):
        tracer = tracer._base
    return tracer


def holds_traced(value) -> bool:
    """Whether `value` is a traced array or a (nested) list or tuple holding one."""
    if isinstance(value, TracedArray):
        return True
    return isinstance(value, (list, tuple)) and any(holds_traced(v) for v in value)


def is_host_array(value) -> bool:
    """A real NumPy array (a Tracer answers isinstance(x, np.ndarray) as NumPy would: see
    Tracer.__class__; numfuse's own checks ask this)."""
    return isinstance(value, np.ndarray) and not isinstance(value, TracedArray)


def is_traced_value(value) -> bool:
    """A traced value other than a scalar argument (which answers isinstance as the Python or
    NumPy scalar passed, and is made static where Python needs its value)."""
    return isinstance(value, TracedArray) and getattr(value, "_passed_as", None) is None
