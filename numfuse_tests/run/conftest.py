"""The execution tier: on Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1, set by the runner)
or, unchanged, on a real GPU."""

import os

# The CUDA target unless a run asks for another (the cpu tier runs the execution tests with
# NUMFUSE_TARGET=cpu): "auto" would pick the CPU on a machine without a GPU.
os.environ.setdefault("NUMFUSE_TARGET", "cuda")


import warnings

import pytest

from numfuse.targets.cuda.device import SimulatorWarning


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SimulatorWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        yield
