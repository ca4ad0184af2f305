"""Successive updates of the same points of a buffer, as one update: a graph rewrite before
planning.

A Python loop that updates a region again and again (`C[i, :i+1] *= beta`, then
`C[i, :i+1] += alpha * A[i, k] * A[:i+1, k]` for every k) traces one `update` per statement,
each reading the region the one before wrote. Where an update's array is the result of an update
of the same points, and that intermediate version is read nowhere but at those very points, the
second update can take the first one's value for those reads and write into the first one's
array: one update, whose value is the whole chain's expression. Its kernel reads and writes the
region once, where the chain would have been one kernel (and one pass over the region) per
statement.

`merge_update_chains(graph)` returns the rewritten graph (the same object where nothing
merges); the planner plans that one.
"""

from __future__ import annotations

from ..ir.graph import Eqn, Graph, Var
from ..ir.viewmaps import identity_map, slice_operand


def _slice_points(eqn: Eqn):
    """The points of its operand that a slice eqn reads, over its result's identity map."""
    return slice_operand(eqn.param("start"), eqn.param("step"), eqn.param("drop"), identity_map(eqn.out.aval.shape))


def merge_update_chains(graph: Graph) -> Graph:
    users: dict[Var, list[int]] = {}
    for k, eqn in enumerate(graph.eqns):
        for atom in eqn.inputs:
            if isinstance(atom, Var):
                users.setdefault(atom, []).append(k)
    pinned = set(graph.outputs) | set(graph.writebacks.values())
    eqns: list[Eqn | None] = list(graph.eqns)
    producer = {eqn.out: k for k, eqn in enumerate(eqns)}
    replace: dict[Var, Var] = {}  # a read of the intermediate version's region -> the value written there
    merged = 0

    def resolved(atom):
        while isinstance(atom, Var) and atom in replace:
            atom = replace[atom]
        return atom

    for k, eqn in enumerate(eqns):
        if eqn is None:
            continue
        if eqn.prim != "update":
            continue
        middle = eqn.inputs[0]
        first_at = producer.get(middle)
        first = eqns[first_at] if first_at is not None else None
        if first is None or first.prim != "update" or middle in pinned:
            continue
        shape = eqn.param("shape")
        value = first.inputs[1]
        if first.param("at") != eqn.param("at") or first.param("shape") != shape or not isinstance(value, Var) \
                or value.aval.shape != tuple(shape):
            continue
        points = eqn.param("at").entries
        reads = [j for j in users.get(middle, []) if j != k]
        if not all(eqns[j] is not None and eqns[j].prim == "slice" and eqns[j].out.aval.shape == tuple(shape)
                   and _slice_points(eqns[j]) == points for j in reads):
            continue
        if any(eqns[j].out in pinned for j in reads):
            continue
        if users.get(middle, []).count(k) != 1 or any(j > k for j in reads):
            continue  # the update reads the intermediate version as its value too, or later code does
        # Merge: the reads of the region take the first update's value; the second update
        # writes into the first one's array.
        for j in reads:
            replace[eqns[j].out] = value
            eqns[j] = None
        base = first.inputs[0]
        eqns[first_at] = None
        eqns[k] = Eqn("update", (base, eqn.inputs[1]), eqn.out, eqn.params, eqn.loc)
        producer[eqn.out] = k
        for atom in (base,):
            users.setdefault(atom, []).append(k)
        merged += 1
    if not merged:
        return graph
    kept = []
    for e in eqns:
        if e is not None:
            inputs = tuple(resolved(a) for a in e.inputs)
            kept.append(e if inputs == e.inputs else Eqn(e.prim, inputs, e.out, e.params, e.loc))
    outputs = [resolved(o) for o in graph.outputs]
    return Graph(graph.inputs, kept, outputs, graph.consts, graph.name, graph.writebacks,
                 graph.notes + [f"{merged} update(s) of the points the update before wrote merged into it "
                                "(one kernel for each chain)"])
