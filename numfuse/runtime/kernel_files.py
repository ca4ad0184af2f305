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
import threading
from pathlib import Path

from ..codegen.statements import KernelSource, source_digest
from .. import debug
from ..errors import CacheSecurityError


def cache_dir() -> Path:
    explicit = os.environ.get("NUMFUSE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "numfuse"


def private_dir(path: Path) -> Path:
    """`path`, created private to this user (mode 0700) where it is missing, and checked: it
    holds Python files that numfuse imports, so a folder another user owns or can write is a
    way in, and numfuse refuses it (CacheSecurityError, which says why)."""
    if not path.exists():
        for folder in reversed([path, *path.parents]):
            if not folder.exists():
                try:
                    folder.mkdir(mode=0o700)
                except FileExistsError:
                    pass
    check_private(path)
    return path


def check_private(path: Path) -> None:
    """Refuse a cache folder or file that another user owns or that others can write."""
    info = path.stat()
    uid = os.getuid()
    kind = "folder" if path.is_dir() else "file"
    if info.st_uid != uid:
        raise CacheSecurityError(
            f"numfuse will not load kernels from the cache {kind} {path}: it is owned by user id "
            f"{info.st_uid}, not by you ({uid}); its Python files would run as you. Set NUMFUSE_CACHE_DIR "
            "to a folder of your own")
    if info.st_mode & 0o022:
        raise CacheSecurityError(
            f"numfuse will not load kernels from the cache {kind} {path}: other users can write it (mode "
            f"{info.st_mode & 0o777:o}), and its Python files would run as you. Make it private "
            f"(chmod 700 {path}) or set NUMFUSE_CACHE_DIR to a folder of your own")


def _kernel_dir() -> Path:
    candidates = [cache_dir() / "kernels"]
    if not os.environ.get("NUMFUSE_CACHE_DIR"):
        candidates.append(Path(tempfile.gettempdir()) / f"numfuse-{os.getuid()}" / "kernels")
    for candidate in candidates:
        try:
            private_dir(candidate.parent)
            return private_dir(candidate)
        except CacheSecurityError:
            raise
        except OSError:
            continue
    raise OSError("numfuse found no writable directory for generated kernels; set NUMFUSE_CACHE_DIR")


def kernel_path(kernel: KernelSource) -> Path:
    return _kernel_dir() / f"{kernel.name}_{source_digest(kernel.source)}.py"


def write_kernel(kernel: KernelSource) -> Path:
    """The kernel's file, written atomically if it is not there yet (safe across processes)."""
    path = kernel_path(kernel)
    if path.exists():
        check_private(path)
        try:
            if path.read_text() == kernel.source:
                return path
        except (OSError, UnicodeDecodeError):
            pass  # truncated or corrupted: written again
        if debug.enabled("cache"):
            debug.emit("cache", kernel.name, f"{path} differs from the kernel's source (truncated or corrupted): "
                                             "written again")
    elif debug.enabled("cache"):
        debug.emit("cache", kernel.name, f"new kernel file {path}")
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
    with LOADING:
        module = import_kernel_file(write_kernel(kernel))
    return module, getattr(module, kernel.name)


def import_kernel_file(path: Path):
    """The module of a kernel file, imported under the name every process gives it (Numba's
    disk cache keys compiled code on it: a worker process compiling ahead, targets/cpu/
    parallel_compile.py, and the caller then share entries)."""
    name = f"numfuse_kernels.{path.stem}"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module = sys.modules.setdefault(name, module)
    return module


# Kernel modules are imported one at a time: threads that call jitted functions for the first
# time at once import numba's modules at once, and one can see another's half-initialized one.
LOADING = threading.RLock()


