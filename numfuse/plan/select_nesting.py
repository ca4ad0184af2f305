"""Which values to store so that no kernel nests selects too deeply.

A concatenation read at points that vary along its axis lowers to a `Select` whose branches
each evaluate their operand in a scope of their own (loops/lower.py). A concatenation of values
that are themselves computed through such selects copies their code into every branch, so the
kernel grows by a factor at each level: a time loop of `np.roll` stencils (five reads of the
last step, each a two-way select) grows its kernel about five times a step. Where reading a
value through a concatenation would nest more than MAX_NESTED_SELECTS selects, that value is
stored and later kernels load it: a kernel's code stays bounded, and the kernels of such a loop
share one code, compiled once.

What varies is followed abstractly: a value read with a set of its dimensions varying (the
others fixed, as a row `y[1]` fixes one) reads its operands with the dimensions that the view
and concatenation maps (ir/viewmaps.py) then make vary. A concatenation read at a fixed index
along its axis is one operand, no select: an unrolled loop of `np.array([...rows])` steps that
reads the last step's rows nests none.
"""

from __future__ import annotations

from ..ir.graph import Eqn, Var
from ..ir.indexing import Gathered, variables
from ..ir.library_ops import is_library
from ..ir.ops import is_reduction
from ..ir.viewmaps import STRUCTURAL, concat_pieces, gather_pieces, operand_map

__all__ = ["MAX_NESTED_SELECTS", "stores_for_nesting"]

# Selects one evaluation may nest: two is a step of a game of life's rolls of rolls, or two steps
# of a roll stencil's time loop (each branch some tens of statements).
MAX_NESTED_SELECTS = 2


def stores_for_nesting(eqns: list[Eqn], producers: dict, stored: set) -> dict[Var, str]:
    """The values (beyond `stored`: inputs and values kernels already store) to store, each
    with why; `eqns` in trace order."""
    depth = _Depth(producers, set(stored))
    chosen: dict[Var, str] = {}
    for eqn in eqns:
        if eqn.prim != "concatenate":
            continue
        ndim = len(eqn.out.aval.shape)
        pieces = concat_pieces(eqn, _representative(range(ndim), ndim))
        if len(pieces) < 2:
            continue
        for atom, imap, _, _ in pieces:
            if not isinstance(atom, Var) or depth.of(atom, _varying(imap)) < MAX_NESTED_SELECTS:
                continue
            root = _below_views(atom, producers)
            if root in depth.stored or root not in producers:
                continue
            depth.store(root)
            loc = f" at {eqn.loc.short()}" if eqn.loc else ""
            chosen[root] = (f"reading it through the concatenation{loc} would nest more than "
                            f"{MAX_NESTED_SELECTS} selects (each branch a copy of the code that computes it)")
    return chosen


class _Depth:
    """The most selects that evaluating a value nests, for the dimensions of it that vary."""

    def __init__(self, producers: dict, stored: set):
        self.producers = producers
        self.stored = stored
        self.memo: dict[tuple[Var, frozenset], int] = {}

    def store(self, var: Var) -> None:
        self.stored.add(var)
        self.memo.clear()  # (depths above it change)

    def of(self, var: Var, varying: frozenset) -> int:
        # Post-order on an explicit stack: a traced graph can be deeper than Python's recursion.
        stack = [(var, varying)]
        while stack:
            key = stack[-1]
            if key in self.memo:
                stack.pop()
                continue
            reads, branching = self._reads(*key)
            pending = [r for r in reads if r not in self.memo]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            self.memo[key] = branching + max((self.memo[r] for r in reads), default=0)
        return self.memo[(var, varying)]

    def _reads(self, var: Var, varying: frozenset) -> tuple[list, int]:
        """(the (operand, varying dimensions) it reads, 1 if it is a select else 0)."""
        eqn = self.producers.get(var)
        if eqn is None or var in self.stored or is_reduction(eqn.prim) or is_library(eqn.prim):
            return [], 0
        imap = _representative(varying, len(var.aval.shape))
        if eqn.prim in STRUCTURAL:
            operand = eqn.inputs[0]
            return ([(operand, _varying(operand_map(eqn, imap)))] if isinstance(operand, Var) else []), 0
        if eqn.prim == "concatenate":
            pieces = concat_pieces(eqn, imap)
            return [(a, _varying(m)) for a, m, _, _ in pieces if isinstance(a, Var)], int(len(pieces) > 1)
        if eqn.prim == "gather":
            pieces = gather_pieces(eqn, imap, lambda j: Gathered(j))
            return [(a, _varying(m)) for a, m in pieces if isinstance(a, Var)], 0
        return [(a, frozenset(d for d in varying if d < len(a.aval.shape)))
                for a in eqn.inputs if isinstance(a, Var)], 0


def _representative(varying, ndim: int) -> tuple:
    """A map over `ndim` dimensions, those in `varying` each its own variable, the others fixed."""
    varying = frozenset(varying)
    return tuple(d if d in varying else None for d in range(ndim))


def _varying(imap) -> frozenset:
    return frozenset(d for d, entry in enumerate(imap) if variables(entry))


def _below_views(atom: Var, producers: dict) -> Var:
    """The value a chain of views reads (a view itself is never stored)."""
    while atom in producers and producers[atom].prim in STRUCTURAL and isinstance(producers[atom].inputs[0], Var):
        atom = producers[atom].inputs[0]
    return atom
