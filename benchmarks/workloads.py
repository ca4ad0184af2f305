"""Benchmark workloads: plain NumPy functions and the arrays they run on.

Each workload's `make(n_bytes, xp, rng)` builds its inputs with about `n_bytes` of input data using
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


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layer_norm(x, w, b):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * w + b


def rms_norm(x, w):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6) * w


def row_var(x):
    return x.var(axis=-1)


# The same computations in PyTorch, for torch.compile (None where there is no counterpart).
def _torch_fns():
    import torch

    return {
        "quickstart": lambda x, y: ((torch.exp(x) * y + 1.0), (torch.exp(x) * y + 1.0).sum(dim=1)),
        "chain10": None,
        "row_sum": lambda x: x.sum(dim=1),
        "softmax": lambda x: torch.softmax(x, dim=-1),
        "layer_norm": lambda x, w, b: torch.nn.functional.layer_norm(x, x.shape[-1:], w, b, 1e-5),
        "rms_norm": lambda x, w: x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + 1e-6) * w,
        "row_var": lambda x: x.var(dim=-1, unbiased=False),
    }


def torch_fn(name: str):
    """The workload's PyTorch twin, or None (no torch, or no counterpart)."""
    try:
        return _torch_fns().get(name)
    except ImportError:
        return None


@dataclass(frozen=True)
class Workload:
    name: str
    fn: Callable
    make: Callable  # (n_bytes, xp, rng) -> tuple of arrays


def _rows(n_bytes: int, width: int = 4096) -> tuple[int, int]:
    return max(1, n_bytes // (4 * width)), width


def _uniform(xp, rng, shape, low=0.0, high=1.0):
    """Random float32 data; zeros without `rng` (for plans: shapes only, nothing touched)."""
    if rng is None:
        return xp.zeros(shape, np.float32)
    return xp.asarray(rng.uniform(low, high, shape).astype(np.float32))


WORKLOADS = [
    Workload("quickstart", quickstart, lambda n, xp, rng: tuple(_uniform(xp, rng, _rows(n // 2)) for _ in range(2))),
    Workload("chain10", chain10, lambda n, xp, rng: (_uniform(xp, rng, (n // 4,)),)),
    Workload("row_sum", row_sum, lambda n, xp, rng: (_uniform(xp, rng, _rows(n)),)),
    # Normalizations over rows of 4096 float32 (16 KiB: a row fits on chip).
    Workload("softmax", softmax, lambda n, xp, rng: (_uniform(xp, rng, _rows(n), -4, 4),)),
    Workload("layer_norm", layer_norm, lambda n, xp, rng: (
        _uniform(xp, rng, _rows(n), -4, 4), _uniform(xp, rng, (4096,)), _uniform(xp, rng, (4096,)))),
    Workload("rms_norm", rms_norm, lambda n, xp, rng: (_uniform(xp, rng, _rows(n), -4, 4), _uniform(xp, rng, (4096,)))),
    Workload("row_var", row_var, lambda n, xp, rng: (_uniform(xp, rng, _rows(n), 1e3, 1e3 + 4),)),
]
