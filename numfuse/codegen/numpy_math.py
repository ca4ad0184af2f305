"""Python's `math` names as NumPy's functions, for the `math` that generated code calls where a
GPU's math is not there: the CPU target's functions (targets/cpu/cpumath.py) and kernels on
Numba's CUDA simulator (targets/cuda/simmath.py).

The scalar templates (ir/scalar_impl.py) are written for a GPU, where `math.floor` of a float32
is a float32, `math.exp(1000.0)` is inf and `math.log(0.0)` is -inf. Python's `math` returns an
int for the first and raises for the others, and Numba's CPU `math` takes float32 through
float64; NumPy's ufuncs, which Numba compiles for scalars too, keep the argument's dtype and
IEEE results, as the device's functions do. Each target's module adds what differs for it
(exp2, log2, frexp).
"""

import numpy as np

inf = np.inf
nan = np.nan
pi = np.pi
e = np.e

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
ldexp = np.ldexp
nextafter = np.nextafter

__all__ = [
    "inf", "nan", "pi", "e", "exp", "expm1", "log", "log10", "log1p", "sqrt", "sin", "cos", "tan", "asin",
    "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "hypot", "floor", "ceil",
    "trunc", "fabs", "fmod", "pow", "copysign", "isnan", "isinf", "isfinite", "ldexp", "nextafter",
]
