"""The compile tier."""

import os

# The CUDA target unless a run asks for another (the cpu tier runs the execution tests with
# NUMFUSE_TARGET=cpu): "auto" would pick the CPU on a machine without a GPU.
os.environ.setdefault("NUMFUSE_TARGET", "cuda")

