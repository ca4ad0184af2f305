"""Compiled CUDA kernels: each kernel module's file (kernel_files.py) compiled by Numba once
per process and kept by its code's digest, and Numba's disk cache entries for it."""

from __future__ import annotations

import contextlib
from pathlib import Path

from ...codegen.statements import KernelSource
from . import simmath
from .device import backend
from ...runtime.kernel_files import cache_dir, kernel_path, load_function, write_kernel

__all__ = ["cache_dir", "compile_for", "dispatcher", "kernel_path", "load_function", "numba_cache_files", "write_kernel"]

# code hash -> Numba dispatcher; compiled kernels are shared by every jitted function.
_dispatchers: dict[str, object] = {}


def dispatcher(kernel: KernelSource):
    """The compiled kernel, from this process's cache or compiled now (lazily, at first launch)."""
    digest = kernel.code_digest  # the code without its header (targets/cuda/codegen.py)
    found = _dispatchers.get(digest)
    if found is not None:
        return found
    be = backend()
    module, fn = load_function(kernel)
    if be.simulated:
        module.math = simmath  # see simmath.py: the simulator then computes as a GPU does
        compiled = be.cuda.jit(fn)
    else:
        compiled = be.cuda.jit(fn, cache=True)
    _dispatchers[digest] = compiled
    return compiled


def numba_cache_files(kernel: KernelSource) -> list[Path]:
    """Numba's disk cache entries (index and compiled code) for a kernel's file."""
    path = kernel_path(kernel)
    return sorted((path.parent / "__pycache__").glob(f"{path.stem}.*"))


def compile_for(kernel: KernelSource, argtypes: tuple):
    """The kernel compiled for `argtypes` on the current GPU (a Numba `_Kernel`), from Numba's
    disk cache when an entry is there. An entry that cannot be read (a truncated file, a
    pickle of another version) is deleted and the kernel compiled again: a bad cache never
    stops a call."""
    compiled = dispatcher(kernel)
    try:
        return compiled.compile(argtypes)
    except Exception:
        stale = numba_cache_files(kernel)
        if not stale:
            raise
    for path in stale:
        with contextlib.suppress(OSError):
            path.unlink()
    _dispatchers.pop(kernel.code_digest, None)
    return dispatcher(kernel).compile(argtypes)
