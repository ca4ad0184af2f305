"""A planned function ready to run: buffers to allocate, kernels to launch, results to return.

Array kinds (arrays.py; the libraries in libraries.py): when every array argument is a NumPy
array, inputs are copied to the device and the results come back as NumPy arrays (NumPy scalars
where NumPy returns scalars).
When any argument is a device array (Numba, CuPy, PyTorch, CUDA array interface, DLPack), the
kernels read the device arguments in place, NumPy arguments are copied to their GPU, buffers
are allocated through their library, nothing is copied back, and results are arrays of that
library. Kernels run on the stream arrays.CallArrays picks (streams.py). Arguments are only
read, except those the function writes into (`a[...] = v`, `a += v`): device arguments are
updated in place, and NumPy arguments get their final values copied back.
"""

from __future__ import annotations

import contextlib

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .codegen import KernelSource
from ... import debug
from ...debug import CompileProgress
from ...errors import warn_once
from ...ir.graph import Var
from ...loops.loopnest import ERRORS_BUFFER
from ...ir.ops import RUNTIME_ERRORS
from ...plan.planner import Plan
from .arrays import CallArrays, prepare_call
from ...runtime.buffer_plan import buffer_plan
from ...runtime.scalars import cast_scalars, scalar_casts
from .library_calls import run_step
from .device import LaunchConfig, backend
from .launch import (
    STATIC_SHARED_BYTES, CoreStreams, DispatcherKernel, GpuKernel, device_array_params, scalar_packer, size_param,
)


@dataclass
class _Launch:
    source: KernelSource
    nest: Any  # its LoopNest
    config: LaunchConfig
    # One entry per kernel parameter: ("buffer", var, view) | ("scalar", (input index, dtype))
    # | ("size", value) | ("count", NumPy scalar) | ("errors",) | ("scratch", (shape, dtype, zeroed)).
    args: list[tuple]
    empty: bool


def argument_types_of(nest, source: KernelSource) -> tuple:
    """Numba types of a kernel's parameters, as the runtime compiles it: the types the compile
    tier checks."""
    from .ptx import argument_types

    views = {b.name: (b.dtype, len(b.view), b.strided) for b in nest.buffers}
    scalars = {s.name: s.dtype for s in nest.scalars}
    return argument_types(source, views, scalars)


