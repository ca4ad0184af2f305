"""Running generated programs through NumPy and numfuse: one program, or a fuzzing session.

A session is one hypothesis run: `programs` random programs from a seed; at the first mismatch
hypothesis shrinks the program (fewer operations, smaller inputs), the reducer (reduce.py) cuts
what hypothesis could not, and the session reports the result as a ready-to-run snippet. The
pytest tests and `python -m numfuse_tests.fuzz` both run sessions.
"""

from __future__ import annotations

import threading
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import FlakyStrategyDefinition

import numfuse

from . import numerics
from .compare import compare
from .program import Call, Program, stored
from .reduce import reduce_program
from .strategies import MAX_STEPS
from .strategies import programs as program_strategy

# Hypothesis's runs while shrinking a failure (each runs a program: ~0.1 s on the simulator);
# the reducer then cuts what is left.
SHRINK_RUNS = 200


def check_program(program: Program) -> list[str]:
    """Every way numfuse.jit(program) differs from NumPy, in each of the program's calls."""
    fn = program.function()
    # Always numfuse's plan: a measured switch to the plain function (numpy_fallback.py) would
    # compare NumPy with itself.
    jitted = numfuse.jit(fn, numpy_fallback=False)
    problems = []
    for k, call in enumerate(program.calls()):
        found = check_call(program, fn, jitted, call)
        problems += [f"call {k + 1}: {p}" for p in found] if k else found
        if found:
            break
    if program.concurrent and not problems:
        problems += concurrent_calls(program, fn, numfuse.jit(fn, numpy_fallback=False))
    return problems


def concurrent_calls(program: Program, fn, jitted, threads: int = 3) -> list[str]:
    """The first call run from `threads` Python threads at once, first calls of a new jitted
    function included: each must give NumPy's results."""
    found: list[list[str]] = [[] for _ in range(threads)]
    call = program.calls()[0]

    def run(k):
        try:
            found[k] = check_call(program, fn, jitted, call)
        except BaseException as err:  # noqa: BLE001 - reported as this thread's mismatch
            found[k] = [f"{type(err).__name__}: {err}"]

    workers = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return [f"thread {k} of {threads} calling at once: {p}" for k, f in enumerate(found) for p in f]


def check_call(program: Program, fn, jitted, call: Call) -> list[str]:
    """The differences of one call; numfuse must also leave the arguments as they were."""
    numpy_args = call.arguments()
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = fn(*numpy_args)
        except Exception as err:
            raise AssertionError("the fuzzer built a program NumPy refuses:\n" + program.snippet()) from err
    args = call.arguments()
    copies = [np.copy(a) if isinstance(a, np.ndarray) else a for a in _leaves(args)]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = jitted(*args)
    except Exception as err:  # noqa: BLE001 - any error on a program NumPy runs is a mismatch
        return [f"numfuse raises {type(err).__name__}: {err}"]
    problems = compare(got, expected, call.tolerances)
    if program.packing.endswith("+store"):  # what the function put into its container argument
        kept, wanted = stored(args, program.packing), stored(numpy_args, program.packing)
        if kept is None:
            problems.append("the value the function stored into its container argument is missing")
        else:
            problems += compare((kept,), (wanted,), call.tolerances[:1])
    for k, (before, after) in enumerate(zip(copies, _leaves(args))):
        if isinstance(before, np.ndarray) and not np.array_equal(before, after, equal_nan=True):
            problems.append(f"numfuse modified argument {k}")
    return problems


def _leaves(args) -> list:
    """The arguments with containers (Program.packing) flattened, in order."""
    out = []
    for a in args:
        if isinstance(a, dict):
            out += _leaves(list(a.values()))
        elif isinstance(a, (list, tuple)):
            out += _leaves(list(a))
        else:
            out.append(a)
    return out


class ProgramMismatch(AssertionError):
    def __init__(self, program: Program, problems: list[str]):
        self.program, self.problems = program, problems
        super().__init__("\n".join(problems) + "\n\n" + repro(program, problems))


def repro(program: Program, problems: list[str]) -> str:
    return program.snippet(note="numfuse fuzz: numfuse differs from NumPy here:\n" + "\n".join(problems))


@dataclass
class Summary:
    programs: int  # run before the first mismatch, or all of them
    mismatches: int
    seconds: float
    seed: int
    backend: str
    shrink_runs: int = 0
    problems: list[str] = field(default_factory=list)
    repro: str | None = None  # the shrunk program, as a script

    timed_out: bool = False

    def line(self) -> str:
        shrink = f" (then {self.shrink_runs} runs shrinking it)" if self.shrink_runs else ""
        limit = ", stopped at the time limit" if self.timed_out else ""
        return (f"numfuse fuzz: {self.programs} programs, {self.mismatches} mismatches{shrink} in "
                f"{self.seconds:.1f} s (seed {self.seed}, {self.backend}{limit})")


def fuzz(programs: int, seed: int, model: numerics.ErrorModel, backend: str,
         max_steps: int = MAX_STEPS, shrink: bool = True, max_seconds: float | None = None) -> Summary:
    """Run `programs` random programs (fewer if `max_seconds` runs out first); stop at the first
    mismatch and shrink it (within SHRINK_RUNS runs, and half of `max_seconds` more)."""
    state = {"runs": 0, "first": None, "best": None}  # best: (program, problems), the smallest yet
    clock = time.perf_counter
    start = clock()
    deadline = None if max_seconds is None else start + max_seconds

    def out_of_time() -> bool:
        if state["first"] is None:
            return deadline is not None and clock() > deadline
        return state["runs"] - state["first"] >= SHRINK_RUNS or (
            deadline is not None and clock() > deadline + max_seconds / 4)

    phases = (Phase.generate, Phase.shrink) if shrink else (Phase.generate,)

    @settings(max_examples=programs, deadline=None, database=None, phases=phases,
              suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet,
              report_multiple_bugs=False, print_blob=False)
    @hypothesis_seed(seed)
    @given(program_strategy(model, max_steps, stop=out_of_time))
    def one_program(program):
        if program is None:
            return  # out of time: the strategy drew nothing
        state["runs"] += 1
        problems = check_program(program)
        if problems:
            state["first"] = state["first"] or state["runs"]
            state["best"] = (program, problems)  # hypothesis only tries smaller failures
            raise ProgramMismatch(program, problems)

    try:
        one_program()
    except Exception as err:
        # A mismatch; or hypothesis finding that a program it saw fail passes when run again,
        # or that programs stop where it saw them go on: out_of_time() cut them, or the
        # failure is flaky (the final check below tells).
        out_of_time_cut = isinstance(err, FlakyStrategyDefinition) and deadline is not None and clock() > deadline
        if state["best"] is None and not out_of_time_cut:
            raise
    if state["best"] is None:
        return Summary(state["runs"], 0, clock() - start, seed, backend, timed_out=state["runs"] < programs)
    program, problems = state["best"]
    if shrink:
        program = reduce_program(program, lambda p: bool(check_program(p)), model,
                                 deadline=None if deadline is None else deadline + max_seconds / 2)
    again = check_program(program)
    if again:
        problems = again
    else:
        program, problems = state["best"][0], ["(flaky: this program passed when run again)"] + problems
    return Summary(state["first"], 1, clock() - start, seed, backend,
                   shrink_runs=state["runs"] - state["first"], problems=problems,
                   repro=repro(program, problems))
