"""Code templates: real Python functions whose AST is copied and filled in.

A template's placeholders are its UPPERCASE names. `fill` substitutes them:

- a list of statements replaces a placeholder that stands alone as a statement (`BODY`);
- an expression replaces a placeholder used as a value (`SIZE`);
- `params=[...]` replaces the template's argument list, `name=` its function name.

Every placeholder must be filled and every substitution must be used, so a template and its
caller cannot drift apart silently (the check tangent's templates make).

`inline` copies a scalar template (scalar_impl.py) into a kernel body: its arguments become the
given expressions, its locals get a unique prefix, `T(...)` becomes the dtype's constructor (and
`R(...)` that of its parts' dtype, for complex templates), and its final `return` becomes the
value. A statement `z = other(...)`, where `other` is a template of the same module, is that
template inlined in its place (so log10 of a complex value is its log, scaled, written once).
"""

from __future__ import annotations

import ast
import copy
import functools
import inspect
import sys
import textwrap
from typing import Callable


@functools.lru_cache(maxsize=None)
def _module_functions(module_name: str) -> dict[str, ast.FunctionDef]:
    """Every top-level function of a template module, parsed once from one read of its file
    (so that the file changing later, say during a test run, cannot mix two versions)."""
    tree = ast.parse(inspect.getsource(sys.modules[module_name]))
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


def _parse(fn: Callable) -> ast.FunctionDef:
    node = _module_functions(fn.__module__).get(fn.__name__)
    if node is None:  # not a top-level function of its module
        node = ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
    assert isinstance(node, ast.FunctionDef), fn
    node = copy.copy(node)
    node.decorator_list = []
    return node


def clone(node):
    """A copy of an AST (or a list of them), node by node: what copy.deepcopy does for ASTs,
    several times faster (rendering a kernel copies template trees many times)."""
    if isinstance(node, list):
        return [clone(n) for n in node]
    if not isinstance(node, ast.AST):
        return node  # identifiers and constants: immutable
    new = node.__class__()
    for name in node._fields:
        if hasattr(node, name):
            setattr(new, name, clone(getattr(node, name)))
    for name in node._attributes:
        if hasattr(node, name):
            setattr(new, name, getattr(node, name))
    return new


def template_ast(fn: Callable) -> ast.FunctionDef:
    """A fresh copy of the template's function definition."""
    return clone(_parse(fn))


def _is_placeholder(name: str) -> bool:
    return name.isupper() and len(name) > 1


class _Filler(ast.NodeTransformer):
    def __init__(self, subs: dict):
        self.subs = subs
        self.used: set[str] = set()
        self.unfilled: set[str] = set()

    def _stmts(self, stmts: list) -> list:
        result = []
        for stmt in stmts:
            if (
                isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Name)
                and _is_placeholder(stmt.value.id)
            ):
                name = stmt.value.id
                if name not in self.subs:
                    self.unfilled.add(name)
                    continue
                value = self.subs[name]
                if not isinstance(value, list):
                    raise TypeError(f"placeholder {name} stands as a statement; give a list of statements")
                self.used.add(name)
                result.extend(clone(value))
            else:
                result.append(self.visit(stmt))
        return result

    def generic_visit(self, node):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                filled = self._stmts(stmts)
                setattr(node, field, filled or [ast.Pass()])
        for field, value in ast.iter_fields(node):
            if field in ("body", "orelse", "finalbody") and isinstance(value, list):
                continue
            if isinstance(value, list):
                setattr(node, field, [self.visit(v) if isinstance(v, ast.AST) else v for v in value])
            elif isinstance(value, ast.AST):
                setattr(node, field, self.visit(value))
        return node

    def visit_Name(self, node: ast.Name):
        if not _is_placeholder(node.id):
            return node
        if node.id not in self.subs:
            self.unfilled.add(node.id)
            return node
        value = self.subs[node.id]
        if isinstance(value, list):
            raise TypeError(f"placeholder {node.id} is used as a value; give an expression")
        self.used.add(node.id)
        return clone(value)


