"""One call's arrays: which library and GPU a call runs on, the stream its kernels use, where its
buffers are allocated and what kind of array its results come back as.

The rule for one call (README and docs/user-guide.md, "Array kinds"):

- No device array among the arguments: NumPy in, NumPy out. NumPy arguments are copied to the
  current GPU and the results are copied back; that copy is the one place numfuse waits for
  the GPU.
- Otherwise every device array argument must come from one library and lie on one GPU (else
  UnsupportedError, or ValueError for two GPUs). NumPy arguments are copied to that GPU, every
  buffer the call needs (results and intermediates) is allocated through that library (CuPy's
  memory pool, PyTorch's caching allocator), the kernels read the device arguments in place,
  results come back as that library's arrays, and nothing waits.

`prepare_call` applies the rule and returns the call's `CallArrays`; `fast_access` is what the
fast path (fastcall.py) needs of a library. The libraries themselves (recognising, describing,
viewing and allocating their arrays) are in libraries.py.
"""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ...errors import UnsupportedError
from . import streams
from .libraries import Library, library_of


# -- the fast path of a call (fastcall.py) ------------------------------------------------------


@dataclass(frozen=True)
class FastAccess:
    """What a fast call needs of a library, each a plain function: an array's data as the
    kernels take it (its device pointer; on the simulator the array itself), a new array as
    (what the caller gets, its data), and the CUstream handle its work goes to now."""

    data: Any
    empty: Any
    stream_handle: Any


def fast_access(library: "Library | None", backend) -> FastAccess | None:
    """The fast path's access to `library`'s arrays, or None where only the full path serves."""
    cuda = backend.cuda
    name = library.name if library is not None else None
    if backend.simulated:
        if name != "numba":
            return None

        def empty(shape, dtype):
            array = cuda.device_array(shape, dtype)
            return array, array

        return FastAccess(lambda a: a, empty, lambda: 0)
    if name == "numba":

        def empty(shape, dtype):
            array = cuda.device_array(shape, dtype)
            return array, array.__cuda_array_interface__["data"][0]

        return FastAccess(lambda a: a.__cuda_array_interface__["data"][0], empty, lambda: 0)
    if name == "cupy":
        cupy = sys.modules["cupy"]

        def empty(shape, dtype):
            array = cupy.empty(shape, dtype)
            return array, array.data.ptr

        return FastAccess(lambda a: a.data.ptr, empty, lambda: cupy.cuda.get_current_stream().ptr)
    if name == "torch":
        torch = sys.modules["torch"]
        device = torch.device("cuda", torch.cuda.current_device())

        def empty(shape, dtype):
            tensor = torch.empty(shape, dtype=getattr(torch, np.dtype(dtype).name), device=device)
            return tensor, tensor.data_ptr()

        return FastAccess(lambda t: t.data_ptr(), empty, lambda: torch.cuda.current_stream().cuda_stream)
    return None


# -- one call --------------------------------------------------------------------------------


