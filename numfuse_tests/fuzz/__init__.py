"""numfuse's differential program fuzzer.

Hypothesis builds random NumPy programs (DAGs of up to 30 operations: elementwise ufuncs and
operators over every dtype, Python and NumPy scalars, broadcasting, reductions over random axes,
where, clip, round, casts, transposes, in-place updates) over small inputs with size-one and
zero-size dimensions; each runs through NumPy and through numfuse.jit, and the results must
agree as compare.py says. A mismatch shrinks to a minimal program, printed as a script.

    program.py     the program representation: source text, function, repro script
    catalog.py     what programs are made of: ufuncs, domains, reductions, constants
    known_bugs.py  constructs left out while numfuse gets them wrong (each with a repro)
    numerics.py    the error model: how exact each value must be, and what is unstable
    builder.py     growing a program while NumPy runs it; replaying one
    strategies.py  the hypothesis strategy that draws programs
    compare.py     numfuse's outputs against NumPy's
    reduce.py      cutting a failing program down after hypothesis has shrunk it
    runner.py      running one program, or a session of many
    __main__.py    python -m numfuse_tests.fuzz --programs N [--seed S] [--gpu] [--max-seconds T]
"""
