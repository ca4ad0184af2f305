"""Unrolled main loops: UNROLL points a pass, every point's loads first.

A thread of a grid-stride loop has one load in flight at a time: a store of one point could
alias a later point's load, so neither Numba nor the compiler below it moves loads up across
points. Copying the loop body for UNROLL points, with every point's loads that may move up
placed before any point's other statements, puts UNROLL loads in flight per thread. The loop
that follows takes the points left over one at a time.
"""

from __future__ import annotations

import ast

from ...loops.loopnest import Check, Guard, Load, Parts, Select, Store
from . import templates
from ...codegen.pyast import assign, var
from ...codegen.templates import clone, fill_body

# Points a thread takes per pass of a main loop (a flat kernel's, a reduction phase's or final
# pass's), all their loads first; a second loop takes the rest one at a time. Only a loop of at
# most UNROLL_MAX_STATEMENTS loop-nest statements per point is unrolled: a longer one does
# enough arithmetic per point to hide its loads' latency, and copying it would multiply its
# compile time (the 120-statement polynomial took 7.7 s instead of 0.7 s, nearly all of it in
# Numba's SSA, typing and lowering, not in NVVM).
UNROLL = 4
UNROLL_MAX_STATEMENTS = 16
# The same bound on the Python statements they render to (an inlined template can be dozens:
# complex log renders to 85, and four copies of it took 12 s to compile).
UNROLL_MAX_RENDERED = 48


def unrolled_loop(parts, unravel_stmts, stride: str, stop: ast.expr | str, persistent: set[str],
                  active: bool) -> list[ast.stmt]:
    """`while [active and] lin + (UNROLL - 1) * stride < stop:` UNROLL points a pass (unroll),
    before the loop that takes one point a pass; nothing for a body of more than
    UNROLL_MAX_STATEMENTS statements (or UNROLL_MAX_RENDERED rendered ones), which that loop
    then takes alone."""
    rendered = sum(1 for _, ss in parts for st in ss for node in ast.walk(st) if isinstance(node, ast.stmt))
    if len(parts) > UNROLL_MAX_STATEMENTS or rendered > UNROLL_MAX_RENDERED:
        return []
    last = ast.BinOp(var("lin"), ast.Add(), ast.BinOp(ast.Constant(UNROLL - 1), ast.Mult(), var(stride)))
    more: ast.expr = ast.Compare(last, [ast.Lt()], [var(stop) if isinstance(stop, str) else clone(stop)])
    if active:
        more = ast.BoolOp(ast.And(), [var("active"), more])
    return fill_body(templates.unrolled_loop, MORE=more, UNROLL=ast.Constant(UNROLL), STRIDE=var(stride),
                     UNROLLED=unroll(parts, unravel_stmts, var(stride), persistent))


def render_parts(body, stmts) -> list[tuple[bool, list[ast.stmt]]]:
    """Each statement rendered by `body` (a kernel's cuda._Body), with whether it is a load
    that may move up: one before anything that writes memory or branches (a store, a check, a
    guard, a concatenation's branches)."""
    parts = []
    written = False
    for s in stmts:
        written = written or isinstance(s, (Store, Check, Guard, Select, Parts))
        parts.append((isinstance(s, Load) and not written, body.stmts([s])))
    return parts


def in_order(parts) -> list[ast.stmt]:
    """The rendered statements as they came (for the loop that takes one point a pass)."""
    return [clone(st) for _, ss in parts for st in ss]


def unroll(parts, unravel_stmts: list[ast.stmt], stride: ast.expr, persistent: set[str]) -> list[ast.stmt]:
    """A loop body for UNROLL points at once: point k at `lin + k * stride`, its loop variables
    and locals suffixed `_k` (not the `persistent` names: accumulators, which take the points in
    order, so sums come out bit for bit as one point a pass gives them); first every point's
    loads that may move up, then each point's other statements in order. Moving loads up across
    points is safe: within one kernel a buffer both read and written is read and written at the
    same point (the planner puts a right side that reads the array elsewhere in a temporary),
    and a cached row's cells are per point."""
    assigned = {n.id for st in unravel_stmts + [st for _, ss in parts for st in ss] for n in ast.walk(st)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    local = ({"lin"} | assigned) - persistent
    loads: list[ast.stmt] = []
    rest: list[ast.stmt] = []
    for k in range(UNROLL):
        rename = _Suffix(local, f"_{k}" if k else "")
        if k:
            offset = ast.BinOp(ast.Constant(k), ast.Mult(), clone(stride))
            loads.append(assign(rename.name("lin"), ast.BinOp(var("lin"), ast.Add(), offset)))
        loads.extend(rename.visit(clone(st)) for st in unravel_stmts)
        for hoisted, ss in parts:
            (loads if hoisted else rest).extend(rename.visit(clone(st)) for st in ss)
    return loads + rest


class _Suffix(ast.NodeTransformer):
    """Appends `suffix` to every name in `names`."""

    def __init__(self, names: set[str], suffix: str):
        self.names, self.suffix = names, suffix

    def name(self, id_: str) -> str:
        return id_ + self.suffix if id_ in self.names else id_

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.Name(self.name(node.id), node.ctx)
