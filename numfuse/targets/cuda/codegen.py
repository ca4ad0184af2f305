"""The CUDA renderer: a LoopNest becomes the source of a module holding one Numba CUDA kernel.

The kernel is a plain Python function (the module does not call `cuda.jit`; the runtime does,
and compile checks call `cuda.compile_ptx` on it). Its statements are built as AST: the loop
structure from templates.py, each operation inlined from its scalar template, every literal
typed with its dtype's constructor so float32 kernels stay float32.

Schedules (LoopNest.schedule):
- flat: a grid-stride loop over all points of a pointwise kernel with one loop (its axes
  collapsed: contiguous everywhere);
- 2d: a pointwise kernel with several loops (a transpose, a broadcast, a slice): threads side by
  side stride over the last loop, rows of threads over the others, whose indices are computed
  once per row; the flat loop would divide by the sizes at every point;
- rows and columns: a reduction. A block takes ntk rows (outputs) at a time, ntr threads per
  row, launched as a (ntr, ntk) block for rows (threads side by side share a row) and (ntk, ntr)
  for columns (threads side by side take neighbouring outputs). Each phase is a strided pass over
  the row and a shared-memory tree reduction over the row's threads (portable: the simulator has
  no warp shuffles); ntr = 1 is a thread per output. A cached buffer's row lives in shared
  memory from its first phase on. A split kernel spreads a row over gridDim.y blocks, and the last
  of them to finish combines their partial results.

A reduction's shared memory is all dynamic, sized at launch (`shared_bytes`): first the tree
reduction's arrays, one slot per thread of the block for each accumulator (widest first), then
the cached rows. So one compiled kernel runs with any block size the device allows.
"""

from __future__ import annotations

import ast

import numpy as np

from ...ir.dtypes import compute_dtype, short_name
from ...loops.loopnest import Load, LoopNest, Parts
from ...ir.ops import NO_INDEX
from . import templates
from ...codegen.pyast import assign, call, var
from ...codegen.statements import (
    TYPE_NAMES, CodeCache, KernelParam, KernelSource, Rename, StatementRenderer, buffer_subscript, code_key, kernel_code, literal, loaded_buffers, positional_names, source_digest, subscript, type_name, unravel, with_header,
)
from ...codegen.templates import clone, fill, fill_body, module
from .unroll import in_order, render_parts, unrolled_loop

__all__ = ["KernelParam", "KernelSource", "kernel_code", "kernel_params", "render", "render_code",
           "shared_bytes", "source_digest", "type_name"]


class _Body(StatementRenderer):
    """The statements of a CUDA kernel: a cached buffer's rows live in shared memory from the
    first phase that loads them on."""

    def __init__(self, nest: LoopNest):
        super().__init__(nest)
        # Cached buffers: the phase that loads them from memory (and fills the cache), and
        # the shared-memory array and offset variable their rows live at.
        self.first_phase: dict[str, int] = {}
        for k, phase in enumerate(nest.phases):
            for b in loaded_buffers(phase.body):
                if b in nest.cached:
                    self.first_phase.setdefault(b, k)
        self.cache_of = {b: (shared_name(self.buffers[b]), f"{b}_at") for b in nest.cached}

    def apply(self, fn, args, type_dtype, out_dtype, prefix):
        """A template's statements with every product of floats or complex values written
        `mul(a, b)` (products.py): NVVM would otherwise fuse a product and the sum it feeds
        into one multiply-add, rounded once where NumPy rounds twice."""
        if np.dtype(type_dtype).kind not in "fc":
            return super().apply(fn, args, type_dtype, out_dtype, prefix)
        # The template is inlined on stand-ins, so that only its own products change, not
        # those of an operand's expression (a partial result's index, say).
        holes = [f"nf_operand_{k}" for k in range(len(args))]
        stmts, expr = super().apply(fn, [var(h) for h in holes], type_dtype, out_dtype, prefix)
        rounded = _RoundedProducts(dict(zip(holes, args)))
        return [rounded.visit(st) for st in stmts], rounded.visit(expr)

    def product(self, a, b):
        return call("mul", a, b)  # the online sum's rescaling, say: never fused by NVVM

    def load(self, s: Load) -> list[ast.stmt]:
        if s.buffer not in self.cache_of:
            return super().load(s)
        self.types[s.dst] = self.buffers[s.buffer]
        array, offset = self.cache_of[s.buffer]
        # Point `lin` of the block's row tk (every phase gives a thread the same points), laid
        # out so that threads side by side touch neighbouring words (no bank conflicts): along
        # the row for rows, across the rows for columns.
        if self.schedule == "rows":
            cell_index = _index_expr(var("tk"), var("ncache"), var("lin"))
        else:
            cell_index = _index_expr(var("lin"), var("ntk"), var("tk"))
        slot = call("uint64", ast.BinOp(var(offset), ast.Add(), cell_index))  # never negative
        # Only the row's first ncache points fit on chip (all of them, unless the row is long).
        on_chip = ast.Compare(var("lin"), [ast.Lt()], [var("ncache")])
        cell = ast.Subscript(var(array), slot, ast.Load())
        if self.phase > self.first_phase[s.buffer]:
            return [assign(s.dst, ast.IfExp(on_chip, cell, buffer_subscript(s.buffer, s.index)))]
        store = ast.Subscript(var(array), clone(slot), ast.Store())
        keep = ast.If(on_chip, [ast.Assign([store], var(s.dst))], [])
        return [assign(s.dst, buffer_subscript(s.buffer, s.index)), keep]


