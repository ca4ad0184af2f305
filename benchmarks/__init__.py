"""numfuse benchmarks: `python -m benchmarks` (workloads.py, suite.py; the method in docs/performance.md)."""

import os

# The benchmarks time numfuse's plans (and check their bits): a signature that switched to the
# plain function after timing both (numfuse/numpy_fallback.py) would time NumPy as numfuse.
# corpus_speed.py, which times what a user gets, asks for the switch itself.
os.environ.setdefault("NUMFUSE_NUMPY_FALLBACK", "0")
