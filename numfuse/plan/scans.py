"""Scans the target would run slowly fused: the library's scan instead.

A fused scan (scan_sum, scan_prod: np.cumsum, np.cumprod) runs each row in one worker, in the
row's order, with its producers and consumers in the same pass. That keeps a target busy only
while there are enough rows, or the rows are short (Target.fuses_scan): a few long rows (a
flattened cumsum of a large array) would leave a GPU idle for a long time. Such a scan becomes
the library's (np.cumsum on the CPU and the simulator, CuPy's CUB scan on a GPU), a step between
the kernels that store its input and read its result, and explain's notes say why.
"""

from __future__ import annotations

from ..ir.graph import Eqn, Graph
from ..ir.ops import is_scan

_LIBRARY_SCAN = {"scan_sum": "cumsum", "scan_prod": "cumprod"}


def scans_for_target(graph: Graph, target) -> Graph:
    """`graph` with each scan that `target` does not fuse as a library call."""
    eqns, notes = [], []
    for eqn in graph.eqns:
        if not is_scan(eqn.prim):
            eqns.append(eqn)
            continue
        (axis,) = eqn.param("axes")
        shape = eqn.out.aval.shape
        points = shape[axis]
        rows = eqn.out.aval.size // max(1, points)
        if target.fuses_scan(rows, points):
            eqns.append(eqn)
            continue
        name = _LIBRARY_SCAN[eqn.prim]
        eqns.append(Eqn(name, eqn.inputs, eqn.out, (("axis", axis),), eqn.loc))
        where = f" at {eqn.loc.short()}" if eqn.loc is not None else ""
        notes.append(f"np.{name}{where} runs as a library call: {rows} row(s) of {points} points, too few "
                     f"and too long for one {target.name} worker a row (a fused scan runs each row in order)")
    if not notes:
        return graph
    return Graph(graph.inputs, eqns, graph.outputs, graph.consts, graph.name, graph.writebacks, graph.notes + notes)
