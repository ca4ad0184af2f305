"""The bytes model: what fused kernels move against one pass per operation."""

import numpy as np

import numfuse


def test_unfused_bytes_of_the_readme_example():
    x = np.ones((4, 6), np.float32)  # 96 bytes; the row sums are 16 bytes

    def f(x, y):
        z = np.exp(x) * y + 1.0
        return z, z.sum(axis=1)

    plan = numfuse.jit(f).plan(x, x.copy())
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


def test_a_graph_deeper_than_the_recursion_limit_plans_into_one_kernel():
    import sys

    def long_chain(x):
        y = x
        for _ in range(sys.getrecursionlimit() + 200):
            y = y * 0.5 + 1.0
        return y

    x = np.ones(8, np.float32)
    plan = numfuse.jit(long_chain).plan(x)
    # Cut by the code budget (plan/code_size.py) into stretches of equal length, one code.
    steps = (sys.getrecursionlimit() + 200) * 2
    assert len(plan.kernels) == -(-steps // 128)
    assert len({k.nest.name for k in plan.kernels}) == 1
    assert plan.bytes_moved == plan.min_bytes + (len(plan.kernels) - 1) * 2 * x.nbytes


def test_unfused_bytes_count_each_operation_once():
    x = np.ones((6, 6), np.float32)  # 144 bytes; row maxima 24 bytes

    def f(x):
        z = np.exp(x) * 2.0
        # Row maxima broadcast along the rows (each row reads every row's maximum): 2 kernels.
        return z - z.max(axis=1)

    plan = numfuse.jit(f).plan(x)
    assert len(plan.kernels) == 2  # z is recomputed in both kernels
    # exp 144+144, multiply 144+144, max 144+24, subtract 144+24+144 (the broadcast is a view)
    assert plan.unfused_bytes == 288 + 288 + 168 + 312
    assert sum(k.unfused_bytes for k in plan.kernels) > plan.unfused_bytes
