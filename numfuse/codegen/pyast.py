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

