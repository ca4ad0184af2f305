"""Generated kernel modules on disk, and their compiled dispatchers.

Each kernel's source is written once to `<cache dir>/kernels/<name>_<sha256 prefix>.py`: the
content hash is the file name, so a file never changes once written, Numba's `cache=True` can
key compiled code on it, and tracebacks show the generated lines. The cache directory is
NUMFUSE_CACHE_DIR, else $XDG_CACHE_HOME/numfuse, else ~/.cache/numfuse.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import tempfile
from pathlib import Path

from ..codegen.cuda import KernelSource, source_digest
from . import simmath
from .device import backend

# code hash -> Numba dispatcher; compiled kernels are shared by every jitted function.
_dispatchers: dict[str, object] = {}


def cache_dir() -> Path:
    explicit = os.environ.get("NUMFUSE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "numfuse"


def _kernel_dir() -> Path:
    for candidate in (cache_dir() / "kernels", Path(tempfile.gettempdir()) / f"numfuse-{os.getuid()}" / "kernels"):
        try:
            candidate.mkdir(parents=True, exist_ok=True)
            return candidate
        except OSError:
            continue
    raise OSError("numfuse found no writable directory for generated kernels; set NUMFUSE_CACHE_DIR")


def kernel_path(kernel: KernelSource) -> Path:
    return _kernel_dir() / f"{kernel.name}_{source_digest(kernel.source)}.py"


def write_kernel(kernel: KernelSource) -> Path:
    """The kernel's file, written atomically if it is not there yet (safe across processes)."""
    path = kernel_path(kernel)
    if path.exists() and path.read_text() == kernel.source:
        return path
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(kernel.source)
    os.replace(tmp, path)
    return path


def load_function(kernel: KernelSource):
    """The plain Python kernel function, imported from its file."""
    path = write_kernel(kernel)
    spec = importlib.util.spec_from_file_location(f"numfuse_kernels.{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, getattr(module, kernel.name)


def dispatcher(kernel: KernelSource):
    """The compiled kernel, from this process's cache or compiled now (lazily, at first launch)."""
    digest = kernel.code_digest  # the code without its header (codegen/cuda.py)
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
