"""Running plans: the CUDA device (or Numba's simulator), compiled kernels, launches."""
