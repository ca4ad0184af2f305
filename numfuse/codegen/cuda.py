"""The CUDA renderer: a LoopNest becomes the source of a module holding one Numba CUDA kernel.

The kernel is a plain Python function (the module does not call `cuda.jit`; the runtime does,
and compile checks call `cuda.compile_ptx` on it). Its statements are built as AST: the loop
structure from cuda_templates.py, each operation inlined from its scalar template, every literal
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
import dataclasses
import hashlib
import re
from dataclasses import dataclass

import numpy as np

from .. import scalar_impl
from ..dtypes import SUPPORTED, compute_dtype, part_dtype, short_name
from ..ir import Literal
from ..loopnest import (
    ERRORS_BUFFER,
    Accumulate,
    Accumulator,
    Check,
    Compute,
    Dim,
    Guard,
    Load,
    LoopNest,
    OnlineAccumulate,
    Select,
    Store,
    walk,
)
from ..ops import ELEMENTWISE, NO_INDEX
from . import cuda_templates
from .pyast import assign, call, var
from .templates import clone, fill, fill_body, inline, module
from .unroll import in_order, render_parts, unrolled_loop

def type_name(dtype) -> str:
    """The Numba type constructor for a dtype: float32, int64, boolean, ..."""
    dtype = np.dtype(dtype)
    return "boolean" if dtype.kind == "b" else dtype.name


TYPE_NAMES = tuple(type_name(d) for d in SUPPORTED)


@dataclass(frozen=True)
class KernelParam:
    """One kernel argument: a buffer, a runtime scalar, a loop size or a count (`value`)."""

    name: str
    kind: str  # "buffer" | "scalar" | "size" | "count" | "cache_points" | "partial" | "counter"
    value: int = 0  # a size (int), or a count (a NumPy scalar of dtype)
    dtype: np.dtype | None = None  # of a count, or of a split kernel's partial results
    # Its name in the generated code, where that is not `name` (a buffer or scalar: by its
    # position, so that kernels of one loop body over other arrays are one compiled kernel).
    code_name: str = ""


@dataclass(frozen=True)
class KernelSource:
    name: str
    source: str
    params: tuple[KernelParam, ...]
    schedule: str

    @property
    def code_digest(self) -> str:
        """What identifies the compiled kernel (runtime/kernel_cache.py keys its dispatchers on
        it): the digest of the code without the header comment, which names the user's lines
        and the loop nest with its sizes."""
        return source_digest(kernel_code(self.source))


def source_digest(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def kernel_code(source: str) -> str:
    """The source without its header comment: kernels that differ only in the user lines the
    header names share one compiled dispatcher."""
    lines = source.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if not line.startswith("#")), len(lines))
    return "".join(lines[start:])


def _float_constant(f: float) -> ast.expr:
    """A Python float as source: 0.5, math.inf, -math.inf, math.nan."""
    if np.isnan(f):
        return ast.Attribute(var("math"), "nan", ast.Load())
    if np.isinf(f):
        inner = ast.Attribute(var("math"), "inf", ast.Load())
        return ast.UnaryOp(ast.USub(), inner) if f < 0 else inner
    return ast.Constant(f)


def literal(value) -> ast.expr:
    """A typed constant: float32(0.5), int64(3), True, float32(math.inf),
    complex64(complex(1.0, -2.0))."""
    value = np.asarray(value)[()]
    dtype = np.asarray(value).dtype
    if dtype.kind == "b":
        return ast.Constant(bool(value))
    if dtype.kind == "f":
        return call(type_name(dtype), _float_constant(float(value)))
    if dtype.kind == "c":
        # complex() of two Python floats is a complex128 constant; the cast of a constant folds,
        # so a complex64 kernel holds complex64 constants.
        parts = call("complex", _float_constant(float(value.real)), _float_constant(float(value.imag)))
        return call(type_name(dtype), parts)
    return call(type_name(dtype), ast.Constant(int(value)))


def _index_item(i) -> ast.expr:
    if isinstance(i, int):
        return ast.Constant(i)
    if isinstance(i, str):
        return var(i)
    return ast.parse(str(i), mode="eval").body  # an indexing.Lin or DivMod, printed as Python


def _index(index, unsigned: bool = False) -> ast.expr:
    items = [_index_item(i) for i in index]
    if unsigned:
        items = [item if isinstance(item, ast.Constant) else call("uint64", item) for item in items]
    return items[0] if len(items) == 1 else ast.Tuple(items, ast.Load())


def _subscript(buffer: str, index, store: bool = False, unsigned: bool = False) -> ast.Subscript:
    return ast.Subscript(var(buffer), _index(index, unsigned), ast.Store() if store else ast.Load())


def _buffer_subscript(buffer: str, index, store: bool = False) -> ast.Subscript:
    """An array argument at `index`. Every index numfuse computes is in range, never negative,
    so each is cast to uint64: Numba then skips the wraparound it adds for a signed index (a
    shift, an and and an add per axis, at every load and store)."""
    return _subscript(buffer, index, store, unsigned=True)


def unravel(linear: str, dims: tuple[Dim, ...]) -> list[ast.stmt]:
    """Loop variables of `dims` (row-major, last fastest) from one linear index."""
    if not dims:
        return []
    stmts = []
    rest = linear
    for k, dim in enumerate(reversed(dims[1:])):
        stmts.append(assign(dim.name, ast.BinOp(var(rest), ast.Mod(), var(dim.param))))
        quotient = f"{linear}_q{k}"
        stmts.append(assign(quotient, ast.BinOp(var(rest), ast.FloorDiv(), var(dim.param))))
        rest = quotient
    stmts.append(assign(dims[0].name, var(rest)))
    return stmts


class _Body:
    """Statements of a LoopNest rendered as Python AST.

    Tracks the type each kernel variable holds, which differs from the IR's dtype in one case:
    float16 values are computed in float32 (compute_dtype) and rounded to float16 after each
    operation, as NumPy's half-precision loops do; float16 accumulators stay float32 until the
    epilogue rounds them."""

    def __init__(self, nest: LoopNest):
        self.accumulators = {a.name: a for a in nest.accumulators}
        self.types: dict[str, np.dtype] = {s.name: s.dtype for s in nest.scalars}
        self.types.update({c.name: c.dtype for c in nest.counts})
        self.types.update({a.name: compute_dtype(a.dtype) for a in nest.accumulators})
        self.types.update({f"{a.name}_i": np.dtype(np.int64) for a in nest.accumulators if a.indexed})
        self.buffers = {b.name: b.dtype for b in nest.buffers}
        self.renamed: dict[str, str] = {}
        # Cached buffers: the phase that loads them from memory (and fills the cache), and
        # the shared-memory array and offset variable their rows live at.
        self.phase = 0
        self.first_phase: dict[str, int] = {}
        for k, phase in enumerate(nest.phases):
            for b in _loaded_buffers(phase.body):
                if b in nest.cached:
                    self.first_phase.setdefault(b, k)
        self.cache_of = {b: (shared_name(self.buffers[b]), f"{b}_at") for b in nest.cached}
        self.schedule = nest.schedule

    def operand(self, op, dtype=None) -> ast.expr:
        """An operand as an expression, converted to `dtype` if given."""
        if isinstance(op, Literal):
            value = op.value if dtype is None else np.asarray(op.value).astype(dtype)[()]
            return literal(value)
        name = self.renamed.get(op, op)
        expr = var(name)
        return expr if dtype is None else convert(expr, self.types[name], np.dtype(dtype))

    def apply(self, fn, args: list[ast.expr], type_dtype, out_dtype, prefix: str) -> tuple[list, ast.expr]:
        """Inline scalar template `fn`, casting its value to `out_dtype` (bools need no cast)."""
        stmts, expr = inline(fn, args, type_name(type_dtype), prefix, type_name(part_dtype(type_dtype)))
        if np.dtype(out_dtype).kind != "b":
            expr = call(type_name(out_dtype), expr)
        return stmts, expr

    def compute(self, s: Compute) -> list[ast.stmt]:
        self.types[s.dst] = s.dtype
        if s.op == "convert":
            return [assign(s.dst, self.operand(s.args[0], s.dtype))]
        cd = compute_dtype(s.type_dtype)
        # Operands of the loop dtype are computed in its compute dtype; others (where's mask)
        # stay as they are.
        args = [
            self.operand(a, cd if self._dtype(a) == s.type_dtype else None) for a in s.args
        ]
        template = ELEMENTWISE[s.op].template(cd)
        assert template is not None, (s.op, s.type_dtype)
        stmts, expr = self.apply(template, args, cd, s.dtype, f"{s.dst}_")
        return stmts + [assign(s.dst, expr)]

    def _dtype(self, op) -> np.dtype:
        if isinstance(op, Literal):
            return op.aval.dtype
        return self.types[self.renamed.get(op, op)]

    def combine(self, acc: Accumulator, left: str, right: ast.expr, prefix: str,
                left_index: str = "", right_index: ast.expr | None = None) -> list[ast.stmt]:
        """Statements that combine `right` (with its index, for argmax and argmin) into the
        variable `left`."""
        cd = compute_dtype(acc.dtype)
        if not acc.indexed:
            template = ELEMENTWISE[acc.combine].template(cd)
            pre, expr = self.apply(template, [var(left), right], cd, cd, prefix)
            return pre + [assign(left, expr)]
        pick_fn = scalar_impl.argmax_pick if acc.combine == "argmax" else scalar_impl.argmin_pick
        # Operands are evaluated once, into names, before the pick reads them twice.
        pre = [assign(f"{prefix}v", right), assign(f"{prefix}j", right_index)]
        args = [var(left), var(left_index), var(f"{prefix}v"), var(f"{prefix}j")]
        stmts, picked = inline(pick_fn, args, type_name(cd), prefix)
        pick = f"{prefix}pick"
        choose = [
            assign(left_index, ast.IfExp(var(pick), var(f"{prefix}j"), var(left_index))),
            assign(left, ast.IfExp(var(pick), var(f"{prefix}v"), var(left))),
        ]
        return pre + stmts + [assign(pick, picked)] + choose

    def online(self, acc: Accumulator, max_name: str, sum_name: str, value: ast.expr,
               value_sum: ast.expr | None, prefix: str) -> list[ast.stmt]:
        """Fold (value, value_sum) into the online (max, sum) pair of accumulator `acc` held by
        the variables max_name and sum_name; value_sum None: one point, whose term is
        exp(value - max)."""
        cd = type_name(compute_dtype(acc.dtype))
        maximum = ELEMENTWISE["maximum"].template(compute_dtype(acc.dtype))
        stmts = [assign(f"{prefix}v", value)]
        pre, new_max = inline(maximum, [var(max_name), var(f"{prefix}v")], cd, f"{prefix}max_")
        stmts += pre + [assign(f"{prefix}m", new_max)]
        pre, scale = inline(scalar_impl.online_scale, [var(max_name), var(f"{prefix}m")], cd, f"{prefix}s_")
        stmts += pre
        if value_sum is None:
            pre, added = inline(scalar_impl.online_term, [var(f"{prefix}v"), var(f"{prefix}m")], cd, f"{prefix}t_")
        else:
            pre, their_scale = inline(scalar_impl.online_scale, [var(f"{prefix}v"), var(f"{prefix}m")], cd, f"{prefix}u_")
            added = ast.BinOp(value_sum, ast.Mult(), their_scale)
        stmts += pre
        total = ast.BinOp(ast.BinOp(var(sum_name), ast.Mult(), scale), ast.Add(), added)
        stmts.append(assign(sum_name, call(cd, total)))
        stmts.append(assign(max_name, var(f"{prefix}m")))
        return stmts

    def round_accumulators(self, accumulators) -> list[ast.stmt]:
        """After a reduction phase: accumulators computed wider than their dtype are rounded to
        it, and later statements read the rounded value."""
        stmts = []
        for a in accumulators:
            if compute_dtype(a.dtype) != a.dtype and not a.indexed:
                rounded = f"{a.name}_r"
                stmts.append(assign(rounded, convert(var(a.name), compute_dtype(a.dtype), a.dtype)))
                self.types[rounded] = a.dtype
                self.renamed[a.name] = rounded
        return stmts

    def load(self, s: Load) -> list[ast.stmt]:
        self.types[s.dst] = self.buffers[s.buffer]
        if s.buffer not in self.cache_of:
            return [assign(s.dst, _buffer_subscript(s.buffer, s.index))]
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
            return [assign(s.dst, ast.IfExp(on_chip, cell, _buffer_subscript(s.buffer, s.index)))]
        store = ast.Subscript(var(array), clone(slot), ast.Store())
        keep = ast.If(on_chip, [ast.Assign([store], var(s.dst))], [])
        return [assign(s.dst, _buffer_subscript(s.buffer, s.index)), keep]

    def select(self, s: Select) -> list[ast.stmt]:
        """The branches, each ending with dst = its value in dst's dtype, behind a balanced
        tree of `index < bound` tests (a concatenation of many arrays nests log2(n) deep)."""
        branches = []
        for body, src in s.branches:
            stmts = self.stmts(body)
            branches.append(stmts + [assign(s.dst, self.operand(src, s.dtype))])
        self.types[s.dst] = np.dtype(s.dtype)

        def tree(lo: int, hi: int) -> list[ast.stmt]:
            if hi - lo == 1:
                return branches[lo]
            mid = (lo + hi) // 2
            test = ast.Compare(_index_item(s.index), [ast.Lt()], [_index_item(s.bounds[mid - 1])])
            return [ast.If(test, tree(lo, mid), tree(mid, hi))]

        return tree(0, len(branches))

    def stmts(self, stmts) -> list[ast.stmt]:
        result: list[ast.stmt] = []
        for s in stmts:
            if isinstance(s, Load):
                result.extend(self.load(s))
            elif isinstance(s, Compute):
                result.extend(self.compute(s))
            elif isinstance(s, Store):
                value = self.operand(s.src, self.buffers[s.buffer])
                result.append(ast.Assign([_buffer_subscript(s.buffer, s.index, True)], value))
            elif isinstance(s, Accumulate):
                acc = self.accumulators[s.acc]
                src = self.operand(s.src, compute_dtype(acc.dtype))
                result.extend(self.combine(acc, s.acc, src, f"{s.acc}_", f"{s.acc}_i", var("lin")))
            elif isinstance(s, OnlineAccumulate):
                acc = self.accumulators[s.max_acc]
                src = self.operand(s.src, compute_dtype(acc.dtype))
                result.extend(self.online(acc, s.max_acc, s.sum_acc, src, None, f"{s.sum_acc}_"))
            elif isinstance(s, Check):
                cd = compute_dtype(s.type_dtype)
                args = [self.operand(a, cd if self._dtype(a) == s.type_dtype else None) for a in s.args]
                check = ELEMENTWISE[s.op].check(s.type_dtype)
                stmts, failed = inline(check.template, args, type_name(cd), f"check{s.code}_")
                record = ast.Assign([_subscript(ERRORS_BUFFER, (0,), True)], literal(np.int32(s.code)))
                result.extend(stmts + [ast.If(failed, [record], [])])
            elif isinstance(s, Guard):
                tests = [ast.Compare(var(z), [ast.Eq()], [ast.Constant(0)]) for z in s.zero]
                test = tests[0] if len(tests) == 1 else ast.BoolOp(ast.And(), tests)
                result.append(ast.If(test, self.stmts(s.body) or [ast.Pass()], []))
            elif isinstance(s, Select):
                result.extend(self.select(s))
            else:
                raise TypeError(s)
        return result


def convert(expr: ast.expr, source: np.dtype, target: np.dtype) -> ast.expr:
    """`expr` of dtype `source` cast to `target` as NumPy casts (C casts; to bool: != 0)."""
    source, target = np.dtype(source), np.dtype(target)
    if source == target:
        return expr
    if target.kind == "b":
        cd = compute_dtype(source)
        stmts, value = inline(scalar_impl.to_bool, [convert(expr, source, cd)], type_name(cd), "unused_")
        assert not stmts
        return value
    if source.kind == "c" and target.kind != "c":
        # NumPy casts complex to a real dtype through its real part (astype warns at trace time).
        expr, source = ast.Attribute(expr, "real", ast.Load()), part_dtype(source)
        if source == target:
            return expr
    if source == np.float16 and target.kind != "f":
        # Numba rounds float16 to integers to nearest; C truncates: go through float32 (and to
        # complex too, as float16 is computed in float32 everywhere else).
        expr, source = call("float32", expr), np.dtype(np.float32)
    if source.kind == "b" and target == np.float16:
        expr = call("float32", expr)
    return call(type_name(target), expr)


def _loaded_buffers(stmts) -> list[str]:
    return [s.buffer for s in walk(stmts) if isinstance(s, Load)]


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
        prelude.extend(fill_body(cuda_templates.split_chunk))
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
        if not phase.accumulators:
            unrolled = unrolled_loop(parts, unravel_inner, "ntr", "nred", persistent, active=True) if reads_memory else []
            phases.extend(fill_body(cuda_templates.row_pass, UNRAVEL_INNER=unravel_inner, BODY=main,
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
            to_shared.append(ast.Assign([_subscript(sh, ("slot",), True)], var(a.name)))
            tree.append(assign(mine, _subscript(sh, ("slot",))))
            tree.append(assign(f"{a.name}_theirs", ast.Subscript(var(sh), ast.BinOp(var("slot"), ast.Add(), var("half")), ast.Load())))
            theirs = var(f"{a.name}_theirs")
            head = ast.Subscript(var(sh), ast.BinOp(var("tk"), ast.Mult(), var("ntr")), ast.Load())
            from_shared.append(assign(a.name, head))
            if a.partner:
                # Work on copies: the maximum's slot is still its own until its update below.
                m_sh = f"{a.partner}_sh"
                pair = [
                    assign(f"{a.name}_pm", _subscript(m_sh, ("slot",))),
                    assign(f"{a.name}_ps", _subscript(sh, ("slot",))),
                ]
                theirs_m = ast.Subscript(var(m_sh), ast.BinOp(var("slot"), ast.Add(), var("half")), ast.Load())
                combine = body.online(a, f"{a.name}_pm", f"{a.name}_ps", theirs_m, theirs, f"{a.name}_tree_")
                tree.extend(pair + combine)
                tree.append(ast.Assign([_subscript(sh, ("slot",), True)], var(f"{a.name}_ps")))
                # A row of -inf: NaN, as exp(-inf - -inf) gives in NumPy.
                minus_inf = ast.Compare(var(a.partner), [ast.Eq()], [literal(np.asarray(-np.inf, compute_dtype(a.dtype))[()])])
                nan = literal(np.asarray(np.nan, compute_dtype(a.dtype))[()])
                after.append(assign(a.name, ast.IfExp(minus_inf, nan, var(a.name))))
                continue
            if a.indexed:
                init.append(assign(f"{a.name}_i", literal(np.int64(NO_INDEX))))
                to_shared.append(ast.Assign([_subscript(f"{a.name}_i_sh", ("slot",), True)], var(f"{a.name}_i")))
                tree.append(assign(f"{mine}_i", _subscript(f"{a.name}_i_sh", ("slot",))))
                tree.append(assign(f"{a.name}_theirs_i", ast.Subscript(var(f"{a.name}_i_sh"), ast.BinOp(var("slot"), ast.Add(), var("half")), ast.Load())))
                theirs_i = var(f"{a.name}_theirs_i")
                tree.extend(body.combine(a, mine, theirs, f"{a.name}_tree_", f"{mine}_i", theirs_i))
                tree.append(ast.Assign([_subscript(f"{a.name}_i_sh", ("slot",), True)], var(f"{mine}_i")))
                head_i = clone(head)
                head_i.value = var(f"{a.name}_i_sh")
                from_shared.append(assign(f"{a.name}_i", head_i))
            else:
                tree.extend(body.combine(a, mine, theirs, f"{a.name}_tree_"))
            tree.append(ast.Assign([_subscript(sh, ("slot",), True)], var(mine)))
        rounding = after + ([] if nest.split else body.round_accumulators(phase.accumulators))
        phases.extend(fill_body(
            cuda_templates.reduce_phase, INIT=init, START=start, STOP=stop,
            UNRAVEL_INNER=unravel_inner, BODY=main, UNROLLED_LOOP=unrolled, TO_SHARED=to_shared, TREE=tree,
            FROM_SHARED=from_shared, ROUND=rounding,
        ))
    epilogue_prefix: list[ast.stmt] = []
    if nest.split:
        phases.extend(_split_finish(nest, body))
        epilogue_prefix = body.round_accumulators(nest.accumulators)
    return fill(
        cuda_templates.reduction,
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
    return fill_body(cuda_templates.split_finish, PUBLISH=publish, INIT=init, GATHER=gather)


def _kernel_ast(nest: LoopNest, params: list[str]) -> ast.FunctionDef:
    if nest.kind == "pointwise":
        if nest.schedule == "2d":
            *rows, last = nest.outer
            return fill(cuda_templates.pointwise_2d, name=nest.name, params=params, UNRAVEL=unravel("row", tuple(rows)),
                        LAST=var(last.name), NLAST=var(last.param), BODY=_Body(nest).stmts(nest.body))
        parts = render_parts(_Body(nest), nest.body)
        point = unravel("lin", nest.outer)
        # One point in all (total is 1): no unrolled loop.
        unrolled = unrolled_loop(parts, point, "step", "total", set(), active=False) if nest.outer else []
        return fill(cuda_templates.pointwise, name=nest.name, params=params, UNRAVEL=point,
                    BODY=in_order(parts), UNROLLED_LOOP=unrolled)
    return _reduction_ast(nest, params)


def render_code(nest: LoopNest, params, names: dict[str, str]) -> str:
    """The kernel module's code (no header), rendered afresh."""
    fn = _Rename(names).visit(_kernel_ast(nest, [p.name for p in params]))
    imports = [
        ast.Import([ast.alias("math")]),
        ast.ImportFrom("numba", [ast.alias("cuda")], 0),
        ast.ImportFrom("numba.cuda.types", [ast.alias(t) for t in TYPE_NAMES], 0),
    ]
    return ast.unparse(module(imports + [fn]))


