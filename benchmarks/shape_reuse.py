"""How many kernels numfuse compiles when one function is called at many sizes.

    python -m benchmarks.shape_reuse              # prints the table, writes benchmarks/results/<date>-cpu-shape-reuse.md
    python -m benchmarks.shape_reuse --no-ptx     # without numba-cuda's compiler

For each case the function is planned at 20 sizes (batch sizes: the leading axis of a row-wise
function, the total size of an elementwise one; for the normalizations also 20 row lengths that
fit the on-chip row cache) and every kernel is generated. Columns:

- kernels: kernels in the plan (the most at any size);
- codes: distinct kernel codes generated (the source without its header, as the runtime's kernel
  cache keys compiled dispatchers: targets/cuda/kernel_cache.py); one compiled kernel serves every
  size with the same code;
- compilations: distinct (code, argument types) pairs, what a GPU's dispatcher compiles;
- PTX: distinct PTX texts numba-cuda's compiler makes when every size's kernels are compiled for
  sm_90 (no GPU needed), after removing the number Numba gives each compilation in its symbol
  names (`..B2v7B..`, `_cudapy_smem_7`).

Nothing runs: plans, code generation and PTX only.
"""

from __future__ import annotations

from datetime import date
import argparse
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

import numfuse

from . import suite, workloads

# 20 batch sizes: powers of two, their neighbours, odd sizes; all over 1 (an axis of length 1
# is broadcast by NumPy's rules and legitimately compiles another kernel) and with rows short
# enough that no reduction splits (a compile-time choice, see `explain`).
BATCHES = (2, 3, 5, 8, 13, 16, 31, 33, 64, 100, 127, 128, 255, 257, 512, 1000, 1024, 2049, 3000, 4097)
# 20 row lengths of float32 within the 40 KiB row cache (10240 points).
ROWS = (2, 5, 17, 32, 33, 64, 100, 127, 128, 200, 255, 256, 511, 700, 1000, 1024, 2000, 4096, 8000, 10240)
ROW = 64  # the row length while batch sizes vary


def col_sum(x):
    return x.sum(axis=0)


def mean_var(x):
    return x.mean(axis=-1), x.var(axis=-1, ddof=1), x.std(axis=0)


def joined(x, y):
    """Offsets that depend on the sizes: a tail slice, a reversed one, a concatenation."""
    return np.concatenate([x[:, -3:], y[:, ::-1]], axis=1) * 2


def _f32(*shape):
    return np.zeros(shape, np.float32)


@dataclass(frozen=True)
class Case:
    name: str
    fn: Callable
    make: Callable[[int, int], tuple]  # (batch, row) -> arguments
    vary_rows: bool = False  # also at the 20 ROWS


CASES = (
    Case("elementwise chain (10 ops), total size", workloads.chain10, lambda b, n: (_f32(b * n),)),
    Case("row sum", workloads.row_sum, lambda b, n: (_f32(b, n),)),
    Case("softmax", workloads.softmax, lambda b, n: (_f32(b, n),), vary_rows=True),
    Case("layer norm", workloads.layer_norm, lambda b, n: (_f32(b, n), _f32(n), _f32(n)), vary_rows=True),
    Case("column sum", col_sum, lambda b, n: (_f32(b, n),)),
    Case("mean, var(ddof=1), std(axis=0)", mean_var, lambda b, n: (_f32(b, n),), vary_rows=True),
    Case("2-D five-point stencil", workloads.stencil, lambda b, n: (_f32(b + 2, n + 2),), vary_rows=True),
    Case("tail and reversed slices, concatenated", joined, lambda b, n: (_f32(b, n + 3), _f32(b, n)),
         vary_rows=True),
)


@dataclass
class Reuse:
    case: str
    varied: str  # "batch" or "row"
    sizes: int
    kernels: int
    codes: int
    compilations: int
    ptx: int | None = None
    ptx_seconds: float = 0.0


def shapes(case: Case, varied: str) -> list[tuple]:
    if varied == "batch":
        return [case.make(b, ROW) for b in BATCHES]
    return [case.make(16, n) for n in ROWS]


