"""The trace tier runs with numba made unimportable: tracing and planning must not need it."""

import os

# The CUDA target unless a run asks for another (the cpu tier runs the execution tests with
# NUMFUSE_TARGET=cpu): "auto" would pick the CPU on a machine without a GPU.
os.environ.setdefault("NUMFUSE_TARGET", "cuda")


import importlib.abc
import os
import sys


class _BlockNumba(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "numba" or name.startswith(("numba.", "numba_cuda")):
            raise ImportError(f"the trace tier must not import {name}")
        return None


if os.environ.get("NUMFUSE_TESTS_BLOCK_NUMBA") == "1":
    sys.meta_path.insert(0, _BlockNumba())
