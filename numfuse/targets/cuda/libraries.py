"""Array libraries: which library an array argument comes from, and how numfuse reads and makes
its arrays.

Each library numfuse accepts is a `Library` in `LIBRARIES` (NumPy's is `NUMPY`): how to
recognise its arrays, read their shape, dtype, layout and GPU, view them as Numba device arrays
(what the kernels take) without a copy, allocate its arrays, and find its current stream.
`describe` is what tracing knows of an array argument; `library_of` names a device array's
library. How one call uses them (which library its results come back as, where its buffers are
allocated, which stream it runs on) is arrays.py's job.

Nothing here imports CuPy or PyTorch: an object can only be a CuPy array or a tensor if the
caller already imported that library, so `sys.modules` tells. Describing arguments needs no
Numba either (the trace tier runs without it).
"""

from __future__ import annotations

import contextlib
import operator
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import UnsupportedError, unsupported
from . import streams

# DLPack device types (dlpack.h) whose memory kernels can read.
_DLPACK_CUDA, _DLPACK_CUDA_MANAGED = 2, 13


@dataclass(frozen=True)
class ArrayInfo:
    """What tracing needs to know of an array argument."""

    library: "Library"
    shape: tuple[int, ...]
    dtype: np.dtype  # as the library states it; jit checks that numfuse supports it
    layout: str  # "C", "F", or "A" for neither


def _layout(shape, strides, itemsize: int) -> str:
    """'C', 'F' or 'A' from byte strides (None: C-contiguous). Axes of length one have no
    meaningful stride, as in NumPy's flags."""
    if strides is None or 0 in shape:
        return "C"

    def contiguous(axes) -> bool:
        expected = itemsize
        for axis in axes:
            if shape[axis] != 1 and strides[axis] != expected:
                return False
            expected *= shape[axis]
        return True

    axes = range(len(shape))
    return "C" if contiguous(reversed(axes)) else "F" if contiguous(axes) else "A"


def _flags_layout(array) -> str:
    flags = array.flags
    c = flags["C_CONTIGUOUS"] if isinstance(flags, dict) else flags.c_contiguous
    f = flags["F_CONTIGUOUS"] if isinstance(flags, dict) else flags.f_contiguous
    return "C" if c else "F" if f else "A"


def type_name(value) -> str:
    """'cupy.ndarray', 'torch.Tensor': the library and the class, for messages."""
    cls = type(value)
    return f"{cls.__module__.split('.')[0]}.{cls.__qualname__}"


# -- views and descriptors ---------------------------------------------------------------------


def cai_view(cuda, owner, desc: dict, launch_handle: int | None):
    """A Numba device array over the memory a CUDA array interface describes, without a copy.

    The interface's `stream` is where the producer queued work on the data. A kernel on that
    same stream is ordered after it, so nothing waits; on any other stream Numba first
    synchronizes the producer's stream, as the interface asks of consumers."""
    sync = not streams.same_stream(desc.get("stream"), launch_handle)
    return cuda.from_cuda_array_interface(desc, owner=owner, sync=sync)


def descriptor(ptr: int, shape, strides_in_items, dtype) -> dict:
    """A CUDA array interface (version 3, no stream) for memory whose strides are counted in
    items, as cuda.core's StridedMemoryView counts them."""
    dtype = np.dtype(dtype)
    shape = tuple(int(n) for n in shape)
    strides = None
    if strides_in_items is not None:
        strides = tuple(int(s) * dtype.itemsize for s in strides_in_items)
        if _layout(shape, strides, dtype.itemsize) == "C":
            strides = None
    return {"shape": shape, "strides": strides, "typestr": dtype.str, "data": (int(ptr), False), "version": 3}


def _dlpack_memory_view(value, stream_ptr: int | None):
    """cuda.core's view of a DLPack object (cuda.core comes with numba-cuda)."""
    try:
        from cuda.core.utils import StridedMemoryView
    except ImportError:
        raise UnsupportedError(
            f"a {type_name(value)} exposes its memory only through DLPack, which numfuse reads "
            "with the cuda-core package (installed with recent numba-cuda): install cuda-core, "
            "or pass an array with __cuda_array_interface__"
        ) from None
    return StridedMemoryView.from_dlpack(value, stream_ptr=stream_ptr)


