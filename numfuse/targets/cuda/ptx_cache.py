"""numfuse's disk cache of PTX: every kernel compiled once per code, argument types, target
and compiler, across processes.

An entry is `<cache dir>/ptx/<kernel name>_<key>.ptx`. The key hashes what the PTX depends
on: the kernel's code (its header comment aside), the Numba argument types, the compute
capability, and the versions of numba-cuda, NVVM's wheel and numfuse. The file starts with a
line holding the SHA-256 of the rest; an entry whose text does not match it (a truncated
write, a disk error, an edit) is compiled again and replaced. Entries are written to a
temporary file and renamed into place, so processes compiling the same kernel at once each
write a whole entry and readers never see half of one.

This is what `JitFunction.compile` fills on a machine without a GPU (and what a compile-only
process, a CI job, warms). On a GPU the kernels are compiled and loaded through Numba, whose
own disk cache keeps the linked code beside the kernel files (kernel_cache.py).
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from pathlib import Path

from .codegen import KernelSource
from .codegen import kernel_code
from .kernel_cache import cache_dir, load_function
from ...runtime.kernel_files import private_dir

_HEADER = "// numfuse ptx sha256 "


@functools.lru_cache(maxsize=None)
def _versions() -> str:
    from importlib import metadata

    from ...version import __version__

    parts = [f"numfuse {__version__}"]
    for dist in ("numba", "numba-cuda", "nvidia-cuda-nvcc-cu12", "nvidia-cuda-nvcc"):
        try:
            parts.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            continue
    return ", ".join(parts)


def entry_path(kernel: KernelSource, argtypes: tuple, cc: tuple[int, int]) -> Path:
    key = hashlib.sha256("\n".join([kernel_code(kernel.source), repr(argtypes), repr(tuple(cc)), _versions()]).encode())
    return cache_dir() / "ptx" / f"{kernel.name}_{key.hexdigest()[:24]}.ptx"


def _read(path: Path) -> str | None:
    """The PTX of a sound entry, else None."""
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError):
        return None
    first, _, body = text.partition("\n")
    if not first.startswith(_HEADER) or first[len(_HEADER):] != hashlib.sha256(body.encode()).hexdigest():
        return None
    return body


def _write(path: Path, ptx: str) -> None:
    private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(f"{_HEADER}{hashlib.sha256(ptx.encode()).hexdigest()}\n{ptx}")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def ptx_for(kernel: KernelSource, argtypes: tuple, cc: tuple[int, int] = (9, 0)) -> tuple[str, bool]:
    """(the kernel's PTX for `argtypes` and `cc`, whether it came from the disk cache)."""
    path = entry_path(kernel, argtypes, cc)
    cached = _read(path)
    if cached is not None:
        return cached, True
    from numba import cuda

    _, fn = load_function(kernel)
    ptx, _ = cuda.compile_ptx(fn, argtypes, cc=tuple(cc))
    try:
        _write(path, ptx)
    except OSError:
        pass  # a read-only cache: compile again next time
    return ptx, False
