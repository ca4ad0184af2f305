"""The CUDA renderer: a LoopNest becomes the source of a module holding one Numba CUDA kernel.

The kernel is a plain Python function (the module does not call `cuda.jit`; the runtime does,
and compile checks call `cuda.compile_ptx` on it). Its statements are built as AST: the loop
structure from cuda_templates.py, each operation inlined from its scalar template, every literal
typed with its dtype's constructor so float32 kernels stay float32.

Schedules (LoopNest.schedule):
- flat: a grid-stride loop over all points of a pointwise kernel;
- block_per_row: a block per output point, threads striding over the reduced points, then a
  shared-memory tree reduction (it also runs on the simulator, which has no warp shuffles);
- thread_per_row: a thread per output point, looping over the reduced points.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import numpy as np

from .. import scalar_impl
from ..dtypes import SUPPORTED, compute_dtype
from ..ir import Literal
from ..loopnest import ERRORS_BUFFER, Accumulate, Check, Compute, Dim, Guard, Load, LoopNest, Store
from ..ops import ELEMENTWISE
from . import cuda_templates
from .templates import fill, inline, module

# Shared-memory arrays are sized for the largest block a launch may use.
MAX_THREADS = 256


def type_name(dtype) -> str:
    """The Numba type constructor for a dtype: float32, int64, boolean, ..."""
    dtype = np.dtype(dtype)
    return "boolean" if dtype.kind == "b" else dtype.name


TYPE_NAMES = tuple(type_name(d) for d in SUPPORTED)


@dataclass(frozen=True)
class KernelParam:
    """One kernel argument: a buffer, a runtime scalar, or a loop size (`value`)."""

    name: str
    kind: str  # "buffer" | "scalar" | "size"
    value: int = 0


@dataclass(frozen=True)
class KernelSource:
    name: str
    source: str
    params: tuple[KernelParam, ...]
    schedule: str


def _name(id_: str, store: bool = False) -> ast.Name:
    return ast.Name(id_, ast.Store() if store else ast.Load())


def _assign(target: str, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[_name(target, True)], value=value)


def _call(func: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=_name(func), args=list(args), keywords=[])


def _attr_call(obj: str, attr: str, *args: ast.expr) -> ast.Call:
    func = ast.Attribute(value=_name(obj), attr=attr, ctx=ast.Load())
    return ast.Call(func=func, args=list(args), keywords=[])


def literal(value) -> ast.expr:
    """A typed constant: float32(0.5), int64(3), True, float32(math.inf)."""
    value = np.asarray(value)[()]
    dtype = np.asarray(value).dtype
    if dtype.kind == "b":
        return ast.Constant(bool(value))
    if dtype.kind == "f":
        f = float(value)
        if np.isnan(f):
            inner: ast.expr = ast.Attribute(_name("math"), "nan", ast.Load())
        elif np.isinf(f):
            inner = ast.Attribute(_name("math"), "inf", ast.Load())
            if f < 0:
                inner = ast.UnaryOp(ast.USub(), inner)
        else:
            inner = ast.Constant(f)
        return _call(type_name(dtype), inner)
    return _call(type_name(dtype), ast.Constant(int(value)))


def _index(index) -> ast.expr:
    items = [ast.Constant(i) if isinstance(i, int) else _name(i) for i in index]
    return items[0] if len(items) == 1 else ast.Tuple(items, ast.Load())


def _subscript(buffer: str, index, store: bool = False) -> ast.Subscript:
    return ast.Subscript(_name(buffer), _index(index), ast.Store() if store else ast.Load())


def unravel(linear: str, dims: tuple[Dim, ...]) -> list[ast.stmt]:
    """Loop variables of `dims` (row-major, last fastest) from one linear index."""
    if not dims:
        return []
    stmts = []
    rest = linear
    for k, dim in enumerate(reversed(dims[1:])):
        stmts.append(_assign(dim.name, ast.BinOp(_name(rest), ast.Mod(), _name(dim.param))))
        quotient = f"{linear}_q{k}"
        stmts.append(_assign(quotient, ast.BinOp(_name(rest), ast.FloorDiv(), _name(dim.param))))
        rest = quotient
    stmts.append(_assign(dims[0].name, _name(rest)))
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
        self.types.update({a.name: compute_dtype(a.dtype) for a in nest.accumulators})
        self.buffers = {b.name: b.dtype for b in nest.buffers}
        self.renamed: dict[str, str] = {}

    def operand(self, op, dtype=None) -> ast.expr:
        """An operand as an expression, converted to `dtype` if given."""
        if isinstance(op, Literal):
            value = op.value if dtype is None else np.asarray(op.value).astype(dtype)[()]
            return literal(value)
        name = self.renamed.get(op, op)
        expr = _name(name)
        return expr if dtype is None else convert(expr, self.types[name], np.dtype(dtype))

    def apply(self, fn, args: list[ast.expr], type_dtype, out_dtype, prefix: str) -> tuple[list, ast.expr]:
        """Inline scalar template `fn`, casting its value to `out_dtype` (bools need no cast)."""
        stmts, expr = inline(fn, args, type_name(type_dtype), prefix)
        if np.dtype(out_dtype).kind != "b":
            expr = _call(type_name(out_dtype), expr)
        return stmts, expr

    def compute(self, s: Compute) -> list[ast.stmt]:
        self.types[s.dst] = s.dtype
        if s.op == "convert":
            return [_assign(s.dst, self.operand(s.args[0], s.dtype))]
        cd = compute_dtype(s.type_dtype)
        # Operands of the loop dtype are computed in its compute dtype; others (where's mask)
        # stay as they are.
        args = [
            self.operand(a, cd if self._dtype(a) == s.type_dtype else None) for a in s.args
        ]
        template = ELEMENTWISE[s.op].template(cd)
        assert template is not None, (s.op, s.type_dtype)
        stmts, expr = self.apply(template, args, cd, s.dtype, f"{s.dst}_")
        return stmts + [_assign(s.dst, expr)]

    def _dtype(self, op) -> np.dtype:
        if isinstance(op, Literal):
            return op.aval.dtype
        return self.types[self.renamed.get(op, op)]

    def combine(self, acc_name: str, left: ast.expr, right: ast.expr, prefix: str) -> tuple[list, ast.expr]:
        cd = compute_dtype(self.accumulators[acc_name].dtype)
        template = ELEMENTWISE[self.accumulators[acc_name].combine].template(cd)
        return self.apply(template, [left, right], cd, cd, prefix)

    def round_accumulators(self) -> list[ast.stmt]:
        """Before the epilogue: accumulators computed wider than their dtype are rounded."""
        stmts = []
        for a in self.accumulators.values():
            if compute_dtype(a.dtype) != a.dtype:
                rounded = f"{a.name}_r"
                stmts.append(_assign(rounded, convert(_name(a.name), compute_dtype(a.dtype), a.dtype)))
                self.types[rounded] = a.dtype
                self.renamed[a.name] = rounded
        return stmts

    def stmts(self, stmts) -> list[ast.stmt]:
        result: list[ast.stmt] = []
        for s in stmts:
            if isinstance(s, Load):
                self.types[s.dst] = self.buffers[s.buffer]
                result.append(_assign(s.dst, _subscript(s.buffer, s.index)))
            elif isinstance(s, Compute):
                result.extend(self.compute(s))
            elif isinstance(s, Store):
                value = self.operand(s.src, self.buffers[s.buffer])
                result.append(ast.Assign([_subscript(s.buffer, s.index, True)], value))
            elif isinstance(s, Accumulate):
                cd = self.types[s.acc]
                pre, expr = self.combine(s.acc, _name(s.acc), self.operand(s.src, cd), f"{s.acc}_")
                result.extend(pre + [_assign(s.acc, expr)])
            elif isinstance(s, Check):
                cd = compute_dtype(s.type_dtype)
                args = [self.operand(a, cd if self._dtype(a) == s.type_dtype else None) for a in s.args]
                check = ELEMENTWISE[s.op].check(s.type_dtype)
                stmts, failed = inline(check.template, args, type_name(cd), f"check{s.code}_")
                record = ast.Assign([_subscript(ERRORS_BUFFER, (0,), True)], literal(np.int32(s.code)))
                result.extend(stmts + [ast.If(failed, [record], [])])
            elif isinstance(s, Guard):
                tests = [ast.Compare(_name(z), [ast.Eq()], [ast.Constant(0)]) for z in s.zero]
                test = tests[0] if len(tests) == 1 else ast.BoolOp(ast.And(), tests)
                result.append(ast.If(test, self.stmts(s.body) or [ast.Pass()], []))
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
    if source == np.float16 and target.kind != "f":
        # Numba rounds float16 to integers to nearest; C truncates: go through float32.
        expr, source = _call("float32", expr), np.dtype(np.float32)
    if source.kind == "b" and target == np.float16:
        expr = _call("float32", expr)
    return _call(type_name(target), expr)


def kernel_params(nest: LoopNest) -> tuple[KernelParam, ...]:
    params = [KernelParam(b.name, "buffer") for b in nest.buffers]
    params += [KernelParam(s.name, "scalar") for s in nest.scalars]
    params += [KernelParam(d.param, "size", d.size) for d in nest.outer + nest.inner]
    if nest.kind == "pointwise":
        params.append(KernelParam("total", "size", nest.outer_size))
    else:
        params.append(KernelParam("nrows", "size", nest.outer_size))
        params.append(KernelParam("nred", "size", nest.inner_size))
    return tuple(params)


def _kernel_ast(nest: LoopNest, params: list[str]) -> ast.FunctionDef:
    body = _Body(nest)
    main = body.stmts(nest.body)
    if nest.kind == "pointwise":
        return fill(cuda_templates.pointwise, name=nest.name, params=params, UNRAVEL=unravel("lin", nest.outer), BODY=main)
    init = [_assign(a.name, literal(np.asarray(a.identity).astype(compute_dtype(a.dtype))[()])) for a in nest.accumulators]
    epilogue = body.round_accumulators() + body.stmts(nest.epilogue)
    common = dict(
        name=nest.name,
        params=params,
        UNRAVEL_OUTER=unravel("row", nest.outer),
        INIT=init,
        UNRAVEL_INNER=unravel("lin", nest.inner),
        BODY=main,
        EPILOGUE=epilogue,
    )
    if nest.schedule == "thread_per_row":
        return fill(cuda_templates.thread_per_row, **common)
    assert nest.schedule == "block_per_row", nest.schedule
    shared, to_shared, tree, from_shared = [], [], [], []
    for a in nest.accumulators:
        sh = f"{a.name}_sh"
        alloc = ast.Call(
            func=ast.Attribute(ast.Attribute(_name("cuda"), "shared", ast.Load()), "array", ast.Load()),
            args=[ast.Constant(MAX_THREADS), _name(type_name(compute_dtype(a.dtype)))],
            keywords=[],
        )
        shared.append(_assign(sh, alloc))
        to_shared.append(ast.Assign([_subscript(sh, ("tid",), True)], _name(a.name)))
        mine, theirs = f"{a.name}_mine", f"{a.name}_theirs"
        other = ast.Subscript(_name(sh), ast.BinOp(_name("tid"), ast.Add(), _name("half")), ast.Load())
        tree.append(_assign(mine, _subscript(sh, ("tid",))))
        tree.append(_assign(theirs, other))
        pre, expr = body.combine(a.name, _name(mine), _name(theirs), f"{a.name}_tree_")
        tree.extend(pre)
        tree.append(ast.Assign([_subscript(sh, ("tid",), True)], expr))
        from_shared.append(_assign(a.name, ast.Subscript(_name(sh), ast.Constant(0), ast.Load())))
    return fill(
        cuda_templates.block_per_row,
        SHARED=shared,
        TO_SHARED=to_shared,
        TREE=tree,
        FROM_SHARED=from_shared,
        **common,
    )


def render(nest: LoopNest, header: str = "") -> KernelSource:
    """The kernel module's source. `header` becomes its leading comment block."""
    params = kernel_params(nest)
    fn = _kernel_ast(nest, [p.name for p in params])
    imports = [
        ast.Import([ast.alias("math")]),
        ast.ImportFrom("numba", [ast.alias("cuda")], 0),
        ast.ImportFrom("numba.cuda.types", [ast.alias(t) for t in TYPE_NAMES], 0),
    ]
    code = ast.unparse(module(imports + [fn]))
    comment = "\n".join(f"# {line}".rstrip() for line in header.splitlines())
    source = (comment + "\n" if comment else "") + code + "\n"
    return KernelSource(nest.name, source, params, nest.schedule)
