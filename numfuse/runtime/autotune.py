"""`numfuse.jit(autotune=True)`: time each kernel's candidate launch configurations at its first
launch, keep the fastest, and remember it on disk.

The cost model (device.py) picks one configuration from sizes and the device's properties;
every template is correct for any configuration it could pick, so the others are as correct
and only their speed differs. With autotune a kernel's first launch runs each candidate
(`candidates`: the model's choice first) once to warm up and then `REPEATS` times, timed with
the device synchronized around them, and the fastest wins. Each candidate computes the same
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

from ..loopnest import format_loopnest
from .device import LaunchConfig, pointwise_config, reduction_config
from .kernel_cache import _code, cache_dir

REPEATS = 5
# The reduction templates' shared arrays hold 256 partial results (codegen.cuda.MAX_THREADS).
REDUCTION_THREADS = (64, 128, 256)
POINTWISE_THREADS = (128, 256, 512, 1024)
SIM_THREADS = (8, 16)


def candidates(nest, backend) -> list[LaunchConfig]:
    """The configurations worth timing for a kernel: the cost model's choice first."""
    chosen = backend.launch_config(nest)
    found = [chosen]
    if nest.kind == "pointwise":
        for threads in SIM_THREADS if backend.simulated else POINTWISE_THREADS:
            found.append(pointwise_config(nest.outer_size, threads, backend.sm_count, backend.simulated))
    else:
        for threads in SIM_THREADS if backend.simulated else REDUCTION_THREADS:
            found.append(reduction_config(nest, threads, backend.sm_count, backend.simulated))
    return list(dict.fromkeys(found))


def device_name(backend) -> str:
    if backend.simulated:
        return "simulator"
    device = backend.cuda.get_current_device()
    name = device.name.decode() if isinstance(device.name, bytes) else str(device.name)
    return f"{name} cc{device.compute_capability} {backend.sm_count} SMs"


def entry_path(source, nest, backend) -> Path:
    key = hashlib.sha256("\n".join([_code(source.source), format_loopnest(nest), device_name(backend)]).encode())
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
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(record, f, indent=1)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache: time again next process


def fastest(options: Sequence[LaunchConfig], run: Callable[[LaunchConfig], None], synchronize: Callable[[], None]
            ) -> tuple[LaunchConfig, dict[LaunchConfig, float]]:
    """Time `run(config)` for each option; the fastest and every time (seconds per launch)."""
    timings = {}
    for config in options:
        run(config)  # warm up (and, on a GPU, load the kernel)
        synchronize()
        start = time.perf_counter()
        for _ in range(REPEATS):
            run(config)
        synchronize()
        timings[config] = (time.perf_counter() - start) / REPEATS
    return min(timings, key=timings.get), timings
