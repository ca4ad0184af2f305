"""Benchmark workloads: plain NumPy functions, the arrays they run on, and their twins.

Each workload is declared once, in WORKLOADS: its NumPy function (run by NumPy on the CPU, by
plain CuPy through NumPy's dispatch, and by numfuse), its input maker, its kind (which sets the
bandwidth target, see TARGETS) and its twins for the other implementations:

- `torch`: the same computation on PyTorch tensors, for torch.compile; SAME means the NumPy
  function itself with `np` bound to `torch` (it then uses only operators and functions that
  torch spells as NumPy does);
- `jax`: for jax.jit; SAME (the NumPy function with `np` bound to `jax.numpy`) everywhere;
- `fuse`: for cupy.fuse, where cupy.fuse can express it (one elementwise kernel, or one
  reduction with elementwise work before and after): SAME, or a NumPy-source function written
  the way cupy.fuse accepts (`np.sum(x, axis=1)`), run with `np` bound to `cupy`.

`make(n_bytes, xp, seed)` builds the inputs with about `n_bytes` of input data as arrays of the
array module `xp` (numpy or cupy); `xp=None` gives NumPy zeros, never touched (np.zeros maps
pages lazily), which is all `plan()` needs: shapes, dtypes and layout. The KDE's input is tiny
whatever its size: its `n_bytes` is that of the samples x grid matrix it never stores.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

SAME = "same"  # a twin that is the NumPy function itself, with `np` bound to the other library

# Percent of the measured device-to-device copy bandwidth each kind must reach at the large size
# (issue 5); "compute" (the KDE) is bound by arithmetic, not memory, and has no bandwidth target.
TARGETS = {"elementwise": 90, "reduction": 85, "normalization": 80, "compute": None}

ROW = 4096  # the row length of row-wise workloads: 16 KiB of float32, a row fits on chip


# -- the NumPy functions ------------------------------------------------------------------------


def chain10(x):
    """An elementwise chain of 10 operations."""
    y = x * 1.5 + 0.5
    y = np.tanh(y) - 0.25 * y
    y = np.abs(y) + np.sqrt(np.abs(x) + 1.0)
    y = np.maximum(y, 0.1) / (1.0 + x)
    return y


def black_scholes(s, k, t, r, v):
    sqrt_t = np.sqrt(t)
    d1 = (np.log(s / k) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    cdf1 = 0.5 * (1.0 + np.tanh(0.7978845608 * (d1 + 0.044715 * d1**3)))
    cdf2 = 0.5 * (1.0 + np.tanh(0.7978845608 * (d2 + 0.044715 * d2**3)))
    discount = np.exp(-r * t)
    call = s * cdf1 - k * discount * cdf2
    put = call - s + k * discount
    return call, put


def gelu(x):
    """GELU, tanh approximation."""
    return 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


# 60 coefficients of alternating sign, shrinking: Horner's rule makes 118 operations.
POLY_COEFFS = tuple((-1.0) ** k / (k + 1) for k in range(60))


def poly118(x):
    """A polynomial of degree 59 by Horner's rule: 59 multiplies and 59 adds."""
    y = POLY_COEFFS[0] * x + POLY_COEFFS[1]
    for c in POLY_COEFFS[2:]:
        y = y * x + c
    return y


def quickstart(x, y):
    """The README's example: an elementwise result and its row sums."""
    z = np.exp(x) * y + 1.0
    return z, z.sum(axis=1)


def row_sum(x):
    return x.sum(axis=1)


def col_sum(x):
    return x.sum(axis=0)


def full_sum(x):
    return x.sum()


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def log_softmax(x):
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def layer_norm(x, w, b):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * w + b


def rms_norm(x, w):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6) * w


def var(x):
    return x.var(axis=-1)


def logsumexp(x):
    m = x.max(axis=-1)
    return m + np.log(np.exp(x - m[:, None]).sum(axis=-1))


def kde(samples, grid, bandwidth):
    """Gaussian kernel-density estimate: (n, 1) samples against (m,) grid points, summed over
    the samples; the n x m matrix of differences is never stored."""
    z = (samples - grid) / bandwidth
    return np.exp(-0.5 * z * z).sum(axis=0) / (samples.shape[0] * bandwidth * math.sqrt(2 * math.pi))


def stencil(u):
    """A 2-D five-point stencil (a Jacobi step of the interior)."""
    return 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]) - u[1:-1, 1:-1]


# -- twins where the NumPy source does not run as is -----------------------------------------
# torch.compile twins use tensor methods only, so this module never imports torch.


def _torch_chain10(x):
    y = x * 1.5 + 0.5
    y = y.tanh() - 0.25 * y
    y = y.abs() + ((x.abs() + 1.0).sqrt())
    return y.clamp_min(0.1) / (1.0 + x)


def _torch_layer_norm(x, w, b):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / (var + 1e-5).sqrt() * w + b


def _torch_kde(samples, grid, bandwidth):
    z = (samples - grid) / bandwidth
    return (-0.5 * z * z).exp().sum(0) / (samples.shape[0] * bandwidth * math.sqrt(2 * math.pi))


def _fuse_row_sum(x):
    return np.sum(x, axis=1)


def _fuse_col_sum(x):
    return np.sum(x, axis=0)


def _fuse_full_sum(x):
    return np.sum(x)


# -- inputs ---------------------------------------------------------------------------------


def uniform(xp, shape, low=0.0, high=1.0, seed=0):
    """Random float32 data in [low, high) made by `xp` itself (on the GPU for CuPy); NumPy
    zeros, never touched, when xp is None."""
    if xp is None:
        return np.zeros(shape, np.float32)
    values = xp.random.default_rng(seed).random(shape, dtype=np.float32)
    return (values * np.float32(high - low) + np.float32(low)).astype(np.float32)


