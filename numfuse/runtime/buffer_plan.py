"""Where a plan's arrays live during a call, for every target's executable: made once per
signature (per Plan), used by the full call path and by the CUDA target's fast path.

- inputs: the array arguments, by graph input position, read (and updated) in place or, on the
  CUDA target, as device copies of NumPy arrays;
- constants: arrays the trace captured, uploaded once;
- allocated: the buffers each call makes, in order: every value a kernel or a library call
  writes, each returned buffer (an empty one has no kernel) and each updated array's root;
- aliases: a later version of an updated array, sharing its root's buffer (updates write in
  place);
- writebacks: argument position <- its final version, where the function writes an argument.

`str(plan)` prints it, one line each, with the graph's names.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BufferPlan:
    inputs: tuple  # (graph input position, Var)
    constants: tuple  # Vars
    allocated: tuple  # Vars
    aliases: dict  # Var -> root Var
    writebacks: tuple  # (argument position, Var)
    names: dict  # Var -> name, for printing

    def __str__(self) -> str:
        n = self.names.get

        def array(v):
            return f"{n(v, '?')}:{v.aval}"

        lines = ["buffer plan"]
        lines += [f"  input #{p} {array(v)}" for p, v in self.inputs]
        lines += [f"  constant {array(v)}" for v in self.constants]
        lines += [f"  allocate {array(v)}" for v in self.allocated]
        lines += [f"  alias {n(v, '?')} -> {n(r, '?')}" for v, r in self.aliases.items()]
        lines += [f"  write back #{p} <- {n(v, '?')}" for p, v in self.writebacks]
        return "\n".join(lines)


def buffer_plan(plan) -> BufferPlan:
    graph = plan.graph
    inputs = tuple((p, v) for p, v in enumerate(graph.inputs) if p not in plan.scalar_inputs)
    have = {v for _, v in inputs} | set(graph.consts)
    written = [v for k in plan.kernels for v in k.writes]
    # A library call's outputs, and its inputs a kernel would store.
    written += [v for step in plan.library_steps for v in step.outputs + step.stored_inputs]
    returned = [o.var for o in plan.outputs if o.kind == "buffer"]
    roots = list(dict.fromkeys(plan.aliases.values()))
    allocated = tuple(dict.fromkeys(v for v in written + returned + roots if v not in have and v not in plan.aliases))
    return BufferPlan(inputs, tuple(graph.consts), allocated, dict(plan.aliases), tuple(graph.writebacks.items()),
                      plan.names)