def _argument_types(source, nest) -> tuple:
    """The kernel's argument types as a dispatcher sees them (without numba: dtype names)."""
    views = {b.name: (b.dtype.str, len(b.view), b.strided) for b in nest.buffers}
    scalars = {s.name: s.dtype.str for s in nest.scalars}
    types = []
    for p in source.params:
        if p.kind == "buffer":
            types.append(views[p.name])
        elif p.kind == "scalar":
            types.append(scalars[p.name])
        elif p.kind in ("count", "partial"):
            types.append(np.dtype(p.dtype).str)
        else:
            types.append("int64")
    return tuple(types)


def measure(case: Case, varied: str, ptx: bool = False) -> Reuse:
    jf = numfuse.jit(case.fn, target="cuda")
    kernels, codes, compilations, texts = 0, set(), set(), set()
    start = time.perf_counter()
    all_shapes = shapes(case, varied)
    for args in all_shapes:
        plan = jf.plan(*args)
        sources = jf.kernel_sources(*args)
        kernels = max(kernels, len(plan.kernels))
        for kernel, source in zip(plan.kernels, sources):
            codes.add(source.code_digest)
            key = (source.code_digest, _argument_types(source, kernel.nest))
            if ptx:
                from numfuse.targets.cuda.ptx import compile_kernel

                texts.add(_without_compilation_numbers(compile_kernel(source, kernel.nest).ptx))
            compilations.add(key)
    seconds = time.perf_counter() - start
    return Reuse(case.name, varied, len(all_shapes), kernels, len(codes), len(compilations),
                 len(texts) if ptx else None, seconds if ptx else 0.0)


def _without_compilation_numbers(ptx: str) -> str:
    """PTX with the per-compilation numbers Numba puts in mangled names taken out."""
    ptx = re.sub(r"B\d+v\d+(?=B)", "Bv", ptx)
    return re.sub(r"_cudapy_smem_\d+", "_cudapy_smem", ptx)


def ptx_available() -> bool:
    try:
        from numba import cuda  # noqa: F401
        from numba.cuda.cudadrv import nvvm  # noqa: F401
    except Exception:
        return False
    return True


def table(results: list[Reuse]) -> str:
    lines = [
        "| function | sizes varied | sizes | kernels in plan | distinct kernel codes | compilations (code, argument types) | distinct PTX |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        ptx = "n/a" if r.ptx is None else str(r.ptx)
        lines.append(f"| {r.case} | {r.varied} | {r.sizes} | {r.kernels} | {r.codes} | {r.compilations} | {ptx} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.shape_reuse", description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-ptx", action="store_true", help="skip the PTX compilations")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / f"{date.today().isoformat()}-cpu-shape-reuse.md"))
    args = parser.parse_args(argv)
    ptx = not args.no_ptx and ptx_available()
    results = []
    for case in CASES:
        for varied in ("batch", "row") if case.vary_rows else ("batch",):
            results.append(measure(case, varied, ptx))
            print(table(results[-1:]).splitlines()[-1], flush=True)
    text = table(results)
    worst = max(r.codes - r.kernels for r in results)
    commit = suite.commit()
    batches = ", ".join(map(str, BATCHES))
    rows = ", ".join(map(str, ROWS))
    report = (
        "# Kernel reuse across shapes\n\n"
        f"Command: `python -m benchmarks.shape_reuse{' --no-ptx' if args.no_ptx else ''}` (commit {commit}; "
        f"{'PTX compiled for sm_90 by numba-cuda, no GPU' if ptx else 'no PTX compiler'}).\n\n"
        f"Batch sizes: {batches} (rows of {ROW} float32; the elementwise chain's total size is batch x {ROW}).\n"
        f"Row lengths (batch 16): {rows} (all fit the 40 KiB on-chip row cache).\n\n"
        + text + "\n\n"
        + ("Every function compiles no more kernels than its plan has, at every size.\n" if worst <= 0
           else "Some function compiles more kernels than its plan has: see the table.\n")
    )
    Path(args.out).write_text(report)
    print(f"\nwritten to {args.out}")
    return 0 if worst <= 0 else 1


if __name__ == "__main__":
    sys.exit(main())
