"""A corpus of NumPy programs that every tier uses: the trace tier checks their plans, the compile
tier compiles their kernels to PTX, the run tier runs them against NumPy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Program:
    name: str
    fn: Callable
    args: Callable  # rng -> tuple of arguments (small: the simulator is slow)
    kernels: int  # expected kernel count of the plan
    reduced: int = 1  # elements combined per result, for the float tolerance
    exact_bytes: bool = False  # plan.bytes_moved == plan.min_bytes


def f32(rng, *shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, shape).astype(np.float32)


def f64(rng, *shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, shape)


def i32(rng, *shape, low=-50, high=50):
    return rng.integers(low, high, shape).astype(np.int32)


def quickstart(x, y):
    z = np.exp(x) * y + 1.0
    return z, z.sum(axis=1)


def chain10(x):
    y = x * 1.5 + 0.5
    y = np.tanh(y) - 0.25 * y
    y = np.abs(y) + np.sqrt(np.abs(x) + 1.0)
    y = np.maximum(y, 0.1) / (1.0 + x * x)
    return np.log1p(y)


def black_scholes(s, k, t):
    r, v = 0.02, 0.3
    sqrt_t = np.sqrt(t)
    d1 = (np.log(s / k) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    cdf1 = 0.5 * (1.0 + np.tanh(0.7978845608 * (d1 + 0.044715 * d1**3)))
    cdf2 = 0.5 * (1.0 + np.tanh(0.7978845608 * (d2 + 0.044715 * d2**3)))
    call = s * cdf1 - k * np.exp(-r * t) * cdf2
    put = call - s + k * np.exp(-r * t)
    return call, put


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def mixed_dtypes(a, b, c):
    return a + b, a / b, (a * c) // 3, (b > 0) & (c < 10), np.where(a > b, a, c)


def int_semantics(a, b):
    return a // b, a % b, np.fmod(a, b), -a, np.abs(a), a ** 2, np.sign(a)


def float_semantics(x, y):
    return (x // y, x % y, np.fmod(x, y), np.rint(x * 3), np.floor(x), np.ceil(x), np.trunc(x),
            np.sign(x), np.maximum(x, y), np.fmin(x, y), np.clip(x, -1, 1))


def nan_cases(x, y):
    return (np.maximum(x, y), np.minimum(x, y), np.fmax(x, y), np.fmin(x, y), x.max(axis=1),
            x.min(axis=0), np.isnan(x), np.isfinite(x + y), np.isinf(x / y))


def row_reductions(x):
    return x.sum(axis=1), x.mean(axis=-1), x.max(axis=1, keepdims=True), x.min(axis=1), x.prod(axis=1)


def column_reductions(x):
    return x.sum(axis=0), x.max(axis=0), x.mean(axis=0, keepdims=True)


def full_reductions(x):
    return x.sum(), x.max(), np.mean(x), (x > 0).any(), (x > -3).all()


def int_reductions(a):
    return a.sum(axis=1), a.sum(), a.mean(axis=0), a.max(axis=1), (a > 0).sum(axis=1), a.prod(axis=1)


def three_d(x):
    return x.sum(axis=(0, 2)), x.max(axis=1), x.mean(axis=(1, 2), keepdims=True), x.sum(axis=-1)


def epilogue(x, w):
    s = (x * x).sum(axis=1)
    return np.sqrt(s) * w + 1.0


def broadcast_outputs(x, v, s):
    return x + v * s, v * 2.0, np.float32(3.0) * s


def transposed(x, y):
    return x.T + y, (x.T * 2).sum(axis=0)


def two_level(x):
    centered = x - x.mean(axis=1, keepdims=True)
    return (centered * centered).mean(axis=1)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def zeros_and_ones(x):
    return np.zeros_like(x), np.ones_like(x, dtype=np.int32), np.full_like(x, 7.5), x.astype(np.int64)


def bool_logic(a, b):
    return a & b, a | b, a ^ b, ~a, np.logical_and(a, b), np.logical_not(b), a.sum(), a.any(axis=0)



def stencil(a):
    return 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])


def strided_slices(x):
    return x[::2, ::-1] * 2.0 + x[1::2, :], x[0] - x[-1, ::-1]


def views_reduced(x):
    # moveaxis + newaxis + squeeze feeding a row reduction: one kernel
    y = np.moveaxis(x, 0, 1)[None, ...]
    return np.squeeze(y, 0).sum(axis=1)


def reshape_view(x):
    # a reshape of a C-contiguous array is a view: index maps with // and %
    return x.reshape(3, 2, 4) + 1.0, x.ravel()[::3], np.expand_dims(x, 1) * x[:, None, :]


def reshape_copy(x):
    # NumPy copies x.T to reshape it: x.T is materialized first, then read flat
    return x.T.reshape(-1) * 2.0


def joined(x, y):
    # each is one kernel: the concatenation with the multiply, the stack with its sum
    return np.concatenate([x, y * 2.0], axis=1), np.stack([x, y], axis=0).sum(axis=0)


def borders(x, v):
    # A grid's borders, in a copy: the rows are one kernel, the columns (which meet them at the
    # corners) another.
    u = x.copy()
    u[0, :] = v[0, :] * 2.0
    u[-1, :] = 0.5
    u[:, 0] = u[:, 1]
    u[:, -1] = -v[:, -1]
    return u


def index_arrays(x):
    # Arrays made from their indices are computed where they are read, never loaded: one
    # kernel that reads x alone.
    n, m = x.shape
    ramp = np.linspace(0.0, 1.0, m, dtype=np.float32)
    weights = np.arange(1, n + 1, dtype=np.float32)[:, None] * ramp
    diagonal = np.eye(n, m, k=1, dtype=np.float32)
    return (x * weights + diagonal).sum(axis=1), np.ogrid[0:n, 0:m][1] * x


def jacobi_roll(u, steps=3):
    # A stencil's time loop through np.roll: a select reads the step before at each of its
    # four neighbours; a kernel every two steps (plan/select_nesting.py), of one code.
    for _ in range(steps):
        u = 0.25 * (np.roll(u, 1, 0) + np.roll(u, -1, 0) + np.roll(u, 1, 1) + np.roll(u, -1, 1))
    return u


def life(board, steps=2):
    # Conway's game of life: rolls of rolls (two selects deep) a step, a kernel each step.
    for _ in range(steps):
        n = sum(np.roll(np.roll(board, i, 0), j, 1) for i in (-1, 0, 1) for j in (-1, 0, 1) if i or j)
        board = (n == 3) | (board & (n == 2))
    return board


PROGRAMS = [
    Program("quickstart", quickstart, lambda r: (f32(r, 5, 7), f32(r, 5, 7)), 1, 7, exact_bytes=True),
    Program("chain10", chain10, lambda r: (f32(r, 6, 9),), 1, exact_bytes=True),
    Program("black_scholes", black_scholes, lambda r: (f64(r, 40, low=10, high=20), f64(r, 40, low=10, high=20), f64(r, 40, low=0.5, high=2)), 1, exact_bytes=True),
    Program("gelu", gelu, lambda r: (f32(r, 3, 4, 5),), 1, exact_bytes=True),
    Program("mixed_dtypes", mixed_dtypes, lambda r: (i32(r, 4, 6), f32(r, 6, low=0.5, high=2), r.integers(0, 20, (4, 1)).astype(np.uint8)), 1),
    Program("int_semantics", int_semantics, lambda r: (i32(r, 30), i32(r, 30, low=-7, high=7)), 1, exact_bytes=True),
    Program("float_semantics", float_semantics, lambda r: (f64(r, 40, low=-9, high=9), np.where(r.random(40) < 0.5, -1, 1) * f64(r, 40, low=0.5, high=3)), 1, exact_bytes=True),
    Program("nan_cases", nan_cases, lambda r: (np.where(r.random((6, 5)) < 0.2, np.nan, f32(r, 6, 5)), np.where(r.random((6, 5)) < 0.2, np.nan, f32(r, 6, 5))), 2, 6),
    Program("row_reductions", row_reductions, lambda r: (f32(r, 7, 33),), 1, 33, exact_bytes=True),
    Program("column_reductions", column_reductions, lambda r: (f32(r, 9, 12),), 1, 9, exact_bytes=True),
    Program("full_reductions", full_reductions, lambda r: (f64(r, 5, 13),), 1, 65, exact_bytes=True),
    Program("int_reductions", int_reductions, lambda r: (i32(r, 6, 10, low=-9, high=9),), 3, 10),
    Program("three_d", three_d, lambda r: (f32(r, 3, 4, 5),), 4, 20),
    Program("epilogue", epilogue, lambda r: (f32(r, 6, 10), f32(r, 6)), 1, 10, exact_bytes=True),
    Program("broadcast_outputs", broadcast_outputs, lambda r: (f32(r, 4, 6), f32(r, 6), 1.5), 1, exact_bytes=True),
    Program("transposed", transposed, lambda r: (f32(r, 5, 4), f32(r, 4, 5)), 1, 5, exact_bytes=True),
    Program("two_level", two_level, lambda r: (f32(r, 6, 11),), 1, 11, exact_bytes=True),
    Program("softmax", softmax, lambda r: (f32(r, 5, 9),), 1, 9, exact_bytes=True),
    Program("zeros_and_ones", zeros_and_ones, lambda r: (f32(r, 3, 4),), 1, exact_bytes=True),
    Program("bool_logic", bool_logic, lambda r: (r.random((5, 4)) < 0.5, r.random((5, 4)) < 0.3), 2),
    Program("stencil", stencil, lambda r: (f32(r, 6, 7),), 1),
    Program("strided_slices", strided_slices, lambda r: (f32(r, 6, 5),), 1, exact_bytes=True),
    Program("views_reduced", views_reduced, lambda r: (f32(r, 4, 5),), 1, 4),
    Program("reshape_view", reshape_view, lambda r: (f32(r, 4, 6),), 1, exact_bytes=True),
    Program("reshape_copy", reshape_copy, lambda r: (f32(r, 4, 6),), 2),
    Program("joined", joined, lambda r: (f32(r, 3, 4), f32(r, 3, 4)), 2),
    Program("borders", borders, lambda r: (f32(r, 6, 7), f32(r, 6, 7)), 3),
    Program("index_arrays", index_arrays, lambda r: (f32(r, 5, 7),), 1, 7, exact_bytes=True),
    Program("jacobi_roll", jacobi_roll, lambda r: (f32(r, 6, 7),), 2),
    Program("life", life, lambda r: (r.random((6, 7)) < 0.4,), 2),
]
