"""The CUDA kernel templates (see templates.py for how placeholders are filled).

Every loop is grid-stride or block-stride, so each template is correct for any grid and block
size; a reduction's threads per row are a power of two (the shared-memory tree
reduction halves the active threads each step). Everything reaches CUDA through the `cuda` module
object, which the simulator requires.
"""

# ruff: noqa: F821, F841  (placeholders, kernel parameters and `cuda` are bound in the generated
# module; names assigned here are read by the statements filled into other templates)



def pointwise(PARAMS):
    lin = cuda.grid(1)
    step = cuda.gridsize(1)
    UNROLLED_LOOP
    while lin < total:
        UNRAVEL
        BODY
        lin += step


def pointwise_2d(PARAMS):
    # Threads side by side take neighbouring points of the last axis (NLAST of them); each row
    # of threads takes whole rows of the other axes (nrows rows), whose indices are computed
    # once per row: no division per point, and the row's part of every address is hoisted out
    # of the inner loop.
    row = int64(cuda.blockIdx.y) * cuda.blockDim.y + cuda.threadIdx.y
    while row < nrows:
        UNRAVEL
        LAST = int64(cuda.blockIdx.x) * cuda.blockDim.x + cuda.threadIdx.x
        while LAST < NLAST:
            BODY
            LAST += int64(cuda.gridDim.x) * cuda.blockDim.x
        row += int64(cuda.gridDim.y) * cuda.blockDim.y


def unrolled_loop():
    # UNROLL points a pass, every point's loads before any point's computation, so that a thread
    # has UNROLL loads in flight (a store of one point could alias a later point's load, so the
    # compiler would not move loads up across iterations itself). The loop after it takes the
    # remaining points one a pass.
    while MORE:
        UNROLLED
        lin += UNROLL * STRIDE


def reduction(PARAMS):
    # Each block takes ntk rows at a time; the ntr threads of a row (tk) share its reduced points,
    # then combine their partial results in shared memory. Which of threadIdx.x and .y is tk
    # depends on the schedule, so that threads side by side read neighbouring addresses.
    SHARED
    # int64 throughout, so that rows and points past 2**31 index correctly.
    tk = int64(TK)
    tr = int64(TR)
    ntk = int64(NTK)
    ntr = int64(NTR)
    slot = tk * ntr + tr
    CACHE
    first = cuda.blockIdx.x * ntk
    while first < nrows:
        row = first + tk
        active = row < nrows
        UNRAVEL_OUTER
        PHASES
        if active and tr == 0:
            EPILOGUE
        first += cuda.gridDim.x * ntk


def reduce_phase():
    # One pass over the row into the accumulators, then a shared-memory tree reduction; every
    # thread of the row leaves with the row's result (later phases read it).
    INIT
    lin = START
    UNROLLED_LOOP
    while active and lin < STOP:
        UNRAVEL_INNER
        BODY
        lin += ntr
    TO_SHARED
    cuda.syncthreads()
    half = ntr // 2
    while half > 0:
        if tr < half:
            TREE
        cuda.syncthreads()
        half = half // 2
    FROM_SHARED
    cuda.syncthreads()
    ROUND


def row_pass():
    # A last pass over the row that only stores (softmax's output).
    lin = tr
    UNROLLED_LOOP
    while active and lin < nred:
        UNRAVEL_INNER
        BODY
        lin += ntr


def split_chunk():
    # This block's share of the row's reduced points (blockIdx.y of gridDim.y chunks).
    chunk = int64(cuda.blockIdx.y)
    nsplit = int64(cuda.gridDim.y)
    chunk_len = (nred + nsplit - 1) // nsplit
    start = chunk * chunk_len
    stop = min(nred, start + chunk_len)


def split_finish():
    # Publish this block's partial result; the last block of the row to finish combines all of
    # them (no grid-wide synchronization, which CUDA does not guarantee between blocks).
    if active and tr == 0:
        PUBLISH
        cuda.threadfence()
        done = cuda.atomic.add(nf_counter, row, 1)
        if done == nsplit - 1:
            INIT
            c = 0
            while c < nsplit:
                GATHER
                c += 1
            nf_counter[row] = 0
        else:
            active = False
