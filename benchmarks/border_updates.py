"""Updates of a grid's borders, whose disjoint regions share a kernel (plan/horizontal.py), on
the CPU target against NumPy.

    python -m benchmarks.border_updates [--out FILE.md] [--calls N]

Each program writes the four borders of an n x n float64 array in place (Dirichlet: constants;
Neumann: each border from its neighbouring row or column). The rows are one kernel and the
columns, which meet the rows at the corners, a second. Times are the best of 5 runs of N calls
(time.perf_counter), numfuse and NumPy side by side in one process; the calls are small, so this
measures numfuse's per-call and per-kernel overhead more than memory traffic.
"""

from __future__ import annotations

import argparse
import time

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


def _best(fn, u, calls: int) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            fn(u)
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.border_updates")
    parser.add_argument("--out", help="write the table (Markdown) here too")
    parser.add_argument("--calls", type=int, default=2000)
    opts = parser.parse_args(argv)
    lines = ["| program | n | kernels | numfuse us | NumPy us | NumPy / numfuse |", "|---|---|---|---|---|---|"]
    for fn in (dirichlet, neumann):
        for n in (64, 1024):
            u = np.random.default_rng(0).uniform(0, 1, (n, n))
            jitted = numfuse.jit(fn, target="cpu")
            jitted(u)  # compile
            kernels = len(jitted.plan(u).kernels)
            mine, theirs = _best(jitted, u, opts.calls), _best(fn, u, opts.calls)
            lines.append(f"| {fn.__name__} | {n} | {kernels} | {mine * 1e6:.1f} | {theirs * 1e6:.1f} | {theirs / mine:.2f}x |")
            print(lines[-1], flush=True)
    text = "\n".join(lines)
    if opts.out:
        with open(opts.out, "w") as f:
            f.write(f"Measured by `python -m benchmarks.border_updates --calls {opts.calls}` "
                    "(best of 5 runs, time.perf_counter, on the 2-core session machine)\n\n")
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
