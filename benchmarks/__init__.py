"""numfuse benchmarks: workloads timed against NumPy and CuPy (see gpu_check.sh)."""
