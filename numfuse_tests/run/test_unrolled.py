"""Flat pointwise kernels take codegen.unroll.UNROLL points per pass of their main loop (every
point's loads first), then one point per pass: sizes around the passes' boundaries, on the
simulator's grid of 2 blocks of 16 threads (32 threads: the unrolled loop covers 128 points a
pass), give NumPy's answer, with in-place updates, several outputs, a 0-d output stored by the
first point only, and a run-time check."""

import numpy as np
import pytest

import numfuse
from benchmarks import workloads
from numfuse.targets.cuda.unroll import UNROLL
from numfuse_tests.helpers import assert_same

RNG = np.random.default_rng(3)
SIZES = [1, 31, 32 * UNROLL - 1, 32 * UNROLL, 32 * UNROLL + 1, 32 * UNROLL + 33, 1000]


@pytest.mark.parametrize("n", SIZES)
def test_a_chain_with_two_outputs(n):
    def f(x, y):
        z = np.tanh(x * 2.0) + y
        return z, np.sqrt(np.abs(z)) - x

    x, y = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    assert_same(numfuse.jit(f)(x, y), f(x, y))


@pytest.mark.parametrize("n", SIZES)
def test_an_in_place_update(n):
    def f(a, b):
        a += b * 3
        return a

    a, b = RNG.standard_normal(n), RNG.standard_normal(n)
    want = f(a.copy(), b)
    got = numfuse.jit(f)(a, b)
    assert_same(got, want)
    assert_same(a, want)


@pytest.mark.parametrize("n", [32 * UNROLL + 5, 1000])
def test_a_zero_d_output_and_a_run_time_check(n):
    def f(x, s):
        return x * s, s * 2

    x = RNG.standard_normal(n)
    assert_same(numfuse.jit(f)(x, np.float64(1.5)), f(x, np.float64(1.5)))

    def g(a, b):
        return a ** b

    a = RNG.integers(1, 5, n)
    b = RNG.integers(0, 4, n)
    assert_same(numfuse.jit(g)(a, b), g(a, b))
    for at in (0, n - 2):  # a point of the first unrolled pass; one of the last pass or the rest
        c = b.copy()
        c[at] = -1
        with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed"):
            numfuse.jit(g)(a, c)


def test_the_main_loop_loads_every_point_before_storing_any():
    source = numfuse.jit(lambda x, y: x * y + 1).kernel_sources(np.ones(1000), np.ones(1000))[0].source
    main = source.split("while lin + ")[1].split("while lin < total")[0]
    lines = [line.strip() for line in main.splitlines()]
    loads = [i for i, line in enumerate(lines) if "= in" in line]
    stores = [i for i, line in enumerate(lines) if line.startswith("out")]
    assert len(loads) == 2 * UNROLL and len(stores) == UNROLL and max(loads) < min(stores)


# -- reductions: each phase's pass over a row, and a final storing pass, take UNROLL points a
# pass too. The simulator gives a row 16 threads (rows) or 4 (columns), so rows of more than
# 64 (16) points run the unrolled loop.

def _layer_norm(x):
    m = x.mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(((x - m) ** 2).mean(axis=-1, keepdims=True) + 1e-5)


@pytest.mark.parametrize("shape", [(3, 16 * UNROLL), (3, 16 * UNROLL + 1), (2, 300), (300, 5), (70, 3)])
@pytest.mark.parametrize("case", ["sum and argmax", "var", "softmax", "layer norm", "columns"])
def test_reductions_take_several_points_a_pass(case, shape):
    fn = {
        "sum and argmax": lambda x: (x.sum(axis=1), x.argmax(axis=1), x.argmin(axis=1)),
        "var": lambda x: x.var(axis=1, ddof=1),
        "softmax": workloads.softmax,
        "layer norm": _layer_norm,
        "columns": lambda x: (x.sum(axis=0), x.argmax(axis=0), np.exp(x - x.max(axis=0))),
    }[case]
    x = RNG.standard_normal(shape).astype(np.float32)
    x[:, shape[1] // 3] = x.max()  # ties: the first one wins
    x[0, -2] = np.nan  # a NaN in a late pass (or the rest): the first NaN wins
    with np.errstate(invalid="ignore"):
        want = fn(x)
    assert_same(numfuse.jit(fn)(x), want, reduced=max(shape))


def test_a_split_row_takes_several_points_a_pass():
    from numfuse.targets.cuda import CUDA

    x = RNG.standard_normal((1, CUDA.split_min_reduced + 301))
    x[0, CUDA.split_min_reduced // 2] = 9.0
    fn = lambda x: (x.sum(axis=1), x.argmax(axis=1))  # noqa: E731
    plan = numfuse.jit(fn).plan(x)
    assert plan.kernels[0].nest.split
    assert_same(numfuse.jit(fn)(x), fn(x), reduced=x.shape[1])
