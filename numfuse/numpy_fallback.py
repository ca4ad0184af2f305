"""Calls that run faster as the plain function run as the plain function, chosen by measurement.

Some NumPy functions are faster uncompiled than any plan numfuse can make of them: a loop of
scalar arithmetic that breaks the graph at every `if` (a CRC over a few hundred bytes: each
break costs a segment's trace and run, where NumPy spends a microsecond), a Python loop traced
into thousands of tiny kernels, a call so small that numfuse's own host work outweighs what
fusion saves. No cost model predicts Python's own speed, so each signature is timed instead.
Its first call runs numfuse's plan (and compiles it); the next calls take turns, numfuse's
plan then the function itself on the same arguments, ROUNDS times each (one round where one is
DECISIVE times faster); from then on the faster runs. numfuse stays unless the plain function was faster by MARGIN (one timing each is noisy
on a busy machine, and a close call is not worth a change). `explain` says which runs, with the
times that chose it.

A trace that records more than TRACE_BUDGET operations is abandoned (the tracer raises
TraceTooLong), and the signature runs as the plain function from its first call, untimed. A
run segment by segment, which cannot start again, counts the operations of all its segments
(and each segment as a few more), and past the budget goes on in NumPy for the rest of that
call (frontend/eager.py); the signature then runs as the plain function too.

The plain function is NumPy's semantics by definition (the reference every numfuse result is
checked against): the choice changes a call's speed, never what it computes, beyond the
rounding numfuse documents where it differs from NumPy (a sum's order).

A choice is made only where it means something: every argument a NumPy array or a scalar
(device arrays stay on their device), and a target whose times are real (not Numba's CUDA
simulator). numfuse.jit(numpy_fallback=False), or NUMFUSE_NUMPY_FALLBACK=0 for every function,
always runs numfuse's plan.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable

ROUNDS = 2  # timed calls of each before the choice
MARGIN = 1.25  # the plain function must be this much faster to be chosen
DECISIVE = 4.0  # one faster by this much after a single round is chosen then: no noise is that large
# A trace that records more operations than this is abandoned, and the plain function runs:
# a Python loop traced whole (a row-by-row triangular solve, a rank-k update), whose trace,
# plan and compile would take minutes at the first call (tracing alone costs tens of
# microseconds an operation), and whose thousands of small kernels NumPy's own calls beat.
TRACE_BUDGET = 50_000


def enabled(option: bool | None) -> bool:
    """numfuse.jit's numpy_fallback option, else NUMFUSE_NUMPY_FALLBACK (default on)."""
    if option is not None:
        return bool(option)
    return os.environ.get("NUMFUSE_NUMPY_FALLBACK", "1").strip().lower() not in ("0", "false", "no", "off")


def on_device(value) -> bool:
    """Whether `value` is a device array (whose data the plain function would not reach as
    NumPy's)."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return False
    return hasattr(value, "__cuda_array_interface__") or hasattr(value, "__dlpack_device__")


def _on_host(option: bool | None, values) -> bool:
    """numpy_fallback on, and no device array among the argument values (leaves): the plain
    function would not run on those as NumPy's."""
    return enabled(option) and not any(on_device(v) for v in values)


def trace_budget(option: bool | None, values) -> int | None:
    """The most operations a trace of a call with these argument values may record, or None."""
    return TRACE_BUDGET if _on_host(option, values) else None


def applies(option: bool | None, values, target) -> bool:
    """Whether calls with these argument values on `target` are timed against the plain
    function."""
    return _on_host(option, values) and target.times_are_real()


@dataclass
class MeasuredChoice:
    """For one signature: the calls timed so far and, once made, the choice."""

    fused: list[float] = field(default_factory=list)  # seconds of numfuse's calls
    plain: list[float] = field(default_factory=list)  # seconds of the plain function's
    chosen: str | None = None  # "numfuse" | "numpy"
    calls: int = 0
    reason: str | None = None  # why the plain function runs without being timed (a trace too long)
    clock: Callable[[], float] = field(default=time.perf_counter, repr=False)

    @property
    def runs_numpy(self) -> bool:
        return self.chosen == "numpy"

    def call(self, fused: Callable[[], Any], plain: Callable[[], Any]) -> Any:
        """Run this call as the choice says (fused() or plain()), timing it while undecided."""
        if self.chosen is not None:
            return plain() if self.chosen == "numpy" else fused()
        turn = self.calls
        self.calls += 1
        if turn == 0:  # the first call compiles: its time says nothing
            return fused()
        run, times = (fused, self.fused) if turn % 2 == 1 else (plain, self.plain)
        start = self.clock()
        result = run()
        times.append(self.clock() - start)
        if self.fused and self.plain:
            fused, plain = min(self.fused), min(self.plain)
            if plain * DECISIVE < fused:
                self.chosen = "numpy"
            elif fused * DECISIVE < plain:
                self.chosen = "numfuse"
            elif len(self.fused) >= ROUNDS and len(self.plain) >= ROUNDS:
                self.chosen = "numpy" if plain * MARGIN < fused else "numfuse"
        return result

    def __str__(self) -> str:
        if self.reason is not None:
            return f"numfuse or NumPy: runs as the plain function on NumPy, untimed: {self.reason}"
        if self.chosen is None:
            done = f" ({len(self.fused)} + {len(self.plain)} timed so far)" if self.calls > 1 else ""
            return (f"numfuse or NumPy: undecided{done}; calls 2 to {2 * ROUNDS + 1} of this signature take turns "
                    "with the plain function on NumPy, and the faster runs from then on")
        rounds = min(len(self.fused), len(self.plain))
        times = (f"numfuse's call took {1e3 * min(self.fused):.3g} ms, the plain function on NumPy "
                 f"{1e3 * min(self.plain):.3g} ms ({f'best of {rounds} each' if rounds > 1 else 'one call each'})")
        if self.chosen == "numpy":
            return f"numfuse or NumPy: runs as the plain function on NumPy, measured faster: {times}"
        return f"numfuse or NumPy: runs numfuse's plan: {times}"
