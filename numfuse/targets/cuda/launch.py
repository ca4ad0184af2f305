"""Launching a compiled kernel with its arguments packed as the kernel takes them.

A Numba CUDA kernel takes each array argument as its flattened struct: meminfo, parent, item
count, item size, data pointer, then the shape and the byte strides; and each scalar as one C
value (two for a complex number). Numba's dispatcher works this out on every launch: it types
every argument, wraps foreign arrays as Numba device arrays, then packs them (several
microseconds per array). numfuse knows each kernel's argument types when it plans the call
(`ptx.argument_types`, the same types the compile tier checks), so on a GPU it compiles each
kernel once for those types through Numba (its disk cache included, kernel_cache.py), and
launches the loaded function with cuda.core's `launch`, the call Numba's own launch ends in,
given the argument values Numba would give it. A call of the same signature then changes only
the data pointers and scalar values of a packed list (fastcall.py).

A launch with more than 48 KiB of dynamic shared memory (an autotune candidate: a long row's
cache, or a 1024-thread block's tree-reduction arrays) first opts the kernel in
(`opt_in_shared`), which Numba's launch never does; where kernels fall back to Numba's launch,
the executable gives them the cost model's configuration, which stays within 48 KiB.

On the simulator kernels take device arrays and scalars as they are, through Numba's configured
dispatcher: `DispatcherKernel`. That is also the GPU's fallback where numba-cuda's internals
this module reads (the loaded function's cuda.core kernel, cuda.core's `launch`) are missing.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import threading
from math import prod
from typing import Any, Callable, Sequence

import numpy as np

from .codegen import KernelSource
from .device import LaunchConfig
from .kernel_cache import compile_for, dispatcher

# Positions within an array's flattened parameters.
ARRAY_HEAD = 5  # meminfo, parent, nitems, itemsize, data
DATA_SLOT = 4


def array_params(ptr: int, shape: Sequence[int], strides: Sequence[int], itemsize: int) -> list:
    """An array argument's flattened parameters, as Numba's launch passes them (Python ints:
    every field is pointer-sized)."""
    return [0, 0, prod(shape), itemsize, ptr, *shape, *strides]


def c_strides(shape: Sequence[int], itemsize: int) -> tuple[int, ...]:
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def scalar_packer(dtype: np.dtype) -> Callable[[Any], list]:
    """A scalar's parameters as Numba's launch makes them (its `_prepare_args`)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return lambda v: [bool(v)]
    if dtype.kind in "iu":
        ctype = getattr(ctypes, f"c_{dtype.name}")
        return lambda v: [ctype(int(v))]
    if dtype == np.float16:
        return lambda v: [ctypes.c_uint16(int(np.float16(v).view(np.uint16)))]
    if dtype == np.float32:
        return lambda v: [ctypes.c_float(v)]
    if dtype == np.float64:
        return lambda v: [ctypes.c_double(v)]
    if dtype.kind == "c":
        part = ctypes.c_float if dtype == np.complex64 else ctypes.c_double
        return lambda v: [part(v.real), part(v.imag)]
    raise TypeError(f"numfuse cannot pass a {dtype} scalar to a kernel")


def size_param(value: int):
    return ctypes.c_int64(value)


def device_array_params(array, view: tuple[int, ...] | None = None) -> list:
    """A Numba (or any CUDA array interface) device array's parameters, seen at shape `view`
    (a reshape of a C-contiguous array) or at its own shape and strides."""
    desc = array.__cuda_array_interface__
    itemsize = np.dtype(desc["typestr"]).itemsize
    shape = tuple(desc["shape"])
    strides = desc.get("strides")
    if view is not None and tuple(view) != shape:
        return array_params(desc["data"][0], view, c_strides(view, itemsize), itemsize)
    return array_params(desc["data"][0], shape, strides or c_strides(shape, itemsize), itemsize)


def data_slots(argtypes: Sequence) -> list[int]:
    """Where each array argument's data pointer lies in the packed parameters."""
    from numba.cuda import types

    slots, at = [], 0
    for t in argtypes:
        if isinstance(t, types.Array):
            slots.append(at + DATA_SLOT)
            at += ARRAY_HEAD + 2 * t.ndim
        else:
            at += 2 if isinstance(t, types.Complex) else 1
    return slots


# Dynamic shared memory a launch gets without the kernel opting in.
STATIC_SHARED_BYTES = 48 * 1024


# The dynamic shared memory each loaded kernel has opted in to, by (kernel handle, GPU). The
# attribute is one value per kernel and GPU, and one kernel serves every shape of its code: a
# launch asking for less must not lower the limit that another shape's launches rely on.
_opted_in: dict[tuple[Any, int], int] = {}
_opted_in_lock = threading.Lock()


