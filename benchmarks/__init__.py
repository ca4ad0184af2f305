"""numfuse benchmarks: `python -m benchmarks` (workloads.py, suite.py; the method in docs/performance.md)."""
