"""The parameters numfuse packs for a GPU launch (targets/cuda/launch.py) match what the compiled
kernel declares: checked against the PTX the real compiler makes for the argument types the
runtime compiles for. An array is 5 + 2 * ndim 64-bit fields; a scalar one value of its
width (a complex number two)."""

import re

import numpy as np
import pytest

import numfuse
from numfuse.targets.cuda.launch import ARRAY_HEAD, DATA_SLOT, data_slots
from numfuse.targets.cuda.ptx import argument_types, compile_kernel

PTX_WIDTH = {"u8": 1, "u16": 2, "u32": 4, "u64": 8, "f32": 4, "f64": 8, "b8": 1, "b16": 2, "b32": 4, "b64": 8}


def declared_params(ptx: str) -> list[int]:
    """Byte widths of the kernel entry's parameters, in order."""
    entry = ptx[ptx.index(".entry"):]
    entry = entry[:entry.index(")")]
    return [PTX_WIDTH[t] for t in re.findall(r"\.param \.([a-z]+\d+) ", entry)]


def packed_widths(argtypes) -> list[int]:
    """Widths of what launch.py packs, by the ABI it assumes."""
    from numba.cuda import types

    widths = []
    for t in argtypes:
        if isinstance(t, types.Array):
            widths.extend([8] * (ARRAY_HEAD + 2 * t.ndim))
        elif isinstance(t, types.Complex):
            widths.extend([t.bitwidth // 16] * 2)
        elif t == types.boolean:
            widths.append(1)
        else:
            widths.append(t.bitwidth // 8)
    return widths


def strided(x):
    return x[:, ::2]


CASES = {
    "elementwise with scalars": (lambda x, y, a, n, b: (x * a + y) * n > b,
                                 (np.ones((4, 6), np.float32), np.ones(6, np.float64), np.float32(2), 3, True)),
    "int8 and uint16 scalars": (lambda x, a, b: x * a + b, (np.ones(5, np.int8), np.int8(2), np.uint16(3))),
    "softmax (cached rows)": (lambda x: np.exp(x - x.max(-1, keepdims=True)) / np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True),
                              (np.ones((8, 100), np.float32),)),
    "split reduction": (lambda x: x.sum(axis=1), (np.ones((2, 20000), np.float32),)),
    "float16 in, float16 out": (lambda x, s: x * s, (np.ones((3, 3), np.float16), 0.5)),
    "mean and var (count arguments)": (lambda x: (x.mean(axis=1), x.var(axis=0)), (np.ones((6, 50), np.float32),)),
    "complex scalars": (lambda z, a, b: z * a + b, (np.ones(4, np.complex64), np.complex64(1 + 2j), 2 - 1j)),
}


@pytest.mark.parametrize("case", CASES, ids=str)
def test_packed_parameters_match_the_kernels_declaration(case):
    fn, args = CASES[case]
    jf = numfuse.jit(fn)
    plan = jf.plan(*args)
    for kernel, source in zip(plan.kernels, jf.kernel_sources(*args)):
        report = compile_kernel(source, kernel.nest)
        views = {b.name: (b.dtype, len(b.view), b.strided) for b in kernel.nest.buffers}
        argtypes = argument_types(source, views, {s.name: s.dtype for s in kernel.nest.scalars})
        assert declared_params(report.ptx) == packed_widths(argtypes), kernel.name
        # The data pointer of each array sits where the launch patches it.
        slots = data_slots(argtypes)
        assert len(slots) == sum(p.kind in ("buffer", "partial", "counter") for p in source.params)
        assert all(s >= DATA_SLOT for s in slots)


def test_a_launch_past_48_kib_of_shared_memory_opts_the_kernel_in(monkeypatch):
    """GpuKernel sets CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES on the loaded kernel, as
    numba-cuda sets the carveout, only for a launch that needs more than 48 KiB."""
    from types import SimpleNamespace

    from numba.cuda.cudadrv import driver as numba_driver

    from numfuse.targets.cuda import launch
    from numfuse.targets.cuda.device import LaunchConfig

    set_calls = []
    monkeypatch.setattr(numba_driver, "driver", SimpleNamespace(cuKernelSetAttribute=lambda *a: set_calls.append(a)))
    loaded = SimpleNamespace(kernel="cuda.core kernel", handle="CUkernel", device=SimpleNamespace(id=3))
    compiled = SimpleNamespace(_codelibrary=SimpleNamespace(get_cufunc=lambda: loaded))
    monkeypatch.setattr(launch, "compile_for", lambda source, argtypes: compiled)
    monkeypatch.setattr(launch, "_opted_in", {})
    # The attribute is one value per kernel and GPU, shared by every shape of the code: a launch
    # asking for less (100 KiB after 200 KiB) must not lower it.
    for shared in (0, 48 * 1024, 48 * 1024 + 8, 200 * 1024, 100 * 1024, 210 * 1024):
        kernel = launch.GpuKernel(None, (), LaunchConfig((4, 1), (512, 1), shared))
        assert kernel.function == "cuda.core kernel" and kernel.config.shmem_size == shared
    attribute = numba_driver.binding.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    assert set_calls == [(attribute, 48 * 1024 + 8, "CUkernel", 3), (attribute, 200 * 1024, "CUkernel", 3),
                         (attribute, 210 * 1024, "CUkernel", 3)]
