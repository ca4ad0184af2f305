"""numfuse quickstart: a NumPy function, jitted, its results and its time beside NumPy's, and
its plan.

    python examples/quickstart.py

numfuse runs it on a GPU where one is found, else on the CPU's cores (and says so once).
"""

import numpy as np
from _common import best_time, size, where

import numfuse


@numfuse.jit
def f(x, y):
    z = np.exp(x) * y + 1.0
    return z, z.sum(axis=1)


def numpy_f(x, y):
    z = np.exp(x) * y + 1.0
    return z, z.sum(axis=1)


def main():
    rng = np.random.default_rng(0)
    rows = size(gpu=16384, cpu=4096, simulator=4)
    x = rng.standard_normal((rows, 4096 if rows > 4 else 6)).astype(np.float32)
    y = rng.standard_normal(x.shape).astype(np.float32)

    z, s = f(x, y)  # NumPy in, NumPy out (the first call compiles)
    z_ref, s_ref = numpy_f(x, y)

    np.set_printoptions(precision=4, suppress=True)
    print(f"x, y: float32 {x.shape}, on the {where()}")
    print("row sums, numfuse:", s[:4], s.dtype, s.shape)
    print("row sums, NumPy:  ", s_ref[:4], s_ref.dtype, s_ref.shape)
    same = np.allclose(z, z_ref, rtol=1e-5, atol=1e-5) and np.allclose(s, s_ref, rtol=1e-4, atol=1e-3)
    print("same as NumPy:", same)
    if where() != "simulator":
        fused, plain = best_time(f, x, y), best_time(numpy_f, x, y)
        print(f"time per call: numfuse {fused * 1e3:.2f} ms, NumPy {plain * 1e3:.2f} ms "
              f"({plain / fused:.1f}x; best of 10 calls)")

    plan = f.plan(x, y)
    print(f"\n{len(plan.kernels)} kernel(s); {plan.bytes_moved} bytes moved, minimum {plan.min_bytes}\n")
    print(f.explain(x, y))


if __name__ == "__main__":
    main()
