"""Generated kernel modules as files on disk, for every target.

Each kernel's source is written once to `<cache dir>/kernels/<name>_<sha256 prefix>.py`: the
content hash is the file name, so a file never changes once written, Numba's `cache=True` can
key compiled code on it, and tracebacks show the generated lines. The cache directory is
NUMFUSE_CACHE_DIR, else $XDG_CACHE_HOME/numfuse, else ~/.cache/numfuse.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from pathlib import Path

from ..codegen.statements import KernelSource, source_digest


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
    """The plain Python kernel function, imported from its file. The module is registered in
    sys.modules under its name: Numba's disk cache records the module of a compiled function
    (found through sys.modules) and imports it again when it loads the entry in a later
    process; a module it cannot find makes the function "dynamic", whose cache entries fail
    to load."""
    path = write_kernel(kernel)
    name = f"numfuse_kernels.{path.stem}"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module = sys.modules.setdefault(name, module)
    return module, getattr(module, kernel.name)


