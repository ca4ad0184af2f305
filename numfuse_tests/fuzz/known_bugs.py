"""Constructs the generator leaves out because numfuse gets them wrong today.

Each predicate says whether a candidate operation would hit one known numfuse bug; the
generator then skips it, so that CI stays green and every other program is still checked. When
a bug is fixed, delete its predicate (and its call): the fuzzer then covers the construct again.
A small repro of each is in its docstring.
"""

from __future__ import annotations

import numpy as np

from . import catalog as C

def python_int_power(u: np.ufunc, *values) -> bool:
    """known bug: on two Python ints (or bools), s ** t with t < 0 raises numfuse's ValueError
    "Integers to negative integer powers are not allowed" where Python gives a float:
        numfuse.jit(lambda x, s, t: (x, s ** t))(np.zeros(2), 2, -1)     # Python: 0.5
        numfuse.jit(lambda x, s: (x, s ** -1))(np.zeros(2), 2)"""
    return u is np.power and all(isinstance(v, int) for v in values)


def python_scalar_power_fast_path(u: np.ufunc, x, c, operator: bool) -> bool:
    """known bug: on a Python scalar, s ** 2 and s ** 0.5 (NumPy's square and sqrt shortcuts)
    give NumPy scalars where Python gives a Python int or float:
        type(numfuse.jit(lambda s: (s ** 2,))(1.5)[0])                      # numpy.float64"""
    return (u is np.power and operator and isinstance(x, (bool, int, float))
            and type(c) in (int, float) and c in (2, 0.5))


def longlong_comparison(u: np.ufunc, *values) -> bool:
    """known bug: NumPy compares uint64 with signed integers in a loop whose int64 is
    dtype('q') (longlong); numfuse shares that cast with int64 results of the same value, and a
    0-d sum of it comes back as np.longlong where NumPy gives np.int64:
        f = lambda x: (np.uint64(5) == x, x.sum())
        type(numfuse.jit(f)(np.array(3, np.int16))[1])                   # numpy.longlong"""
    if u not in C.COMPARISONS or any(isinstance(v, (bool, int, float)) for v in values):
        return False
    loop = u.resolve_dtypes(tuple(np.asarray(v).dtype for v in values) + (None,))
    return any(dtype.char == "q" for dtype in loop)
