"""Device arrays in, device arrays out: CuPy (or PyTorch, or Numba) arrays are read in place.

    python examples/cupy_interop.py

With CuPy and a GPU, the function takes CuPy arrays and returns a CuPy array, allocated from
CuPy's memory pool, computed on CuPy's current stream, with no copy and no synchronization.
Without a GPU the same path runs with Numba's (simulated) device arrays.
"""

import numpy as np

import numfuse
from _common import on_gpu, size, where


def scaled_softplus(x, scale):
    return np.log1p(np.exp(x * scale)) / scale


fused = numfuse.jit(scaled_softplus)


def main():
    n = size(gpu=1 << 24, simulator=500, cpu=1 << 20)
    host = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    expected = scaled_softplus(host, 2.0)
    if where() == "cpu":
        # Device arrays need the CUDA target: a GPU, or Numba's simulator (NUMFUSE_TARGET=cuda
        # with NUMBA_ENABLE_CUDASIM=1). Here NumPy arrays go in and come out.
        print("no GPU here: device arrays need a GPU (or the simulator); NumPy arrays in, NumPy out")
        result = fused(host, 2.0)
        same = np.allclose(result, expected, rtol=1e-5, atol=1e-6)
        print("same as NumPy:", same)
        return same
    cp = None
    if on_gpu():
        try:
            import cupy as cp
        except ImportError:
            cp = None
    if cp is not None:
        x = cp.asarray(host)
        y = fused(x, 2.0)  # a CuPy array; x was read in place
        print("input:", type(x).__module__, "-> output:", type(y).__module__, y.dtype, y.shape)
        result = cp.asnumpy(y)
    else:
        from numba import cuda

        x = cuda.to_device(host)
        y = fused(x, 2.0)  # a Numba device array; nothing was copied back
        print("input:", type(x).__name__, "-> output:", type(y).__name__, y.dtype, y.shape)
        result = y.copy_to_host()
    same = np.allclose(result, expected, rtol=1e-5, atol=1e-6)
    print("same as NumPy:", same)
    return same


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
