"""Arguments that share memory: `f(x, x)`, `f(base[:3], base[1:])`.

NumPy runs a function on the arrays themselves, so a write through one argument is seen by
every other argument that shares its memory. numfuse traces each argument as its own buffer;
where arguments overlap and the function writes one of them, that is not NumPy's answer. So
which arguments overlap is part of a call's signature (`Sharing.key`), and where the function
writes one of them jit traces them again as views of one buffer, which the tracer follows as it
follows any view:

- the same array passed twice (same data pointer, shape and strides) is one traced argument;
- other overlapping arrays become views of their common base (the NumPy array at the end of
  their `.base` chain), reached by a transpose and a basic index (`Recipe`), checked by
  building that view of the real base and comparing its pointer, shape and strides. The base is
  a hidden argument of the call; the arguments' views of it are traced.

Overlapping arguments that are not such views (another dtype, a stride that is no multiple of
the base's) and that the function writes are refused with an UnsupportedError; ones it only
reads need nothing (the trace reads them as they are).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UnsupportedError

__all__ = ["Recipe", "Sharing", "external_sharing", "find_sharing", "overlapping"]


def _interface(value) -> dict | None:
    if isinstance(value, np.ndarray):
        return value.__array_interface__
    return getattr(value, "__cuda_array_interface__", None)


def _extent(value):
    """(pointer, first byte, one past the last byte, shape, byte strides) of an array's memory,
    or None for what is not an array (or holds no element)."""
    face = _interface(value)
    if face is None:
        return None
    shape = tuple(face["shape"])
    if 0 in shape:
        return None
    itemsize = np.dtype(face["typestr"]).itemsize
    strides = face.get("strides") or _c_strides(shape, itemsize)
    pointer = face["data"][0]
    low = pointer + sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    high = pointer + sum((n - 1) * s for n, s in zip(shape, strides) if s > 0) + itemsize
    return pointer, low, high, shape, tuple(strides)


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def overlapping(values, positions=None) -> bool:
    """Whether any two of these arrays (at `positions`, default all) may share memory: their
    byte ranges overlap. The fast call path's check, before it runs a plan that writes an
    argument."""
    ranges = []
    for i in range(len(values)) if positions is None else positions:
        extent = _extent(values[i])
        if extent is not None:
            ranges.append((extent[1], extent[2]))
    if len(ranges) < 2:
        return False
    ranges.sort()
    return any(ranges[k + 1][0] < ranges[k][1] for k in range(len(ranges) - 1))


def external_sharing(values, positions, externals) -> tuple:
    """Which array arguments (at `positions` of `values`) share memory with arrays the function
    reads from its globals, closure or static arguments (`externals`, captures.py): `f(W)` where
    f also reads the global `W`. NumPy reads one array there, so does the trace, where it can:
    ((argument position, external index, how), ...), `how` being None where the external is the
    argument itself, a Recipe making it a view of the argument, or False (not such a view).
    Empty (the common case) costs one byte-range comparison per pair."""
    found = []
    for j, external in enumerate(externals):
        outer = _extent(external)
        if outer is None:
            continue
        for i in positions:
            value = values[i]
            if value is external:
                found.append((i, j, None))
                continue
            # (Host and device pointers are not comparable: only NumPy arrays with NumPy arrays.)
            if not isinstance(value, np.ndarray) or type(value) is not type(external):
                continue
            inner = _extent(value)
            if inner is None or inner[2] <= outer[1] or outer[2] <= inner[1]:
                continue
            if inner[0] == outer[0] and inner[3:] == outer[3:] and value.dtype == external.dtype:
                found.append((i, j, None))  # the same memory, as another array object
                continue
            recipe = recipe_for(external, value)
            found.append((i, j, recipe if recipe is not None else False))
    return tuple(found)


@dataclass(frozen=True)
class Recipe:
    """How an argument is a view of its group's base: `base.transpose(perm)[index]`, where
    index holds slices, None (a new axis of size one) and ints (axes the view drops)."""

    perm: tuple[int, ...]
    index: tuple  # per entry: (start, stop, step) for a slice, None, or an int (hashable)
    shape: tuple[int, ...] | None = None  # the C-contiguous base reshaped first
    broadcast: tuple[int, ...] | None = None  # then broadcast to this shape (axes of stride 0)

    def apply(self, base):
        if self.shape is not None:
            base = base.reshape(self.shape)
        view = base.transpose(self.perm)[tuple(slice(*p) if isinstance(p, tuple) else p for p in self.index)]
        return view if self.broadcast is None else np.broadcast_to(view, self.broadcast)

    @staticmethod
    def whole(ndim: int) -> "Recipe":
        """base[:, ..., :]: all of the base, as another array object (x[:] beside x)."""
        return Recipe(tuple(range(ndim)), ((None, None, None),) * ndim)

    def __str__(self) -> str:
        def part(p):
            if isinstance(p, tuple):
                return ":".join("" if v is None else str(v) for v in p)
            return "None" if p is None else str(p)

        base = "base" if self.shape is None else f"base.reshape{self.shape}"
        text = f"{base}.transpose{self.perm}[{', '.join(part(p) for p in self.index)}]"
        return text if self.broadcast is None else f"np.broadcast_to({text}, {self.broadcast})"


@dataclass(frozen=True)
class Group:
    """Arguments (positions) whose memory overlaps. `same`: all the same array. Otherwise
    `recipes` makes each a view of the base (None: not such a view). `identical`: for each
    position, the first position passed the same Python object (`f(X, X)`: `X is Y` holds
    in NumPy, so the trace must get one object too)."""

    positions: tuple[int, ...]
    same: bool
    recipes: tuple[Recipe | None, ...] = ()
    identical: tuple[int, ...] = ()

    @property
    def expressible(self) -> bool:
        return self.same or all(r is not None for r in self.recipes)

    @property
    def repeats_an_object(self) -> bool:
        return self.identical != self.positions


@dataclass(frozen=True)
class Sharing:
    """The overlapping arguments of one call."""

    groups: tuple[Group, ...]

    @property
    def key(self) -> tuple:
        return tuple((g.positions, g.same, g.recipes, g.identical) for g in self.groups)

    def members(self) -> set[int]:
        return {p for g in self.groups for p in g.positions}

    def refusal(self, names, written: set[int], fn_name: str) -> UnsupportedError | None:
        for group in self.groups:
            if not group.expressible and written & set(group.positions):
                shared = " and ".join(repr(names[p]) for p in group.positions)
                writes = ", ".join(repr(names[p]) for p in group.positions if p in written)
                return UnsupportedError(
                    f"arguments {shared} share memory and {fn_name} writes {writes}: numfuse gives NumPy's "
                    "result there when they are the same array, or views of one array by slicing and "
                    "transposing with its dtype; these are not. Pass a copy of the argument(s) it reads "
                    "(which is what NumPy's answer would then be too), or the one array and index it inside"
                )
        return None

    def describe(self, names) -> list[str]:
        lines = []
        for group in self.groups:
            shared = ", ".join(repr(names[p]) for p in group.positions)
            if group.same and group.identical == (group.positions[0],) * len(group.positions):
                lines.append(f"arguments {shared} are the same array: traced as one")
            elif group.same:
                lines.append(f"arguments {shared} are the same memory: traced as one array and views of all of it")
            else:
                views = "; ".join(f"{names[p]} = {r}" for p, r in zip(group.positions, group.recipes))
                lines.append(f"arguments {shared} share memory: traced as views of their base ({views})")
        return lines


def base_of(value):
    """The array at the end of `value`'s `.base` chain of arrays of its own type."""
    base = value
    while type(getattr(base, "base", None)) is type(value):
        base = base.base
    return base


