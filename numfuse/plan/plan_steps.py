"""Plan steps that are not fused kernels: library calls (library_ops.py).

A plan is an ordered list of steps (Plan.steps): the fused kernels (planner.Kernel) and, between
them, library calls. A LibraryStep reads its inputs from the plan's buffers (arguments,
constants, or values an earlier kernel stored) and writes its outputs into buffers the runtime
allocates, which later kernels load.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.graph import Eqn, Var
from ..ir.library_ops import LIBRARY, LibraryOp


@dataclass
class LibraryStep:
    eqns: list[Eqn]  # one per output, in output order
    after: int  # how many fused kernels run before it
    reason: str = ""
    # The inputs that kernels of this plan store for it (not arguments or constants).
    stored_inputs: list[Var] = field(default_factory=list)
    # Inputs read in place as a view of an argument or constant (a transpose, a slice, a
    # broadcast, a reshape, or a chain of them): input -> (buffer, the view equations in order).
    views: dict[Var, tuple[Var, tuple[Eqn, ...]]] = field(default_factory=dict)

    @property
    def buffers_read(self) -> list[Var]:
        """The buffers it reads: its inputs, or the arrays its viewed inputs view."""
        return list(dict.fromkeys(self.views[v][0] if v in self.views else v for v in self.inputs))

    @property
    def op(self) -> LibraryOp:
        return LIBRARY[self.eqns[0].prim]

    @property
    def prim(self) -> str:
        return self.eqns[0].prim

    @property
    def inputs(self) -> list[Var]:
        return list(self.eqns[0].inputs)

    @property
    def outputs(self) -> list[Var]:
        return [e.out for e in self.eqns]

    @property
    def params(self) -> dict:
        return {k: v for k, v in self.eqns[0].params if k != "output"}

    @property
    def name(self) -> str:
        return f"library {self.prim}"

    @property
    def bytes_read(self) -> int:
        return sum(v.aval.nbytes for v in self.buffers_read)

    @property
    def bytes_written(self) -> int:
        return sum(v.aval.nbytes for v in self.outputs)

    @property
    def bytes_moved(self) -> int:
        return self.bytes_read + self.bytes_written


def library_steps_of(eqns) -> list[list[Eqn]]:
    """The library equations of `eqns` grouped into calls (one per output each), in order."""
    groups: dict[tuple, list[Eqn]] = {}
    for e in eqns:
        if e.prim in LIBRARY:
            key = (e.prim, tuple(id(a) for a in e.inputs), tuple(p for p in e.params if p[0] != "output"))
            groups.setdefault(key, []).append(e)
    return [sorted(g, key=lambda e: e.param("output", 0)) for g in groups.values()]
