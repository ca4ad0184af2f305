"""Which CUDA numfuse runs on: a real GPU, or Numba's CUDA simulator when no driver is found.

numba.cuda decides between the two when it is first imported (NUMBA_ENABLE_CUDASIM), so the
choice is made here, once, the first time a kernel is needed; `import numfuse` imports nothing
of numba.cuda. The chosen backend is cached for the process.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import os
import sys
import warnings
from dataclasses import dataclass

from ..errors import user_stacklevel


class SimulatorWarning(UserWarning):
    """numfuse found no CUDA driver and runs kernels on Numba's CUDA simulator."""


# Simulated threads are Python threads and slow to start: launch tiny grids there.
SIM_BLOCK = 16
SIM_GRID = 2
# On a GPU.
BLOCK = 256
MAX_BLOCKS_PER_SM = 32


def _driver_has_device() -> bool:
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
    sm_count: int

    def launch_config(self, schedule: str, rows: int, inner: int) -> tuple[int, int]:
        """(blocks, threads per block) for a kernel; every template is correct for any choice."""
        if schedule == "block_per_row":
            if self.simulated:
                return min(rows, SIM_GRID), min(SIM_BLOCK, _pow2_at_least(inner))
            threads = min(BLOCK, max(32, _pow2_at_least(inner)))
            return min(rows, self.sm_count * MAX_BLOCKS_PER_SM), threads
        # flat and thread_per_row: one thread per row or point, grid-stride.
        if self.simulated:
            return min(SIM_GRID, -(-rows // SIM_BLOCK)), SIM_BLOCK
        return min(-(-rows // BLOCK), self.sm_count * MAX_BLOCKS_PER_SM), BLOCK

    @contextlib.contextmanager
    def launching(self):
        """Around simulator launches: switch threads often, and keep IEEE warnings quiet."""
        if not self.simulated:
            yield
            return
        interval = sys.getswitchinterval()
        sys.setswitchinterval(5e-4)  # each syncthreads waits on every thread of the block
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                yield
        finally:
            sys.setswitchinterval(interval)


def _pow2_at_least(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


@functools.lru_cache(maxsize=None)
def backend() -> Backend:
    already = sys.modules.get("numba.cuda")
    if already is None and os.environ.get("NUMBA_ENABLE_CUDASIM", "0") in ("", "0"):
        if not _driver_has_device():
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
    if not simulated and not cuda.is_available():
        raise RuntimeError(
            "numba.cuda was imported before numfuse and found no usable GPU; set "
            "NUMBA_ENABLE_CUDASIM=1 before importing numba to run on the simulator"
        )
    sm_count = 1 if simulated else cuda.get_current_device().MULTIPROCESSOR_COUNT
    return Backend(cuda, simulated, sm_count)
