"""A CPU row reduction's innermost loop in independent accumulators (lanes): point j + k
folds into lane k, and the lanes combine in a fixed tree at the end (lanes_loop), so that one
accumulator's latency no longer bounds the loop and LLVM vectorizes it, without fast-math
reassociation. Points that compute something, or combine other than by adding, first fold
into a per-thread scratch row of CHUNK slots, a loop that vectorizes (_chunk_loops). A plain
sum's lanes ask the cache for the row ahead (_prefetches). NumPy's pairwise order for float
sums is pairwise.py's; products in order are _in_sequence's.
"""

from __future__ import annotations

import ast

import numpy as np

from ...codegen.pyast import Suffix, assign, assigned_names, call, target, unrolled_points, var
from ...codegen.statements import StatementRenderer, literal
from ...codegen.templates import clone
from ...ir.dtypes import compute_dtype
from ...loops.loopnest import Accumulate, Compute, LoopNest, OnlineAccumulate, walk
from .pairwise import uses_pairwise

# A reduction phase of more loop-nest statements per point than this folds into one
# accumulator, not LANES copies of its body: a long body keeps the core busy on its own, and
# eight copies of it (of complex arithmetic, say) take Numba and LLVM minutes to compile.
LANES_MAX_STATEMENTS = 48
BIG_FLAG = "nf_big"  # whether a loop met a sin or cos argument past vector_math.TRIG_LIMIT


def mentions(stmts: list[ast.stmt], name: str) -> bool:
    """Whether any of `stmts` reads or writes the variable `name`."""
    return any(isinstance(n, ast.Name) and n.id == name for st in stmts for n in ast.walk(st))


def identity_literal(a) -> ast.expr:
    """Accumulator `a`'s identity as a constant of the dtype it computes in."""
    return literal(np.asarray(a.identity).astype(compute_dtype(a.dtype))[()])


def _in_sequence(acc) -> bool:
    """Whether an accumulator folds its row in point order, one point after another: a float or
    complex product, which NumPy's multiply.reduce computes so (its bits; lanes would round
    differently)."""
    return acc.combine == "multiply_scalar_loop" and np.dtype(acc.dtype).kind in "fc"


def lanes_loop(body: StatementRenderer, nest: LoopNest, phase, lanes: int,
               bounds: tuple[ast.expr, ast.expr] | None = None) -> tuple[list, list, list] | None:
    """A reduction phase's loops with `lanes` independent accumulators along the innermost
    loop: point j + k folds into lane k, the lanes combine in a fixed tree at the end. Latency
    of one accumulator's chain no longer bounds the loop, and LLVM can vectorize the lanes,
    without fast-math reassociation (the order is fixed: the same bits on every machine and
    thread count). (init, loops, combine), or None where lanes do not apply: an argmax's index
    and an online sum's rescaling need one accumulator in point order. `bounds`: the innermost
    loop's range (a split chunk's start and stop), else all of it."""
    accumulators = phase.accumulators
    if lanes < 2 or not nest.inner or any(a.indexed or a.partner or a.running for a in accumulators):
        return None
    if any(_in_sequence(a) for a in accumulators):
        return None
    if sum(1 for _ in walk(phase.body)) > LANES_MAX_STATEMENTS:
        return None
    point = body.stmts(phase.body)
    if mentions(point, "lin"):
        return None
    last = nest.inner[-1]
    names = {a.name for a in accumulators}
    lo, hi = bounds or (ast.Constant(0), var(last.param))
    if uses_chunks(nest, phase, lanes):  # every point through chunk_loops' scratch row
        loops = _chunk_loops(body, nest, phase, lanes, clone(lo), clone(hi))
    else:
        base = f"{last.name}_base"
        unrolled = unrolled_points(point, last.name, base, lanes, names, kept={BIG_FLAG})  # one flag for every lane
        length = ast.BinOp(clone(hi), ast.Sub(), clone(lo))
        whole = ast.BinOp(clone(hi), ast.Sub(), ast.BinOp(length, ast.Mod(), ast.Constant(lanes)))
        ahead = _prefetches(body, unrolled[:1 + len(point)], f"{last.name}_l0", base)
        main = ast.For(target(base), call("range", clone(lo), whole, ast.Constant(lanes)), ahead + unrolled, [])
        rest_body = [Suffix(names, "_l0").visit(clone(st)) for st in point]
        rest = ast.For(target(last.name), call("range", clone(whole), clone(hi)), rest_body, [])
        loops = [main, rest]
        for dim in reversed(nest.inner[:-1]):
            loops = [ast.For(target(dim.name), call("range", var(dim.param)), loops, [])]
    init = [assign(f"{a.name}_l{k}", identity_literal(a)) for a in accumulators for k in range(lanes)]
    combine: list[ast.stmt] = []
    for a in accumulators:
        width = lanes
        while width > 1:  # lane k += lane k + width/2, halving: a fixed tree
            width //= 2
            for k in range(width):
                combine.extend(body.combine(a, f"{a.name}_l{k}", var(f"{a.name}_l{k + width}"), f"{a.name}_t{width}_{k}_"))
        combine.append(assign(a.name, var(f"{a.name}_l0")))
    return init, loops, combine


