"""Benchmark workloads: plain NumPy functions and the arrays they run on.

Each workload's `make(n_bytes, xp)` builds its inputs with about `n_bytes` of input data using
the array module `xp` (numpy or cupy), so the same function runs on NumPy, on CuPy (through
NumPy's dispatch to CuPy) and through numfuse.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


def quickstart(x, y):
    z = np.exp(x) * y + 1.0
    return z, z.sum(axis=1)


def chain10(x):
    """An elementwise chain of 10 operations."""
    y = x * 1.5 + 0.5
    y = np.tanh(y) - 0.25 * y
    y = np.abs(y) + np.sqrt(np.abs(x) + 1.0)
    y = np.maximum(y, 0.1) / (1.0 + x)
    return y


def row_sum(x):
    return x.sum(axis=1)


@dataclass(frozen=True)
class Workload:
    name: str
    fn: Callable
    make: Callable  # (n_bytes, xp, rng) -> tuple of arrays


def _rows(n_bytes: int, width: int = 4096) -> tuple[int, int]:
    return max(1, n_bytes // (4 * width)), width


def _uniform(xp, rng, shape, low=0.0, high=1.0):
    return xp.asarray(rng.uniform(low, high, shape).astype(np.float32))


WORKLOADS = [
    Workload("quickstart", quickstart, lambda n, xp, rng: tuple(_uniform(xp, rng, _rows(n // 2)) for _ in range(2))),
    Workload("chain10", chain10, lambda n, xp, rng: (_uniform(xp, rng, (n // 4,)),)),
    Workload("row_sum", row_sum, lambda n, xp, rng: (_uniform(xp, rng, _rows(n)),)),
]
