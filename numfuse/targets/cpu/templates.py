"""The CPU function templates (see codegen/templates.py for how placeholders are filled).

The outer loop is a `prange` (Numba's parallel loop: its iterations spread over the threads);
everything inside it runs serially in one thread, so a reduction over a row adds its points in
order, whatever the thread count. A row's inner loops are plain nested `for` loops that LLVM
can vectorize. A split reduction cuts each row into a fixed number of chunks (nsplit, chosen
from the sizes, never from the thread count) and combines the chunks' partial results in
order: the same bits for any number of threads.
"""

# ruff: noqa: F821, F841  (placeholders and kernel parameters are bound in the generated module)


def pointwise(PARAMS):
    for lin in prange(total):
        UNRAVEL
        BODY


def pointwise_2d(PARAMS):
    for row in prange(nrows):
        UNRAVEL
        LOOP


def reduction(PARAMS):
    for row in prange(nrows):
        UNRAVEL_OUTER
        PHASES
        EPILOGUE


def reduce_phase():
    INIT
    LOOP
    AFTER


def split_reduction(PARAMS):
    # Pass 1: each (row, chunk) job folds its chunk of the row into partial results.
    chunk_len = (nred + nsplit - 1) // nsplit
    for job in prange(nrows * nsplit):
        row = job // nsplit
        chunk = job - row * nsplit
        start = chunk * chunk_len
        stop = min(nred, start + chunk_len)
        UNRAVEL_OUTER
        CHUNK
        PUBLISH
    # Pass 2: each row combines its chunks' results in chunk order.
    for row in prange(nrows):
        UNRAVEL_OUTER
        INIT
        for c in range(nsplit):
            GATHER
        AFTER
        EPILOGUE


def column_reduction(PARAMS):
    # A block of BLOCK neighbouring outputs at a time: the reduced points are the outer loops
    # and the block's outputs the innermost one, so that loads walk memory contiguously (the
    # kept axis is the innermost), each output's accumulator in its slot of an array (an
    # argument), still folding its points in order.
    nblocks = (nrows + BLOCK - 1) // BLOCK
    for blk in prange(nblocks):
        lo = blk * BLOCK
        hi = min(nrows, lo + BLOCK)
        PHASES
        for row in range(lo, hi):
            UNRAVEL_OUTER
            EPILOGUE


def column_phase():
    for row in range(lo, hi):
        INIT
    LOOP
    for row in range(lo, hi):
        AFTER
