"""Array kinds without running anything (and without numba): how arguments of every library are
described and refused, and how streams are named. Running them: run/test_array_kinds.py and, on
a GPU, run/test_gpu_interop.py."""

import sys
import types

import numpy as np
import pytest

import numfuse
from numfuse.targets.cuda import libraries, streams


class CudaArray:
    """An object of an unknown library that exposes CUDA memory through the array interface."""

    def __init__(self, shape, typestr="<f4", strides=None, **extra):
        self.__cuda_array_interface__ = {
            "shape": shape, "typestr": typestr, "strides": strides, "data": (0, False), "version": 3, **extra
        }


class HostDlpack:
    """A host array of another library, reachable only through DLPack."""

    def __dlpack__(self, stream=None):
        raise AssertionError("numfuse must not import a host array")

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU


def test_cuda_array_interface_objects_are_traced_as_device_arrays():
    x = CudaArray((4, 6))
    info = libraries.describe("x", x)
    assert (info.shape, info.dtype, info.layout) == ((4, 6), np.dtype(np.float32), "C")
    assert info.library.name == "CUDA array interface"
    plan = numfuse.jit(lambda x: (x * 2).sum(axis=1)).plan(x)
    assert len(plan.kernels) == 1


def test_layouts_from_byte_strides():
    assert libraries.describe("x", CudaArray((4, 6), strides=(24, 4))).layout == "C"
    assert libraries.describe("x", CudaArray((4, 6), strides=(4, 16))).layout == "F"
    assert libraries.describe("x", CudaArray((4, 6), strides=(48, 8))).layout == "A"
    assert libraries.describe("x", CudaArray((4, 1), strides=(4, 999))).layout == "C"  # a length-1 axis


def test_strided_device_arrays_are_read_through_their_strides():
    """A non-contiguous device array is indexed at its own rank (never collapsed), typed "A"."""
    plan = numfuse.jit(lambda x: x + 1).plan(CudaArray((4, 6), strides=(48, 16)))
    nest = plan.kernels[0].nest
    assert nest.buffer("in_a").strided and nest.buffer("in_a").view == (4, 6)
    assert not nest.buffer("out_b").strided and nest.buffer("out_b").view == (4, 6)


def test_masked_and_unsupported_device_arrays_name_the_argument():
    with pytest.raises(numfuse.UnsupportedError, match=r"argument 'x', a masked CUDA array"):
        numfuse.jit(lambda x: x + 1).plan(CudaArray((3,), mask=CudaArray((3,), "|b1")))
    with pytest.raises(numfuse.UnsupportedError, match=r"dtype timedelta64\[s\] \(argument 'x'\)"):
        numfuse.jit(lambda x: x + 1).plan(CudaArray((3,), "<m8[s]"))


def test_host_arrays_of_other_libraries_are_refused_with_a_hint():
    with pytest.raises(numfuse.UnsupportedError, match=r"argument 'x' is a .*HostDlpack in host memory.*np\.from_dlpack\(x\)"):
        numfuse.jit(lambda x: x + 1).plan(HostDlpack())


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix
def test_masked_arrays_and_matrices_are_refused():
    with pytest.raises(numfuse.UnsupportedError, match=r"argument 'x', a masked array.*x\.filled"):
        numfuse.jit(lambda x: x + 1).plan(np.ma.masked_array([1.0, 2.0], [False, True]))
    with pytest.raises(numfuse.UnsupportedError, match=r"argument 'x', an np\.matrix"):
        numfuse.jit(lambda x: x + 1).plan(np.matrix([[1.0, 2.0]]))


def test_numpy_strings_are_static_like_python_strings():
    f = numfuse.jit(lambda x, how: x.max() if how == "max" else x.min())
    assert "reduce_max" in str(f.graph(np.ones(3), np.str_("max")))


# -- CuPy and PyTorch, seen through stand-in modules -------------------------------------------


def _fake_module(monkeypatch, name: str, **attributes):
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    monkeypatch.setitem(sys.modules, name, module)
    return module


def test_cupy_arrays_are_recognised_only_when_cupy_is_imported(monkeypatch):
    class ndarray:
        shape = (2, 3)
        dtype = np.dtype(np.float16)
        flags = types.SimpleNamespace(c_contiguous=True, f_contiguous=False)

    ndarray.__module__, ndarray.__qualname__ = "cupy._core.core", "ndarray"
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    assert libraries.library_of(ndarray()) is None
    _fake_module(monkeypatch, "cupy", ndarray=ndarray)
    info = libraries.describe("a", ndarray())
    assert info.library.name == "cupy" and (info.shape, info.dtype, info.layout) == ((2, 3), np.dtype(np.float16), "C")
    assert info.library.kind(ndarray()) == "cupy.ndarray"


