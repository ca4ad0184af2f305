"""Test helpers for array kinds and streams: a pretend array library, a recorder of kernel
launches, and where a device array's data starts.

On the simulator there is no CuPy or PyTorch, and foreign CUDA memory cannot exist. `FakeLibrary`
is a device array library in numfuse's sense (runtime/libraries.Library) whose arrays wrap Numba
device arrays: it goes through the same steps as CuPy and PyTorch (classification, in-place
views, allocation through the library, its current stream, its kind of result, its GPU) and
counts what numfuse asked of it.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

from numfuse.targets.cuda import launch, streams
from numfuse.targets.cuda.libraries import ArrayInfo, Library
from numfuse.targets.cuda.device import backend


class FakeTensor:
    """An array of FakeLibrary: a Numba device array, said to be on GPU `device`."""

    def __init__(self, data, device: int = 0):
        self.data = data
        self.device = device

    @property
    def shape(self):
        return tuple(self.data.shape)

    @property
    def dtype(self):
        return np.dtype(self.data.dtype)

    def get(self) -> np.ndarray:
        return self.data.copy_to_host()


class FakeLibrary(Library):
    """A device array library numfuse does not know, registered for one test."""

    name = "fakelib"
    needs_gpu = False

    def __init__(self, stream=None):
        cuda = backend().cuda
        # Kept so that tests may forbid numba's own allocation functions.
        self._device_array = cuda.device_array
        self._to_device = cuda.to_device
        self.stream = stream  # its "current stream"
        self.allocated: list[FakeTensor] = []
        self.own_streams: list[int | None] = []  # each allocation's `own_stream`
        self.entered: list[int | None] = []

    def array(self, host: np.ndarray, device: int = 0) -> FakeTensor:
        return FakeTensor(self._to_device(np.ascontiguousarray(host)), device)

    def owns(self, value) -> bool:
        return isinstance(value, FakeTensor)

    def describe(self, name, value) -> ArrayInfo:
        return ArrayInfo(self, value.shape, value.dtype, "C")

    def device_id(self, value):
        return value.device

    @contextlib.contextmanager
    def device_context(self, device_id):
        self.entered.append(device_id)
        yield

    def current_stream(self, device_id, first):
        return self.stream

    def view(self, cuda, value, launch_handle):
        return value.data

    def empty(self, cuda, shape, dtype, device_id, stream, own_stream=None):
        tensor = FakeTensor(self._device_array(shape, dtype, stream=stream), device_id or 0)
        self.allocated.append(tensor)
        self.own_streams.append(own_stream)
        return tensor, tensor.data


@pytest.fixture
def fakelib(monkeypatch):
    """A FakeLibrary, known to numfuse for the test (its current stream: a new Numba stream)."""
    from numfuse.targets.cuda import libraries

    library = FakeLibrary(backend().cuda.stream())
    monkeypatch.setattr(libraries, "LIBRARIES", [library, *libraries.LIBRARIES])
    return library


class Launch:
    def __init__(self, stream, handle, addresses):
        self.stream = stream  # as numfuse launched on it: a cuda.core stream, or the simulator's
        self.handle = handle  # its CUstream handle (None: a simulator stream)
        self.addresses = addresses  # where its array arguments' data start


@pytest.fixture
def launches(monkeypatch) -> list[Launch]:
    """Every kernel launch of the test: its stream and its array arguments' addresses."""
    record: list[Launch] = []
    real_gpu, real_simulator = launch.GpuKernel.__call__, launch.DispatcherKernel.__call__

    def gpu(self, stream, params):
        record.append(Launch(stream, int(stream.handle), {params[i] for i in self.data_slots}))
        return real_gpu(self, stream, params)

    def simulator(self, stream, args):
        arrays = [a for a in args if hasattr(a, "shape") and not isinstance(a, (np.generic, int, float))]
        record.append(Launch(stream, streams.handle_of(stream), {address(a) for a in arrays}))
        return real_simulator(self, stream, args)

    monkeypatch.setattr(launch.GpuKernel, "__call__", gpu)
    monkeypatch.setattr(launch.DispatcherKernel, "__call__", simulator)
    return record


def address(array) -> int:
    """Where a device array's data starts: its device pointer (CUDA array interface), or on the
    simulator, the address of the NumPy array it wraps. Equal addresses: no copy was made."""
    data = getattr(array, "data", None)
    if hasattr(data, "ptr"):  # CuPy
        return data.ptr
    if hasattr(array, "data_ptr"):  # PyTorch
        return array.data_ptr()
    interface = getattr(array, "__cuda_array_interface__", None)
    if interface is not None:
        return interface["data"][0]
    return array._ary.__array_interface__["data"][0]


def kernel_addresses(record: list[Launch]) -> set[int]:
    """The addresses of every array argument of the recorded launches."""
    return {a for launch in record for a in launch.addresses}
