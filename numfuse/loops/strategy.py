"""How a reduction kernel uses its target: its schedule (rows or columns), which inputs it keeps
near the cores between phases and how much of each row fits, whether few long rows are split across
blocks, and when softmax's sum joins its maximum's pass (the online softmax). Each decision is
a function of the planned kernel's shapes and dtypes, so `plan()` and `explain` can print it;
targets/cuda/launch_model.py picks the thread counts with the same limits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..ir import indexing
from ..ir.graph import Var
from .loopnest import Guard, Load, Select, Store
from ..ir.ops import is_reduction

if TYPE_CHECKING:
    from .evaluated import Evaluated
    from .spec import GraphInfo, KernelSpec


# What a target decides (its row cache, when it splits a reduction) comes from the Target the
# plan is made for (targets/base.py), through GraphInfo.target; nothing here is a device's number.


def online_softmax_pairs(spec: KernelSpec, info: GraphInfo, any_length: bool = False) -> dict[Var, Var]:
    """{S: M} for each sum S = sum(exp(g - M)) of this kernel whose M = max(g) (same g, same
    axes) runs one phase earlier, when g's row is too long for the on-chip cache: then S can be
    accumulated in M's pass, rescaled whenever the maximum grows (the "online softmax").
    `any_length`: the pairs that would qualify whatever the row's length."""
    if spec.kind != "reduction":
        return {}
    row_length = int(np.prod([spec.domain[a] for a in spec.reduce_axes], dtype=np.int64))
    owned = {eqn.out: eqn for eqn in spec.reductions}
    producers = info.producers
    pairs = {}
    for eqn in spec.reductions:
        if eqn.prim != "reduce_sum" or eqn.out.aval.dtype.kind != "f" or eqn.out.aval.dtype.itemsize < 4:
            continue
        exp = producers.get(eqn.inputs[0])
        if exp is None or exp.prim != "exp":
            continue
        sub = producers.get(exp.inputs[0])
        if sub is None or sub.prim != "subtract" or not isinstance(sub.inputs[1], Var):
            continue
        g, m = sub.inputs[0], sub.inputs[1]
        broadcast = producers.get(m)
        if broadcast is not None and broadcast.prim == "broadcast":
            m = broadcast.inputs[0]
        max_eqn = owned.get(m)
        if (
            max_eqn is None
            or max_eqn.prim != "reduce_max"
            or max_eqn.inputs[0] is not g
            or max_eqn.out.aval.dtype != eqn.out.aval.dtype
            or spec.phase_of.get(eqn.out, 0) != spec.phase_of.get(m, 0) + 1
            or max_eqn.param("keepdims") != eqn.param("keepdims") and broadcast is None
        ):
            continue
        if row_length * _row_item_bytes(g, info) <= info.target.row_cache_bytes and not any_length:
            continue  # the row stays on chip: three exact passes cost one read
        if m in pairs.values():
            continue  # the max already carries one online sum; another one keeps its own pass
        pairs[eqn.out] = m
    return pairs


def online_choice(spec: KernelSpec, info: GraphInfo, online: dict[Var, Var]) -> str | None:
    """How the row's length decided the online softmax, for `explain`'s "compiled for"."""
    candidates = online_softmax_pairs(spec, info, any_length=True)
    if not candidates:
        return None
    row_length = int(np.prod([spec.domain[a] for a in spec.reduce_axes], dtype=np.int64))
    producers = info.producers
    g = producers[producers[producers[next(iter(candidates))].inputs[0]].inputs[0]].inputs[0]  # exp(g - M)
    row_bytes = row_length * _row_item_bytes(g, info)
    cache = info.target.row_cache_bytes
    if online:
        return (f"online softmax: yes (a row of {row_bytes} bytes exceeds the {cache}-byte "
                f"row cache; rows that fit make three exact passes, another kernel)")
    return (f"online softmax: no (a row of {row_bytes} bytes fits the {cache}-byte row "
            f"cache; longer rows accumulate the sum in the maximum's pass, another kernel)")


def choose_split(phases, outer_size: int, inner_size: int, target) -> tuple[bool, str | None]:
    """Whether a reduction spreads each row over several workers (few long rows: one worker
    per row would leave most of the target idle), and the reason, for `explain`'s "compiled
    for"."""
    max_rows, min_reduced = target.split_max_rows, target.split_min_reduced
    if any(a.running for p in phases for a in p.accumulators):
        return False, "split: no (a scan runs through each row in order)"
    if len(phases) != 1 or any(a.partner for a in phases[0].accumulators):
        return False, None  # only single-pass reductions split: phases need the whole row
    if outer_size < max_rows and inner_size >= min_reduced:
        return True, (f"split: yes ({outer_size} row(s), fewer than {max_rows}, of {inner_size} "
                      f"points, {min_reduced} or more)")
    why = (f"{outer_size} rows, {max_rows} or more" if outer_size >= max_rows
           else f"rows of {inner_size} points, fewer than {min_reduced}")
    return False, f"split: no ({why}; fewer than {max_rows} rows of {min_reduced} or more points split)"


