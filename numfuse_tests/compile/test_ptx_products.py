"""Products in the PTX round as NumPy's do. NVVM fuses a multiply and the add it feeds into one
`fma.rn` by default (numba-cuda passes no -fma=0): the CUDA renderer writes template products as
targets/cuda/products.mul, libdevice's `mul.rn`, which is never fused. So a kernel of products
and sums has no `fma` instruction, unless it is NumPy's own fused complex product."""

import re

import numpy as np
import pytest

from numfuse.ir.numpy_loops import complex_multiply_fuses
from numfuse_tests.compile.test_ptx import compile_all

REAL_FLOATS = [np.float32, np.float64]


def instructions(ptx: str, opcode: str) -> list[str]:
    return re.findall(rf"^\s*({re.escape(opcode)}[.\w]*)\s", ptx, re.MULTILINE)


def multiply_adds(x, y, z):
    return x * y + z, z - x * y, (x * y).sum(axis=1), np.square(x) + y, x * 3 + y


@pytest.mark.parametrize("dtype", REAL_FLOATS, ids=lambda d: np.dtype(d).name)
def test_real_products_and_sums_compile_without_fused_multiply_adds(dtype):
    x = np.ones((4, 8), dtype)
    bits = np.dtype(dtype).itemsize * 8
    for kernel, report in compile_all(multiply_adds, x, x, x):
        assert instructions(report.ptx, "fma") == [], (kernel.name, instructions(report.ptx, "fma"))
        assert f"mul.rn.f{bits}" in instructions(report.ptx, "mul"), kernel.name


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=lambda d: np.dtype(d).name)
def test_complex_products_fuse_where_numpy_does(dtype):
    """Each product's two parts are an `fma` over a `mul.rn` each where NumPy fuses (the
    kernel's points are unrolled: so as many fma as mul.rn), plain `mul.rn` where it does not;
    the sums around them fuse nothing."""
    z = np.ones((4, 8), dtype)
    bits = np.dtype(dtype).itemsize * 4
    for fn in (lambda z, w: z * w, lambda z, w: z + w * w - z):
        (kernel, report), = compile_all(fn, z, z)
        fmas, muls = instructions(report.ptx, "fma"), instructions(report.ptx, f"mul.rn.f{bits}")
        assert muls, kernel.name
        if complex_multiply_fuses():
            assert set(fmas) == {f"fma.rn.f{bits}"} and len(fmas) == len(muls), (fmas, muls)
        else:
            assert fmas == [], fmas


def test_the_online_softmax_rescales_with_unfused_products():
    """The online softmax's sum (rescaled as the row's maximum grows: sum * scale + term) is
    written by the renderer itself, not a template: its products are mul() too. (Its PTX has
    libdevice's expf, whose own fmas are intended, so the source is what is checked.)"""
    import numfuse
    from numfuse_tests.compile.test_ptx_reductions import BY_NAME, LONG

    pattern = BY_NAME["softmax"]
    args = pattern.args(np.ones((2, LONG), np.float32), -1)
    (kernel, report), = compile_all(pattern.at(-1), *args)
    assert "online_sum" in {a.combine for a in kernel.nest.accumulators}
    source = numfuse.jit(pattern.at(-1)).kernel_sources(*args)[0].source
    rescales = [line for line in source.splitlines() if "math.exp(" in line and " + " in line and "acc" in line]
    assert rescales and all("mul(" in line and " * " not in line for line in rescales), rescales
