"""NumPy's pairwise summation on the CPU target: a row reduction's float32 or float64 sum added
in the order NumPy's add.reduce adds a row it walks in order (numpy/_core/src/umath/
loops_utils.h.src, pairwise_sum), so that a row's sum, mean or variance is NumPy's bits.

A row of at most PAIRWISE_LEAF points is a leaf: its points fold into 8 lanes (point j into lane
j mod 8; NumPy starts each lane at the leaf's first 8 points, numfuse at -0.0, which keeps every
value's bits), the lanes are added ((0+1)+(2+3))+((4+5)+(6+7)), then the last points in order.
A longer row is its first half, rounded down to a multiple of 8 points, plus the rest, each
summed so. The recursion runs on per-thread stacks (templates.pairwise_row); a split
reduction's jobs each take one node of the tree (codegen._split_ast). A leaf's points are
computed in the 8 lanes, unrolled, where they are loads and arithmetic; where they call a
function (exp), into the thread's row first, a loop that vectorizes (stores_leaf).
"""

from __future__ import annotations

import ast
from dataclasses import replace

import numpy as np

from ...codegen.pyast import Suffix, assign, call, target, unrolled_points, var
from ...codegen.statements import literal
from ...codegen.templates import clone, fill_body
from ...ir.dtypes import compute_dtype
from ...ir.indexing import DivMod, Gathered, Lin
from ...loops.loopnest import Accumulate, Check, Compute, Iota, Load, LoopNest, OnlineAccumulate, Phase, Store, walk
from . import templates

# Each thread keeps a row of a leaf's values (where the points compute something), a stack of
# frames and one of partial sums per sum (64 deep: a row of 2**63 points needs 57).
PAIRWISE_LEAF = 128
PAIRWISE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
PAIRWISE_DEPTH = 64
FRAMES = "nf_pw_frames"


def leaf_name(acc: str) -> str:
    return f"nf_leaf_{acc}"


def stack_name(acc: str) -> str:
    return f"nf_pw_{acc}"


def uses_pairwise(nest: LoopNest, phase, lanes: int) -> bool:
    """Whether a row reduction's phase adds its points in NumPy's pairwise order (pairwise_loop):
    one inner loop, lanes, every accumulator a float32 or float64 sum accumulated once, by a
    statement of the phase itself. NumPy's add.reduce of a row along an axis it walks in order
    (a C-contiguous array's last, or its collapsed last axes) sums that way, so the result is
    NumPy's bits, as is a mean's or a variance's, a softmax's denominator's."""
    if nest.kind != "reduction" or nest.schedule != "rows" or len(nest.inner) != 1 or lanes < 2:
        return False
    accumulators = phase.accumulators
    if not accumulators or any(a.indexed or a.partner or a.running or a.combine != "add"
                               or np.dtype(a.dtype) not in PAIRWISE_DTYPES for a in accumulators):
        return False
    if len({a.blocks for a in accumulators}) > 1:
        return False  # sums of cast values and others: one row, one walk through it
    top = [s for s in phase.body if isinstance(s, Accumulate)]
    every = [s for s in walk(phase.body) if isinstance(s, Accumulate)]
    return (bool(top) and len(top) == len(every) == len({s.acc for s in top}) == len(accumulators)
            and not any(isinstance(s, OnlineAccumulate) for s in every))


# A phase of more float sums than this keeps them folded with its other reductions: each sum's
# pairwise pass is code of its own (azimint_naive's 16 masked sums beside 15 counts: a kernel
# of 105 KB that compiled in 14.8 s, against 3.3 s folded), and sums of many values a mask
# selects are not NumPy's bits either way (NumPy sums the selected values alone).
SUMS_APART_MAX = 4


def sums_apart(nest: LoopNest, lanes: int) -> LoopNest:
    """`nest` with each row phase whose float sums would add in NumPy's pairwise order alone,
    beside accumulators that fold otherwise (a maximum, an argmax, a running cumsum: `x.sum()`
    and `x.max()` in one kernel), cut into two passes over the row: the sums' (pairwise, their
    own statements) and then the others'. One pass would fold the sums with the others, in
    another order: a float32 sum 1 to 6 ULP from NumPy's. The row is read twice, the second
    time from the cache the first left it in."""
    if nest.kind != "reduction" or nest.schedule != "rows" or nest.split or lanes < 2:
        return nest
    phases = []
    for phase in nest.phases:
        phases.extend(_apart(nest, phase, lanes) or [phase])
    return nest if len(phases) == len(nest.phases) else replace(nest, phases=tuple(phases))


