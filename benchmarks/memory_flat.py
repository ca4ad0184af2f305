"""No leaks: 100,000 cached calls leave host (and device) memory flat.

    python -m benchmarks.memory_flat [--calls N] [--target cpu|cuda] [--out FILE.md]

Each of three functions (one kernel; a reduction with its consumer; one that writes its
argument and reads a global array) is called `calls` times with the same signature after a
warm-up of 10,000 calls. The host's resident memory (from /proc/self/statm) and, on a GPU, the
device's used memory (cudaMemGetInfo, and CuPy's pool) are read after the warm-up and at the end;
their growth per 10,000 calls is the result. Python's allocator keeps freed blocks, so a few
hundred KiB of noise is expected; a leak of one small array per call would be 10,000 x its size.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys

import numpy as np

import numfuse

TABLE = np.linspace(0.0, 1.0, 256)
# Calls before the first reading: the allocator's arenas and Numba's thread pool settle.
WARM_UP = 10_000


def fma(x, y):
    return x * y + 1.0


def centered(x):
    return x - x.mean(axis=1, keepdims=True)


def update(x, y):
    x += y * TABLE[: x.shape[-1]]
    return x.sum()


def resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def device_used_bytes():
    try:
        from numba import cuda

        if not cuda.is_available():
            return None
        free, total = cuda.current_context().get_memory_info()
        return total - free
    except Exception:
        return None


def measure(fn, args_of, calls: int, target: str) -> dict:
    jitted = numfuse.jit(fn, target=target)
    args = args_of()
    for _ in range(WARM_UP):
        jitted(*args)
    # The device reading first (on the CPU target it is None): importing numba.cuda for it
    # takes tens of MiB of host memory, which is no growth of the calls.
    read_device = device_used_bytes if target == "cuda" else (lambda: None)
    gc.collect()
    dev0 = read_device()
    host0 = resident_bytes()
    for _ in range(calls):
        jitted(*args)
    gc.collect()
    host1 = resident_bytes()
    dev1 = read_device()
    return {"host": (host1 - host0) / calls * 10_000,
            "device": None if dev0 is None else (dev1 - dev0) / calls * 10_000}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory_flat")
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--target", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    if args.target == "cuda":
        try:
            import cupy as xp
        except ImportError:
            print("benchmarks.memory_flat: --target cuda needs CuPy and a GPU", file=sys.stderr)
            return 2
    else:
        xp = np
    cases = [
        ("x * y + 1.0, f32[256]", fma, lambda: (xp.ones(256, np.float32), xp.ones(256, np.float32))),
        ("x - x.mean(axis=1, keepdims=True), f64[32,64]", centered, lambda: (xp.ones((32, 64)),)),
        ("x += y * TABLE[:n] (a global); x.sum(), f64[64]", update, lambda: (np.zeros(64), np.ones(64))
         if xp is np else (xp.zeros(64), xp.ones(64))),
    ]
    lines = [f"# Memory over {args.calls} cached calls (target {args.target})", "",
             f"Command: `python -m benchmarks.memory_flat --calls {args.calls} --target {args.target}`", "",
             "| function | host growth per 10,000 calls | device growth per 10,000 calls |", "|---|---|---|"]
    for name, fn, make in cases:
        result = measure(fn, make, args.calls, args.target)
        device = "n/a" if result["device"] is None else f"{result['device'] / 1024:.1f} KiB"
        lines.append(f"| `{name}` | {result['host'] / 1024:.1f} KiB | {device} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
