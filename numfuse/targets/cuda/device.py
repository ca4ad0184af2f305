"""Which CUDA numfuse runs on: a real GPU, or Numba's CUDA simulator when no driver is found.

numba.cuda decides between the two when it is first imported (NUMBA_ENABLE_CUDASIM), so the
choice is made here, once, the first time a kernel is needed; `import numfuse` imports nothing
of numba.cuda. The chosen backend, with the device's properties that the launch cost model uses
(read once: targets/cuda/launch_model.py), is cached for the process.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import os
import sys
import threading
import warnings
from dataclasses import dataclass, replace

from .device_props import H200, SIMULATOR, DeviceProps
from ...errors import SimulatorWarning, user_stacklevel
from .launch_model import LaunchConfig, launch_config

__all__ = ["Backend", "LaunchConfig", "SimulatorWarning", "backend", "read_props"]


def driver_has_device() -> bool:
    """True if a CUDA driver loads and reports at least one device (without numba.cuda)."""
    names = ["libcuda.so.1", "libcuda.so", ctypes.util.find_library("cuda")]
    if sys.platform == "win32":
        names = ["nvcuda.dll"]
    for name in names:
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        try:
            if lib.cuInit(0) != 0:
                return False
            count = ctypes.c_int(0)
            return lib.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0
        except AttributeError:
            return False
    return False


@dataclass(frozen=True)
class Backend:
    cuda: object  # the numba.cuda module
    simulated: bool
    props: DeviceProps  # read once from the device (read_props); SIMULATOR on the simulator

    @property
    def sm_count(self) -> int:
        return self.props.sm_count

    def launch_config(self, nest) -> LaunchConfig:
        """Grid, block and shared memory for a kernel (targets/cuda/launch_model.py's cost model; every
        template is correct for any choice it makes)."""
        return launch_config(nest, self.props)

    @contextlib.contextmanager
    def launching(self):
        """Around simulator launches: switch threads often, and keep IEEE warnings quiet."""
        if not self.simulated:
            yield
            return
        # The simulator runs one kernel at a time in a process (its kernel context is global):
        # launches from several Python threads take turns.
        with SIMULATOR_LAUNCHES:
            interval = sys.getswitchinterval()
            sys.setswitchinterval(5e-4)  # each syncthreads waits on every thread of the block
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    yield
            finally:
                sys.setswitchinterval(interval)


SIMULATOR_LAUNCHES = threading.RLock()


# The device attributes read into DeviceProps (numba's Device reads CU_DEVICE_ATTRIBUTE_<name>).
_ATTRIBUTES = {
    "sm_count": "MULTIPROCESSOR_COUNT",
    "max_threads_per_block": "MAX_THREADS_PER_BLOCK",
    "max_threads_per_sm": "MAX_THREADS_PER_MULTIPROCESSOR",
    "max_blocks_per_sm": "MAX_BLOCKS_PER_MULTIPROCESSOR",
    "warp_size": "WARP_SIZE",
    "shared_per_block": "MAX_SHARED_MEMORY_PER_BLOCK",
    "shared_per_block_optin": "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
    "shared_per_sm": "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
    "l2_bytes": "L2_CACHE_SIZE",
}


def read_props(device) -> DeviceProps:
    """The launch cost model's view of a numba.cuda Device (`cuda.get_current_device()`). An
    attribute the driver or binding does not report keeps the H200 default, so an unusual
    driver costs speed, never a failed launch."""
    values = {}
    for field, attribute in _ATTRIBUTES.items():
        try:
            values[field] = int(getattr(device, attribute))
        except Exception:  # noqa: BLE001 - any failure to read an attribute: keep the default
            values[field] = getattr(H200, field)
    name = getattr(device, "name", "GPU")
    name = name.decode() if isinstance(name, bytes) else str(name)
    return DeviceProps(name=name, **values)


def _serialize_simulated_shared_arrays() -> None:
    """The simulator gives each block's threads one static shared array per source line, found
    or created in a dictionary without a lock: two threads reaching the line together can each
    create their own array, and the block's reduction then combines garbage (a rare, flaky
    wrong result). This replacement does the same under a lock, so every thread of the block
    sees one array."""
    import threading

    import numpy as np
    from numba.cuda import types
    from numba.cuda.np import numpy_support
    from numba.cuda.simulator import kernelapi

    shared = kernelapi.FakeCUDAShared
    if getattr(shared.array, "numfuse_serialized", False):
        return
    lock = threading.Lock()
    unlocked = shared.array

    def array(self, shape, dtype, alignment=None):
        if shape == 0 or alignment is not None:  # dynamic shared memory; or the refusal
            return unlocked(self, shape, dtype, alignment)
        caller = sys._getframe(1)
        where = (caller.f_code.co_filename, caller.f_lineno)  # as the simulator keys them
        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        with lock:
            found = self._allocations.get(where)
            if found is None:
                found = self._allocations[where] = np.empty(shape, dtype)
        return found

    array.numfuse_serialized = True
    shared.array = array


def compile_target() -> str:
    """What compiling a kernel means in this process, without choosing a backend: "gpu" (a
    GPU runs kernels), "simulator" (the CUDA simulator does, and numba-cuda's compiler is not
    loaded) or "ptx" (no GPU: numba-cuda's compiler makes PTX, and kernels cannot run)."""
    already = sys.modules.get("numba.cuda")
    if already is None:
        if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
            return "simulator"
        return "gpu" if driver_has_device() else "ptx"
    from numba.cuda.core import config

    if config.ENABLE_CUDASIM:
        return "simulator"
    return "gpu" if already.is_available() else "ptx"


@functools.lru_cache(maxsize=None)
def backend() -> Backend:
    already = sys.modules.get("numba.cuda")
    if already is None and os.environ.get("NUMBA_ENABLE_CUDASIM", "0") in ("", "0"):
        if not driver_has_device():
            os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
            warnings.warn(
                "numfuse found no CUDA driver or GPU and runs kernels on Numba's CUDA simulator, "
                "which is slow: use it for testing with small arrays",
                SimulatorWarning,
                stacklevel=user_stacklevel(),
            )
    from numba import cuda
    from numba.cuda.core import config

    simulated = bool(config.ENABLE_CUDASIM)
    if simulated:
        _serialize_simulated_shared_arrays()
    if not simulated and not cuda.is_available():
        raise RuntimeError(
            "numba.cuda is loaded without the CUDA simulator (imported before numfuse, or by "
            "JitFunction.compile on a machine without a GPU) and found no usable GPU: run "
            "kernels in another process, or set NUMBA_ENABLE_CUDASIM=1 before numba is imported"
        )
    # On a GPU numfuse's launch opts kernels into more shared memory (launch.opt_in_shared).
    props = SIMULATOR if simulated else replace(read_props(cuda.get_current_device()), shared_optin_usable=True)
    return Backend(cuda, simulated, props)


class ThreadContext(threading.local):
    """Whether this thread has a CUDA context current. Kernels launch into the thread's current
    context, and a fast call enters none (the full path enters the GPU's and leaves it again):
    a thread whose first numfuse call is a fast call that allocates nothing (it only writes
    into its arguments) may have none."""

    ready = False

    def ensure(self, cuda) -> None:
        cuda.current_context()  # Numba makes the primary context current where none is
        self.ready = True


THREAD_CONTEXT = ThreadContext()
