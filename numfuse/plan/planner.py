"""The fusion planner: a Graph becomes an ordered list of kernels, each a LoopNest.

Rules, in the order they are tried for each value the function returns:

1. A reduction runs in a reduction kernel with every other reduction of the same iteration space
   (input shape and reduced axes) at the same level. Its elementwise producers run inside its loop.
   A reduction that reads another reduction of the same iteration space only broadcast back over
   that reduction's own row (softmax's sum of exp(x - max)) joins its kernel as a later phase: the
   kernel makes one pass over each row per phase, keeping the row on chip when it fits. Any other
   dependence on a reduction puts a reduction one level later, in a later kernel.
2. An elementwise value that needs reductions of level d goes to the epilogue of a level-d
   reduction kernel when it can be evaluated at the kernel's output points, or else to its final
   pass over the row when it has the kernel's full iteration space (softmax's output).
3. An elementwise value of the full iteration space of a later reduction kernel is stored from
   that kernel's loop (a side output; the README's `z, z.sum(axis=1)` is one kernel).
4. Otherwise it goes to a pointwise kernel at its level, shared with every other value at that
   level whose shape broadcasts into the same domain (a smaller output is stored where the axes
   it lacks are 0).

Inside a kernel, elementwise producers are recomputed rather than stored, except that a value
an earlier kernel already wrote is loaded when recomputing it would read more bytes. Every kernel
after the first records why it could not join an earlier one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..errors import UnsupportedError
from ..ir.graph import Eqn, Graph, Literal, Var, var_names
from ..ir.library_ops import IN_PLACE, is_library
from ..loops.loopnest import LoopNest
from ..loops.lower import Lowered, Lowerer, reduction_map
from ..loops.spec import GraphInfo, KernelSpec, NotFusable
from ..ir.ops import is_reduction, is_scan
from .plan_steps import LibraryStep, library_steps_of
from .horizontal import kernel_runs, merged_kernel
from .scans import scans_for_target
from .code_size import stores_for_code_size
from .select_nesting import stores_for_nesting
from .update_chains import merge_update_chains
from ..ir.primitives import VIEWS
from ..ir.indexing import Gathered
from ..ir.viewmaps import (
    STRUCTURAL, IndexMap, concat_pieces, disjoint_points, gather_pieces, identity_map, operand_map, update_map,
)


@dataclass
class Kernel:
    nest: LoopNest
    spec: KernelSpec
    reads: dict[Var, str]  # buffers it loads, and their parameter names
    writes: dict[Var, str]  # buffers it stores
    reason: str
    computed: list = field(default_factory=list)  # the equations it evaluates
    # What the equations it evaluates move run one at a time (see eager_bytes); an equation
    # recomputed in two kernels counts in both.
    unfused_bytes: int = 0
    passes: dict = field(default_factory=dict)  # buffers whose rows do not fit on chip: reads of a row
    notes: list = field(default_factory=list)  # the limits its strategy hit (see explain)
    evaluated: Any = None  # lowering's handoff to collapse (loops/evaluated.py), printable
    # A kernel of several parts (plan/horizontal.py): the kernels it runs, one a part, and
    # each of its buffer parameters' values (a value two parts see through other views is
    # two parameters).
    members: list = field(default_factory=list)
    params: dict = field(default_factory=dict)

    @property
    def buffer_vars(self) -> dict[str, Var]:
        """Each buffer parameter -> the value it holds."""
        if self.params:
            return dict(self.params)
        found = {name: var for var, name in self.reads.items()}
        found.update({name: var for var, name in self.writes.items()})
        return found

    @property
    def bytes_read(self) -> int:
        return sum(round(v.aval.nbytes * self.passes.get(v, 1)) for v in self.reads)

    @property
    def bytes_written(self) -> int:
        return sum(self.written_bytes(v) for v in self.writes)

    def written_bytes(self, var: Var) -> int:
        """What storing `var` writes: an update writes only its region."""
        for member in self.members:
            if var in member.writes:
                return member.written_bytes(var)
        update = self.spec.update
        if update is not None and var is update.out:
            return int(np.prod(update.param("shape"), dtype=np.int64)) * var.aval.dtype.itemsize
        return var.aval.nbytes

    @property
    def bytes_moved(self) -> int:
        return self.bytes_read + self.bytes_written

    @property
    def name(self) -> str:
        return self.nest.name



@dataclass(frozen=True)
class OutputSource:
    """Where a returned value comes from: "buffer" (a kernel wrote it), "input" or "const"."""

    kind: str
    var: Var
    input_index: int = -1


@dataclass
class Plan:
    graph: Graph
    kernels: list[Kernel]
    outputs: list[OutputSource]
    names: dict[Var, str]
    temporaries: list[Var] = field(default_factory=list)
    array_inputs_read: list[Var] = field(default_factory=list)  # by the live equations
    scalar_inputs: frozenset[int] = frozenset()  # input positions passed as kernel scalars
    # Versions of updated arrays -> the value whose buffer they share (an argument, or a new
    # array); the runtime allocates none for them.
    aliases: dict[Var, Var] = field(default_factory=dict)
    # What one pass per operation would move, as NumPy or CuPy run the graph (eager_bytes of
    # every live equation, once): fusion saves unfused_bytes - bytes_moved.
    unfused_bytes: int = 0
    # Every step in the order it runs: the kernels above, and library calls between them.
    steps: list = field(default_factory=list)
    # Choices made while tracing (a product fused or left to the library), for explain.
    notes: list = field(default_factory=list)

    @property
    def library_steps(self) -> list[LibraryStep]:
        return [s for s in self.steps if isinstance(s, LibraryStep)]

    @property
    def bytes_moved(self) -> int:
        """Modeled global-memory traffic: every buffer a kernel reads (once; a buffer whose rows
        do not fit on chip, its uncached part once per phase), plus what it writes; a library
        call, its inputs and outputs once each."""
        return sum(k.bytes_moved for k in self.kernels) + sum(s.bytes_moved for s in self.library_steps)

    @property
    def min_bytes(self) -> int:
        """Each array input the outputs depend on read once, each returned array and each
        argument updated in place written once (an update: only its region)."""
        reads = sum(v.aval.nbytes for v in self.array_inputs_read)
        writers = {v: k for k in self.kernels for v in k.writes}
        written = [o.var for o in self.outputs if o.kind == "buffer"] + list(self.graph.writebacks.values())
        writes = {v: writers[v].written_bytes(v) if v in writers else v.aval.nbytes for v in written}
        return reads + sum(writes.values())


    def __str__(self) -> str:
        calls = f" + {len(self.library_steps)} library call(s)" if self.library_steps else ""
        lines = [f"plan: {len(self.kernels)} kernel(s){calls}, {self.bytes_moved} bytes moved (minimum {self.min_bytes})"]
        i = 0
        for step in self.steps or self.kernels:
            if isinstance(step, LibraryStep):
                lines.append(f"{step.name}: {step.reason}")
            else:
                lines.append(f"#{i} {step.name}: {step.reason}")
                i += 1
        return "\n".join(lines)




def eager_bytes(eqn, producers: dict) -> int:
    """Bytes one operation moves when it runs alone, as in NumPy or CuPy: it reads the arrays
    under its operands and writes its result; broadcasts and transposes are views and move
    nothing themselves."""
    if eqn.prim in VIEWS:
        return 0
    arrays = set()
    for atom in eqn.inputs:
        while isinstance(atom, Var) and atom in producers and producers[atom].prim in VIEWS:
            atom = producers[atom].inputs[0]
        if isinstance(atom, Var) and atom.aval.shape:
            arrays.add(atom)
    return sum(v.aval.nbytes for v in arrays) + eqn.out.aval.nbytes


def _live_eqns(graph: Graph):
    """The equations the outputs and the arguments written into depend on, in order (dead code
    is dropped)."""
    producers = graph.producers()
    live: set[Var] = set()
    stack = [a for a in graph.outputs if isinstance(a, Var)] + list(graph.writebacks.values())
    while stack:
        var = stack.pop()
        if var in live:
            continue
        live.add(var)
        eqn = producers.get(var)
        if eqn is not None:
            stack.extend(a for a in eqn.inputs if isinstance(a, Var))
    return [e for e in graph.eqns if e.out in live]


def _shape_str(shape) -> str:
    return "[" + ",".join(map(str, shape)) + "]"


class Planner:
    def __init__(self, graph: Graph, scalar_inputs: set[int], strided_inputs: set[int], target):
        self.graph = graph
        self.eqns = _live_eqns(graph)
        self.names = var_names(graph)
        self.producers = {e.out: e for e in self.eqns}
        scalar_vars = {v: i for i, v in enumerate(graph.inputs) if i in scalar_inputs}
        buffers = {v for i, v in enumerate(graph.inputs) if i not in scalar_inputs} | set(graph.consts)
        self.info = GraphInfo(graph, self.producers, self.names, scalar_vars, buffers, {}, {})
        self.info.strided = {v for i, v in enumerate(graph.inputs) if i in strided_inputs}
        self.info.target = target
        # Updates: each version's first version (whose buffer it shares), and the values that
        # must be stored for later kernels to load (see _materialize).
        self.temp_for: dict[Var, Var] = {}  # an update's right side computed first -> the update
        self.number: dict[int, int] = {}  # a spec's index -> the kernel it runs in (_merge_runs)
        self._materialize()
        self._materialize_library_inputs()
        # Versions of a strided argument live in its buffer: they are strided too.
        self.info.strided |= {v for v, root in self.info.family.items() if root in self.info.strided}
        # depth: the level of the last kernel whose reductions a value needs (a reduction: its own
        # kernel's level); phase: a reduction's phase within its kernel. A materialized value or
        # an update is written at level store_level and readable from depth on.
        self.depth: dict[Var, int] = {}
        self.phase: dict[Var, int] = {}
        self.store_level: dict[Var, int] = {}
        # (level, domain, axes) -> [its reductions so far, whether any is of a later phase]
        self._group_sizes: dict[tuple, list] = {}
        for e in self.eqns:
            if is_reduction(e.prim):
                self._level_reduction(e)
            elif is_library(e.prim):
                # After every kernel that writes its inputs (or the buffers it views); later
                # kernels load its outputs.
                read = [view[0] if (view := self.library_view(e, k)) is not None else a
                        for k, a in enumerate(e.inputs) if isinstance(a, Var)]
                level = max((self._written_level(a) for a in read), default=0)
                self.store_level[e.out] = level
                self.depth[e.out] = level + 1
            else:
                below = [self.depth.get(a, 0) for a in e.inputs if isinstance(a, Var)]
                level = max(below, default=0)
                if e.out in self.info.materialized:
                    self.store_level[e.out] = level
                    level += 1
                self.depth[e.out] = level
        self.specs: list[KernelSpec] = []
        self.notes: dict[int, list[str]] = {}  # spec position -> why values could not join others
        # The specs by their level, and by index: _place looks at one level's, for each value it
        # places (a loop traced whole has thousands of kernels).
        self._at_level: dict[int, list[KernelSpec]] = {}
        self._by_index: dict[tuple, KernelSpec] = {}

    def _add_spec(self, spec: KernelSpec) -> None:
        self.specs.append(spec)
        self._at_level.setdefault(spec.index[0], []).append(spec)
        self._by_index[spec.index] = spec

    def _written_level(self, var: Var) -> int:
        """The level of the kernel (or library call) that writes `var`'s buffer (0: an argument)."""
        if var in self.store_level:
            return self.store_level[var]
        producer = self.producers.get(var)
        if producer is not None and is_reduction(producer.prim):
            return self.depth[var]
        return 0

    def _materialize_library_inputs(self) -> None:
        """A library call reads whole arrays from memory: each input an equation computes is
        stored by a kernel before it (its producers fused there)."""
        info = self.info
        for e in self.eqns:
            if not is_library(e.prim):
                continue
            info.materialized.add(e.out)
            for position, atom in enumerate(e.inputs):
                if atom in info.scalar_inputs:
                    raise UnsupportedError(
                        f"{self.names[atom]}, a scalar argument, is an operand of {e.prim}: pass it as a 0-d array"
                    )
                if (isinstance(atom, Var) and atom not in info.buffer_inputs and atom.aval.size
                        and self.library_view(e, position) is None):
                    # (An empty input needs no kernel: the runtime allocates its buffer.)
                    info.materialized.add(atom)

    def library_view(self, eqn: Eqn, position: int) -> tuple[Var, tuple[Eqn, ...]] | None:
        """(buffer, the view equations from it to the input, in order) where library call
        `eqn`'s input `position` is a view of an argument or constant (`x.T @ y`,
        `A[:, ::2] @ v`, `np.flip(r) @ y`) or of a version of an updated array
        (`data[:, i] @ data[:, i:]` after `data -= mean`), which the call reads in place, with
        the strides NumPy's call would see; else None. (A version is read while its buffer
        holds it: _check_versions, as for a kernel's loads.) The array a scatter writes is
        such a view only through transposes of an argument (its buffer is written: no
        broadcast, no copying reshape)."""
        var = eqn.inputs[position]
        if not isinstance(var, Var):
            return None
        written = eqn.prim in IN_PLACE and position == 0
        kinds = {"transpose"} if written else VIEWS
        chain = []
        while var not in self.info.buffer_inputs and (written or not chain or var not in self.info.family):
            eqn = self.producers.get(var)
            if eqn is None or eqn.prim not in kinds or var in self.info.materialized:
                return None
            chain.append(eqn)
            var = eqn.inputs[0]
        return (var, tuple(reversed(chain))) if var not in self.info.scalar_inputs else None

    def _materialize(self) -> None:
        """Which values later kernels load rather than recompute: every version of an updated
        array (each update writes its region into the buffer of the array's first version, in
        place), an update's right side that reads the array at points it writes, other than each
        point's own (NumPy evaluates the right side first: it goes to a temporary), and the operand of a
        reshape that NumPy would copy."""
        info = self.info
        # Which arrays that updates write (versions, and the arrays they update) each value may
        # read, as _reads would walk to them: an update's right side is walked only where it
        # may read its own array. (A loop traced whole chains its scalars through every
        # iteration: walking each right side's whole cone took durbin's plan 10 s.)
        written = {v for e in self.eqns if e.prim == "update" or e.prim in IN_PLACE for v in (e.inputs[0], e.out)}
        reaches: dict[Var, frozenset] = {}

        def reached(atom) -> frozenset:
            if not isinstance(atom, Var):
                return frozenset()
            found = reaches.get(atom, frozenset())
            return found | {atom} if atom in written else found

        for e in self.eqns:
            if e.prim == "update" or e.prim in IN_PLACE or is_reduction(e.prim) or is_library(e.prim):
                reaches[e.out] = frozenset()  # (where _reads stops)
            else:
                reaches[e.out] = frozenset().union(*(reached(a) for a in e.inputs))
            if e.prim == "update":
                base = e.inputs[0]
                root = info.family.setdefault(base, base)
                info.family[e.out] = root
                info.materialized.add(e.out)
                if base not in info.buffer_inputs:
                    info.materialized.add(base)
                value = e.inputs[1]
                def reads_root(atom, root=root) -> bool:
                    return any(info.family.get(v) is root for v in reached(atom))

                if isinstance(value, Var) and reads_root(value):
                    target = update_map(e)
                    region = tuple(e.param("shape"))
                    for var, maps in self._reads(value, identity_map(region), reads_root).items():
                        # The array itself read where the update does not write (u[0] = u[1])
                        # needs no temporary either: no point is read after it is written.
                        if info.family.get(var) is root and (var is not base or not all(
                                m == target or disjoint_points(m, target, region, base.aval.shape) for m in maps)):
                            info.materialized.add(value)
                            self.temp_for[value] = e.out
                            break
            elif e.prim in IN_PLACE:
                # A library call writing into the array's buffer (a scatter): a new version.
                base = e.inputs[0]
                info.family[e.out] = info.family.setdefault(base, base)
                info.materialized.add(e.out)
            elif e.prim == "reshape" and e.param("copy") and isinstance(e.inputs[0], Var):
                operand = e.inputs[0]
                if operand not in info.buffer_inputs and not is_reduction(self.producers[operand].prim):
                    info.materialized.add(operand)
        # And what a kernel would otherwise copy into the branches of nested selects.
        self.stored_why = stores_for_nesting(self.eqns, self.producers, info.materialized | info.buffer_inputs)
        info.materialized.update(self.stored_why)
        # And what would make a kernel's code too long to compile quickly, or a scalar's long
        # computation run again at every point.
        sized = stores_for_code_size(self.eqns, self.producers, info.materialized | info.buffer_inputs,
                                     info.target.code_budget, info.target.scalar_budget)
        self.stored_why.update(sized)
        info.materialized.update(sized)

    # -- grouping ------------------------------------------------------------------------------

    def _reads(self, atom, imap: IndexMap, wanted: Callable[[Var], bool] | None = None) -> dict[Var, set[IndexMap]]:
        """What evaluating `atom` at `imap` loads, each with the index maps it is read at:
        argument and constant buffers, reductions, and materialized values. `wanted`: only
        what the values it accepts may read (the walk skips the others)."""
        found: dict[Var, set] = {}
        seen = set()
        stack = [(atom, imap)]
        while stack:
            atom, imap = stack.pop()
            if not isinstance(atom, Var) or (atom, imap) in seen or (wanted is not None and not wanted(atom)):
                continue
            seen.add((atom, imap))
            producer = self.producers.get(atom)
            if (producer is None or is_reduction(producer.prim) or is_library(producer.prim)
                    or atom in self.info.materialized):
                found.setdefault(atom, set()).add(imap)
            elif producer.prim in STRUCTURAL:
                stack.append((producer.inputs[0], operand_map(producer, imap)))
            elif producer.prim == "concatenate":
                stack.extend((a, m) for a, m, _, _ in concat_pieces(producer, imap))
            elif producer.prim == "gather":
                # x at points computed from the index arrays: a key stands for each.
                stack.extend(gather_pieces(producer, imap, lambda j, e=producer: Gathered((e.out.id, j))))
            else:
                stack.extend((a, imap) for a in producer.inputs)
        return found

    def _row_reads(self, eqn) -> dict[Var, set[IndexMap]]:
        """The reductions and materialized values that `eqn` (a reduction) reads, each with the
        index maps it is read at when the input is evaluated over eqn's whole domain."""
        domain = eqn.inputs[0].aval.shape
        found = self._reads(eqn.inputs[0], identity_map(domain))
        return {v: maps for v, maps in found.items() if v in self.producers}

    @staticmethod
    def _row_key(eqn) -> tuple:
        return eqn.inputs[0].aval.shape, eqn.param("axes")

    def _level_reduction(self, eqn) -> None:
        """Level and phase of a reduction (rule 1 of the module docstring)."""
        key = self._row_key(eqn)
        reads = self._row_reads(eqn)
        in_row = {}  # reductions it may read as an earlier phase of its own kernel
        running = {}  # scans it may read at their own points, in their own pass
        level = 1
        for var, maps in reads.items():
            producer = self.producers[var]
            if not is_reduction(producer.prim):
                level = max(level, self.depth[var])  # materialized: written by an earlier level
                continue
            if self._row_key(producer) == key and is_scan(producer.prim) and maps == {identity_map(key[0])}:
                running[var] = self.depth[var]
                level = max(level, self.depth[var])
            elif self._row_key(producer) == key and not is_scan(producer.prim) and \
                    maps == {reduction_map(producer, key[0])}:
                in_row[var] = self.depth[var]
                level = max(level, self.depth[var])
            else:
                level = max(level, self.depth[var] + 1)
        while True:
            earlier = [self.phase[v] + 1 for v, lvl in in_row.items() if lvl == level]
            same = [self.phase[v] for v, lvl in running.items() if lvl == level]
            phase = max(earlier + same, default=0)
            if same and any(p != phase for p in same):
                # A scan's running value is read in the scan's own pass only: a reduction that also
                # needs a later pass (for an earlier phase's result, or another scan's running
                # value of a later pass) reads everything of this row from an earlier kernel.
                level = max([level] + [d + 1 for d in [*in_row.values(), *running.values()]])
                phase = 0
            # A kernel of several phases is not cut into runs as independent reductions are
            # (_reduction_groups): past Target.max_phased_reductions, a reduction goes one level
            # later, reading this level's results from memory.
            group = self._group_sizes.setdefault((level, *key), [0, False])
            if group[0] < self.info.target.max_phased_reductions or not (phase > 0 or group[1]):
                break
            level += 1
        group[0] += 1
        group[1] = group[1] or phase > 0
        self.depth[eqn.out] = level
        self.phase[eqn.out] = phase

    def _reduction_groups(self) -> None:
        """One kernel for the reductions of a level over one domain and axes; of independent
        ones (a single phase), at most Target.max_reductions a kernel."""
        by_key: dict[tuple, list[Eqn]] = {}
        for e in self.eqns:
            if is_reduction(e.prim):
                by_key.setdefault((self.depth[e.out], e.inputs[0].aval.shape, e.param("axes")), []).append(e)
        for (depth, domain, axes), eqns in by_key.items():
            single_phase = all(self.phase[e.out] == 0 for e in eqns)
            size = self.info.target.max_reductions if single_phase else len(eqns)
            for start in range(0, len(eqns), size):
                spec = KernelSpec((depth, 0, len(self.specs)), "reduction", domain, axes, [], [], [])
                self._add_spec(spec)
                for e in eqns[start:start + size]:
                    spec.reductions.append(e)
                    spec.phase_of[e.out] = self.phase[e.out]
                    self.info.owner[e.out] = spec.index

    def _fits(self, var: Var, spec: KernelSpec, where: str) -> str | None:
        """None if `var` can be computed in `spec`'s epilogue (where="epilogue"), final pass
        over the row (where="final") or first pass (where="body": beside a scan, reading its
        running value), else the reason it cannot."""
        trial = KernelSpec(
            spec.index, spec.kind, spec.domain, spec.reduce_axes, spec.reductions,
            spec.body_stores + [var] if where == "body" else [],
            [var] if where == "epilogue" else [], [var] if where == "final" else [], spec.phase_of,
        )
        try:
            Lowerer(trial, self.info).lower()
        except NotFusable as err:
            return str(err)
        return None

    def _place(self, var: Var) -> None:
        eqn = self.producers[var]
        if is_reduction(eqn.prim):
            spec = self._spec_of(self.info.owner[var])
            stores = spec.body_stores if is_scan(eqn.prim) else spec.epilogue_stores
            if var not in stores:
                stores.append(var)
            return
        materialized = var in self.info.materialized
        depth = self.store_level[var] if materialized else self.depth[var]
        refusals = []
        level = self._at_level.get(depth, ())
        for spec in level:
            if spec.kind == "reduction" and spec.domain == var.aval.shape and \
                    any(is_scan(r.prim) for r in spec.reductions):
                # A value of a scan's points: stored from the scan's own pass, as it runs.
                why = self._fits(var, spec, "body")
                if why is not None:
                    before = dict(spec.phase_of)
                    if self._scans_after_rows(var, spec):
                        why = self._fits(var, spec, "body")
                        if why is not None:  # something placed before needs the scans where they were
                            spec.phase_of.update(before)
                            self.phase.update(before)
                if why is None:
                    spec.body_stores.append(var)
                    return
                refusals.append(why)
        for spec in level:
            if spec.kind == "reduction":
                why = self._fits(var, spec, "epilogue")
                if why is None:
                    spec.epilogue_stores.append(var)
                    return
                if spec.domain == var.aval.shape:
                    # A value of the kernel's whole iteration space: a last pass over the row.
                    final_why = self._fits(var, spec, "final")
                    if final_why is None:
                        spec.final_stores.append(var)
                        return
                    why = final_why
                refusals.append(why)
        if not materialized:  # (else later readers need it before a later level's kernels run)
            later = sorted((s for d, specs in self._at_level.items() if d > depth for s in specs
                            if s.kind == "reduction"), key=lambda s: s.index)
            for spec in later:
                if spec.domain == var.aval.shape:
                    spec.body_stores.append(var)
                    return
        shape = var.aval.shape
        for spec in level:
            if spec.kind != "pointwise" or spec.update is not None:
                continue
            try:
                joint = tuple(np.broadcast_shapes(spec.domain, shape))
            except ValueError:
                continue
            if joint == spec.domain or joint == shape:
                spec.domain = joint
                spec.body_stores.append(var)
                self.notes[spec.index[2]].extend(refusals)  # (a spec's index ends with its position)
                return
        index = (depth, 1, len(self.specs))
        self._add_spec(KernelSpec(index, "pointwise", shape, (), [], [var], []))
        self.notes[len(self.specs) - 1] = refusals

    def _scans_after_rows(self, var: Var, spec: KernelSpec) -> bool:
        """Move the scans of `spec` that `var` reads to the pass after the other reductions of
        `spec` it reads (np.cumsum(x, 1) / x.sum(1, keepdims=True): the total in the first pass,
        the running sums and the division in the second), where nothing else reads their
        running values; whether any moved."""
        scans, rows, seen, stack = [], [], set(), [var]
        while stack:
            v = stack.pop()
            if v in seen or not isinstance(v, Var):
                continue
            seen.add(v)
            eqn = self.producers.get(v)
            if eqn is None or v in self.info.materialized:
                continue
            if is_reduction(eqn.prim):
                if self.info.owner.get(v) == spec.index:
                    (scans if is_scan(eqn.prim) else rows).append(v)
                continue
            stack.extend(eqn.inputs)
        if not scans or not rows:
            return False
        after = max(spec.phase_of[r] for r in rows) + 1
        readers = {e.out for e in spec.reductions if any(a in scans for a in e.inputs)}
        movable = [s for s in scans if spec.phase_of[s] < after and not readers and
                   not any(spec.phase_of[r] >= spec.phase_of[s] for r in rows if self._reads_running(r, s))]
        if not movable or len(movable) != len([s for s in scans if spec.phase_of[s] < after]):
            return False
        for s in movable:
            spec.phase_of[s] = self.phase[s] = after
        return True

    def _reads_running(self, reader: Var, scan: Var) -> bool:
        """Whether reduction `reader`'s input is computed from `scan`'s running value."""
        return scan in self._row_reads(self.producers[reader])

    def _spec_of(self, index) -> KernelSpec:
        return self._by_index[index]

    # -- the plan ------------------------------------------------------------------------------

    def plan(self) -> Plan:
        self._reduction_groups()
        for position in range(len(self.specs)):
            self.notes[position] = []
        inputs = set(self.graph.inputs) | set(self.graph.consts)
        placed = set()
        for e in self.eqns:
            if is_library(e.prim):
                placed.add(e.out)  # written by its library call
            elif e.prim == "update":
                # The right side evaluated over the region and stored into it, in place: after
                # every kernel of its level, so after every earlier reader of the old values.
                index = (self.store_level[e.out], 2, len(self.specs))
                spec = KernelSpec(index, "pointwise", e.param("shape"), (), [], [], [], update=e)
                self._add_spec(spec)
                self.notes[len(self.specs) - 1] = []
                placed.add(e.out)
            elif e.out in self.info.materialized and e.out.aval.size > 0:
                self._place(e.out)
                placed.add(e.out)
        for atom in dict.fromkeys(a for a in self.graph.outputs if isinstance(a, Var)):
            # An empty output needs no kernel: the runtime only allocates it.
            if atom not in inputs and atom not in placed and atom.aval.size > 0:
                self._place(atom)
        order = sorted(range(len(self.specs)), key=lambda i: self.specs[i].index)
        specs = [self.specs[i] for i in order]
        notes = [self.notes.get(i, []) for i in order]
        # Library calls run after every kernel of their level (index (level, 3, position)).
        library = []
        for position, group in enumerate(library_steps_of(self.eqns)):
            index = (self.store_level[group[0].out], 3, position)
            after = sum(1 for s in specs if s.index < index)
            views = {a: self.library_view(group[0], k) for k, a in enumerate(group[0].inputs)
                     if a not in self.info.buffer_inputs}
            views = {a: view for a, view in views.items() if view is not None}
            library.append(LibraryStep(group, after, stored_inputs=[
                a for a in group[0].inputs if a not in self.info.buffer_inputs and a not in views
            ], views=views))
        renumber = {s.index: i for i, s in enumerate(specs)}
        for s in specs:
            s.index = renumber[s.index]
        self.info.owner = {v: renumber[i] for v, i in self.info.owner.items()}
        # Lower until every reduction result that a later kernel loads is stored by its owner.
        while True:
            # A library call's outputs count as stored between the kernels it runs between.
            self.info.stored_by = {v: step.after - 0.5 for step in library for v in step.outputs}
            for s in specs:
                for v in s.body_stores + s.final_stores + s.epilogue_stores:
                    self.info.stored_by.setdefault(v, s.index)
                if s.update is not None:
                    self.info.stored_by.setdefault(s.update.out, s.index)
            lowered = [Lowerer(s, self.info).lower() for s in specs]
            missing = [(v, self.info.owner[v]) for low in lowered for v in low.external if v not in self.info.stored_by]
            if not missing:
                break
            for var, owner in missing:
                stores = specs[owner].body_stores if is_scan(self.producers[var].prim) else specs[owner].epilogue_stores
                if var not in stores:
                    stores.append(var)
        kernels = [
            Kernel(
                low.nest, s, low.reads, low.writes, "",
                low.vars_computed, sum(eager_bytes(e, self.producers) for e in low.vars_computed),
                low.passes, low.notes, low.evaluated,
            )
            for s, low in zip(specs, lowered)
        ]
        # Each library call right before the first kernel after it; calls between the same two
        # kernels in their order (the library's indices: level, then trace order).
        steps = []
        pending = sorted(library, key=lambda step: (step.after, library.index(step)))
        for position in range(len(kernels) + 1):
            while pending and pending[0].after == position:
                steps.append(pending.pop(0))
            if position < len(kernels):
                steps.append(kernels[position])
        self._check_versions(steps)
        steps, kernels = self._merge_runs(steps, kernels, specs, lowered, notes)
        for step in library:
            step.reason = self._library_reason(step)
        outputs = [self._output_source(a) for a in self.graph.outputs]
        returned = {o.var for o in outputs}
        temporaries = [v for v in self.info.stored_by if v not in returned and v not in self.info.family]
        # The array an update writes into is not read: its other points stay where they are.
        used = {
            a for e in self.eqns for k, a in enumerate(e.inputs)
            if isinstance(a, Var) and not (e.prim == "update" and k == 0)
        }
        everything = list(self.graph.inputs) + list(self.graph.consts)
        arrays_read = [v for v in everything if v in self.info.buffer_inputs and v in used]
        scalars = frozenset(self.info.scalar_inputs.values())
        unfused = sum(eager_bytes(e, self.producers) for e in self.eqns)
        aliases = {v: root for v, root in self.info.family.items() if v is not root}
        return Plan(self.graph, kernels, outputs, self.names, temporaries, arrays_read, scalars, aliases, unfused,
                    steps, list(self.graph.notes))

    def _merge_runs(self, steps, kernels, specs, lowered, notes):
        """Runs of pointwise kernels over disjoint points become one kernel each (horizontal.py);
        every kernel's reason is written with the kernels numbered as they then run."""
        runs, refused = kernel_runs(steps, self.info.family, self.names, self.info.target)
        count = 0
        for run in runs:
            if isinstance(run[0], Kernel):
                for k in run:
                    self.number[k.spec.index] = count
                count += 1
        merged_steps, merged_kernels = [], []
        for run in runs:
            if not isinstance(run[0], Kernel):
                run[0].after = len(merged_kernels)
                merged_steps.append(run[0])
                continue
            first = run[0].spec.index
            whats = [self._what(specs[k.spec.index], lowered[k.spec.index]) for k in run]
            whys = self._split_reasons(specs[first], lowered[first], specs,
                                       notes[first] + ([refused[id(run[0])]] if id(run[0]) in refused else []))
            reason = "; and ".join(whats)
            if len(run) > 1:
                reason += f" ({len(run)} parts of one kernel: they touch no common point)"
            if whys:
                reason += "; split because " + "; ".join(whys)
            if len(run) == 1:
                kernel = run[0]
                kernel.reason = reason
            else:
                kernel = merged_kernel(run, reason, Kernel)
            merged_steps.append(kernel)
            merged_kernels.append(kernel)
        return merged_steps, merged_kernels

    def _library_reason(self, step: LibraryStep) -> str:
        n = self.names
        outs = ", ".join(n[v] for v in step.outputs)
        ins = ", ".join(n[v] for v in step.inputs)
        text = f"{step.op.what}: {outs} = {step.prim} {ins}; a library call (numfuse generates no loop nest for it)"
        stored = [f"{n[v]} from {_writer_text(self._kernel_of(self.info.stored_by.get(v)))}" for v in step.stored_inputs]
        if stored:
            text += f"; reads {', '.join(stored)}, its producers fused there"
        viewed = [f"{n[v]} as a view of {n[base]}" for v, (base, _) in step.views.items()]
        if viewed:
            text += f"; reads {', '.join(viewed)}, in place"
        return text

    def _check_versions(self, kernels) -> None:
        """Updates write into a buffer that every version of the array shares: no kernel may
        load a version after a later one was written, and what is returned must be the latest."""
        family = self.info.family
        current = {root: root for root in family.values()}
        n = self.names
        found: list[tuple[str, Var]] = []  # every read of an overwritten version, in order
        for i, k in enumerate(kernels):
            if isinstance(k, LibraryStep):
                for var in k.buffers_read:
                    if var in family and current[family[var]] is not var:
                        found.append((f"{k.name} would read {n[var]} after its buffer was overwritten in place "
                                      f"by a later version ({n[current[family[var]]]})", var))
                for var in k.outputs:
                    if var in family:  # written in place: the array's new version
                        current[family[var]] = var
                continue
            update = k.spec.update
            for var in k.reads:
                if var in family and current[family[var]] is not var:
                    found.append((f"reading an array's values after they were overwritten in place: "
                                  f"{self._where(var, 'the values')} are read by "
                                  f"{self._readers_text(k, var)}, after "
                                  f"{self._where(current[family[var]], 'the write')}", var))
            if update is not None:
                current[family[update.out]] = update.out
        for var in list(self.graph.outputs) + list(self.graph.writebacks.values()):
            if var in family and current[family[var]] is not var:
                found.append((f"{n[var]} is returned, but its buffer was overwritten by a later update", var))
        if found:
            raise OverwrittenRead(found[0][0], [var for _, var in found])

    def _where(self, var: Var, what: str) -> str:
        """`what` with the user's line that made `var` (the write, or the values)."""
        eqn = self.producers.get(var)
        loc = eqn.loc if eqn is not None else None
        return f"{what} at {loc} ({loc.text})" if loc is not None else what

    def _readers_text(self, kernel, var: Var) -> str:
        lines = {str(e.loc): e.loc.text for e in kernel.computed if e.loc is not None and var in e.inputs}
        if not lines:
            return "a later line"
        return ", ".join(f"{place} ({text})" for place, text in lines.items())

    def _output_source(self, atom) -> OutputSource:
        assert not isinstance(atom, Literal)
        if atom in self.graph.consts:
            return OutputSource("const", atom)
        if atom in self.graph.inputs:
            return OutputSource("input", atom, self.graph.inputs.index(atom))
        for position, final in self.graph.writebacks.items():
            if final is atom:
                # The argument itself, written into in place: returned as it was passed.
                return OutputSource("input", atom, position)
        return OutputSource("buffer", atom)

    def _what(self, spec: KernelSpec, low: Lowered) -> str:
        """What the kernel of `spec` computes and writes."""
        n = self.names
        if spec.update is not None:
            u = spec.update
            base = n[self.info.family[u.out]]
            what = f"update {n[u.out]} = {n[u.inputs[0]]} with region {_shape_str(spec.domain)} set, in place in {base}'s buffer"
        elif spec.kind == "pointwise":
            what = f"elementwise over {_shape_str(spec.domain)}"
        else:
            prims = ", ".join(f"{e.prim} {n[e.out]}" for e in spec.reductions)
            along = "along" if all(is_scan(e.prim) for e in spec.reductions) else "over"
            what = f"{prims} {along} axes {spec.reduce_axes} of {_shape_str(spec.domain)}"
        stores = ", ".join(n[v] for v in low.writes)
        text = f"{what}; writes {stores}"
        for v in low.writes:
            if v in self.temp_for:
                text += (
                    f" (a temporary: the right side of {n[self.temp_for[v]]} reads the array it "
                    f"writes at other points, and NumPy evaluates the right side first)"
                )
        return text

    def _split_reasons(self, spec: KernelSpec, low: Lowered, specs, notes) -> list[str]:
        """Why the kernel of `spec` could not join the kernel before it (none for the first),
        with kernels numbered as they run (self.number)."""
        n = self.names
        number = self.number
        if number[spec.index] == 0:
            return []
        needs = sorted({self.info.owner[v] for v in low.external} | {
            self.info.stored_by[v] for v in low.reads if v in self.info.stored_by
        })
        whys = []
        if needs:
            used = ", ".join(
                f"{n[v]} from " + _writer_text(self._kernel_of(self.info.stored_by.get(v, self.info.owner.get(v))))
                for v in low.reads
                if v in self.info.stored_by
            )
            whys.append(f"it reads {used}, written by an earlier kernel")
            whys.extend(f"{n[v]} is stored because {self.stored_why[v]}" for v in low.reads if v in self.stored_why)
        whys.extend(notes)
        if not whys and spec.update is not None:
            whys.append("an update writes into the array's buffer after every kernel before it has read the old values")
        if not whys:
            earlier = specs[spec.index - 1]
            if spec.kind == "reduction" and earlier.kind == "reduction":
                whys.append(
                    f"its iteration space ({_shape_str(spec.domain)} reduced over {spec.reduce_axes}) "
                    f"differs from #{number[earlier.index]}'s ({_shape_str(earlier.domain)} reduced over {earlier.reduce_axes})"
                )
            elif spec.kind == "pointwise":
                whys.append(f"its domain {_shape_str(spec.domain)} matches no earlier kernel's loop")
            else:
                whys.append(f"its domain {_shape_str(spec.domain)} differs from #{number[earlier.index]}'s")
        return list(dict.fromkeys(whys))

    def _kernel_of(self, index):
        """The kernel a spec's index runs in; a library call's place (not an int) as it is."""
        return self.number.get(index, index)