def _rows(n_bytes: int) -> tuple[int, int]:
    """Rows of ROW float32 from 16 rows up (256 KiB); square-ish below that (tests' tiny sizes)."""
    n = max(1, n_bytes // 4)
    width = ROW if n >= 16 * ROW else max(8, math.isqrt(n))
    return max(1, n // width), width


def _flat(n_bytes: int, parts: int = 1) -> tuple[int]:
    return (max(1, n_bytes // (4 * parts)),)


def _square(n_bytes: int) -> tuple[int, int]:
    n = max(3, math.isqrt(n_bytes // 4))
    return n, n


def _make_black_scholes(n, xp, seed):
    shape = _flat(n, 3)
    return (uniform(xp, shape, 10, 50, seed), uniform(xp, shape, 10, 50, seed + 1),
            uniform(xp, shape, 0.25, 2, seed + 2), 0.02, 0.3)


def _make_kde(n, xp, seed):
    pairs = max(1, n // 4)
    grid_points = 1024 if pairs >= 2**24 else min(256, max(8, math.isqrt(pairs)))
    samples = max(1, pairs // grid_points)
    grid = np.linspace(-4, 5, grid_points, dtype=np.float32)
    return (uniform(xp, (samples, 1), -3, 3, seed), grid if xp in (None, np) else xp.asarray(grid), 0.3)


@dataclass(frozen=True)
class Workload:
    name: str
    fn: Callable
    kind: str  # elementwise | reduction | normalization | compute: the target (TARGETS)
    make: Callable  # (n_bytes, xp, seed) -> tuple of arguments
    torch: Callable | str | None = None
    jax: Callable | str | None = SAME
    fuse: Callable | str | None = None

    @property
    def target_pct(self) -> int | None:
        return TARGETS[self.kind]


def _one(shape_of, low=0.0, high=1.0):
    return lambda n, xp, seed: (uniform(xp, shape_of(n), low, high, seed),)


def _norm_inputs(vectors: int):
    """Rows in [-4, 4) and `vectors` weight/bias rows."""

    def make(n, xp, seed):
        shape = _rows(n)
        return (uniform(xp, shape, -4, 4, seed),) + tuple(
            uniform(xp, shape[1:], 0.5, 1.5, seed + i + 1) for i in range(vectors))

    return make


WORKLOADS = [
    Workload("chain10", chain10, "elementwise", _one(_flat, -0.9, 3), torch=_torch_chain10, fuse=SAME),
    Workload("black_scholes", black_scholes, "elementwise", _make_black_scholes, torch=SAME, fuse=SAME),
    Workload("gelu", gelu, "elementwise", _one(_flat, -4, 4), torch=SAME, fuse=SAME),
    Workload("poly118", poly118, "elementwise", _one(_flat, -1, 1), torch=SAME, fuse=SAME),
    Workload("stencil", stencil, "elementwise", _one(_square), torch=SAME),
    Workload("quickstart", quickstart, "reduction",
             lambda n, xp, seed: (uniform(xp, _rows(n // 2), 0, 1, seed), uniform(xp, _rows(n // 2), 0, 1, seed + 1)),
             torch=lambda x, y: ((x.exp() * y + 1.0), (x.exp() * y + 1.0).sum(1))),
    Workload("row_sum", row_sum, "reduction", _one(_rows), torch=lambda x: x.sum(1), fuse=_fuse_row_sum),
    Workload("col_sum", col_sum, "reduction", _one(_rows), torch=lambda x: x.sum(0), fuse=_fuse_col_sum),
    Workload("full_sum", full_sum, "reduction", _one(_flat), torch=lambda x: x.sum(), fuse=_fuse_full_sum),
    Workload("var", var, "reduction", _one(_rows, 1e3, 1e3 + 4), torch=lambda x: x.var(-1, correction=0)),
    Workload("logsumexp", logsumexp, "reduction", _one(_rows, -4, 4), torch=lambda x: x.logsumexp(-1)),
    Workload("softmax", softmax, "normalization", _one(_rows, -4, 4), torch=lambda x: x.softmax(-1)),
    Workload("log_softmax", log_softmax, "normalization", _one(_rows, -4, 4), torch=lambda x: x.log_softmax(-1)),
    Workload("layer_norm", layer_norm, "normalization", _norm_inputs(2), torch=_torch_layer_norm),
    Workload("rms_norm", rms_norm, "normalization", _norm_inputs(1),
             torch=lambda x, w: x / ((x * x).mean(-1, keepdim=True) + 1e-6).sqrt() * w),
    Workload("kde", kde, "compute", _make_kde, torch=_torch_kde),
]

BY_NAME = {w.name: w for w in WORKLOADS}


def with_np(fn: Callable, module) -> Callable:
    """`fn` with its global `np` bound to `module` (torch, jax.numpy, cupy): the same source."""
    return types.FunctionType(fn.__code__, dict(fn.__globals__, np=module), fn.__name__, fn.__defaults__,
                              fn.__closure__)


def twin(workload: Workload, which: str, module) -> Callable | None:
    """The workload's `which` ("torch", "jax" or "fuse") twin, `np` bound to `module` where it
    is NumPy source; None where it has none."""
    spec = getattr(workload, which)
    if spec is None:
        return None
    if spec == SAME:
        return with_np(workload.fn, module)
    if which == "fuse":
        return with_np(spec, module)
    return spec
