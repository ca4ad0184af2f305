"""A plan run on the CPU: Numba parallel functions over the caller's NumPy arrays, in place.

Arguments are used as they are: kernels read them and write the ones the function updates
(`a[...] = v`, `a += v`) directly, without copies; buffers the plan needs are NumPy arrays,
and results are those arrays (NumPy scalars where NumPy returns scalars). An argument the
function writes that shares memory with another argument is written through a private copy,
copied back at the end (a kernel assumes its written buffers alias nothing it reads at other
points). Library calls run through NumPy on the same buffers. Each kernel runs its parallel
function, or the serial one for a call too small to gain from threads (target.serial_points).
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ... import debug
from ...debug import CompileProgress
from ...errors import ScalarOutOfRange, TakeFullPath, UnsupportedError
from ...loops.loopnest import ERRORS_BUFFER
from ...ir.ops import RUNTIME_ERRORS
from ...runtime.buffer_plan import buffer_plan
from ...ir.viewmaps import view_function
from ...runtime.library_results import check_result
from ...runtime.scalars import cast_scalars, scalar_cast, scalar_casts
from ...runtime.kernel_files import kernel_path, load_function
from . import loader, parallel_compile


@dataclass
class _Launch:
    name: str
    functions: tuple  # (parallel, serial) Numba dispatchers, loaded at first use
    serial: bool
    # One entry per parameter: ("buffer", var, view, role) | ("scalar", (input index, dtype))
    # | ("value", size or count) | ("errors",) | ("partial", (length, dtype)).
    args: list[tuple]
    empty: bool
    # The arguments as a call fills them: `template` holds the sizes and counts, `fills` says
    # where each call's buffers, scalars, error flag and scratch go.
    template: list = None
    fills: list = None


class CpuExecutable:
    def __init__(self, plan, sources, leaf_kinds: Sequence[str], target, label: str = "the function"):
        self.plan = plan
        self.label = label  # "f at file.py:10", for the progress line of a first call
        self._compiled = False  # every kernel compiled (or loaded from Numba's cache) once
        self.sources = list(sources)
        self.leaf_kinds = list(leaf_kinds)
        self.target = target
        self.input_vars = list(plan.graph.inputs)
        self.scalar_casts = scalar_casts(plan)
        self.buffers = buffer_plan(plan)
        self.launches = [self._make_launch(k, s) for k, s in zip(plan.kernels, sources)]
        self.checks_errors = any(a[0] == "errors" for launch in self.launches for a in launch.args)
        position = {id(k): i for i, k in enumerate(plan.kernels)}
        self.order = [("kernel", position[id(s)]) if id(s) in position else ("library", _LibraryCall(s))
                      for s in (plan.steps or plan.kernels)]
        self.has_library = any(kind == "library" for kind, _ in self.order)
        self._writebacks = list(plan.graph.writebacks.items())
        self._outputs = list(zip(plan.outputs, self.leaf_kinds))
        self._load_lock = threading.Lock()

    def _make_launch(self, kernel, source) -> _Launch:
        nest = kernel.nest
        buffers = {b.name: b for b in nest.buffers}
        args = []
        for p in source.params:
            if p.name == ERRORS_BUFFER:
                args.append(("errors",))
            elif p.kind == "buffer":
                b = buffers[p.name]
                args.append(("buffer", kernel.buffer_vars[p.name], b.view, b.role))
            elif p.kind == "scalar":
                scalar = next(s for s in nest.scalars if s.name == p.name)
                args.append(("scalar", (scalar.input_index, scalar.dtype)))
            elif p.kind == "column":  # a column reduction's accumulators, a slot per output
                args.append(("partial", (p.value, p.dtype)))
            elif p.kind == "partial":  # a split reduction's partial results, a slot per chunk
                nsplit = next(q.value for q in source.params if q.name == "nsplit")
                args.append(("partial", (nest.outer_size * nsplit, p.dtype)))
            else:  # a size, or a count in the dtype it divides in
                args.append(("value", p.value))
        points = nest.outer_size * max(1, nest.inner_size)
        launch = _Launch(source.name, (), points < self.target.serial_points, args, empty=nest.outer_size == 0)
        launch.template, launch.fills = [], []
        for position, arg in enumerate(args):
            kind = arg[0]
            value = None
            if kind == "value":  # a size, or a count (a float16 one as float32: no float16 in Numba)
                value = np.float32(arg[1]) if getattr(arg[1], "dtype", None) == np.float16 else arg[1]
            elif kind == "buffer":
                var, view, written = arg[1], arg[2], arg[3] == "out"
                # codegen._Statements: float16 buffers are passed as their bits
                plain = view == var.aval.shape and var.aval.dtype != np.float16
                launch.fills.append((position, "array" if plain else "view", (var, view, written)))
            else:
                launch.fills.append((position, kind, arg[1] if len(arg) > 1 else None))
            launch.template.append(value)
        return launch

    def function(self, index: int):
        """Launch `index`'s Numba dispatcher (parallel or serial), imported from its file."""
        launch = self.launches[index]
        if not launch.functions:
            with self._load_lock:
                if not launch.functions:
                    launch.functions = loader.functions(self.sources[index])
        return launch.functions[1 if launch.serial else 0]

    def compile_for(self, values: Sequence[Any]) -> list[str]:
        """Every kernel compiled for the argument types of a call with `values` (nothing runs;
        from Numba's disk cache where it has them): each kernel's assembly, as compile() gives
        PTX on the CUDA target (a function loaded from the disk cache has none to show)."""
        import numba

        scalars = {(i, dtype): scalar_cast(dtype)(values[i]) for i, dtype in self.scalar_casts}
        env = self._buffers(self._inputs(values, [f"#{i}" for i in range(len(values))]))
        errors = np.zeros(1, np.int32)
        out = []
        for i in range(len(self.launches)):
            fn = self.function(i)
            signature = tuple(numba.typeof(a) for a in self._arguments(i, env, scalars, errors))
            fn.compile(signature)
            out.append(fn.inspect_asm(signature))
        return out

    def fast_call(self, values, names, stream, traced_positions, finish):
        """Later calls of this signature (runtime/fast_keys.py): straight to __call__, without
        classifying the arguments again."""
        if stream is not None:
            return None
        return _FastCall(self, values, list(names), list(traced_positions), finish)

    def __call__(self, values: Sequence[Any], names: Sequence[str] | None = None, stream=None) -> list[Any]:
        if stream is not None:
            raise UnsupportedError("numfuse.jit(stream=...) is a CUDA option; this function runs on the CPU target")
        scalars = cast_scalars(self.scalar_casts, values)
        if names is None:
            names = [f"#{i}" for i in range(len(values))]
        env = self._buffers(self._inputs(values, names))
        errors = np.zeros(1, np.int32) if self.checks_errors else None
        progress = None
        if not self._compiled:
            progress = CompileProgress(self.label, len(self.launches)).__enter__()
        # Read once a call: the environment costs a microsecond a read, more than a small launch.
        say = debug.enabled("launch")
        try:
            # NumPy's warnings of library calls: off, as the kernels raise none either (one
            # errstate a call: entering one costs more than a small kernel's launch)
            if progress is not None:
                self._compile_ahead(env, scalars, errors, progress)
            with np.errstate(all="ignore") if self.has_library else contextlib.nullcontext():
                for kind, step in self.order:  # (a kernel's index, or a _LibraryCall)
                    if kind == "library":
                        step(env)
                    elif not self.launches[step].empty:
                        if progress is not None:
                            progress.kernel(step)
                        self._launch(step, env, scalars, errors, say)
        finally:
            if progress is not None:
                progress.__exit__()
        self._compiled = True
        return self._finish(env, values, errors)

    def _finish(self, env, values, errors) -> list[Any]:
        """After the steps (of the full call or the fast one): NumPy's error if a kernel set
        one, the arguments' write-backs, and the results."""
        if errors is not None and errors[0]:
            exception, message = RUNTIME_ERRORS[int(errors[0])]
            raise exception(message)
        for position, var in self._writebacks:
            # An argument's last version in another buffer (a copy made for aliasing, or an
            # update that went into a copy where old values were read later).
            if env[var] is not values[position]:
                np.copyto(values[position], env[var])
        return [self._output(o, kind, env, values) for o, kind in self._outputs]

    def _compile_ahead(self, env, scalars, errors, progress) -> None:
        """A first call's kernels that Numba's disk cache lacks, compiled in worker processes at
        once where there are several (parallel_compile.py); the launches then load them."""
        workers = parallel_compile.workers()
        if workers < 2:
            return
        import numba

        jobs, seen = [], set()
        for index, launch in enumerate(self.launches):
            if launch.empty:
                continue
            source = self.sources[index]
            name = source.name + ("_serial" if launch.serial else "")
            module, _ = load_function(source)
            dispatcher = getattr(module, name)
            signature = tuple(numba.typeof(a) for a in self._arguments(index, env, scalars, errors))
            key = (source.code_digest, name, signature)
            if key in seen or signature in dispatcher.overloads or parallel_compile.cached(dispatcher, signature):
                continue
            seen.add(key)
            jobs.append((str(kernel_path(source)), name, signature, len(source.source)))
        if len(jobs) > 1:
            progress.ahead(len(jobs), min(workers, len(jobs)))
            parallel_compile.compile_ahead(jobs)
            progress.ahead(0, 0)

    def _inputs(self, values, names) -> dict:
        env = dict(self.plan.graph.consts)
        written = set(self.plan.graph.writebacks)
        arrays = {}
        for position, (var, value) in enumerate(zip(self.input_vars, values)):
            if position in self.plan.scalar_inputs:
                continue
            if not isinstance(value, np.ndarray):
                if hasattr(value, "__cuda_array_interface__") or hasattr(value, "__dlpack_device__"):
                    raise UnsupportedError(
                        f"argument {names[position]!r} is a device array, and this function runs on the CPU "
                        "target: pass NumPy arrays, or use numfuse.jit(target='cuda')"
                    )
                value = np.asarray(value)
            elif type(value) is not np.ndarray:
                value = value.view(np.ndarray)  # Numba compiles for ndarray itself
            arrays[position] = value
        for position, value in arrays.items():
            if position in written and any(np.may_share_memory(value, other)
                                           for p, other in arrays.items() if p != position):
                value = value.copy()  # written back at the end
            env[self.input_vars[position]] = value
        return env

    def _buffers(self, env: dict) -> dict:
        """`env` (the inputs) with a buffer for every value the plan writes."""
        for var in self.buffers.allocated:
            env[var] = np.empty(var.aval.shape, var.aval.dtype)
        for var, root in self.buffers.aliases.items():
            env[var] = env[root]  # a version of an updated array: its updates write in place
        return env

    def _launch(self, index: int, env, scalars, errors, say: bool) -> None:
        function = self.function(index)
        args = self._arguments(index, env, scalars, errors)
        if say:
            launch = self.launches[index]
            shapes = ", ".join(f"{a.dtype}{list(a.shape)}" for a in args if isinstance(a, np.ndarray))
            how = "serial" if launch.serial else f"parallel on {numba_threads()} threads"
            debug.emit("launch", self.plan.graph.name, f"kernel #{index} {self.plan.kernels[index].name}: {how}; "
                                                      f"arrays {shapes}")
        function(*args)

    def _arguments(self, index: int, env, scalars, errors) -> list:
        launch = self.launches[index]
        args = list(launch.template)
        for position, kind, what in launch.fills:
            if kind == "array":
                args[position] = env[what[0]]
            elif kind == "view":
                array = _as_view(env[what[0]], what[1], what[2])
                args[position] = array.view(np.uint16) if array.dtype == np.float16 else array
            elif kind == "scalar":
                value = scalars[what]
                args[position] = np.float32(value) if what[1] == np.float16 else value
            elif kind == "errors":
                args[position] = errors
            else:  # a split reduction's partial results, per call (calls may run at once)
                args[position] = np.empty(*what)
        return args

    def _output(self, source, kind: str, env, values):
        if source.kind == "input":
            value = values[source.input_index]
            if kind == "numpy_scalar" and isinstance(value, np.ndarray) and value.ndim == 0:
                return value[()]
            return value
        if source.kind == "const":
            array = self.plan.graph.consts[source.var].copy()
        else:
            array = env[source.var]
        if kind == "numpy_scalar" and array.ndim == 0:
            return array[()]
        if kind == "python":
            return array.item()
        return array


