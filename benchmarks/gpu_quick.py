"""Time the workloads on a GPU: numfuse against NumPy (CPU), plain CuPy and torch.compile.

    python -m benchmarks.gpu_quick --out DIR [--size-mb 256] [--repeats 20]

For each workload: numfuse's kernel count and modeled bytes, the first call (trace, plan,
compile, run), the median time of later calls (CUDA events, device arrays in and out), the
achieved bandwidth (minimum bytes / time) and its percentage of a device-to-device copy measured
in the same run, NumPy's time on the host and CuPy's time on the device, and the largest
relative difference between numfuse's results and NumPy's; plain CuPy and torch.compile (where
installed, with a CUDA device) on the same data. Writes DIR/gpu_quick.md and
DIR/gpu_quick.json. On the CUDA simulator (`--size-mb 0.01`) it checks its own code paths.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import time
from pathlib import Path

import numpy as np

import numfuse
from benchmarks.workloads import WORKLOADS, torch_fn


def _median_ms(run, repeats: int, timer) -> float:
    run()  # warm-up
    times = []
    for _ in range(repeats):
        times.append(timer(run))
    return statistics.median(times)


def _event_timer(make_event, elapsed_ms):
    """Milliseconds of one run between two device events (start and end recorded around it)."""

    def timer(run):
        start, end = make_event(), make_event()
        start.record()
        run()
        end.record()
        end.synchronize()
        return elapsed_ms(start, end)

    return timer


def _numba_timer(cuda):
    return _event_timer(cuda.event, lambda start, end: start.elapsed_time(end))


def _cupy_timer(cp):
    return _event_timer(cp.cuda.Event, cp.cuda.get_elapsed_time)


def _torch_timer(torch):
    return _event_timer(lambda: torch.cuda.Event(enable_timing=True), lambda start, end: start.elapsed_time(end))


def _torch():
    try:
        import torch

        return torch if torch.cuda.is_available() else None
    except Exception:  # noqa: BLE001  (not installed, or no CUDA build)
        return None


def _host_timer(run):
    start = time.perf_counter()
    run()
    return (time.perf_counter() - start) * 1e3


def _flatten(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _max_rel_diff(got, expected) -> float:
    worst = 0.0
    for g, e in zip(_flatten(got), _flatten(expected)):
        g = np.asarray(g, dtype=np.float64)
        e = np.asarray(e, dtype=np.float64)
        scale = np.maximum(np.abs(e), 1e-30)
        worst = max(worst, float(np.max(np.abs(g - e) / scale)) if e.size else 0.0)
    return worst


def _gpu_name(cuda) -> str:
    try:
        name = cuda.get_current_device().name
        return name.decode() if isinstance(name, bytes) else str(name)
    except Exception:  # the simulator
        return "CUDA simulator"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--size-mb", type=float, default=256.0, help="input data per workload")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--numpy-repeats", type=int, default=3)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    from numba import cuda

    try:
        import cupy as cp
    except Exception:  # noqa: BLE001  (CuPy missing or without a GPU)
        cp = None
    torch = _torch()
    n_bytes = int(args.size_mb * 2**20)
    rng = np.random.default_rng(0)
    timer = _numba_timer(cuda)

    # Device-to-device copy of the same size: the bandwidth every workload is compared against.
    src = cuda.device_array(n_bytes // 4, np.float32)
    dst = cuda.device_array(n_bytes // 4, np.float32)
    copy_ms = _median_ms(lambda: dst.copy_to_device(src), args.repeats, timer)
    copy_gbs = 2 * src.nbytes / copy_ms / 1e6

    rows = []
    for w in WORKLOADS:
        host_args = w.make(n_bytes, np, rng)
        jf = numfuse.jit(w.fn)
        plan = jf.plan(*host_args)
        dev_args = [cuda.to_device(a) for a in host_args]
        start = time.perf_counter()
        jf(*dev_args)
        cuda.synchronize()
        first_s = time.perf_counter() - start
        nf_ms = _median_ms(lambda: jf(*dev_args), args.repeats, timer)
        got = [o.copy_to_host() for o in _flatten(jf(*dev_args))]
        np_ms = _median_ms(lambda: w.fn(*host_args), args.numpy_repeats, _host_timer)
        expected = w.fn(*host_args)
        row = {
            "workload": w.name,
            "input_mb": sum(a.nbytes for a in host_args) / 2**20,
            "kernels": len(plan.kernels),
            "bytes_moved": plan.bytes_moved,
            "min_bytes": plan.min_bytes,
            "first_call_s": first_s,
            "numfuse_ms": nf_ms,
            "numfuse_gbs": plan.min_bytes / nf_ms / 1e6,
            "pct_of_copy": 100 * plan.min_bytes / nf_ms / 1e6 / copy_gbs,
            "numpy_ms": np_ms,
            "max_rel_diff_vs_numpy": _max_rel_diff(got, expected),
            "cupy_ms": None,
            "torch_compile_ms": None,
        }
        if cp is not None:
            cp_args = [cp.asarray(a) for a in host_args]
            row["cupy_ms"] = _median_ms(lambda: w.fn(*cp_args), args.repeats, _cupy_timer(cp))
        twin = torch_fn(w.name) if torch is not None else None
        if twin is not None:
            try:
                compiled = torch.compile(twin)
                t_args = [torch.as_tensor(a, device="cuda") for a in host_args]
                row["torch_compile_ms"] = _median_ms(lambda: compiled(*t_args), args.repeats, _torch_timer(torch))
            except Exception as err:  # noqa: BLE001  (report, and keep the other columns)
                print(f"torch.compile failed on {w.name}: {err}", flush=True)
        rows.append(row)
        print(json.dumps(row), flush=True)

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "gpu": _gpu_name(cuda),
        "commit": commit or "unknown",
        "host": platform.node(),
        "numfuse": numfuse.__version__,
        "size_mb": args.size_mb,
        "copy_gbs": copy_gbs,
    }
    (args.out / "gpu_quick.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
    lines = [
        f"# numfuse quick GPU benchmark ({meta['date']})",
        "",
        f"GPU: {meta['gpu']}; commit {meta['commit']}; {args.size_mb:g} MB of input per workload; "
        f"device-to-device copy {copy_gbs:.0f} GB/s (read + write) in this run.",
        "Command: `bash benchmarks/gpu_check.sh DIR` (`python -m benchmarks.gpu_quick`).",
        "",
        "| workload | kernels | bytes moved / min | numfuse first call (s) | numfuse (ms) | GB/s | % of copy | CuPy (ms) | torch.compile (ms) | NumPy CPU (ms) | max rel diff |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cupy = f"{r['cupy_ms']:.3f}" if r["cupy_ms"] is not None else "n/a"
        tc = f"{r['torch_compile_ms']:.3f}" if r["torch_compile_ms"] is not None else "n/a"
        lines.append(
            f"| {r['workload']} | {r['kernels']} | {r['bytes_moved'] / r['min_bytes']:.2f} | {r['first_call_s']:.2f} | "
            f"{r['numfuse_ms']:.3f} | {r['numfuse_gbs']:.0f} | {r['pct_of_copy']:.0f}% | {cupy} | {tc} | {r['numpy_ms']:.1f} | "
            f"{r['max_rel_diff_vs_numpy']:.1e} |"
        )
    (args.out / "gpu_quick.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
