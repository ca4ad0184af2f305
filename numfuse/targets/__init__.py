"""The targets a plan can run on, one folder each: targets/cuda (Numba CUDA kernels, on a GPU or
Numba's simulator) and targets/cpu (Numba parallel CPU functions). `choose` picks one for
numfuse.jit's `target` option; `by_name` gives a target by name."""

from __future__ import annotations

import functools
import os
import warnings

from .base import Target

NAMES = ("auto", "cuda", "cpu")


def by_name(name: str) -> Target:
    if name == "cuda":
        from .cuda import CUDA

        return CUDA
    if name == "cpu":
        from .cpu import CPU

        return CPU
    raise ValueError(f"numfuse: unknown target {name!r}; choose one of {', '.join(NAMES)}")


def requested(option: str | None) -> str:
    """The target asked for: numfuse.jit's option, else NUMFUSE_TARGET, else "auto"."""
    name = option or os.environ.get("NUMFUSE_TARGET") or "auto"
    if name not in NAMES:
        source = "target" if option else "NUMFUSE_TARGET"
        raise ValueError(f"numfuse: unknown {source} {name!r}; choose one of {', '.join(NAMES)}")
    return name


def choose(name: str, device_arguments: bool) -> Target:
    """The target for a call: `name` unless it is "auto", which is CUDA where device arrays are
    passed or a GPU is found (Numba's CUDA simulator only when asked for), else the CPU."""
    if name != "auto":
        return by_name(name)
    if device_arguments or gpu_found():
        return by_name("cuda")
    _say_cpu_once()
    return by_name("cpu")


@functools.lru_cache(maxsize=None)
def _say_cpu_once() -> None:
    from ..errors import TargetWarning, user_stacklevel

    warnings.warn("numfuse found no CUDA GPU: it runs on the CPU target (numfuse.jit(target='cpu'); "
                  "NUMFUSE_TARGET=cpu says so and silences this)", TargetWarning, stacklevel=user_stacklevel())


_GPU_FOUND: list[bool] = []  # probed once per process


def gpu_found() -> bool:
    """Whether a CUDA driver reports a device (without importing numba.cuda). The simulator
    is not a GPU: target="cuda" with NUMBA_ENABLE_CUDASIM=1 asks for it."""
    if not _GPU_FOUND:
        from .cuda.device import driver_has_device

        _GPU_FOUND.append(driver_has_device())
    return _GPU_FOUND[0]


__all__ = ["NAMES", "Target", "by_name", "choose", "gpu_found", "requested"]
