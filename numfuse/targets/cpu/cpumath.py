"""The `math` module that generated CPU functions see (targets/cpu/codegen.py imports it as
`math`): codegen/numpy_math.py's NumPy functions, which keep float32 in float32 where Numba's
CPU `math` would not (its `math.floor` returns an int64, overflowing past 2**63). Numba has no
np.frexp, so frexp is math's (only its mantissa is used, cast by the template).
"""

import math as _math

from numba import njit as _njit

import numpy as np

from ...codegen.numpy_math import *  # noqa: F401,F403 (the names generated code calls)

frexp = _math.frexp


# Numba declares np.exp2 and np.log2 by one LLVM name whatever the dtype: a function that calls
# one for float64 and for float32 (a float16 value beside a float64 one) fails to compile
# ("Type of #1 arg mismatch: float != double"). Called through their own compiled functions,
# each dtype's call is in another module.
@_njit(cache=True, nogil=True, error_model="numpy")
def exp2(x):
    return np.exp2(x)


@_njit(cache=True, nogil=True, error_model="numpy")
def log2(x):
    return np.log2(x)
