"""Which values to store so that no kernel's code outgrows what its compiler handles quickly,
and no scalar's long computation is repeated at every point of a kernel.

A fused value is computed where it is read, so a kernel's code holds every operation between
the values it loads and those it stores. A Python loop that accumulates a scalar
(`trace += np.tanh(a[i, i])` for each i) makes one chain of thousands of operations; fused
whole, it is one kernel whose compile time grows faster than its length (Numba's SSA passes:
16 tanh took 7 s on the CPU target, 30 took 54 s), and whose every point recomputes the whole
chain when the scalar is broadcast into an array (`a + trace`).

So, in trace order, each value's cone is followed: the operations evaluating it would compute,
back to what is stored (inputs, reductions, library results, values already chosen), each
weighted by a rough size of its code. Where a value's cone would pass the target's budget, its
largest operand is stored instead, and the kernels after load it: a chain is cut into stretches
of the same operations, which are kernels of one code (their offsets are arguments), compiled
once. And a scalar whose cone passes the target's smaller scalar budget is stored where an array
reads it, computed once rather than at every point.

A scalar carried from one step of a loop to the next (`beta *= 1 - alpha * alpha`, where alpha is
stored for the array that reads it) would be computed from its start in every later kernel, a
chain growing at every step and each kernel a code of its own (durbin: 89 codes). So a scalar of
a stored scalar's cone that is read again is stored too: the kernel storing the one computes the
other on the way, and the steps after load it.

And a computed array that a reduction reads as one operand of a sum of products (a convolution
of a normalized input, `tanh(A) @ B` fused) is stored where its points would be computed again
for each sum reading them (_contracted_broadcasts): npbench's resnet computed its batch norms
once for every output channel, 3x slower than NumPy.
"""

from __future__ import annotations

from ..ir.graph import Eqn, Var
from ..ir.library_ops import is_library
from ..ir.ops import is_reduction
from ..ir.primitives import PRIMITIVES
from ..ir.viewmaps import STRUCTURAL

__all__ = ["stores_for_code_size"]

# Operations whose templates are long (vectorizable polynomials with range reductions and
# special cases), in units of a plain arithmetic operation; complex values count four times.
_LONG = {"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos",
         "arctan", "arctan2", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "power", "logaddexp",
         "logaddexp2", "cbrt", "hypot", "spacing", "nextafter", "gcd", "lcm"}
LONG_WEIGHT = 12
# A computed operand of a contraction is stored where a point computes at least this many
# operations (a normalization's subtract, divide, sqrt and maximum), and would compute them
# again more than the scalar budget in all; cheaper ones (an index formula) are computed again.
REUSED_MIN = 4
_SUMMING = ("reduce_sum", "reduce_prod")
_CONTRACTION_WALK = 64  # elementwise values followed back from a reduction's operand
CARRIED_MIN = 2  # a value of one or two operations (a cast of a load) is computed again, not stored


def weight(eqn: Eqn) -> int:
    if eqn.prim in STRUCTURAL:
        return 0  # an index map: no code of its own
    base = LONG_WEIGHT if eqn.prim in _LONG else 1
    return base * (4 if eqn.out.aval.dtype.kind == "c" else 1)