class Executable:
    def __init__(self, plan: Plan, sources: Sequence[KernelSource], leaf_kinds: Sequence[str],
                 autotune: bool = False, cuda_graphs: bool = False, label: str = "the function"):
        self.plan = plan
        self.label = label  # "f at file.py:10", for the progress line of a first call
        self._compiled = False  # every kernel compiled once (on a GPU; the simulator compiles none)
        self.leaf_kinds = list(leaf_kinds)
        self.backend = backend()
        self.input_vars = list(plan.graph.inputs)
        self.scalar_casts = scalar_casts(plan)
        self.buffers = buffer_plan(plan)
        self.launches = [
            self._make_launch(kernel, source, self.backend.launch_config(kernel.nest))
            for kernel, source in zip(plan.kernels, sources)
        ]
        self.checks_errors = any(arg[0] == "errors" for launch in self.launches for arg in launch.args)
        # What a call runs, in order: ("kernel", launch index) or ("library", LibraryStep).
        position = {id(k): i for i, k in enumerate(plan.kernels)}
        self.order = [("kernel", position[id(s)]) if id(s) in position else ("library", s)
                      for s in (plan.steps or plan.kernels)]
        self.autotune = autotune
        self.cuda_graphs = cuda_graphs  # multi-kernel fast calls as one CUDA graph (graphs.py)
        self._tuned: set[int] = set()
        self._kernels: dict[tuple, Any] = {}  # (GPU, launch index) -> GpuKernel or DispatcherKernel
        self.core_streams = CoreStreams()
        self._consts: dict[int | None, dict[Var, Any]] = {}  # per GPU
        # Split reductions' partial results and arrival counters, per GPU and stream, kept
        # across calls: the last block of a row resets its counter. Calls on one stream run one
        # after another; calls on two streams may overlap, so each stream has its own.
        self._scratch: dict[tuple, Any] = {}

    @staticmethod
    def _make_launch(kernel, source: KernelSource, config: LaunchConfig) -> _Launch:
        """A kernel's launch: what goes in each of its parameters, for `config`."""
        nest = kernel.nest
        views = {b.name: b.view for b in nest.buffers}
        args = []
        for p in source.params:
            if p.name == ERRORS_BUFFER:
                args.append(("errors",))
            elif p.kind == "buffer":
                args.append(("buffer", kernel.buffer_vars[p.name], views[p.name]))
            elif p.kind == "scalar":
                scalar = next(s for s in nest.scalars if s.name == p.name)
                args.append(("scalar", (scalar.input_index, scalar.dtype)))
            elif p.kind == "cache_points":
                args.append(("size", config.cache_points))
            elif p.kind == "count":  # a count to divide by, in the dtype it divides in
                args.append(("count", p.value))
            elif p.kind == "partial":
                args.append(("scratch", ((nest.outer_size * config.nsplit,), p.dtype, False)))
            elif p.kind == "counter":
                args.append(("scratch", ((nest.outer_size,), np.dtype(np.int32), True)))
            else:
                args.append(("size", p.value))
        return _Launch(source, nest, config, args, empty=nest.outer_size == 0)

    def kernel(self, device_id: int | None, index: int):
        """Launch `index`'s kernel, compiled and loaded for GPU `device_id` (call inside its
        context), or the simulator's."""
        key = (device_id, index)
        found = self._kernels.get(key)
        if found is None:
            launch = self.launches[index]
            found = self._load(launch)
            if not self.backend.simulated and not found.packed and launch.config.shared_bytes > STATIC_SHARED_BYTES:
                # Numba's own launch cannot opt into more shared memory (an autotune winner
                # remembered on disk may want it): the cost model's configuration instead.
                self.launches[index] = self._make_launch(self.plan.kernels[index], launch.source,
                                                         self.backend.launch_config(launch.nest))
                found = self._load(self.launches[index])
            self._kernels[key] = found
        return found

    def _load(self, launch: _Launch):
        if self.backend.simulated:
            return DispatcherKernel(launch.source, launch.config)
        try:
            return GpuKernel(launch.source, argument_types_of(launch.nest, launch.source), launch.config)
        except (ImportError, AttributeError) as err:
            # A numba-cuda whose internals launch.py does not know: Numba's own launch.
            warn_once(f"numfuse launches through Numba's dispatcher (slower calls): {type(err).__name__}: {err}")
            return DispatcherKernel(launch.source, launch.config)

    def device_consts(self, call: CallArrays) -> dict[Var, Any]:
        consts = self._consts.get(call.device_id)
        if consts is None:
            consts = self._consts[call.device_id] = call.upload_constants(self.plan.graph.consts)
        return consts

    def __call__(self, values: Sequence[Any], names: Sequence[str] | None = None, stream=None) -> list[Any]:
        """Run on the traced arguments `values` (graph input order), named `names` in errors,
        on `stream` (numfuse.jit's option; None: the arguments' library's current stream);
        the outputs, in order."""
        # Every scalar argument is cast to each dtype it is used in before anything runs, so a
        # Python int out of range raises OverflowError as in NumPy, whatever the sizes.
        scalars = cast_scalars(self.scalar_casts, values)
        if names is None:
            names = [f"#{i}" for i in range(len(values))]
        with prepare_call(self.backend, names, values, stream) as call:
            return self._run(call, values, scalars)

    def fast_call(self, values, names, stream, traced_positions, finish):
        """The fast path for later calls with the signature of this one, or None (fastcall.py)."""
        from . import fastcall

        return fastcall.build(self, prepare_call(self.backend, names, values, stream), values,
                              traced_positions, finish, stream)

    def _run(self, call: CallArrays, values: Sequence[Any], scalars: dict) -> list[Any]:
        env: dict[Var, Any] = dict(self.device_consts(call))
        for var, value in zip(self.input_vars, values):
            device = call.input(value)
            if device is not None:
                env[var] = device
        aliases = self.plan.aliases
        for var in self.buffers.allocated:
            env[var] = call.empty(var.aval.shape, var.aval.dtype)
        for var, root in aliases.items():
            env[var] = env[root]  # a version of an updated array: its updates write in place
        errors = call.upload(np.zeros(1, np.int32)) if self.checks_errors else None
        progress = None
        if not self._compiled and not self.backend.simulated:
            progress = CompileProgress(self.label, len(self.launches))
        # Read once a call: the environment costs a microsecond a read, more than a small launch.
        say = debug.enabled("launch")
        with self.backend.launching(), progress or contextlib.nullcontext():
            for kind, i in self.order:
                if kind == "library":
                    run_step(call, i, env)
                    continue
                if self.launches[i].empty:
                    continue
                if progress is not None:
                    progress.kernel(i)
                if self.autotune and i not in self._tuned:
                    self._tune(call, i, env, scalars, errors)
                kernel = self.kernel(call.device_id, i)  # first: it may replace the launch
                if say:
                    config = self.launches[i].config
                    debug.emit("launch", self.plan.graph.name, f"kernel #{i} {self.plan.kernels[i].name}: grid "
                                                              f"{config.grid}, block {config.block}, {config.shared_bytes} "
                                                              "bytes of shared memory")
                self._launch(call, i, self.launches[i], kernel, env, scalars, errors)
        self._compiled = True
        if errors is not None:
            # Waits for the kernels: only plans whose operations can fail, as in NumPy, pay it.
            code = int(call.read(errors)[0])
            if code:
                exception, message = RUNTIME_ERRORS[code]
                raise exception(message)
        for position, var in self.plan.graph.writebacks.items():
            # A NumPy argument written into: its copy on the device goes back into it. (A device
            # argument's buffer was written in place.)
            if isinstance(values[position], np.ndarray):
                np.copyto(values[position], call.read(env[var]))
            elif env[var] is not env[self.input_vars[position]]:
                # Its last version is in another buffer (an update went into a copy, where
                # the old values were read later: planner.keep_old_values).
                env[self.input_vars[position]].copy_to_device(env[var], stream=call.stream)
        return [self._output(o, kind, env, values, call) for o, kind in zip(self.plan.outputs, self.leaf_kinds)]

    def _launch(self, call: CallArrays, index: int, launch: _Launch, kernel, env, scalars, errors) -> None:
        if not kernel.packed:
            kernel(call.stream, self._simulator_args(call, index, launch, env, scalars, errors))
        else:
            kernel(self.core_streams.get(call.handle), self._params(call, index, launch, env, scalars, errors))

    def _tune(self, call: CallArrays, index: int, env, scalars, errors) -> None:
        """Autotune launch `index` at its first launch (autotune.py)."""
        from . import autotune

        self._tuned.add(index)
        launch, kernel = self.launches[index], self.plan.kernels[index]
        aliases = self.plan.aliases
        written = {aliases.get(v, v) for v in kernel.writes}
        read = {aliases.get(kernel.buffer_vars[b.name], kernel.buffer_vars[b.name])
                for b in launch.nest.buffers if b.role == "in" and b.name in kernel.buffer_vars}
        if written & read:
            return  # an in-place update: running it again would update again
        options = autotune.candidates(launch.nest, self.backend)
        if len(options) < 2:
            return
        path = autotune.entry_path(launch.source, launch.nest, self.backend)
        winner = autotune.load(path, options)
        if winner is None:
            def prepare(config):
                # Compiled, loaded and packed once: only the launches are timed.
                trial = self._make_launch(kernel, launch.source, config)
                loaded = self._load(trial)
                if loaded.packed:
                    stream, args = self.core_streams.get(call.handle), self._params(call, index, trial, env, scalars, errors)
                else:
                    stream, args = call.stream, self._simulator_args(call, index, trial, env, scalars, errors)
                return lambda: loaded(stream, args)

            if self.backend.simulated:
                elapsed = autotune.host_elapsed
            else:
                elapsed = autotune.event_elapsed(self.backend.cuda, call.stream)
            winner, timings = autotune.fastest(options, prepare, elapsed)
            autotune.save(path, winner, timings)
        if winner != launch.config:
            self.launches[index] = self._make_launch(kernel, launch.source, winner)
            self._kernels = {k: v for k, v in self._kernels.items() if k[1] != index}

    def _simulator_args(self, call: CallArrays, index: int, launch: _Launch, env, scalars, errors) -> list:
        """A launch's arguments as a DispatcherKernel takes them: device arrays and scalars."""
        args = []
        for arg in launch.args:
            if arg[0] == "buffer":
                array = env[arg[1]]
                args.append(array if array.shape == arg[2] else array.reshape(arg[2]))
            elif arg[0] == "scalar":
                args.append(scalars[arg[1]])
            elif arg[0] == "errors":
                args.append(errors)
            elif arg[0] == "scratch":
                args.append(self.scratch_array(call, index, len(args), *arg[1]))
            else:  # a size or a count
                args.append(arg[1])
        return args

    def _params(self, call: CallArrays, index: int, launch: _Launch, env, scalars, errors) -> list:
        """A launch's arguments packed as the compiled kernel takes them (launch.py)."""
        params = []
        for position, arg in enumerate(launch.args):
            if arg[0] == "buffer":
                params.extend(device_array_params(env[arg[1]], arg[2]))
            elif arg[0] == "scalar":
                params.extend(scalar_packer(arg[1][1])(scalars[arg[1]]))
            elif arg[0] == "errors":
                params.extend(device_array_params(errors))
            elif arg[0] == "scratch":
                params.extend(device_array_params(self.scratch_array(call, index, position, *arg[1])))
            elif arg[0] == "count":
                params.extend(scalar_packer(arg[1].dtype)(arg[1]))
            else:
                params.append(size_param(arg[1]))
        return params

    def scratch_array(self, call: CallArrays, launch: int, position: int, shape, dtype, zeroed: bool):
        """Kept for later calls on the call's stream, like constants: Numba's memory, zeroed once
        (counters must start at zero; partial results are overwritten before they are read)."""
        key = (call.device_id, call.handle, launch, position, shape)
        if key not in self._scratch:
            self._scratch[key] = call.upload_constants({key: np.zeros(shape, dtype)})[key]
        return self._scratch[key]

    def _output(self, source, kind: str, env, values, call: CallArrays):
        if source.kind == "input":
            value = values[source.input_index]
            if kind == "numpy_scalar" and isinstance(value, np.ndarray) and value.ndim == 0:
                return value[()]
            return value
        if source.kind == "const":
            array = self.plan.graph.consts[source.var]
            return call.result(call.upload(array)) if call.on_device else array.copy()
        device = env[source.var]
        if call.on_device:
            return call.result(device)
        host = call.read(device)
        if kind == "numpy_scalar" and host.ndim == 0:
            return host[()]
        if kind == "python":
            return host.item()
        return host
