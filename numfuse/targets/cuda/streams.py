"""Which CUDA stream a call's kernels run on, and kernel launchers configured for that stream.

A stream reaches numfuse in one of three forms: Numba's own stream objects (`cuda.stream()`,
`cuda.default_stream()`, also the simulator's), a foreign stream object (CuPy's `Stream`,
PyTorch's `torch.cuda.Stream`, cuda.core's `Stream`, anything with `__cuda_stream__`), or a raw
`CUstream` handle as an int. `launch_stream` turns any of them into what Numba launches take: a
Numba stream, or 0 for the default stream.

Copies go through Numba streams; kernels launch on the stream's CUstream handle (launch.py).
"""

from __future__ import annotations

from typing import Any

# Special CUstream handles (CUDA's cuda.h): 0 is the legacy default stream, which CUDA array
# interface and DLPack producers call 1; 2 is the per-thread default stream.
LEGACY_DEFAULT = 1
PER_THREAD_DEFAULT = 2


def is_numba_stream(stream) -> bool:
    """A stream object made by numba.cuda (real or simulated), told apart without importing it."""
    return type(stream).__module__.startswith(("numba.", "numba_cuda."))


def foreign_stream_handle(stream) -> int | None:
    """The CUstream handle of a stream object of another library, or None if it is not one.

    Checked in order: the `__cuda_stream__` protocol (cuda.core, recent CuPy and PyTorch),
    PyTorch's `.cuda_stream`, CuPy's `.ptr`, cuda.core's `.handle`."""
    if isinstance(stream, bool):
        return None
    if isinstance(stream, int):
        return stream
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        return int(protocol()[1])
    for attribute in ("cuda_stream", "ptr", "handle"):
        value = getattr(stream, attribute, None)
        if value is not None:
            try:
                return int(value)
            except TypeError:
                continue
    return None


def check_stream_option(stream) -> None:
    """`numfuse.jit(stream=...)`: refuse early what no call could launch on."""
    if stream is None or is_numba_stream(stream) or foreign_stream_handle(stream) is not None:
        return
    raise TypeError(
        f"numfuse.jit(stream=...) takes a Numba stream (numba.cuda.stream()), a CuPy or PyTorch "
        f"stream, an object with __cuda_stream__, or a CUstream handle as an int; got "
        f"{type(stream).__module__}.{type(stream).__qualname__}"
    )


def launch_stream(cuda, simulated: bool, stream) -> Any:
    """`stream` (any form above, or None for the default stream) as a Numba launch takes it.

    Call inside the device's context: a foreign handle is wrapped for the current context."""
    if stream is None or is_numba_stream(stream):
        return stream or 0
    handle = foreign_stream_handle(stream)
    if handle is None:
        check_stream_option(stream)  # raises
    if handle == 0 or simulated:
        # The simulator runs every kernel and copy synchronously, in order: any stream is the
        # default stream there (and it cannot wrap foreign handles).
        return 0
    return cuda.external_stream(handle)


def handle_of(stream) -> int | None:
    """The CUstream handle behind a launch stream (0 for the default stream), or None where
    there is none (the simulator's streams)."""
    if not stream:
        return 0
    handle = getattr(stream, "handle", None)
    if handle is None:
        return None
    try:
        return int(handle)
    except TypeError:
        value = getattr(handle, "value", None)  # a ctypes handle, in older numba-cuda
        return int(value) if value is not None else None


def same_stream(producer: int | None, consumer: int | None) -> bool:
    """Whether work a producer queued on CUDA array interface stream `producer` is ordered
    before a kernel launched on handle `consumer`. None from a producer means it queued
    nothing that needs waiting for."""
    if producer is None:
        return True
    if consumer is None:
        return False
    # The legacy default stream has two spellings, on either side: 0 and 1 (CU_STREAM_LEGACY).
    return (0 if producer == LEGACY_DEFAULT else producer) == (0 if consumer == LEGACY_DEFAULT else consumer)


def dlpack_stream(consumer: int | None) -> int | None:
    """The `stream` to pass to `__dlpack__`: the consumer's stream, with the legacy default
    stream spelt 1 as the DLPack protocol asks (0 is not allowed there)."""
    if consumer is None:
        return None
    return LEGACY_DEFAULT if consumer == 0 else consumer
