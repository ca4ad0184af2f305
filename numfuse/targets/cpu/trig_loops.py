"""sin and cos in the CPU target's loops: vectorized where every argument is small enough.

vector_math's sin and cos reduce their argument exactly only within TRIG_LIMIT; libm's are
exact everywhere but are calls, which keep LLVM from vectorizing a loop. A kernel with sin or
cos is rendered twice, with the templates ("fast", which also fold whether each argument is past
the limit into a flag) and with libm ("libm"); `choose` then makes each innermost loop that
computes them three loops, as NumPy's own SIMD loops do:

    nf_big = False
    for ...: <the loop's values, its stores and accumulations left out: only the flag>
    if nf_big:
        for ...: <the libm loop>
    else:
        for ...: <the fast loop, without the flag>

The first loop reads what the loop will read and computes only the arguments (LLVM drops the
rest), so it leaves memory as it was: a loop that updates its inputs in place is still right.
Where a loop cannot be split so (another loop inside it, a counter or value carried from one
point to the next that an argument would depend on, a prange), the whole kernel is libm's.
"""

from __future__ import annotations

import ast
import copy


def _direct(stmts):
    """Statements of a loop body, those inside if-blocks included, not those of inner loops."""
    for s in stmts:
        yield s
        if isinstance(s, ast.If):
            yield from _direct(s.body)
            yield from _direct(s.orelse)


def _flags(stmts, flag: str) -> bool:
    return any(isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Name) and s.targets[0].id == flag
               for s in _direct(stmts))


def _reads(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _carried(stmts, flag: str) -> set[str]:
    """Names assigned in the loop body that some statement reads before the body assigns them:
    values carried from one point to the next (accumulators, lanes), the flag aside."""
    assigned_anywhere = {n.id for s in stmts for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    carried, assigned = set(), set()

    def visit(body):
        for s in body:
            if isinstance(s, ast.If):
                carried.update((_reads(s.test) & assigned_anywhere) - assigned)
                visit(s.body)
                visit(s.orelse)
                continue
            carried.update((_reads(s) & assigned_anywhere) - assigned)
            for n in ast.walk(s):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    assigned.add(n.id)

    visit(stmts)
    return carried - {flag}


def _check_body(stmts, flag: str) -> list[ast.stmt] | None:
    """The loop body computing only the flag, or None where it cannot be had so."""
    if any(isinstance(s, (ast.AugAssign, ast.For, ast.While)) for s in _direct(stmts)):
        return None
    carried = _carried(stmts, flag)

    def keep(body):
        kept = []
        for s in body:
            if isinstance(s, ast.If):
                inner, other = keep(s.body), keep(s.orelse)
                if inner or other:
                    kept.append(ast.If(s.test, inner or [ast.Pass()], other))
            elif isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Name) and s.targets[0].id not in carried:
                kept.append(s)
            # stores (subscript targets) and carried values are left out
        return kept

    body = keep(copy.deepcopy(stmts))
    if any(_reads(s) & carried for s in body):
        return None  # an argument would depend on a carried value, which the check cannot follow
    return body


def _without_flag(stmts, flag: str) -> list[ast.stmt]:
    out = []
    for s in stmts:
        if isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Name) and s.targets[0].id == flag:
            continue
        if isinstance(s, ast.If):
            s.body = _without_flag(s.body, flag) or [ast.Pass()]
            s.orelse = _without_flag(s.orelse, flag)
        out.append(s)
    return out


def _loops(fn: ast.FunctionDef) -> list[ast.For]:
    return [n for n in ast.walk(fn) if isinstance(n, ast.For)]


def _is_flag_update(s, flag: str) -> bool:
    return isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Name) and s.targets[0].id == flag \
        and isinstance(s.value, ast.BinOp)


def choose(fast: ast.FunctionDef, libm: ast.FunctionDef, flag: str) -> ast.FunctionDef:
    """`fast` with each loop that computes sin or cos split as the module docstring says, or
    `libm` where one cannot be. The two are the same kernel but for sin and cos, so their loops
    pair up in order."""
    fast_loops, libm_loops = _loops(fast), _loops(libm)
    if len(fast_loops) != len(libm_loops):
        return libm
    replace: dict[int, list[ast.stmt]] = {}
    checks: list[ast.For] = []
    for loop, twin in zip(fast_loops, libm_loops):
        if not _flags(loop.body, flag):
            continue
        iterated = loop.iter
        if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Name) and iterated.func.id == "prange":
            return libm
        check = _check_body(loop.body, flag)
        if check is None:
            return libm
        first = ast.For(copy.deepcopy(loop.target), copy.deepcopy(loop.iter), check or [ast.Pass()], [])
        checks.append(first)
        loop.body = _without_flag(loop.body, flag) or [ast.Pass()]
        replace[id(loop)] = [
            ast.Assign([ast.Name(flag, ast.Store())], ast.Constant(False)),
            first,
            ast.If(ast.Name(flag, ast.Load()), [twin], [loop]),
        ]

    class Split(ast.NodeTransformer):
        def visit_For(self, node):
            self.generic_visit(node)  # inner loops first
            return replace.get(id(node), node)

    result = Split().visit(fast)
    in_checks = {id(s) for loop in checks for s in _direct(loop.body)}
    if any(_is_flag_update(s, flag) and id(s) not in in_checks for s in ast.walk(result)):
        return libm  # sin or cos outside every loop split: libm's everywhere
    return ast.fix_missing_locations(result)