def _pointer_device(ptr: int) -> int | None:
    """The GPU a device pointer belongs to, or None if the driver cannot say. Best effort: it
    only serves the different-GPUs check, which is skipped for arrays of unknown device."""
    if not ptr:
        return None
    try:
        from numba.cuda.cudadrv import driver

        attribute = driver.binding.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
        return int(driver.driver.cuPointerGetAttribute(attribute, driver.binding.CUdeviceptr(ptr)))
    except Exception:  # the simulator's driver, an old numba-cuda, a host pointer
        return None


# -- libraries -----------------------------------------------------------------------------------


class Library:
    """How numfuse handles the arrays of one library. Subclasses override what differs."""

    name = ""  # in messages
    contiguous_hint = "copy it into a C-contiguous array"
    on_host = False
    needs_gpu = True  # False: the simulator can read its arrays too

    def owns(self, value) -> bool:
        raise NotImplementedError

    def describe(self, name: str, value) -> ArrayInfo:
        raise NotImplementedError

    def family(self, value) -> str:
        """Arrays of the same family may be mixed in one call."""
        return self.name

    def kind(self, value) -> str:
        return type_name(value)

    def device_id(self, value) -> int | None:
        """The GPU `value` lies on; None when the library cannot say."""
        return None

    def device_context(self, device_id: int | None):
        """Entered around a call on GPU `device_id`, for allocations and the current stream."""
        return contextlib.nullcontext()

    def current_stream(self, device_id: int | None, first) -> Any:
        """The stream this library's work on `device_id` goes to now (any form
        streams.launch_stream takes; None for the default stream). `first` is the call's first
        device array argument."""
        return None

    def view(self, cuda, value, launch_handle: int | None):
        """A Numba device array over `value`'s memory: no copy."""
        raise NotImplementedError

    def empty(self, cuda, shape, dtype, device_id: int | None, stream, own_stream: int | None = None) -> tuple[Any, Any]:
        """(array to return to the caller, Numba device array over its memory). By default
        Numba allocates, and the caller gets the Numba device array. `own_stream`: the handle
        of the stream the call's kernels run on where that is not the library's current
        stream (numfuse.jit(stream=...)); a library with a stream-ordered pool allocates from
        that stream's, so that memory the call frees is reused only after its kernels ran."""
        array = cuda.device_array(shape, dtype, stream=stream)
        return array, array

    # The part of a fast call's key (fastcall.py) for an array of this library, beside its
    # type: all that its kernels' argument types and packed parameters depend on.
    fast_key = staticmethod(operator.attrgetter("shape", "dtype", "strides"))


class NumpyArrays(Library):
    name = "numpy"
    on_host = True
    needs_gpu = False

    def owns(self, value) -> bool:
        # The real type: a tracer answers isinstance(x, np.ndarray) as NumPy would.
        return issubclass(type(value), np.ndarray)

    def describe(self, name, value) -> ArrayInfo:
        # Without numpy.ma imported no masked array exists (and importing it takes 0.1 s).
        masked = sys.modules.get("numpy.ma")
        if masked is not None and isinstance(value, masked.MaskedArray):
            raise unsupported(
                f"argument {name!r}, a masked array,",
                f"numfuse would ignore its mask: pass {name}.filled(fill_value) or {name}.data",
            )
        if isinstance(value, np.matrix):
            raise unsupported(
                f"argument {name!r}, an np.matrix,",
                f"its operators differ from arrays': pass np.asarray({name})",
            )
        cls = type(value)
        if cls is not np.ndarray and (cls.__array_ufunc__ is not np.ndarray.__array_ufunc__
                                      or cls.__array_function__ is not np.ndarray.__array_function__):
            raise unsupported(
                f"argument {name!r}, a {cls.__name__} (an ndarray subclass with its own __array_ufunc__ or "
                "__array_function__),",
                f"numfuse would compute as for plain arrays and ignore what the class adds: pass np.asarray({name})",
            )
        return ArrayInfo(self, value.shape, value.dtype, _flags_layout(value))