def fill(fn: Callable, *, name: str | None = None, params: list[str] | None = None, **subs) -> ast.FunctionDef:
    """The template `fn` with its placeholders replaced (see the module docstring)."""
    node = template_ast(fn)
    if name is not None:
        node.name = name
    if params is not None:
        node.args = ast.arguments(
            posonlyargs=[], args=[ast.arg(p) for p in params], kwonlyargs=[], kw_defaults=[], defaults=[]
        )
    filler = _Filler(subs)
    node = filler.visit(node)
    if filler.unfilled:
        raise ValueError(f"template {fn.__name__}: placeholders left unfilled: {sorted(filler.unfilled)}")
    unused = set(subs) - filler.used
    if unused:
        raise ValueError(f"template {fn.__name__}: substitutions not used: {sorted(unused)}")
    return node


def fill_body(fn: Callable, **subs) -> list[ast.stmt]:
    """The statements of template `fn` (a function without parameters) with its placeholders
    replaced: a piece that a caller splices into another template."""
    return fill(fn, **subs).body


class _Renamer(ast.NodeTransformer):
    def __init__(self, args: dict, locals_: dict, type_name: str, part_name: str):
        self.args = args
        self.locals = locals_
        self.type_name = type_name
        self.part_name = part_name

    def visit_Name(self, node: ast.Name):
        if node.id in self.args:
            if not isinstance(node.ctx, ast.Load):
                raise ValueError(f"a scalar template assigns to its argument {node.id}")
            return clone(self.args[node.id])
        if node.id in self.locals:
            return ast.Name(self.locals[node.id], node.ctx)
        if node.id == "T":
            return ast.Name(self.type_name, ast.Load())
        if node.id == "R":
            return ast.Name(self.part_name, ast.Load())
        return node


def _assigned_names(body: list) -> set[str]:
    names = set()
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def _expand_calls(fn: Callable, body: list[ast.stmt], type_name: str, part_name: str | None) -> list[ast.stmt]:
    """`body` with each `name = other(args)` statement, `other` a template of fn's module,
    replaced by other's statements and `name = <its result>` (its locals prefixed `name__`)."""
    templates = _module_functions(fn.__module__)
    expanded = []
    for stmt in body:
        call = stmt.value if isinstance(stmt, ast.Assign) else None
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in templates
                and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            target = stmt.targets[0].id
            other = getattr(sys.modules[fn.__module__], call.func.id)
            stmts, result = inline(other, call.args, type_name, f"{target}__", part_name)
            expanded.extend(stmts + [ast.copy_location(ast.Assign([ast.Name(target, ast.Store())], result), stmt)])
        else:
            expanded.append(stmt)
    return expanded


def inline(fn: Callable, args: list[ast.expr], type_name: str, prefix: str,
           part_name: str | None = None) -> tuple[list[ast.stmt], ast.expr]:
    """Statements and the result expression of scalar template `fn` applied to `args`;
    `part_name` fills R (by default T's own type)."""
    node = template_ast(fn)
    params = [a.arg for a in node.args.args]
    if len(params) != len(args):
        raise TypeError(f"{fn.__name__} takes {len(params)} operands, got {len(args)}")
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # docstring
    if not body or not isinstance(body[-1], ast.Return):
        raise ValueError(f"scalar template {fn.__name__} must end with its only return")
    for stmt in body[:-1]:
        if any(isinstance(n, ast.Return) for n in ast.walk(stmt)):
            raise ValueError(f"scalar template {fn.__name__} returns before its last statement")
    body = _expand_calls(fn, body[:-1], type_name, part_name) + body[-1:]
    locals_ = {n: f"{prefix}{n}" for n in _assigned_names(body[:-1])}
    renamer = _Renamer(dict(zip(params, args)), locals_, type_name, part_name or type_name)
    stmts = [renamer.visit(s) for s in body[:-1]]
    result = renamer.visit(body[-1].value)
    return stmts, result


def module(body: list[ast.stmt]) -> ast.Module:
    tree = ast.Module(body=body, type_ignores=[])
    return ast.fix_missing_locations(tree)
