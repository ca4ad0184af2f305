"""Normalization patterns of issue 3 that every tier uses: softmax, log_softmax, logsumexp, layer
norm, RMS norm, standardization and L2 normalization, each written as NumPy users write it, over
any axis. The trace tier checks they plan as one persistent kernel, the compile tier compiles
them, the run tier runs them against NumPy."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def logsumexp(x, axis=-1):
    return np.log(np.exp(x - x.max(axis=axis, keepdims=True)).sum(axis=axis)) + x.max(axis=axis)


def layer_norm(x, weight, bias, axis=-1):
    mean = x.mean(axis=axis, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axis, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * weight + bias


def rms_norm(x, weight, axis=-1):
    return x / np.sqrt((x * x).mean(axis=axis, keepdims=True) + 1e-6) * weight


def standardize(x, axis=-1):
    return (x - x.mean(axis=axis, keepdims=True)) / x.std(axis=axis, keepdims=True)


def l2_normalize(x, axis=-1):
    return x / np.sqrt((x * x).sum(axis=axis, keepdims=True))


@dataclass(frozen=True)
class Pattern:
    name: str
    fn: Callable  # fn(x, *params, axis=...)
    params: int  # how many per-position parameters (weight, bias) follow x
    # The combines of each phase's accumulators, in order; a last [] is the pass that stores.
    phases: tuple[tuple[str, ...], ...]
    # The same when a float32 or float64 row does not fit on chip, each phase's combines sorted:
    # a sum of exp(x - max) then runs in the max's pass (the online softmax).
    long_phases: tuple[tuple[str, ...], ...] = ()

    @property
    def phases_when_long(self) -> tuple[tuple[str, ...], ...]:
        return self.long_phases or tuple(tuple(sorted(p)) for p in self.phases)

    def args(self, x: np.ndarray, axis) -> tuple:
        """x and its parameters, shaped like x along the reduced axes and broadcast along the
        others (a 1-D weight for the last axis, as layer norm's users pass it)."""
        if axis is None:
            axes = set(range(x.ndim))
        else:
            axes = {a % x.ndim for a in ((axis,) if isinstance(axis, int) else axis)}
        shape = [s if a in axes else 1 for a, s in enumerate(x.shape)]
        while len(shape) > 1 and shape[0] == 1:
            shape.pop(0)
        n = int(np.prod(shape))
        weight = np.linspace(0.5, 1.5, n).reshape(shape).astype(x.dtype)
        bias = np.linspace(-1.0, 1.0, n).reshape(shape).astype(x.dtype)
        return (x, weight, bias)[: 1 + self.params]

    def at(self, axis):
        """The pattern over `axis`, as a function of arrays only (jit sees no axis argument)."""
        fn = self.fn

        def normalized(*arrays):
            return fn(*arrays, axis=axis)

        normalized.__name__ = self.name
        return normalized


PATTERNS = [
    Pattern("softmax", softmax, 0, (("maximum",), ("add",), ()), (("maximum", "online_sum"), ())),
    Pattern("log_softmax", log_softmax, 0, (("maximum",), ("add",), ()), (("maximum", "online_sum"), ())),
    Pattern("logsumexp", logsumexp, 0, (("maximum", "maximum"), ("add",)), (("maximum", "maximum", "online_sum"),)),
    Pattern("layer_norm", layer_norm, 2, (("add",), ("add",), ())),
    Pattern("rms_norm", rms_norm, 1, (("add",), ())),
    Pattern("standardize", standardize, 0, (("add",), ("add",), ())),
    Pattern("l2_normalize", l2_normalize, 0, (("add",), ())),
]

BY_NAME = {p.name: p for p in PATTERNS}