class NumbaArrays(Library):
    """numba.cuda device arrays, real or simulated: the kernels take them as they are."""

    name = "numba"
    contiguous_hint = "copy it into a C-contiguous device array"
    needs_gpu = False

    def owns(self, value) -> bool:
        return type(value).__module__.startswith(("numba.", "numba_cuda.")) and hasattr(value, "copy_to_host")

    def describe(self, name, value) -> ArrayInfo:
        return ArrayInfo(self, tuple(value.shape), np.dtype(value.dtype), _flags_layout(value))

    def kind(self, value) -> str:
        return "Numba device array"

    def device_id(self, value):
        try:
            return value.gpu_data.context.device.id
        except AttributeError:  # simulator arrays
            return None

    def view(self, cuda, value, launch_handle):
        return value


class CupyArrays(Library):
    name = "cupy"
    contiguous_hint = "cupy.ascontiguousarray({name}) makes a C-contiguous copy"

    def owns(self, value) -> bool:
        cupy = sys.modules.get("cupy")
        return cupy is not None and isinstance(value, cupy.ndarray)

    def describe(self, name, value) -> ArrayInfo:
        return ArrayInfo(self, tuple(value.shape), np.dtype(value.dtype), _flags_layout(value))

    def device_id(self, value):
        return value.device.id

    def device_context(self, device_id):
        return sys.modules["cupy"].cuda.Device(device_id)

    def current_stream(self, device_id, first):
        return sys.modules["cupy"].cuda.get_current_stream()  # of the device entered

    def view(self, cuda, value, launch_handle):
        return cai_view(cuda, value, value.__cuda_array_interface__, launch_handle)

    def empty(self, cuda, shape, dtype, device_id, stream, own_stream=None):
        cupy = sys.modules["cupy"]
        if own_stream is None:
            array = cupy.empty(shape, dtype)  # from CuPy's pool, on the device entered
        else:
            stream = cupy.cuda.Stream.null if own_stream == 0 else cupy.cuda.ExternalStream(own_stream)
            with stream:  # that stream's chunks of the pool
                array = cupy.empty(shape, dtype)
        # Nothing is queued on a new array: no stream to wait for.
        return array, cuda.from_cuda_array_interface(array.__cuda_array_interface__, owner=array, sync=False)


# PyTorch dtypes with a NumPy equivalent numfuse computes in.
_TORCH_DTYPES = {
    f"torch.{n}": n
    for n in (
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64", "complex64", "complex128",
    )
}


class TorchTensors(Library):
    name = "torch"
    contiguous_hint = "{name}.contiguous() makes a contiguous copy"

    def owns(self, value) -> bool:
        torch = sys.modules.get("torch")
        return torch is not None and isinstance(value, torch.Tensor)

    def describe(self, name, value) -> ArrayInfo:
        if value.device.type != "cuda":
            raise UnsupportedError(
                f"argument {name!r} is a torch.Tensor on device {value.device}; numfuse takes CUDA "
                f"tensors, or NumPy arrays for host data ({name}.numpy())"
            )
        dtype = _TORCH_DTYPES.get(str(value.dtype))
        if dtype is None:
            raise unsupported(f"dtype {value.dtype} (argument {name!r}, a torch.Tensor)")
        layout = "C" if value.is_contiguous() else "A"
        return ArrayInfo(self, tuple(value.shape), np.dtype(dtype), layout)

    def device_id(self, value):
        return value.device.index

    def current_stream(self, device_id, first):
        return sys.modules["torch"].cuda.current_stream(device_id)

    @staticmethod
    def fast_key(value) -> tuple:
        return (value.shape, value.dtype, value.stride(), value.is_cuda)

    def view(self, cuda, value, launch_handle):
        # detach(): a tensor that requires grad refuses to export its memory. The interface
        # (version 2) names no stream: PyTorch's work is ordered on its current stream, which
        # is the launch stream unless numfuse.jit(stream=...) says otherwise.
        return cai_view(cuda, value, value.detach().__cuda_array_interface__, launch_handle)

    def empty(self, cuda, shape, dtype, device_id, stream, own_stream=None):
        torch = sys.modules["torch"]
        torch_dtype = getattr(torch, np.dtype(dtype).name, None)
        if torch_dtype is None:
            raise UnsupportedError(
                f"PyTorch {torch.__version__} has no dtype {np.dtype(dtype)} for a numfuse result"
            )
        device = torch.device("cuda", device_id)
        if own_stream is None:
            tensor = torch.empty(tuple(shape), dtype=torch_dtype, device=device)
        else:
            # The caching allocator gives each block to the stream current at allocation.
            stream = (torch.cuda.default_stream(device) if own_stream == 0
                      else torch.cuda.ExternalStream(own_stream, device=device))
            with torch.cuda.stream(stream):
                tensor = torch.empty(tuple(shape), dtype=torch_dtype, device=device)
        desc = tensor.__cuda_array_interface__
        return tensor, cuda.from_cuda_array_interface(desc, owner=tensor, sync=False)


