"""The CPU renderer: a LoopNest becomes the source of a module holding two Numba CPU functions,
`<name>` (`@njit(parallel=True)`: its outer loop a prange over the threads) and `<name>_serial`
(the same code, every loop serial, for calls too small to gain from threads).

The statements are those every target renders (codegen/statements.py); the loops are the CPU
templates (templates.py):
- flat and 2d pointwise kernels: a prange over the points (flat) or over the rows of all axes
  but the last, whose loop runs inside (2d);
- rows and columns reductions: a prange over the outputs; each output's reduced points are
  nested loops in one thread, its phases one after another (the hardware caches keep a short
  row between them: the GPU's shared-memory cache has no CPU code);
- a split reduction (few long rows): each row cut into nsplit chunks, a prange over (row,
  chunk) pairs into partial results, then each row combines its chunks in order;
- a row reduction's points fold into lanes (lanes.py), through a scratch row of 64 slots
  first where they compute something or combine other than by adding; a plain sum's lanes
  prefetch the row ahead; a float sum follows NumPy's pairwise order (pairwise.py).
The scalar templates' GPU intrinsics (`cuda.popc`, `cuda.cbrt`) are rewritten to the CPU's
(intrinsics.py), and `math` is cpumath.py, whose functions keep float32 in float32.
"""

from __future__ import annotations

import ast
import dataclasses

import numpy as np

from ...codegen.pyast import assign, assigned_names, call, target, var
from ...codegen.statements import (
    TYPE_NAMES, CodeCache, KernelParam, KernelSource, Rename, StatementRenderer, code_key, convert, index_item, literal, positional_names, type_name, unravel, with_header,
)
from ...codegen.templates import clone, fill, fill_body, inline, module
from ...ir.dtypes import compute_dtype
from ...ir.graph import Literal
from ...loops.loopnest import Compute, LoopNest, Parts, Phase, walk
from ...ir.ops import NO_INDEX
from . import templates, trig_loops, vector_math
from .lanes import BIG_FLAG, CHUNK, identity_literal, lanes_loop, mentions, scratch_name, uses_chunks
from .pairwise import (FRAMES, PAIRWISE_DEPTH, PAIRWISE_LEAF, leaf_name, pairwise_loop, stack_name, stores_leaf,
                       sums_apart, uses_pairwise)

JIT_OPTIONS = dict(nogil=True, cache=True, error_model="numpy")
# A "columns" reduction takes a block of neighbouring outputs at a time (one thread's job):
# their accumulators take at most COLUMN_BLOCK_BYTES (16 KiB: within a core's L1 data cache),
# and a row of the block's inputs is then thousands of contiguous bytes, which the hardware
# prefetchers follow (blocks of 256 float32, 1 KiB a row, ran at half NumPy's speed).
COLUMN_BLOCK_BYTES = 16 * 1024
COLUMN_BLOCK_MIN = 256
GPU_INTRINSICS = ("popc", "cbrt")  # what scalar templates call as cuda.<name>
INTRINSICS = GPU_INTRINSICS + ("float16", "float16_load", "float16_bits", "float32_from_bits", "float64_from_bits",
                             "float32_bits", "float64_bits", "float_bits", "float_from_bits", "fma", "prefetch",
                             "select")