def find_sharing(values, positions) -> Sharing | None:
    """The groups of overlapping arrays among `values` at `positions`, or None if none
    overlap (the common case: no cost beyond reading each array's pointer)."""
    spans = []
    for i in positions:
        extent = _extent(values[i])
        if extent is not None:
            spans.append((extent[1], extent[2], i, extent))
    if len(spans) < 2:
        return None
    spans.sort(key=lambda s: (s[0], s[2]))
    groups, current, end = [], [spans[0]], spans[0][1]
    for span in spans[1:]:
        if span[0] < end:
            current.append(span)
            end = max(end, span[1])
        else:
            groups.append(current)
            current, end = [span], span[1]
    groups.append(current)
    found = tuple(_group(values, g) for g in groups if len(g) > 1)
    return Sharing(found) if found else None


def _group(values, spans) -> Group:
    positions = tuple(sorted(s[2] for s in spans))
    identical = tuple(next(q for q in positions if values[q] is values[p]) for p in positions)
    extents = {s[2]: s[3] for s in spans}
    first = values[positions[0]]
    dtype = np.dtype(_interface(first)["typestr"])
    same = all(extents[p][0] == extents[positions[0]][0] and extents[p][3:] == extents[positions[0]][3:]
               and np.dtype(_interface(values[p])["typestr"]) == dtype for p in positions)
    if same:
        return Group(positions, True, identical=identical)
    base = base_of(first)
    recipes = []
    for p in positions:
        value = values[p]
        recipe = None
        if base_of(value) is base and _extent(base) is not None:
            recipe = recipe_for(value, base)
        recipes.append(recipe)
    return Group(positions, False, tuple(recipes), identical)


