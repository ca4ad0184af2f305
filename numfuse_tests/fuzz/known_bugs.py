"""Constructs the generator leaves out because numfuse gets them wrong today.

Each predicate says whether a candidate operation would hit one known numfuse bug; the
generator then skips it, so that CI stays green and every other program is still checked. When
a bug is fixed, delete its predicate (and its call): the fuzzer then covers the construct again.
A small repro of each is in its docstring.
"""

from __future__ import annotations

import numpy as np

# The last ones before these (a Python int to a negative Python int power, Python-scalar s ** 2
# giving a NumPy scalar, uint64-vs-signed comparisons giving np.longlong, out-of-range clip
# bounds, the round of a 0-d integer) were fixed. A new one gets a predicate here, called from
# strategies.py, and a repro in test_fuzz_programs.KNOWN_BUGS.


def library_call_on_computed_empty(builder, operand: int) -> bool:
    """A sort, argsort or scan (a library call) of a zero-size array that a kernel computes
    raises KeyError (runtime/library_calls.py `_input`: the empty intermediate has no buffer in
    the step's environment). A zero-size argument (or its transpose) works.

        def f(x):
            return (np.cumsum(-x),)      # or np.sort(x * 1), np.argsort(x[::-1], kind="stable")
        numfuse.jit(f)(np.zeros((0,)))   # KeyError: Var#..:f64[0]; NumPy: array([])
    """
    return operand >= len(builder.inputs) and np.size(builder.values[operand].value) == 0


def scan_or_argsort_of_0d_along_an_axis(value, axis) -> bool:
    """np.cumsum, np.cumprod or np.argsort of a 0-d value along an integer axis (argsort's
    default is -1) plans a 0-d result where NumPy gives shape (1,), and raises ValueError.

        def f(x):
            return (np.cumsum(x, axis=0),)   # or np.argsort(x), x.argsort()
        numfuse.jit(f)(np.array(3.0))        # ValueError: np.cumsum returned shape (1,) where
                                             # numfuse planned (); NumPy: array([3.])
    """
    return np.ndim(value) == 0 and axis is not None


LIBRARY_LABELS = ("scan", "sort", "matmul")  # the fuzzer's ops that may be library calls
WRITTEN_LABELS = ("setitem", "in-place", "mask", "sort method sort")  # locals written in place


def library_call_after_one_reading_a_written_local(builder) -> bool:
    """A library call planned after another that reads a local written in place (item or mask
    assignment) is refused with a wrong UnsupportedError, as if the first read the buffer after
    a later version overwrote it. The other order works.

        def f(x, y):
            v = x * 1.0
            v[0] = 2.0                       # or v[v > 0.5] = 2.0
            return np.cumsum(v), np.sort(y)
        numfuse.jit(f)(np.array([0., 1.]), np.array([3., 1.]))
        # UnsupportedError: library cumsum would read e after its buffer was overwritten in
        # place by a later version (d); NumPy: (array([2., 3.]), array([1., 3.]))
    """
    n_in = len(builder.inputs)
    written = {n_in + k for k, op in enumerate(builder.ops) if op.rules.label.startswith(WRITTEN_LABELS)}
    return any(op.rules.label.startswith(LIBRARY_LABELS) and written.intersection(op.operands) for op in builder.ops)
