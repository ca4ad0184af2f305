"""The suite's GPU columns: the copy bandwidth, then every implementation timed on the same
device arrays and checked against a reference, then the kernels each launches.

Order (see suite.py): for each size, large first, and each workload: its inputs (made by CuPy on
the GPU), NumPy on the CPU (small size), plain CuPy, numfuse; then torch.compile, jax.jit and
cupy.fuse over every size and workload; then the kernel counts. Past `--max-seconds`, the peers
not yet run are skipped (numfuse and CuPy never are), and each skipped cell says so.
"""

from __future__ import annotations

import numpy as np

from benchmarks import output
from benchmarks.peers import (
    CuPy,
    CupyFuse,
    JaxJit,
    Numfuse,
    Peer,
    TorchCompile,
    flatten,
    max_rel_diff,
)
from benchmarks.suite import LARGE_FIRST, SIZES, Run, numpy_entry, report_error
from benchmarks.timing import DeviceTimer, count_kernels, first_call_seconds, median
from benchmarks.workloads import Workload

WARMUP_CALLS = 2  # after the first call, before the timed ones
NUMPY_LARGE_REPEAT = 3


class Session:
    def __init__(self, run: Run, cp):
        self.run = run
        self.cp = cp
        self.timer = DeviceTimer(cp)
        self.inputs: dict[tuple[str, str], tuple] = {}
        self.reference: dict[tuple[str, str], tuple[str, list]] = {}  # (which, outputs)
        self.to_count: list[tuple[dict, object]] = []
        self._missing: dict[str, str | None] = {}

    def missing(self, peer: Peer) -> str | None:
        if peer.key not in self._missing:
            try:
                self._missing[peer.key] = peer.missing()
            except Exception as err:  # noqa: BLE001  (a broken install: say so, go on)
                self._missing[peer.key] = report_error(f"{peer.label} unusable", err)
        return self._missing[peer.key]

    def copy_bandwidth(self) -> None:
        copy = self.timer.copy_bandwidth(max(self.run.options.repeat, 5))
        self.run.copy = {
            "bytes": copy.nbytes, "ms": copy.ms, "gbs": copy.gbs, "repeat": copy.repeat,
            "how": "cudaMemcpyAsync device to device; (bytes read + bytes written) / median time",
        }
        print(f"device-to-device copy: {copy.gbs:.0f} GB/s", flush=True)

    def baseline(self, w: Workload, size: str) -> None:
        """Inputs, NumPy on their host copies (the small size's reference), CuPy, numfuse."""
        cp, opts = self.cp, self.run.options
        key = (w.name, size)
        row = self.run.row(*key)
        args = self.inputs[key] = w.make(SIZES[size], cp, 0)
        if size == "small" or opts.numpy_large:
            host = [cp.asnumpy(a) if isinstance(a, cp.ndarray) else a for a in args]
            repeat = opts.repeat if size == "small" else min(opts.repeat, NUMPY_LARGE_REPEAT)
            row["impls"]["numpy"] = numpy_entry(w, host, repeat)
            expected = [cp.asarray(np.asarray(e)) for e in flatten(w.fn(*host))]
            self.reference[key] = ("numpy", expected)
        else:
            row["impls"]["numpy"] = {"status": "not run: large size (--numpy-large)"}
        self.measure(CuPy(cp), w, size)
        self.measure(Numfuse(cp), w, size)

    def measure(self, peer: Peer, w: Workload, size: str) -> None:
        opts = self.run.options
        key = (w.name, size)
        row = self.run.row(*key)
        entry: dict = {"timer": peer.timer}
        row["impls"][peer.key] = entry
        if peer.key not in ("numfuse", "cupy") and self.run.over_budget():
            entry["status"] = f"skipped: --max-seconds {opts.max_seconds:g} spent"
            return
        missing = self.missing(peer)
        if missing:
            entry["status"] = f"not run: {missing}"
            return
        try:
            call = peer.prepare(w, self.inputs[key])
            if call is None:
                entry["status"] = "no twin"
                return
            entry["first_call_s"] = first_call_seconds(call, self.timer.synchronize)
            for _ in range(WARMUP_CALLS):
                result = call()
            if peer.timer == "wall":
                times = self.timer.wall_times(call, opts.repeat)
            else:
                times = self.timer.event_times(call, opts.repeat, peer.events)
            outputs = [peer.to_cupy(o) for o in flatten(result)]
        except Exception as err:  # noqa: BLE001  (report it in the table, go on with the rest)
            entry["status"] = "error: " + report_error(f"{peer.label} on {w.name} ({size})", err)
            return
        ms = median(times)
        gbs = row["min_bytes"] / ms / 1e6
        entry.update(status="ok", ms=ms, times_ms=times, gbs=gbs, pct_of_copy=100 * gbs / self.run.copy["gbs"])
        if peer.key == "numfuse":
            entry["kernels"] = row["kernels"]
        if key not in self.reference:
            self.reference[key] = (peer.key, outputs)  # plain CuPy, at the large size
        else:
            which, expected = self.reference[key]
            entry["reference"] = which
            try:
                entry["max_rel_diff"] = max_rel_diff(self.cp, outputs, expected)
            except Exception as err:  # noqa: BLE001
                entry["max_rel_diff"] = None
                entry["status"] = "wrong: " + report_error(f"{peer.label} on {w.name} ({size})", err)
        self.to_count.append((entry, call))
        print(f"{peer.label} {w.name} ({size}): {ms:.4f} ms, {gbs:.0f} GB/s, "
              f"{entry['pct_of_copy']:.0f}% of copy, first call {entry['first_call_s']:.2f} s", flush=True)

    def count_all_kernels(self) -> None:
        """Kernels per call of every implementation timed, counted by the profiler."""
        for entry, call in self.to_count:
            if self.run.over_budget():
                self.run.meta["kernel_count"] = "Kernels partly counted: --max-seconds spent."
                return
            try:
                n, names = count_kernels(call, self.timer.synchronize)
            except ImportError:
                self.run.meta["kernel_count"] = "Kernels not counted: PyTorch's profiler is not installed."
                return
            except Exception as err:  # noqa: BLE001
                self.run.meta["kernel_count"] = "Kernels not counted: " + report_error("kernel count", err)
                return
            entry["kernels_profiled"] = n
            entry["kernel_names"] = names[:12]
            entry.setdefault("kernels", n)
        self.run.meta["kernel_count"] = "Kernels per call counted by PyTorch's profiler (CUPTI), one call each."


def gpu_columns(run: Run, workloads: list[Workload], cp) -> None:
    session = Session(run, cp)
    opts = run.options
    session.copy_bandwidth()
    sizes = [s for s in LARGE_FIRST if s in opts.sizes]
    for size in sizes:
        for w in workloads:
            session.baseline(w, size)
            output.write(run.data(), opts.out, run.meta["stem"])
    # The large size first, where the targets are judged, and at each size torch.compile (the
    # peer numfuse must not be slower than) before jax.jit and cupy.fuse. Results are written
    # after every measurement, so a run cut short keeps all it measured.
    peers = (TorchCompile(cp), JaxJit(cp), CupyFuse(cp))
    for size in sizes:
        for peer in peers:
            for w in workloads:
                session.measure(peer, w, size)
                output.write(run.data(), opts.out, run.meta["stem"])
    session.count_all_kernels()
