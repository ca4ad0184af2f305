"""Index maps through views: where a structural primitive reads its operand, and where an update
writes.

An index map gives, for each dimension of a value, the domain axis that indexes it, None where it
has size one (index 0), or an indexing.Lin / DivMod of domain axes. Reading a view at a map reads
its operand at the map this module computes:

    broadcast[shape] a     a's dimensions right-aligned, size-one ones at 0
    transpose[perm] a      the map permuted back
    slice[start step drop] a
                           dimension k at start[k] + step[k] * i, or at start[k] where an
                           integer index dropped it
    reshape[shape] a       within each group of dimensions whose sizes multiply to the same
                           number, the row-major position, divided and wrapped (`i0 // 6`)

The same functions, on shapes and parameters alone, compose the map of a write through any chain
of views (`a.T[1:, ::2] = v`, `a.reshape(4, 6)[1] = v`) back to the array written: the tracer
(tracer.py, proxy.py) builds an update's `at` map with them, so that the region a kernel stores
to is the region the same views read.

`concatenate[axis] x y ...` is not a view but reads its operands the same way: each point of
the result reads one operand, the one whose range along the axis holds it, at the index shifted
back by the operand's first point (concat_pieces); lower.py branches on that range.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import indexing
from .graph import Eqn
from .primitives import VIEWS

# Per dimension of a value: None (index 0), a domain axis, or an indexing.Lin / DivMod of axes.
IndexMap = tuple[indexing.Entry, ...]

# Primitives that only move or pick points: evaluated by mapping indices, never computed (the
# registry's primitives of kind "view", primitives.py).
STRUCTURAL = tuple(sorted(VIEWS))


def identity_map(shape: tuple[int, ...], axes: tuple[int, ...] | None = None) -> IndexMap:
    axes = tuple(range(len(shape))) if axes is None else axes
    return tuple(a if s != 1 else None for a, s in zip(axes, shape))


def broadcast_map(shape: tuple[int, ...], domain: tuple[int, ...]) -> tuple[IndexMap, tuple[int, ...]]:
    """Map of a value of `shape` broadcast into `domain`, and the domain axes it lacks (guards)."""
    offset = len(domain) - len(shape)
    imap = []
    for k, size in enumerate(shape):
        axis = k + offset
        imap.append(axis if size != 1 else None)
    present = {a for a in imap if a is not None}
    missing = tuple(a for a, size in enumerate(domain) if size != 1 and a not in present)
    return tuple(imap), missing


def broadcast_operand(in_shape, out_shape, imap: IndexMap) -> IndexMap:
    """Where a broadcast's operand is read when its result is read at `imap`."""
    in_map, _ = broadcast_map(tuple(in_shape), tuple(out_shape))
    return tuple(None if a is None else imap[a] for a in in_map)


def transpose_operand(perm, imap: IndexMap) -> IndexMap:
    mapped: list = [None] * len(perm)
    for k, p in enumerate(perm):
        mapped[p] = imap[k]
    return tuple(mapped)


def slice_operand(start, step, drop, imap: IndexMap) -> IndexMap:
    """Operand dimension k is read at `start[k] + step[k] * i`, or at `start[k]` where the
    index dropped it."""
    kept = iter(imap)
    return tuple(
        indexing.affine(None, 1, start[k]) if k in drop else indexing.affine(next(kept), step[k], start[k])
        for k in range(len(start))
    )


def reshape_groups(in_shape, out_shape) -> list[tuple[list[int], list[int]]] | None:
    """The smallest groups of operand and result dimensions (size-one ones left out) whose sizes
    have equal products; None for an empty array."""
    if 0 in in_shape or 0 in out_shape:
        return None
    ins = [k for k, s in enumerate(in_shape) if s != 1]
    outs = [k for k, s in enumerate(out_shape) if s != 1]
    groups, i, j = [], 0, 0
    while i < len(ins):
        gi, gj = [ins[i]], [outs[j]]
        pi, pj = in_shape[ins[i]], out_shape[outs[j]]
        i, j = i + 1, j + 1
        while pi != pj:
            if pi < pj:
                gi.append(ins[i]); pi *= in_shape[ins[i]]; i += 1  # noqa: E702
            else:
                gj.append(outs[j]); pj *= out_shape[outs[j]]; j += 1  # noqa: E702
        groups.append((gi, gj))
    return groups


