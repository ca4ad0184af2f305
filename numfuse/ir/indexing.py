"""Index expressions: what one dimension of an index map, or of a load or store, indexes with.

An entry is one of

- `None`: the constant 0 (a size-one or broadcast dimension);
- a variable: a domain axis (an int, in lower.py) or a loop variable (a str, in a LoopNest;
  collapse.py rewrites the one into the other);
- `Lin(terms, const)`: `sum(coef * var) + const`, for slices (`2*i0 + 1`) and for reshapes that
  split a dimension (`6*i0 + i1`);
- `DivMod(inner, div, mod)`: `(inner // div) % mod`, for reshapes that merge dimensions
  (`i0 // 6`, `i0 % 6`). A `Lin` term's variable may be a `DivMod`;
- `Gathered(value)`: an index computed by the kernel (a gather's `x[idx]` reads x at the value
  loaded from idx): `value` is that value's name in a kernel, or a key standing for it in the
  planner. It is no domain axis: a buffer read at one keeps its own rank.

Entries print as Python expressions (`2*r0 + 1`, `i0 // 6`), which is also how code generation
renders them. Only `None` and plain variables are "plain": axis collapsing may merge those.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Union


@dataclass(frozen=True)
class Lin:
    terms: tuple[tuple[Any, int], ...]  # (variable or DivMod, coefficient)
    const: int = 0

    def __str__(self) -> str:
        parts = []
        for var, coef in self.terms:
            text = _atom(var)
            parts.append(text if coef == 1 else f"-{text}" if coef == -1 else f"{coef}*{text}")
        if self.const or not parts:
            parts.append(str(self.const))
        text = " + ".join(parts)
        return text.replace("+ -", "- ")


@dataclass(frozen=True)
class DivMod:
    inner: Any  # an entry
    div: int = 1
    mod: Optional[int] = None

    def __str__(self) -> str:
        text = _atom(self.inner)
        if self.div != 1:
            text = f"{text} // {self.div}"
        if self.mod is not None:
            text = f"({text}) % {self.mod}" if self.div != 1 else f"{text} % {self.mod}"
        return text


@dataclass(frozen=True)
class Gathered:
    value: Any

    def __str__(self) -> str:
        return str(self.value)


Entry = Union[None, int, str, Lin, DivMod, Gathered]


def _atom(entry) -> str:
    """An entry as an operand of *, // or %: parenthesized unless it is a variable."""
    text = fmt(entry)
    return text if is_var(entry) or entry is None else f"({text})"


def is_var(entry) -> bool:
    return isinstance(entry, (int, str)) and not isinstance(entry, bool)


def is_plain(entry) -> bool:
    return entry is None or is_var(entry)


def fmt(entry) -> str:
    if entry is None:
        return "0"
    return str(entry)


def as_lin(entry) -> Lin:
    if entry is None:
        return Lin((), 0)
    if isinstance(entry, Lin):
        return entry
    return Lin(((entry, 1),), 0)


def normalize(lin: Lin):
    """The simplest entry equal to `lin`."""
    coefs: dict = {}
    for var, coef in lin.terms:
        coefs[var] = coefs.get(var, 0) + coef
    terms = tuple((v, c) for v, c in coefs.items() if c)
    if not terms:
        return None if lin.const == 0 else Lin((), lin.const)
    if lin.const == 0 and len(terms) == 1 and terms[0][1] == 1:
        return terms[0][0]
    return Lin(terms, lin.const)


def affine(entry, step: int, offset: int):
    """`step * entry + offset`."""
    lin = as_lin(entry)
    return normalize(Lin(tuple((v, c * step) for v, c in lin.terms), lin.const * step + offset))


def combine(parts: list[tuple[Any, int]]):
    """`sum(coef * entry)` over (entry, coef) pairs."""
    terms, const = [], 0
    for entry, coef in parts:
        lin = as_lin(entry)
        terms.extend((v, c * coef) for v, c in lin.terms)
        const += lin.const * coef
    return normalize(Lin(tuple(terms), const))