def _writer_text(index) -> str:
    """Who wrote a buffer: kernel #i, or a library call (stored_by between two kernels)."""
    return f"#{index}" if isinstance(index, int) else "a library call"


class OverwrittenRead(UnsupportedError):
    """Internal: the plan would read each of `vars` (the first one's read described) after an
    update overwrote its buffer."""

    def __init__(self, message: str, vars: list[Var]):
        super().__init__(message)
        self.vars = list(dict.fromkeys(vars))


def keep_old_values(graph: Graph, var: Var) -> Graph:
    """`graph` with the update that overwrites `var`'s buffer writing into a copy of it
    instead: `var` keeps its values for the reads that come after that update, and the versions
    after it are a new array (an argument's last version is still written back)."""
    eqns = list(graph.eqns)
    for k, eqn in enumerate(eqns):
        if eqn.inputs and eqn.inputs[0] is var and (eqn.prim == "update" or eqn.prim in IN_PLACE):
            copy = Var(var.aval)
            eqns[k:k + 1] = [Eqn("convert", (var,), copy, (("dtype", var.aval.dtype),), eqn.loc),
                             Eqn(eqn.prim, (copy,) + tuple(eqn.inputs[1:]), eqn.out, eqn.params, eqn.loc)]
            return Graph(graph.inputs, eqns, graph.outputs, graph.consts, graph.name, graph.writebacks,
                         graph.notes + [f"{eqn.loc.short() if eqn.loc else 'an update'}: the array's old values "
                                        "are read after this write, which goes into a copy of it"])
    raise AssertionError(f"no update overwrites {var}")


