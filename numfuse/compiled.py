"""What numfuse.jit caches for one signature (Compiled), and what its call paths share: the
header of each generated kernel file, planning without the garbage collector, and the fast
path's checks besides the signature."""

from __future__ import annotations

import contextlib
import gc
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .frontend.aliasing import external_sharing, overlapping
from .frontend.captures import guards_hold, one_trace_at_a_time
from .frontend.numpy_warnings import given_again
from .frontend.traced import TracedArray
from .frontend.tracer import ArgSpec, TraceResult
from .errors import TakeFullPath
from .loops.loopnest import format_loopnest
from .plan.planner import Plan
from .codegen.statements import KernelSource
from .targets import Target


@dataclass
class Compiled:
    """Everything cached for one signature."""

    traced: TraceResult
    plan: Plan
    sources: list[KernelSource]
    traced_positions: list[int]  # positions (in the bound argument list) of traced arguments
    executable: Any = None
    arg_names: list[str] = field(default_factory=list)
    # Not None: the function needs real values while it runs (the first reason found); it runs
    # segment by segment at every call (graph_breaks.py), and traced, plan, sources are None.
    graph_break: str | None = None
    target: Target | None = None  # what the plan is for (targets/)
    # Values passed after the bound arguments, each made from them at every call: the base of
    # arguments that share memory (aliasing.py), the global and closure arrays the trace read
    # (captures.py).
    extra: list = field(default_factory=list)
    guards: tuple = ()  # captures.guards_hold must hold at a call to use this
    sharing: Any = None  # aliasing.Sharing of the arguments, where the trace follows it
    # The arrays the trace reads from globals (or reads through an argument that is one), and
    # how the arguments shared memory with them (aliasing.external_sharing): a call must match.
    external_watch: tuple = ()
    external_part: tuple = ()
    # numpy_fallback.MeasuredChoice between this plan and the plain function, made at the
    # first call that runs; False where none is made (device arrays, the simulator, the option).
    numpy_choice: Any = None
    # effects.Replay: what the function changes besides its result, which each call does again
    # (the traced function returned (result, the values it put there)); None: nothing.
    replay: Any = None
    # The result holds container arguments themselves (arguments.CallerContainer): each call
    # puts the caller's own there, as NumPy's function returns them.
    caller_containers: bool = False


@contextlib.contextmanager
def without_gc():
    """Planning and rendering make many short-lived objects (template ASTs are copied node by
    node); with numba loaded the heap is large, and a full collection that they trigger took
    up to 30 ms of a 5 ms kernel rendering. They make no reference cycles worth collecting."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def kernel_header(plan: Plan, index: int) -> str:
    kernel = plan.kernels[index]
    lines = [f"numfuse kernel {kernel.name}, kernel #{index} of {plan.graph.name}()", "traced from:"]
    for loc in kernel.nest.sources:
        lines.append(f"  {loc.filename}:{loc.lineno} in {loc.function}: {loc.text}")
    lines.append("")
    # Without sizes: kernels of the same code for other shapes share this file and its binary.
    lines.extend(format_loopnest(kernel.nest, sizes=False).splitlines())
    return "\n".join(lines)


def checked_fast_run(run, compiled: Compiled, count: int):
    """The fast path's run with what the full path checks besides the signature: the guards
    on globals and closure cells, and (where the plan writes an argument) that no two array
    arguments overlap; either failing takes the full path. And the extra values appended."""
    guards = compiled.guards
    extra = compiled.extra
    arrays = None
    positions = [p for p in compiled.traced_positions if p < count]  # (scalars have no extent)
    if compiled.plan.graph.writebacks:
        arrays = positions if len(positions) > 1 else None
    watch = _watched(compiled)
    warned = compiled.traced.warnings  # (numpy_warnings.py: given at every call)
    if not guards and not extra and arrays is None and not watch and not warned:
        return run

    def checked(args):
        if guards and not guards_hold(guards):
            raise TakeFullPath
        if arrays is not None and overlapping(args, arrays):
            raise TakeFullPath
        if watch and not externals_match(compiled, args, positions):
            raise TakeFullPath
        if warned:
            given_again(warned)
        if extra:
            args = list(args)
            args += [make(args) for make in extra]
        return run(args)

    return checked


@dataclass(frozen=True)
class Place:
    """Where an array the trace read lives, an attribute or a container's item (`self.x`,
    `CACHE["w"]`): read there at each call, as NumPy reads it; its guard asks for an array of
    the kind the trace read (captures.SameKind). Called with the call's values: that array
    (None if the place is empty now)."""

    holder: Any
    key: Any

    def __call__(self, _values=None):
        value = self._read()
        if isinstance(value, TracedArray):
            # Another thread's trace has its tracer there (captures.swapped_arrays): the array
            # is back once that trace lets go.
            with one_trace_at_a_time():
                value = self._read()
        return value

    def _read(self):
        try:
            return self.holder[self.key]
        except (KeyError, IndexError):
            return None


def _watched(compiled: Compiled) -> tuple:
    """The global arrays whose sharing with the arguments a call must check, as the trace found
    it (those read from a Place: the array there now): none where the plan only reads them and
    the trace read none through an argument."""
    if compiled.external_part or (compiled.plan is not None and compiled.plan.graph.writebacks):
        watched = (w() if isinstance(w, Place) else w for w in compiled.external_watch)
        return tuple(_NOTHING if w is None else w for w in watched)
    return ()


_NOTHING = np.empty(0)  # (an empty place: it shares memory with no argument)


def externals_match(compiled: Compiled, values, positions) -> bool:
    watch = _watched(compiled)
    return not watch or external_sharing(values, positions, watch) == compiled.external_part


def array_positions(specs) -> list[int]:
    return [i for i, s in enumerate(specs) if isinstance(s, ArgSpec) and s.kind == "array"]
