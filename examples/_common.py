"""Shared by the examples: where numfuse runs, problem sizes that suit it, and a timer.

numfuse runs on a GPU where one is found, else on the CPU's cores (numfuse.jit's target "auto";
NUMFUSE_TARGET overrides it). With NUMFUSE_TARGET=cuda and no GPU it runs on Numba's CUDA
simulator, where every simulated thread is a Python thread: the examples then use small arrays
and only check the results.
"""

from __future__ import annotations

import time

from numfuse import targets


def where() -> str:
    """"gpu", "cpu" or "simulator": what numfuse.jit's default target runs on here."""
    target = targets.choose(targets.requested(None), device_arguments=False)
    if target.name == "cpu":
        return "cpu"
    from numfuse.targets.cuda.device import backend

    return "simulator" if backend().simulated else "gpu"


def on_gpu() -> bool:
    return where() == "gpu"


def size(gpu: int, simulator: int, cpu: int | None = None) -> int:
    """The problem size for where numfuse runs (the CPU's: `cpu`, else the GPU's)."""
    place = where()
    if place == "simulator":
        return simulator
    return gpu if place == "gpu" or cpu is None else cpu


def best_time(fn, *args, repeats: int = 10) -> float:
    """Seconds of the fastest of `repeats` calls (after a warm-up), synchronized on a GPU."""
    if on_gpu():
        from numfuse.targets.cuda.device import backend

        synchronize = backend().cuda.synchronize
    else:
        def synchronize():
            return None
    fn(*args)
    synchronize()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        synchronize()
        best = min(best, time.perf_counter() - start)
    return best