class _Statements(StatementRenderer):
    """float16 buffers hold their uint16 bits on the CPU (Numba has no float16): loads decode
    them, stores encode them; float16 values are float32s rounded to float16 (intrinsics.py).
    exp, tanh and log take vector_math's templates. sin and cos take them where `trig` is
    "fast" (each then also folds whether its argument is past vector_math.TRIG_LIMIT into
    `nf_big`, for trig_loops.py), libm's functions where it is "libm" and in epilogues (once
    per output: never worth a second loop)."""

    def __init__(self, nest: LoopNest, trig: str = "libm", prefetch: int = 0):
        super().__init__(nest)
        self.trig = trig
        self.prefetch = prefetch  # bytes ahead a reduction's lanes prefetch what they load (_prefetches)
        self._in_epilogue = False
        # Values the same at every point: scalar arguments, counts, and what is computed from
        # them alone (a Python float's power, as Python computes it: libm's pow).
        self._invariant = {s.name for s in nest.scalars} | {c.name for c in nest.counts}

    def epilogue(self, stmts) -> list[ast.stmt]:
        self._in_epilogue = True
        try:
            return self.stmts(stmts)
        finally:
            self._in_epilogue = False

    def load(self, s):
        stmts = super().load(s)
        if self.buffers[s.buffer] == np.float16:
            stmts[0].value = call("float16_load", stmts[0].value)
        return stmts

    def compute(self, s):
        """Functions NumPy runs as SIMD loops take the CPU's vectorizable templates; a float
        raised to the constant 2, 3 or 4 is multiplications (x**2 is NumPy's own square; x**3
        and x**4 products with their rounding errors added back, vector_math.POWERS: libm's pow
        is a call, which stops LLVM vectorizing the loop). A power of values the same at every
        point (`b1 ** t` of Python floats) is libm's, as Python's and NumPy's scalar power."""
        cd = compute_dtype(s.type_dtype)
        invariant = all(isinstance(a, Literal) or a in self._invariant for a in s.args)
        if invariant:
            self._invariant.add(s.dst)
        exponent = s.args[1] if s.op == "power" and len(s.args) == 2 else None
        if isinstance(exponent, Literal) and cd.kind == "f" and np.isrealobj(exponent.value) \
                and float(exponent.value) in (2.0, 3.0, 4.0) and not invariant:
            self.types[s.dst] = s.dtype
            x = self.operand(s.args[0], cd)
            n = float(exponent.value)
            if n == 2:
                square = ast.BinOp(x, ast.Mult(), clone(x))
                return [assign(s.dst, convert(call(type_name(cd), square), cd, s.dtype))]
            stmts, expr = self.apply(vector_math.POWERS[n][cd.name], [x], cd, s.dtype, f"{s.dst}_")
            return stmts + [assign(s.dst, expr)]
        template = vector_math.TEMPLATES.get(s.op, {}).get(compute_dtype(s.type_dtype).name)
        limited = s.op in vector_math.LIMITED
        if template is None or limited and (self.trig != "fast" or self._in_epilogue):
            return super().compute(s)
        self.types[s.dst] = s.dtype
        cd = compute_dtype(s.type_dtype)
        # A call of the module's function for it (_vector_functions), which LLVM inlines into the
        # loop after Numba compiled each once: inlined here, Numba's own passes took seconds
        # for each use (an attention kernel of several exps, tens of seconds).
        stmts, expr = [], call(type_name(s.dtype), call(vector_function_name(s.op, cd), self.operand(s.args[0], cd)))
        if limited:
            fabs = ast.Attribute(var("math"), "fabs", ast.Load())
            past = ast.Compare(ast.Call(fabs, [self.operand(s.args[0], cd)], []), [ast.Gt()],
                               [ast.Constant(vector_math.TRIG_LIMIT[cd.name])])
            stmts.append(assign(BIG_FLAG, ast.BinOp(var(BIG_FLAG), ast.BitOr(), past)))
        return stmts + [assign(s.dst, expr)]

    def store(self, s):
        stmt = super().store(s)
        if self.buffers[s.buffer] == np.float16:
            stmt.value = call("float16_bits", stmt.value)
        return stmt


def partial_name(acc: str) -> str:
    return f"nf_part_{acc}"


