"""The `math` module that generated CPU functions see (targets/cpu/codegen.py imports it as
`math`).

The scalar templates (scalar_impl.py) are written for a GPU, where math.floor of a float32 is a
float32. Numba's CPU `math.floor` returns an int64 (overflowing past 2**63) and its math
functions take float32 through float64. NumPy's ufuncs, which Numba compiles for scalars too,
keep the argument's dtype, as the device's functions do; Numba has no np.frexp, so frexp is
math's (only its mantissa is used, cast by the template).
"""

import math as _math

from numba import njit as _njit

import numpy as np

inf = _math.inf
nan = _math.nan
pi = _math.pi
e = _math.e

exp = np.exp
expm1 = np.expm1
log = np.log
log10 = np.log10
log1p = np.log1p
sqrt = np.sqrt
sin = np.sin
cos = np.cos
tan = np.tan
asin = np.arcsin
acos = np.arccos
atan = np.arctan
atan2 = np.arctan2
sinh = np.sinh
cosh = np.cosh
tanh = np.tanh
asinh = np.arcsinh
acosh = np.arccosh
atanh = np.arctanh
hypot = np.hypot
floor = np.floor
ceil = np.ceil
trunc = np.trunc
fabs = np.fabs
fmod = np.fmod
pow = np.power
copysign = np.copysign
isnan = np.isnan
isinf = np.isinf
isfinite = np.isfinite
frexp = _math.frexp
ldexp = np.ldexp
nextafter = np.nextafter


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
