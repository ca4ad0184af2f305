"""The planner's handoff to lowering: a KernelSpec says what one kernel computes and stores;
GraphInfo the facts about the graph every kernel's lowering consults. Both print readably
(KernelSpec.format); tests compare the text."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..ir.graph import Eqn, Graph, Var


class NotFusable(Exception):
    """A value cannot be evaluated in this kernel; the message says why."""


@dataclass
class KernelSpec:
    """What the planner put in one kernel."""

    index: int
    kind: str  # "pointwise" | "reduction"
    domain: tuple[int, ...]
    reduce_axes: tuple[int, ...]
    reductions: list[Eqn]
    body_stores: list[Var]  # stored from the first phase's loop
    epilogue_stores: list[Var]  # stored once per row, after the last phase
    final_stores: list[Var] = field(default_factory=list)  # stored from a last pass over the row
    # The phase of each reduction: a reduction that reads another one of this kernel, broadcast
    # back over the row, runs in a later phase than it.
    phase_of: dict[Var, int] = field(default_factory=dict)
    # An update kernel: the `update` equation whose right side it evaluates over the region and
    # stores into the region of the array's buffer (shared by the array's versions).
    update: Optional[Eqn] = None

    @property
    def phase_count(self) -> int:
        return max(self.phase_of.values(), default=0) + 1 if self.reductions else 1

    def format(self, names: dict) -> str:
        """The planner's handoff to lowering, readably: what the kernel reduces, in which phase,
        and what it stores where."""
        shape = "[" + ",".join(map(str, self.domain)) + "]"
        head = f"kernel spec #{self.index} {self.kind} over {shape}"
        if self.reduce_axes:
            head += f", reducing axes {','.join(map(str, self.reduce_axes))}"
        lines = [head]
        for e in self.reductions:
            lines.append(f"  phase {self.phase_of.get(e.out, 0)}: {names[e.out]} = {e.prim} {' '.join(names.get(a, str(a)) for a in e.inputs)}")
        for what, values in (("stores from the loop", self.body_stores), ("stores from a last pass", self.final_stores),
                             ("stores once per row", self.epilogue_stores)):
            if values:
                lines.append(f"  {what}: {', '.join(names[v] for v in values)}")
        if self.update is not None:
            lines.append(f"  updates {names[self.update.out]} in place")
        return "\n".join(lines)


@dataclass
class GraphInfo:
    """Facts about the graph that every kernel's lowering consults."""

    graph: Graph
    producers: dict[Var, Eqn]
    names: dict[Var, str]
    scalar_inputs: dict[Var, int]  # runtime scalar arguments: graph input position
    buffer_inputs: set[Var]  # array arguments and captured constants
    owner: dict[Var, int]  # reduction result: index of the kernel that computes it
    stored_by: dict[Var, int]  # values written to memory: index of the kernel that writes them
    # Values always loaded from the buffer an earlier kernel wrote (updates, copies before a
    # reshape, a right side that an update would overwrite): never recomputed.
    materialized: set[Var] = field(default_factory=set)
    # Array arguments that are not C-contiguous: read through their own strides, full rank.
    strided: set[Var] = field(default_factory=set)
    # Every version of an updated array (and the array itself): the first version, whose
    # buffer they share.
    family: dict[Var, Var] = field(default_factory=dict)
    # The target the plan is for (targets/base.py): what its strategy asks of the hardware.
    target: Any = None
