"""Compiling generated kernels to PTX without a GPU, and checking what the compiler made.

`numba.cuda.compile_ptx` runs NVVM on a machine without a GPU (numba-cuda's CUDA wheels bring
NVVM and ptxas), so every kernel numfuse generates can be compiled for Hopper (sm_90) in CI and
its PTX read: a float32 kernel must not compute in float64, and `ptxas -v` reports registers and
spills. This module needs the real numba.cuda (not the simulator).
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .codegen import KernelSource
from ...ir.dtypes import compute_dtype
from ...loops.loopnest import Compute, Iota, Load, Select, walk
from .kernel_cache import load_function

_F64_OP = re.compile(r"^\s*(?:@%p\d+\s+)?([a-z][a-z0-9_.]*\.f64)\b")
# libdevice's float32 sin/cos/tan reduce huge arguments through a float64 multiply by pi/2:
# these instructions are the library's, not numfuse's.
_LIBDEVICE_TRIG_F64 = ("cvt.rn.f64.s64", "mul.f64", "cvt.rn.f32.f64")


@dataclass
class PTXReport:
    name: str
    ptx: str
    f64_instructions: list[str]
    # Each kernel variable whose Numba type differs from the dtype the loop nest gives it:
    # (variable, Numba's type, the loop nest's dtype). The simulator infers no types, so this is
    # where a template that computes in the wrong type shows up without a GPU.
    type_mismatches: list[tuple[str, str, str]]

    @property
    def computes_in_f64(self) -> bool:
        return bool(self.f64_instructions)


def argument_types(kernel: KernelSource, views: dict[str, tuple], scalars: dict[str, np.dtype]):
    """Numba types of a kernel's parameters: C-contiguous arrays (any layout, "A", for a strided
    buffer: views map a name to (dtype, ndim) or (dtype, ndim, strided)), scalars and counts in their dtypes, int64 sizes."""
    from numba.cuda import types
    from numba.cuda.np.numpy_support import from_dtype

    result = []
    for p in kernel.params:
        if p.kind == "buffer":
            dtype, ndim, *strided = views[p.name]
            result.append(types.Array(from_dtype(dtype), ndim, "A" if strided and strided[0] else "C"))
        elif p.kind == "scalar":
            result.append(from_dtype(scalars[p.name]))
        elif p.kind == "count":
            result.append(from_dtype(p.dtype))
        elif p.kind == "partial":
            result.append(types.Array(from_dtype(p.dtype), 1, "C"))
        elif p.kind == "counter":
            result.append(types.Array(types.int32, 1, "C"))
        else:
            result.append(types.int64)
    return tuple(result)


def _expected_types(nest) -> dict[str, np.dtype]:
    """The dtype the loop nest gives each kernel variable it names."""
    buffers = {b.name: b.dtype for b in nest.buffers}
    expected = {s.name: s.dtype for s in nest.scalars}
    expected.update({c.name: c.dtype for c in nest.counts})
    expected.update({a.name: compute_dtype(a.dtype) for a in nest.accumulators})
    expected.update({f"{a.name}_i": np.dtype(np.int64) for a in nest.accumulators if a.indexed})
    # Loop indices are int64, so tensors over 2**31 elements index correctly.
    expected["lin"] = np.dtype(np.int64)
    if nest.kind == "reduction":
        expected.update({"row": np.dtype(np.int64), "first": np.dtype(np.int64)})

    def visit(stmts):
        for s in walk(stmts):
            if isinstance(s, Load):
                expected[s.dst] = buffers[s.buffer]
            elif isinstance(s, (Compute, Select)):
                expected[s.dst] = s.dtype
            elif isinstance(s, Iota):
                expected[s.dst] = np.dtype(np.int64)

    visit(nest.body)
    visit(nest.epilogue)
    return expected


@contextlib.contextmanager
def _capture_compile_result():
    """numba-cuda's compile_ptx returns no typing; catch the compile result it builds on."""
    from numba.cuda import compiler

    captured = []
    real = compiler.compile_cuda

    def spy(*args, **kwargs):
        result = real(*args, **kwargs)
        captured.append(result)
        return result

    compiler.compile_cuda = spy
    try:
        yield captured
    finally:
        compiler.compile_cuda = real


def compile_kernel(kernel: KernelSource, nest, cc=(9, 0)) -> PTXReport:
    """Compile one generated kernel (with its LoopNest for the parameter types) to PTX."""
    from numba import cuda
    from numba.cuda.np.numpy_support import from_dtype
    from numba.cuda.types import unliteral

    _, fn = load_function(kernel)
    views = {b.name: (b.dtype, len(b.view), b.strided) for b in nest.buffers}
    scalars = {s.name: s.dtype for s in nest.scalars}
    with _capture_compile_result() as captured:
        ptx, _ = cuda.compile_ptx(fn, argument_types(kernel, views, scalars), cc=cc)
    if not captured:
        raise RuntimeError("numba-cuda's compile_ptx no longer goes through compile_cuda")
    typemap = captured[-1].type_annotation.typemap
    mismatches = []
    for var, dtype in _expected_types(nest).items():
        want = from_dtype(dtype)
        for name, numba_type in typemap.items():
            if name.split(".")[0] == var and unliteral(numba_type) != want:
                mismatches.append((name, str(numba_type), str(want)))
    f64 = []
    for line in ptx.splitlines():
        match = _F64_OP.match(line)
        if match and not match.group(1).startswith(".reg"):
            f64.append(line.strip())
    return PTXReport(kernel.name, ptx, f64, mismatches)


def only_libdevice_trig_f64(report: PTXReport) -> bool:
    """True if every float64 instruction is from libdevice's float32 trig argument reduction."""
    return all(line.split()[0].lstrip("@%p0123456789 ") in _LIBDEVICE_TRIG_F64 for line in report.f64_instructions)


def ptxas_path() -> Path | None:
    try:
        import nvidia.cuda_nvcc

        base = Path(next(iter(nvidia.cuda_nvcc.__path__)))
    except (ImportError, StopIteration):
        return None
    path = base / "bin" / ("ptxas.exe" if sys.platform == "win32" else "ptxas")
    return path if path.exists() else None


@dataclass
class ResourceUsage:
    registers: int
    spill_stores: int
    spill_loads: int
    stack_frame: int


def ptxas_usage(report: PTXReport, arch: str = "sm_90") -> ResourceUsage | None:
    """Registers and spills that ptxas reports for the kernel, or None without ptxas."""
    ptxas = ptxas_path()
    if ptxas is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "k.ptx")
        with open(path, "w") as f:
            f.write(report.ptx)
        out = subprocess.run(
            [str(ptxas), f"-arch={arch}", "-v", path, "-o", os.path.join(tmp, "k.cubin")],
            capture_output=True,
            text=True,
            check=True,
        ).stderr

    def number(pattern: str) -> int:
        match = re.search(pattern, out)
        return int(match.group(1)) if match else 0

    return ResourceUsage(
        registers=number(r"Used (\d+) registers"),
        spill_stores=number(r"(\d+) bytes spill stores"),
        spill_loads=number(r"(\d+) bytes spill loads"),
        stack_frame=number(r"(\d+) bytes stack frame"),
    )
