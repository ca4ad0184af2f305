"""First-call compile time of CPU kernels heavy in vector-math functions (exp, tanh, log, sin,
cos), the part of a first call that grows fastest with a kernel's code.

    python -m benchmarks.compile_time [--counts 4,16,32] [--out FILE.md]

Each kernel is one pointwise loop applying a chain of `count` transcendental functions to a
float64 array of 100,000 points (and a float32 one); each is jitted in a fresh process with an
empty numfuse cache (NUMFUSE_CACHE_DIR in a temporary folder, Numba's cache beside the kernel
files), so the first call times tracing, planning, rendering and Numba compiling it. The plan's
time on the next calls is printed beside it: what the code compiled to runs at the same speed.
Compare commits by running this at each, on the same machine, side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile

from .suite import RESULTS

_CHILD = r"""
import json, sys, time
import numpy as np
import numfuse

count, dtype = int(sys.argv[1]), np.dtype(sys.argv[2])
functions = [np.exp, np.tanh, np.log1p, np.sin, np.cos]

def chain(x):
    v = x
    for k in range(count):
        f = functions[k % len(functions)]
        v = f(v * 0.5) + 0.25 if f is not np.log1p else f(np.abs(v))
    return v

x = np.linspace(-3.0, 3.0, 100_000).astype(dtype)
fn = numfuse.jit(chain, target="cpu", numpy_fallback=False)
start = time.perf_counter()
fn(x)
first = time.perf_counter() - start
times = []
for _ in range(20):
    start = time.perf_counter()
    fn(x)
    times.append(time.perf_counter() - start)
print(json.dumps({"first_s": first, "plan_ms": min(times) * 1e3}))
"""


def measure(count: int, dtype: str) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMFUSE_CACHE_DIR=cache, NUMFUSE_COMPILE_WORKERS="1", NUMFUSE_QUIET="1")
        out = subprocess.run([sys.executable, "-c", _CHILD, str(count), dtype], env=env, capture_output=True,
                             text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.compile_time")
    parser.add_argument("--counts", default="4,16,32")
    parser.add_argument("--out", help="a file name under benchmarks/results")
    ns = parser.parse_args(argv)
    rows = ["| functions in the loop | dtype | first call (s) | plan (ms) |", "|---|---|---|---|"]
    for count in (int(c) for c in ns.counts.split(",")):
        for dtype in ("float64", "float32"):
            found = measure(count, dtype)
            rows.append(f"| {count} | {dtype} | {found['first_s']:.2f} | {found['plan_ms']:.2f} |")
            print(rows[-1], flush=True)
    text = "\n".join(["# First-call compile time of vector-math chains (CPU target)", "",
                      f"`python -m benchmarks.compile_time --counts {ns.counts}`, {os.cpu_count()} CPU(s), "
                      f"{platform.processor() or platform.machine()}.", ""] + rows) + "\n"
    if ns.out:
        (RESULTS / ns.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
