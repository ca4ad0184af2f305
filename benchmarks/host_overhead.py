"""What a cached call costs on the host (issue 5, part 2).

    python -m benchmarks.host_overhead [--calls N] [--out FILE.md]

The function is one kernel on three device arrays: `x * y + z`.

- **numfuse's own host work, on any machine.** The call goes through the code a GPU runs:
  `JitFunction.__call__`, the key (`fastcall.fast_key`) and the fast call packing every
  kernel parameter as the GPU launch takes it (`FastCall`, GPU mode). Three things are
  replaced by stand-ins that do nothing of note: the device arrays (a class with shape, dtype,
  strides and a data pointer, read as CuPy's `a.data.ptr` is read), the allocation of the
  result (a new stand-in array, as `cupy.empty` would return), and the driver launch (a
  function that returns). So the time is numfuse's signature key, cache lookup, scalar
  casts, argument packing and result assembly. Target: 5 µs or less.
- **The whole call, on a GPU** (CuPy arrays of 1024 float32, when CuPy and a GPU are present):
  calls queued back to back, the time per call on the host, the stream synchronized once at
  the end. Target: 15 µs or less.
- **The whole call on the CPU target, on any machine** (`target="cpu"`, NumPy arrays of 16
  float64, `numpy_fallback=False` so that numfuse's plan runs): numfuse's key, lookup and
  bookkeeping, Numba's dispatch and the kernel itself (a few nanoseconds of arithmetic), beside
  NumPy's own `x * y + z` and Numba's dispatch alone on the same arrays. Target: 5 µs or less.
- **A two-kernel function on a GPU** (`x - x.max(axis=1)` on a CuPy f32[64,64]), the same
  way, launched kernel by kernel and as one CUDA graph (`numfuse.jit(cuda_graphs=True)`):
  which is faster decides whether graphs should become the default.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time
from types import SimpleNamespace

import numpy as np

import numfuse
from benchmarks.suite import commit


def fma(x, y, z):
    return x * y + z


class StandInArray:
    """A device array as far as the fast path reads one: shape, dtype, strides, pointer."""

    __slots__ = ("shape", "dtype", "strides", "ptr")

    def __init__(self, shape, dtype, ptr):
        self.shape, self.dtype, self.ptr = tuple(shape), np.dtype(dtype), ptr
        strides, step = [], self.dtype.itemsize
        for n in reversed(self.shape):
            strides.append(step)
            step *= n
        self.strides = tuple(reversed(strides))


def _noop_kernel(stream, params):
    return None


class _DryExecutable:
    """A planned executable as a GPU runs it, with every driver call replaced."""

    def __init__(self, real):
        from numfuse.targets.cuda.device_props import H200
        from numfuse.targets.cuda.device import Backend

        self.plan, self.launches, self.buffers = real.plan, real.launches, real.buffers
        self.scalar_casts, self.checks_errors = real.scalar_casts, real.checks_errors
        # A context is made current once per thread (targets/cuda/device.py ThreadContext).
        self.backend = Backend(cuda=SimpleNamespace(current_context=lambda: None), simulated=False, props=H200)
        self.core_streams = SimpleNamespace(get=lambda handle: "stream")
        self.cuda_graphs = False  # one kernel: never a graph

    def kernel(self, device_id, index):
        return _noop_kernel

    def device_consts(self, call):
        return {}


def host_work(calls: int, repeats: int = 7) -> dict:
    """(best, median) µs per call of numfuse's own host work over `repeats` rounds of `calls`
    calls (see the module docstring). The best round is the least disturbed by other work on
    the machine, as timeit reports it."""
    from numfuse.compiled import checked_fast_run
    from numfuse.runtime.fast_keys import fast_key
    from numfuse.targets.cuda import fastcall
    from numfuse.targets.cuda.arrays import FastAccess
    from numfuse.targets.cuda.device import backend
    from numfuse.targets.cuda.libraries import Library

    cuda = backend().cuda
    jf = numfuse.jit(fma, target="cuda")
    n = 1024
    host = [np.full(n, v, np.float32) for v in (1.0, 2.0, 3.0)]
    jf(*[cuda.to_device(a) for a in host])  # the full path once: traced, planned, run
    compiled = next(iter(jf._cache.values()))
    pointers = itertools.count(1 << 32, 1 << 20)
    # Allocation is the library's work (cupy.empty from its pool): the stand-in hands out
    # arrays made beforehand, as a pool hands out blocks.
    pool = itertools.cycle([(a, a.ptr) for a in (StandInArray((n,), np.float32, next(pointers)) for _ in range(8))])
    access = FastAccess(data=lambda a: a.ptr, empty=lambda shape, dtype: next(pool), stream_handle=lambda: 0)
    call = SimpleNamespace(library=None, handle=0, stream=0, device_id=None, cuda=None)
    args = [StandInArray((n,), np.float32, next(pointers)) for _ in range(3)]
    fastcall.register_array_type(StandInArray, Library.fast_key)
    fast = fastcall.FastCall(
        _DryExecutable(compiled.executable), call, access, args, compiled.traced_positions,
        lambda outputs: outputs[0], follow_library_stream=True,
    )
    # As JitFunction._remember_fast_path keeps it (with its checks, where the call needs any).
    jf._fast[fast_key(args, jf._static_positions)] = checked_fast_run(fast.run, compiled, len(args))
    out = jf(*args)
    assert isinstance(out, StandInArray) and out.shape == (n,), "the call did not take the fast path"
    timings = {"whole call (jf(x, y, z))": lambda: jf(*args),
               "key and lookup (fast_key)": lambda: fast_key(args, jf._static_positions),
               "packing and launch (FastCall)": lambda: fast.run(args)}
    result = {}
    for label, fn in timings.items():
        samples = []
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            samples.append((time.perf_counter() - start) / calls * 1e6)
        result[label] = (min(samples), statistics.median(samples))
    return result


def gpu_call(calls: int) -> tuple[float, float] | None:
    """(best, median) µs per whole call on CuPy arrays on a GPU, or None without one."""
    try:
        import cupy
        from numfuse.targets.cuda.device import backend

        if backend().simulated:
            return None
    except Exception:
        return None
    jf = numfuse.jit(fma, target="cuda")
    x, y, z = (cupy.full(1024, v, cupy.float32) for v in (1.0, 2.0, 3.0))
    for _ in range(100):
        jf(x, y, z)
    cupy.cuda.get_current_stream().synchronize()
    samples = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(calls):
            jf(x, y, z)
        cupy.cuda.get_current_stream().synchronize()
        samples.append((time.perf_counter() - start) / calls * 1e6)
    assert float(jf(x, y, z)[0]) == 5.0
    return min(samples), statistics.median(samples)


def cpu_calls(calls: int) -> dict[str, tuple[float, float]]:
    """(best, median) µs per call on the CPU target and its references, rounds alternating."""
    jf = numfuse.jit(fma, target="cpu", numpy_fallback=False)
    x, y, z = (np.full(16, v) for v in (1.0, 2.0, 3.0))
    assert jf(x, y, z).tolist() == [5.0] * 16 and len(jf.plan(x, y, z).kernels) == 1
    for _ in range(100):
        jf(x, y, z)
    # The Numba function the call launches (the serial one: 16 points), with its arguments.
    executable = next(iter(jf._fast.values())).__self__.executable
    launch = executable.launches[0]
    kernel = launch.functions[1 if launch.serial else 0]
    env = dict(zip(executable.input_vars, (x, y, z)))
    env.update({var: np.empty(var.aval.shape, var.aval.dtype) for var in executable.buffers.allocated})
    arguments = executable._arguments(0, env, {}, None)
    runs = {"whole call (jf(x, y, z))": lambda: jf(x, y, z), "its Numba function alone": lambda: kernel(*arguments),
            "NumPy: x * y + z": lambda: x * y + z}
    samples = {label: [] for label in runs}
    for _ in range(7):
        for label, run in runs.items():
            start = time.perf_counter()
            for _ in range(calls):
                run()
            samples[label].append((time.perf_counter() - start) / calls * 1e6)
    return {label: (min(s), statistics.median(s)) for label, s in samples.items()}


def less_row_max(x):
    """Two kernels: each row's maximum, then x[i, j] - max(x[j]) (a result another row needs,
    so the maximum is stored before the subtraction reads it)."""
    return x - x.max(axis=1)


def gpu_graph_calls(calls: int) -> dict | None:
    """(best, median) µs per whole call of a two-kernel function on CuPy arrays, launched
    kernel by kernel and as one CUDA graph (`cuda_graphs=True`), or None without a GPU."""
    try:
        import cupy
        from numfuse.targets.cuda.device import backend

        if backend().simulated:
            return None
    except Exception:
        return None
    x = cupy.arange(64 * 64, dtype=cupy.float32).reshape(64, 64)
    want = less_row_max(cupy.asnumpy(x))
    timings = {}
    for label, graphs in (("kernel by kernel", False), ("one CUDA graph", True)):
        jf = numfuse.jit(less_row_max, cuda_graphs=graphs, target="cuda")
        assert len(jf.plan(x).kernels) == 2
        for _ in range(100):
            jf(x)
        cupy.cuda.get_current_stream().synchronize()
        samples = []
        for _ in range(7):
            start = time.perf_counter()
            for _ in range(calls):
                jf(x)
            cupy.cuda.get_current_stream().synchronize()
            samples.append((time.perf_counter() - start) / calls * 1e6)
        np.testing.assert_allclose(cupy.asnumpy(jf(x)), want, rtol=1e-5, atol=1e-3)
        timings[label] = (min(samples), statistics.median(samples))
    return timings


def _cell(text: str | None) -> str | None:
    """An error as one markdown table cell."""
    return None if text is None else "failed: " + " ".join(text.split()).replace("|", "/")[:300]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.host_overhead", description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--out", help="also write the table to this markdown file")
    args = parser.parse_args(argv)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        work = host_work(args.calls)
        on_cpu = cpu_calls(args.calls)
        # The GPU parts have their own rows: a failure there is reported in its row, and the
        # host-work table is written all the same.
        whole_error = graphs_error = None
        try:
            whole = gpu_call(args.calls)
        except Exception as err:  # noqa: BLE001
            whole, whole_error = None, f"{type(err).__name__}: {err}"
        try:
            graphs = gpu_graph_calls(args.calls // 4)
        except Exception as err:  # noqa: BLE001
            graphs, graphs_error = None, f"{type(err).__name__}: {err}"
    lines = [
        "| what (one kernel, three device arrays: `x * y + z`) | µs per call, best round | median round | target |",
        "|---|---|---|---|",
    ]
    for label, (best, median) in work.items():
        target = "≤ 5" if label.startswith("whole") else ""
        lines.append(f"| numfuse host work: {label} | {best:.2f} | {median:.2f} | {target} |")
    if whole is not None:
        lines.append(f"| whole call on a GPU, CuPy arrays | {whole[0]:.2f} | {whole[1]:.2f} | ≤ 15 |")
    else:
        lines.append(f"| whole call on a GPU, CuPy arrays | ({_cell(whole_error) or 'no GPU here'}) | | ≤ 15 |")
    lines.append("")
    lines.append("| the CPU target (`target=\"cpu\"`, `x * y + z` on NumPy f64[16]) | µs per call, best round | "
                 "median round | target |")
    lines.append("|---|---|---|---|")
    for label, (best, median) in on_cpu.items():
        target = "≤ 5" if label.startswith("whole") else ""
        lines.append(f"| {label} | {best:.2f} | {median:.2f} | {target} |")
    lines.append("")
    lines.append("| two kernels on a GPU (`x - x.max(axis=1)`, CuPy f32[64,64]) | µs per call, best round | median round |")
    lines.append("|---|---|---|")
    missing = f"({_cell(graphs_error)})" if graphs_error else "(no GPU here)"
    for label, (best, median) in (graphs or {missing: (float("nan"), float("nan"))}).items():
        lines.append(f"| {label} | {best:.2f} | {median:.2f} |")
    table = "\n".join(lines)
    print(table)
    if args.out:
        with open(args.out, "w") as f:
            load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
            f.write(f"`python -m benchmarks.host_overhead --calls {args.calls}` at commit {commit()}, on {sys.platform}, "
                    f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load:.1f}"
                    f"\n\n{table}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