def _row_item_bytes(var: Var, info: GraphInfo) -> int:
    """Bytes per point of the buffers `var` is computed from (through elementwise work)."""
    seen, stack, total = set(), [var], 0
    while stack:
        v = stack.pop()
        if not isinstance(v, Var) or v in seen:
            continue
        seen.add(v)
        if v in info.buffer_inputs:
            total += v.aval.dtype.itemsize
            continue
        eqn = info.producers.get(v)
        if eqn is not None and not is_reduction(eqn.prim):
            stack.extend(eqn.inputs)
    return total


def merged_phases(spec: KernelSpec, online: dict[Var, Var]) -> dict[Var, int]:
    """The reductions' phases once each online sum runs in its maximum's phase, with phases
    left empty removed."""
    phase_of = dict(spec.phase_of)
    for s, m in online.items():
        phase_of[s] = phase_of.get(m, 0)
    used = sorted(set(phase_of.values()))
    renumber = {p: k for k, p in enumerate(used)}
    return {v: renumber[p] for v, p in phase_of.items()}


def _loads_by_phase(phases) -> dict[str, list[tuple[int, tuple]]]:
    """buffer -> [(phase, index)] for every load, guards included; the index of a load inside a
    select's branch is None (it runs at some points of the row only: never cached)."""
    found: dict[str, list] = {}

    def visit(stmts, k, branch=False):
        for s in stmts:
            if isinstance(s, Load):
                found.setdefault(s.buffer, []).append((k, None if branch else s.index))
            elif isinstance(s, Guard):
                visit(s.body, k, branch)
            elif isinstance(s, Select):
                for body, _ in s.branches:
                    visit(body, k, True)

    for k, phase in enumerate(phases):
        visit(phase.body, k)
    return found


def cache_min_rows(schedule: str, rows: int, row_bytes: int, column_cache_rows: int, row_cache_bytes: int) -> int:
    """The fewest rows a block caches at once. A "columns" block keeps `column_cache_rows` (the
    target's) neighbouring outputs, so that each memory access covers a whole sector, unless
    fewer of them let whole columns fit in `row_cache_bytes` (reading them once beats reading
    them coalesced)."""
    if schedule != "columns":
        return 1
    wanted = min(column_cache_rows, 1 << max(0, rows - 1).bit_length())
    fit = row_cache_bytes // row_bytes if row_bytes else wanted
    if fit >= wanted or fit < 1:
        return wanted
    return 1 << (fit.bit_length() - 1)  # the most whole columns that fit, a power of two