def numba_threads() -> int:
    import numba

    return numba.get_num_threads()


class _FastCall:
    """Later calls of one signature (exact NumPy arrays of the first call's shapes, dtypes and
    strides, no two of them overlapping where the plan writes one: checked_fast_run): what
    CpuExecutable.__call__ does, with what depends on the signature alone worked out once. The
    full call's bookkeeping cost 4 us, where the kernel of a small call takes under one."""

    def __init__(self, executable: CpuExecutable, values, names, positions, finish):
        self.executable, self.names, self.positions, self.finish = executable, names, positions, finish
        plan = executable.plan
        self.consts = dict(plan.graph.consts)
        self.arrays = [(position, var) for position, var in enumerate(executable.input_vars)
                       if position not in plan.scalar_inputs]
        # The key holds each argument's type: exact NumPy arrays now are exact NumPy arrays at
        # every call of it (others, converted by __call__'s _inputs, take the full call).
        self.lean = all(type(values[position]) is np.ndarray for position, _ in self.arrays)
        self.allocated = [(var, var.aval.shape, var.aval.dtype) for var in executable.buffers.allocated]
        self.aliases = list(executable.buffers.aliases.items())

    def run(self, args):
        values = [args[i] for i in self.positions]
        executable = self.executable
        if not self.lean or not executable._compiled or debug.enabled("launch"):
            return self._full(values)
        try:
            scalars = cast_scalars(executable.scalar_casts, values) if executable.scalar_casts else {}
        except ScalarOutOfRange:
            raise TakeFullPath from None  # retraced with that int static, as the full path does
        env = dict(self.consts)
        for position, var in self.arrays:
            env[var] = values[position]
        for var, shape, dtype in self.allocated:
            env[var] = np.empty(shape, dtype)
        for var, root in self.aliases:
            env[var] = env[root]
        errors = np.zeros(1, np.int32) if executable.checks_errors else None
        if executable.has_library:
            with np.errstate(all="ignore"):  # (as __call__)
                self._steps(env, scalars, errors)
        else:
            self._steps(env, scalars, errors)
        return self.finish(executable._finish(env, values, errors))

    def _steps(self, env, scalars, errors) -> None:
        executable = self.executable
        launches, arguments = executable.launches, executable._arguments
        for kind, step in executable.order:
            if kind == "library":
                step(env)
            elif not launches[step].empty:
                launch = launches[step]
                launch.functions[1 if launch.serial else 0](*arguments(step, env, scalars, errors))

    def _full(self, values):
        try:
            return self.finish(self.executable(values, self.names))
        except ScalarOutOfRange:
            raise TakeFullPath from None


