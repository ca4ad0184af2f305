"""NumPy functions that numfuse traces as compositions of operations it already has (slices,
concatenate, broadcast_to, reshape, transposes, ufuncs, reductions, np.where), rather than as
primitives of their own: shape functions (numpy_shapes.py: flip, roll, stack, split, tile,
repeat, pad, ...) and numerical ones (numpy_numerics.py: outer, kron, cross, diff, gradient,
convolve, isclose, diagonal, ...). Each follows NumPy's own implementation, so the kernels
fuse them with whatever produces and consumes their values.
"""

from __future__ import annotations

from .numpy_numerics import COMPOSED_UFUNCS, ufunc_outer
from .numpy_numerics import FUNCTIONS as NUMERIC_FUNCTIONS
from .numpy_shapes import FUNCTIONS as SHAPE_FUNCTIONS

FUNCTIONS = {**SHAPE_FUNCTIONS, **NUMERIC_FUNCTIONS}

__all__ = ["COMPOSED_UFUNCS", "FUNCTIONS", "ufunc_outer"]