def split_chunks(nest: LoopNest, chunk_points: int, max_chunks: int) -> int:
    """How many chunks a split reduction cuts each row into: from the sizes only (never the
    thread count), so the partial results, and the bits of the result, are the same on any
    machine. At least chunk_points points a chunk, at most max_chunks jobs in all."""
    per_row = max(1, nest.inner_size // chunk_points)
    return max(1, min(per_row, max_chunks // max(1, nest.outer_size) or 1))


def column_block(nest: LoopNest, threads: int) -> int:
    """Outputs in a "columns" block: as many as fit COLUMN_BLOCK_BYTES of accumulators, fewer
    where that leaves `threads` without a block of their own (an unsplit reduction's threads
    share the blocks). The block does not change any output's order of additions."""
    per_output = sum(compute_dtype(a.dtype).itemsize + (8 if a.indexed else 0) for a in nest.accumulators) or 4
    block = max(COLUMN_BLOCK_MIN, COLUMN_BLOCK_BYTES // per_output)
    while block > COLUMN_BLOCK_MIN and -(-nest.outer_size // block) < threads:
        block //= 2
    return block


def column_chunks(nest: LoopNest, chunk_points: int, max_chunks: int, min_rows: int = 1) -> int:
    """How many chunks a single-phase "columns" reduction cuts its reduced points into: from the
    sizes only (never the thread count, so the partial results and the bits are the same on any
    machine). At least chunk_points points and min_rows reduced points a job (each chunk zeroes
    and then combines a row of partial results: short chunks make that the larger part), at
    most max_chunks jobs in all. An online softmax's sum (rescaled as its maximum grows) is not
    cut: 1; nor a float sum or product, which NumPy adds (multiplies) row after row into each
    output: in that order, its bits."""
    if any(a.partner or a.running or _follows_rows(a) for a in nest.accumulators):
        return 1
    block = column_block(nest, 1)
    nblocks = -(-nest.outer_size // block)
    per_block = max(1, nest.inner_size * min(block, nest.outer_size) // chunk_points)
    return max(1, min(per_block, nest.inner_size // max(1, min_rows), max(1, max_chunks // max(1, nblocks))))


def layout(nest: LoopNest, nsplit: int) -> str:
    """Which template a reduction takes: "split" (few long rows, rows cut into chunks),
    "column_split" (a single-phase "columns" reduction, its reduced points cut into chunks),
    "columns" or "rows"."""
    if nest.schedule == "columns":
        return "column_split" if len(nest.phases) == 1 and nsplit > 1 else "columns"
    return "split" if nest.split else "rows"


def numba_threads() -> int:
    """At least Numba's thread count (get_thread_id is below it): NUMBA_NUM_THREADS, or the cores."""
    import os

    return max(int(os.environ.get("NUMBA_NUM_THREADS") or 1), os.cpu_count() or 1)


def kernel_params(nest: LoopNest, nsplit: int = 1, lanes: int = 1) -> tuple[KernelParam, ...]:
    params = [KernelParam(b.name, "buffer") for b in nest.buffers]
    params += [KernelParam(s.name, "scalar") for s in nest.scalars]
    params += [KernelParam(c.name, "count", c.value, c.dtype) for c in nest.counts]
    params += [KernelParam(d.param, "size", d.size) for d in nest.outer + nest.inner]
    if nest.kind == "pointwise":
        if nest.schedule == "2d":
            params.append(KernelParam("nrows", "size", nest.outer_size // max(1, nest.outer[-1].size)))
        else:
            params.append(KernelParam("total", "size", nest.outer_size))
        return tuple(params)
    params.append(KernelParam("nrows", "size", nest.outer_size))
    params.append(KernelParam("nred", "size", nest.inner_size))
    chunked = {a.name: a for p in nest.phases if uses_chunks(nest, p, lanes) for a in p.accumulators}
    for name, a in chunked.items():  # each thread's scratch row of CHUNK values (lanes._chunk_loops)
        params.append(KernelParam(scratch_name(name), "column", numba_threads() * CHUNK, compute_dtype(a.dtype)))
    pairwise = {a.name: a for p in nest.phases if uses_pairwise(nest, p, lanes) for a in p.accumulators}
    if pairwise:  # each thread's frames, and per sum its leaf's values and its partial sums
        params.append(KernelParam(FRAMES, "column", numba_threads() * 3 * PAIRWISE_DEPTH, np.dtype(np.int64)))
    computed = {a.name for p in nest.phases if uses_pairwise(nest, p, lanes) and stores_leaf(p) for a in p.accumulators}
    for name, a in pairwise.items():
        if name in computed:  # a leaf's values (templates.pairwise_leaf)
            params.append(KernelParam(leaf_name(name), "column", numba_threads() * PAIRWISE_LEAF,
                                      compute_dtype(a.dtype)))
        params.append(KernelParam(stack_name(name), "column", numba_threads() * PAIRWISE_DEPTH, compute_dtype(a.dtype)))
    kind = layout(nest, nsplit)
    if kind in ("columns", "column_split"):
        # Sizes only: the serial function's block is as large as the parallel one's.
        params.append(KernelParam("nblock", "size", column_block(nest, numba_threads() if kind == "columns" else 1)))
    if kind == "columns":
        for name, dtype in _column_slots(nest):
            params.append(KernelParam(column_name(name), "column", nest.outer_size, dtype))
    if kind in ("split", "column_split"):
        params.append(KernelParam("nsplit", "size", nsplit))
        for a in nest.accumulators:
            params.append(KernelParam(partial_name(a.name), "partial", dtype=compute_dtype(a.dtype)))
            if a.indexed:
                params.append(KernelParam(partial_name(f"{a.name}_i"), "partial", dtype=np.dtype(np.int64)))
    return tuple(params)


def nested_loops(dims, body: list[ast.stmt]) -> list[ast.stmt]:
    """`for d in range(size):` for each of `dims`, outermost first, around `body`. Where the
    body reads the linear index `lin` (an argmax's position), it is counted along."""
    counted = mentions(body, "lin")
    inner = body + ([ast.AugAssign(var("lin"), ast.Add(), ast.Constant(1))] if counted else [])
    for dim in reversed(dims):
        inner = [ast.For(target(dim.name), call("range", var(dim.param)), inner or [ast.Pass()], [])]
    return ([assign("lin", ast.Constant(0))] if counted else []) + inner


def _init(accumulators) -> list[ast.stmt]:
    stmts = []
    for a in accumulators:
        stmts.append(assign(a.name, identity_literal(a)))
        if a.indexed:
            stmts.append(assign(f"{a.name}_i", literal(np.int64(NO_INDEX))))
    return stmts


def _after(body: StatementRenderer, accumulators) -> list[ast.stmt]:
    """After a row's pass: an online sum whose row was all -inf is NaN (exp(-inf - -inf), as
    NumPy computes it), and accumulators computed wider than their dtype are rounded."""
    stmts = []
    for a in accumulators:
        if a.partner:
            cd = compute_dtype(a.dtype)
            minus_inf = ast.Compare(var(a.partner), [ast.Eq()], [literal(np.asarray(-np.inf, cd)[()])])
            stmts.append(assign(a.name, ast.IfExp(minus_inf, literal(np.asarray(np.nan, cd)[()]), var(a.name))))
    return stmts + body.round_accumulators(accumulators)


def _follows_rows(acc) -> bool:
    """Whether a column reduction's accumulator must take the reduced rows in order, as NumPy
    does: a float or complex sum or product (rounding makes the order part of the result)."""
    return acc.combine in ("add", "multiply_scalar_loop") and np.dtype(acc.dtype).kind in "fc"


def _reduction_ast(nest: LoopNest, params: list[str], lanes: int, trig: str, prefetch: int = 0) -> ast.FunctionDef:
    body = _Statements(nest, trig, prefetch)
    phases: list[ast.stmt] = []
    for k, phase in enumerate(nest.phases):
        body.phase = k
        if not phase.accumulators:
            phases.extend(nested_loops(nest.inner, body.stmts(phase.body)))
            continue
        if uses_pairwise(nest, phase, lanes):
            phases.extend(_init(phase.accumulators) + pairwise_loop(body, nest, phase)
                          + _after(body, phase.accumulators))
            continue
        laned = lanes_loop(body, nest, phase, lanes)
        if laned is not None:
            init, loop, combine = laned
            phases.extend(init + loop + combine + _after(body, phase.accumulators))
            continue
        loop = nested_loops(nest.inner, body.stmts(phase.body))
        phases.extend(fill_body(templates.reduce_phase, INIT=_init(phase.accumulators), LOOP=loop,
                                AFTER=_after(body, phase.accumulators)))
    return fill(templates.reduction, name=nest.name, params=params, UNRAVEL_OUTER=unravel("row", nest.outer),
                PHASES=phases, EPILOGUE=body.epilogue(nest.epilogue))


def _gather(body, accumulators, slot: ast.expr) -> list[ast.stmt]:
    """Each accumulator's partial result at `slot` (chunk c's, of a split reduction) combined
    into its variable, argmax's and argmin's index beside it."""
    stmts = []
    for a in accumulators:
        theirs = ast.Subscript(var(partial_name(a.name)), clone(slot), ast.Load())
        if a.indexed:
            theirs_i = ast.Subscript(var(partial_name(f"{a.name}_i")), clone(slot), ast.Load())
            stmts.extend(body.combine(a, a.name, theirs, f"{a.name}_gather_", f"{a.name}_i", theirs_i))
        else:
            stmts.extend(body.combine(a, a.name, theirs, f"{a.name}_gather_"))
    return stmts


def _split_ast(nest: LoopNest, params: list[str], lanes: int, trig: str, prefetch: int = 0) -> ast.FunctionDef:
    body = _Statements(nest, trig, prefetch)
    (phase,) = nest.phases  # only single-phase reductions split (strategy.choose_split)
    accumulators = phase.accumulators
    publish = [ast.Assign([ast.Subscript(var(partial_name(n)), var("job"), ast.Store())], var(n))
               for a in accumulators for n in [a.name] + ([f"{a.name}_i"] if a.indexed else [])]
    if uses_pairwise(nest, phase, lanes):
        first = ast.BinOp(var("row"), ast.Mult(), var("nsplit"))
        pair = []
        for a in accumulators:
            part = partial_name(a.name)

            def cell(k: ast.expr, part=part) -> ast.Subscript:
                return ast.Subscript(var(part), ast.BinOp(clone(first), ast.Add(), k), ast.Load())

            twice = ast.BinOp(ast.Constant(2), ast.Mult(), var("c"))
            pair.append(assign(f"{a.name}_p", cell(twice)))
            pair += body.combine(a, f"{a.name}_p", cell(ast.BinOp(clone(twice), ast.Add(), ast.Constant(1))),
                                 f"{a.name}_pp_")
            target_ = cell(var("c"))
            target_.ctx = ast.Store()
            pair.append(ast.Assign([target_], var(f"{a.name}_p")))
        chunk = _init(accumulators) + pairwise_loop(body, nest, phase, var("start"), var("nf_n"))
        return fill(templates.pairwise_split_reduction, name=nest.name, params=params,
                    UNRAVEL_OUTER=unravel("row", nest.outer), CHUNK=chunk, PUBLISH=publish, PAIR=pair,
                    INIT=_init(accumulators), GATHER=_gather(body, accumulators, first),
                    AFTER=_after(body, accumulators), EPILOGUE=body.epilogue(nest.epilogue))
    gather = _gather(body, accumulators, ast.BinOp(ast.BinOp(var("row"), ast.Mult(), var("nsplit")), ast.Add(), var("c")))
    laned = lanes_loop(body, nest, phase, lanes, (var("start"), var("stop"))) if len(nest.inner) == 1 else None
    if laned is not None:
        init, loop, combine = laned
        chunk = init + loop + combine
    else:
        point = unravel("lin", nest.inner) + body.stmts(phase.body)
        chunk = _init(accumulators) + [ast.For(target("lin"), call("range", var("start"), var("stop")), point, [])]
    return fill(templates.split_reduction, name=nest.name, params=params,
                UNRAVEL_OUTER=unravel("row", nest.outer), INIT=_init(accumulators), CHUNK=chunk, PUBLISH=publish,
                GATHER=gather, AFTER=_after(body, accumulators), EPILOGUE=body.epilogue(nest.epilogue))


def column_name(acc: str) -> str:
    return f"nf_col_{acc}"


def _column_slots(nest: LoopNest) -> list[tuple[str, np.dtype]]:
    """The per-output variables of a "columns" reduction, each an array of one slot per output:
    its accumulators, an argmax's index, and an accumulator rounded to its dtype after its
    phase (float16: StatementRenderer.round_accumulators), held as its compute dtype."""
    slots = []
    for a in nest.accumulators:
        slots.append((a.name, compute_dtype(a.dtype)))
        if a.indexed:
            slots.append((f"{a.name}_i", np.dtype(np.int64)))
        elif compute_dtype(a.dtype) != a.dtype:
            slots.append((f"{a.name}_r", compute_dtype(a.dtype)))
    return slots


class _ToColumn(ast.NodeTransformer):
    """Accumulator `a` becomes `nf_col_a[row]`: its output's slot in an array of one slot per
    output (a kernel argument: generated code allocates nothing, and np.empty is numfuse's
    own while a graph break compiles a kernel in the middle of a trace)."""

    def __init__(self, names: set[str]):
        self.names = names

    def visit_Name(self, node: ast.Name):
        if node.id not in self.names:
            return node
        # uint64: Numba then adds no negative-index wraparound (statements.buffer_subscript)
        return ast.Subscript(var(column_name(node.id)), call("uint64", var("row")), node.ctx)


class _ToPartial(ast.NodeTransformer):
    """Accumulator `a` becomes `nf_part_a[base + row]`: its chunk's slot for this output."""

    def __init__(self, names: set[str]):
        self.names = names

    def visit_Name(self, node: ast.Name):
        if node.id not in self.names:
            return node
        slot = call("uint64", ast.BinOp(var("base"), ast.Add(), var("row")))
        return ast.Subscript(var(partial_name(node.id)), slot, node.ctx)


def _column_split_ast(nest: LoopNest, params: list[str], trig: str) -> ast.FunctionDef:
    """A single-phase "columns" reduction cut into chunks of its reduced points:
    column_split_reduction's loops, pass 1 into partial results, pass 2 combining them."""
    body = _Statements(nest, trig)
    (phase,) = nest.phases
    accumulators = phase.accumulators
    names = {a.name for a in accumulators} | {f"{a.name}_i" for a in accumulators if a.indexed}
    to_partial = _ToPartial(names)
    point = [to_partial.visit(st) for st in body.stmts(phase.body)]
    gather = _gather(body, accumulators,
                     call("uint64", ast.BinOp(ast.BinOp(var("c"), ast.Mult(), var("nrows")), ast.Add(), var("row"))))
    return fill(templates.column_split_reduction, name=nest.name, params=params,
                INIT=[to_partial.visit(st) for st in _init(accumulators)], UNRAVEL_INNER=unravel("lin", nest.inner),
                UNRAVEL_OUTER=unravel("row", nest.outer), BODY=point, INIT_ROW=_init(accumulators), GATHER=gather,
                AFTER=_after(body, accumulators) or [ast.Pass()], EPILOGUE=body.epilogue(nest.epilogue))


def _column_ast(nest: LoopNest, params: list[str], trig: str) -> ast.FunctionDef:
    """A "columns" reduction (the innermost axis kept): column_reduction's loops."""
    body = _Statements(nest, trig)
    to_column = _ToColumn({name for name, _ in _column_slots(nest)})

    def columns(stmts):
        return [to_column.visit(st) for st in stmts]

    phases: list[ast.stmt] = []
    for k, phase in enumerate(nest.phases):
        body.phase = k
        loop = nested_loops(nest.inner, _each_output(nest, columns(body.stmts(phase.body))))
        if not phase.accumulators:
            phases.extend(loop)
            continue
        phases.extend(fill_body(templates.column_phase, INIT=columns(_init(phase.accumulators)), LOOP=loop,
                                AFTER=columns(_after(body, phase.accumulators)) or [ast.Pass()]))
    return fill(templates.column_reduction, name=nest.name, params=params, PHASES=phases,
                EPILOGUE=_each_output(nest, columns(body.epilogue(nest.epilogue))))


def _each_output(nest: LoopNest, stmts: list[ast.stmt]) -> list[ast.stmt]:
    """`stmts` for each output `row` of a "columns" block [lo, hi), its loop variables set: over
    several output loops, in runs along the last (templates.output_runs)."""
    if len(nest.outer) < 2:
        return [ast.For(target("row"), call("range", var("lo"), var("hi")), unravel("row", nest.outer) + stmts, [])]
    last = nest.outer[-1]
    return fill_body(templates.output_runs, UNRAVEL=unravel("nf_row0", nest.outer), NLAST=var(last.param),
                     LAST=var(last.name), BODY=stmts)


def hoisted(stmts: list[ast.stmt], varying: set[str]) -> tuple[list[ast.stmt], list[ast.stmt]]:
    """(the assignments that compute the same value at every point of a loop, the rest), each
    in order. `varying`: the loop's own names. An assignment is the same at every point when it
    reads nothing that varies and no statement that varies assigns its names; loads at fixed
    points are among them (a stored scalar that an array reads), which LLVM would load again at
    every point, since it cannot tell that the loop's stores leave them alone."""
    varying = set(varying)

    def plain(st) -> bool:
        return isinstance(st, ast.Assign) and all(isinstance(t, ast.Name) for t in st.targets)

    changed = True
    while changed:
        changed = False
        for st in stmts:
            names = assigned_names([st])
            if not names or names <= varying:
                continue
            if not plain(st) or names & varying or any(isinstance(n, ast.Name) and n.id in varying
                                                       for n in ast.walk(st.value)):
                varying |= names
                changed = True
    before = [st for st in stmts if plain(st) and not assigned_names([st]) & varying]
    kept = set(map(id, before))
    return before, [st for st in stmts if id(st) not in kept]


def _kernel_ast(nest: LoopNest, params: list[str], lanes: int, nsplit: int = 1, trig: str = "libm",
                prefetch: int = 0) -> ast.FunctionDef:
    if nest.kind == "pointwise":
        body = _Statements(nest, trig)
        loop_names = {"lin", "row", "blk"} | {d.name for d in nest.outer}
        if nest.schedule == "2d":
            *rows, last = nest.outer
            unravelled = unravel("row", tuple(rows))
            before, inside = hoisted(body.stmts(nest.body), loop_names | assigned_names(unravelled))
            return fill(templates.pointwise_2d, name=nest.name, params=params, HOISTED=before,
                        UNRAVEL=unravelled, LOOP=nested_loops([last], inside))
        if len(nest.body) == 1 and isinstance(nest.body[0], Parts):
            return fill(templates.pointwise_parts, name=nest.name, params=params, PARTS=_part_loops(nest, body))
        unravelled = unravel("lin", nest.outer)
        if uses_trig(nest):
            # With sin or cos, blocks of points: trig_loops checks each block's arguments first.
            return fill(templates.pointwise_blocks, name=nest.name, params=params, UNRAVEL=unravelled,
                        BODY=body.stmts(nest.body))
        before, inside = hoisted(body.stmts(nest.body), loop_names | assigned_names(unravelled))
        return fill(templates.pointwise, name=nest.name, params=params, HOISTED=before, UNRAVEL=unravelled,
                    BODY=inside)
    kind = layout(nest, nsplit)
    if kind == "split":
        return _split_ast(nest, params, lanes, trig, prefetch)
    if kind == "column_split":
        return _column_split_ast(nest, params, trig)
    if kind == "columns":
        return _column_ast(nest, params, trig)
    return _reduction_ast(nest, params, lanes, trig, prefetch)


def _part_loops(nest: LoopNest, body) -> list[ast.stmt]:
    """A kernel of several parts as one loop a part, over its own points (from its start to the
    next part's, or to the total), in place of one loop branching at every point."""
    (parts,) = nest.body
    ends = [index_item(b) for b in parts.bounds] + [var("total")]
    stmts = []
    for part, end in zip(parts.parts, ends):
        points = end if part.start == 0 else ast.BinOp(end, ast.Sub(), index_item(part.start))
        template = templates.part_blocks if uses_trig(_part_only(nest, part)) else templates.part_loop
        stmts.extend(fill_body(template, NPOINTS=points, UNRAVEL=unravel("lin", part.dims),
                               BODY=body.stmts(part.body)))
    return stmts


def _part_only(nest: LoopNest, part) -> LoopNest:
    return dataclasses.replace(nest, phases=(Phase((), part.body),))


VECTOR_FUNCTION_PREFIX = "nf_vm_"


def vector_function_name(op: str, cd: np.dtype) -> str:
    return f"{VECTOR_FUNCTION_PREFIX}{op}_{np.dtype(cd).name}"


def _vector_functions(fn: ast.FunctionDef) -> list[ast.FunctionDef]:
    """The functions of vector_math's templates that `fn` calls (vector_function_name), each
    a serial njit function of the module."""
    called = sorted({n.func.id for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                     and n.func.id.startswith(VECTOR_FUNCTION_PREFIX)})
    made = []
    for name in called:
        op, cd = name[len(VECTOR_FUNCTION_PREFIX):].rsplit("_", 1)
        cd = np.dtype(cd)
        stmts, expr = inline(vector_math.TEMPLATES[op][cd.name], [var("a")], type_name(cd), "", type_name(cd))
        args = ast.arguments(posonlyargs=[], args=[ast.arg("a")], kwonlyargs=[], kw_defaults=[], defaults=[])
        function = ast.FunctionDef(name=name, args=args, body=stmts + [ast.Return(expr)], decorator_list=[])
        made.append(_decorated(_ForCpu({}).visit(function), False))
    return made


class _ForCpu(Rename):
    """One pass over a kernel's tree: its names as the code names them (Rename); `cuda.popc(x)`
    (a scalar template's GPU intrinsic) as `popc(x)` (intrinsics.py); and `a if c else b` whose
    choices are plain values (names, constants, casts of them) as `select(c, a, b)`
    (intrinsics.select: no branch, so Numba's passes see one block, not three). Any other
    choice keeps its branch: it may load or divide only where its condition holds."""

    def visit_Attribute(self, node: ast.Attribute):
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == "cuda":
            if node.attr not in GPU_INTRINSICS:
                raise NotImplementedError(f"the CPU target has no cuda.{node.attr}")
            return ast.Name(node.attr, node.ctx)
        return node

    def visit_IfExp(self, node: ast.IfExp):
        self.generic_visit(node)
        if _plain(node.body) and _plain(node.orelse):
            return ast.Call(var("select"), [node.test, node.body, node.orelse], [])
        return node


def _plain(node: ast.expr) -> bool:
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _plain(node.operand)
    if isinstance(node, ast.Attribute):  # math.inf
        return isinstance(node.value, ast.Name) and node.value.id == "math"
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in TYPE_NAMES \
        and len(node.args) == 1 and not node.keywords and _plain(node.args[0])


class _Serial(ast.NodeTransformer):
    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.Name("range", node.ctx) if node.id == "prange" else node


def _decorated(fn: ast.FunctionDef, parallel: bool) -> ast.FunctionDef:
    options = [ast.keyword("parallel", ast.Constant(parallel))]
    options += [ast.keyword(k, ast.Constant(v)) for k, v in JIT_OPTIONS.items()]
    fn.decorator_list = [ast.Call(var("njit"), [], options)]
    return fn


def uses_trig(nest: LoopNest) -> bool:
    """Whether the kernel computes sin or cos in a dtype vector_math has templates for."""
    stmts = list(nest.body) + [s for p in nest.phases for s in p.body]
    return any(isinstance(s, Compute) and s.op in vector_math.LIMITED
               and compute_dtype(s.type_dtype).name in vector_math.TEMPLATES[s.op] for s in walk(stmts))


def render_code(nest: LoopNest, params, names: dict[str, str], lanes: int = 1, nsplit: int = 1,
                prefetch: int = 0) -> str:
    """The module's code (no header), rendered afresh; `lanes`: a reduction's accumulators
    along its innermost loop (lanes_loop); `nsplit`: the chunks of a split reduction;
    `prefetch`: how many bytes ahead the lanes prefetch what they load (0: not at all)."""

    def kernel(trig: str) -> ast.FunctionDef:
        return _ForCpu(names).visit(_kernel_ast(nest, [p.name for p in params], lanes, nsplit, trig, prefetch))

    fn = trig_loops.choose(kernel("fast"), kernel("libm"), BIG_FLAG) if uses_trig(nest) else kernel("libm")
    imports = [
        ast.ImportFrom("numba", [ast.alias("get_thread_id"), ast.alias("njit"), ast.alias("prange")], 0),
        ast.ImportFrom("numba.types", [ast.alias(t) for t in TYPE_NAMES if t != "float16"], 0),
        ast.ImportFrom("numfuse.targets.cpu", [ast.alias("cpumath", "math")], 0),
        ast.ImportFrom("numfuse.targets.cpu.intrinsics", [ast.alias(n) for n in INTRINSICS], 0),
    ]
    parallel = ast.unparse(module(imports + _vector_functions(fn) + [_decorated(fn, True)]))
    # The serial function: the same tree, its prange loops made range (after the parallel
    # one is text: no copy of the tree).
    serial = _decorated(_Serial().visit(fn), False)
    serial.name = f"{serial.name}_serial"
    return parallel + "\n\n" + ast.unparse(serial)


_CODE = CodeCache()


def render(nest: LoopNest, header: str = "", nsplit: int = 1, lanes: int = 1, prefetch: int = 0) -> KernelSource:
    """The module's source; `header` becomes its leading comment block."""
    nest = sums_apart(nest, lanes)
    params, names = positional_names(kernel_params(nest, nsplit, lanes))
    # The code depends on the sizes only through the template chosen (layout): nsplit is an argument.
    key = f"cpu{lanes}p{prefetch}{layout(nest, nsplit) if nest.kind == 'reduction' else ''}" + code_key(nest, names)
    code = _CODE.get(key, lambda: render_code(nest, params, names, lanes, nsplit, prefetch))
    return KernelSource(nest.name, with_header(code, header), params, nest.schedule)
