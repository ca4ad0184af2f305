"""A stencil time loop: heat diffusion on a plate, one fused kernel per step, in place.

    python examples/stencil.py

Each step replaces every interior point by the average of its four neighbours (a Jacobi step),
written as NumPy slices. The four shifted slices are index maps into one kernel: no slice is
copied, and the step writes straight into the caller's array.
"""

import numpy as np

import numfuse
from _common import best_time, on_gpu, size


def jacobi_step(u, out):
    out[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return out


fused_step = numfuse.jit(jacobi_step)


def diffuse(step, u, steps):
    """`steps` Jacobi steps, swapping two buffers (their boundaries hold the fixed edge values)."""
    a, b = u, u.copy()
    for _ in range(steps):
        step(a, b)
        a, b = b, a
    return a


def main():
    n, steps = size(gpu=4096, simulator=24, cpu=1024), size(gpu=200, simulator=5, cpu=20)
    u = np.zeros((n, n), np.float32)
    u[0, :] = 100.0  # a hot edge
    expected = diffuse(jacobi_step, u.copy(), steps)
    got = diffuse(fused_step, u.copy(), steps)  # NumPy arrays: each step writes back into `b`
    same = np.allclose(got, expected, rtol=1e-5, atol=1e-5)
    plan = fused_step.plan(u, u.copy())
    print(f"{n}x{n} plate, {steps} steps: {len(plan.kernels)} kernel per step "
          f"({plan.bytes_moved} bytes moved, minimum {plan.min_bytes})")
    print("temperature near the hot edge:", got[1, n // 2 - 2: n // 2 + 2])
    print("same as NumPy:", same)
    if on_gpu():
        from numba import cuda

        a, b = cuda.to_device(u), cuda.to_device(u)
        seconds = best_time(fused_step, a, b, repeats=20)
        print(f"GPU: {seconds * 1e3:.3f} ms per step on device arrays (written in place), "
              f"{plan.min_bytes / seconds / 1e9:.0f} GB/s")
    return same


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
