"""The CPU target's own tests (the cpu tier also runs the execution tier's programs on it)."""

import os

os.environ.setdefault("NUMFUSE_TARGET", "cpu")
# The execution tests check numfuse's plans: a signature that switched to the plain function
# after timing both (numpy_fallback.py) would compare NumPy with itself. The switch's own tests
# ask for it (numfuse.jit(numpy_fallback=True)).
os.environ.setdefault("NUMFUSE_NUMPY_FALLBACK", "0")
