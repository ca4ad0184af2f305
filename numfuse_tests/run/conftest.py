"""The execution tier: on Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1, set by the runner)
or, unchanged, on a real GPU."""

import os

# The CUDA target unless a run asks for another (the cpu tier runs the execution tests with
# NUMFUSE_TARGET=cpu): "auto" would pick the CPU on a machine without a GPU.
os.environ.setdefault("NUMFUSE_TARGET", "cuda")
# The execution tests check numfuse's plans: a signature that switched to the plain function
# after timing both (numpy_fallback.py) would compare NumPy with itself. The switch's own tests
# ask for it (numfuse.jit(numpy_fallback=True)).
os.environ.setdefault("NUMFUSE_NUMPY_FALLBACK", "0")


import warnings

import pytest

from numfuse import SimulatorWarning

import random

from hypothesis import core, settings

# Hypothesis runs that can be repeated: no example database (what a machine found before does
# not change what this run tries), and one seed for the run, printed at its start; set it with
# NUMFUSE_TESTS_SEED=N (or pytest's --hypothesis-seed=N) to run the same examples again.
settings.register_profile("numfuse", database=None)
settings.load_profile("numfuse")
if core.global_force_seed is None:
    core.global_force_seed = int(os.environ.get("NUMFUSE_TESTS_SEED") or random.randrange(2**32))
SEED = core.global_force_seed


def pytest_collection_finish(session):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"hypothesis seed {SEED} (NUMFUSE_TESTS_SEED={SEED} runs the same examples again)")


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SimulatorWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        yield