class _Ahead(ast.NodeTransformer):
    """`name` (a lane's point) becomes `start + points`."""

    def __init__(self, name: str, start: str, points: int):
        self.name, self.start, self.points = name, start, points

    def visit_Name(self, node: ast.Name):
        return ast.BinOp(var(self.start), ast.Add(), ast.Constant(self.points)) if node.id == self.name else node


def _prefetches(body, lane: list[ast.stmt], index: str, start: str) -> list[ast.stmt]:
    """`prefetch(buffer, (i, j + d))` for each buffer that lane 0's statements load along the
    innermost loop (its index mentions `index`, which is `start` there): the point body.prefetch
    bytes ahead. A row reduction reading memory then keeps more lines in flight than the
    hardware prefetchers alone do (row sums 1.4x faster on one thread); none where prefetch is 0."""
    stmts, seen = [], set()
    computed = assigned_names(lane) - {index}  # a gather's index, loaded in the lane: not known before it
    for st in lane:
        value = st.value if isinstance(st, ast.Assign) else None
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "float16_load":
            value = value.args[0]
        if not body.prefetch or not isinstance(value, ast.Subscript) or not isinstance(value.value, ast.Name):
            continue
        name = value.value.id
        if name in seen or name not in body.buffers or not mentions([ast.Expr(value.slice)], index):
            continue
        if any(isinstance(n, ast.Name) and n.id in computed for n in ast.walk(value.slice)):
            continue
        seen.add(name)
        points = max(1, body.prefetch // np.dtype(body.buffers[name]).itemsize)
        indices = value.slice.elts if isinstance(value.slice, ast.Tuple) else [value.slice]
        ahead = ast.Tuple([_Ahead(index, start, points).visit(clone(i)) for i in indices], ast.Load())
        stmts.append(ast.Expr(call("prefetch", var(name), ahead)))
    return stmts


# Points of a row a chunk takes (_chunk_loops): a multiple of the lanes.
CHUNK = 64


def scratch_name(acc: str) -> str:
    return f"nf_tmp_{acc}"


def uses_chunks(nest: LoopNest, phase, lanes: int) -> bool:
    """Whether a row reduction's phase goes through chunk_loops: one inner loop, lanes, every
    accumulation a plain one and a statement of the phase itself (not in a guard), and points
    that compute something or combine other than by adding (a maximum's NaN-aware select, a
    variance's squares, vector_math's exp): those vectorize in a loop of independent slots, not
    across 8 unrolled lanes. A plain sum of loads vectorizes as lanes already, and faster."""
    if nest.kind != "reduction" or nest.schedule != "rows" or len(nest.inner) != 1 or lanes < 2:
        return False
    if not phase.accumulators or any(a.indexed or a.partner or a.running for a in phase.accumulators):
        return False
    if uses_pairwise(nest, phase, lanes) or any(_in_sequence(a) for a in phase.accumulators):
        return False
    if sum(1 for _ in walk(phase.body)) > LANES_MAX_STATEMENTS:
        return False  # no lanes (lanes_loop)
    top = [s for s in phase.body if isinstance(s, Accumulate)]
    every = [s for s in walk(phase.body) if isinstance(s, Accumulate)]
    if not top or len(top) != len(every) or any(isinstance(s, OnlineAccumulate) for s in walk(phase.body)):
        return False
    computes = any(isinstance(s, Compute) for s in walk(phase.body))
    return computes or any(a.combine != "add" for a in phase.accumulators)


def _chunk_loops(body, nest: LoopNest, phase, lanes: int, start: ast.expr, stop: ast.expr) -> list[ast.stmt]:
    """The innermost loop's points from `start` to `stop` in chunks of CHUNK: point j of a chunk
    folds into slot j of a per-thread scratch row of CHUNK accumulators (a loop that vectorizes:
    the slots are independent, and the index is unsigned, with no wraparound), and after the
    chunks slot j folds into lane j mod lanes, in slot order. The bits are fixed by the sizes
    alone, as lanes_loop's are; the point's code appears once (no unrolled lanes to compile)."""
    last = nest.inner[-1]
    base = f"{last.name}_chunk"
    row = "nf_slot"  # the thread's scratch row
    slot = ast.BinOp(var(row), ast.Add(), call("uint64", var("jj")))
    clear, point, fold = [], [assign(last.name, ast.BinOp(var(base), ast.Add(), var("jj")))], []
    for s in phase.body:
        if isinstance(s, Accumulate):
            acc = body.accumulators[s.acc]
            value = body.operand(s.src, compute_dtype(acc.dtype))
            cell = f"{s.acc}_s"
            point.append(assign(cell, ast.Subscript(var(scratch_name(s.acc)), clone(slot), ast.Load())))
            point.extend(body.combine(acc, cell, value, f"{s.acc}_sc_"))
            point.append(ast.Assign([ast.Subscript(var(scratch_name(s.acc)), clone(slot), ast.Store())], var(cell)))
            clear.append(ast.Assign([ast.Subscript(var(scratch_name(s.acc)), clone(slot), ast.Store())], identity_literal(acc)))
        else:
            point.extend(body.stmts([s]))
    for k in range(lanes):
        cell = ast.BinOp(clone(slot), ast.Add(), call("uint64", ast.Constant(k))) if k else clone(slot)
        for a in phase.accumulators:
            theirs = ast.Subscript(var(scratch_name(a.name)), cell, ast.Load())
            fold.extend(body.combine(a, f"{a.name}_l{k}", theirs, f"{a.name}_c{k}_"))
    # Whole chunks (a constant trip count vectorizes best), then the short last one, whose
    # points take the first slots, as a whole chunk's would.
    whole = "nf_whole"
    span = ast.BinOp(clone(stop), ast.Sub(), clone(start))
    chunks = ast.For(target(base), call("range", start, var(whole), ast.Constant(CHUNK)),
                     [ast.For(target("jj"), call("range", ast.Constant(CHUNK)), clone(point), [])], [])
    last_chunk = [assign(base, var(whole)),
                  ast.For(target("jj"), call("range", ast.BinOp(clone(stop), ast.Sub(), var(whole))), point, [])]
    return [
        assign(row, call("uint64", ast.BinOp(call("get_thread_id"), ast.Mult(), ast.Constant(CHUNK)))),
        ast.For(target("jj"), call("range", ast.Constant(CHUNK)), clear, []),
        assign(whole, ast.BinOp(clone(stop), ast.Sub(), ast.BinOp(span, ast.Mod(), ast.Constant(CHUNK)))),
        chunks,
        *last_chunk,
        ast.For(target("jj"), call("range", ast.Constant(0), ast.Constant(CHUNK), ast.Constant(lanes)), fold, []),
    ]
