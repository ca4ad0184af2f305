"""The CPU target's own tests (the cpu tier also runs the execution tier's programs on it)."""

import os

os.environ.setdefault("NUMFUSE_TARGET", "cpu")