def reshape_operand(in_shape, out_shape, imap: IndexMap) -> IndexMap:
    """Within each group, the result's row-major position is affine in its indices; each operand
    index is that position divided and wrapped: `6*i0 + i1` where a dimension splits,
    `i0 // 6` and `i0 % 6` where dimensions merge."""
    mapped: list = [None] * len(in_shape)
    for gi, gj in reshape_groups(in_shape, out_shape) or ():
        parts, size = [], 1
        for k in reversed(gj):
            parts.append((imap[k], size))
            size *= out_shape[k]
        flat = indexing.combine(parts)
        inner = 1
        for t, k in reversed(list(enumerate(gi))):
            mapped[k] = flat if len(gi) == 1 else indexing.divmod_entry(flat, inner, None if t == 0 else in_shape[k])
            inner *= in_shape[k]
    return tuple(mapped)


def operand_map(eqn: Eqn, imap: IndexMap) -> IndexMap:
    """Where a structural primitive's operand is read when its result is read at `imap`."""
    if eqn.prim == "broadcast":
        return broadcast_operand(eqn.inputs[0].aval.shape, eqn.out.aval.shape, imap)
    if eqn.prim == "transpose":
        return transpose_operand(eqn.param("perm"), imap)
    if eqn.prim == "slice":
        return slice_operand(eqn.param("start"), eqn.param("step"), eqn.param("drop"), imap)
    return reshape_operand(eqn.inputs[0].aval.shape, eqn.out.aval.shape, imap)


def concat_pieces(eqn: Eqn, imap: IndexMap) -> list[tuple]:
    """What `concatenate[axis] x y ...` read at `imap` reads: (operand, its map, first, end) for
    each operand with points along the axis, the points [first, end) of the result; its map is
    `imap` with the index along the axis shifted by -first. Where that index is a constant,
    only the operand holding it."""
    axis = eqn.param("axis")
    entry = imap[axis]
    pieces, first = [], 0
    for atom in eqn.inputs:
        size = atom.aval.shape[axis]
        if size:
            shifted = None if size == 1 else indexing.affine(entry, 1, -first)
            pieces.append((atom, imap[:axis] + (shifted,) + imap[axis + 1:], first, first + size))
        first += size
    if not indexing.variables(entry):
        at = indexing.constant_value(entry)
        pieces = [p for p in pieces if p[2] <= at < p[3]]
    return pieces


@dataclass(frozen=True)
class At:
    """Where an update writes: for each dimension of the array written, an entry over the axes
    of the region (0, 1, ...; printed i0, i1, ...), composed through every view written through."""

    entries: IndexMap

    def __str__(self) -> str:
        shown = (indexing.fmt(indexing.substitute(e, lambda a: f"i{a}")) for e in self.entries)
        return "[" + ", ".join(shown) + "]"


def update_map(eqn: Eqn) -> IndexMap:
    """The points of its array an update writes, over its region's identity map (the update
    kernel's domain is the region)."""
    return eqn.param("at").entries


def disjoint_points(first: IndexMap, second: IndexMap, domain: tuple[int, ...], shape: tuple[int, ...]) -> bool:
    """Whether two maps over one domain, each of whose axes takes all its values, can meet at
    no point of an array of `shape` (each map bounded an interval per dimension)."""
    ranges = {axis: (0, n - 1) for axis, n in enumerate(domain)}
    boxes = [[indexing.interval(x, ranges, n) for x, n in zip(m, shape)] for m in (first, second)]
    return not indexing.boxes_meet(*boxes)


