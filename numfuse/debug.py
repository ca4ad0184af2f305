"""What numfuse prints to help debugging: NUMFUSE_DEBUG, NUMFUSE_DUMP, NUMFUSE_QUIET.

    NUMFUSE_DEBUG=graph,plan,code,launch,cache   (or "all")
        each stage printed to stderr as it happens: the traced graph, the plan (explain's
        text), each kernel's generated code, each launch, and the signature and kernel caches'
        hits, misses and traces again (with the reason);
    NUMFUSE_DUMP=DIR
        the same stages written as files under DIR (`<function>-<n>.<stage>.txt`), whether or
        not NUMFUSE_DEBUG is set;
    NUMFUSE_QUIET=1
        no progress line for a first call that compiles for longer than a second
        (`numfuse: compiling kernel 3/12 for f at file.py:10`, CompileProgress).

The variables are read when a stage happens, so a process can set them at any time. With
"launch" on, calls take the full path (the fast path prints nothing).
"""

from __future__ import annotations

import functools
import itertools
import os
import sys
import threading
from pathlib import Path

STAGES = ("graph", "plan", "code", "launch", "cache")

__all__ = ["STAGES", "CompileProgress", "emit", "enabled", "quiet"]

_dump_numbers = itertools.count()  # a file name's number: the files of one process in order


@functools.lru_cache(maxsize=8)
def _parse(value: str) -> frozenset[str]:
    names = {part.strip().lower() for part in value.split(",") if part.strip()}
    if "all" in names or "1" in names:
        return frozenset(STAGES)
    unknown = names - set(STAGES)
    if unknown:
        print(f"numfuse: NUMFUSE_DEBUG names unknown stage(s) {', '.join(sorted(unknown))}; the stages are "
              f"{', '.join(STAGES)} or all", file=sys.stderr)
    return frozenset(names & set(STAGES))


# os.environ's own mapping of encoded names to encoded values, where it has one: a read of
# os.environ encodes the name and decodes the value (about a microsecond, which every call
# checking `enabled` would pay); a lookup here is a dict's.
_ENVIRON_DATA = getattr(os.environ, "_data", None)
_ENCODED = {name: os.environ.encodekey(name) for name in ("NUMFUSE_DEBUG", "NUMFUSE_DUMP")} \
    if _ENVIRON_DATA is not None and hasattr(os.environ, "encodekey") else {}


def _set(name: str) -> bool:
    """Whether environment variable `name` is set to something not empty (os.environ's value)."""
    key = _ENCODED.get(name)
    if key is None:
        return bool(os.environ.get(name))
    return bool(_ENVIRON_DATA.get(key))


def enabled(stage: str) -> bool:
    """Whether `stage` is printed (NUMFUSE_DEBUG) or dumped (NUMFUSE_DUMP)."""
    if not _set("NUMFUSE_DEBUG") and not _set("NUMFUSE_DUMP"):
        return False
    return stage in _parse(os.environ.get("NUMFUSE_DEBUG", "")) or bool(os.environ.get("NUMFUSE_DUMP"))


def emit(stage: str, function: str, text: str) -> None:
    """Print `text` for `stage` of `function` to stderr (NUMFUSE_DEBUG), and write it to a file
    under NUMFUSE_DUMP."""
    if stage in _parse(os.environ.get("NUMFUSE_DEBUG", "")):
        lines = text.rstrip("\n").splitlines() or [""]
        if len(lines) == 1:
            print(f"numfuse[{stage}] {function}: {lines[0]}", file=sys.stderr)
        else:
            print(f"numfuse[{stage}] {function}:", file=sys.stderr)
            for line in lines:
                print(f"    {line}", file=sys.stderr)
    folder = os.environ.get("NUMFUSE_DUMP")
    if folder:
        path = Path(folder)
        path.mkdir(parents=True, exist_ok=True)
        safe = "".join(c if c.isalnum() or c in "_-" else "_" for c in function)[:60]
        (path / f"{safe}-{next(_dump_numbers):04d}.{stage}.txt").write_text(text if text.endswith("\n") else text + "\n")


def quiet() -> bool:
    return os.environ.get("NUMFUSE_QUIET", "") not in ("", "0")


class CompileProgress:
    """Around a call that compiles kernels: if it is still compiling after `after` seconds,
    one line on stderr says which kernel of how many, for which function, unless NUMFUSE_QUIET."""

    def __init__(self, label: str, total: int, after: float = 1.0):
        self.label = label
        self.total = total
        self.after = after
        self.current = 0
        self.workers = 0  # kernels compiled ahead in this many worker processes (0: none)
        self.printed = False
        self._timer: threading.Timer | None = None

    def kernel(self, index: int) -> None:
        """Kernel `index` (from 0) is compiled now."""
        self.current = index + 1

    def ahead(self, kernels: int, workers: int) -> None:
        """`kernels` are compiled now in `workers` processes at once."""
        self.current, self.workers = kernels, workers

    def _report(self) -> None:
        if self.current and self.workers:
            self.printed = True
            print(f"numfuse: compiling {self.current} of {self.total} kernels in {self.workers} processes for "
                  f"{self.label}", file=sys.stderr)
        elif self.current:
            self.printed = True
            print(f"numfuse: compiling kernel {self.current}/{self.total} for {self.label}", file=sys.stderr)

    def __enter__(self) -> "CompileProgress":
        if not quiet():
            self._timer = threading.Timer(self.after, self._report)
            self._timer.daemon = True
            self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._timer is not None:
            self._timer.cancel()