class _TorchDtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"


class _Device:
    def __init__(self, kind):
        self.type, self.index = kind, 0

    def __str__(self):
        return f"{self.type}:{self.index}"


class _Tensor:
    def __init__(self, device="cuda", dtype="float32", contiguous=True):
        self.device = _Device(device)
        self.dtype = _TorchDtype(dtype)
        self.shape = (5,)
        self._contiguous = contiguous

    def is_contiguous(self):
        return self._contiguous


def test_torch_tensors_are_described_and_refused_by_their_device_and_dtype(monkeypatch):
    _fake_module(monkeypatch, "torch", Tensor=_Tensor)
    info = libraries.describe("t", _Tensor())
    assert info.library.name == "torch" and (info.shape, info.dtype, info.layout) == ((5,), np.dtype(np.float32), "C")
    with pytest.raises(numfuse.UnsupportedError, match=r"argument 't' is a torch\.Tensor on device cpu:0.*\.numpy\(\)"):
        libraries.describe("t", _Tensor(device="cpu"))
    with pytest.raises(numfuse.UnsupportedError, match=r"dtype torch\.bfloat16 \(argument 't'"):
        libraries.describe("t", _Tensor(dtype="bfloat16"))
    assert numfuse.jit(lambda t: t + 1).plan(_Tensor(contiguous=False)).kernels[0].nest.buffer("in_a").strided


# -- DLPack memory as a CUDA array interface ------------------------------------------------------


class CudaDlpack:
    """Claims to be a CUDA array; its DLPack capsule is a NumPy array's, which is enough for
    reading shape, dtype and strides."""

    def __init__(self, host):
        self._host = host
        self.streams = []

    def __dlpack__(self, stream=None, **kwargs):
        self.streams.append(stream)
        return self._host.__dlpack__()

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA, GPU 0


def test_dlpack_only_arrays_are_described_without_synchronizing():
    pytest.importorskip("cuda.core.utils", reason="cuda-core (installed with numba-cuda) reads DLPack")
    x = CudaDlpack(np.ones((3, 4), np.float32))
    info = libraries.describe("x", x)
    assert info.library.name == "DLPack"
    assert (info.shape, info.dtype, info.layout) == ((3, 4), np.dtype(np.float32), "C")
    assert x.streams == [-1]  # DLPack's "do not synchronize"
    assert libraries.describe("x", CudaDlpack(np.ones((3, 4), np.int16).T)).layout == "F"
    assert len(numfuse.jit(lambda x: x * 2).plan(x).kernels) == 1



def test_descriptors_count_strides_in_bytes_and_drop_contiguous_ones():
    assert libraries.descriptor(1024, (4, 6), (6, 1), np.float32) == {
        "shape": (4, 6), "strides": None, "typestr": "<f4", "data": (1024, False), "version": 3
    }
    assert libraries.descriptor(1024, (4, 6), (1, 4), np.float64)["strides"] == (8, 32)
    assert libraries.descriptor(0, (3,), None, np.int16)["strides"] is None


# -- streams ---------------------------------------------------------------------------------------


def test_foreign_streams_are_read_through_their_protocols():
    assert streams.foreign_stream_handle(7) == 7
    assert streams.foreign_stream_handle(types.SimpleNamespace(ptr=11)) == 11  # CuPy
    assert streams.foreign_stream_handle(types.SimpleNamespace(cuda_stream=12)) == 12  # PyTorch
    assert streams.foreign_stream_handle(types.SimpleNamespace(__cuda_stream__=lambda: (0, 13))) == 13
    assert streams.foreign_stream_handle("fast") is None
    assert streams.foreign_stream_handle(True) is None


def test_the_stream_option_is_checked_when_jit_is_called():
    numfuse.jit(lambda x: x, stream=types.SimpleNamespace(ptr=11))
    with pytest.raises(TypeError, match=r"stream=.*got builtins\.str"):
        numfuse.jit(lambda x: x, stream="fast")


def test_which_producer_streams_a_kernel_is_ordered_after():
    assert streams.same_stream(None, 5)  # the producer queued nothing
    assert streams.same_stream(5, 5) and not streams.same_stream(5, 6)
    assert streams.same_stream(streams.LEGACY_DEFAULT, 0)  # the legacy default stream, two spellings
    assert streams.same_stream(0, streams.LEGACY_DEFAULT) and streams.same_stream(1, 1)
    assert not streams.same_stream(5, None)
    assert streams.dlpack_stream(0) == streams.LEGACY_DEFAULT and streams.dlpack_stream(9) == 9
