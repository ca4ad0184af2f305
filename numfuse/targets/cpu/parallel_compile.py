"""A first call's kernels compiled in worker processes at once, into Numba's disk cache.

A first call on the CPU target spends most of its time in Numba and LLVM: one to twenty seconds
a kernel, one kernel after another, under Numba's process-wide compiler lock (npbench's resnet
block: 33 codes, about 40 s on one core). The codes are independent, so where two or more are
not in Numba's disk cache yet and the machine has cores to spare, they are shared among worker
processes (fresh interpreters, `python -m` this module) that import each kernel's file and
compile it for the call's argument types, which writes the disk cache (`cache=True`). The
caller then loads each from the cache, as any later process would. Whatever a worker could not
do (an error, a kernel it could not load) the caller compiles itself, as without workers, and
reports any error then.

NUMFUSE_COMPILE_WORKERS sets the number of worker processes (0: compile in the caller only);
the default is the machine's cores, up to 8. Jobs are dealt largest first (by source size), so
that the longest compiles start at once.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

MAX_WORKERS = 8
WORKER_TIMEOUT = 900  # seconds a worker may take for its share
# Uncached kernels below this many source characters in all are compiled in the caller: a
# worker's start (an interpreter, numba's import) costs about a second.
MIN_SOURCE = 40_000


def workers() -> int:
    """How many worker processes compile a first call's kernels (NUMFUSE_COMPILE_WORKERS)."""
    setting = os.environ.get("NUMFUSE_COMPILE_WORKERS", "").strip()
    if setting:
        try:
            return max(0, int(setting))
        except ValueError:
            return 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return min(cores, MAX_WORKERS) if cores > 1 else 0


def cached(dispatcher, signature) -> bool:
    """Whether Numba's disk cache holds `dispatcher` compiled for `signature` (its index only:
    loading the entry is left to the call). Unknown (Numba's internals moved): False."""
    try:
        cache = dispatcher._cache
        key = cache._index_key(signature, dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:  # noqa: BLE001 - a worker compiles it again: slower, never wrong
        return False


def compile_ahead(jobs: list[tuple[str, str, tuple, int]]) -> int:
    """Compile `jobs` ((kernel file, function name, Numba signature, source size), each not in
    the disk cache) in worker processes; how many workers ran (0: the caller compiles them).
    Each worker is `python -m` this module, given its jobs pickled on stdin: not
    multiprocessing, whose fresh interpreters run the caller's script again as they start."""
    count = min(workers(), len(jobs))
    if count < 2 or sum(job[3] for job in jobs) < MIN_SOURCE:
        return 0
    shares: list[list] = [[] for _ in range(count)]
    for k, (path, name, signature, _) in enumerate(sorted(jobs, key=lambda job: -job[3])):
        shares[k % count].append((path, name, signature))  # the largest first, one to each
    env = dict(os.environ, NUMFUSE_COMPILE_WORKERS="0")
    package_parent = str(Path(__file__).resolve().parents[3])  # (where `import numfuse` finds it)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_parent, env.get("PYTHONPATH")]))
    try:
        processes = [subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
                     for _ in shares]
        for process, share in zip(processes, shares):
            process.stdin.write(pickle.dumps(share))
            process.stdin.close()
        for process in processes:
            try:
                process.wait(timeout=WORKER_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()  # (what it did not compile, the caller does)
    except Exception:  # noqa: BLE001 - no worker here (a sandbox, an embedded interpreter): the caller compiles
        return 0
    return count


def _compile_share(share) -> None:
    from ...runtime.kernel_files import import_kernel_file

    for path, name, signature in share:
        try:
            getattr(import_kernel_file(Path(path)), name).compile(signature)
        except Exception:  # noqa: BLE001 - the caller compiles it again, and reports what fails
            pass


if __name__ == "__main__":
    _compile_share(pickle.loads(sys.stdin.buffer.read()))