def choose_cache(phases, buffers, inner, outer, schedule, target) -> tuple[tuple[str, ...], dict[str, float], list[str]]:
    """Which buffers a multi-phase kernel keeps on chip, so that it reads them from memory once:
    those loaded in several phases at points that differ from row to row and along the row.
    Returns (cached, {buffer: reads of its rows, where more than one}, notes)."""
    row_length = int(np.prod([d.size for d in inner], dtype=np.int64))
    inner_names = {d.name for d in inner}
    outer_names = {d.name for d in outer}
    dtypes = {b.name: b.dtype for b in buffers}
    candidates = []
    for buffer, loads in _loads_by_phase(phases).items():
        phases_reading = {k for k, _ in loads}
        indices = {index for _, index in loads}
        if len(phases_reading) < 2 or None in indices:
            continue
        index = next(iter(indices))
        used = set().union(*(indexing.variables(e) for e in index if not isinstance(e, int)))
        varies = inner_names & used and (not outer_names or outer_names & used)
        if len(indices) == 1 and varies:
            candidates.append((buffer, len(phases_reading)))
    # Every candidate is cached; a row too long for the cache keeps its first `capacity`
    # points on chip and reads the rest from memory in every phase.
    cached = [buffer for buffer, _ in candidates]
    item_bytes = sum(dtypes[b].itemsize for b in cached)
    outputs = int(np.prod([d.size for d in outer], dtype=np.int64))
    rows = cache_min_rows(schedule, outputs, row_length * item_bytes, target.column_cache_rows, target.row_cache_bytes)
    capacity = min(row_length, target.row_cache_bytes // (rows * item_bytes)) if item_bytes else row_length
    passes, notes = {}, []
    if capacity < row_length:
        rest = row_length - capacity
        for buffer, count in candidates:
            passes[buffer] = 1 + (count - 1) * rest / row_length
        names = ", ".join(cached)
        notes.append(
            f"a row of {names} ({row_length} points, {row_length * item_bytes} bytes) does not fit "
            f"the {target.row_cache_bytes}-byte {target.row_cache_place} row cache"
            + (f" ({rows} neighbouring outputs share it, for coalesced reads)" if rows > 1 else "")
            + f": its first {capacity} points stay on "
            f"chip and the other {rest} are read from memory in each of the "
            f"{max(c for _, c in candidates)} phases that use them "
            f"({max(passes.values()):.2f} reads of the row instead of 1)"
        )
    # Widest first, so that every cached row starts aligned in the one shared-memory block.
    cached.sort(key=lambda b: -dtypes[b].itemsize)
    return tuple(cached), passes, notes


def choose_schedule(spec: KernelSpec, outer, chains) -> str:
    """How a target should spread the loops over threads (see targets/cuda/codegen.py): for a pointwise
    kernel "flat" with one loop, "2d" with several (the last loop across threads, the others
    once per row: the same code for every size, only the launch's block shape changes); for a
    reduction, "rows" when the innermost axis is reduced (neighbouring threads read
    neighbouring points of one row) and "columns" when it is kept (neighbouring threads read
    neighbouring outputs' points, so column reductions read memory coalesced). Innermost in
    memory, that is: where the largest buffer is read through a transpose (x.T.sum(axis=1)),
    the axis along which it is contiguous decides, not the domain's last; where the largest is
    an output (a short sum broadcast over many outputs: `x @ w` for x of 3 columns), its last
    axis, a kept one, does."""
    if spec.kind == "pointwise":
        return "2d" if len(outer) > 1 else "flat"
    innermost_reduced = bool(chains) and chains[-1][0] in spec.reduce_axes
    contiguous = _contiguous_axis(spec)
    if contiguous is not None:
        innermost_reduced = contiguous in spec.reduce_axes
    return "rows" if not outer or innermost_reduced else "columns"


def _contiguous_axis(spec: Evaluated) -> int | None:
    """The domain axis along which the kernel's largest buffer (one in C order, read or written
    at plain indices; of the largest, the first the kernel uses) is contiguous in memory,
    or None."""
    sizes = {n: v.aval.size for v, n in {**spec.writes, **spec.reads}.items() if v not in spec.strided}
    best = None
    for name, imap in spec.maps:
        if name not in sizes or not all(indexing.is_plain(e) for e in imap):
            continue
        shape = spec.buffer_var(name).aval.shape
        last = next((e for e, size in zip(reversed(imap), reversed(shape)) if size != 1), None)
        if isinstance(last, int) and (best is None or sizes[name] > best[0]):
            best = (sizes[name], last)
    return None if best is None else best[1]


def compiled_for(domain, reduce_axes, chains, full, phases, epilogue, choices, counts) -> tuple[str, ...]:
    """The choices made from sizes that a kernel's code depends on, in words, for `explain`: a
    size that changes one of them compiles another kernel; every other size is a kernel
    argument. `chains`: the collapsed loop dimensions (collapse.collapse_axes); `full`: buffers
    indexed at their own rank; `choices`: the online softmax's and the split's texts (or None)."""
    said = []
    ones = [a for a, s in enumerate(domain) if s == 1]
    if ones:
        said.append(
            f"axes of length 1: {','.join(map(str, ones))} (NumPy broadcasts them, so they index "
            f"nothing; another length makes them loops)"
        )
    if any(domain[a] == 0 for a in range(len(domain)) if a not in reduce_axes):
        said.append("an empty axis: no output points, so the kernel is never launched (nor compiled)")
    for chain in chains:
        if len(chain) > 1:
            said.append(f"axes {','.join(map(str, chain))} collapsed into one loop (contiguous in every buffer)")
    if full:
        said.append(f"indexed at their own rank: {', '.join(sorted(full))} (strided, or read at computed points)")
    constants = sorted({
        f"{s.buffer}[{', '.join(map(str, s.index))}]"
        for s in _walk(tuple(st for p in phases for st in p.body) + tuple(epilogue))
        if isinstance(s, (Load, Store)) and any(_coded_constant(e) for e in s.index)
    })
    if constants:
        said.append(
            "steps and reshaped sizes in indices: " + ", ".join(constants)
            + " (part of the code; their offsets are arguments)"
        )
    said.extend(c for c in choices if c)
    for c in counts:
        if c.dtype.itemsize < 8 and c.dtype.kind == "f" and not c.coefficient:
            said.append(
                f"{c.name} in {c.dtype.name} (exact up to 2**{np.finfo(c.dtype).nmant + 1}; a "
                f"larger count divides in float64 as NumPy does, another kernel)"
            )
    return tuple(said)


def _coded_constant(entry) -> bool:
    """Whether an index has a constant in its code: a coefficient other than 1 and -1 (a step
    of a slice, a size of a reshape), or a reshape's division. Offsets are kernel arguments."""
    if isinstance(entry, indexing.DivMod):
        return True
    if isinstance(entry, indexing.Lin):
        return any(abs(c) != 1 or _coded_constant(v) for v, c in entry.terms)
    return isinstance(entry, int) and entry != 0


def _walk(stmts):
    for s in stmts:
        yield s
        if isinstance(s, Guard):
            yield from _walk(s.body)
