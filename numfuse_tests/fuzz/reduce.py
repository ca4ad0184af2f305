"""Making a failing program smaller after hypothesis has shrunk it.

Hypothesis deletes steps and simplifies choices, but it cannot delete a step whose removal
changes what the failure depends on (one of two negations that cancel). The reducer edits the
program itself: it drops outputs, ends an output at one of its operation's operands, and
reroutes an operand to an earlier value of the same kind, shape and dtype, so that the
operations in between fall away. Each edit is replayed (builder.replay) for fresh tolerances,
and kept if the program gets smaller and numfuse still fails on it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import replace

from . import numerics as N
from .builder import Value, replay
from .program import Op, Program


def _size(p: Program) -> tuple[int, int, int]:
    return len(p.ops), len(p.outputs), len(p.inputs)


def edits(p: Program, values: list[Value]) -> Iterator[Program]:
    """Smaller variants of p, the likely biggest cuts first."""
    n_in = len(p.inputs)
    for k in range(len(p.outputs)):
        if len(p.outputs) > 1:
            yield replace(p, outputs=p.outputs[:k] + p.outputs[k + 1:])
    for k, out in enumerate(p.outputs):
        if out >= n_in:
            for operand in dict.fromkeys(p.ops[out - n_in].operands):
                if operand >= n_in:
                    yield replace(p, outputs=p.outputs[:k] + [operand] + p.outputs[k + 1:])
    for k, op in enumerate(p.ops):
        for slot, operand in enumerate(op.operands):
            for earlier in range(operand):
                if values[earlier].same_type(values[operand]):
                    operands = op.operands[:slot] + (earlier,) + op.operands[slot + 1:]
                    ops = p.ops[:k] + [Op(op.lines, operands, op.rules)] + p.ops[k + 1:]
                    yield replace(p, ops=ops)


def reduce_program(program: Program, fails: Callable[[Program], bool], model: N.ErrorModel,
                   budget: int = 400, deadline: float | None = None) -> Program:
    """The smallest failing variant of `program` found within `budget` runs of `fails` (and
    before time.perf_counter() reaches `deadline`)."""
    replayed = replay(program, model)
    if replayed is None:
        return program
    current, values = replayed
    runs = 0
    improved = True
    while improved and runs < budget:
        improved = False
        for candidate in edits(current, values):
            candidate = candidate.pruned()
            if _size(candidate) >= _size(current):
                continue
            replayed = replay(candidate, model)
            if replayed is None:
                continue
            runs += 1
            if fails(replayed[0]):
                current, values = replayed
                improved = True
                break
            if runs >= budget or (deadline is not None and time.perf_counter() > deadline):
                return current
    return current
