"""Pointwise kernels that touch no common point share a kernel (horizontal fusion).

A program that sets the borders of an array (`u[0, :] = 0.0; u[-1, :] = 0.0`), or a Python loop
that writes one region per iteration, traces one update per statement, and each is a kernel of
its own: an update runs after every kernel before it. Elementwise results whose shapes do not
broadcast together are kernels of their own too. Where consecutive pointwise kernels touch no
common point of any buffer that one of them writes (each kernel's loads and stores bounded by
loops/horizontal.access_boxes, on the buffers' storage: every version of an updated array is
its root's buffer), their order does not matter and they run as one kernel, a part each. A
kernel that could not join the one before it says which points they share.

`kernel_runs(steps, family)` groups a plan's steps; the planner merges each run of kernels with
`merged_kernel`.
"""

from __future__ import annotations

from ..ir.graph import Var
from ..loops.horizontal import access_boxes, boxes_overlap, combinable, combine
from ..loops.loopnest import Check, walk
from .plan_steps import LibraryStep

# Parts of one kernel at most: a part is code of its own, and a loop that writes a region per
# iteration would otherwise make one kernel of every iteration's update, its code as long as
# the loop (runs of this many parts of one loop body are one compiled kernel).
MAX_PARTS = 8
# Loop-nest statements of one kernel of several parts at most: each part is code of its own,
# and a kernel of several long bodies (npbench's syrk: a row's 50 merged updates, 150
# statements) compiles for many times longer than the kernels it replaces, once per distinct
# run, for a launch saved per part.
MAX_STATEMENTS = 64


def _joinable(step, target) -> bool:
    """A pointwise kernel the target lets be a part (Target.may_be_part: while small)."""
    return not isinstance(step, LibraryStep) and step.spec.kind == "pointwise" and combinable(step.nest) \
        and target.may_be_part(step.nest)


def _storage_accesses(kernel, family) -> dict:
    """The storage each buffer parameter is (an updated array's versions: its root) -> accesses."""
    found: dict = {}
    for name, accesses in access_boxes(kernel.nest).items():
        var = kernel.buffer_vars[name]
        found.setdefault(family.get(var, var), []).extend(accesses)
    return found


def _clash(run, kernel, family, names, accesses) -> str | None:
    """Why `kernel` cannot be a part of the kernel of `run`; None when it can. `accesses`:
    each kernel's _storage_accesses, by id, filled as needed."""

    def of(k):
        if id(k) not in accesses:
            accesses[id(k)] = _storage_accesses(k, family)
        return accesses[id(k)]

    scalars = {s.name: s for k in run for s in k.nest.scalars}
    if any(s.name in scalars and scalars[s.name] != s for s in kernel.nest.scalars):
        return "it reads a scalar of the kernel before it in another dtype"
    checks = [k for k in run + [kernel] if any(isinstance(s, Check) for s in walk(k.nest.body))]
    if len(checks) > 1:
        return "it checks its values, as the kernel before it does (one error code a kernel)"
    mine = of(kernel)
    for other in run:
        theirs = of(other)
        for root, touched in mine.items():
            for a in touched:
                for b in theirs.get(root, ()):
                    if (a.write or b.write) and boxes_overlap(a, b):
                        what = "writes" if a.write else "reads"
                        their = "writes" if b.write else "reads"
                        return (f"it {what} points of {names.get(root, '?')}'s buffer that the kernel "
                                f"before it {their}: a true dependence, so it runs after")
    return None


def kernel_runs(steps, family: dict[Var, Var], names: dict, target) -> tuple[list[list], dict[int, str]]:
    """`steps` (kernels and library calls, in order) in runs that execute as one step: a run of
    update kernels over disjoint points, or one step alone. Also, by id, why an update kernel
    did not join the run before it."""
    runs: list[list] = []
    refused: dict[int, str] = {}
    accesses: dict[int, dict] = {}
    for step in steps:
        run = runs[-1] if runs else None
        if _joinable(step, target) and run is not None and all(_joinable(k, target) for k in run):
            statements = sum(_statements(k) for k in run + [step])
            if len(run) >= MAX_PARTS:
                refused[id(step)] = f"the kernel before it already has {MAX_PARTS} parts"
            elif statements > MAX_STATEMENTS:
                refused[id(step)] = (f"with it the kernel before it would have {statements} statements, "
                                     f"more than {MAX_STATEMENTS}, and compile slowly")
            else:
                why = _clash(run, step, family, names, accesses)
                if why is None:
                    run.append(step)
                    continue
                refused[id(step)] = why
        runs.append([step])
    return runs, refused


def _statements(kernel) -> int:
    return sum(1 for _ in walk(kernel.nest.body))


def merged_kernel(run, reason: str, kernel_class):
    """One kernel (a `kernel_class`, planner.Kernel) running the kernels of `run` as parts."""
    nest, names = combine([k.nest for k in run])
    reads: dict = {}
    writes: dict = {}
    passes: dict = {}
    params: dict = {}  # each buffer parameter of the kernel -> the value it holds
    for k, renamed in zip(run, names):
        for name, var in k.buffer_vars.items():
            params[renamed[name]] = var
        for var, name in k.reads.items():
            reads.setdefault(var, renamed[name])
        for var, name in k.writes.items():
            writes.setdefault(var, renamed[name])
        passes.update(k.passes)
    return kernel_class(
        nest, run[0].spec, reads, writes, reason,
        [e for k in run for e in k.computed], sum(k.unfused_bytes for k in run), passes,
        list(dict.fromkeys(n for k in run for n in k.notes)), None, members=list(run), params=params,
    )
