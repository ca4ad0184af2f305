"""What every target's renderer shares: a LoopNest's statements rendered as Python AST.

A target's renderer (targets/cuda/codegen.py; targets/cpu/codegen.py) builds the loops its schedule
needs and fills them with the statements rendered here: loads, stores, each operation inlined
from its scalar template (scalar_impl.py), accumulations, checks, guards and selects, every
literal typed with its dtype's constructor so float32 code stays float32. Kernel parameters are
named by their position in the code (`positional_names`), so kernels of one loop body over
other arrays share their code, and rendered code is kept by the loop nest it came from
(`CodeCache`).
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import re
from dataclasses import dataclass

import numpy as np

from ..ir import scalar_impl
from ..ir.dtypes import SUPPORTED, compute_dtype, part_dtype
from ..ir.graph import Literal
from ..loops.loopnest import (
    ERRORS_BUFFER, Accumulate, Accumulator, Check, Compute, Dim, Guard, Iota, Load, LoopNest, OnlineAccumulate, Parts, Select, Store, walk,
)
from ..ir.ops import ELEMENTWISE
from .pyast import assign, call, var
from .templates import clone, inline


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
        """What identifies the compiled kernel (targets/cuda/kernel_cache.py keys its dispatchers on
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


def index_item(i) -> ast.expr:
    if isinstance(i, int):
        return ast.Constant(i)
    if isinstance(i, str):
        return var(i)
    return ast.parse(str(i), mode="eval").body  # an indexing.Lin or DivMod, printed as Python


def _index(index, unsigned: bool = False) -> ast.expr:
    items = [index_item(i) for i in index]
    if unsigned:
        items = [item if isinstance(item, ast.Constant) else call("uint64", item) for item in items]
    return items[0] if len(items) == 1 else ast.Tuple(items, ast.Load())


def subscript(buffer: str, index, store: bool = False, unsigned: bool = False) -> ast.Subscript:
    return ast.Subscript(var(buffer), _index(index, unsigned), ast.Store() if store else ast.Load())


def buffer_subscript(buffer: str, index, store: bool = False) -> ast.Subscript:
    """An array argument at `index`. Every index numfuse computes is in range, never negative,
    so each is cast to uint64: Numba then skips the wraparound it adds for a signed index (a
    shift, an and and an add per axis, at every load and store)."""
    return subscript(buffer, index, store, unsigned=True)


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


def branch_tree(index, bounds, branches: list[list[ast.stmt]]) -> list[ast.stmt]:
    """`branches` behind a balanced tree of `index < bound` tests: branch k where index is
    below bounds[k] (and at least the bound before), the last one past every bound; n branches
    nest log2(n) deep (a Select's concatenated operands, a kernel's Parts)."""

    def tree(lo: int, hi: int) -> list[ast.stmt]:
        if hi - lo == 1:
            return branches[lo]
        mid = (lo + hi) // 2
        test = ast.Compare(index_item(index), [ast.Lt()], [index_item(bounds[mid - 1])])
        return [ast.If(test, tree(lo, mid), tree(mid, hi))]

    return tree(0, len(branches))


class StatementRenderer:
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
        self.phase = 0  # of a reduction: the phase being rendered
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
            added = self.product(value_sum, their_scale)
        stmts += pre
        total = ast.BinOp(self.product(var(sum_name), scale), ast.Add(), added)
        stmts.append(assign(sum_name, call(cd, total)))
        stmts.append(assign(max_name, var(f"{prefix}m")))
        return stmts

    def product(self, a: ast.expr, b: ast.expr) -> ast.expr:
        """`a * b` of two floats that the renderer writes itself (a target whose compiler would
        fuse it with a sum renders it otherwise)."""
        return ast.BinOp(a, ast.Mult(), b)

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
        return [assign(s.dst, buffer_subscript(s.buffer, s.index))]

    def iota(self, s: Iota) -> ast.stmt:
        self.types[s.dst] = np.dtype(np.int64)
        return assign(s.dst, call("int64", index_item(s.index)))

    def store(self, s: Store) -> ast.stmt:
        value = self.operand(s.src, self.buffers[s.buffer])
        return ast.Assign([buffer_subscript(s.buffer, s.index, True)], value)

    def select(self, s: Select) -> list[ast.stmt]:
        """The branches, each ending with dst = its value in dst's dtype (branch_tree)."""
        branches = []
        for body, src in s.branches:
            stmts = self.stmts(body)
            branches.append(stmts + [assign(s.dst, self.operand(src, s.dtype))])
        self.types[s.dst] = np.dtype(s.dtype)
        return branch_tree(s.index, s.bounds, branches)

    def parts(self, s: Parts) -> list[ast.stmt]:
        """Each part (branch_tree): its loop variables from the flat index minus its start,
        then its statements."""
        branches = []
        for k, part in enumerate(s.parts):
            local = f"p{k}_lin"
            offset = ast.BinOp(var(s.index), ast.Sub(), index_item(part.start)) if part.start != 0 else var(s.index)
            branches.append([assign(local, offset)] + unravel(local, part.dims) + self.stmts(part.body))
        return branch_tree(s.index, s.bounds, branches)

    def stmts(self, stmts) -> list[ast.stmt]:
        result: list[ast.stmt] = []
        for s in stmts:
            if isinstance(s, Load):
                result.extend(self.load(s))
            elif isinstance(s, Compute):
                result.extend(self.compute(s))
            elif isinstance(s, Iota):
                result.append(self.iota(s))
            elif isinstance(s, Store):
                result.append(self.store(s))
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
                record = ast.Assign([subscript(ERRORS_BUFFER, (0,), True)], literal(np.int32(s.code)))
                result.extend(stmts + [ast.If(failed, [record], [])])
            elif isinstance(s, Guard):
                tests = [ast.Compare(var(z), [ast.Eq()], [ast.Constant(0)]) for z in s.zero]
                test = tests[0] if len(tests) == 1 else ast.BoolOp(ast.And(), tests)
                result.append(ast.If(test, self.stmts(s.body) or [ast.Pass()], []))
            elif isinstance(s, Select):
                result.extend(self.select(s))
            elif isinstance(s, Parts):
                result.extend(self.parts(s))
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
    if source.kind == "f" and target.kind == "u":
        return _float_to_unsigned(expr, source, target)
    if source.kind == "f" and target.kind == "i" and target.itemsize < 4:
        # NumPy's C cast converts to int and keeps the low bits (55000.0 gives -10536 in int16);
        # a direct conversion is undefined out of range, and its vectorized form saturates.
        return call(type_name(target), call("int32", expr))
    return call(type_name(target), expr)


def _float_to_unsigned(expr: ast.expr, source: np.dtype, target: np.dtype) -> ast.expr:
    """A float cast to an unsigned dtype as NumPy's C loops cast, one element at a time, on
    x86-64 (a negative value wraps: -3.5 gives 2**32 - 3 in uint32), not as a direct unsigned
    conversion, which saturates on a GPU and on CPUs with AVX-512: uint8 and uint16 through
    int32, uint32 through int64, and uint64 through int64, the values from 2**63 on as the
    signed conversion of x - 2**63 with the top bit set again. Beyond the signed range used
    the cast is undefined in C, and NumPy's own loops (SIMD and scalar) give different values."""
    if target.itemsize < 4:
        return call(type_name(target), call("int32", expr))
    signed = call("int64", expr)
    if target == np.uint32:
        return call("uint32", signed)
    half = literal(source.type(2.0 ** 63))
    high = ast.BinOp(call("uint64", call("int64", ast.BinOp(clone(expr), ast.Sub(), half))), ast.BitXor(),
                     literal(np.uint64(1 << 63)))
    return ast.IfExp(ast.Compare(clone(expr), [ast.GtE()], [clone(half)]), high, call("uint64", signed))


def loaded_buffers(stmts) -> list[str]:
    return [s.buffer for s in walk(stmts) if isinstance(s, Load)]



def positional_names(params) -> tuple[tuple[KernelParam, ...], dict[str, str]]:
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


class Rename(ast.NodeTransformer):
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


def code_key(nest: LoopNest, names: dict[str, str]) -> str:
    """Everything of `nest` its code is made from: all its fields but its source lines and its
    sizes (kernel arguments: kernel_params), with buffers and scalars named as the code names
    them."""
    unsized = dataclasses.replace(
        nest, sources=(), compiled_for=(),  # (the prose of size choices: the choices are fields)
        buffers=tuple(dataclasses.replace(b, view=(0,) * len(b.view)) for b in nest.buffers),
        outer=tuple(dataclasses.replace(d, size=0) for d in nest.outer),
        inner=tuple(dataclasses.replace(d, size=0) for d in nest.inner),
        counts=tuple(dataclasses.replace(c, value=c.dtype.type(0)) for c in nest.counts),
    )
    if not names:
        return repr(unsized)
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")\b")
    return pattern.sub(lambda m: names[m.group(1)], repr(unsized))



class CodeCache:
    """Rendered code by the loop nest it is rendered from (with names by position, without the
    user's lines): the kernels of one loop body, traced once per iteration, are rendered once."""

    def __init__(self, entries: int = 4096):
        self.entries = entries
        self.codes: dict[str, str] = {}

    def get(self, key: str, render) -> str:
        code = self.codes.get(key)
        if code is None:
            code = render()
            if len(self.codes) >= self.entries:
                del self.codes[next(iter(self.codes))]
            self.codes[key] = code
        return code


def with_header(code: str, header: str) -> str:
    """A kernel module's source: `header` as its leading comment block, then its code."""
    comment = "\n".join(f"# {line}".rstrip() for line in header.splitlines())
    return (comment + "\n" if comment else "") + code + "\n"
