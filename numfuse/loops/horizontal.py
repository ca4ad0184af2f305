"""Several pointwise loop nests as one kernel (horizontal fusion), and the points each one reads
and writes, which tell whether they may run as one.

`access_boxes(nest)` bounds, for each buffer parameter, the points each load and store may
touch: an interval per dimension of the buffer's view (loop variables over their ranges, count
arguments at their values; a computed index, the whole dimension). Two nests may share a kernel
when no point one writes is read or written by the other: the plan checks that with
`boxes_overlap` on the buffers' storage (plan/horizontal.py).

`combine(nests)` is the kernel that runs them: one flat loop over all their points, one after
another, in which part k unravels its own loop variables from the flat index minus its start and
runs its statements (loopnest.Parts). Each part's names get a prefix (`p1_v0`, `p1_off0`), so
the parts' values never meet; buffers and scalars keep theirs, so a buffer two parts use is one
argument.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..ir.indexing import DivMod, Gathered, Lin, boxes_meet, interval
from .loopnest import (
    ERRORS_BUFFER, Check, Compute, CountParam, Dim, Guard, Iota, Load, LoopNest, Part, Parts, Phase, Select, Store, walk,
)

Interval = tuple[int, int]  # lo, hi (inclusive); lo > hi: no point (indexing.interval)


@dataclass(frozen=True)
class Access:
    """The points of one buffer parameter that one statement may touch."""

    write: bool
    view: tuple[int, ...]
    strided: bool
    box: tuple[Interval, ...]  # one interval per dimension of `view`


def access_boxes(nest: LoopNest) -> dict[str, list[Access]]:
    """Buffer parameter -> the points each of its loads and stores may touch."""
    ranges = {d.name: (0, d.size - 1) for d in nest.outer + nest.inner}
    ranges.update({c.name: (int(c.value),) * 2 for c in nest.counts if np.dtype(c.dtype).kind in "iu"})
    buffers = {b.name: b for b in nest.buffers}
    found: dict[str, list[Access]] = {}
    for s in walk(tuple(nest.body) + tuple(nest.epilogue)):
        if isinstance(s, (Load, Store)) and s.buffer in buffers:
            b = buffers[s.buffer]
            # An int in a loop nest's index is a constant (indexing.py: a domain axis elsewhere).
            box = tuple((e, e) if isinstance(e, int) else interval(e, ranges, n) for e, n in zip(s.index, b.view))
            found.setdefault(s.buffer, []).append(Access(isinstance(s, Store), b.view, b.strided, box))
    return found


def _flat(access: Access) -> Interval:
    """The element offsets a C-contiguous view's box spans."""
    strides = np.cumprod((1,) + access.view[:0:-1])[::-1] if access.view else ()
    lo = sum(int(a) * int(s) for (a, _), s in zip(access.box, strides))
    hi = sum(int(b) * int(s) for (_, b), s in zip(access.box, strides))
    return (lo, hi)


def boxes_overlap(first: Access, second: Access) -> bool:
    """Whether the two accesses, of one buffer's storage, may touch a common point."""
    if first.view == second.view:
        return boxes_meet(first.box, second.box)
    if not boxes_meet(first.box, first.box) or not boxes_meet(second.box, second.box):
        return False  # no point at all
    if first.strided or second.strided:
        return True  # seen through their own strides at other shapes: no common coordinates
    return boxes_meet((_flat(first),), (_flat(second),))


# -- one kernel of several nests --------------------------------------------------------------


