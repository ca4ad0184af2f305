"""CuPy arrays, PyTorch tensors and other libraries' CUDA arrays, on a real GPU
(`python -m numfuse_tests --gpu`). The simulator cannot hold their memory, so there every test
here skips; run/test_array_kinds.py covers the same steps there with a pretend library.

Zero copies are checked by address: the kernels must read the caller's memory and write the
memory of the arrays returned.
"""

import numpy as np
import pytest

import numfuse
from numfuse.targets.cuda.device import backend
from numfuse_tests.helpers import assert_same
from numfuse_tests.interop import address, kernel_addresses, launches  # noqa: F401

pytestmark = pytest.mark.skipif(
    backend().simulated, reason="needs a real GPU (python -m numfuse_tests --gpu): no CUDA memory on the simulator"
)

X = np.arange(24, dtype=np.float32).reshape(4, 6) % 7
Y = np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6)


def shift(x, s):
    """Two kernels: row maxima (an intermediate buffer), then an elementwise pass."""
    return (x - x.max(axis=1, keepdims=True)) * s


EXPECTED = shift(X, np.float32(0.5))


@pytest.fixture
def cupy():
    return pytest.importorskip("cupy", reason="CuPy is not installed")


@pytest.fixture
def torch():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("this PyTorch has no CUDA")
    return torch


# -- CuPy ------------------------------------------------------------------------------------------


def test_cupy_in_cupy_out_without_copies(cupy, launches):
    x = cupy.asarray(X)
    out = numfuse.jit(shift)(x, 0.5)
    assert isinstance(out, cupy.ndarray) and out.device.id == x.device.id
    touched = kernel_addresses(launches)
    assert x.data.ptr in touched and out.data.ptr in touched
    assert isinstance(out.data.mem, cupy.cuda.memory.PooledMemory)  # from CuPy's memory pool
    assert_same(cupy.asnumpy(out), EXPECTED)


def test_cupy_calls_run_on_cupys_current_stream(cupy, launches):
    x = cupy.asarray(X)
    cupy.cuda.Device().synchronize()  # x is written
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        out = numfuse.jit(shift)(x, 0.5)
    assert len(launches) == 2 and all(launch.handle == stream.ptr for launch in launches)
    stream.synchronize()
    assert_same(cupy.asnumpy(out), EXPECTED)


def test_cupy_calls_do_not_wait_for_the_gpu(cupy, monkeypatch):
    from numba import cuda
    from numba.cuda.cudadrv import devicearray, driver

    x = cupy.asarray(X)
    waits = []
    with monkeypatch.context() as patch:
        patch.setattr(driver.Stream, "synchronize", lambda self: waits.append(self))
        patch.setattr(cuda, "synchronize", lambda: waits.append("the whole device"))
        patch.setattr(devicearray.DeviceNDArray, "copy_to_host", lambda *a, **k: waits.append("a copy"))
        out = numfuse.jit(shift)(x, 0.5)
    assert waits == []
    assert_same(cupy.asnumpy(out), EXPECTED)


def test_numpy_arguments_mixed_with_cupy_arrays_give_cupy_arrays(cupy):
    out = numfuse.jit(lambda x, y: x * y + 1)(cupy.asarray(X), Y)
    assert isinstance(out, cupy.ndarray)
    assert_same(cupy.asnumpy(out), X * Y + 1)


def test_cupy_arrays_on_two_gpus_are_refused(cupy):
    if cupy.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs two GPUs")
    x = cupy.asarray(X)
    with cupy.cuda.Device(1):
        y = cupy.asarray(X)
    with pytest.raises(ValueError, match=r"'x' \(on GPU 0\) and 'y' \(on GPU 1\) are on different GPUs"):
        numfuse.jit(lambda x, y: x + y)(x, y)


def test_cupy_arrays_on_the_second_gpu_are_computed_there(cupy):
    if cupy.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs two GPUs")
    with cupy.cuda.Device(1):
        x = cupy.asarray(X)
    out = numfuse.jit(shift)(x, 0.5)  # called with GPU 0 current
    assert out.device.id == 1
    with cupy.cuda.Device(1):
        assert_same(cupy.asnumpy(out), EXPECTED)


# -- PyTorch ---------------------------------------------------------------------------------------


def test_torch_in_torch_out_without_copies(torch, launches):
    x = torch.as_tensor(X, device="cuda")
    out = numfuse.jit(shift)(x, 0.5)
    assert isinstance(out, torch.Tensor) and out.device == x.device and out.dtype == torch.float32
    touched = kernel_addresses(launches)
    assert x.data_ptr() in touched and out.data_ptr() in touched
    assert_same(out.cpu().numpy(), EXPECTED)


def test_torch_calls_run_on_torchs_current_stream(torch, launches):
    x = torch.as_tensor(X, device="cuda")
    torch.cuda.synchronize()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        out = numfuse.jit(shift)(x, 0.5)
    assert len(launches) == 2 and all(launch.handle == stream.cuda_stream for launch in launches)
    stream.synchronize()
    assert_same(out.cpu().numpy(), EXPECTED)


def test_tensors_that_require_grad_are_read(torch):
    x = torch.as_tensor(X, device="cuda").requires_grad_()
    out = numfuse.jit(shift)(x, 0.5)
    assert not out.requires_grad
    assert_same(out.cpu().numpy(), EXPECTED)


# -- Numba, and libraries numfuse does not know -----------------------------------------------


def test_numba_device_arrays_on_the_stream_option(launches):
    from numba import cuda

    stream = cuda.stream()
    out = numfuse.jit(shift, stream=stream)(cuda.to_device(X), 0.5)
    assert len(launches) == 2 and all(launch.handle == int(stream.handle) for launch in launches)
    stream.synchronize()
    assert_same(out.copy_to_host(), EXPECTED)


class OnlyInterface:
    """A CUDA array of a library numfuse does not know: only `__cuda_array_interface__`."""

    def __init__(self, array):
        self._array = array

    @property
    def __cuda_array_interface__(self):
        return self._array.__cuda_array_interface__


class OnlyDlpack:
    """A CUDA array of a library numfuse does not know: only DLPack."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, *args, **kwargs):
        return self._array.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


@pytest.mark.parametrize("wrap", [OnlyInterface, OnlyDlpack])
def test_other_libraries_cuda_arrays_are_read_in_place(cupy, launches, wrap):
    x = cupy.asarray(X)
    out = numfuse.jit(shift)(wrap(x), 0.5)
    assert hasattr(out, "copy_to_host")  # a Numba device array: numfuse cannot allocate theirs
    assert x.data.ptr in kernel_addresses(launches)
    assert_same(out.copy_to_host(), EXPECTED)