class CallArrays:
    """Where one call's arrays live: the library and GPU of its device arguments (none: NumPy in,
    NumPy out), the stream its kernels run on, and the buffers allocated for it.

    Use as a context manager around everything the call does on the GPU: it enters the GPU's
    context (Numba's and the library's) and picks the stream."""

    def __init__(self, backend, library: Library | None, device_id: int | None, stream, first=None):
        self.cuda = backend.cuda
        self.simulated = backend.simulated
        self.library = library
        self.device_id = device_id
        self._stream_option = stream
        self._first = first
        self.stream: Any = 0
        self.handle: int | None = 0
        self._results: dict[int, tuple[Any, Any]] = {}  # id(view) -> (view, library array)
        self._contexts = contextlib.ExitStack()

    @property
    def on_device(self) -> bool:
        """Whether results stay on the device (some argument is a device array)."""
        return self.library is not None

    def __enter__(self) -> "CallArrays":
        try:
            if self.device_id is not None:
                self._contexts.enter_context(self.cuda.gpus[self.device_id])
            chosen = self._stream_option
            if self.library is not None:
                self._contexts.enter_context(self.library.device_context(self.device_id))
                if chosen is None:
                    chosen = self.library.current_stream(self.device_id, self._first)
            self.stream = streams.launch_stream(self.cuda, self.simulated, chosen)
            self.handle = streams.handle_of(self.stream)
        except BaseException:
            self._contexts.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._contexts.close()

    def input(self, value):
        """The device array the kernels read argument `value` through, or None for a scalar."""
        if isinstance(value, np.ndarray):
            if self.library is None and value.flags.f_contiguous and not value.flags.c_contiguous:
                return self.upload(value)  # kept Fortran-ordered; kernels index through strides
            # Other strided host arrays (steps, negative or zero strides) travel compacted: the
            # kernels index them at their own rank, whatever their strides on the device.
            return self.upload(np.ascontiguousarray(value))
        if self.library is not None and self.library.owns(value):
            return self.library.view(self.cuda, value, self.handle)
        return None

    def empty(self, shape, dtype):
        """A new device buffer, allocated through the call's library."""
        if self.library is None:
            return self.cuda.device_array(shape, dtype, stream=self.stream)
        own_stream = self.handle if self._stream_option is not None else None
        array, view = self.library.empty(self.cuda, shape, dtype, self.device_id, self.stream, own_stream)
        if array is not view:
            self._results[id(view)] = (view, array)
        return view

    def upload(self, host: np.ndarray):
        """A copy of host array `host` on the device, queued on the call's stream."""
        if self.library is None:
            return self.cuda.to_device(host, stream=self.stream)
        view = self.empty(host.shape, host.dtype)
        if host.size:
            view.copy_to_device(host, stream=self.stream)
        return view

    def upload_constants(self, arrays: dict) -> dict:
        """Constant arrays the executable keeps for later calls, which may run on other streams:
        Numba's memory, and waited for once."""
        uploaded = {key: self.cuda.to_device(array, stream=self.stream) for key, array in arrays.items()}
        if arrays and self.stream:
            self.stream.synchronize()
        return uploaded

    def result(self, view):
        """What the caller gets for device buffer `view`: the library's array behind it."""
        entry = self._results.get(id(view))
        return view if entry is None else entry[1]

    def read(self, view) -> np.ndarray:
        """`view` copied to a new NumPy array. Waits for the call's stream: its kernels wrote it."""
        host = view.copy_to_host(stream=self.stream)
        if self.stream:
            self.stream.synchronize()
        return host


def prepare_call(backend, names: Sequence[str], values: Sequence[Any], stream=None) -> CallArrays:
    """Check the array arguments of one call against the rule above and say where it runs.

    `names` name `values` in messages; `stream` is numfuse.jit's stream option (None: the
    device arguments' library's current stream, else the default stream)."""
    found = []  # (name, value, library) of each device array argument, in order
    for name, value in zip(names, values):
        if not isinstance(value, np.ndarray):
            library = library_of(value)
            if library is not None:
                found.append((name, value, library))
    if not found:
        # NumPy arguments only: the call runs on the current GPU, and what the executable keeps
        # per GPU (loaded kernels, constants, scratch) is that GPU's, also after the caller
        # makes another GPU current.
        device_id = None if backend.simulated else backend.cuda.get_current_device().id
        return CallArrays(backend, None, device_id, stream)
    first_name, first, library = found[0]
    for name, value, other in found[1:]:
        if other is not library or other.family(value) != library.family(first):
            raise UnsupportedError(
                f"arguments {first_name!r} ({library.kind(first)}) and {name!r} ({other.kind(value)}) "
                "are device arrays of different libraries; numfuse returns a call's results as "
                "arrays of its device arguments' library, and runs the call on that library's "
                "current stream: convert one of them first (cupy.asarray, torch.as_tensor and "
                "numba.cuda.as_cuda_array share the memory without a copy)"
            )
    if backend.simulated and library.needs_gpu:
        raise UnsupportedError(
            f"argument {first_name!r} is a {library.kind(first)}, but numfuse runs on Numba's CUDA "
            "simulator here (no GPU was found), which reads only NumPy arrays and its own device "
            "arrays: pass a NumPy array"
        )
    on_device: dict[int, str] = {}  # GPU -> the first argument on it
    for name, value, _ in found:
        device = library.device_id(value)
        if device is not None:
            on_device.setdefault(device, name)
    if len(on_device) > 1:
        (first_gpu, a), (second_gpu, b) = list(on_device.items())[:2]
        raise ValueError(
            f"arguments {a!r} (on GPU {first_gpu}) and {b!r} (on GPU {second_gpu}) are on "
            "different GPUs; numfuse runs a call on one GPU: copy one of them to the other's GPU"
        )
    device_id = next(iter(on_device), None)
    return CallArrays(backend, library, device_id, stream, first)
