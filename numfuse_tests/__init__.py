"""numfuse's test suite, in three tiers that each need their own process:

- trace:   tracing, promotion, plans, kernel counts and bytes; runs with numba unimportable.
- compile: every generated kernel compiled to sm_90 PTX by the real numba-cuda compiler.
- run:     execution against NumPy, on Numba's CUDA simulator (or a real GPU with --gpu).

Run them all with `python -m numfuse_tests`.
"""
