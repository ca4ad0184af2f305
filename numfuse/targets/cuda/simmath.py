"""The `math` module that generated kernels see when they run on Numba's CUDA simulator:
codegen/numpy_math.py's NumPy functions, so that the simulator's results are IEEE-exact and in
the argument's dtype, as a GPU's are (Python's own `math` raises for math.exp(1000.0) and
math.log(0.0), and returns an int from math.floor).
"""

import numpy as np

from ...codegen.numpy_math import *  # noqa: F401,F403 (the names generated code calls)

exp2 = np.exp2
log2 = np.log2
# frexp returns (mantissa, int32 exponent) as the device's; ldexp takes an int32 exponent.
frexp = np.frexp
