"""The CUDA kernel templates (see templates.py for how placeholders are filled).

Every loop is grid-stride or block-stride, so each template is correct for any grid and block
size; block sizes are powers of two no larger than MAX_THREADS (the shared-memory tree
reduction halves the active threads each step). Everything reaches CUDA through the `cuda` module
object, which the simulator requires.
"""

# ruff: noqa: F821  (placeholders, kernel parameters and `cuda` are bound in the generated module)



def pointwise(PARAMS):
    lin = cuda.grid(1)
    step = cuda.gridsize(1)
    while lin < total:
        UNRAVEL
        BODY
        lin += step


def block_per_row(PARAMS):
    # One block per output row (grid-stride over rows); the block's threads stride over the
    # reduced points, then combine their partial results in shared memory.
    SHARED
    tid = cuda.threadIdx.x
    nthreads = cuda.blockDim.x
    row = cuda.blockIdx.x
    while row < nrows:
        UNRAVEL_OUTER
        INIT
        lin = tid
        while lin < nred:
            UNRAVEL_INNER
            BODY
            lin += nthreads
        TO_SHARED
        cuda.syncthreads()
        half = nthreads // 2
        while half > 0:
            if tid < half:
                TREE
            cuda.syncthreads()
            half = half // 2
        if tid == 0:
            FROM_SHARED
            EPILOGUE
        cuda.syncthreads()
        row += cuda.gridDim.x


def thread_per_row(PARAMS):
    # One thread per output (grid-stride over outputs), looping over the reduced points itself:
    # neighbouring threads read neighbouring addresses when the innermost axis is kept.
    row = cuda.grid(1)
    step = cuda.gridsize(1)
    while row < nrows:
        UNRAVEL_OUTER
        INIT
        lin = 0
        while lin < nred:
            UNRAVEL_INNER
            BODY
            lin += 1
        EPILOGUE
        row += step

