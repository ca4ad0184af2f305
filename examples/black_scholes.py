"""Black-Scholes option pricing: two outputs from one fused elementwise kernel.

    python examples/black_scholes.py

Every operation below (logs, square roots, a tanh approximation of the normal CDF, exps) runs in
one kernel that reads the three input arrays once and writes the two price arrays once.
"""

import numpy as np

import numfuse
from _common import best_time, on_gpu, size


def black_scholes(s, k, t, r, v):
    sqrt_t = np.sqrt(t)
    d1 = (np.log(s / k) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    cdf1 = 0.5 * (1.0 + np.tanh(0.7978845608 * (d1 + 0.044715 * d1**3)))
    cdf2 = 0.5 * (1.0 + np.tanh(0.7978845608 * (d2 + 0.044715 * d2**3)))
    discount = np.exp(-r * t)
    call = s * cdf1 - k * discount * cdf2
    put = call - s + k * discount
    return call, put


fused = numfuse.jit(black_scholes)


def main():
    n = size(gpu=10_000_000, simulator=2_000, cpu=2_000_000)
    rng = np.random.default_rng(0)
    s = rng.uniform(10, 50, n).astype(np.float32)  # spot prices
    k = rng.uniform(10, 50, n).astype(np.float32)  # strikes
    t = rng.uniform(0.25, 2, n).astype(np.float32)  # years to expiry
    r, v = 0.02, 0.3  # Python floats: runtime kernel arguments, weakly typed (float32 results)

    call, put = fused(s, k, t, r, v)
    call_ref, put_ref = black_scholes(s, k, t, r, v)
    plan = fused.plan(s, k, t, r, v)
    print(f"{n} options: {len(plan.kernels)} kernel, {plan.bytes_moved} bytes moved "
          f"(minimum {plan.min_bytes}; one pass per NumPy operation would move {plan.unfused_bytes})")
    print("calls:", call[:3], "puts:", put[:3], call.dtype)
    same = np.allclose(call, call_ref, rtol=1e-4, atol=1e-4) and np.allclose(put, put_ref, rtol=1e-4, atol=1e-4)
    print("same as NumPy:", same)
    if on_gpu():
        from numba import cuda

        args = [cuda.to_device(a) for a in (s, k, t)] + [r, v]
        seconds = best_time(fused, *args)
        print(f"GPU: {seconds * 1e3:.3f} ms per call on device arrays, {plan.min_bytes / seconds / 1e9:.0f} GB/s")
    return same


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
