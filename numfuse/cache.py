"""numfuse's disk cache: where it is, what it holds, and clearing it.

    python -m numfuse.cache            # where it is and what it holds
    python -m numfuse.cache clear      # delete everything in it

The cache directory is $NUMFUSE_CACHE_DIR, else $XDG_CACHE_HOME/numfuse, else
~/.cache/numfuse. It holds `kernels/` (each generated kernel's source, named by its content
hash, and under `kernels/__pycache__` Numba's compiled code for it on a GPU) and `ptx/`
(numfuse's PTX cache, targets/cuda/ptx_cache.py). Everything in it can be deleted at any time:
what is missing is generated and compiled again.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

PARTS = {"kernels": "kernel sources", "kernels/__pycache__": "Numba's compiled kernels", "ptx": "PTX"}


def location() -> Path:
    from .targets.cuda.kernel_cache import cache_dir

    return cache_dir()


def info() -> dict[str, tuple[int, int]]:
    """For each part of the cache: (files, bytes)."""
    root = location()
    result = {}
    for part in PARTS:
        files = [p for p in (root / part).glob("*") if p.is_file()]
        result[part] = (len(files), sum(p.stat().st_size for p in files))
    return result


def clear() -> int:
    """Delete every entry; returns how many files there were. Processes running meanwhile
    compile again what they miss."""
    root = location()
    count = 0
    for part in ("kernels", "ptx"):
        directory = root / part
        if directory.exists():
            count += sum(1 for p in directory.rglob("*") if p.is_file())
            shutil.rmtree(directory, ignore_errors=True)
    return count


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["clear"]:
        print(f"numfuse cache {location()}: removed {clear()} files")
        return 0
    if argv:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    print(f"numfuse cache: {location()}")
    for part, (files, size) in info().items():
        print(f"  {part + '/':<22} {files:6d} files {size / 1e6:10.2f} MB  ({PARTS[part]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
