"""The traced expression graph: abstract values, variables, equations, and its printed form.

The graph prints as a small language in the style of a jaxpr:

    { lambda a:f32[4,5] b:f32[4,5] .
      let c:f32[4,5] = exp a                        # f.py:3
          d:f32[4] = reduce_sum[axes=(1,) keepdims=False] c
      in (c, d) }

Shapes and dtypes (avals) are fixed when an equation is made and never re-inferred.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .dtypes import short_name
from ..errors import SourceLoc


@dataclass(frozen=True)
class Aval:
    """Abstract value: what is known of an array at trace time."""

    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)  # (Python ints: exact, and np.prod costs microseconds a call)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __str__(self) -> str:
        return f"{short_name(self.dtype)}[{','.join(map(str, self.shape))}]"


_var_ids = itertools.count()


class Var:
    """A value of the graph. Identity is the object; names are given when printing."""

    __slots__ = ("aval", "id")

    def __init__(self, aval: Aval):
        self.aval = aval
        self.id = next(_var_ids)

    def __repr__(self) -> str:
        return f"Var#{self.id}:{self.aval}"


@dataclass(frozen=True)
class Literal:
    """A constant scalar, already of the dtype its use computes in."""

    value: Any  # a NumPy scalar

    @property
    def aval(self) -> Aval:
        return Aval((), np.asarray(self.value).dtype)

    def __str__(self) -> str:
        value = self.value.item()
        return f"{value!r}:{short_name(self.aval.dtype)}"


@dataclass(frozen=True)
class SizeConst(Literal):
    """A constant that NumPy computes from the traced shapes (the count a mean or variance
    divides by, already converted to the dtype it divides in). It is as constant as a Literal
    for this signature, but kernels take it as an argument rather than baking it into their
    code, so that one compiled kernel serves every size. `key` says what it counts (two counts
    that happen to be equal at one shape stay two arguments)."""

    key: tuple = ()

    def __str__(self) -> str:
        return f"count({self.value.item()!r}):{short_name(self.aval.dtype)}"


@dataclass(frozen=True)
class SizeValue:
    """What numpy_reductions passes to a NumPy ufunc where NumPy passes a count computed from
    shapes (a NumPy scalar, strongly typed as NumPy's intp count is): the tracer makes it a
    SizeConst rather than a Literal."""

    value: Any  # a NumPy scalar
    key: tuple


Atom = Var | Literal


@dataclass(frozen=True, eq=False)
class Eqn:
    """`out = prim[params] inputs`, made by one operation of the user's code."""

    prim: str
    inputs: tuple[Atom, ...]
    out: Var
    params: tuple[tuple[str, Any], ...] = ()
    loc: SourceLoc | None = None

    def param(self, name: str, default=None):
        for key, value in self.params:
            if key == name:
                return value
        return default


@dataclass
class Graph:
    """The whole traced function."""

    inputs: list[Var]
    eqns: list[Eqn]
    outputs: list[Atom]
    consts: dict[Var, np.ndarray] = field(default_factory=dict)
    name: str = "f"
    # Array arguments written into: input position -> the final version, which the runtime
    # writes back into the caller's array.
    writebacks: dict[int, Var] = field(default_factory=dict)
    # Choices the tracer made that explain reports (a matrix product fused or left to the
    # library, with the user's line).
    notes: list[str] = field(default_factory=list)

    def producers(self) -> dict[Var, Eqn]:
        return {eqn.out: eqn for eqn in self.eqns}

    def users(self) -> dict[Var, list[Eqn]]:
        users: dict[Var, list[Eqn]] = {}
        for eqn in self.eqns:
            for atom in eqn.inputs:
                if isinstance(atom, Var):
                    users.setdefault(atom, []).append(eqn)
        return users

    def __str__(self) -> str:
        return format_graph(self)


def _names() -> Any:
    letters = "abcdefghijklmnopqrstuvwxyz"
    for width in itertools.count(1):
        for combo in itertools.product(letters, repeat=width):
            yield "".join(combo)


def _format_param(value) -> str:
    if isinstance(value, np.dtype):
        return short_name(value)
    if isinstance(value, tuple):
        inner = ",".join(_format_param(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return str(value)


def var_names(graph: Graph) -> dict[Var, str]:
    """The printed name of every variable: a, b, ... in order of definition."""
    fresh = _names()
    order = list(graph.inputs) + list(graph.consts) + [eqn.out for eqn in graph.eqns]
    return {var: next(fresh) for var in order}


def format_graph(graph: Graph, with_locs: bool = True) -> str:
    names = var_names(graph)

    def name(atom: Atom) -> str:
        return str(atom) if isinstance(atom, Literal) else names[atom]

    def binder(var: Var) -> str:
        return f"{name(var)}:{var.aval}"

    head = " ".join(binder(v) for v in graph.inputs)
    lines = [f"{{ lambda {head} ."]
    if graph.consts:
        consts = " ".join(binder(v) for v in graph.consts)
        lines.append(f"  consts {consts}")
    body = []
    for eqn in graph.eqns:
        params = ""
        if eqn.params:
            params = "[" + " ".join(f"{k}={_format_param(v)}" for k, v in eqn.params) + "]"
        args = " ".join(name(a) for a in eqn.inputs)
        text = f"{binder(eqn.out)} = {eqn.prim}{params} {args}".rstrip()
        body.append((text, eqn.loc))
    width = max((len(t) for t, _ in body), default=0)
    for i, (text, loc) in enumerate(body):
        prefix = "  let " if i == 0 else "      "
        comment = f"  # {loc.short()}" if with_locs and loc is not None else ""
        lines.append(f"{prefix}{text.ljust(width) if comment else text}{comment}")
    outs = ", ".join(name(a) for a in graph.outputs)
    writes = "".join(f" {names[graph.inputs[i]]}<-{names[v]}" for i, v in sorted(graph.writebacks.items()))
    lines.append(f"  in ({outs}){'  writes' + writes if writes else ''} }}")
    return "\n".join(lines)


def check_graph(graph: Graph, abstract_eval=None) -> None:
    """Every variable is defined before use; every equation's output is new; with
    `abstract_eval` (primitives.abstract_eval: the registry's rules), every equation's aval is
    what its primitive's rule derives from its operands and parameters."""
    defined = set(graph.inputs) | set(graph.consts)
    for eqn in graph.eqns:
        for atom in eqn.inputs:
            if isinstance(atom, Var) and atom not in defined:
                raise AssertionError(f"{eqn.prim} uses an undefined variable {atom!r}")
        if eqn.out in defined:
            raise AssertionError(f"{eqn.out!r} defined twice")
        defined.add(eqn.out)
        if abstract_eval is not None:
            derived = abstract_eval(eqn)
            if derived != eqn.out.aval:
                raise AssertionError(f"{eqn.prim}: the rule gives {derived}, the trace recorded {eqn.out.aval}")
    for atom in list(graph.outputs) + list(graph.writebacks.values()):
        if isinstance(atom, Var) and atom not in defined:
            raise AssertionError(f"output {atom!r} is undefined")
