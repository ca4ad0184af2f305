"""The benchmark suite: every workload at every size, every implementation, one table.

The columns that need no GPU come first, for every workload and size: numfuse's plan (kernels,
modeled and minimum bytes), the time to trace and plan, the time to compile each kernel to sm_90
PTX with numba-cuda's compiler, and NumPy's time on the CPU at the small size. With a GPU (and
CuPy), then: the copy bandwidth, and numfuse, plain CuPy, torch.compile, jax.jit and cupy.fuse
timed on the same device arrays, each checked against a reference (NumPy at the small size,
plain CuPy at the large one); finally the kernels each launches, counted by the profiler.

Peers run in that order, the large size first, so that when `max_seconds` is spent the rows
left out are the least needed ones (numfuse and CuPy always run); each row says why a cell is
empty. Results are written after every step, so a run cut short still leaves its tables.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import re
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import numfuse
from benchmarks import output
from benchmarks.timing import host_times, median
from benchmarks.workloads import BY_NAME, WORKLOADS, Workload
from numfuse.ir.ops import ELEMENTWISE, is_reduction

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
# Bytes of input per workload (the KDE: of the matrix it never stores).
SIZES = {"small": 2**20, "large": 2**29}
LARGE_FIRST = ("large", "small")


@dataclass
class Options:
    sizes: tuple[str, ...] = ("small", "large")
    only: tuple[str, ...] = ()
    out: Path = RESULTS
    repeat: int = 20
    compile: bool = True
    cpu_only: bool = False
    max_seconds: float | None = None
    numpy_large: bool = False
    plan_repeat: int = 5
    command: str = "python -m benchmarks"
    stem: str | None = None  # output file name without extension; by default date-device-commit


@dataclass
class Run:
    options: Options
    meta: dict
    rows: list[dict] = field(default_factory=list)
    copy: dict | None = None
    started: float = field(default_factory=time.monotonic)

    def data(self) -> dict:
        return {"meta": self.meta, "copy": self.copy, "rows": self.rows}

    def row(self, name: str, size: str) -> dict:
        return next(r for r in self.rows if r["workload"] == name and r["size"] == size)

    def over_budget(self) -> bool:
        limit = self.options.max_seconds
        return limit is not None and time.monotonic() - self.started > limit


def selected(only) -> list[Workload]:
    unknown = [name for name in only if name not in BY_NAME]
    if unknown:
        raise SystemExit(f"unknown workload(s) {', '.join(unknown)}; known: {', '.join(BY_NAME)}")
    return [w for w in WORKLOADS if not only or w.name in only]


# -- the columns without a GPU -------------------------------------------------------------------


def operations(graph) -> int:
    """Element operations the traced graph does: each elementwise equation one per output
    element, each reduction one per element reduced (views, broadcasts and casts none)."""
    total = 0
    for eqn in graph.eqns:
        if eqn.prim in ELEMENTWISE:
            total += eqn.out.aval.size
        elif is_reduction(eqn.prim):
            total += eqn.inputs[0].aval.size
    return total


def plan_row(w: Workload, size: str) -> dict:
    """numfuse's plan of the workload at `size`, on untouched NumPy zeros of the real shapes."""
    args = w.make(SIZES[size], None, 0)
    plan = numfuse.jit(w.fn, target="cuda").plan(*args)
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    return {
        "workload": w.name,
        "kind": w.kind,
        "size": size,
        "shapes": [list(a.shape) for a in arrays],
        "input_bytes": sum(a.nbytes for a in arrays),
        "kernels": len(plan.kernels),
        "strategies": [k.nest.strategy for k in plan.kernels],
        "bytes_moved": plan.bytes_moved,
        "min_bytes": plan.min_bytes,
        "unfused_bytes": plan.unfused_bytes,
        "operations": operations(plan.graph),
        "target_pct": w.target_pct,
        "plan_ms": None,
        "compile_s": None,
        "impls": {},
    }


def plan_ms(w: Workload, args, repeat: int) -> float:
    """Median milliseconds to trace, plan and generate the kernel source, each time with a new
    jit object (nothing cached but Python's own imports)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        numfuse.jit(w.fn, target="cuda").plan(*args)
        times.append((time.perf_counter() - start) * 1e3)
    return median(times)


class Compiler:
    """Seconds to compile every kernel of a plan to sm_90 PTX with numba-cuda's NVVM (no GPU
    needed), after one warm-up compile so that the first workload does not pay NVVM's start."""

    def __init__(self):
        from numfuse.targets.cuda.ptx import compile_kernel

        self._compile = compile_kernel
        self._seen: dict[tuple, float] = {}
        x = np.zeros(8, np.float32)
        self.seconds(lambda x: x * 2.0 + 1.0, (x,))

    def seconds(self, fn, args) -> float:
        jf = numfuse.jit(fn, target="cuda")
        plan = jf.plan(*args)
        sources = jf.kernel_sources(*args)
        key = tuple(s.source for s in sources)
        if key not in self._seen:  # the same code serves every shape: compiled once
            start = time.perf_counter()
            for kernel, source in zip(plan.kernels, sources):
                self._compile(source, kernel.nest)
            self._seen[key] = time.perf_counter() - start
        return self._seen[key]


