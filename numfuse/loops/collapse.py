"""Loop dimensions: a kernel's evaluated statements, indexed by domain axes, become a LoopNest.

lower.py evaluates a kernel's values into statements (Load, Store, Guard, Select ...) whose
indices are domain axes, or expressions of them (`indexing.Lin`, `DivMod`). This module decides
the loops those axes become and rewrites every index for them:

- which buffers keep their own rank: one passed strided, read at computed indices, larger than
  the points it is accessed at, or read in two axis orders. The axes such a buffer uses (and
  the axis a Select branches on) stay loops of their own (`pinned`);
- `collapse_axes`: adjacent domain axes that every buffer reads contiguously and in order are
  grouped into one loop dimension (as CuPy's reduce_dims does), so a contiguous elementwise
  kernel indexes with one flat index and no division. Each buffer is seen through a view, a
  reshape of it, with one dimension per loop dimension it uses;
- every Load, Store, Guard and Select index is rewritten from domain axes to loop variables
  (`i0`, `o0`, `r0` ...), and the constants in indices (offsets, a concatenation's bounds) are
  lifted into kernel arguments `off0, off1, ...`, so the code stays the same for every size;
- the LoopNest is assembled with the strategy's choices (strategy.py) that depend on the loops:
  schedule, row cache, split, and what the compiled code was specialized for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..ir import indexing
from ..ir.graph import SizeConst, Var
from .loopnest import (
    ERRORS_BUFFER, BufferParam, CountParam, Dim, Guard, Iota, Load, LoopNest, Phase, ScalarParam, Select, Store,
)
from .strategy import choose_cache, choose_schedule, choose_split, compiled_for
from ..ir.viewmaps import IndexMap

if TYPE_CHECKING:
    from .evaluated import Evaluated


def full_rank(domain, by_name: dict[str, Var], strided: set[Var], maps) -> set[str]:
    """The buffers that keep their own rank (never collapsed): read through strides, at computed
    indices, at fewer points than they hold, or in two axis orders."""
    # A buffer read through strides, or at computed indices, keeps its own rank, and the
    # axes it uses stay loops of their own.
    full = {n for n, v in by_name.items() if v in strided}
    full |= {n for n, imap in maps if not all(indexing.is_plain(e) for e in imap)}
    # A buffer larger than the points it is accessed at (x[0], a region of it written).
    def sized(e, size) -> bool:
        return size == 1 if e is None else size == domain[e]

    full |= {
        n for n, imap in maps
        if not all(sized(e, size) for e, size in zip(imap, by_name[n].aval.shape) if indexing.is_plain(e))
    }
    # A buffer read in two axis orders (x + x.transpose(1, 2, 0)) cannot have one collapsed
    # view for both: it keeps its own rank too.
    orders: dict[str, set] = {}
    for n, imap in maps:
        orders.setdefault(n, set()).add(tuple(e for e in imap if e is not None))
    full |= {n for n, seen in orders.items() if len(seen) > 1}
    return full


def pinned_axes(full: set[str], maps, selects) -> set:
    """The domain axes that stay loops of their own: those a full-rank buffer uses, and those a
    Select compares."""
    pinned = set()
    for n, imap in maps:
        if n in full:
            for e in imap:
                pinned |= indexing.variables(e)
    for e in selects:
        pinned |= indexing.variables(e)  # a select compares that axis's own index
    return pinned


def collapse_axes(domain, reduce_axes, maps, pinned=frozenset()) -> list[list[int]]:
    """Group the domain's non-unit axes into chains that every access reads contiguously.
    `pinned` axes (those of buffers indexed at their own rank) stay chains of their own."""
    active = [a for a, s in enumerate(domain) if s != 1]
    stripped = []
    for _, imap in maps:
        axes = [a for a in imap if a is not None]
        stripped.append({a: i for i, a in enumerate(axes)})
    chains: list[list[int]] = []
    for a in active:
        if chains:
            prev = chains[-1][-1]
            same_class = (prev in reduce_axes) == (a in reduce_axes)
            # Size-one axes between prev and a index nothing, so they do not separate them.
            free = prev not in pinned and a not in pinned
            if same_class and free and all(_adjacent(pos, prev, a) for pos in stripped):
                chains[-1].append(a)
                continue
        chains.append([a])
    return chains


def _adjacent(pos: dict, a: int, b: int) -> bool:
    if a not in pos and b not in pos:
        return True
    if a in pos and b in pos:
        return pos[b] == pos[a] + 1
    return False


def loop_dims(spec: Evaluated, chains) -> tuple[list[Dim], list[Dim], dict[int, str]]:
    """The loop dimensions of the chains, kept (`outer`) and reduced (`inner`), and the loop
    variable of each domain axis."""
    axis_dim: dict[int, str] = {}
    outer: list[Dim] = []
    inner: list[Dim] = []
    for chain in chains:
        reduced = chain[0] in spec.reduce_axes
        dims = inner if reduced else outer
        prefix = "r" if reduced else ("o" if spec.kind == "reduction" else "i")
        k = len(dims)
        name = f"{prefix}{k}"
        size = int(np.prod([spec.domain[a] for a in chain], dtype=np.int64))
        dims.append(Dim(name, f"n{prefix}{k}" if prefix != "i" else f"n{k}", size))
        for a in chain:
            axis_dim[a] = name
    return outer, inner, axis_dim


class Reindex:
    """Statements rewritten from domain axes to loop variables; the view of each buffer and the
    offset arguments lifted out of the indices, collected on the way."""

    def __init__(self, domain, axis_dim: dict[int, str], full: set[str], by_name: dict[str, Var]):
        self.domain = domain
        self.axis_dim = axis_dim
        self.full = full
        self.by_name = by_name
        self.views: dict[str, tuple[int, ...]] = {}
        # Offsets in indices (`x[-3:]` reads at i0 + n - 3, a concatenation's second operand
        # starts where the first ends) and a concatenation's bounds are kernel arguments, as
        # sizes are: the code stays the same for every size. One index expression gets the same
        # arguments wherever it is used, so loads that read the same points stay equal.
        self.offset_params: list[CountParam] = []
        self.lifted: dict = {}

    def index(self, buffer: str, imap: IndexMap):
        axis_dim = self.axis_dim
        if buffer in self.full:
            shape = tuple(self.by_name[buffer].aval.shape)
            index = [0 if e is None else indexing.substitute(e, lambda a: axis_dim[a]) for e in imap]
            if not index:
                index, shape = [0], (1,)
            known = self.views.setdefault(buffer, shape)
            assert known == shape, f"{buffer} seen with two views {known} and {shape}"
            return tuple(index)
        index, view = [], []
        for a in imap:
            if a is None:
                continue
            dim = axis_dim[a]
            if index and index[-1] == dim:
                view[-1] *= self.domain[a]
            else:
                index.append(dim)
                view.append(self.domain[a])
        if not index:
            index, view = [0], [1]
        known = self.views.setdefault(buffer, tuple(view))
        assert known == tuple(view), f"{buffer} seen with two views {known} and {view}"
        return tuple(index)

    def _offset(self, value: int) -> str:
        name = f"off{len(self.offset_params)}"
        self.offset_params.append(CountParam(name, np.dtype(np.int64), np.int64(value)))
        return name

    def _lift(self, key, entries):
        if key not in self.lifted:
            self.lifted[key] = tuple(indexing.lift_constants(e, self._offset) for e in entries)
        return self.lifted[key]

    def _buffer_index(self, buffer: str, imap: IndexMap):
        index = self.index(buffer, imap)
        return self._lift((buffer, index), index)

    def rewrite(self, stmts) -> list:
        axis_dim = self.axis_dim
        result = []
        for s in stmts:
            if isinstance(s, Load):
                result.append(Load(s.dst, s.buffer, self._buffer_index(s.buffer, s.index)))
            elif isinstance(s, Store):
                result.append(Store(s.buffer, self._buffer_index(s.buffer, s.index), s.src))
            elif isinstance(s, Guard):
                zero = tuple(dict.fromkeys(axis_dim[a] for a in s.zero))
                result.append(Guard(zero, tuple(self.rewrite(s.body))))
            elif isinstance(s, Select):
                index = indexing.substitute(s.index, lambda a: axis_dim[a])
                index, = self._lift(("select", index), (index,))
                bounds = self._lift(("bounds", s.bounds), tuple(indexing.Lin((), b) for b in s.bounds))
                branches = tuple((tuple(self.rewrite(body)), src) for body, src in s.branches)
                result.append(Select(s.dst, s.dtype, index, bounds, branches))
            elif isinstance(s, Iota):
                index = indexing.substitute(s.index, lambda a: axis_dim[a])
                index, = self._lift(("select", index), (index,))
                result.append(Iota(s.dst, index))
            else:
                result.append(s)
        return result


def build_nest(ev: Evaluated, target) -> tuple[LoopNest, dict[Var, float], list[str]]:
    """The LoopNest of an evaluated kernel (evaluated.py: its phases and epilogue, indexed by
    domain axes, with the buffers and the maps they are accessed at, Select indices, scalars,
    counts and notes), with `target`'s choices. Also the reads of each buffer whose rows do not
    fit on chip, and the notes for explain."""
    domain = ev.domain
    phases, epilogue = ev.phases, ev.epilogue
    by_name = {n: v for v, n in {**ev.reads, **ev.writes}.items()}
    full = full_rank(domain, by_name, ev.strided, ev.maps)
    pinned = pinned_axes(full, ev.maps, ev.selects)
    chains = collapse_axes(domain, ev.reduce_axes, ev.maps, pinned)
    outer, inner, axis_dim = loop_dims(ev, chains)
    reindex = Reindex(domain, axis_dim, full, by_name)
    nest_phases = tuple(Phase(tuple(accs), tuple(reindex.rewrite(body))) for accs, body in phases)
    epilogue = reindex.rewrite(epilogue)
    views = reindex.views
    buffers = tuple(
        [BufferParam(n, v.aval.dtype, views[n], "in", n in full) for v, n in ev.reads.items()]
        + [BufferParam(n, v.aval.dtype, views[n], "out", n in full) for v, n in ev.writes.items()]
        + ([BufferParam(ERRORS_BUFFER, np.dtype(np.int32), (1,), "out")] if ev.checked else [])
    )
    scalars = tuple(ScalarParam(n, dtype, index) for (index, dtype), n in ev.scalars.items())
    counts = tuple(
        CountParam(n, c.aval.dtype, c.value, coefficient=not isinstance(c, SizeConst)) for n, c in ev.counts.values()
    ) + tuple(reindex.offset_params)
    inner_size = int(np.prod([d.size for d in inner], dtype=np.int64))
    outer_size = int(np.prod([d.size for d in outer], dtype=np.int64))
    notes: list[str] = list(ev.notes)
    cached: tuple[str, ...] = ()
    passes: dict[Var, float] = {}
    schedule = choose_schedule(ev, outer, chains)
    if ev.kind == "reduction" and len(nest_phases) > 1:
        cached, reads, note = choose_cache(nest_phases, buffers, inner, outer, schedule, target)
        notes.extend(note)
        read_vars = {n: v for v, n in ev.reads.items()}
        passes = {read_vars[name]: count for name, count in reads.items()}
    split, split_choice = False, None
    if ev.kind == "reduction":
        split, split_choice = choose_split(nest_phases, outer_size, inner_size, target)
    if split:
        notes.append(
            f"{outer_size} row(s) of {inner_size} reduced points: each row is split over "
            f"several blocks, whose partial results the last block to finish combines"
        )
    nest = LoopNest(
        name=ev.name,
        kind=ev.kind,
        schedule=schedule,
        buffers=buffers,
        scalars=scalars,
        outer=tuple(outer),
        inner=tuple(inner),
        phases=nest_phases,
        epilogue=tuple(epilogue),
        cached=cached,
        split=split,
        counts=counts,
        compiled_for=compiled_for(
            domain, ev.reduce_axes, chains, full, nest_phases, epilogue,
            [ev.online_choice, split_choice], counts,
        ),
        sources=ev.sources,
    )
    return nest, passes, notes
