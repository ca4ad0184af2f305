"""The bytes model: what fused kernels move against one pass per operation."""

import numpy as np

import numfuse


def test_unfused_bytes_of_the_readme_example():
    x = np.ones((4, 6), np.float32)  # 96 bytes; the row sums are 16 bytes

    def f(x, y):
        z = np.exp(x) * y + 1.0
        return z, z.sum(axis=1)

    plan = numfuse.jit(f).plan(x, x)
    # exp: 96 in, 96 out; multiply: 192 in, 96 out; add: 96 in, 96 out; sum: 96 in, 16 out
    assert plan.unfused_bytes == 192 + 288 + 192 + 112
    assert plan.bytes_moved == plan.min_bytes == 96 * 2 + 96 + 16


def test_views_move_nothing_when_unfused():
    x = np.ones((4, 6), np.float64)  # 192 bytes
    v = np.ones(6, np.float64)  # 48 bytes
    plan = numfuse.jit(lambda x, v: x + v).plan(x, v)
    # one add reading x and v (the broadcast of v is a view), writing 192 bytes
    assert plan.unfused_bytes == 192 + 48 + 192
    assert plan.bytes_moved == plan.unfused_bytes