class _RoundedProducts(ast.NodeTransformer):
    """`a * b` becomes `mul(a, b)`; each stand-in name, its operand (as it is)."""

    def __init__(self, operands: dict[str, ast.expr]):
        self.operands = operands

    def visit_Name(self, node: ast.Name):
        operand = self.operands.get(node.id)
        return clone(operand) if operand is not None and isinstance(node.ctx, ast.Load) else node

    def visit_BinOp(self, node: ast.BinOp):
        self.generic_visit(node)
        if isinstance(node.op, ast.Mult):
            return call("mul", node.left, node.right)
        return node


def partial_name(acc: str) -> str:
    return f"nf_part_{acc}"


COUNTER = "nf_counter"


def kernel_params(nest: LoopNest) -> tuple[KernelParam, ...]:
    params = [KernelParam(b.name, "buffer") for b in nest.buffers]
    params += [KernelParam(s.name, "scalar") for s in nest.scalars]
    # Counts computed from the shapes, passed already in the dtype they divide in.
    params += [KernelParam(c.name, "count", c.value, c.dtype) for c in nest.counts]
    params += [KernelParam(d.param, "size", d.size) for d in nest.outer + nest.inner]
    if nest.kind == "pointwise":
        if nest.schedule == "2d":  # the rows: every axis but the last
            params.append(KernelParam("nrows", "size", nest.outer_size // max(1, nest.outer[-1].size)))
        else:
            params.append(KernelParam("total", "size", nest.outer_size))
        return tuple(params)
    params.append(KernelParam("nrows", "size", nest.outer_size))
    params.append(KernelParam("nred", "size", nest.inner_size))
    if nest.cached:
        # How many points of each row the cache holds: the launch configuration decides.
        params.append(KernelParam("ncache", "cache_points"))
    if nest.split:
        for a in nest.accumulators:
            params.append(KernelParam(partial_name(a.name), "partial", dtype=compute_dtype(a.dtype)))
            if a.indexed:
                params.append(KernelParam(partial_name(f"{a.name}_i"), "partial", dtype=np.dtype(np.int64)))
        params.append(KernelParam(COUNTER, "counter"))
    return tuple(params)


def shared_name(dtype) -> str:
    """The kernel's dynamic shared memory seen as an array of `dtype`."""
    return f"shared_{short_name(np.dtype(dtype))}"


def scratch_arrays(nest: LoopNest) -> list[tuple[str, np.dtype]]:
    """A reduction's tree-reduction arrays (name, dtype), widest first: each holds one slot per
    thread of the block."""
    arrays = []
    for a in nest.accumulators:
        arrays.append((f"{a.name}_sh", compute_dtype(a.dtype)))
        if a.indexed:
            arrays.append((f"{a.name}_i_sh", np.dtype(np.int64)))
    return sorted(arrays, key=lambda item: -item[1].itemsize)


def scratch_slots(threads: int) -> int:
    """Slots per tree-reduction array for a block of `threads` (nslot in the kernel)."""
    return (threads + 7) // 8 * 8


def shared_bytes(nest: LoopNest, threads: int, rows: int, cache_points: int) -> int:
    """Dynamic shared memory of a reduction launched with `threads` per block, `rows` (ntk) rows
    per block and `cache_points` (ncache) points of each row on chip: the tree reduction's
    arrays, then the cached rows. 0 for a pointwise kernel."""
    if nest.kind == "pointwise":
        return 0
    slot_bytes = sum(dtype.itemsize for _, dtype in scratch_arrays(nest))
    item_bytes = sum(nest.buffer(b).dtype.itemsize for b in nest.cached)
    return scratch_slots(threads) * slot_bytes + rows * cache_points * item_bytes


def _index_expr(*parts: ast.expr) -> ast.expr:
    """a * b + c for parts (a, b, c)."""
    return ast.BinOp(ast.BinOp(parts[0], ast.Mult(), parts[1]), ast.Add(), parts[2])


def _shared_array(size: int, dtype) -> ast.Call:
    return ast.Call(
        func=ast.Attribute(ast.Attribute(var("cuda"), "shared", ast.Load()), "array", ast.Load()),
        args=[ast.Constant(size), var(type_name(dtype))],
        keywords=[],
    )


def _reduction_ast(nest: LoopNest, params: list[str]) -> ast.FunctionDef:
    body = _Body(nest)
    threads = ("x", "y") if nest.schedule == "rows" else ("y", "x")  # (tr, tk)
    shared: list[ast.stmt] = []
    prelude: list[ast.stmt] = []
    # Every dynamic shared array starts at the same address: one per dtype, each part at its
    # offset in items of that dtype (see shared_bytes for the layout).
    scratch = scratch_arrays(nest)
    for dtype in dict.fromkeys([d for _, d in scratch] + [body.buffers[b] for b in nest.cached]):
        shared.append(assign(shared_name(dtype), _shared_array(0, dtype)))
    # The tree reduction's arrays: `nslot` slots each (the block's threads, rounded up to 8 so
    # that every part, in bytes, stays a multiple of 8 and the next one aligned).
    prelude.append(assign("nslot", ast.parse("(ntk * ntr + 7) // 8 * 8", mode="eval").body))
    slot_bytes = 0
    for name, dtype in scratch:
        k = slot_bytes // dtype.itemsize  # arrays of this width before it, in slots
        start = ast.BinOp(var("nslot"), ast.Mult(), ast.Constant(k)) if k else None
        stop = ast.BinOp(var("nslot"), ast.Mult(), ast.Constant(k + 1)) if k else var("nslot")
        prelude.append(assign(name, ast.Subscript(var(shared_name(dtype)), ast.Slice(start, stop), ast.Load())))
        slot_bytes += dtype.itemsize
    # Then the cached rows, widest dtype first, one buffer's rows after another's.
    widths_before = 0
    for b in nest.cached:
        dtype = body.buffers[b]
        after_scratch = ast.BinOp(
            ast.BinOp(var("nslot"), ast.FloorDiv(), ast.Constant(dtype.itemsize)), ast.Mult(), ast.Constant(slot_bytes)
        )
        scale = ast.Constant(widths_before // dtype.itemsize)  # rows before it, in its items
        row_cells = ast.BinOp(var("ncache"), ast.Mult(), var("ntk"))
        at = ast.BinOp(after_scratch, ast.Add(), ast.BinOp(row_cells, ast.Mult(), scale)) if widths_before else after_scratch
        prelude.append(assign(f"{b}_at", at))
        widths_before += dtype.itemsize
    if nest.split:
        prelude.extend(fill_body(templates.split_chunk))
    # A split block takes points start + tr, start + tr + ntr, ... of its chunk.
    start = ast.BinOp(var("start"), ast.Add(), var("tr")) if nest.split else var("tr")
    stop = var("stop" if nest.split else "nred")
    phases: list[ast.stmt] = []
    # Accumulators (and an indexed one's index) carry from point to point: never renamed.
    persistent = {a.name for a in nest.accumulators} | {f"{a.name}_i" for a in nest.accumulators if a.indexed}
    for k, phase in enumerate(nest.phases):
        body.phase = k
        parts = render_parts(body, phase.body)
        main = in_order(parts)
        unravel_inner = unravel("lin", nest.inner)
        # Only a pass that reads memory gains from more loads in flight: a cached row's later
        # passes read shared memory, a few cycles away (and unrolling costs compile time).
        reads_memory = any(isinstance(s, Load) and not (s.buffer in body.cache_of and k > body.first_phase[s.buffer])
                           for s in phase.body)
        # A scan's points run one after another, each reading the running value: not unrolled.
        reads_memory = reads_memory and not any(a.running for a in phase.accumulators)
        if not phase.accumulators:
            unrolled = unrolled_loop(parts, unravel_inner, "ntr", "nred", persistent, active=True) if reads_memory else []
            phases.extend(fill_body(templates.row_pass, UNRAVEL_INNER=unravel_inner, BODY=main,
                                    UNROLLED_LOOP=unrolled))
            continue
        unrolled = unrolled_loop(parts, unravel_inner, "ntr", stop, persistent, active=True) if reads_memory else []
        init, to_shared, tree, from_shared = [], [], [], []
        after = []  # statements after the row is combined
        # An online sum combines with its maximum's values, before the maximum's own update.
        for a in sorted(phase.accumulators, key=lambda a: not a.partner):
            identity = literal(np.asarray(a.identity).astype(compute_dtype(a.dtype))[()])
            init.append(assign(a.name, identity))
            sh, mine = f"{a.name}_sh", f"{a.name}_mine"
            to_shared.append(ast.Assign([subscript(sh, ("slot",), True)], var(a.name)))
            tree.append(assign(mine, subscript(sh, ("slot",))))
            tree.append(assign(f"{a.name}_theirs", ast.Subscript(var(sh), ast.BinOp(var("slot"), ast.Add(), var("half")), ast.Load())))
            theirs = var(f"{a.name}_theirs")
            head = ast.Subscript(var(sh), ast.BinOp(var("tk"), ast.Mult(), var("ntr")), ast.Load())
            from_shared.append(assign(a.name, head))
            if a.partner:
                # Work on copies: the maximum's slot is still its own until its update below.
                m_sh = f"{a.partner}_sh"
                pair = [
                    assign(f"{a.name}_pm", subscript(m_sh, ("slot",))),
                    assign(f"{a.name}_ps", subscript(sh, ("slot",))),
                ]
                theirs_m = ast.Subscript(var(m_sh), ast.BinOp(var("slot"), ast.Add(), var("half")), ast.Load())
                combine = body.online(a, f"{a.name}_pm", f"{a.name}_ps", theirs_m, theirs, f"{a.name}_tree_")
                tree.extend(pair + combine)
                tree.append(ast.Assign([subscript(sh, ("slot",), True)], var(f"{a.name}_ps")))
                # A row of -inf: NaN, as exp(-inf - -inf) gives in NumPy.
                minus_inf = ast.Compare(var(a.partner), [ast.Eq()], [literal(np.asarray(-np.inf, compute_dtype(a.dtype))[()])])
                nan = literal(np.asarray(np.nan, compute_dtype(a.dtype))[()])
                after.append(assign(a.name, ast.IfExp(minus_inf, nan, var(a.name))))
                continue
            if a.indexed:
                init.append(assign(f"{a.name}_i", literal(np.int64(NO_INDEX))))
                to_shared.append(ast.Assign([subscript(f"{a.name}_i_sh", ("slot",), True)], var(f"{a.name}_i")))
                tree.append(assign(f"{mine}_i", subscript(f"{a.name}_i_sh", ("slot",))))
                tree.append(assign(f"{a.name}_theirs_i", ast.Subscript(var(f"{a.name}_i_sh"), ast.BinOp(var("slot"), ast.Add(), var("half")), ast.Load())))
                theirs_i = var(f"{a.name}_theirs_i")
                tree.extend(body.combine(a, mine, theirs, f"{a.name}_tree_", f"{mine}_i", theirs_i))
                tree.append(ast.Assign([subscript(f"{a.name}_i_sh", ("slot",), True)], var(f"{mine}_i")))
                head_i = clone(head)
                head_i.value = var(f"{a.name}_i_sh")
                from_shared.append(assign(f"{a.name}_i", head_i))
            else:
                tree.extend(body.combine(a, mine, theirs, f"{a.name}_tree_"))
            tree.append(ast.Assign([subscript(sh, ("slot",), True)], var(mine)))
        rounding = after + ([] if nest.split else body.round_accumulators(phase.accumulators))
        phases.extend(fill_body(
            templates.reduce_phase, INIT=init, START=start, STOP=stop,
            UNRAVEL_INNER=unravel_inner, BODY=main, UNROLLED_LOOP=unrolled, TO_SHARED=to_shared, TREE=tree,
            FROM_SHARED=from_shared, ROUND=rounding,
        ))
    epilogue_prefix: list[ast.stmt] = []
    if nest.split:
        phases.extend(_split_finish(nest, body))
        epilogue_prefix = body.round_accumulators(nest.accumulators)
    return fill(
        templates.reduction,
        name=nest.name,
        params=params,
        SHARED=shared,
        TK=ast.Attribute(ast.Attribute(var("cuda"), "threadIdx", ast.Load()), threads[1], ast.Load()),
        TR=ast.Attribute(ast.Attribute(var("cuda"), "threadIdx", ast.Load()), threads[0], ast.Load()),
        NTK=ast.Attribute(ast.Attribute(var("cuda"), "blockDim", ast.Load()), threads[1], ast.Load()),
        NTR=ast.Attribute(ast.Attribute(var("cuda"), "blockDim", ast.Load()), threads[0], ast.Load()),
        CACHE=prelude,
        UNRAVEL_OUTER=unravel("row", nest.outer),
        PHASES=phases,
        EPILOGUE=epilogue_prefix + body.stmts(nest.epilogue),
    )


def _split_finish(nest: LoopNest, body: _Body) -> list[ast.stmt]:
    """Publish the block's partial results; the row's last block gathers them."""
    publish, init, gather = [], [], []
    slot = _index_expr(var("row"), var("nsplit"), var("chunk"))
    other = _index_expr(var("row"), var("nsplit"), var("c"))
    for a in nest.accumulators:
        names = [a.name] + ([f"{a.name}_i"] if a.indexed else [])
        for n in names:
            publish.append(ast.Assign([ast.Subscript(var(partial_name(n)), clone(slot), ast.Store())], var(n)))
        init.append(assign(a.name, literal(np.asarray(a.identity).astype(compute_dtype(a.dtype))[()])))
        theirs = ast.Subscript(var(partial_name(a.name)), clone(other), ast.Load())
        if a.indexed:
            init.append(assign(f"{a.name}_i", literal(np.int64(NO_INDEX))))
            theirs_i = ast.Subscript(var(partial_name(f"{a.name}_i")), clone(other), ast.Load())
            gather.extend(body.combine(a, a.name, theirs, f"{a.name}_gather_", f"{a.name}_i", theirs_i))
        else:
            gather.extend(body.combine(a, a.name, theirs, f"{a.name}_gather_"))
    return fill_body(templates.split_finish, PUBLISH=publish, INIT=init, GATHER=gather)


def _kernel_ast(nest: LoopNest, params: list[str]) -> ast.FunctionDef:
    if nest.kind == "pointwise":
        if nest.schedule == "2d":
            *rows, last = nest.outer
            return fill(templates.pointwise_2d, name=nest.name, params=params, UNRAVEL=unravel("row", tuple(rows)),
                        LAST=var(last.name), NLAST=var(last.param), BODY=_Body(nest).stmts(nest.body))
        parts = render_parts(_Body(nest), nest.body)
        point = unravel("lin", nest.outer)
        # One point in all (total is 1): no unrolled loop. Nor for a kernel of several parts:
        # each point branches to its part, so no load moves up across points.
        several = any(isinstance(s, Parts) for s in nest.body)
        unrolled = unrolled_loop(parts, point, "step", "total", set(), active=False) if nest.outer and not several else []
        return fill(templates.pointwise, name=nest.name, params=params, UNRAVEL=point,
                    BODY=in_order(parts), UNROLLED_LOOP=unrolled)
    return _reduction_ast(nest, params)


def render_code(nest: LoopNest, params, names: dict[str, str]) -> str:
    """The kernel module's code (no header), rendered afresh."""
    fn = Rename(names).visit(_kernel_ast(nest, [p.name for p in params]))
    imports = [
        ast.Import([ast.alias("math")]),
        ast.ImportFrom("numba", [ast.alias("cuda")], 0),
        ast.ImportFrom("numba.cuda.types", [ast.alias(t) for t in TYPE_NAMES], 0),
        ast.ImportFrom("numfuse.targets.cuda.products", [ast.alias("fma"), ast.alias("mul")], 0),
        ast.ImportFrom("numfuse.targets.cuda.bits", [ast.alias("float_bits"), ast.alias("float_from_bits")], 0),
    ]
    return ast.unparse(module(imports + [fn]))


_CODE = CodeCache()


def render(nest: LoopNest, header: str = "") -> KernelSource:
    """The kernel module's source. `header` becomes its leading comment block."""
    params, names = positional_names(kernel_params(nest))
    code = _CODE.get(code_key(nest, names), lambda: render_code(nest, params, names))
    return KernelSource(nest.name, with_header(code, header), params, nest.schedule)
