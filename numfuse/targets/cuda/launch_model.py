"""Launch heuristics: the grid, block and dynamic shared memory of each kernel launch, chosen by
a cost model from the kernel's sizes and the device's properties (device_props.DeviceProps).

Every template is correct for any grid, and a reduction for any block whose threads per row
(ntr) are a power of two, with any number of rows per block (ntk), as long as its dynamic shared
memory is sized for that block (targets/cuda/codegen.py `shared_bytes`). So what follows only decides
speed; `candidate_configs` lists alternatives for an autotuner, every one of them correct.

The model (docs/architecture.md, "Launch heuristics"):

- a block has BLOCK = 256 threads (8 warps): with 2048 threads per SM, 8 blocks are resident per
  SM, enough warps to hide memory latency, and a reduction's tree has 8 levels at most. A
  reduction whose tree-reduction arrays (a slot per thread for each accumulator) would take more
  than REDUCTION_RESERVE (8 KiB) gets fewer threads, down to a warp;
- a grid is at most WAVES = 4 waves of resident blocks (SMs x blocks resident per SM, limited by
  threads, by the block limit and by shared memory); beyond that each thread takes more points
  through its grid-stride loop, so a large pointwise kernel launches 132 x 8 x 4 = 4224 blocks
  on an H200 and each thread takes ceil(n / (4224 x 256)) points;
- rows: ntr threads per row, the whole row up to the block (a row of 32 points gets one warp,
  a row of 6 gets 8 threads), and ntk = threads / ntr rows per block, no more than there are;
- columns: ntk = warp size neighbouring outputs (32 float32 are 128 bytes, a full memory
  transaction), the other threads split each output's reduced points;
- a cached row needs ntk x row bytes of shared memory: ntk is halved (the threads freed go to
  the row) until the rows fit what the block's tree-reduction arrays leave of the shared memory
  (48 KiB without opting in, less at least REDUCTION_RESERVE: the plan's 40 KiB row cache), or
  until strategy.cache_min_rows; a longer row keeps its first ncache points on chip;
- the cache never takes more than the 40 KiB a block gets without opting in (a block taking
  most of an SM's shared memory would leave it one block's warps to hide latency with); with
  autotune, on a GPU where numfuse's launch opts in (targets/cuda/launch.py), a row longer than
  that is also timed with a cache of up to 219 KiB (the whole row where it fits) at 256, 512
  and 1024 threads (`candidate_configs`);
- a split row gets enough blocks per row (gridDim.y) to give each SM SPLIT_BLOCKS_PER_SM
  blocks, and no block fewer than SPLIT_MIN_POINTS_PER_THREAD points per thread.

On Numba's simulator every thread is a Python thread: grids of at most SIM_GRID blocks of
SIM_BLOCK threads (SIM_COLUMN_WIDTH outputs side by side, SIM_SPLIT chunks per split row).
"""

from __future__ import annotations

from dataclasses import dataclass

from .codegen import shared_bytes
from .device_props import COLUMN_CACHE_ROWS, PLAN_DEVICE, REDUCTION_RESERVE, DeviceProps, optin_cache_bytes, row_cache_bytes
from ...loops.strategy import cache_min_rows

BLOCK = 256
WAVES = 4
SPLIT_BLOCKS_PER_SM = 4
SPLIT_MIN_POINTS_PER_THREAD = 4
# On the simulator.
SIM_BLOCK = 16
SIM_GRID = 2
SIM_COLUMN_WIDTH = 4
SIM_SPLIT = 2
# gridDim.y's limit on every CUDA GPU (2d kernels stride over the rows beyond it).
MAX_GRID_Y = 65535
# Block sizes an autotuner may try; with a row cache past 48 KiB of shared memory (opting in).
CANDIDATE_BLOCKS = (128, 256, 512, 1024)
OPTIN_BLOCKS = (256, 512, 1024)


@dataclass(frozen=True)
class LaunchConfig:
    grid: tuple[int, int]
    block: tuple[int, int]
    shared_bytes: int = 0  # dynamic shared memory: the tree reduction's arrays and cached rows
    cache_points: int = 0  # of each row, the points its cached buffers keep on chip (ncache)

    @property
    def nsplit(self) -> int:
        return self.grid[1]

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1]

    def __str__(self) -> str:
        text = f"grid {self.grid[0]}x{self.grid[1]}, block {self.block[0]}x{self.block[1]}"
        if self.shared_bytes:
            text += f", {self.shared_bytes} B shared"
        if self.cache_points:
            text += f", ncache {self.cache_points}"
        return text


def launch_config(nest, props: DeviceProps) -> LaunchConfig:
    """The cost model's choice for a kernel on a device."""
    if nest.kind == "pointwise":
        return pointwise_config(nest, props)
    return reduction_config(nest, props)


def resident_blocks(props: DeviceProps, threads: int, shared: int = 0) -> int:
    """Blocks of `threads` threads and `shared` bytes of shared memory one SM holds at once."""
    by_threads = props.max_threads_per_sm // max(1, threads)
    by_shared = props.shared_per_sm // shared if shared else by_threads
    return max(1, min(props.max_blocks_per_sm, by_threads, by_shared))