def stores_for_code_size(eqns: list[Eqn], producers: dict, stored: set, budget: int,
                         scalar_budget: int) -> dict[Var, str]:
    """The values (beyond `stored`) to store, each with why; `eqns` in trace order."""
    cones: dict[Var, dict[Var, int]] = {}  # value -> the operations its evaluation computes, weighted
    chosen: dict[Var, str] = {}
    # Scalars computed on the way to a stored scalar (the kernel that stores it computes them),
    # each with that scalar: one read again later is stored too, not computed again from its start.
    computed_for: dict[Var, Var] = {}

    def cone_of(atom) -> dict[Var, int]:
        if not isinstance(atom, Var) or atom in stored or atom in chosen:
            return {}
        return cones.get(atom, {})

    def store(var: Var, why: str) -> None:
        root = _below_views(var, producers)
        if root not in producers:
            return  # a view of an input: loaded already
        if root.aval.size == 1:
            for value in cones.get(root, {}):
                if value is not root and value.aval.size == 1:
                    computed_for.setdefault(value, root)
        if root not in stored:
            chosen.setdefault(root, why)
        for value in _views_of(root, var, producers):
            cones[value] = {}  # (a view made before its value was chosen loads it too)

    def cone(eqn: Eqn) -> dict[Var, int]:
        merged: dict[Var, int] = {}
        for atom in eqn.inputs:
            merged.update(cone_of(atom))
        if eqn.prim not in STRUCTURAL:
            merged[eqn.out] = weight(eqn)
        return merged

    contracted = _contracted_broadcasts(eqns, producers)
    for eqn in eqns:
        for atom in eqn.inputs:
            if isinstance(atom, Var) and atom in computed_for and sum(cone_of(atom).values()) > CARRIED_MIN:
                # A loop-carried scalar (`beta *= 1 - alpha * alpha`, where alpha is stored): its
                # chain would grow at every step, and each kernel with it be a code of its own.
                made = producers[computed_for[atom]].loc
                loc = f" at {eqn.loc.short()}" if eqn.loc else ""
                store(atom, f"it leads to the stored scalar of {made.short() if made else 'an earlier line'} and is "
                            f"read again{loc}: carried on so, its computation would grow at every step, "
                            f"each kernel reading it a code of its own")
        if is_reduction(eqn.prim) or is_library(eqn.prim) or eqn.prim == "update":
            cones[eqn.out] = {}  # stored, or an accumulator: what reads it starts afresh
            continue
        if id(eqn) in contracted:
            atom = eqn.inputs[0]
            reuse = eqn.out.aval.size // atom.aval.size
            cone_ops = cone_of(atom)
            size = sum(cone_ops.values())
            if size >= REUSED_MIN and size * reuse > scalar_budget and _loads(cone_ops, producers):
                loc = f" at {eqn.loc.short()}" if eqn.loc else ""
                store(atom, f"it is a computed operand of a sum of products{loc}, which would compute its "
                            f"{size} operations again for each of the {reuse} sums reading a point")
        if eqn.out.aval.size > 1:
            for atom in eqn.inputs:
                if isinstance(atom, Var) and atom.aval.size == 1:
                    size = sum(cone_of(atom).values())
                    if size > scalar_budget:
                        loc = f" at {eqn.loc.short()}" if eqn.loc else ""
                        store(atom, f"each of the {eqn.out.aval.size} points reading it{loc} would "
                                    f"compute its {size} operations again")
        merged = cone(eqn)
        while sum(merged.values()) > budget:
            operands = [a for a in eqn.inputs if cone_of(a)]
            if not operands:
                break
            largest = max(operands, key=lambda a: sum(cone_of(a).values()))
            loc = f" at {eqn.loc.short()}" if eqn.loc else ""
            store(largest, f"the kernel reading it{loc} would compute more than {budget} operations "
                           f"(a kernel's compile time grows faster than its code)")
            if cone_of(largest):
                break  # (could not be stored: a view of an input)
            merged = cone(eqn)
        cones[eqn.out] = merged
    return chosen


def _contracted_broadcasts(eqns: list[Eqn], producers: dict) -> set[int]:
    """The broadcasts (by id) through which a reduction reads a computed array as one operand
    of a contraction: the array varies along axes the reduction sums and is spread along axes
    it keeps (a convolution's `x[:, i:i + K, j:j + K, :, None] * w`, summed over the window for
    each output channel; `tanh(A) @ B` fused as sums of products). A kernel of such a
    reduction computes the array's point again for every kept point it is spread over: no loop
    of the nest holds it still, as a row's own values are held through the row."""
    found: set[int] = set()
    for eqn in eqns:
        if eqn.prim not in _SUMMING or not isinstance(eqn.inputs[0], Var):
            continue
        shape = eqn.inputs[0].aval.shape
        summed = set(eqn.param("axes", ()))
        stack, seen = [eqn.inputs[0]], set()
        while stack and len(seen) < _CONTRACTION_WALK:
            var = stack.pop()
            producer = producers.get(var)
            if var in seen or producer is None or var.aval.shape != shape:
                continue
            seen.add(var)
            if producer.prim == "broadcast":
                operand = producer.inputs[0]
                if isinstance(operand, Var) and operand.aval.size:
                    padded = (1,) * (len(shape) - operand.aval.ndim) + operand.aval.shape
                    spread = {a for a, (n, m) in enumerate(zip(padded, shape)) if n == 1 and m > 1}
                    if spread and not spread & summed and any(padded[a] > 1 for a in summed):
                        found.add(id(producer))
            elif producer.prim in PRIMITIVES and PRIMITIVES[producer.prim].kind in ("elementwise", "convert"):
                stack.extend(a for a in producer.inputs if isinstance(a, Var))
    return found


def _loads(cone: dict[Var, int], producers: dict) -> bool:
    """Whether evaluating a cone reads memory. One that does not (an array made from its
    indices, np.linspace's ramp) stays computed where it is read: storing it would add the
    bytes that made arrays never cost."""
    return any(isinstance(a, Var) and a not in cone for v in cone for a in producers[v].inputs)


def _below_views(atom: Var, producers: dict) -> Var:
    """The value a chain of views reads (a view itself is never stored)."""
    while atom in producers and producers[atom].prim in STRUCTURAL and isinstance(producers[atom].inputs[0], Var):
        atom = producers[atom].inputs[0]
    return atom


def _views_of(root: Var, var: Var, producers: dict) -> list[Var]:
    """`var` and the views between it and `root`, which now load what is stored."""
    chain = [var]
    while var is not root:
        var = producers[var].inputs[0]
        chain.append(var)
    return chain