def _apart(nest: LoopNest, phase: Phase, lanes: int) -> list[Phase] | None:
    accumulators = phase.accumulators
    if len(accumulators) < 2 or uses_pairwise(nest, phase, lanes):
        return None
    if any(not isinstance(s, (Load, Compute, Iota, Accumulate, Check, Store)) for s in phase.body):
        return None  # (guards, selects and online sums: one pass as they are)
    sums = {a.name for a in accumulators if a.combine == "add" and not (a.indexed or a.partner or a.running)
            and np.dtype(a.dtype) in PAIRWISE_DTYPES}
    if not sums or len(sums) == len(accumulators) or len(sums) > SUMS_APART_MAX:
        return None
    made = {s.dst: s for s in phase.body if isinstance(s, (Load, Compute, Iota))}
    names = {a.name for a in accumulators}
    needed: set[str] = set()
    stack = [s.src for s in phase.body if isinstance(s, Accumulate) and s.acc in sums]
    while stack:
        operand = stack.pop()
        if not isinstance(operand, str) or operand in needed:
            continue
        if operand in names:
            return None  # a sum of another accumulator's running value: one pass
        if operand in made:
            needed.add(operand)
            statement = made[operand]
            # (a Compute's operands; a gather's load, the values its index is computed from)
            stack.extend(statement.args if isinstance(statement, Compute) else
                         _index_names(statement.index) if isinstance(statement, Load) else ())
    first = Phase(tuple(a for a in accumulators if a.name in sums),
                  tuple(s for s in phase.body if getattr(s, "dst", None) in needed
                        or isinstance(s, Accumulate) and s.acc in sums))
    rest = Phase(tuple(a for a in accumulators if a.name not in sums),
                 tuple(s for s in phase.body if not (isinstance(s, Accumulate) and s.acc in sums)))
    return [first, rest] if uses_pairwise(nest, first, lanes) else None


def _index_names(entry) -> list[str]:
    """The names an index (or a tuple of them) reads: loop variables, and the values a gathered
    index is (x[idx]: the loaded and wrapped idx)."""
    if isinstance(entry, str):
        return [entry]
    if isinstance(entry, tuple):
        return [n for e in entry for n in _index_names(e)]
    if isinstance(entry, Lin):
        return [n for v, _ in entry.terms for n in _index_names(v)]
    if isinstance(entry, DivMod):
        return _index_names(entry.inner)
    if isinstance(entry, Gathered):
        return _index_names(entry.value)
    return []


