"""Lowering: one planned kernel of the graph becomes a LoopNest.

Values are evaluated at index maps. An index map gives, for each dimension of a value, the domain
axis that indexes it, or None where the value has size one there (broadcast). Elementwise
operations pass their map to their operands; `broadcast` drops axes; `transpose` permutes them;
a reduction owned by the kernel is its accumulator, readable in later phases, in the final pass
and in the epilogue, and only at its own row's points. So a whole DAG of elementwise work,
broadcasts and transposes evaluates inside one loop nest, each (value, map) computed once per
phase.

Afterwards collapse.py turns the evaluated statements, indexed by domain axes, into the
LoopNest: adjacent domain axes that every buffer reads contiguously and in order are collapsed
into one loop dimension (as CuPy's reduce_dims does), so a contiguous elementwise kernel indexes
with one flat index and no division.
"""

from __future__ import annotations

import math
from collections import ChainMap
from dataclasses import dataclass

import numpy as np

from .collapse import build_nest
from .evaluated import Evaluated
from .spec import GraphInfo, KernelSpec, NotFusable
from ..ir.dtypes import short_name
from ..ir.indexing import Gathered, Lin, interval, is_var, variables
from ..ir.graph import Atom, Eqn, Literal, SizeConst, Var
from .loopnest import Accumulate, Accumulator, Check, Compute, Guard, Iota, Load, LoopNest, OnlineAccumulate, Select, Store
from ..ir.ops import ELEMENTWISE, GATHER_CHECK, REDUCTIONS, is_reduction, is_scan
from .strategy import merged_phases, online_choice, online_softmax_pairs
from ..ir.viewmaps import (
    STRUCTURAL, IndexMap, broadcast_map, concat_pieces, disjoint_points, gather_pieces, identity_map, operand_map,
    update_map,
)


@dataclass
class Lowered:
    nest: LoopNest
    reads: dict[Var, str]  # buffers loaded: their parameter names
    writes: dict[Var, str]  # buffers stored
    external: dict[Var, None]  # reduction results this kernel loads from earlier kernels, in load order
    vars_computed: list[Eqn]
    passes: dict[Var, float]  # buffers whose rows do not fit on chip: reads of each row
    notes: list[str]  # the strategy's limits, for explain
    evaluated: Evaluated  # what collapse.py was handed (printable: Evaluated.format)


def reduction_map(eqn: Eqn, domain: tuple[int, ...]) -> IndexMap:
    """Canonical map of a reduction's result: its kept dimensions are the domain's kept axes."""
    axes = eqn.param("axes")
    if eqn.param("keepdims"):
        return tuple(None if a in axes or s == 1 else a for a, s in enumerate(domain))
    return tuple(a if s != 1 else None for a, s in enumerate(domain) if a not in axes)


def epilogue_map(var: Var, eqn: Eqn, domain: tuple[int, ...]) -> IndexMap | None:
    """Where `var` sits in a reduction kernel's epilogue: the shape of its reductions' results."""
    axes = eqn.param("axes")
    kept = tuple(s for a, s in enumerate(domain) if a not in axes)
    with_ones = tuple(1 if a in axes else s for a, s in enumerate(domain))
    if var.aval.shape == kept:
        return tuple(a if s != 1 else None for a, s in enumerate(domain) if a not in axes)
    if var.aval.shape == with_ones:
        return tuple(None if a in axes or s == 1 else a for a, s in enumerate(domain))
    return None


