"""The CPU function templates (see codegen/templates.py for how placeholders are filled).

The outer loop is a `prange` (Numba's parallel loop: its iterations spread over the threads);
everything inside it runs serially in one thread, so a reduction over a row adds its points in
order, whatever the thread count. A row's inner loops are plain nested `for` loops that LLVM
can vectorize. A split reduction cuts each row into a fixed number of chunks (nsplit, chosen
from the sizes, never from the thread count) and combines the chunks' partial results in
order: the same bits for any number of threads. A single-phase "columns" reduction cuts its
reduced points the same way (column_split_reduction), so that its threads stream whole rows.
"""

# ruff: noqa: F821, F841  (placeholders and kernel parameters are bound in the generated module)


def pointwise(PARAMS):
    HOISTED  # what is the same at every point (codegen.hoisted), computed once
    for lin in prange(total):
        UNRAVEL
        BODY


def pointwise_blocks(PARAMS):
    # Blocks of 1024 points, each a loop of its own (the loop trig_loops checks first).
    for blk in prange((total + 1023) // 1024):
        for lin in range(blk * 1024, min(total, blk * 1024 + 1024)):
            UNRAVEL
            BODY


def pointwise_parts(PARAMS):
    # A kernel of several parts (plan/horizontal.py): each part's loop in turn, so that each
    # stays a loop without branches that LLVM can vectorize.
    PARTS


def part_loop():
    for lin in prange(NPOINTS):
        UNRAVEL
        BODY


def part_blocks():
    for blk in prange((NPOINTS + 1023) // 1024):
        for lin in range(blk * 1024, min(NPOINTS, blk * 1024 + 1024)):
            UNRAVEL
            BODY


def pointwise_2d(PARAMS):
    HOISTED
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


def pairwise_row():
    # NumPy's pairwise sum of a row (its add.reduce along a contiguous axis, bit for bit): a
    # row of at most 128 points is one leaf (pairwise_leaf); a longer one is its first half,
    # rounded down to a multiple of 8 points, plus the rest, each summed so in turn. The
    # recursion runs on a stack of frames (start, length, stage) in the thread's row of
    # nf_pw_frames, the partial sums on a stack in each accumulator's row of its scratch.
    nf_fr = uint64(get_thread_id() * FRAME_ROW)
    nf_sv = uint64(get_thread_id() * STACK_ROW)
    nf_sp = 0
    nf_vp = 0
    nf_pw_frames[nf_fr] = START
    nf_pw_frames[nf_fr + uint64(1)] = LENGTH
    nf_pw_frames[nf_fr + uint64(2)] = 0
    while nf_sp >= 0:
        nf_f = nf_fr + uint64(3 * nf_sp)
        nf_start = nf_pw_frames[nf_f]
        nf_len = nf_pw_frames[nf_f + uint64(1)]
        if nf_len <= LEAF_POINTS:
            LEAF
            PUSH
            nf_vp += 1
            nf_sp -= 1
        else:
            nf_stage = nf_pw_frames[nf_f + uint64(2)]
            if nf_stage == 2:
                POP
                nf_vp -= 1
                nf_sp -= 1
            else:
                nf_half = nf_len // 2
                nf_half -= nf_half % 8
                nf_pw_frames[nf_f + uint64(2)] = nf_stage + 1
                nf_g = nf_f + uint64(3)
                nf_pw_frames[nf_g] = nf_start + nf_stage * nf_half
                nf_pw_frames[nf_g + uint64(1)] = nf_half if nf_stage == 0 else nf_len - nf_half
                nf_pw_frames[nf_g + uint64(2)] = 0
                nf_sp += 1


def buffered_row():
    # A sum of values its reduction casts, as NumPy adds it: its buffers of BLOCK points
    # (np.getbufsize()) one after another, each summed pairwise (ROW), each sum added to the
    # total in turn (TOTAL).
    nf_end = START + LENGTH
    for nf_blk in range(START, nf_end, BLOCK):
        nf_blen = min(BLOCK, nf_end - nf_blk)
        ROW
        TOTAL


def pairwise_leaf():
    # One leaf of nf_len points from nf_start: their values into the thread's scratch row (a
    # loop of independent slots, which vectorizes), then NumPy's 8 lanes over them (point j
    # into lane j mod 8, from -0.0, which keeps every value's bits, as NumPy's first 8 points
    # do), the lanes added ((0+1)+(2+3))+((4+5)+(6+7)), then the last nf_len mod 8 in order.
    nf_slot = uint64(get_thread_id() * LEAF_POINTS)
    for jj in range(nf_len):
        VALUES
    LANES_INIT
    nf_whole = nf_len - nf_len % 8
    for jj in range(0, nf_whole, 8):
        LANES
    TREE
    for jj in range(nf_whole, nf_len):
        TAIL


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


def pairwise_split_reduction(PARAMS):
    # A few long rows summed in NumPy's pairwise order by nsplit jobs a row (a power of 2):
    # job `chunk` sums the node of NumPy's recursion that the bits of `chunk`, from the top,
    # pick at depth log2(nsplit) (every node above it is longer than a leaf, so it halves);
    # then each row adds its nodes' sums back up the same tree, neighbours first.
    nf_depth = 0
    while (1 << nf_depth) < nsplit:
        nf_depth += 1
    for job in prange(nrows * nsplit):
        row = job // nsplit
        chunk = job - row * nsplit
        start = 0
        nf_n = nred
        for nf_level in range(nf_depth - 1, -1, -1):
            nf_half = nf_n // 2
            nf_half -= nf_half % 8
            if (chunk >> nf_level) & 1:
                start += nf_half
                nf_n -= nf_half
            else:
                nf_n = nf_half
        UNRAVEL_OUTER
        CHUNK
        PUBLISH
    for row in prange(nrows):
        UNRAVEL_OUTER
        nf_width = nsplit
        while nf_width > 1:
            nf_width //= 2
            for c in range(nf_width):
                PAIR
        INIT
        GATHER
        AFTER
        EPILOGUE


def column_reduction(PARAMS):
    # A block of nblock neighbouring outputs at a time: the reduced points are the outer loops
    # and the block's outputs the innermost one, so that loads walk memory contiguously (the
    # kept axis is the innermost), each output's accumulator in its slot of an array (an
    # argument), still folding its points in order.
    nblocks = (nrows + nblock - 1) // nblock
    for blk in prange(nblocks):
        lo = blk * nblock
        hi = min(nrows, lo + nblock)
        PHASES
        EPILOGUE


def output_runs():
    # The block's outputs [lo, hi) as runs along the last output loop, for a kernel of several:
    # each run's indices are divided out once, then its points step through memory one by one,
    # which LLVM vectorizes (a division at every point kept a sum over a middle axis at 0.4x
    # NumPy's speed).
    nf_row0 = lo
    while nf_row0 < hi:
        UNRAVEL
        nf_run = min(hi - nf_row0, NLAST - LAST)
        nf_first = LAST
        for nf_k in range(nf_run):
            row = nf_row0 + nf_k
            LAST = nf_first + nf_k
            BODY
        nf_row0 += nf_run


def column_split_reduction(PARAMS):
    # Pass 1: each (block, chunk) job folds its chunk of the reduced points into a partial
    # result for each of its block's outputs (a slot per chunk and output); the reduced points
    # are the outer loop and the block's outputs the innermost, so loads walk memory
    # contiguously, and each chunk streams whole rows of the input.
    nblocks = (nrows + nblock - 1) // nblock
    chunk_len = (nred + nsplit - 1) // nsplit
    for job in prange(nblocks * nsplit):
        blk = job // nsplit
        chunk = job - blk * nsplit
        lo = blk * nblock
        hi = min(nrows, lo + nblock)
        start = chunk * chunk_len
        stop = min(nred, start + chunk_len)
        base = chunk * nrows
        for row in range(lo, hi):
            INIT
        for lin in range(start, stop):
            UNRAVEL_INNER
            for row in range(lo, hi):
                UNRAVEL_OUTER
                BODY
    # Pass 2: each output combines its chunks' results in chunk order.
    for blk in prange(nblocks):
        lo = blk * nblock
        hi = min(nrows, lo + nblock)
        for row in range(lo, hi):
            UNRAVEL_OUTER
            INIT_ROW
            for c in range(nsplit):
                GATHER
            AFTER
            EPILOGUE


def column_phase():
    for row in range(lo, hi):
        INIT
    LOOP
    for row in range(lo, hi):
        AFTER