def pairwise_loop(body, nest: LoopNest, phase, start: ast.expr | None = None,
                   length: ast.expr | None = None) -> list[ast.stmt]:
    """A phase's row summed in NumPy's pairwise order (templates.pairwise_row, pairwise_leaf);
    each accumulator, at its identity (0.0) before, then adds the row's sum, as NumPy's
    reduction adds it to its identity. `start`, `length`: a node of the row's tree (a split
    reduction's job), else the whole row."""
    last = nest.inner[-1]
    accumulators = phase.accumulators

    def at(name: str, offset: ast.expr, base: str = "nf_slot") -> ast.Subscript:
        return ast.Subscript(var(name), ast.BinOp(var(base), ast.Add(), call("uint64", offset)), ast.Load())

    def store(target_: ast.Subscript, value: ast.expr) -> ast.stmt:
        target_.ctx = ast.Store()
        return ast.Assign([target_], value)

    def cd(a) -> np.dtype:
        return compute_dtype(a.dtype)

    values = [assign(last.name, ast.BinOp(var("nf_start"), ast.Add(), var("jj")))]
    for st in phase.body:
        if isinstance(st, Accumulate):
            a = body.accumulators[st.acc]
            values.append(store(at(leaf_name(st.acc), var("jj")), body.operand(st.src, cd(a))))
        else:
            values.extend(body.stmts([st]))
    lanes_init, lanes, tree, tail, push, pop = [], [], [], [], [], []
    for a in accumulators:
        lane = [f"{a.name}_l{k}" for k in range(8)]
        lanes_init += [assign(name, literal(np.asarray(-0.0, cd(a))[()])) for name in lane]
        for k in range(8):
            point = ast.BinOp(var("jj"), ast.Add(), ast.Constant(k)) if k else var("jj")
            lanes += body.combine(a, lane[k], at(leaf_name(a.name), point), f"{a.name}_c{k}_")
        for left, right in ((0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (4, 6), (0, 4)):
            tree += body.combine(a, lane[left], var(lane[right]), f"{a.name}_t{left}{right}_")
        tail += body.combine(a, lane[0], at(leaf_name(a.name), var("jj")), f"{a.name}_r_")
        push.append(store(at(stack_name(a.name), var("nf_vp"), "nf_sv"), var(lane[0])))
        below = ast.BinOp(var("nf_vp"), ast.Sub(), ast.Constant(2))
        top = ast.BinOp(var("nf_vp"), ast.Sub(), ast.Constant(1))
        pop.append(assign(f"{a.name}_p", at(stack_name(a.name), below, "nf_sv")))
        pop += body.combine(a, f"{a.name}_p", at(stack_name(a.name), top, "nf_sv"), f"{a.name}_pc_")
        pop.append(store(at(stack_name(a.name), clone(below), "nf_sv"), var(f"{a.name}_p")))
    if stores_leaf(phase):
        leaf = fill_body(templates.pairwise_leaf, VALUES=values, LANES_INIT=lanes_init, LANES=lanes, TREE=tree,
                         TAIL=tail, LEAF_POINTS=ast.Constant(PAIRWISE_LEAF))
    else:
        leaf = lanes_init + _lanes_leaf(body, nest, phase, tree)
    start, length = start or ast.Constant(0), length or var(last.param)
    blocks = accumulators[0].blocks  # (uses_pairwise: every accumulator's)

    def row(start: ast.expr, length: ast.expr) -> list[ast.stmt]:
        return fill_body(templates.pairwise_row, START=start, LENGTH=length, LEAF=clone(leaf), PUSH=clone(push),
                         POP=clone(pop), LEAF_POINTS=ast.Constant(PAIRWISE_LEAF),
                         FRAME_ROW=ast.Constant(3 * PAIRWISE_DEPTH), STACK_ROW=ast.Constant(PAIRWISE_DEPTH))

    total = []
    for a in accumulators:
        total += body.combine(a, a.name, at(stack_name(a.name), ast.Constant(0), "nf_sv"), f"{a.name}_pw_")
    if blocks:
        return fill_body(templates.buffered_row, START=start, LENGTH=length, BLOCK=ast.Constant(blocks),
                         ROW=row(var("nf_blk"), var("nf_blen")), TOTAL=total)
    return row(start, length) + total


# Operations a leaf's points may compute and still fold straight into the 8 lanes, unrolled
# (_lanes_leaf): one instruction each, so that 8 copies cost what a stored row would, without
# the second pass over it (gesummv's `alpha * A[i, j] * x[j]` 1.5x faster, a variance's
# squares 1.3x). A function call (exp, tanh: vector_math's polynomials) vectorizes only in the
# leaf's loop of independent slots (exp's row sums 3x slower unrolled).
LANE_OPS = frozenset({"add", "subtract", "multiply", "true_divide", "negative", "positive", "square",
                      "absolute", "fabs", "convert"})


def stores_leaf(phase) -> bool:
    """Whether a pairwise leaf stores its points' values in the thread's row first
    (templates.pairwise_leaf): where they compute more than LANE_OPS on real numbers."""
    return any(isinstance(st, Compute) and (st.op not in LANE_OPS or np.dtype(st.dtype).kind == "c"
                                            or np.dtype(st.type_dtype).kind == "c")
               for st in walk(phase.body))


def _lanes_leaf(body, nest: LoopNest, phase, tree: list[ast.stmt]) -> list[ast.stmt]:
    """A pairwise leaf whose points are loads or LANE_OPS (stores_leaf): NumPy's 8 lanes read
    or compute them where they are, 8 points a step (the point's statements once a lane, as
    lanes_loop unrolls them), then `tree`, then the last points into lane 0. No copy into the
    thread's row: such a sum is bound by memory, and the copy would be a second pass."""
    last = nest.inner[-1]
    point = body.stmts(phase.body)
    names = {a.name for a in phase.accumulators}
    base = f"{last.name}_base"
    unrolled = unrolled_points(point, last.name, base, 8, names)
    whole = ast.BinOp(var("nf_start"), ast.Add(),
                      ast.BinOp(var("nf_len"), ast.Sub(), ast.BinOp(var("nf_len"), ast.Mod(), ast.Constant(8))))
    stop = ast.BinOp(var("nf_start"), ast.Add(), var("nf_len"))
    tail = [Suffix(names, "_l0").visit(clone(st)) for st in point]
    return [
        assign("nf_whole", whole),
        ast.For(target(base), call("range", var("nf_start"), var("nf_whole"), ast.Constant(8)), unrolled, []),
        *tree,
        ast.For(target(last.name), call("range", var("nf_whole"), stop), tail, []),
    ]