def plan(graph: Graph, scalar_inputs: set[int] = frozenset(), strided_inputs: set[int] = frozenset(), *,
         target) -> Plan:
    """Plan `graph` for `target` (targets/base.py: what its strategy asks of the hardware). `scalar_inputs`: positions of inputs passed as kernel scalars, not buffers;
    `strided_inputs`: array inputs that are not C-contiguous (read through their strides).

    Where the kernels would read an array's values after an update overwrote them in place
    (NumPy read them before), that update writes into a copy instead and the graph is planned
    again: in place where the order allows, a copy only where a later read needs the old values."""
    graph = scans_for_target(merge_update_chains(graph), target)
    for attempt in range(len(graph.eqns) + 1):
        try:
            return Planner(graph, set(scalar_inputs), set(strided_inputs), target).plan()
        except OverwrittenRead as read:
            # One copy at a time while there are few (a copy may reorder the kernels so that
            # another is not needed: the fewest bytes); then every read found at once, so that a
            # loop of many such updates plans a few times, not once per update.
            for var in read.vars[:1] if attempt < ONE_COPY_AT_A_TIME else read.vars:
                graph = keep_old_values(graph, var)
    raise AssertionError("keep_old_values did not converge")


# Replans that add one copy each before every overwritten read found is copied at once.
ONE_COPY_AT_A_TIME = 3
