"""The handoff from lowering (lower.py) to loop collapsing (collapse.py): one kernel's values
evaluated into statements whose indices are still the domain's axes (`d0`, `d1` ... when
printed), with what lowering collected while evaluating them: the buffers and every map they
are accessed at, the Select indices, scalars and counts, its notes. collapse.build_nest turns it
into the LoopNest; `format` prints it, and tests compare that text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..ir import indexing
from ..ir.dtypes import short_name
from ..ir.graph import Var
from .loopnest import Guard, Iota, Load, Select, Store, format_statements


@dataclass(frozen=True)
class Evaluated:
    name: str  # the kernel's name (nf_pw_..., nf_red_...)
    kind: str  # "pointwise" | "reduction"
    domain: tuple[int, ...]
    reduce_axes: tuple[int, ...]
    phases: tuple  # (accumulators, body) per phase: a pass over the reduced axes
    epilogue: tuple  # statements once per kept point, after the last phase
    reads: dict  # Var -> buffer name: buffers loaded
    writes: dict  # Var -> buffer name: buffers stored
    strided: frozenset  # buffers of arguments passed strided (read through their own strides)
    maps: tuple  # every (buffer name, index map) used
    selects: tuple  # the index entry every Select branches on
    checked: bool  # whether a statement tests a runtime check (the kernel takes an error buffer)
    scalars: dict  # (graph input position, dtype) -> parameter name
    counts: dict  # key -> (parameter name, SizeConst): sizes passed as arguments
    notes: tuple  # lowering's notes for explain (online softmax)
    online_choice: Any  # what the online-softmax choice depended on (for compiled_for)
    sources: tuple  # the user's source lines of the computed equations

    def buffer_var(self, name: str) -> Var:
        return {n: v for v, n in {**self.reads, **self.writes}.items()}[name]

    def format(self) -> str:
        shape = "[" + ",".join(map(str, self.domain)) + "]"
        head = f"evaluated {self.name}  {self.kind} over {shape}"
        if self.reduce_axes:
            head += f", reducing {', '.join(f'd{a}' for a in self.reduce_axes)}"
        lines = [head]
        for role, table in (("in ", self.reads), ("out", self.writes)):
            sigs = [f"{n}:{short_name(v.aval.dtype)}[{','.join(map(str, v.aval.shape))}]"
                    + (" strided" if v in self.strided else "") for v, n in table.items()]
            lines.append(f"  {role} {'  '.join(sigs)}".rstrip())
        extra = [n for (_, _), n in self.scalars.items()] + [n for n, _ in self.counts.values()]
        if extra:
            lines.append(f"  scalars {'  '.join(extra)}")
        combine = {}
        for k, (accumulators, body) in enumerate(self.phases):
            lines.append(f"  phase {k}:")
            for a in accumulators:
                of = f" of exp(x - {a.partner})" if a.partner else ""
                running = ", running" if a.running else ""
                running += f", in NumPy's buffers of {a.blocks}" if a.blocks else ""
                lines.append(f"    {a.name}:{short_name(a.dtype)} = {a.identity.item()!r} ({a.combine}{of}{running})")
                combine[a.name] = a.combine
            lines.extend(format_statements(_named(body), "    ", combine))
        if self.epilogue:
            lines.append("  epilogue:")
            lines.extend(format_statements(_named(self.epilogue), "    ", combine))
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


def _axis(a) -> str:
    return f"d{a}"


def _entry(e):
    return "_" if e is None else indexing.substitute(e, _axis)


def _named(stmts) -> list:
    """The statements with each domain axis named d0, d1 ... for printing."""
    out = []
    for s in stmts:
        if isinstance(s, Load):
            out.append(Load(s.dst, s.buffer, tuple(_entry(e) for e in s.index)))
        elif isinstance(s, Store):
            out.append(Store(s.buffer, tuple(_entry(e) for e in s.index), s.src))
        elif isinstance(s, Guard):
            out.append(Guard(tuple(_axis(a) for a in s.zero), tuple(_named(s.body))))
        elif isinstance(s, Select):
            branches = tuple((tuple(_named(body)), src) for body, src in s.branches)
            out.append(Select(s.dst, s.dtype, _entry(s.index), s.bounds, branches))
        elif isinstance(s, Iota):
            out.append(Iota(s.dst, _entry(s.index)))
        else:
            out.append(s)
    return out
