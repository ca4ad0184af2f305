"""Kernels of the same loop body render once (targets/cuda/codegen.py's cache keyed by the loop nest
without its sizes, source lines and names): the cached code must be exactly what rendering that
kernel afresh gives, for every kernel of real programs."""

from __future__ import annotations

import numpy as np
import pytest

import numfuse
from numfuse.targets.cuda.codegen import kernel_code, kernel_params, render, render_code
from numfuse.codegen.statements import positional_names
from numfuse_tests.corpus.programs import PROGRAMS


def _kernels_of(fn, args, static=()):
    return numfuse.jit(fn, static_argnames=static).plan(*args).kernels


def _check(kernels):
    for kernel in kernels:
        params, names = positional_names(kernel_params(kernel.nest))
        fresh = render_code(kernel.nest, params, names) + "\n"
        assert kernel_code(render(kernel.nest, "a header\nof two lines").source) == fresh


@pytest.mark.parametrize("program", [p for p in PROGRAMS if p.name in (
    "jacobi_2d", "syrk", "heat_3d", "softmax", "cholesky", "hdiff", "gemver", "fdtd_2d", "seidel_2d",
    "picogpt_layer_norm", "durbin", "lu")], ids=lambda p: p.name)
def test_cached_render_is_the_fresh_render(program):
    args = program.make_args(np.random.default_rng(0))
    try:
        kernels = _kernels_of(program.fn, args, program.static_argnames)
    except numfuse.TracingError:
        pytest.skip("runs with graph breaks: no single plan")
    assert kernels
    _check(kernels)


def test_time_steps_of_a_stencil_share_one_rendering():
    def jacobi(a, b, steps):
        for _ in range(steps):
            b[1:-1] = 0.5 * (a[:-2] + a[2:])
            a[1:-1] = 0.5 * (b[:-2] + b[2:])

    kernels = _kernels_of(jacobi, (np.ones(16), np.ones(16), 4), ("steps",))
    assert len(kernels) == 8
    codes = {kernel_code(render(k.nest).source) for k in kernels}
    assert len(codes) == 1  # one compiled kernel for the 8 (buffers are named by position)
    _check(kernels)
