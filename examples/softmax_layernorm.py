"""Softmax and layer norm: each one persistent kernel that reads its input once.

    python examples/softmax_layernorm.py

A reduction whose result is broadcast back over its own row (the max and the sum of softmax,
the mean and variance of layer norm) runs as another pass of the same kernel, with the row kept
in shared memory, along the last axis or any other. `explain` shows the phases and the cache.
"""

import numpy as np

import numfuse
from _common import best_time, on_gpu, size


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layer_norm(x, weight, bias, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


fused_softmax = numfuse.jit(softmax, static_argnames=("axis",))
fused_layer_norm = numfuse.jit(layer_norm)


def main():
    rows, width = size(gpu=16384, simulator=8, cpu=2048), size(gpu=4096, simulator=64)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, width)).astype(np.float32)
    w = rng.uniform(0.5, 1.5, width).astype(np.float32)
    b = rng.uniform(-0.1, 0.1, width).astype(np.float32)

    ok = True
    for name, fn, jitted, args in [
        ("softmax (last axis)", softmax, fused_softmax, (x,)),
        ("softmax (axis 0)", lambda x: softmax(x, axis=0), lambda x: fused_softmax(x, axis=0), (x,)),
        ("layer norm", layer_norm, fused_layer_norm, (x, w, b)),
    ]:
        got, expected = jitted(*args), fn(*args)
        same = np.allclose(got, expected, rtol=1e-4, atol=1e-5)
        ok &= same
        plan = (fused_softmax.plan(x, axis=0) if "axis 0" in name else
                fused_softmax.plan(x) if fn is softmax else fused_layer_norm.plan(*args))
        kernel = plan.kernels[0]
        print(f"{name}: {len(plan.kernels)} kernel ({kernel.nest.strategy}), {len(kernel.nest.phases)} "
              f"passes over each row, {plan.bytes_moved} bytes moved (minimum {plan.min_bytes}); "
              f"same as NumPy: {same}")
        if on_gpu():
            from numba import cuda

            dev = [cuda.to_device(a) for a in args]
            seconds = best_time(jitted, *dev)
            print(f"   GPU: {seconds * 1e3:.3f} ms, {plan.min_bytes / seconds / 1e9:.0f} GB/s")
    print()
    print(fused_layer_norm.explain(x, w, b).split("   loop nest:")[0])
    return ok


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