def numpy_entry(w: Workload, args, repeat: int) -> dict:
    times = host_times(lambda: w.fn(*args), repeat)
    return {"status": "ok", "timer": "host", "ms": median(times), "times_ms": times}


def cpu_columns(run: Run, workloads: list[Workload]) -> None:
    opts = run.options
    compiler = None
    if opts.compile:
        try:
            compiler = Compiler()
        except Exception as err:  # noqa: BLE001  (numba-cuda internals this suite does not know)
            run.meta["compile_error"] = report_error("compiling to PTX", err)
    for size in opts.sizes:
        for w in workloads:
            row = plan_row(w, size)
            run.rows.append(row)
            stand_ins = w.make(SIZES[size], None, 0)
            row["plan_ms"] = plan_ms(w, stand_ins, opts.plan_repeat)
            if compiler is not None:
                try:
                    row["compile_s"] = compiler.seconds(w.fn, stand_ins)
                except Exception as err:  # noqa: BLE001  (a compile error costs its cell, not the run)
                    row["compile_error"] = report_error(f"compiling {w.name} ({size})", err)
            print(f"{w.name} ({size}): {row['kernels']} kernel(s), plan {row['plan_ms']:.1f} ms"
                  + (f", compile {row['compile_s']:.2f} s" if row["compile_s"] is not None else ""), flush=True)
    if run.meta["gpu"] == "cpu":
        for size in opts.sizes:
            for w in workloads:
                row = run.row(w.name, size)
                if size == "small" or opts.numpy_large:
                    row["impls"]["numpy"] = numpy_entry(w, w.make(SIZES[size], np, 0), opts.repeat)
                else:
                    row["impls"]["numpy"] = {"status": "not run: large size (--numpy-large)"}


# -- the run ---------------------------------------------------------------------------------------


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def commit() -> str:
    """The source tree's commit (with -dirty for uncommitted changes to numfuse/ or benchmarks/);
    NUMFUSE_COMMIT names it where git cannot (a copied tree)."""
    sha = _git("rev-parse", "--short", "HEAD")
    if not sha:
        return os.environ.get("NUMFUSE_COMMIT") or "unknown"
    dirty = _git("status", "--porcelain", "--untracked-files=no", "--", "numfuse", "benchmarks",
                 ":!benchmarks/results")  # results being written are not the code measured
    return sha + ("-dirty" if dirty else "")


def _version(*names: str) -> str | None:
    for name in names:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def versions() -> dict:
    cupy = next((d for d in importlib.metadata.packages_distributions().get("cupy", [])), None)
    return {
        "python": platform.python_version(),
        "numfuse": numfuse.__version__,
        "numba": _version("numba"),
        "numba-cuda": _version("numba-cuda", "numba_cuda"),
        "numpy": np.__version__,
        "cupy": _version(cupy) if cupy else None,
        "torch": _version("torch"),
        "triton": _version("triton", "pytorch-triton"),
        "jax": _version("jax"),
        "jaxlib": _version("jaxlib"),
    }


def find_gpu(cpu_only: bool):
    """(the cupy module, the GPU's name), or (None, why not)."""
    if cpu_only:
        return None, "--cpu"
    try:
        import cupy as cp

        if cp.cuda.runtime.getDeviceCount() < 1:
            return None, "no CUDA device"
        props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        return cp, name
    except Exception as err:  # noqa: BLE001  (CuPy missing, or no driver)
        return None, f"{type(err).__name__}: {err}".splitlines()[0][:200]


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "unknown"


def run_suite(opts: Options) -> dict:
    workloads = selected(opts.only)
    cp, gpu = find_gpu(opts.cpu_only)
    date = time.strftime("%Y-%m-%d")
    sha = commit()
    device = gpu if cp is not None else "cpu"
    stem = opts.stem or "-".join([date, slug(device), sha] + ([] if len(opts.sizes) > 1 else [opts.sizes[0]]))
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "gpu": device,
        "no_gpu_reason": None if cp is not None else gpu,
        "commit": sha,
        "host": platform.node(),
        "cpu": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "command": opts.command,
        "sizes": {s: SIZES[s] for s in opts.sizes},
        "repeat": opts.repeat,
        "plan_repeat": opts.plan_repeat,
        "max_seconds": opts.max_seconds,
        "numpy_large": opts.numpy_large,
        "versions": versions(),
        "stem": stem,
    }
    if cp is None:
        print(f"benchmarks: no GPU ({gpu}): the columns that need none only", flush=True)
    run = Run(opts, meta)
    try:
        cpu_columns(run, workloads)
        if cp is not None:
            from benchmarks.gpu import gpu_columns

            gpu_columns(run, workloads, cp)
    except BaseException as err:  # a failure, Ctrl-C or a timeout's SIGINT: keep what ran
        run.meta["interrupted"] = report_error("benchmarks", err)
        output.write(run.data(), opts.out, stem, png=True)
        raise
    paths = output.write(run.data(), opts.out, stem, png=True)
    print(output.markdown(run.data()))
    print("wrote " + ", ".join(str(p) for p in paths), flush=True)
    return run.data()


def report_error(where: str, err: BaseException) -> str:
    traceback.print_exception(type(err), err, err.__traceback__, file=sys.stderr)
    text = f"{type(err).__name__}: {err}".splitlines()[0]
    print(f"{where}: {text}", file=sys.stderr, flush=True)
    return text[:240]
