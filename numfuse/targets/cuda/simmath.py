"""The `math` module that generated kernels see when they run on Numba's CUDA simulator:
codegen/numpy_math.py's NumPy functions, so that the simulator's results are IEEE-exact and in
the argument's dtype, as a GPU's are (Python's own `math` raises for math.exp(1000.0) and
math.log(0.0), and returns an int from math.floor).

The transcendental functions of float32 values are NumPy's float64 ones, rounded to float32:
NumPy's float32 loops differ by machine (on a CPU with AVX-512 they are SVML's, a few ulp from
the C library's), and the simulator's results must not.
"""

import math

import numpy as np

from ...codegen import numpy_math
from ...codegen.numpy_math import *  # noqa: F401,F403 (the names generated code calls)


def _in_float64(function):
    """`function` with float32 arguments computed in float64 and rounded to float32 (correctly
    rounded but for rare double roundings: closer than any float32 loop)."""

    def computed(*args):
        if all(type(a) is np.float32 for a in args):
            return np.float32(function(*(np.float64(a) for a in args)))
        return function(*args)

    computed.__name__ = function.__name__
    return computed


def _c_pow(a, b):
    """C99's pow, as the device's (and the C library's) computes it: NumPy's own power of a
    scalar gives NaN for pow(-inf, 0.5) and -0.0 for pow(-0.0, 0.5), where C gives inf and 0.0;
    Python's math.pow is C's but raises where C returns NaN or an infinity."""
    x, y = float(a), float(b)
    odd = math.isfinite(y) and y == math.floor(y) and math.fmod(y, 2.0) != 0.0
    try:
        r = math.pow(x, y)
    except ValueError:  # a negative base to a fractional power (NaN), or zero to a negative power
        r = math.copysign(math.inf, x) if x == 0.0 and odd else (math.inf if x == 0.0 else math.nan)
    except OverflowError:
        r = -math.inf if x < 0.0 and odd else math.inf
    return type(a)(r)


_TRANSCENDENTAL = ("exp", "expm1", "log", "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan",
                   "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh")
for _name in _TRANSCENDENTAL:
    globals()[_name] = _in_float64(getattr(numpy_math, _name))
pow = _in_float64(_c_pow)  # noqa: A001 (the name generated code calls)

exp2 = _in_float64(np.exp2)
log2 = _in_float64(np.log2)
# frexp returns (mantissa, int32 exponent) as the device's; ldexp takes an int32 exponent.
frexp = np.frexp