def _as_view(array: np.ndarray, shape: tuple, written: bool) -> np.ndarray:
    """`array` seen with the kernel's (collapsed) shape, without a copy where it is written."""
    if array.shape == shape:
        return array
    view = array.view()
    try:
        view.shape = shape
    except AttributeError:
        if written:
            raise AssertionError(f"numfuse: a buffer of shape {array.shape} cannot be seen as {shape} in place") from None
        return array.reshape(shape)
    return view


class _LibraryCall:
    """A library step (LibraryStep) run through NumPy, from and into the plan's buffers: where
    each input is (a buffer, or a view of one: view_function's indices worked out once) and
    where each output goes, found once, not at each call (a loop traced whole makes thousands)."""

    def __init__(self, step):
        self.step = step
        self.inputs = [(step.views[v][0], view_function(np, step.views[v][1])) if v in step.views else (v, None)
                       for v in step.inputs]
        self.outputs = [(e.param("output", 0), e.out) for e in step.eqns]
        self.run, self.params = step.op.run, step.params

    def __call__(self, env) -> None:
        arrays = [env[var] if view is None else view(env[var]) for var, view in self.inputs]
        results = self.run(np, arrays, self.params)
        for k, var in self.outputs:
            result = np.asarray(results[k])
            check_result(self.step, result, var)
            if result.size:
                np.copyto(env[var], result)
