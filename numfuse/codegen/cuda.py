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
from ..dtypes import SUPPORTED
from ..ir import Literal
from ..loopnest import Accumulate, Compute, Dim, Guard, Load, LoopNest, Store
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
    """Statements of a LoopNest rendered as Python AST."""

    def __init__(self, nest: LoopNest):
        self.accumulators = {a.name: a for a in nest.accumulators}

    def operand(self, op) -> ast.expr:
        return literal(op.value) if isinstance(op, Literal) else _name(op)

    def apply(self, fn, args: list[ast.expr], type_dtype, out_dtype, prefix: str) -> tuple[list, ast.expr]:
        """Inline scalar template `fn`, casting its value to `out_dtype` (bools need no cast)."""
        stmts, expr = inline(fn, args, type_name(type_dtype), prefix)
        if np.dtype(out_dtype).kind != "b":
            expr = _call(type_name(out_dtype), expr)
        return stmts, expr

    def compute(self, s: Compute) -> list[ast.stmt]:
        args = [self.operand(a) for a in s.args]
        if s.op == "convert":
            if s.dtype.kind == "b":
                stmts, expr = self.apply(scalar_impl.to_bool, args, s.type_dtype, s.dtype, f"{s.dst}_")
            else:
                stmts, expr = [], _call(type_name(s.dtype), args[0])
        else:
            template = ELEMENTWISE[s.op].template(s.type_dtype)
            assert template is not None, (s.op, s.type_dtype)
            stmts, expr = self.apply(template, args, s.type_dtype, s.dtype, f"{s.dst}_")
        return stmts + [_assign(s.dst, expr)]

    def combine(self, acc_name: str, left: ast.expr, right: ast.expr, prefix: str) -> tuple[list, ast.expr]:
        acc = self.accumulators[acc_name]
        template = ELEMENTWISE[acc.combine].template(acc.dtype)
        return self.apply(template, [left, right], acc.dtype, acc.dtype, prefix)

    def stmts(self, stmts) -> list[ast.stmt]:
        result: list[ast.stmt] = []
        for s in stmts:
            if isinstance(s, Load):
                result.append(_assign(s.dst, _subscript(s.buffer, s.index)))
            elif isinstance(s, Compute):
                result.extend(self.compute(s))
            elif isinstance(s, Store):
                result.append(ast.Assign([_subscript(s.buffer, s.index, True)], self.operand(s.src)))
            elif isinstance(s, Accumulate):
                pre, expr = self.combine(s.acc, _name(s.acc), self.operand(s.src), f"{s.acc}_")
                result.extend(pre + [_assign(s.acc, expr)])
            elif isinstance(s, Guard):
                tests = [ast.Compare(_name(z), [ast.Eq()], [ast.Constant(0)]) for z in s.zero]
                test = tests[0] if len(tests) == 1 else ast.BoolOp(ast.And(), tests)
                result.append(ast.If(test, self.stmts(s.body) or [ast.Pass()], []))
            else:
                raise TypeError(s)
        return result


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
    init = [_assign(a.name, literal(a.identity)) for a in nest.accumulators]
    epilogue = body.stmts(nest.epilogue)
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
            args=[ast.Constant(MAX_THREADS), _name(type_name(a.dtype))],
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
        ast.ImportFrom("numba", [ast.alias("cuda")] + [ast.alias(t) for t in TYPE_NAMES], 0),
    ]
    code = ast.unparse(module(imports + [fn]))
    comment = "\n".join(f"# {line}".rstrip() for line in header.splitlines())
    source = (comment + "\n" if comment else "") + code + "\n"
    return KernelSource(nest.name, source, params, nest.schedule)
