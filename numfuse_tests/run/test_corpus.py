"""Real NumPy programs written by other people (numfuse_tests/corpus: npbench's NumPy kernels,
picoGPT's layers), each run through numfuse.jit and through NumPy on copies of small inputs.

Each program must either match NumPy (its results, and its arguments after the call, within a
tolerance sized to its reductions or, for factorizations and recurrences, the tolerance
programs.py gives with its reason), or be refused with numfuse.UnsupportedError or
numfuse.TracingError naming the user's line. A wrong answer, another exception, or a refusal
that does not name the line fails.

EXPECTED_TO_RUN lists the programs that run and match today (found by running them): one of
them refused or failing later is a regression. `python -m numfuse_tests.corpus` prints every
program's outcome."""

from __future__ import annotations

import functools

import pytest

from numfuse_tests.corpus.programs import BY_NAME, PROGRAMS
from numfuse_tests.corpus.runner import MATCHED, REFUSED, run_program

EXPECTED_TO_RUN = {
    # npbench
    "adi", "arc_distance", "atax", "azimint_hist", "azimint_naive", "bicg", "cavity_flow", "channel_flow",
    "cholesky", "cholesky2", "compute", "contour_integral", "conv2d_bias", "correlation", "covariance",
    "covariance2", "crc16", "deriche", "doitgen", "durbin", "fdtd_2d", "floyd_warshall", "gemm", "gemver",
    "gesummv", "go_fast", "gramschmidt", "hdiff", "heat_3d", "jacobi_1d", "jacobi_2d", "k2mm", "k3mm",
    "lenet", "lu", "ludcmp", "mandelbrot1", "mandelbrot2", "mlp", "mvt", "nbody", "nussinov", "resnet",
    "scattering_self_energies", "seidel_2d", "softmax", "spmv", "stockham_fft", "symm", "syr2k", "syrk",
    "trisolv", "trmm", "vadv",
    # picoGPT
    "picogpt_attention", "picogpt_ffn", "picogpt_gelu", "picogpt_layer_norm", "picogpt_mha",
    "picogpt_mha_auto_static", "picogpt_transformer_block",
}


@functools.lru_cache(maxsize=None)
def outcome(name: str):
    """One run per program per session: both tests below read it."""
    return run_program(BY_NAME[name])


@pytest.mark.parametrize("name", [p.name for p in PROGRAMS])
def test_matches_numpy_or_is_refused_at_the_users_line(name):
    out = outcome(name)
    assert out.kind in (MATCHED, REFUSED), f"{name}: {out.kind}\n{out.message}"


@pytest.mark.parametrize("name", sorted(EXPECTED_TO_RUN))
def test_expected_to_run(name):
    out = outcome(name)
    assert out.kind == MATCHED, f"{name} ran and matched NumPy before; now {out.kind}\n{out.message}"


def test_expected_to_run_names_programs():
    assert EXPECTED_TO_RUN <= set(BY_NAME), sorted(EXPECTED_TO_RUN - set(BY_NAME))
