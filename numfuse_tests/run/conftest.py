"""The execution tier: on Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1, set by the runner)
or, unchanged, on a real GPU."""

import warnings

import pytest

from numfuse.runtime.device import SimulatorWarning


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SimulatorWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        yield
