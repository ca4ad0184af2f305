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


def mask_write_after_flattening_scan(builder, operand: int) -> bool:
    """A masked write into a copy of np.cumsum (or np.cumprod) of a 2-D or larger array over
    all axes (axis=None: a flattened result) raises IndexError: tuple index out of range.

        def f(x, m):
            v = np.cumsum(x) * 1.0
            v[m] = 5.0
            return (v,)
        numfuse.jit(f)(np.array([[1., 2., 3.]]), np.array([True, False, True]))
        # IndexError; NumPy: array([5., 3., 5.])
    """
    k = operand - len(builder.inputs)
    if k < 0 or not builder.ops[k].rules.label.startswith("scan"):
        return False
    return np.ndim(builder.values[builder.ops[k].operands[0]].value) >= 2


def einsum_of_one_against_zero(operands) -> bool:
    """np.einsum where a summed letter is 1 long in one operand and 0 in the other (NumPy
    broadcasts it: an empty sum) raises ValueError; a size one against a larger size works.
    Excluded: any einsum of a zero-size operand with one that has a size-one axis.

        def f(a):
            return (np.einsum("ij,jk->ik", a, a),)
        numfuse.jit(f)(np.zeros((1, 0)))
        # ValueError: operands could not be broadcast together with remapped shapes
        # [original->remapped]: (1,0) and requested shape (1,1); NumPy: zeros((1, 0))
    """
    shapes = [np.shape(v) for v in operands]
    return any(0 in s for s in shapes) and any(1 in s for s in shapes)


def scan_of_a_scalar_argument(builder, operand: int) -> bool:
    """np.cumsum or np.cumprod of a NumPy scalar argument is refused (UnsupportedError: "a, a
    scalar argument, is an operand of cumsum: pass it as a 0-d array"); NumPy scans it as a
    1-element array. A 0-d array argument, or a scalar computed in the function, works.

        def f(s):
            return (np.cumsum(s),)
        numfuse.jit(f)(np.int64(3))   # UnsupportedError; NumPy: array([3])
    """
    return operand < len(builder.inputs) and builder.inputs[operand].kind != "array"
