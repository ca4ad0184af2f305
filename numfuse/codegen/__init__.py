"""Code generation: LoopNests rendered as Python source for a target (CUDA through Numba)."""
