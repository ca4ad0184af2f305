"""`numfuse.jit(autotune=True)`: time each kernel's candidate launch configurations at its first
launch, keep the fastest, and remember it on disk.

The cost model (device.py) picks one configuration from sizes and the device's properties;
every template is correct for any configuration it could pick, so the others are as correct
and only their speed differs. With autotune a kernel's first launch runs each candidate
(`candidates`: the model's choice first) once to warm up and then `REPEATS` times, timed
between two CUDA events on the call's stream (by the host's clock on the simulator), each
compiled, loaded and packed before its timing, and the fastest wins. Each candidate computes the same
values into the same buffers, so the call's results are those of any of them; a kernel that
reads a buffer it writes (an in-place update) would not be idempotent and keeps the model's
choice untimed.

Winners are kept in `<cache dir>/autotune/<key>.json`, keyed by the kernel's code, its loop
nest with sizes and the device, so a later process (or another function with the same kernel)
uses the winner without timing. A file that cannot be read is ignored and timed again.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Callable, Sequence

from .codegen import kernel_code
from ...loops.loopnest import format_loopnest
from .kernel_cache import cache_dir
from .launch_model import LaunchConfig, candidate_configs
from ...runtime.kernel_files import private_dir

REPEATS = 5


def candidates(nest, backend) -> list[LaunchConfig]:
    """The configurations worth timing for a kernel: the cost model's choice first, then the
    alternatives it offers (launch_model.candidate_configs: block sizes, points per thread,
    rows per block, chunks of a split row)."""
    return list(dict.fromkeys(candidate_configs(nest, backend.props)))


def device_name(backend) -> str:
    if backend.simulated:
        return "simulator"
    device = backend.cuda.get_current_device()
    name = device.name.decode() if isinstance(device.name, bytes) else str(device.name)
    return f"{name} cc{device.compute_capability} {backend.sm_count} SMs"


def entry_path(source, nest, backend) -> Path:
    key = hashlib.sha256("\n".join([kernel_code(source.source), format_loopnest(nest), device_name(backend)]).encode())
    return cache_dir() / "autotune" / f"{source.name}_{key.hexdigest()[:24]}.json"


def load(path: Path, options: Sequence[LaunchConfig]) -> LaunchConfig | None:
    """The stored winner, if the entry is sound and names one of `options`."""
    try:
        stored = json.loads(path.read_text())
        winner = LaunchConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in stored["winner"].items()})
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return winner if winner in options else None


def save(path: Path, winner: LaunchConfig, timings: dict[LaunchConfig, float]) -> None:
    record = {"winner": asdict(winner),
              "seconds": [{"config": asdict(c), "seconds": t} for c, t in timings.items()]}
    try:
        private_dir(path.parent)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(record, f, indent=1)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache: time again next process


def host_elapsed(launch: Callable[[], None], times: int) -> float:
    """Seconds `times` launches take by the host's clock (the simulator runs them at once)."""
    start = time.perf_counter()
    for _ in range(times):
        launch()
    return time.perf_counter() - start


def event_elapsed(cuda, stream) -> Callable[[Callable[[], None], int], float]:
    """Seconds `times` launches take on `stream` between two CUDA events: the device's time,
    without the host's before the first launch or after the last."""
    def elapsed(launch: Callable[[], None], times: int) -> float:
        start, end = cuda.event(), cuda.event()
        start.record(stream)
        for _ in range(times):
            launch()
        end.record(stream)
        end.synchronize()
        return cuda.event_elapsed_time(start, end) / 1e3

    return elapsed


def fastest(options: Sequence[LaunchConfig], prepare: Callable[[LaunchConfig], Callable[[], None]],
            elapsed: Callable[[Callable[[], None], int], float]) -> tuple[LaunchConfig, dict[LaunchConfig, float]]:
    """Time each option; the fastest and every time (seconds per launch). `prepare(config)`
    makes that configuration's launch (compiled, loaded and packed, untimed); `elapsed(launch,
    n)` times n of them. An alternative whose first launch fails (a driver refusing a launch
    with opted-in shared memory, say) is left out; a failure of the first option, the cost
    model's, is raised."""
    timings = {}
    for config in options:
        try:
            launch = prepare(config)
            elapsed(launch, 1)  # warm up; the device may refuse it
        except Exception:  # noqa: BLE001 - an alternative the device refuses is no winner
            if config is options[0]:
                raise  # the model's own choice: a real failure
            continue
        timings[config] = elapsed(launch, REPEATS) / REPEATS
    return min(timings, key=timings.get), timings
