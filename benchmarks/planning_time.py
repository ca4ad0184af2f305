"""Tracing, planning and rendering time of programs whose Python loops trace thousands of
operations, and the kernels they plan into (issue: loops that fuse).

    python -m benchmarks.planning_time [--out FILE.md]

Each program is traced, planned and its kernels rendered once (no GPU, no compiler: the times
are numfuse's own Python), timed phase by phase with time.perf_counter on this machine. The goal
is planning that grows linearly with the traced operations: 10,000 operations in under 5 s on a
2-core machine. The rank-k update is npbench's syrk (70 x 50), whose row loop traced 3,570
kernels before updates of the same points were merged.
"""

from __future__ import annotations

import argparse
import gc
import time

import numpy as np

from numfuse.targets.cuda import CUDA
from numfuse.compiled import kernel_header
from numfuse.plan.planner import plan as make_plan
from numfuse.frontend.tracer import ArgSpec, trace
from numfuse.ir import Aval


def syrk(alpha, beta, C, A):
    """npbench's syrk: a symmetric rank-k update, row by row."""
    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += alpha * A[i, k] * A[:i + 1, k]


def jacobi_steps(A, B, steps):
    """A 2-D Jacobi stencil, `steps` time steps of two sweeps (npbench's jacobi_2d)."""
    for _ in range(steps):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def elementwise_chain(x, n):
    """`n` elementwise statements on one array: one kernel whatever n."""
    for k in range(n):
        x = x * 1.0001 + 0.5 if k % 2 else np.sqrt(x * x + 1.0)
    return x


def rows_one_by_one(out, x):
    """A loop that writes one row per iteration: disjoint updates, 8 to a kernel."""
    for i in range(x.shape[0]):
        out[i, :] = x[i, :] * 2.0 + 1.0


def _array(shape):
    return ArgSpec("array", Aval(shape, np.dtype(np.float64)))


def _scalar():
    return ArgSpec("python", Aval((), np.dtype(np.float64)))


PROGRAMS = [
    ("syrk 70x50 (npbench)", syrk, [_scalar(), _scalar(), _array((70, 70)), _array((70, 50))]),
    ("jacobi_2d 64x64, 500 steps", jacobi_steps, [_array((64, 64)), _array((64, 64)), ("static", 500)]),
    ("elementwise chain of 5,000 statements", elementwise_chain, [_array((256, 256)), ("static", 5000)]),
    ("2,000 rows written one by one", rows_one_by_one, [_array((2000, 64)), _array((2000, 64))]),
]


def measure(fn, specs) -> dict:
    gc.collect()
    start = time.perf_counter()
    traced = trace(fn, specs, fn.__name__)
    traced_at = time.perf_counter()
    scalars = {k for k, s in enumerate([s for s in specs if isinstance(s, ArgSpec)]) if s.kind != "array"}
    planned = make_plan(traced.graph, scalars, target=CUDA)
    planned_at = time.perf_counter()
    sources = [CUDA.render(k.nest, kernel_header(planned, i)) for i, k in enumerate(planned.kernels)]
    rendered_at = time.perf_counter()
    distinct = len({s.code_digest for s in sources})  # what compiles: the code without its header
    return {
        "operations": len(traced.graph.eqns), "kernels": len(planned.kernels), "distinct compiled kernels": distinct,
        "trace s": traced_at - start, "plan s": planned_at - traced_at, "render s": rendered_at - planned_at,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.planning_time")
    parser.add_argument("--out", help="write the table (Markdown) here too")
    opts = parser.parse_args(argv)
    header = ["program", "operations", "kernels", "distinct compiled kernels", "trace s", "plan s", "render s"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, fn, specs in PROGRAMS:
        row = measure(fn, specs)
        cells = [name] + [f"{row[h]:.2f}" if h.endswith(" s") else str(row[h]) for h in header[1:]]
        lines.append("| " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    text = "\n".join(lines)
    print()
    print(text)
    if opts.out:
        with open(opts.out, "w") as f:
            f.write("Measured by `python -m benchmarks.planning_time` (times: time.perf_counter, one run)\n\n")
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