def opt_in_shared(loaded, nbytes: int) -> None:
    """Let a loaded kernel (numba-cuda's CudaPythonFunction) launch with `nbytes` of dynamic
    shared memory, past the 48 KiB every launch gets: the kernel attribute
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, set as numba-cuda sets the carveout
    attribute (`set_shared_memory_carveout`), and only ever raised. A size the device cannot
    give raises the driver's error."""
    from numba.cuda.cudadrv.driver import binding, driver

    key = (loaded.handle, loaded.device.id)  # a CUkernel hashes by its value
    with _opted_in_lock:
        if _opted_in.get(key, 0) >= nbytes:
            return
        attribute = binding.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        driver.cuKernelSetAttribute(attribute, int(nbytes), loaded.handle, loaded.device.id)
        _opted_in[key] = nbytes


class GpuKernel:
    """One kernel compiled for fixed argument types and loaded on the current GPU, launched
    with packed parameters on a cuda.core stream."""

    packed = True  # takes array_params / scalar_packer lists

    def __init__(self, source: KernelSource, argtypes: tuple, config: LaunchConfig):
        from cuda.core import LaunchConfig as CoreLaunchConfig
        from cuda.core import launch

        kernel = self.compiled = compile_for(source, argtypes)
        self.data_slots = data_slots(argtypes)
        loaded = kernel._codelibrary.get_cufunc()
        self.function = loaded.kernel
        if config.shared_bytes > STATIC_SHARED_BYTES:
            opt_in_shared(loaded, config.shared_bytes)
        self.config = CoreLaunchConfig(grid=config.grid, block=config.block, shmem_size=config.shared_bytes)
        self._launch = launch

    def __call__(self, stream, params: Sequence) -> None:
        self._launch(stream, self.config, self.function, *params)


class DispatcherKernel:
    """Numba's dispatcher configured for the launch, taking device arrays and scalars. It is
    configured again at every launch: the simulator's `kernel[grid, block, ...]` configures the
    shared kernel object itself, so a plan with the same code may have reconfigured it (its
    dynamic shared memory too). `stream` is a Numba stream (or 0)."""

    packed = False

    def __init__(self, source: KernelSource, config: LaunchConfig):
        self.compiled = dispatcher(source)
        self.config = config

    def __call__(self, stream, args: Sequence) -> None:
        config = self.config
        with _without_occupancy_warnings():
            self.compiled[config.grid, config.block, stream, config.shared_bytes](*args)


_OCCUPANCY = threading.Lock()
_quiet_launches = [0, None]  # launches under way that silence the warning; the setting before them


@contextlib.contextmanager
def _without_occupancy_warnings():
    """Numba's NumbaPerformanceWarning about a small grid, which a small call's kernel is by
    design, left out of this launch. Numba's own setting turns it off while numfuse's launches
    run (counted across threads: the first puts it back when the last ends). Not
    warnings.catch_warnings: that is not thread-safe, and changing the filters resets the
    once-per-line registries of the user's own warnings."""
    configs = _numba_configs()
    with _OCCUPANCY:
        if _quiet_launches[0] == 0:
            _quiet_launches[1] = [c.CUDA_LOW_OCCUPANCY_WARNINGS for c in configs]
            for c in configs:
                c.CUDA_LOW_OCCUPANCY_WARNINGS = 0
        _quiet_launches[0] += 1
    try:
        yield
    finally:
        with _OCCUPANCY:
            _quiet_launches[0] -= 1
            if _quiet_launches[0] == 0:
                for c, setting in zip(configs, _quiet_launches[1]):
                    c.CUDA_LOW_OCCUPANCY_WARNINGS = setting


@functools.lru_cache(maxsize=1)
def _numba_configs() -> tuple:
    """The config modules whose CUDA_LOW_OCCUPANCY_WARNINGS Numba's launches read (numba-cuda's
    own, and numba's in versions that read that one)."""
    import importlib

    found = {}
    for name in ("numba.cuda.core.config", "numba.core.config"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if hasattr(module, "CUDA_LOW_OCCUPANCY_WARNINGS"):
            found[id(module)] = module
    return tuple(found.values())


class CoreStreams:
    """cuda.core stream objects by CUstream handle, made once: the launch takes them."""

    def __init__(self):
        self._by_handle: dict[int, Any] = {}

    def get(self, handle: int):
        stream = self._by_handle.get(handle)
        if stream is None:
            from cuda.core import Stream

            stream = Stream.from_handle(handle)  # as Numba's launch wraps its streams
            if len(self._by_handle) > 64:
                self._by_handle.clear()
            self._by_handle[handle] = stream
        return stream
