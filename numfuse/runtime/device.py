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

    def launch_config(self, nest) -> "LaunchConfig":
        """Grid, block and shared memory for a kernel; every template is correct for any choice,
        so this is only a cost model (see reduction_config)."""
        threads = SIM_BLOCK if self.simulated else BLOCK
        if nest.kind == "pointwise":
            return pointwise_config(nest.outer_size, threads, self.sm_count, self.simulated)
        return reduction_config(nest, threads, self.sm_count, self.simulated)

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


@dataclass(frozen=True)
class LaunchConfig:
    grid: tuple[int, int]
    block: tuple[int, int]
    shared_bytes: int = 0  # dynamic shared memory: cached rows
    cache_points: int = 0  # of each row, the points its cached buffers keep on chip

    @property
    def nsplit(self) -> int:
        return self.grid[1]


# The cost model for reductions. A block has `threads` threads: ntr per row (a power of two, for
# the tree reduction) times ntk rows.
# - rows: ntr covers the row up to the whole block, so short rows share a block (a warp per row
#   when rows are 32 long) and long rows get every thread;
# - columns: ntk neighbouring outputs side by side, 32 of them (128 bytes of float32, a full
#   memory transaction) or fewer when there are fewer outputs; the block's other threads split
#   each output's reduced points;
# - a cached row takes ntk * row bytes of shared memory: ntk is halved until that fits, and
#   each row gets the threads freed; a row longer than the cache keeps its first points;
# - a split row (few rows, long ones) gets enough blocks per row to give each SM about four
#   blocks, and no block fewer than 4 points per thread.
COLUMN_WIDTH = 32
SIM_COLUMN_WIDTH = 4


def reduction_config(nest, threads: int, sm_count: int, simulated: bool) -> LaunchConfig:
    from ..strategy import ROW_CACHE_BYTES, cache_min_rows

    nrows, nred = nest.outer_size, nest.inner_size
    if nest.schedule == "rows":
        ntr = min(threads, _pow2_at_least(nred))
        ntk = min(threads // ntr, _pow2_at_least(nrows))
    else:
        ntk = min(SIM_COLUMN_WIDTH if simulated else COLUMN_WIDTH, threads, _pow2_at_least(nrows))
        ntr = min(threads // ntk, _pow2_at_least(nred))
    itemsizes = {b.name: b.dtype.itemsize for b in nest.buffers}
    item_bytes = sum(itemsizes[b] for b in nest.cached)
    fewest = min(ntk, cache_min_rows(nest.schedule, nrows, nred * item_bytes))
    while ntk > fewest and ntk * nred * item_bytes > ROW_CACHE_BYTES:
        ntk //= 2
        ntr = min(threads // ntk, _pow2_at_least(nred))  # the threads freed go to the row
    cache_points = min(nred, ROW_CACHE_BYTES // (ntk * item_bytes)) if item_bytes else 0
    row_blocks = -(-nrows // ntk)
    grid = min(row_blocks, SIM_GRID if simulated else sm_count * MAX_BLOCKS_PER_SM)
    nsplit = 1
    if nest.split:
        if simulated:
            nsplit = 2
        else:
            nsplit = max(1, min(-(-nred // (4 * ntr)), (4 * sm_count) // max(1, row_blocks)))
    block = (ntr, ntk) if nest.schedule == "rows" else (ntk, ntr)
    return LaunchConfig((grid, nsplit), block, ntk * cache_points * item_bytes, cache_points)


def pointwise_config(points: int, threads: int, sm_count: int, simulated: bool) -> LaunchConfig:
    """A grid-stride loop over `points`: blocks of `threads`, at most enough to fill the GPU."""
    most = SIM_GRID if simulated else sm_count * MAX_BLOCKS_PER_SM
    return LaunchConfig((min(-(-points // threads), most), 1), (threads, 1))


def _pow2_at_least(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


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
        return "gpu" if _driver_has_device() else "ptx"
    from numba.cuda.core import config

    if config.ENABLE_CUDASIM:
        return "simulator"
    return "gpu" if already.is_available() else "ptx"


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
    if simulated:
        _serialize_simulated_shared_arrays()
    if not simulated and not cuda.is_available():
        raise RuntimeError(
            "numba.cuda is loaded without the CUDA simulator (imported before numfuse, or by "
            "JitFunction.compile on a machine without a GPU) and found no usable GPU: run "
            "kernels in another process, or set NUMBA_ENABLE_CUDASIM=1 before numba is imported"
        )
    sm_count = 1 if simulated else cuda.get_current_device().MULTIPROCESSOR_COUNT
    return Backend(cuda, simulated, sm_count)
