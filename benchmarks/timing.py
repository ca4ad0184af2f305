"""Timing on the GPU (CUDA events, an L2 flush before every timed call, the device-to-device
copy bandwidth every result is compared with), on the host, and a kernel counter.

Every timed GPU call runs as: read a buffer larger than L2 (so the call's inputs come from
memory, not from the cache the previous call left warm, and no dirty line is left for the call
to write back), wait for the device to be idle, record
a start event, make the call, record an end event, wait. The GPU is idle when the start event is
recorded, so a call whose host side (argument checks, launches) is slower than its kernels shows
that cost too: at the small size that is what the time measures. The median of the repeats is
reported. JAX runs its kernels on its own streams, so its calls are timed on the host, around
the call and `block_until_ready`, after the same flush.

Everything here needs CuPy and a GPU, except `host_times`.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

L2_FLUSH_BYTES = 256 * 2**20  # H200's L2 is 60 MiB (50 MiB on H100): four times over
COPY_BYTES = 2**30  # the reference copy: 1 GiB read and 1 GiB written


def median(values) -> float:
    return statistics.median(values)


def host_times(run: Callable, repeat: int, warmup: int = 1) -> list[float]:
    """Milliseconds of each of `repeat` calls of `run`, on the host clock, after `warmup`."""
    for _ in range(warmup):
        run()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1e3)
    return times


@dataclass
class CopyResult:
    nbytes: int  # bytes read (the same again written)
    ms: float
    gbs: float  # (read + written) / time
    repeat: int


class DeviceTimer:
    """CUDA-event timing on CuPy's current stream, with an L2 flush before each timed call."""

    def __init__(self, cp, flush_bytes: int | None = None):
        self.cp = cp
        self._flush_buffer = cp.ones(flush_bytes or L2_FLUSH_BYTES, dtype=cp.uint8)

    def synchronize(self) -> None:
        """Wait for every stream of the device (JAX's too)."""
        self.cp.cuda.Device().synchronize()

    def flush_l2(self) -> None:
        # Read, not write: reading evicts what the last call left in L2 (its dirty lines are
        # written back now, untimed) and leaves only clean lines, which cost the timed call
        # nothing to evict. Written lines would be written back during the timed call.
        self._flush_buffer.max()

    def event_times(self, run: Callable, repeat: int, events: Callable | None = None) -> list[float]:
        """Milliseconds of each of `repeat` calls between two device events. `events()` gives a
        (start, end, elapsed_ms) triple on the stream `run` launches on; by default CuPy's
        events on CuPy's current stream."""
        cp = self.cp
        if events is None:
            def events():
                return cp.cuda.Event(), cp.cuda.Event(), cp.cuda.get_elapsed_time
        times = []
        for _ in range(repeat):
            start, end, elapsed = events()
            self.flush_l2()
            self.synchronize()
            start.record()
            run()
            end.record()
            end.synchronize()
            times.append(elapsed(start, end))
        return times

    def wall_times(self, run: Callable, repeat: int) -> list[float]:
        """Milliseconds of each of `repeat` calls on the host clock, `run` waiting for its own
        results (JAX: block_until_ready), after the same L2 flush and an idle device."""
        times = []
        for _ in range(repeat):
            self.flush_l2()
            self.synchronize()
            start = time.perf_counter()
            run()
            times.append((time.perf_counter() - start) * 1e3)
        return times

    def copy_bandwidth(self, repeat: int, nbytes: int = COPY_BYTES) -> CopyResult:
        """A device-to-device copy (cudaMemcpyAsync) of `nbytes`: the bandwidth a kernel that
        reads and writes each byte once can hope for on this GPU, measured in this run."""
        cp = self.cp
        src = cp.ones(nbytes, dtype=cp.uint8)
        dst = cp.empty_like(src)

        def copy():
            dst.data.copy_from_device_async(src.data, nbytes)

        copy()  # warm-up
        ms = median(self.event_times(copy, repeat))
        return CopyResult(nbytes, ms, 2 * nbytes / ms / 1e6, repeat)


def first_call_seconds(run: Callable, synchronize: Callable) -> float:
    """Seconds of a first call (tracing, compiling, running), synchronized."""
    synchronize()
    start = time.perf_counter()
    run()
    synchronize()
    return time.perf_counter() - start


def count_kernels(run: Callable, synchronize: Callable) -> tuple[int, list[str]]:
    """Kernels launched by one call of `run`, and their names, as CUPTI sees them through
    PyTorch's profiler: every kernel of the process, whichever library launched it (CuPy, Numba,
    Triton, XLA). Raises ImportError without PyTorch. Run it after the timings: the profiler may
    leave CUPTI hooks that slow later launches."""
    from torch.profiler import ProfilerActivity, profile

    synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        run()
        synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.json"
        prof.export_chrome_trace(str(path))
        trace = json.loads(path.read_text())
    events = trace.get("traceEvents", trace) if isinstance(trace, dict) else trace
    names = [e.get("name", "") for e in events if isinstance(e, dict) and e.get("cat") == "kernel"]
    return len(names), names
