"""numfuse quickstart: a NumPy function, jitted, its results beside NumPy's, and its plan.

    python examples/quickstart.py

Without a GPU this runs on Numba's CUDA simulator (numfuse says so in a warning).
"""

import numpy as np

import numfuse


@numfuse.jit
def f(x, y):
    z = np.exp(x) * y + 1.0
    return z, z.sum(axis=1)


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    y = rng.standard_normal((4, 6)).astype(np.float32)

    z, s = f(x, y)  # NumPy in, NumPy out
    z_ref = np.exp(x) * y + 1.0
    s_ref = z_ref.sum(axis=1)

    np.set_printoptions(precision=4, suppress=True)
    print("row sums, numfuse:", s, s.dtype, s.shape)
    print("row sums, NumPy:  ", s_ref, s_ref.dtype, s_ref.shape)
    print("z[0], numfuse:", z[0])
    print("z[0], NumPy:  ", z_ref[0])
    print("same as NumPy:", np.allclose(z, z_ref, rtol=1e-5) and np.allclose(s, s_ref, rtol=1e-5))

    plan = f.plan(x, y)
    print(f"\n{len(plan.kernels)} kernel(s); {plan.bytes_moved} bytes moved, minimum {plan.min_bytes}\n")
    print(f.explain(x, y))


if __name__ == "__main__":
    main()
