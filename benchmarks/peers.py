"""The implementations run side by side on the GPU: numfuse, plain CuPy, cupy.fuse,
torch.compile and jax.jit (NumPy on the CPU is timed in suite.py).

Each implementation turns a workload and its CuPy inputs into a zero-argument callable that
makes one call, with the inputs already in its own library's arrays (PyTorch and JAX read CuPy's
memory through DLPack). Every library allocates its outputs on the device; nothing is copied to
the host inside a timed call. `to_cupy` views an output as a CuPy array for the comparison with
the reference.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable

from benchmarks.workloads import Workload, twin

# JAX takes 75% of the GPU's memory at its first array unless told not to.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


class Peer:
    key = ""  # in the JSON rows
    label = ""  # in the tables
    timer = "events"  # "events": CUDA events on the stream; "wall": host clock (JAX)

    def __init__(self, cp):
        self.cp = cp

    def missing(self) -> str | None:
        """Why this implementation cannot run here, or None."""
        return None

    def prepare(self, workload: Workload, args: tuple) -> Callable | None:
        """One call of the workload on `args` (CuPy arrays and Python scalars); None where the
        implementation has no twin of it."""
        raise NotImplementedError

    def events(self):
        """(start, end, elapsed_ms): CUDA events on the stream this library launches on (CuPy's
        current stream, which numfuse uses for CuPy arguments too)."""
        cp = self.cp
        return cp.cuda.Event(), cp.cuda.Event(), cp.cuda.get_elapsed_time

    def to_cupy(self, value):
        return self.cp.asarray(value)


class Numfuse(Peer):
    key, label = "numfuse", "numfuse"

    def prepare(self, workload, args):
        import numfuse

        fn = numfuse.jit(workload.fn, target="cuda")
        return lambda: fn(*args)


class CuPy(Peer):
    key, label = "cupy", "CuPy"

    def prepare(self, workload, args):
        # The NumPy function itself: NumPy hands np.exp(x) on a CuPy array to CuPy.
        return lambda: workload.fn(*args)


class CupyFuse(Peer):
    key, label = "cupy_fuse", "cupy.fuse"

    def prepare(self, workload, args):
        fn = twin(workload, "fuse", self.cp)
        if fn is None:
            return None
        fused = self.cp.fuse(fn)
        # cupy.fuse types a Python float as a float64 scalar (not weakly, as NumPy 2 does), so
        # Black-Scholes' r and v would make it compute and return float64: 0-d float32 arrays.
        args = [self.cp.asarray(a, dtype=self.cp.float32) if isinstance(a, float) else a for a in args]
        return lambda: fused(*args)


class TorchCompile(Peer):
    key, label = "torch_compile", "torch.compile"

    def missing(self):
        if importlib.util.find_spec("torch") is None:
            return "PyTorch is not installed"
        import torch

        if not torch.cuda.is_available():
            return "PyTorch has no CUDA device"
        return None

    def prepare(self, workload, args):
        import torch

        fn = twin(workload, "torch", torch)
        if fn is None:
            return None
        compiled = torch.compile(fn, dynamic=False)  # one specialization per size, as numfuse
        targs = [torch.from_dlpack(a) if isinstance(a, self.cp.ndarray) else a for a in args]
        return lambda: compiled(*targs)

    def events(self):
        import torch

        def elapsed(start, end):
            return start.elapsed_time(end)

        return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True), elapsed

    def to_cupy(self, value):
        return self.cp.from_dlpack(value.contiguous())


class JaxJit(Peer):
    key, label = "jax_jit", "jax.jit"
    timer = "wall"

    def missing(self):
        if importlib.util.find_spec("jax") is None:
            return "JAX is not installed"
        # JAX starts its GPU backend in a child process first: in this process PyTorch has
        # loaded its own CUDA libraries, and a JAX that cannot live beside them may crash the
        # process rather than raise.
        probe = "import jax; print(any(d.platform == 'gpu' for d in jax.devices()))"
        try:
            out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return "JAX took over 120 s to start"
        if out.returncode != 0:
            return "JAX failed to start: " + (out.stderr.strip().splitlines() or ["?"])[-1][:200]
        if out.stdout.strip().splitlines()[-1:] != ["True"]:
            return "JAX has no GPU device"
        import jax

        if not any(d.platform == "gpu" for d in jax.devices()):
            return "JAX has no GPU device"
        return None

    def prepare(self, workload, args):
        import jax
        import jax.numpy as jnp

        fn = twin(workload, "jax", jnp)
        if fn is None:
            return None
        compiled = jax.jit(fn)
        jargs = [self._to_jax(a) for a in args]
        return lambda: jax.block_until_ready(compiled(*jargs))

    def _to_jax(self, value):
        import jax
        import jax.numpy as jnp

        if not isinstance(value, self.cp.ndarray):
            return value
        try:
            return jax.dlpack.from_dlpack(value)
        except Exception:  # noqa: BLE001  (an older JAX, or a layout DLPack refuses: copy)
            return jnp.asarray(self.cp.asnumpy(value))

    def to_cupy(self, value):
        try:
            return self.cp.from_dlpack(value)
        except Exception:  # noqa: BLE001
            import numpy as np

            return self.cp.asarray(np.asarray(value))


# In the order the tables show them and the suite runs them (after numfuse and CuPy, the peer
# numfuse's targets name first).
PEERS = (Numfuse, CuPy, TorchCompile, JaxJit, CupyFuse)
LABELS = {"numfuse": "numfuse", "numpy": "NumPy (CPU)", **{p.key: p.label for p in PEERS}}
COLUMNS = ("numfuse", "numpy", "cupy", "cupy_fuse", "torch_compile", "jax_jit")


def flatten(result) -> list:
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _dtype_name(array) -> str:
    """'float32' for a CuPy or NumPy array, a torch tensor or a JAX array alike."""
    return str(getattr(array, "dtype", type(array).__name__)).removeprefix("torch.")


def max_rel_diff(cp, got: list, expected: list) -> float:
    """max |got - expected| / max |expected| over all outputs, in float64 on the device."""
    if len(got) != len(expected):
        raise ValueError(f"{len(got)} outputs, expected {len(expected)}")
    worst = 0.0
    for g, e in zip(got, expected):
        if _dtype_name(g) != _dtype_name(e):  # a float64 result moves twice the bytes
            raise ValueError(f"dtype {_dtype_name(g)}, expected {_dtype_name(e)}")
        g = cp.asarray(g, dtype=cp.float64)
        e = cp.asarray(e, dtype=cp.float64)
        if g.shape != e.shape:
            raise ValueError(f"shape {g.shape}, expected {e.shape}")
        if not e.size:
            continue
        if bool(cp.any(cp.isnan(g) != cp.isnan(e))):
            return float("inf")  # a NaN where the reference has none, or the other way round
        diff = cp.where(cp.isnan(e), 0.0, cp.abs(g - e))
        scale = max(float(cp.nanmax(cp.abs(e))), 1e-30)
        worst = max(worst, float(diff.max()) / scale)
    return worst