def _renamer(nest: LoopNest, prefix: str, buffers: dict[str, str]):
    """Every name of `nest` with `prefix`, but its scalars and its buffers (those renamed as
    `buffers` says)."""
    keep = {b.name for b in nest.buffers} | {s.name for s in nest.scalars} | {ERRORS_BUFFER}

    def name(n: str) -> str:
        if n in buffers:
            return buffers[n]
        return n if n in keep else prefix + n

    def entry(e):
        if isinstance(e, str):
            return name(e)
        if isinstance(e, Lin):
            return Lin(tuple((entry(v), c) for v, c in e.terms), e.const)
        if isinstance(e, DivMod):
            return DivMod(entry(e.inner), e.div, e.mod)
        if isinstance(e, Gathered):
            return Gathered(entry(e.value))
        return e

    def operand(op):
        return name(op) if isinstance(op, str) else op

    def stmts(body) -> tuple:
        out = []
        for s in body:
            if isinstance(s, Load):
                out.append(Load(name(s.dst), name(s.buffer), tuple(entry(i) for i in s.index)))
            elif isinstance(s, Compute):
                out.append(dataclasses.replace(s, dst=name(s.dst), args=tuple(operand(a) for a in s.args)))
            elif isinstance(s, Store):
                out.append(Store(name(s.buffer), tuple(entry(i) for i in s.index), operand(s.src)))
            elif isinstance(s, Check):
                out.append(dataclasses.replace(s, args=tuple(operand(a) for a in s.args)))
            elif isinstance(s, Guard):
                out.append(Guard(tuple(name(z) for z in s.zero), stmts(s.body)))
            elif isinstance(s, Iota):
                out.append(Iota(name(s.dst), entry(s.index)))
            elif isinstance(s, Select):
                branches = tuple((stmts(b), operand(src)) for b, src in s.branches)
                out.append(Select(name(s.dst), s.dtype, entry(s.index), tuple(entry(b) for b in s.bounds), branches))
            else:
                raise TypeError(f"a {type(s).__name__} cannot be a part of a kernel of several loop nests")
        return tuple(out)

    return name, stmts


def combinable(nest: LoopNest) -> bool:
    """A nest that can be a part: pointwise, with no parts of its own."""
    return nest.kind == "pointwise" and not nest.epilogue and not any(isinstance(s, Parts) for s in nest.body)


def combine(nests: list[LoopNest], name: str = "nf_parts") -> tuple[LoopNest, list[dict[str, str]]]:
    """One flat pointwise kernel running `nests` (each `combinable`) one after another over its
    flat index, and for each nest its buffer parameters' names in it: a buffer that an earlier
    nest names too is one parameter where both see it alike, and gets a name of its own
    (`in_p1_a`) where this nest sees it through another view. A scalar several nests name must
    be the same parameter in each."""
    buffers: dict = {}
    scalars: dict = {}
    counts: list[CountParam] = []
    parts, bounds, names = [], [], []
    start = 0
    for k, nest in enumerate(nests):
        assert combinable(nest), nest.name
        renamed = {}
        for b in nest.buffers:
            if b.name in buffers and buffers[b.name] != b:
                role, _, value = b.name.partition("_")  # in_a -> in_p1_a: still an "in" buffer
                renamed[b.name] = f"{role}_p{k}_{value}"
                b = dataclasses.replace(b, name=renamed[b.name])
            buffers.setdefault(b.name, b)
        names.append({b.name: renamed.get(b.name, b.name) for b in nest.buffers})
        for s in nest.scalars:
            assert scalars.setdefault(s.name, s) == s, f"two parts read {s.name} differently"
        rename, stmts = _renamer(nest, f"p{k}_", renamed)
        counts += [dataclasses.replace(c, name=rename(c.name)) for c in nest.counts]
        dims = tuple(Dim(rename(d.name), rename(d.param), d.size) for d in nest.outer)
        counts += [CountParam(d.param, np.dtype(np.int64), np.int64(d.size)) for d in dims]
        first: object = 0
        if k:
            first = f"start{k}"
            counts.append(CountParam(first, np.dtype(np.int64), np.int64(start)))
            bounds.append(first)
        parts.append(Part(first, dims, stmts(nest.body)))
        start += nest.outer_size
    body = (Parts("i0", tuple(bounds), tuple(parts)),)
    nest = LoopNest(
        name, "pointwise", "flat", tuple(buffers.values()), tuple(scalars.values()),
        (Dim("i0", "n0", start),), (), (Phase((), body),), (), counts=tuple(counts),
        compiled_for=tuple(dict.fromkeys(c for n in nests for c in n.compiled_for)),
        sources=tuple(dict.fromkeys(s for n in nests for s in n.sources)),
    )
    return nest, names
