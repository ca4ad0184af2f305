"""The suite on the CPU: numfuse's CPU target against NumPy, numexpr, jax.jit and torch.compile,
each given the same workloads (benchmarks/workloads.py), with a memory copy of the same size
measured in the same run as the bandwidth limit.

    python -m benchmarks --target cpu                       # both sizes -> benchmarks/results/
    python -m benchmarks --target cpu --size small --only softmax --repeat 50

Every implementation runs on NumPy arrays (PyTorch and JAX take them through from_numpy /
device_put, outside the timed call) with all the machine's threads. Times are host wall-clock
medians; a result is compared with NumPy's before it is timed. The copy limit is the faster of
NumPy's copyto and a Numba parallel copy, both over input-sized arrays: (bytes read + written)
/ time. numfuse's bandwidth is the bytes its plan moves (Plan.bytes_moved) over its time.
numexpr takes expression strings, not NumPy functions: it runs the elementwise workloads that
are one expression (EXPRESSIONS) and is "n/a" elsewhere.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shlex
import statistics
import subprocess
import time
from pathlib import Path

import numpy as np

from benchmarks.workloads import BY_NAME, WORKLOADS, twin

SIZES = {"small": 1 << 20, "large": 256 << 20}
RESULTS = Path(__file__).resolve().parent / "results"

# numexpr's twins: the workloads that are one elementwise expression of their arguments.
EXPRESSIONS = {
    "gelu": "0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))",
}


def _times(run, repeat: int, warmup: int = 1) -> list[float]:
    for _ in range(warmup):
        run()
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        out.append((time.perf_counter() - start) * 1e3)
    return out


def copy_limit(nbytes: int, repeat: int) -> dict:
    """GB/s of the faster of NumPy's copy and a Numba parallel copy of `nbytes`."""
    import numba

    @numba.njit(parallel=True, nogil=True)
    def parallel_copy(dst, src):
        for i in numba.prange(src.size):
            dst[i] = src[i]

    src = np.ones(max(1, nbytes // 4), np.float32)
    dst = np.empty_like(src)
    numpy_ms = statistics.median(_times(lambda: np.copyto(dst, src), repeat))
    numba_ms = statistics.median(_times(lambda: parallel_copy(dst, src), repeat))
    ms = min(numpy_ms, numba_ms)
    return {"bytes": src.nbytes, "numpy_ms": numpy_ms, "numba_ms": numba_ms, "gbs": 2 * src.nbytes / ms / 1e6}


def _close(result, reference) -> float:
    """The largest error of `result` relative to NumPy's `reference` (scaled by its magnitude)."""
    got = [np.asarray(r, dtype=np.float64) for r in (result if isinstance(result, tuple) else (result,))]
    want = [np.asarray(r, dtype=np.float64) for r in (reference if isinstance(reference, tuple) else (reference,))]
    worst = 0.0
    for g, w in zip(got, want):
        scale = max(1.0, float(np.max(np.abs(w)))) if w.size else 1.0
        worst = max(worst, float(np.max(np.abs(g - w))) / scale if w.size else 0.0)
    return worst


class _Peers:
    """The peers that are installed here: each turns (workload, NumPy args) into a call."""

    def __init__(self):
        self.available = {name: importlib.util.find_spec(mod) is not None
                          for name, mod in (("numexpr", "numexpr"), ("jax", "jax"), ("torch", "torch"))}

    def prepare(self, name: str, workload, args):
        if name == "numexpr":
            expression = EXPRESSIONS.get(workload.name)
            if expression is None:
                return None
            import numexpr

            names = dict(zip(("x",), args))
            return lambda: numexpr.evaluate(expression, local_dict=names)
        if name == "jax":
            import jax
            import jax.numpy as jnp

            fn = twin(workload, "jax", jnp)
            if fn is None:
                return None
            compiled = jax.jit(fn)
            device_args = [jax.device_put(a) if isinstance(a, np.ndarray) else a for a in args]

            def run():
                out = compiled(*device_args)
                jax.block_until_ready(out)
                return out

            return run
        if name == "torch":
            import torch

            fn = twin(workload, "torch", torch)
            if fn is None:
                return None
            compiled = torch.compile(fn)
            tensors = [torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args]
            return lambda: compiled(*tensors)
        raise ValueError(name)


def _as_numpy(value):
    if isinstance(value, tuple):
        return tuple(_as_numpy(v) for v in value)
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):  # a torch tensor
        return value.detach().numpy()
    return np.asarray(value)


def run(sizes, only, repeat: int, out: Path, stem: str | None, command: str) -> Path:
    import numba

    import numfuse

    peers = _Peers()
    rows, limits = [], {}
    for size in sizes:
        limits[size] = copy_limit(SIZES[size], repeat)
        print(f"[{size}] copy limit {limits[size]['gbs']:.1f} GB/s", flush=True)
        for workload in WORKLOADS:
            if only and workload.name not in only:
                continue
            args = workload.make(SIZES[size], np, 0)
            reference = workload.fn(*args)
            row = {"workload": workload.name, "size": size, "kind": workload.kind}
            row["numpy_ms"] = statistics.median(_times(lambda: workload.fn(*args), repeat))
            fused = numfuse.jit(workload.fn, target="cpu")
            start = time.perf_counter()
            first = fused(*args)
            row["numfuse_first_s"] = time.perf_counter() - start
            row["numfuse_error"] = _close(first, reference)
            row["numfuse_ms"] = statistics.median(_times(lambda: fused(*args), repeat))
            plan = fused.plan(*args)
            row["kernels"] = len(plan.kernels)
            row["bytes_moved"] = plan.bytes_moved
            row["numfuse_gbs"] = plan.bytes_moved / row["numfuse_ms"] / 1e6
            row["copy_pct"] = 100 * row["numfuse_gbs"] / limits[size]["gbs"]
            for name, present in peers.available.items():
                if not present:
                    row[f"{name}_ms"] = None
                    row[f"{name}_note"] = "not installed"
                    continue
                try:
                    call = peers.prepare(name, workload, args)
                    if call is None:
                        row[f"{name}_ms"] = None
                        row[f"{name}_note"] = "n/a"
                        continue
                    row[f"{name}_error"] = _close(_as_numpy(call()), reference)
                    row[f"{name}_ms"] = statistics.median(_times(call, repeat))
                except Exception as err:  # a peer that cannot run a workload: said in the table
                    row[f"{name}_ms"] = None
                    row[f"{name}_note"] = f"{type(err).__name__}"
            times = [row[f"{n}_ms"] for n in ("numpy", "numexpr", "jax", "torch") if row.get(f"{n}_ms")]
            row["vs_fastest_peer"] = min(times) / row["numfuse_ms"]
            row["vs_numpy"] = row["numpy_ms"] / row["numfuse_ms"]
            rows.append(row)
            print(f"[{size}] {workload.name}: numfuse {row['numfuse_ms']:.3f} ms, NumPy {row['numpy_ms']:.3f} ms "
                  f"({row['vs_numpy']:.2f}x), fastest peer ratio {row['vs_fastest_peer']:.2f}x, "
                  f"{row['copy_pct']:.0f}% of copy", flush=True)
    machine = {
        "cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
        "numba_threads": numba.config.NUMBA_NUM_THREADS, "threading_layer": _layer(),
        "numpy": np.__version__, "numba": numba.__version__,
    }
    commit = _commit()
    stem = stem or f"{time.strftime('%Y-%m-%d')}-{commit}-cpu-target"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{stem}.json"
    path.write_text(json.dumps({"command": command, "machine": machine, "copy": limits, "rows": rows}, indent=1))
    (out / f"{stem}.md").write_text(markdown(rows, limits, machine, command))
    print(f"wrote {path} and {path.with_suffix('.md')}")
    return path


def _layer() -> str:
    from numfuse.targets.cpu.loader import threading_layer

    return threading_layer()


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).parent).stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def _ms(row, name) -> str:
    value = row.get(f"{name}_ms")
    return f"{value:.3f}" if value else row.get(f"{name}_note", "n/a")


