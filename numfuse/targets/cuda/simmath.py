"""The `math` module that generated kernels see when they run on Numba's CUDA simulator.

On a GPU, `math.exp(1000.0)` is inf, `math.log(0.0)` is -inf and `math.floor` of a float32 is
a float32. Python's own `math` raises on the first two and returns an int for the third, so the
simulator would fail or change dtypes where a GPU does not. These NumPy-backed functions keep
the simulator's results IEEE-exact and in the argument's dtype, like the device's.
"""

import numpy as np

inf = np.inf
nan = np.nan
pi = np.pi
e = np.e

exp = np.exp
exp2 = np.exp2
expm1 = np.expm1
log = np.log
log2 = np.log2
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
# frexp returns (mantissa, int32 exponent) as the device's; ldexp takes an int32 exponent.
frexp = np.frexp
ldexp = np.ldexp
nextafter = np.nextafter