def divmod_entry(entry, div: int, mod: Optional[int]):
    """`(entry // div) % mod` (no `% mod` for None)."""
    if entry is None:
        return None
    if div == 1 and mod is None:
        return entry
    return DivMod(entry, div, mod)


def constant_value(entry) -> int:
    """The value of an entry that reads no variables (variables(entry) is empty): a constant
    Lin, or a DivMod of one (x.ravel()[7] of a 2 x 4 array reads row 7 // 4)."""
    if entry is None:
        return 0
    if isinstance(entry, DivMod):
        value = constant_value(entry.inner) // entry.div
        return value % entry.mod if entry.mod is not None else value
    if isinstance(entry, Lin):
        return entry.const + sum(coef * constant_value(term) for term, coef in entry.terms)
    raise ValueError(f"index entry {entry} is not a constant")


def variables(entry) -> set:
    """The variables an entry reads."""
    if entry is None:
        return set()
    if is_var(entry) or isinstance(entry, Gathered):
        return {entry}  # a computed index counts as a variable: it is not a constant
    if isinstance(entry, DivMod):
        return variables(entry.inner)
    found = set()
    for var, _ in entry.terms:
        found |= variables(var)
    return found


def lift_constants(entry, name_for: Callable[[int], str]):
    """The entry with the nonzero constant of each Lin in it replaced by a variable,
    `name_for(constant)`: `i0 + 7` becomes `i0 + off0`. The result stays a Lin (never a plain
    variable), so it is still read as an index with a constant in it."""
    if entry is None or is_var(entry) or isinstance(entry, Gathered):
        return entry
    if isinstance(entry, DivMod):
        return DivMod(lift_constants(entry.inner, name_for), entry.div, entry.mod)
    terms = tuple((lift_constants(v, name_for) if isinstance(v, (Lin, DivMod)) else v, c) for v, c in entry.terms)
    if entry.const:
        terms += ((name_for(entry.const), 1),)
    return Lin(terms, 0)


def substitute(entry, fn: Callable[[Any], Any]):
    """The entry with every variable `v` replaced by `fn(v)` (a variable)."""
    if entry is None or isinstance(entry, Gathered):
        return entry
    if is_var(entry):
        return fn(entry)
    if isinstance(entry, DivMod):
        return DivMod(substitute(entry.inner, fn), entry.div, entry.mod)
    return Lin(tuple((substitute(v, fn), c) for v, c in entry.terms), entry.const)


def interval(entry, ranges: dict, extent: int) -> tuple[int, int]:
    """The values an entry takes (lo, hi, inclusive; lo > hi: none) where each variable in
    `ranges` takes those of its (lo, hi); within [0, extent - 1] where that is not known (a
    computed index, or a variable not in `ranges`)."""
    if entry is None:
        return (0, 0)
    if is_var(entry):
        return ranges.get(entry, (0, extent - 1))
    if isinstance(entry, Lin):
        lo = hi = entry.const
        for term, coef in entry.terms:
            a, b = interval(term, ranges, extent)
            if a > b:
                return (1, 0)
            lo += min(a * coef, b * coef)
            hi += max(a * coef, b * coef)
        return (lo, hi)
    if isinstance(entry, DivMod):
        a, b = interval(entry.inner, ranges, extent)
        if a > b:
            return (1, 0)
        a, b = a // entry.div, b // entry.div
        if entry.mod is None:
            return (a, b)
        if a // entry.mod != b // entry.mod:
            return (0, entry.mod - 1)
        return (a % entry.mod, b % entry.mod)
    return (0, extent - 1)  # Gathered


def boxes_meet(first, second) -> bool:
    """Whether two boxes (an interval per dimension) share a point."""
    if any(a > b for a, b in first) or any(a > b for a, b in second):
        return False
    return all(a1 <= b2 and a2 <= b1 for (a1, b1), (a2, b2) in zip(first, second))
