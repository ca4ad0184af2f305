"""Constructors of the Python AST nodes that generated code is built from (kernels, call stubs)."""

from __future__ import annotations

import ast


def var(id_: str) -> ast.Name:
    """A variable read."""
    return ast.Name(id_, ast.Load())


def target(id_: str) -> ast.Name:
    """A variable written."""
    return ast.Name(id_, ast.Store())


def assign(to: str | tuple[str, ...], value: ast.expr) -> ast.Assign:
    """`to = value`, or `a, b = value` for a tuple of names."""
    lhs = target(to) if isinstance(to, str) else ast.Tuple([target(t) for t in to], ast.Store())
    return ast.Assign(targets=[lhs], value=value)


def call(func: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=var(func), args=list(args), keywords=[])



class Suffix(ast.NodeTransformer):
    """Every name in `names` gets `suffix` (a lane's copy of a point's statements: v0 -> v0_l3)."""

    def __init__(self, names: set[str], suffix: str):
        self.names, self.suffix = names, suffix

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.Name(node.id + self.suffix, node.ctx) if node.id in self.names else node


def assigned_names(stmts: list[ast.stmt]) -> set[str]:
    """The names `stmts` assign."""
    return {n.id for st in stmts for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def unrolled_points(point: list[ast.stmt], index: str, base: str, copies: int, renamed=frozenset(),
             kept=frozenset()) -> list[ast.stmt]:
    """`point` (one point's statements, at the loop variable `index`) `copies` times, for the
    points `base`, `base + 1`, ...: copy k sets `{index}_l{k}` and renames `_l{k}` every name it
    assigns, its index and `renamed` (lane k's accumulators), but `kept` (lanes unrolled along
    an innermost loop: lanes.lanes_loop, a pairwise leaf's)."""
    from .templates import clone

    local = (assigned_names(point) | {index} | set(renamed)) - set(kept)
    stmts: list[ast.stmt] = []
    for k in range(copies):
        stmts.append(assign(f"{index}_l{k}", ast.BinOp(var(base), ast.Add(), ast.Constant(k)) if k else var(base)))
        rename = Suffix(local, f"_l{k}")
        stmts.extend(rename.visit(clone(st)) for st in point)
    return stmts
