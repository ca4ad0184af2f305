"""A Gaussian kernel-density estimate: an outer broadcast, then a reduction, in one kernel.

    python examples/kde.py

Every sample is compared with every grid point (a samples x grid matrix that is never stored)
and the column sums are the density: numfuse evaluates the matrix inside the reduction's loop.
"""

import numpy as np

import numfuse
from _common import best_time, on_gpu, size


def kde(samples, grid, bandwidth):
    # samples: (n, 1), grid: (m,) -> (n, m) differences, summed over the samples.
    z = (samples - grid) / bandwidth
    return np.exp(-0.5 * z * z).sum(axis=0) / (samples.shape[0] * bandwidth * np.sqrt(2 * np.pi))


fused = numfuse.jit(kde)


def main():
    n, m = size(gpu=100_000, simulator=300, cpu=20_000), size(gpu=2_000, simulator=40, cpu=500)
    rng = np.random.default_rng(0)
    samples = np.concatenate([rng.normal(-1, 0.5, n // 2), rng.normal(1.5, 0.8, n - n // 2)])
    samples = samples.astype(np.float32).reshape(n, 1)
    grid = np.linspace(-4, 5, m, dtype=np.float32)
    h = 0.3

    density = fused(samples, grid, h)
    expected = kde(samples, grid, h)
    same = np.allclose(density, expected, rtol=1e-4, atol=1e-6)
    plan = fused.plan(samples, grid, h)
    print(f"{n} samples on {m} grid points: {len(plan.kernels)} kernel "
          f"({plan.kernels[0].nest.strategy}); the {n}x{m} matrix is never stored: "
          f"{plan.bytes_moved} bytes moved, one pass per NumPy operation would move {plan.unfused_bytes}")
    print("density integrates to", float(density.sum() * (grid[1] - grid[0])), "; same as NumPy:", same)
    if on_gpu():
        from numba import cuda

        seconds = best_time(fused, cuda.to_device(samples), cuda.to_device(grid), h)
        print(f"GPU: {seconds * 1e3:.3f} ms, {n * m / seconds / 1e9:.1f} G pairs/s")
    return same


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
