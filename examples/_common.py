"""Shared by the examples: problem sizes that suit the machine, and a timer.

On a GPU the examples use large arrays and time the calls; on Numba's CUDA simulator (no GPU,
or NUMBA_ENABLE_CUDASIM=1) they use small arrays, since every simulated thread is a Python
thread, and only check the results.
"""

from __future__ import annotations

import time

from numfuse.runtime.device import backend


def on_gpu() -> bool:
    return not backend().simulated


def size(gpu: int, simulator: int) -> int:
    return gpu if on_gpu() else simulator


def best_time(fn, *args, repeats: int = 10) -> float:
    """Seconds of the fastest of `repeats` calls (after a warm-up), synchronized."""
    cuda = backend().cuda
    fn(*args)
    cuda.synchronize()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return best
