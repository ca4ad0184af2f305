"""Small calls on the CPU target against NumPy, where numfuse's per-call and per-kernel costs
show: a grid's border updates (whose disjoint regions share a kernel, plan/horizontal.py), a
100-element sum of two arrays, and 50 steps of a 64 x 64 Jacobi stencil (100 kernels a call).

    python -m benchmarks.small_calls [--out FILE.md] [--calls N]

Borders write the four borders of an n x n float64 array in place (Dirichlet: constants;
Neumann: each border from its neighbouring row or column); the rows are one kernel and the
columns, which meet the rows at the corners, a second. Times are the best of 5 runs of N calls
(N / 50 for the stencil), time.perf_counter, numfuse and NumPy side by side in one process.
`numfuse` is whatever the import finds: PYTHONPATH=<an older tree> measures that one.
"""

from __future__ import annotations

import argparse
import subprocess
import time
from pathlib import Path

import numpy as np

import numfuse


def dirichlet(u):
    u[0, :] = 0.0
    u[-1, :] = 0.0
    u[:, 0] = 1.0
    u[:, -1] = 1.0
    return u


def neumann(u):
    u[0, :] = u[1, :]
    u[-1, :] = u[-2, :]
    u[:, 0] = u[:, 1]
    u[:, -1] = u[:, -2]
    return u


def add(x, y):
    return x + y


def jacobi(a, b, steps):
    """npbench's jacobi_2d: `steps` time steps of two sweeps."""
    for _ in range(steps):
        b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])
        a[1:-1, 1:-1] = 0.2 * (b[1:-1, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] + b[2:, 1:-1] + b[:-2, 1:-1])


def numfuse_commit() -> str:
    """The commit of the tree the imported numfuse comes from."""
    tree = Path(numfuse.__file__).resolve().parent.parent
    found = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return found.stdout.strip() or "unknown"


def _best(fn, args, calls: int) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def _cases():
    rng = np.random.default_rng(0)
    for fn in (dirichlet, neumann):
        for n in (64, 1024):
            yield f"{fn.__name__} {n}x{n}", fn, (rng.uniform(0, 1, (n, n)),), {}, 1
    yield "x + y, 100 elements", add, (rng.uniform(0, 1, 100), rng.uniform(0, 1, 100)), {}, 1
    yield "jacobi_2d 64x64, 50 steps", jacobi, (rng.uniform(0, 1, (64, 64)), rng.uniform(0, 1, (64, 64)), 50), \
        {"static_argnames": ["steps"]}, 50


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.small_calls")
    parser.add_argument("--out", help="write the table (Markdown) here too")
    parser.add_argument("--calls", type=int, default=2000)
    opts = parser.parse_args(argv)
    lines = ["| program | kernels | numfuse us | NumPy us | NumPy / numfuse |", "|---|---|---|---|---|"]
    for name, fn, args, options, slower in _cases():
        jitted = numfuse.jit(fn, target="cpu", **options)
        jitted(*args)  # compile
        kernels = len(jitted.plan(*args).kernels)
        calls = max(1, opts.calls // slower)
        mine, theirs = _best(jitted, args, calls), _best(fn, args, calls)
        lines.append(f"| {name} | {kernels} | {mine * 1e6:.1f} | {theirs * 1e6:.1f} | {theirs / mine:.2f}x |")
        print(lines[-1], flush=True)
    text = "\n".join(lines)
    if opts.out:
        with open(opts.out, "w") as f:
            f.write(f"Measured by `python -m benchmarks.small_calls --calls {opts.calls}` with numfuse at "
                    f"{numfuse_commit()} (best of 5 runs, time.perf_counter, on the 2-core session machine)\n\n")
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