class Lowerer:
    def __init__(self, spec: KernelSpec, info: GraphInfo):
        self.spec = spec
        self.info = info
        self.domain = spec.domain
        self.owned = {eqn.out: i for i, eqn in enumerate(spec.reductions)}
        self.counter = 0
        self.reads: dict[Var, str] = {}
        self.writes: dict[Var, str] = {}
        self.scalars: dict[tuple[int, np.dtype], str] = {}
        # Size constants and the formula's constants (_constant): kernel arguments.
        self.counts: dict[tuple, tuple[str, Literal]] = {}
        self.constants = 0  # the formula's constants so far
        # Ordered (a dict, not a set: Vars hash by identity) so that the stores the planner adds
        # for them, and so the kernel's code, are the same in every process.
        self.external: dict[Var, None] = {}
        self.computed: list[Eqn] = []
        self.maps: list[tuple[str, IndexMap]] = []  # every (buffer, map) used: for collapsing
        self.loaded: list[tuple[Var, IndexMap]] = []  # every (buffer value, map) loaded
        self.own_stores = set(spec.body_stores) | set(spec.final_stores) | set(spec.epilogue_stores)
        self.checked = False  # whether any statement tests a runtime check
        self.selects: list = []  # the index entry every Select branches on
        self.phase_of: dict[Var, int] = dict(spec.phase_of)  # after online softmax merges (lower)
        self.online_notes: list[str] = []
        self.online_choice: str | None = None  # for compiled_for

    # -- values --------------------------------------------------------------------------------

    def fresh(self) -> str:
        self.counter += 1
        return f"v{self.counter - 1}"

    def buffer_name(self, var: Var, role: str) -> str:
        table = self.reads if role == "in" else self.writes
        if var not in table:
            table[var] = f"{role}_{self.info.names[var]}"
        return table[var]

    def value(self, atom: Atom, imap: IndexMap, scope: dict, out: list, phase: int):
        """`atom` evaluated at `imap`: a Literal or a kernel variable's name."""
        if isinstance(atom, SizeConst):
            return self._count(atom)
        if isinstance(atom, Literal):
            return atom
        key = (atom, imap)
        # Operands first, deepest first, on an explicit stack: a traced graph can be thousands
        # of operations deep, deeper than Python's recursion limit.
        stack = [key]
        while stack:
            var, m = stack[-1]
            if (var, m) in scope:
                stack.pop()
                continue
            pending = [dep for dep in self._operands(var, m) if dep not in scope]
            if pending:
                stack.extend(reversed(pending))  # the first operand is evaluated first
                continue
            stack.pop()
            scope[var, m] = self._evaluate(var, m, scope, out, phase)
        return scope[key]

    def _operands(self, var: Var, imap: IndexMap) -> list[tuple[Var, IndexMap]]:
        """The (value, map) pairs that evaluating `var` at `imap` reads (see _evaluate)."""
        info = self.info
        if var in info.scalar_inputs or var in info.buffer_inputs:
            return []
        eqn = info.producers[var]
        if is_reduction(eqn.prim) or self._loads_materialized(var) or self._loads_stored(var) or not eqn.inputs:
            return []
        operand = eqn.inputs[0]
        if eqn.prim in STRUCTURAL:
            return [] if isinstance(operand, Literal) else [(operand, operand_map(eqn, imap))]
        if eqn.prim == "concatenate":
            return []  # each operand is evaluated inside its own branch (_select)
        if eqn.prim == "gather":
            return gather_pieces(eqn, imap, lambda j: None)[1:]  # the index arrays first
        if eqn.prim == "convert" and operand in info.scalar_inputs:
            return []
        return [(a, imap) for a in eqn.inputs if isinstance(a, Var)]

    def _loads_materialized(self, var: Var) -> bool:
        """A materialized value is loaded, except by the kernel that stores it."""
        return var in self.info.materialized and var not in self.own_stores

    def _loads_stored(self, var: Var) -> bool:
        """Whether to load `var` from an earlier kernel's store rather than recompute it: when
        recomputing would read more bytes than the stored array."""
        stored = self.info.stored_by.get(var)
        if stored is None or stored >= self.spec.index:
            return False
        seen, stack, recompute = set(), [var], 0
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            eqn = self.info.producers.get(v)
            if eqn is None or is_reduction(eqn.prim):
                recompute += 0 if v in self.info.scalar_inputs else v.aval.nbytes
            else:
                stack.extend(a for a in eqn.inputs if isinstance(a, Var))
        return recompute > var.aval.nbytes

    def _evaluate(self, var: Var, imap: IndexMap, scope: dict, out: list, phase: int):
        info = self.info
        if var in info.scalar_inputs:
            return self._scalar(var, var.aval.dtype)
        if var in info.buffer_inputs:
            return self._load(var, imap, out)
        eqn = info.producers[var]
        if is_reduction(eqn.prim):
            if var in self.owned and is_scan(eqn.prim):
                if self.phase_of.get(var, 0) != phase or imap != identity_map(self.domain):
                    raise NotFusable(
                        f"{info.names[var]} ({eqn.prim}) is a running value: it is read only at its own "
                        f"point, in the pass over the row that computes it"
                    )
                return f"acc{self.owned[var]}"
            if var in self.owned:
                if self.phase_of.get(var, 0) >= phase:
                    raise NotFusable(f"{info.names[var]} is reduced in this kernel and used inside its loop")
                if imap != reduction_map(eqn, self.domain):
                    raise NotFusable(
                        f"{info.names[var]} is read at other points than its own row: it would need "
                        f"another row's result"
                    )
                acc = f"acc{self.owned[var]}"
                return f"{acc}_i" if REDUCTIONS[eqn.prim].indexed else acc
            owner = info.owner[var]
            if owner >= self.spec.index:
                raise NotFusable(f"{info.names[var]} ({eqn.prim}) is computed in a later kernel")
            self.external[var] = None
            return self._load(var, imap, out)
        if self._loads_materialized(var):
            stored = info.stored_by.get(var)
            if stored is None or stored >= self.spec.index:
                raise NotFusable(f"{info.names[var]} ({eqn.prim}) is written by a later kernel")
            return self._load(var, imap, out)
        if self._loads_stored(var):
            return self._load(var, imap, out)
        return self._compute(eqn, imap, scope, out, phase)

    def _load(self, var: Var, imap: IndexMap, out: list) -> str:
        name = self.buffer_name(var, "in")
        dst = self.fresh()
        self.maps.append((name, imap))
        self.loaded.append((var, imap))
        out.append(Load(dst, name, imap))
        return dst

    def _scalar(self, var: Var, dtype: np.dtype) -> str:
        key = (self.info.scalar_inputs[var], np.dtype(dtype))
        if key not in self.scalars:
            suffix = "" if dtype == var.aval.dtype else f"_{short_name(dtype)}"
            self.scalars[key] = f"s_{self.info.names[var]}{suffix}"
        return self.scalars[key]

    def _count(self, const: SizeConst) -> str:
        """A constant computed from the shapes: a kernel argument (count0, count1, ...)."""
        key = (const.key, const.aval.dtype)
        if key not in self.counts:
            self.counts[key] = (f"count{len(self.counts)}", const)
        return self.counts[key][0]

    def _constant(self, prim: str, position: int, operand):
        """A constant of the formula that the code need not hold is a kernel argument (const0,
        const1, ...), as sizes are: `out[k] += x[n] * np.cos(np.pi * k * n / N)` in a loop over
        k and n, or `N[abs(Z) < horizon] = n` in a loop over n, is then kernels of one compiled
        code, not one code per iteration.
        Zero, one, minus one and non-finite values stay in the code (they are the structure of
        formulas, `1 - x`, `np.where(m, x, np.inf)`, and compilers simplify with them), as do
        operands the target's code depends on (Target.codes_literal). Other values that
        compilers use, such as powers of two (a division by 2 is a multiplication by 0.5), are
        arguments all the same: a loop's coefficient `rmax * i / npt` is a power of two at 7
        of 100 iterations, each of which would be a code of its own."""
        if not isinstance(operand, Literal) or isinstance(operand, SizeConst):
            return operand
        dtype = operand.aval.dtype
        if dtype.kind not in "iuf" or dtype == np.float16 or self.info.target.codes_literal(prim, position, dtype):
            return operand
        value = operand.value.item()
        if value in (0, 1, -1) or not math.isfinite(value):
            return operand
        # One argument for each use, equal values or not: which constants happen to be equal
        # changes from one iteration to the next, and the code must not.
        name = f"const{self.constants}"
        self.counts[(("constant", self.constants), dtype)] = (name, operand)
        self.constants += 1
        return name

    def _compute(self, eqn: Eqn, imap: IndexMap, scope: dict, out: list, phase: int):
        prim = eqn.prim
        if prim == "iota":
            return self._iota(eqn, imap, out)
        operand = eqn.inputs[0]
        if prim in STRUCTURAL:
            if isinstance(operand, SizeConst):
                return self._count(operand)
            if isinstance(operand, Literal):
                return operand
            return self.value(operand, operand_map(eqn, imap), scope, out, phase)
        if is_reduction(prim):
            raise NotFusable(f"{prim} cannot run inside this kernel")
        if prim == "concatenate":
            return self._select(eqn, imap, scope, out, phase)
        if prim == "gather":
            return self._gather(eqn, imap, scope, out, phase)
        if prim == "convert" and operand in self.info.scalar_inputs:
            # Scalars are cast on the host: the kernel gets the value in the dtype it computes in.
            return self._scalar(operand, eqn.out.aval.dtype)
        args = tuple(self.value(a, imap, scope, out, phase) for a in eqn.inputs)
        if prim == "convert":
            type_dtype = operand.aval.dtype
        else:
            type_dtype = eqn.inputs[ELEMENTWISE[prim].type_from].aval.dtype
        check = ELEMENTWISE[prim].check(type_dtype) if prim != "convert" else None
        checked = check is not None and any(not isinstance(args[i], Literal) for i in check.reads)
        args = tuple(self._constant(prim, i, a) for i, a in enumerate(args))
        if checked:
            out.append(Check(check.code, prim, args, type_dtype))
            self.checked = True
        dst = self.fresh()
        self.computed.append(eqn)
        out.append(Compute(dst, prim, args, eqn.out.aval.dtype, type_dtype))
        return dst

    def _iota(self, eqn: Eqn, imap: IndexMap, out: list):
        """The point's index along the iota's one axis (a constant where that is fixed)."""
        (entry,) = imap
        self.computed.append(eqn)
        if entry is None:
            return Literal(np.int64(0))
        if isinstance(entry, Lin) and not entry.terms:
            return Literal(np.int64(entry.const))
        self.selects.append(entry)  # like a select's, the axis stays a loop of its own
        dst = self.fresh()
        out.append(Iota(dst, entry))
        return dst

    def _gather(self, eqn: Eqn, imap: IndexMap, scope, out: list, phase: int):
        """`gather[axis] x idx...` at `imap`: each index loaded, wrapped where negative and
        checked against the size of the axis it indexes (NumPy's IndexError where it is out of
        bounds; the load then stays in bounds), and x evaluated at those computed indices."""
        x = eqn.inputs[0]
        axis = eqn.param("axis")
        computed = []
        int64 = np.dtype(np.int64)
        for j, (index_var, bmap) in enumerate(gather_pieces(eqn, imap, lambda j: None)[1:]):
            raw = self.value(index_var, bmap, scope, out, phase)
            size = self._count(SizeConst(np.int64(x.aval.shape[axis + j]), ("gather", axis + j, x.aval.shape)))
            out.append(Check(GATHER_CHECK.code, "gather_index", (raw, size), int64))
            self.checked = True
            dst = self.fresh()
            out.append(Compute(dst, "gather_index", (raw, size), int64, int64))
            computed.append(dst)
        self.computed.append(eqn)
        xmap = gather_pieces(eqn, imap, lambda j: Gathered(computed[j]))[0][1]
        return self.value(x, xmap, scope, out, phase)

    def _select(self, eqn: Eqn, imap: IndexMap, scope, out: list, phase: int):
        """A concatenation at `imap`: the operand whose range along the axis holds the point,
        each evaluated in its own branch (its values stay there: other points do not compute
        them). One operand, where the index along the axis is a constant, needs no branch."""
        pieces = concat_pieces(eqn, imap)
        self.computed.append(eqn)
        if not pieces:  # every operand is empty along the axis: so is the loop reading this
            return Literal(eqn.out.aval.dtype.type(0))
        if len(pieces) == 1:
            atom, pmap, _, _ = pieces[0]
            return self.value(atom, pmap, scope, out, phase)
        index = imap[eqn.param("axis")]
        ranges = getattr(scope, "ranges", None) or {axis: (0, n - 1) for axis, n in enumerate(self.domain)}
        # What several branches read at points in bounds wherever this select runs (a row of
        # the previous step of an unrolled loop, `y = y + f(np.array([y[0], y[1], y[2]]))`; a
        # point that two rolls of a stencil's time loop both reach) is computed once, before
        # them: else each branch computes it again, and such steps nest, so the kernel would
        # grow with the square, or the power, of their number.
        for var, m in self._shared_by_branches(pieces, ranges, scope):
            self.value(var, m, scope, out, phase)
        branches = []
        for atom, pmap, first, end in pieces:
            body: list = []
            src = self.value(atom, pmap, _BranchScope(scope, _narrowed(ranges, index, first, end)), body, phase)
            branches.append((tuple(body), src))
        self.selects.append(index)
        dst = self.fresh()
        out.append(Select(dst, eqn.out.aval.dtype, index, tuple(p[3] for p in pieces[:-1]), tuple(branches)))
        return dst

    def _shared_by_branches(self, pieces, ranges: dict, scope) -> list[tuple[Var, IndexMap]]:
        """The values, not yet in `scope`, that more than one piece of a select reads at maps
        in bounds for every point in `ranges` (the axes' values where the select runs), in
        the order the first piece reaches them."""
        seen_by: dict[tuple[Var, IndexMap], int] = {}
        for k, (atom, pmap, _, _) in enumerate(pieces):
            reached: set = set()
            stack = [(atom, pmap)] if isinstance(atom, Var) else []
            while stack:
                key = stack.pop()
                if key in reached or key in scope:
                    continue
                reached.add(key)
                if _in_bounds(key[0].aval.shape, key[1], ranges):
                    seen_by[key] = seen_by.get(key, 0) | (1 << k)
                stack.extend(reversed(self._reads_of(*key)))
        return [key for key, branches in seen_by.items() if branches & (branches - 1)]

    def _reads_of(self, var: Var, imap: IndexMap) -> list[tuple[Var, IndexMap]]:
        """What evaluating `var` at `imap` may read, as _operands says, with every piece of a
        concatenation and a gather's index arrays (not the gathered array, whose map the
        kernel computes)."""
        eqn = self.info.producers.get(var)
        if eqn is not None and eqn.prim == "concatenate" and not self._loads_materialized(var) \
                and not self._loads_stored(var):
            return [(a, m) for a, m, _, _ in concat_pieces(eqn, imap) if isinstance(a, Var)]
        return [dep for dep in self._operands(var, imap) if isinstance(dep[0], Var)]

    def _store(self, var: Var, imap: IndexMap, src, out: list) -> None:
        name = self.buffer_name(var, "out")
        self.maps.append((name, imap))
        out.append(Store(name, imap, src))

    # -- the kernel ----------------------------------------------------------------------------

    def lower(self) -> Lowered:
        spec = self.spec
        # softmax's sum of exp(x - max) joins the max's pass when the row is too long to keep on
        # chip (online_softmax): one read of the row fewer.
        online = online_softmax_pairs(spec, self.info)
        self.online_choice = online_choice(spec, self.info, online)
        self.phase_of = merged_phases(spec, online)
        self.online_notes = [
            f"the row is too long to keep on chip: {self.info.names[s]} (a sum of exp(x - "
            f"{self.info.names[m]})) is accumulated in {self.info.names[m]}'s pass, rescaled as the "
            f"maximum grows (online softmax), one pass over the row fewer"
            for s, m in online.items()
        ]
        partner_of = {m: s for s, m in online.items()}
        index_of = {eqn.out: i for i, eqn in enumerate(spec.reductions)}
        ends = max(self.phase_of.values(), default=0) + 1 if spec.reductions else 1
        phases: list[tuple[list, list]] = [([], []) for _ in range(ends)]  # (accumulators, body)
        scopes: list[dict] = [{} for _ in range(ends)]
        for i, eqn in enumerate(spec.reductions):
            phase = self.phase_of.get(eqn.out, 0)
            red = REDUCTIONS[eqn.prim]
            dtype = eqn.inputs[0].aval.dtype if red.indexed else eqn.out.aval.dtype
            accumulators, body = phases[phase]
            if eqn.out in online:
                partner = f"acc{index_of[online[eqn.out]]}"
                accumulators.append(Accumulator(f"acc{i}", "online_sum", dtype, dtype.type(0), partner))
                self.computed.append(eqn)
                continue
            src = self.value(eqn.inputs[0], identity_map(self.domain), scopes[phase], body, phase)
            self.computed.append(eqn)
            accumulators.append(Accumulator(f"acc{i}", red.combine, dtype, red.identity(dtype), running=red.scan,
                                            blocks=eqn.param("buffered", 0)))
            if eqn.out in partner_of:
                body.append(OnlineAccumulate(f"acc{i}", f"acc{index_of[partner_of[eqn.out]]}", src))
            else:
                body.append(Accumulate(f"acc{i}", src))
        # Outputs smaller than the domain are stored where the axes they lack are 0. The guard
        # blocks come after the whole loop body, so their scope sees every value computed there,
        # while what they compute stays inside them. A value of a scan's running value is stored
        # in the scan's pass; every other, in the first.
        body, body_scope = phases[0][1], scopes[0]
        guarded: dict[tuple[int, tuple[int, ...]], tuple[list, ChainMap]] = {}
        for var in spec.body_stores:
            imap, missing = broadcast_map(var.aval.shape, self.domain)
            phase = self._running_phase(var)
            if missing:
                stmts, scope = guarded.setdefault((phase, missing), ([], ChainMap({}, scopes[phase])))
            else:
                stmts, scope = phases[phase][1], scopes[phase]
            src = self.value(var, imap, scope, stmts, phase)
            self._store(var, imap, src, stmts)
        for (phase, missing), (stmts, _) in guarded.items():
            phases[phase][1].append(Guard(tuple(missing), tuple(stmts)))
        final: list = []
        final_scope: dict = {}
        for var in spec.final_stores:
            imap = identity_map(self.domain)
            src = self.value(var, imap, final_scope, final, ends)
            self._store(var, imap, src, final)
        epilogue: list = []
        epilogue_scope: dict = {}
        for var in spec.epilogue_stores:
            imap = epilogue_map(var, spec.reductions[0], self.domain)
            if imap is None:
                kept = tuple(n for a, n in enumerate(self.domain) if a not in spec.reduce_axes)
                raise NotFusable(
                    f"{self.info.names[var]}:{var.aval} is not shaped like the reduction's result "
                    f"{list(kept)}: it needs that result broadcast back over the reduced axes "
                    f"{spec.reduce_axes}, a second pass over the data"
                )
            src = self.value(var, imap, epilogue_scope, epilogue, ends)
            self._store(var, imap, src, epilogue)
        if final:
            phases.append(([], final))
        if spec.update is not None:
            self._lower_update(spec.update, body, body_scope)
        return self._finish(phases, epilogue)

    def _running_phase(self, var: Var) -> int:
        """The pass of the scans of this kernel whose running value `var` is computed from (0
        where it reads none): the only pass in which it can be evaluated."""
        phases, seen, stack = set(), set(), [var]
        while stack:
            v = stack.pop()
            if v in seen or not isinstance(v, Var):
                continue
            seen.add(v)
            eqn = self.info.producers.get(v)
            if eqn is None or v in self.info.buffer_inputs or self._loads_materialized(v):
                continue
            if v in self.owned:
                if is_scan(eqn.prim):
                    phases.add(self.phase_of.get(v, 0))
                continue
            if is_reduction(eqn.prim):
                continue
            stack.extend(eqn.inputs)
        return max(phases, default=0)

    def _lower_update(self, eqn: Eqn, body: list, scope: dict) -> None:
        """`a[region] = v`: v evaluated over the region, stored into a's buffer in place. Safe
        when v reads a only at the point it writes, or only where the update writes nothing;
        otherwise v needs a temporary first."""
        names = self.info.names
        imap = identity_map(self.domain)
        first = len(self.loaded)
        src = self.value(eqn.inputs[1], imap, scope, body, 0)
        target = update_map(eqn)
        family = self.info.family.get(eqn.out)
        for var, m in self.loaded[first:]:
            if self.info.family.get(var) is family and not (var is eqn.inputs[0] and (
                    m == target or disjoint_points(m, target, self.domain, var.aval.shape))):
                raise NotFusable(
                    f"the right side of {names[eqn.out]} reads {names[var]} at other points than it "
                    f"writes: NumPy evaluates the right side first, so it is computed into a temporary"
                )
        self._store(eqn.out, target, src, body)

    def evaluated(self, phases, epilogue) -> Evaluated:
        """The handoff to collapse.py: the statements, indexed by domain axes, and what was
        collected while evaluating them."""
        spec = self.spec
        return Evaluated(
            name=kernel_name(spec, self.computed), kind=spec.kind, domain=spec.domain, reduce_axes=spec.reduce_axes,
            phases=tuple((tuple(accs), tuple(body)) for accs, body in phases), epilogue=tuple(epilogue),
            reads=dict(self.reads), writes=dict(self.writes),
            strided=frozenset(v for v in {**self.reads, **self.writes} if v in self.info.strided),
            maps=tuple(self.maps), selects=tuple(self.selects), checked=self.checked,
            scalars=dict(self.scalars), counts=dict(self.counts), notes=tuple(self.online_notes),
            online_choice=self.online_choice,
            sources=tuple(dict.fromkeys(e.loc for e in self.computed if e.loc is not None)),
        )

    def _finish(self, phases, epilogue) -> Lowered:
        """Loop dimensions, indices and the strategy's choices: collapse.py."""
        evaluated = self.evaluated(phases, epilogue)
        nest, passes, notes = build_nest(evaluated, self.info.target)
        return Lowered(nest, dict(self.reads), dict(self.writes), self.external, self.computed, passes, notes,
                       evaluated)