def markdown(rows, limits, machine, command) -> str:
    lines = [
             f"`{command}` on {machine['cores']} cores ({machine['cpu']}), Numba {machine['numba']} "
             f"({machine['numba_threads']} threads, {machine['threading_layer']} layer), NumPy {machine['numpy']}.",
             "Median wall-clock ms of each call; ratios above 1 mean numfuse is faster.", ""]
    for size, limit in limits.items():
        lines.append(f"Copy limit at {size} ({limit['bytes']} bytes): {limit['gbs']:.1f} GB/s "
                     f"(NumPy copyto {limit['numpy_ms']:.3f} ms, Numba prange copy {limit['numba_ms']:.3f} ms).")
    lines += ["", "| workload | size | kernels | numfuse ms | NumPy ms | numexpr ms | jax.jit ms | torch.compile ms "
              "| vs NumPy | vs fastest | % of copy | first call s |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['workload']} | {r['size']} | {r['kernels']} | {r['numfuse_ms']:.3f} | {r['numpy_ms']:.3f} "
                     f"| {_ms(r, 'numexpr')} | {_ms(r, 'jax')} | {_ms(r, 'torch')} | {r['vs_numpy']:.2f}x "
                     f"| {r['vs_fastest_peer']:.2f}x | {r['copy_pct']:.0f}% | {r['numfuse_first_s']:.2f} |")
    for size in limits:
        ratios = [r["vs_numpy"] for r in rows if r["size"] == size]
        if ratios:
            geo = float(np.exp(np.mean(np.log(ratios))))
            slowest = min(rows, key=lambda r: r["vs_numpy"] if r["size"] == size else np.inf)
            lines.append("")
            lines.append(f"{size}: geometric-mean speedup over NumPy {geo:.2f}x; slowest {slowest['workload']} "
                         f"{slowest['vs_numpy']:.2f}x.")
    return "\n".join(lines) + "\n"


def main(argv) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks --target cpu", description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=(*SIZES, "both"), default="both")
    parser.add_argument("--only", nargs="+", default=(), metavar="NAME", help=f"of: {', '.join(BY_NAME)}")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--name")
    args = parser.parse_args(argv)
    sizes = tuple(SIZES) if args.size == "both" else (args.size,)
    command = shlex.join(["python", "-m", "benchmarks", "--target", "cpu", *argv])
    run(sizes, tuple(args.only), max(1, args.repeat), args.out, args.name, command)
    return 0