def grid_limit(props: DeviceProps, threads: int, shared: int = 0) -> int:
    """The most blocks worth launching: WAVES waves of resident blocks on every SM."""
    return props.sm_count * resident_blocks(props, threads, shared) * WAVES


def pointwise_config(nest, props: DeviceProps, threads: int | None = None, points_per_thread: int = 1) -> LaunchConfig:
    """A flat kernel: a grid-stride loop over nest.outer_size points, a thread per point (or per
    `points_per_thread` points) up to WAVES waves of resident blocks, more points per thread
    beyond. A 2d kernel: pointwise_2d_config."""
    if nest.schedule == "2d":
        return pointwise_2d_config(nest, props, threads, points_per_thread)
    n = nest.outer_size
    if props.simulated and threads is None:
        return LaunchConfig((max(1, min(SIM_GRID, -(-n // SIM_BLOCK))), 1), (SIM_BLOCK, 1))
    threads = threads or min(BLOCK, props.max_threads_per_block)
    blocks = -(-n // (threads * points_per_thread))
    return LaunchConfig((max(1, min(blocks, grid_limit(props, threads))), 1), (threads, 1))


def pointwise_2d_config(nest, props: DeviceProps, threads: int | None = None, points_per_thread: int = 1
                        ) -> LaunchConfig:
    """A 2d pointwise kernel: a block of (bx, by) threads, bx side by side along the last loop
    (the least power of two covering it, up to the block) and by = threads / bx rows. The grid
    spreads rows first: along y, the rows' blocks up to the WAVES limit (and MAX_GRID_Y); along
    x, more than one block per row only where the rows leave the grid room. So a thread takes
    many points of each row it takes, and the work done once per row (its indices, the row's
    part of every address, the inner loop's setup) is shared by them."""
    ncols = nest.outer[-1].size
    nrows = nest.outer_size // max(1, ncols)
    if props.simulated and threads is None:
        threads, limit = SIM_BLOCK, SIM_GRID
    else:
        threads = threads or min(BLOCK, props.max_threads_per_block)
        limit = grid_limit(props, threads)
    bx = min(threads, _pow2_at_least(ncols))
    by = max(1, threads // bx)
    gy = max(1, min(-(-nrows // (by * points_per_thread)), limit, MAX_GRID_Y))
    gx = max(1, min(-(-ncols // bx), limit // gy))
    return LaunchConfig((gx, gy), (bx, by))


def reduction_config(nest, props: DeviceProps, threads: int | None = None, rows: int | None = None,
                     nsplit: int | None = None, cache_bytes: int | None = None) -> LaunchConfig:
    """Threads per row (ntr), rows per block (ntk), the cache's share of each row, the grid and
    a split row's chunks. `threads`, `rows` (ntk), `nsplit` and `cache_bytes` (the shared memory
    the cached rows may take, up to optin_cache_bytes) override the model's choices."""
    simulated = props.simulated
    if threads is None:
        threads = SIM_BLOCK if simulated else min(BLOCK, props.max_threads_per_block)
        # Many accumulators: a smaller block, so that the tree reduction's arrays stay within
        # the reserve the plan's row cache leaves them.
        while threads > props.warp_size and shared_bytes(nest, threads, 0, 0) > REDUCTION_RESERVE:
            threads //= 2
    nrows, nred = nest.outer_size, nest.inner_size
    if rows is not None:
        ntk = max(1, min(rows, threads))
        ntr = min(_pow2_at_most(threads // ntk), _pow2_at_least(nred))
    elif nest.schedule == "rows":
        ntr = min(threads, _pow2_at_least(nred))
        ntk = min(threads // ntr, _pow2_at_least(nrows))
    else:
        width = SIM_COLUMN_WIDTH if simulated else props.warp_size
        ntk = min(width, threads, _pow2_at_least(nrows))
        ntr = min(threads // ntk, _pow2_at_least(nred))
    if nest.scans:
        # A scan's row runs in one thread, point by point in NumPy's order (a block scan across
        # a row's threads is not built): the block's threads take neighbouring rows.
        ntr, ntk = 1, min(threads if rows is None else max(1, min(rows, threads)), _pow2_at_least(nrows))
    item_bytes = sum(nest.buffer(b).dtype.itemsize for b in nest.cached)

    # The model's own launches stay within the shared memory a launch gets without opting in.
    cache_limit, shared_limit = ((row_cache_bytes(props), props.shared_per_block) if cache_bytes is None
                                 else (cache_bytes, props.usable_shared))

    def cache_budget(ntk: int, ntr: int) -> int:
        # What the tree reduction's arrays leave, and never more than the row cache's limit.
        return min(cache_limit, shared_limit - shared_bytes(nest, ntk * ntr, 0, 0))

    fewest = min(ntk, cache_min_rows(nest.schedule, nrows, nred * item_bytes, COLUMN_CACHE_ROWS,
                                          row_cache_bytes(PLAN_DEVICE)))
    while ntk > fewest and ntk * nred * item_bytes > cache_budget(ntk, ntr):
        ntk //= 2
        if not nest.scans:
            ntr = min(_pow2_at_most(threads // ntk), _pow2_at_least(nred))  # the threads freed go to the row
    cache_points = min(nred, max(0, cache_budget(ntk, ntr)) // (ntk * item_bytes)) if item_bytes else 0
    shared = shared_bytes(nest, ntk * ntr, ntk, cache_points)
    row_blocks = -(-nrows // ntk)
    grid = max(1, min(row_blocks, SIM_GRID if simulated else grid_limit(props, ntk * ntr, shared)))
    chunks = 1
    if nest.split:
        if nsplit is not None:
            chunks = max(1, nsplit)
        elif simulated:
            chunks = SIM_SPLIT
        else:
            per_row = -(-nred // (SPLIT_MIN_POINTS_PER_THREAD * ntr))
            chunks = max(1, min(per_row, (SPLIT_BLOCKS_PER_SM * props.sm_count) // max(1, row_blocks)))
    block = (ntr, ntk) if nest.schedule == "rows" else (ntk, ntr)
    return LaunchConfig((grid, chunks), block, shared, cache_points)


def candidate_configs(nest, props: DeviceProps) -> list[LaunchConfig]:
    """The cost model's choice first, then alternatives for an autotuner to time: blocks of
    CANDIDATE_BLOCKS threads; for pointwise kernels also 4 points per thread; for reductions
    half and twice the rows per block; for split reductions one chunk, half and twice the
    chunks per row. Each is correct for the kernel (check_config passes)."""
    default = launch_config(nest, props)
    found = [default]
    blocks = [t for t in CANDIDATE_BLOCKS if t <= props.max_threads_per_block]
    if nest.kind == "pointwise":
        for t in blocks:
            for points in (1, 4):
                found.append(pointwise_config(nest, props, threads=t, points_per_thread=points))
    else:
        for t in blocks:
            found.append(reduction_config(nest, props, threads=t))
        threads = default.threads
        ntk = default.block[1] if nest.schedule == "rows" else default.block[0]
        for rows in (ntk // 2, ntk * 2):
            if 1 <= rows <= threads:
                found.append(reduction_config(nest, props, threads=threads, rows=rows))
        if nest.split:
            for chunks in (1, default.nsplit // 2, default.nsplit * 2):
                found.append(reduction_config(nest, props, nsplit=chunks))
        # Rows longer than the model's cache: where kernels can opt into more shared memory,
        # a cache up to the whole row, with more threads to keep memory requests in flight.
        if nest.cached and default.cache_points < nest.inner_size and props.shared_optin_usable:
            for t in OPTIN_BLOCKS:
                if t <= props.max_threads_per_block:
                    found.append(reduction_config(nest, props, threads=t, cache_bytes=optin_cache_bytes(props)))
    check_config(nest, default, props)
    # Alternatives that the device cannot run (a block's shared memory over what the device
    # gives it, opted in where numfuse's launch can) are left out.
    return [c for c in dict.fromkeys(found) if c is default or not config_problems(nest, c, props)]


def check_config(nest, config: LaunchConfig, props: DeviceProps) -> None:
    """Raise ValueError unless the kernel runs correctly with `config` on the device."""
    problems = config_problems(nest, config, props)
    if problems:
        raise ValueError(f"{nest.name}: {config}: " + "; ".join(problems))


def config_problems(nest, config: LaunchConfig, props: DeviceProps) -> list[str]:
    """Why the kernel would not run correctly with `config` on the device (empty: it would)."""
    problems = []
    if min(config.grid) < 1 or min(config.block) < 1:
        problems.append("an empty grid or block")
    if config.threads > props.max_threads_per_block:
        problems.append(f"{config.threads} threads per block, over {props.max_threads_per_block}")
    if config.shared_bytes > props.usable_shared:
        problems.append(f"{config.shared_bytes} bytes of shared memory, over {props.usable_shared}")
    if nest.kind == "reduction":
        ntr, ntk = config.block if nest.schedule == "rows" else config.block[::-1]
        if ntr & (ntr - 1):
            problems.append(f"{ntr} threads per row, not a power of two (the tree reduction halves them)")
        if nest.scans and ntr != 1:
            problems.append(f"{ntr} threads per row of a scan, which one thread runs in order")
        if config.shared_bytes < shared_bytes(nest, config.threads, ntk, config.cache_points):
            problems.append("too little shared memory for the block's tree reduction and cached rows")
        if not nest.cached and config.cache_points:
            problems.append("cached points for a kernel without a cache")
        if config.nsplit > 1 and not nest.split:
            problems.append("chunks per row for a kernel that does not split")
    elif config.shared_bytes or config.cache_points:
        problems.append("shared memory for a pointwise kernel")
    elif nest.schedule == "flat" and (config.grid[1] != 1 or config.block[1] != 1):
        problems.append("a second grid or block dimension for a flat pointwise kernel")
    elif config.grid[1] > MAX_GRID_Y:
        problems.append(f"{config.grid[1]} blocks along y, over {MAX_GRID_Y}")
    return problems


def _pow2_at_least(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


def _pow2_at_most(n: int) -> int:
    return 1 << (max(1, n).bit_length() - 1)