class CudaArrayInterface(Library):
    """Any other object with `__cuda_array_interface__`. numfuse cannot allocate through an
    unknown library: results are Numba device arrays (which export the interface again)."""

    name = "CUDA array interface"

    def owns(self, value) -> bool:
        return hasattr(value, "__cuda_array_interface__")

    def family(self, value) -> str:
        return type(value).__module__.split(".")[0]

    def describe(self, name, value) -> ArrayInfo:
        desc = value.__cuda_array_interface__
        if desc.get("mask") is not None:
            raise unsupported(f"argument {name!r}, a masked CUDA array,", "numfuse would ignore its mask")
        try:
            dtype = np.dtype(desc["typestr"])
        except TypeError:
            raise unsupported(f"dtype {desc['typestr']!r} (argument {name!r})") from None
        shape = tuple(desc["shape"])
        return ArrayInfo(self, shape, dtype, _layout(shape, desc.get("strides"), dtype.itemsize))

    def device_id(self, value):
        return _pointer_device(value.__cuda_array_interface__["data"][0])

    def current_stream(self, device_id, first):
        # Where the producer queued its work: running there orders the kernels after it.
        return first.__cuda_array_interface__.get("stream")

    def view(self, cuda, value, launch_handle):
        return cai_view(cuda, value, value.__cuda_array_interface__, launch_handle)


class DlpackArrays(Library):
    """Objects that expose CUDA memory through DLPack only. Results are Numba device arrays."""

    name = "DLPack"

    def owns(self, value) -> bool:
        return hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__")

    def family(self, value) -> str:
        return type(value).__module__.split(".")[0]

    def describe(self, name, value) -> ArrayInfo:
        device_type, _ = value.__dlpack_device__()
        if int(device_type) not in (_DLPACK_CUDA, _DLPACK_CUDA_MANAGED):
            raise UnsupportedError(
                f"argument {name!r} is a {type_name(value)} in host memory (DLPack device type "
                f"{int(device_type)}); numfuse takes NumPy arrays for host data: "
                f"np.from_dlpack({name}) shares its memory"
            )
        # Only the shape, dtype and strides are read here: stream -1 asks the producer for no
        # synchronization (DLPack's convention). The call's view asks again, with its stream.
        memory = _dlpack_memory_view(value, -1)
        dtype = np.dtype(memory.dtype)
        strides = None if memory.strides is None else tuple(s * dtype.itemsize for s in memory.strides)
        shape = tuple(memory.shape)
        return ArrayInfo(self, shape, dtype, _layout(shape, strides, dtype.itemsize))

    def device_id(self, value):
        return int(value.__dlpack_device__()[1])

    def view(self, cuda, value, launch_handle):
        # Given the consumer's stream, the producer orders its pending work before that stream.
        memory = _dlpack_memory_view(value, streams.dlpack_stream(launch_handle))
        desc = descriptor(memory.ptr, memory.shape, memory.strides, memory.dtype)
        return cuda.from_cuda_array_interface(desc, owner=memory, sync=False)


NUMPY = NumpyArrays()
# Checked in order; the first that owns an argument describes it.
LIBRARIES: list[Library] = [NumbaArrays(), CupyArrays(), TorchTensors(), CudaArrayInterface(), DlpackArrays()]


def library_of(value) -> Library | None:
    """The device array library of `value`, or None (NumPy arrays, scalars, other values)."""
    for library in LIBRARIES:
        if library.owns(value):
            return library
    return None


def describe(name: str, value) -> ArrayInfo | None:
    """Shape, dtype and layout of array argument `name`, or None if `value` is not an array.
    Raises UnsupportedError for arrays numfuse cannot take (host tensors, masked arrays)."""
    if issubclass(type(value), np.ndarray):
        return NUMPY.describe(name, value)
    library = library_of(value)
    return None if library is None else library.describe(name, value)