def recipe_for(view, base) -> Recipe | None:
    """A transpose and a basic index of `base`, reshaped first where it is C-contiguous, that
    give exactly `view` (its pointer, shape and strides), or None. (NumPy's views of a view
    keep the array that owns the memory as their base: `m[:, 1:]` of `m = arange(36).reshape(6,
    6)` has the 1-D arange as its base; reshaped by the view's strides, (6, 6), it is m again.)"""
    recipe = _recipe_for(view, base)
    if recipe is not None or not _c_contiguous(base):
        return recipe
    face = _interface(view)
    itemsize = np.dtype(face["typestr"]).itemsize
    strides = sorted({abs(s) // itemsize for s, n in zip(_extent(view)[4], face["shape"]) if n > 1 and s},
                     reverse=True)
    size = int(np.prod(_interface(base)["shape"]))
    if not strides:
        return None
    chain = [size] + strides + ([1] if strides[-1] != 1 else [])
    if any(a % b for a, b in zip(chain, chain[1:])):
        return None
    shape = tuple(a // b for a, b in zip(chain, chain[1:]))
    recipe = _recipe_for(view, base.reshape(shape))
    return None if recipe is None else Recipe(recipe.perm, recipe.index, shape, recipe.broadcast)


def _c_contiguous(array) -> bool:
    face = _interface(array)
    itemsize = np.dtype(face["typestr"]).itemsize
    return face.get("strides") is None or tuple(face["strides"]) == _c_strides(tuple(face["shape"]), itemsize)


def _recipe_for(view, base) -> Recipe | None:
    view_face, base_face = _interface(view), _interface(base)
    dtype = np.dtype(view_face["typestr"])
    if np.dtype(base_face["typestr"]) != dtype:
        return None
    itemsize = dtype.itemsize
    v_ptr, _, _, v_shape, v_strides = _extent(view)
    b_ptr, _, _, b_shape, b_strides = _extent(base)
    if any(s % itemsize for s in v_strides + b_strides) or (v_ptr - b_ptr) % itemsize:
        return None
    v_st = [s // itemsize for s in v_strides]
    b_st = [s // itemsize for s in b_strides]
    axes_for: list[tuple[int, int] | None] = []  # per view dimension: (base axis, step) or None
    used: set[int] = set()
    for n, stride in zip(v_shape, v_st):
        if n == 1 or stride == 0:  # (a broadcast axis: size one, then broadcast_to)
            axes_for.append(None)
            continue
        choices = [j for j in range(len(b_shape)) if j not in used and b_st[j] != 0 and b_shape[j] > 1
                   and stride % b_st[j] == 0]
        if not choices:
            return None
        j = max(choices, key=lambda j: abs(b_st[j]))
        used.add(j)
        axes_for.append((j, stride // b_st[j]))
    # The offset from the base's first element, split over the base's axes (largest strides
    # first): each axis' start.
    offset = (v_ptr - b_ptr) // itemsize
    start = {}
    for j in sorted(range(len(b_shape)), key=lambda j: -abs(b_st[j])):
        if b_st[j] == 0 or b_shape[j] == 1:
            start[j] = 0
            continue
        k = max(0, min(b_shape[j] - 1, offset // b_st[j]))
        start[j] = k
        offset -= k * b_st[j]
    if offset:
        return None
    index: list = []
    for n, entry in zip(v_shape, axes_for):
        if entry is None:
            index.append(None)
            continue
        j, step = entry
        first, last = start[j], start[j] + (n - 1) * step
        stop = last + (1 if step > 0 else -1)
        index.append((first, None if stop < 0 else stop, step))
    unused = [j for j in range(len(b_shape)) if j not in used]
    index.extend(start[j] for j in unused)
    broadcast = tuple(v_shape) if any(s == 0 and n > 1 for s, n in zip(v_st, v_shape)) else None
    recipe = Recipe(tuple(j for e in axes_for if e is not None for j in (e[0],)) + tuple(unused), tuple(index),
                    broadcast=broadcast)
    try:
        built = recipe.apply(base)
    except (IndexError, ValueError):
        return None
    got = _extent(built)
    if got is None or got[0] != v_ptr or got[3] != v_shape or any(
            a != b for a, b, n in zip(got[4], v_strides, v_shape) if n > 1):
        return None
    return recipe
