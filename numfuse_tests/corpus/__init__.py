"""A corpus of real NumPy programs written by other people (npbench's NumPy kernels, picoGPT's
transformer layers), each with small inputs, run through numfuse.jit and compared with NumPy.

    NUMBA_ENABLE_CUDASIM=1 python -m numfuse_tests.corpus     # one line per program, and totals

programs.py holds the programs (with their sources and licenses), runner.py runs one and says
what happened: it ran and matched NumPy, numfuse refused it (UnsupportedError or TracingError
naming the user's line), it gave a WRONG answer, or it CRASHED (any other exception, or a
refusal that does not name the user's line)."""
