"""The CUDA target: each kernel a Numba CUDA kernel (codegen.py, templates.py, unroll.py),
launched on a GPU or on Numba's CUDA simulator: the executable (executable.py, fastcall.py,
call_stub.py, graphs.py), launches and their cost model (launch.py, launch_model.py,
autotune.py), device and array libraries (device.py, device_props.py, arrays.py, libraries.py,
streams.py), library calls (library_calls.py) and compiled code (kernel_cache.py, ptx.py,
ptx_cache.py, simmath.py). Its planning numbers are an H200's (device_props.py): a plan is
made before any device is chosen, and stays correct on every GPU, because the row cache's
length is a kernel argument sized at launch."""

from __future__ import annotations

from dataclasses import dataclass

from .device_props import COLUMN_CACHE_ROWS, PLAN_DEVICE, row_cache_bytes
from ..base import Target


@dataclass(frozen=True, repr=False)
class CudaTarget(Target):
    def times_are_real(self) -> bool:
        """Not on Numba's CUDA simulator, whose kernels run as Python."""
        from .device import backend

        return not backend().simulated

    def render(self, nest, header: str = ""):
        from .codegen import render

        return render(nest, header)

    def executable(self, plan, sources, leaf_kinds, options):
        from .executable import Executable

        return Executable(plan, sources, leaf_kinds, options.get("autotune", False), options.get("cuda_graphs", False),
                          options.get("label", "the function"))

    def strategy_text(self, nest) -> str:
        from . import unroll

        """How the kernel spreads its loops over the GPU, in words."""
        if nest.kind == "pointwise":
            if nest.schedule == "2d":
                return ("2d: threads side by side take neighbouring points of the last loop, rows of "
                        "threads whole rows of the others, indexed once per row")
            if "parts" in nest.strategy:
                return ("flat, in parts: a grid-stride loop over all the parts' points, each point branching to "
                        "its part")
            return (f"flat: a grid-stride loop, {unroll.UNROLL} points per thread per pass (all their loads first) for a "
                    "short body, then one")
        layout = {
            "rows": "rows: threads side by side take neighbouring reduced points of a row (a block, "
                    "or a slice of one for short rows, per row)",
            "columns": "columns: threads side by side take neighbouring outputs, coalesced; the "
                       "other threads of a block share each output's reduced points",
        }[nest.schedule]
        parts = [layout]
        if nest.scans:
            parts = ["a scan: one thread per row, its points in order (NumPy's order), threads side by side "
                     "take neighbouring rows"]
        if len(nest.phases) > 1:
            passes = len(nest.phases)
            parts.append(f"{passes} passes over each row (phases)")
        if nest.cached:
            parts.append(f"{', '.join(nest.cached)} kept in shared memory from the first pass (as much of each row as fits; see limit)")
        if nest.split:
            parts.append("each row split over several blocks; the last block to finish combines them")
        parts.append("indices in int64")
        return "; ".join(parts)


CUDA = CudaTarget(
    name="cuda",
    # 40 KiB: the 48 KiB every CUDA GPU gives a block without opting in, less a reserve for the
    # block reduction's arrays (device_props.py).
    row_cache_bytes=row_cache_bytes(PLAN_DEVICE),
    # Fewer rows than this leave most of a GPU's blocks idle, one block per row.
    split_max_rows=64,
    split_min_reduced=8192,
    column_cache_rows=COLUMN_CACHE_ROWS,
    row_cache_place="on-chip",
    description="Numba CUDA kernels, on a GPU or on Numba's CUDA simulator",
    # A launch costs microseconds, which a kernel of this many points notices; a larger one
    # would lose more as a part (its loop no longer unrolled, a branch at each point).
    part_max_points=1 << 16,
    # One thread scans a row: a few long rows would leave the GPU idle for a long time, so
    # they go to CuPy's scan (CUB's, over the whole GPU). An estimate, not a measurement.
    scan_serial_points=1 << 13,
)