def _positional_names(params) -> tuple[tuple[KernelParam, ...], dict[str, str]]:
    """Buffers and scalars named by their position in the code (in0, out1, s0): the names of
    the graph's values they hold differ between loop iterations and segments whose code is the
    same. The loop nest printed in the header keeps the graph's names."""
    renamed, names, counts = [], {}, {}
    for p in params:
        if p.kind in ("buffer", "scalar") and p.name != ERRORS_BUFFER:
            prefix = p.name.split("_", 1)[0] if p.kind == "buffer" else "s"
            counts[prefix] = counts.get(prefix, -1) + 1
            names[p.name] = f"{prefix}{counts[prefix]}"
            p = KernelParam(p.name, p.kind, p.value, p.dtype, names[p.name])
        renamed.append(p)
    return tuple(renamed), names


class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]):
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.names:
            node.id = self.names[node.id]
        return node

    def visit_arg(self, node: ast.arg) -> ast.arg:
        if node.arg in self.names:
            node.arg = self.names[node.arg]
        return node


# Rendered code by the loop nest it is rendered from (with names by position, without the user's
# lines): the kernels of one loop body, traced once per iteration, are rendered once.
_CODE: dict[str, str] = {}
_CODE_ENTRIES = 4096


def _code_key(nest: LoopNest, names: dict[str, str]) -> str:
    """Everything of `nest` its code is made from: all its fields but its source lines and its
    sizes (kernel arguments: kernel_params), with buffers and scalars named as the code names
    them."""
    unsized = dataclasses.replace(
        nest, sources=(),
        buffers=tuple(dataclasses.replace(b, view=(0,) * len(b.view)) for b in nest.buffers),
        outer=tuple(dataclasses.replace(d, size=0) for d in nest.outer),
        inner=tuple(dataclasses.replace(d, size=0) for d in nest.inner),
        counts=tuple(dataclasses.replace(c, value=c.dtype.type(0)) for c in nest.counts),
    )
    if not names:
        return repr(unsized)
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")\b")
    return pattern.sub(lambda m: names[m.group(1)], repr(unsized))


def render(nest: LoopNest, header: str = "") -> KernelSource:
    """The kernel module's source. `header` becomes its leading comment block."""
    params, names = _positional_names(kernel_params(nest))
    key = _code_key(nest, names)
    code = _CODE.get(key)
    if code is None:
        code = render_code(nest, params, names)
        if len(_CODE) >= _CODE_ENTRIES:
            del _CODE[next(iter(_CODE))]
        _CODE[key] = code
    comment = "\n".join(f"# {line}".rstrip() for line in header.splitlines())
    source = (comment + "\n" if comment else "") + code + "\n"
    return KernelSource(nest.name, source, params, nest.schedule)
