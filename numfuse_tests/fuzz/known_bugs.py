"""Constructs the generator leaves out because numfuse gets them wrong today.

Each predicate says whether a candidate operation would hit one known numfuse bug; the
generator then skips it, so that CI stays green and every other program is still checked. When
a bug is fixed, delete its predicate (and its call): the fuzzer then covers the construct again.
A small repro of each is in its docstring.
"""

from __future__ import annotations

import numpy as np

# Fixed since they were found (their predicates deleted): a Python int to a negative Python int
# power, Python-scalar s ** 2 giving a NumPy scalar, uint64-vs-signed comparisons giving
# np.longlong, out-of-range clip bounds, the round of a 0-d integer; and, from the library-call
# fuzzing, a sort or scan of a computed empty array, a scan or argsort of a 0-d value along an
# axis, a library call after one reading a local written in place, a masked write into a
# copy of a flattening cumsum. A new one gets a predicate here, called from
# strategies.py, and a repro in test_fuzz_programs.KNOWN_BUGS.


def library_call_of_a_computed_empty(builder, operand: int) -> bool:
    """A sort or scan (a library call) of a zero-size array that a kernel computes, when a
    kernel also reads that array (a sum, a fused product), raises NotFusable ("b (negative) is
    written by a later kernel"). Alone (or returned beside it) it works. Excluded: every sort
    and scan of a computed zero-size array.

        def f(x):
            return np.cumsum(-x), (-x).sum()     # or np.sort(-x), or (-x) @ x
        numfuse.jit(f)(np.zeros((0,)))          # NotFusable; NumPy: (array([]), 0.0)
    """
    return operand >= len(builder.inputs) and np.size(builder.values[operand].value) == 0


def ellipsis_gather_of_a_0d_index(form: str, x, index) -> bool:
    """x[..., i] of a 1-D x with a 0-d integer array i gives a NumPy scalar where NumPy gives a
    0-d array (the Ellipsis makes NumPy's result an array).

        def f(x, i):
            return (x[..., i],)
        numfuse.jit(f)(np.array([1., 2.]), np.array(0))   # np.float64(1.0); NumPy: array(1.)
    """
    return "..." in form and np.ndim(x) == 1 and np.ndim(index) == 0


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


def flattening_scan_of_a_computed_array(builder, operand: int, axis) -> bool:
    """np.cumsum (or np.cumprod) with axis=None of a 2-D or larger array that a kernel computes,
    followed by a masked write into a copy of it, or by an in-place update, a scan and a
    .sort() of a copy, raises IndexError: tuple index out of range. The exact condition is not
    pinned down (np.cumsum(-x) * 1.0 with a mask works); excluded: every flattening scan of a
    computed 2-D or larger array.

        def f(x0, x1):
            v1 = np.cumsum(np.outer(x0, x1)) * 1.0
            v1[v1 > 0.5] = 0.5
            return (v1,)
        numfuse.jit(f)(np.array([[127, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0],
                                 [0, 0, 0, 0]], dtype=np.int8), np.array([-15, 0, 0, 10]))
        # IndexError; NumPy: a (80,) float64 array
    """
    return axis is None and operand >= len(builder.inputs) and np.ndim(builder.values[operand].value) >= 2


def masked_write_of_a_signed_value_into_uint64(array_dtype, value) -> bool:
    """A masked write of a signed-integer NumPy value into a uint64 array changes the unselected
    elements too (near 2**64: as if computed through float64).

        def f(x0, x1):
            v = x1.astype(np.uint64) * 1
            v[x0 > 0] = np.int64(0)          # selects nothing
            return (v,)
        numfuse.jit(f)(np.array([0]), np.array([-1]))
        # array([0], dtype=uint64); NumPy: array([18446744073709551615], dtype=uint64)
    """
    return np.dtype(array_dtype) == np.uint64 and isinstance(value, (np.ndarray, np.generic)) \
        and np.asarray(value).dtype.kind == "i"


def concatenate_of_a_python_scalar(operands) -> bool:
    """np.concatenate((x, s), axis=None) with a Python float s and a float32 x gives float64; NumPy
    gives float32 (a Python scalar is weakly typed).

        def f(x, s):
            return (np.concatenate((x, s), axis=None),)
        numfuse.jit(f)(np.array(np.nan, dtype=np.float32), 0.0)   # float64; NumPy: float32
    """
    return any(not isinstance(v, (np.ndarray, np.generic)) for v in operands)