def gather_pieces(eqn: Eqn, imap: IndexMap, index_entry) -> list[tuple]:
    """What `gather[axis] x i1 ... ik` read at `imap` reads: each index array (all of one
    broadcast shape B, which replaced x's axes axis .. axis+k-1 in the result) at imap's entries
    for B, and x at imap with those axes indexed by `index_entry(j)` for the j-th index array
    (an indexing.Gathered: the index the kernel computes from it)."""
    axis = eqn.param("axis")
    indices = eqn.inputs[1:]
    nb = indices[0].aval.ndim
    bmap = imap[axis:axis + nb]
    xmap = imap[:axis] + tuple(index_entry(j) for j in range(len(indices))) + imap[axis + nb:]
    return [(eqn.inputs[0], xmap)] + [(i, bmap) for i in indices]


# The operations of x.view(another dtype of its size) (frontend/numpy_views.reinterpreting_view):
# the same bits read as another dtype, a view of the same memory in NumPy.
DTYPE_VIEWS = frozenset({"float_bits", "float_from_bits", "int_bits"})


def view_chain(eqns, var, root, dtype_views: bool = False):
    """The view equations (broadcast, transpose, slice, reshape; with `dtype_views`,
    DTYPE_VIEWS too) that make `var` from `root`, in order, among `eqns`; None where something
    else does."""
    chain = []
    producers = {eqn.out: eqn for eqn in eqns}
    while var is not root:
        eqn = producers.get(var)
        if eqn is None or not (eqn.prim in VIEWS or dtype_views and eqn.prim in DTYPE_VIEWS):
            return None
        chain.append(eqn)
        var = eqn.inputs[0]
    return tuple(reversed(chain))


def view_through(xp, array, eqns):
    """`array` (NumPy's, or a device library's whose module is `xp`) seen through the view
    equations `eqns` (broadcast, transpose, slice, reshape), in order, as NumPy's own views of
    it: a library call then reads the strides the user's code gave it (which decide NumPy's
    loop, BLAS or its own, and so its bits), and a view the function returns is a view of the
    caller's array."""
    return view_function(xp, eqns)(array)


def view_function(xp, eqns):
    """view_through's view as a function of the array, its indices worked out once (a library
    call in a loop traced whole takes its views at every call)."""
    steps = []
    for eqn in eqns:
        out = eqn.out.aval.shape
        if eqn.prim == "transpose":
            steps.append((_transposed, eqn.param("perm"), out))
        elif eqn.prim == "broadcast":
            steps.append((xp.broadcast_to, out, out))
        elif eqn.prim == "reshape":
            steps.append((_reshaped, out, out))
        elif eqn.prim == "slice":
            start, step, drop = eqn.param("start"), eqn.param("step"), eqn.param("drop")
            lengths = iter(out)
            index = []
            for k in range(eqn.inputs[0].aval.ndim):
                if k in drop:
                    index.append(start[k])
                    continue
                n = next(lengths)
                stop = start[k] + step[k] * n
                index.append(slice(start[k], None if stop < 0 else stop, step[k]) if n else slice(0, 0))
            if len(drop) == len(index):
                index.append(Ellipsis)  # a 0-d view, as NumPy's x[0, ...] is (x[0] would be a scalar)
            steps.append((_indexed, tuple(index), out))
        elif eqn.prim in DTYPE_VIEWS:
            steps.append((_as_dtype, eqn.out.aval.dtype, out))
        else:
            raise AssertionError(f"{eqn.prim} is no view")

    def view(array):
        for apply, arg, out in steps:
            array = apply(array, arg)
            if array.shape != out:
                raise AssertionError(f"numfuse: a view came out {tuple(array.shape)}, not {out}")
        return array

    return view


def _as_dtype(array, dtype):
    return array.view(dtype)


def _transposed(array, perm):
    return array.transpose(perm)


def _reshaped(array, shape):
    return array.reshape(shape)


def _indexed(array, index):
    return array[index]
