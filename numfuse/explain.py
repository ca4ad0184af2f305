"""What `explain` prints, and the debug output of each stage (debug.py).

`explain_text` is one signature's graph, plan, target and each kernel with why it is separate,
its bytes, loop nest and source; `segmented_explain_text` a function run with graph breaks,
break by break and segment by segment. `signature_text` and `emit_plan` are NUMFUSE_DEBUG's.
"""

from __future__ import annotations

import os

import numpy as np

from . import debug
from .codegen.statements import kernel_code
from .frontend.arguments import static_value
from .ir.graph import format_graph


def explain_text(compiled) -> str:
    """One signature's plan in words (a jit_function.Compiled)."""
    from .runtime.kernel_files import kernel_path

    plan = compiled.plan
    names = plan.names
    graph = plan.graph
    inputs = ", ".join(
        f"{compiled.arg_names[p]}: {v.aval}" for p, v in zip(compiled.traced_positions, graph.inputs)
    )
    lines = [f"numfuse.jit({graph.name}) for ({inputs})", "", "== graph", format_graph(graph), ""]
    ratio = plan.bytes_moved / plan.min_bytes if plan.min_bytes else 1.0
    calls = f" and {len(plan.library_steps)} library call(s)" if plan.library_steps else ""
    lines.append(
        f"== plan: {len(plan.kernels)} kernel(s){calls}, {plan.bytes_moved} bytes moved, "
        f"minimum {plan.min_bytes} ({ratio:.2f}x); one pass per operation would move "
        f"{plan.unfused_bytes}"
    )
    lines.append(f"target: {compiled.target.name} ({compiled.target.description})")
    if compiled.sharing is not None:
        lines.extend(compiled.sharing.describe(compiled.arg_names))
    if plan.notes:
        lines.append("choices made when tracing:")
        lines.extend(f"   {note}" for note in plan.notes)
    source_of = {id(k): (i, s) for i, (k, s) in enumerate(zip(plan.kernels, compiled.sources))}
    for step in plan.steps or plan.kernels:
        if id(step) not in source_of:
            lines.append("")
            lines.append(f"-- {step.name} (after kernel #{step.after - 1})" if step.after else f"-- {step.name} (first)")
            lines.append(f"   what: {step.reason}")
            lines.append(f"   bytes: read {step.bytes_read}, written {step.bytes_written}")
            continue
        i, source = source_of[id(step)]
        kernel = step
        lines.append("")
        lines.append(f"-- kernel #{i} {kernel.name} ({kernel.nest.kind}, {kernel.nest.strategy})")
        lines.append(f"   what: {kernel.reason}")
        lines.append(f"   strategy: {compiled.target.strategy_text(kernel.nest)}")
        lines.append(f"   compiled for: {compiled_for_text(kernel.nest)}")
        lines.append(f"   sizes as arguments: {size_arguments_text(source)}")
        constants = [c for c in kernel.nest.counts if c.coefficient]
        if constants:
            listed = ", ".join(f"{c.name}={c.value.item()!r}" for c in constants)
            lines.append(f"   constants as arguments: {listed} (one code for other values)")
        lines.extend(f"   limit: {note}" for note in kernel.notes)
        held = list(dict.fromkeys(f"{names[e.out]} = {e.prim}" for e in kernel.computed))
        lines.append(f"   holds: {', '.join(held) if held else '(copies only)'}")
        lines.append(
            f"   bytes: read {kernel.bytes_read}, written {kernel.bytes_written}; its operations "
            f"one pass each: {kernel.unfused_bytes}"
        )
        lines.append("   loop nest:")
        lines.extend("     " + line for line in str(kernel.nest).splitlines())
        lines.append(f"   source ({os.path.basename(str(kernel_path(source)))}):")
        lines.extend("     " + line for line in kernel_code(source.source).rstrip().splitlines())
    out_kinds = [o.kind for o in plan.outputs]
    if any(k != "buffer" for k in out_kinds):
        lines.append("")
        lines.append("outputs passed through unchanged: " + ", ".join(
            names[o.var] for o in plan.outputs if o.kind != "buffer"
        ))
    return "\n".join(lines)


def segmented_explain_text(name: str, run, why: str | None = None) -> str:
    """A function run with graph breaks: why it runs so (the first reason its trace met), each
    break, then each distinct segment's plan."""
    segments = [b.segment for b in run.breaks] + [run.final]
    distinct = list({id(s): s for s in segments if s is not None}.values())
    lines = [f"numfuse.jit({name}) runs segment by segment: {why}"] if why else []
    lines.append(f"numfuse.jit({name}) runs in {len(run.breaks) + 1} segment(s), {len(distinct)} distinct; "
                 f"graph breaks, in the order this call met them:")
    number = {id(s): k for k, s in enumerate(distinct)}
    runs: list[list] = []  # consecutive breaks at one line ending the same segment: one line
    for b in run.breaks:
        segment = f"segment #{number[id(b.segment)]}" if b.segment is not None else "nothing traced before it"
        text = f"{b} [ends {segment}]"
        if runs and runs[-1][0] == text:
            runs[-1][1] += 1
        else:
            runs.append([text, 1])
    lines.extend(f"   {text}" + (f" x{count}" if count > 1 else "") for text, count in runs)
    if run.on_numpy is not None:
        lines.append(f"   then {run.on_numpy}")
    if run.final is not None:
        lines.append(f"   the function returned [ends segment #{number[id(run.final)]}]")
    lines.append("each break runs what was traced before it, then Python goes on with real values; "
                 "a segment of the same structure is planned and compiled once")
    for k, segment in enumerate(distinct):
        lines.append("")
        lines.append(f"== segment #{k}")
        lines.extend(explain_text(segment).splitlines())
    return "\n".join(lines)


def compiled_for_text(nest) -> str:
    """The choices made from sizes that this kernel's code depends on (strategy's
    `compiled_for`, called from collapse.py): a call whose sizes change one of them compiles another kernel."""
    if not nest.compiled_for:
        return "any sizes of this rank, dtypes and layout (no choice was made from sizes)"
    return "; ".join(nest.compiled_for)


def size_arguments_text(source) -> str:
    """The kernel arguments that carry sizes: one compiled kernel serves other values."""
    parts = []
    for p in source.params:
        if p.kind == "size":
            parts.append(f"{p.name}={p.value}")
        elif p.kind == "count" and not p.name.startswith("const"):  # (constants: a line of their own)
            parts.append(f"{p.name}={p.value.item()!r}")
        elif p.kind == "cache_points":
            parts.append(f"{p.name} (points of a row on chip, set at launch)")
    return ", ".join(parts)


def signature_text(names, key_parts) -> str:
    parts = []
    for name, part in zip(names, key_parts):
        if part[0] in ("np", "dev"):
            parts.append(f"{name}: {part[0]} {np.dtype(part[2]).name}{list(part[1])} {part[3]}")
        elif part[0] == "static":
            parts.append(f"{name}={static_value(part[1])!r:.40}")
        else:
            parts.append(f"{name}: {part[0]} {part[1].__name__ if isinstance(part[1], type) else part[1]}")
    return ", ".join(parts)


def emit_plan(label: str, plan, sources, target) -> None:
    if debug.enabled("plan"):
        debug.emit("plan", label, f"for target {target.name}: {plan}")
    if debug.enabled("code"):
        from .runtime.kernel_files import kernel_path

        for i, source in enumerate(sources):
            debug.emit("code", label, f"kernel #{i} ({kernel_path(source)}):\n{source.source}")
