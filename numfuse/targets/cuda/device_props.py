"""What the launch cost model needs to know about a GPU, and the defaults used without one.

A plan is made before any device is chosen (and in the trace tier, without numba at all), so its
size-dependent decisions (how much of a row the on-chip cache holds, hence the online softmax
and the bytes model) use PLAN_DEVICE, an H200 as Hopper GPUs report themselves. At launch,
targets/cuda/device.py reads the real device's properties once (`read_props`), and
targets/cuda/launch_model.py sizes grids, blocks and shared memory from them; everything the plan decided
stays correct on any device, because the cache's length is a kernel argument.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class DeviceProps:
    name: str
    sm_count: int
    max_threads_per_block: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    warp_size: int
    # Shared memory a block may use without opting in: 48 KiB on every CUDA GPU so far.
    shared_per_block: int
    # With the kernel attribute CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES set (227 KiB on
    # Hopper). numba-cuda's launch does not set it; numfuse's own (targets/cuda/launch.py GpuKernel)
    # does, and `shared_optin_usable` says whether this process launches that way. The cost
    # model's own choice never opts in (a block that takes most of an SM's shared memory leaves
    # it one block's warps to hide memory latency with); autotune offers larger row caches as
    # candidates and keeps them where they are faster.
    shared_per_block_optin: int
    shared_per_sm: int
    l2_bytes: int
    simulated: bool = False
    shared_optin_usable: bool = False

    @property
    def usable_shared(self) -> int:
        """Dynamic shared memory a kernel launch may ask for."""
        return self.shared_per_block_optin if self.shared_optin_usable else self.shared_per_block


# An H200 (GH100, as an H100 SXM reports itself, with 132 SMs): the plan's device.
H200 = DeviceProps(
    name="H200 (numfuse's default)",
    sm_count=132,
    max_threads_per_block=1024,
    max_threads_per_sm=2048,
    max_blocks_per_sm=32,
    warp_size=32,
    shared_per_block=48 * 1024,
    shared_per_block_optin=227 * 1024,
    shared_per_sm=228 * 1024,
    l2_bytes=50 * 1024 * 1024,
)

# Numba's CUDA simulator: one "SM"; it runs each thread as a Python thread, so the cost model
# launches tiny grids there (targets/cuda/launch_model.py) whatever these limits allow.
SIMULATOR = replace(
    H200,
    name="Numba CUDA simulator",
    sm_count=1,
    shared_per_block_optin=48 * 1024,
    l2_bytes=0,
    simulated=True,
)

PLAN_DEVICE = H200

# A block's shared memory holds its tree reduction's arrays (one slot per thread for each
# accumulator, up to 8 bytes each) and the cached rows. The rows get what is left after a
# reserve that covers the reduction arrays of a 256-thread block with up to 4 accumulators of
# 8 bytes (or a 1024-thread block with 2 float32 ones); a kernel needing more at launch caches
# fewer points (targets/cuda/launch_model.py recomputes the cache from the actual block).
REDUCTION_RESERVE = 8 * 1024

# A "columns" reduction caching long rows keeps this many neighbouring outputs: 8 float32 are
# one 32-byte memory sector.
COLUMN_CACHE_ROWS = 8


def row_cache_bytes(props: DeviceProps) -> int:
    """Shared memory for one block's cached rows, as the cost model sizes them: 40 KiB on every
    GPU (without opting in)."""
    return props.shared_per_block - REDUCTION_RESERVE


def optin_cache_bytes(props: DeviceProps) -> int:
    """The most shared memory one block's cached rows may take where kernels opt in (219 KiB
    on an H200); the same as row_cache_bytes where they cannot."""
    return props.usable_shared - REDUCTION_RESERVE