def kernel_name(spec: KernelSpec, computed: list[Eqn]) -> str:
    ops = []
    for eqn in computed:
        name = eqn.prim.replace("reduce_", "")
        if eqn.prim in ("convert", *STRUCTURAL) or name in ops:
            continue
        ops.append(name)
    kind = "pw" if spec.kind == "pointwise" else "red"
    # At most 6 operations and 72 characters: the name is the kernel file's and, twice, that of
    # Numba's cache files beside it, which must stay under the file system's 255 bytes.
    shown = min(len(ops), 6)
    while shown > 1 and len("_".join(["nf", kind] + ops[:shown])) > 72:
        shown -= 1
    named = ops[:shown] + ([f"{len(ops) - shown}more"] if shown < len(ops) else [])
    return "_".join(["nf", kind] + named)


class _BranchScope(ChainMap):
    """A select branch's values, over the scope around it, and the axes' (lo, hi) where the
    branch runs."""

    def __init__(self, outer, ranges: dict):
        super().__init__({}, outer)
        self.ranges = ranges


def _in_bounds(shape, imap: IndexMap, ranges: dict) -> bool:
    """Whether a map reads points of an array of `shape` only, wherever each axis takes the
    values of its range (and reads no computed index)."""
    for entry, extent in zip(imap, shape):
        if any(isinstance(v, Gathered) for v in variables(entry)):
            return False
        lo, hi = interval(entry, ranges, extent)
        if lo < 0 or hi > extent - 1:
            return False
    return True


def _narrowed(ranges: dict, index, first: int, end: int) -> dict:
    """The axes' ranges where a select's branch runs: `first <= index < end`, as a range of
    the one axis the index steps by +1 or -1 (else the ranges as they were)."""
    if is_var(index):
        axis, coef, const = index, 1, 0
    elif isinstance(index, Lin) and len(index.terms) == 1 and is_var(index.terms[0][0]) \
            and index.terms[0][1] in (1, -1):
        (axis, coef), const = index.terms[0], index.const
    else:
        return ranges
    lo, hi = (first - const, end - 1 - const) if coef == 1 else (const - end + 1, const - first)
    old = ranges.get(axis, (lo, hi))
    return {**ranges, axis: (max(old[0], lo), min(old[1], hi))}
