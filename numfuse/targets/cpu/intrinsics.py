"""What the scalar templates call as `cuda.<name>` (a GPU's intrinsics), for the CPU: the CPU
renderer rewrites `cuda.popc(x)` to `popc(x)` and imports these."""

import numba
import numpy as np


@numba.njit(inline="always", nogil=True, cache=True)
def popc(x):
    # The 1-bits of a uint64 (SWAR: what the GPU's popc instruction counts).
    x = x - ((x >> numba.uint64(1)) & numba.uint64(0x5555555555555555))
    x = (x & numba.uint64(0x3333333333333333)) + ((x >> numba.uint64(2)) & numba.uint64(0x3333333333333333))
    x = (x + (x >> numba.uint64(4))) & numba.uint64(0x0F0F0F0F0F0F0F0F)
    return numba.int32((x * numba.uint64(0x0101010101010101)) >> numba.uint64(56))


cbrt = np.cbrt
