"""`numfuse.jit`: trace once per input signature, plan, generate kernels, run.

A call's signature is, for each argument: for arrays whether they are NumPy or device arrays
(of any library: targets/cuda/libraries.py), shape, dtype and layout; for Python scalars their type
(the value is a kernel argument); for NumPy scalars their dtype; for static arguments their value.
The cache maps a signature to the traced graph, its plan and its kernels, so a second call with
the same signature does no tracing, planning or compiling.

A Python scalar argument that the function uses as a Python value (an axis, a loop count) cannot
be traced; jit then retraces with that argument static, keyed by its value.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import inspect
import operator
import os
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .codegen.statements import KernelSource, kernel_code
from .errors import NeedsGraphBreak, NumfuseWarning, ScalarOutOfRange, TakeFullPath, TracingError, UnsupportedError
from .ir import format_graph
from .loopnest import format_loopnest
from .planner import Plan, plan as make_plan
from .targets.cuda.streams import check_stream_option
from .arguments import RANDOM_STATES, classify, flatten_containers, has_array_leaf
from .targets import Target, choose as choose_target, requested as requested_target
from .tracer import ArgSpec, TraceResult, trace, unflatten_outputs


MAX_SEGMENTS = 256  # graph-break segments kept per JitFunction


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


@contextlib.contextmanager
def _without_gc():
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


def _kernel_header(plan: Plan, index: int) -> str:
    kernel = plan.kernels[index]
    lines = [f"numfuse kernel {kernel.name}, kernel #{index} of {plan.graph.name}()", "traced from:"]
    for loc in kernel.nest.sources:
        lines.append(f"  {loc.filename}:{loc.lineno} in {loc.function}: {loc.text}")
    lines.append("")
    # Without sizes: kernels of the same code for other shapes share this file and its binary.
    lines.extend(format_loopnest(kernel.nest, sizes=False).splitlines())
    return "\n".join(lines)


class JitFunction:
    """A NumPy function compiled to fused CUDA kernels; see `jit`."""

    def __init__(self, fn: Callable, static_argnums=(), static_argnames=(), stream=None, autotune=False,
                 cuda_graphs=False, graph_breaks=True, target=None):
        functools.update_wrapper(self, fn)
        check_stream_option(stream)
        self._target_name = requested_target(target)
        if self._target_name == "cpu" and stream is not None:
            raise UnsupportedError("numfuse.jit(stream=...) is a CUDA option; target='cpu' runs on the CPU")
        self._fn = fn
        self._stream = stream
        self._autotune = bool(autotune)
        self._cuda_graphs = bool(cuda_graphs)
        self._graph_breaks = bool(graph_breaks)
        # Segments of functions run with graph breaks, by structure (graph_breaks.structure_key).
        self._segments: dict[tuple, Compiled] = {}
        self._signature = inspect.signature(fn)
        params = list(self._signature.parameters.values())
        self._names = [p.name for p in params]
        self._simple = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
        self._static = set(static_argnames) | {self._names[i] for i in static_argnums if i < len(self._names)}
        self._auto_static: set[str] = set()
        self._cache: dict[tuple, Compiled] = {}
        # Positional calls already run once on device arrays: targets/cuda/fastcall.py. Keyed by
        # fast_key, which reads only types, shapes, dtypes and strides; None: no fast path.
        self._fast: dict[tuple, Any] = {}
        self._static_positions = self._positions_of(self._static)

    def _positions_of(self, names) -> frozenset[int]:
        return frozenset(i for i, n in enumerate(self._names) if n in names)

    # -- arguments -----------------------------------------------------------------------------

    def _bind(self, args, kwargs) -> tuple[list[str], list[Any], Callable]:
        """Argument names and values in order, and how to call the function with new values.
        An argument that is a container of arrays (a dict, list, tuple or namedtuple, nested)
        is its leaves, named by their path (params['w']); arguments.py says how."""
        names, values, call = self._bind_arguments(args, kwargs)
        if not any(has_array_leaf(v) for n, v in zip(names, values) if n not in self._static):
            return names, values, call
        return flatten_containers(names, values, call, keep=self._static)

    def _bind_arguments(self, args, kwargs) -> tuple[list[str], list[Any], Callable]:
        if self._simple and not kwargs and len(args) == len(self._names):
            return self._names, list(args), lambda fn, vals: fn(*vals)
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        names, values, rebuild = [], [], []
        for name, value in bound.arguments.items():
            kind = self._signature.parameters[name].kind
            if kind == inspect.Parameter.VAR_POSITIONAL:
                rebuild.append(("*", name, len(value)))
                names.extend(f"{name}[{i}]" for i in range(len(value)))
                values.extend(value)
            elif kind == inspect.Parameter.VAR_KEYWORD:
                keys = sorted(value)
                rebuild.append(("**", name, keys))
                names.extend(f"{name}[{k!r}]" for k in keys)
                values.extend(value[k] for k in keys)
            else:
                rebuild.append((kind, name, None))
                names.append(name)
                values.append(value)

        def call(fn, vals):
            vals = iter(vals)
            pos, kw = [], {}
            for kind, name, extra in rebuild:
                if kind == "*":
                    pos.extend(next(vals) for _ in range(extra))
                elif kind == "**":
                    kw.update({k: next(vals) for k in extra})
                elif kind == inspect.Parameter.KEYWORD_ONLY:
                    kw[name] = next(vals)
                else:
                    pos.append(next(vals))
            return fn(*pos, **kw)

        return names, values, call

    def _compiled(self, args, kwargs, also_static=frozenset()) -> tuple[Compiled, list[Any]]:
        names, values, call = self._bind(args, kwargs)
        static = self._static | self._auto_static | also_static
        key_parts, specs = [], []
        for name, value in zip(names, values):
            part, spec = classify(name, value, name in static)
            key_parts.append(part)
            specs.append(spec)
        structure = getattr(call, "structure", None)  # containers' shapes: part of the key
        key = (tuple(key_parts), structure)
        compiled = self._cache.get(key)
        if compiled is None:
            compiled = self._compile(names, values, specs, call)
            # The key under which it was found may have changed (arguments made static).
            static = self._static | self._auto_static | also_static
            key = (tuple(classify(n, v, n in static)[0] for n, v in zip(names, values)), structure)
            self._cache[key] = compiled
        traced_values = [values[i] for i in compiled.traced_positions]
        return compiled, traced_values

    def _compile(self, names, values, specs, call) -> Compiled:
        random_argument = next((n for n, v in zip(names, values) if isinstance(v, RANDOM_STATES)), None)
        if random_argument is not None:
            return self._segmented(names, f"argument {random_argument!r} is a random generator, whose draws "
                                          "differ at every call")
        while True:
            traced_positions = [i for i, s in enumerate(specs) if isinstance(s, ArgSpec)]
            try:
                fn_name = getattr(self._fn, "__name__", "f")
                traced = trace(lambda *vals: call(self._fn, vals), specs, fn_name)
                break
            except Exception as raised:
                err = _tracing_error_in(raised)
                if err is None:
                    raise
                if isinstance(err, NeedsGraphBreak):
                    return self._segmented(names, err.reason, err.refusal)
                positions = getattr(err, "input_positions", None) or [getattr(err, "input_position", None)]
                position = positions[0]
                if position is None:
                    if err is raised:
                        raise
                    # NumPy turned numfuse's error into its own (R[k] = traced value into a
                    # NumPy array made inside the function: "setting an array element with a
                    # sequence"): the user sees numfuse's, which says what happened.
                    raise err from None
                # Scalar arguments steer Python code: make them static and trace again.
                for position in positions:
                    i = traced_positions[position]
                    self._auto_static.add(names[i])
                    specs[i] = ("static", values[i])
                self._static_positions = self._positions_of(self._static | self._auto_static)
                self._fast.clear()
        scalar_inputs = {k for k, i in enumerate(traced_positions) if specs[i].kind != "array"}
        strided_inputs = {k for k, i in enumerate(traced_positions) if specs[i].strided}
        target = self._target_for(values)
        with _without_gc():
            plan = make_plan(traced.graph, scalar_inputs, strided_inputs, target=target)
            sources = [target.render(k.nest, _kernel_header(plan, i)) for i, k in enumerate(plan.kernels)]
        return Compiled(traced, plan, sources, traced_positions, arg_names=names, target=target)

    def _target_for(self, values) -> Target:
        """The target of a call with these arguments: numfuse.jit's `target` (NUMFUSE_TARGET);
        "auto" is CUDA where a device array is passed or a GPU is found, else the CPU."""
        device = any(hasattr(v, "__cuda_array_interface__") or
                     (hasattr(v, "__dlpack_device__") and not isinstance(v, np.ndarray)) for v in values)
        return choose_target(self._target_name, device)

    # -- graph breaks (graph_breaks.py) ---------------------------------------------------------

    def _segmented(self, names, reason: str, refusal: Exception | None = None) -> Compiled:
        if not self._graph_breaks:
            if refusal is not None:
                raise refusal from None
            raise TracingError(f"{reason}: numfuse.jit(graph_breaks=False) refuses it")
        return Compiled(None, None, [], [], arg_names=names, graph_break=reason)

    def _run_segmented(self, args, kwargs, also_static=frozenset()):
        from .graph_breaks import run_segmented

        names, values, call = self._bind(args, kwargs)
        static = self._static | self._auto_static | also_static
        # Python ints are static here: the function's Python code runs at every call anyway,
        # and NumPy's answer for an int out of a dtype's range depends on its value, which a
        # segment cannot trace again once earlier segments ran.
        specs = [classify(n, v, n in static or (type(v) is int or type(v) is bool))[1] for n, v in zip(names, values)]
        fn_name = getattr(self._fn, "__name__", "f")
        return run_segmented(lambda *vals: call(self._fn, vals), specs, values, names, self._run_segment, fn_name)

    def _run_segment(self, graph, specs, values, names):
        """Plan (once per structure), compile and run one segment: (outputs, its Compiled)."""
        from .graph_breaks import structure_key

        key = structure_key(graph, specs)
        compiled = self._segments.get(key)
        if compiled is None:
            scalar_inputs = {k for k, s in enumerate(specs) if s.kind != "array"}
            strided_inputs = {k for k, s in enumerate(specs) if s.strided}
            target = self._target_for(values)
            with _without_gc():
                plan = make_plan(graph, scalar_inputs, strided_inputs, target=target)
                sources = [target.render(k.nest, _kernel_header(plan, i)) for i, k in enumerate(plan.kernels)]
            kinds = ["array"] * len(graph.outputs)
            compiled = Compiled(TraceResult(graph, None, kinds), plan, sources, list(range(len(specs))),
                                arg_names=list(names), target=target)
            compiled.executable = self._executable(compiled)
            if len(self._segments) >= MAX_SEGMENTS:
                # Segments that differ by a constant from each break (a Python float computed
                # at one): the oldest go, so memory stays bounded.
                del self._segments[next(iter(self._segments))]
            self._segments[key] = compiled
        # (Python int arguments are static in segmented runs: no ScalarOutOfRange here.)
        return compiled.executable(values, names, self._stream), compiled

    # -- public API ----------------------------------------------------------------------------

    def __get__(self, instance, owner=None):
        """A jitted method: bound to its instance as a function would be (self is static,
        keyed by identity, or traced where it is an array)."""
        if instance is None:
            return self
        return functools.partial(self, instance)

    def __call__(self, *args, **kwargs):
        if self._fast and not kwargs:
            key = self._fast_key(args, self._static_positions)
            try:
                fast = self._fast.get(key) if key is not None else None
            except TypeError:  # a static position holding a traced value (a call being traced)
                fast = None
            if fast is not None:
                try:
                    return fast(args)
                except TakeFullPath:
                    pass  # e.g. an int out of range: the full path retraces with it static
        return self._call(args, kwargs)

    def _executable(self, compiled):
        options = {"autotune": self._autotune, "cuda_graphs": self._cuda_graphs}
        return compiled.target.executable(compiled.plan, compiled.sources, compiled.traced.leaf_kinds, options)

    def _call(self, args, kwargs):
        # (Off the fast path: traced arguments never take it, fast_key has no key for them.)
        if _inside_a_trace(args, kwargs):
            # Called by a function being traced: traced inline, as part of the caller's graph
            # (this function's own options do not apply).
            from .numpy_creation import current_context

            ctx = current_context()
            if ctx is not None:
                ctx.notes.append(f"{getattr(self._fn, '__qualname__', self._fn)} (a numfuse.jit function) is traced "
                                 "inline, as part of this graph: its own options do not apply")
            return self._fn(*args, **kwargs)
        also_static: frozenset = frozenset()
        while True:
            compiled, traced_values = self._compiled(args, kwargs, also_static)
            if compiled.graph_break is not None:
                return self._run_segmented(args, kwargs, also_static).result
            if compiled.executable is None:
                compiled.executable = self._executable(compiled)
            names = [compiled.arg_names[i] for i in compiled.traced_positions]
            try:
                outputs = compiled.executable(traced_values, names, self._stream)
                break
            except ScalarOutOfRange as err:
                # Trace this call again with that Python int as a constant: NumPy's rules then
                # see its value (and raise, or compare exactly) as they do at a real call.
                position = compiled.traced_positions[err.input_index]
                also_static = also_static | {compiled.arg_names[position]}
        if not kwargs and not also_static and self._simple and len(args) == len(self._names) \
                and len(compiled.arg_names) == len(args):  # (containers flattened: no fast path)
            self._remember_fast_path(args, compiled, traced_values, names)
        return unflatten_outputs(compiled.traced.out_tree, outputs)

    def _remember_fast_path(self, args, compiled: Compiled, traced_values, names) -> None:
        if compiled.target.name == "cuda" and any(isinstance(a, np.ndarray) for a in args):
            return  # NumPy arguments are copied each call: never a fast path (don't try each call)
        from .runtime.fast_keys import fast_key

        key = fast_key(args, self._static_positions)
        if key in self._fast:
            return
        out_tree = compiled.traced.out_tree
        if out_tree[0] == "__leaf__":
            finish = operator.itemgetter(out_tree[1])
        else:
            finish = functools.partial(unflatten_outputs, out_tree)
        try:
            # Building registers the arguments' array types with fast_key.
            fast = compiled.executable.fast_call(traced_values, names, self._stream, compiled.traced_positions, finish)
        except Exception as err:  # the full path keeps serving these calls
            warnings.warn(
                f"numfuse: no fast call path for {self!r} with these arguments ({type(err).__name__}: "
                f"{err}); every call takes the full path",
                NumfuseWarning,
                stacklevel=3,
            )
            fast = None
        key = fast_key(args, self._static_positions)
        if key is not None:
            self._fast_key = fast_key
            self._fast[key] = None if fast is None else fast.run

    def _one_graph(self, args, kwargs) -> Compiled:
        compiled = self._compiled(args, kwargs)[0]
        if compiled.graph_break is not None:
            raise TracingError(
                f"{getattr(self._fn, '__name__', 'the function')} runs segment by segment, with graph breaks "
                f"(the first: {compiled.graph_break}); it has no single graph or plan: explain(*args) runs it "
                "and shows each segment"
            )
        return compiled

    def trace(self, *args, **kwargs) -> TraceResult:
        return self._one_graph(args, kwargs).traced

    def graph(self, *args, **kwargs):
        """The traced graph for these arguments (nothing runs)."""
        return self.trace(*args, **kwargs).graph

    def plan(self, *args, **kwargs) -> Plan:
        """The fusion plan for these arguments (nothing runs or compiles)."""
        return self._one_graph(args, kwargs).plan

    def kernel_sources(self, *args, **kwargs) -> list[KernelSource]:
        return self._one_graph(args, kwargs).sources

    def compile(self, *args, cc: tuple[int, int] | None = None, **kwargs) -> list[str]:
        """Compile every kernel of the plan for these arguments without running anything, and
        return each kernel's PTX. On a GPU the kernels are compiled and loaded for it (kept in
        Numba's disk cache): the first call then compiles nothing. Without a GPU they are
        compiled to PTX for `cc` (default sm_90) by numba-cuda's real compiler, through
        numfuse's disk cache (targets/cuda/ptx_cache.py); that needs a process that does not run
        kernels on the CUDA simulator, which replaces the compiler."""
        compiled = self._one_graph(args, kwargs)
        if compiled.target.name == "cpu":
            if compiled.executable is None:
                compiled.executable = self._executable(compiled)
            return compiled.executable.compile_for(self._compiled(args, kwargs)[1])
        from .targets.cuda.device import compile_target

        target = compile_target()
        if target == "gpu":
            if compiled.executable is None:
                compiled.executable = self._executable(compiled)
            executable = compiled.executable
            kernels = [executable.kernel(None, i) for i in range(len(executable.launches))]
            return [k.compiled.inspect_asm() for k in kernels]
        if target == "simulator":
            raise UnsupportedError(
                "compile(): this process runs kernels on Numba's CUDA simulator, which replaces "
                "numba-cuda's compiler; compile in a process that runs no kernels (or on a GPU)"
            )
        from .targets.cuda.ptx_cache import ptx_for
        from .targets.cuda.executable import argument_types_of

        return [ptx_for(source, argument_types_of(kernel.nest, source), cc or (9, 0))[0]
                for kernel, source in zip(compiled.plan.kernels, compiled.sources)]

    def explain(self, *args, **kwargs) -> str:
        """The graph, each kernel with why it is separate and its bytes, and the generated code.
        A function with graph breaks is run once, on copies of its array arguments: its breaks,
        then each distinct segment."""
        compiled = self._compiled(args, kwargs)[0]
        if compiled.graph_break is None:
            return explain_text(compiled)
        copies = [a.copy() if hasattr(a, "copy") and hasattr(a, "shape") else a for a in args]
        copied_kwargs = {k: a.copy() if hasattr(a, "copy") and hasattr(a, "shape") else a for k, a in kwargs.items()}
        run = self._run_segmented(copies, copied_kwargs)
        return segmented_explain_text(getattr(self._fn, "__name__", "f"), run)

    def __repr__(self) -> str:
        return f"<numfuse.jit {getattr(self._fn, '__qualname__', self._fn)}>"


def _inside_a_trace(args, kwargs) -> bool:
    from .proxy import Tracer
    from .numpy_creation import tracing_now

    return tracing_now() or any(isinstance(a, Tracer) for a in args) or any(
        isinstance(a, Tracer) for a in kwargs.values())


def _tracing_error_in(error: BaseException) -> TracingError | None:
    """`error` itself if it is a TracingError, or the TracingError NumPy raised it from."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, TracingError):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def explain_text(compiled: Compiled) -> str:
    from .runtime.kernel_files import kernel_path

    plan = compiled.plan
    names = plan.names
    graph = plan.graph
    inputs = ", ".join(
        f"{compiled.arg_names[p]}: {v.aval}" for p, v in zip(compiled.traced_positions, graph.inputs)
    )
    lines = [f"numfuse.jit({graph.name}) for ({inputs})", "", "== graph", format_graph(graph), ""]
    ratio = plan.bytes_moved / plan.min_bytes if plan.min_bytes else 1.0
    calls = f" and {len(plan.library_steps)} library call(s)" if plan.library_steps else ""
    lines.append(
        f"== plan: {len(plan.kernels)} kernel(s){calls}, {plan.bytes_moved} bytes moved, "
        f"minimum {plan.min_bytes} ({ratio:.2f}x); one pass per operation would move "
        f"{plan.unfused_bytes}"
    )
    lines.append(f"target: {compiled.target.name} ({compiled.target.description})")
    if plan.notes:
        lines.append("choices made when tracing:")
        lines.extend(f"   {note}" for note in plan.notes)
    source_of = {id(k): (i, s) for i, (k, s) in enumerate(zip(plan.kernels, compiled.sources))}
    for step in plan.steps or plan.kernels:
        if id(step) not in source_of:
            lines.append("")
            lines.append(f"-- {step.name} (after kernel #{step.after - 1})" if step.after else f"-- {step.name} (first)")
            lines.append(f"   what: {step.reason}")
            lines.append(f"   bytes: read {step.bytes_read}, written {step.bytes_written}")
            continue
        i, source = source_of[id(step)]
        kernel = step
        lines.append("")
        lines.append(f"-- kernel #{i} {kernel.name} ({kernel.nest.kind}, {kernel.nest.strategy})")
        lines.append(f"   what: {kernel.reason}")
        lines.append(f"   strategy: {compiled.target.strategy_text(kernel.nest)}")
        lines.append(f"   compiled for: {compiled_for_text(kernel.nest)}")
        lines.append(f"   sizes as arguments: {size_arguments_text(source)}")
        lines.extend(f"   limit: {note}" for note in kernel.notes)
        held = list(dict.fromkeys(f"{names[e.out]} = {e.prim}" for e in kernel.computed))
        lines.append(f"   holds: {', '.join(held) if held else '(copies only)'}")
        lines.append(
            f"   bytes: read {kernel.bytes_read}, written {kernel.bytes_written}; its operations "
            f"one pass each: {kernel.unfused_bytes}"
        )
        lines.append("   loop nest:")
        lines.extend("     " + line for line in str(kernel.nest).splitlines())
        lines.append(f"   source ({os.path.basename(str(kernel_path(source)))}):")
        lines.extend("     " + line for line in kernel_code(source.source).rstrip().splitlines())
    out_kinds = [o.kind for o in plan.outputs]
    if any(k != "buffer" for k in out_kinds):
        lines.append("")
        lines.append("outputs passed through unchanged: " + ", ".join(
            names[o.var] for o in plan.outputs if o.kind != "buffer"
        ))
    return "\n".join(lines)


def segmented_explain_text(name: str, run) -> str:
    """A function run with graph breaks: each break, then each distinct segment's plan."""
    segments = [b.segment for b in run.breaks] + [run.final]
    distinct = list({id(s): s for s in segments if s is not None}.values())
    lines = [f"numfuse.jit({name}) runs in {len(run.breaks) + 1} segment(s), {len(distinct)} distinct; "
             f"graph breaks, in the order this call met them:"]
    number = {id(s): k for k, s in enumerate(distinct)}
    runs: list[list] = []  # consecutive breaks at one line ending the same segment: one line
    for b in run.breaks:
        segment = f"segment #{number[id(b.segment)]}" if b.segment is not None else "nothing traced before it"
        text = f"{b} [ends {segment}]"
        if runs and runs[-1][0] == text:
            runs[-1][1] += 1
        else:
            runs.append([text, 1])
    lines.extend(f"   {text}" + (f" x{count}" if count > 1 else "") for text, count in runs)
    if run.final is not None:
        lines.append(f"   the function returned [ends segment #{number[id(run.final)]}]")
    lines.append("each break runs what was traced before it, then Python goes on with real values; "
                 "a segment of the same structure is planned and compiled once")
    for k, segment in enumerate(distinct):
        lines.append("")
        lines.append(f"== segment #{k}")
        lines.extend(explain_text(segment).splitlines())
    return "\n".join(lines)


def compiled_for_text(nest) -> str:
    """The choices made from sizes that this kernel's code depends on (strategy's
    `compiled_for`, called from collapse.py): a call whose sizes change one of them compiles another kernel."""
    if not nest.compiled_for:
        return "any sizes of this rank, dtypes and layout (no choice was made from sizes)"
    return "; ".join(nest.compiled_for)


def size_arguments_text(source) -> str:
    """The kernel arguments that carry sizes: one compiled kernel serves other values."""
    parts = []
    for p in source.params:
        if p.kind == "size":
            parts.append(f"{p.name}={p.value}")
        elif p.kind == "count":
            parts.append(f"{p.name}={p.value.item()!r}")
        elif p.kind == "cache_points":
            parts.append(f"{p.name} (points of a row on chip, set at launch)")
    return ", ".join(parts)


def jit(fn: Callable | None = None, *, static_argnums=(), static_argnames=(), stream=None, autotune=False,
        cuda_graphs=False, graph_breaks=True, target=None):
    """Compile a NumPy function into fused kernels, for a GPU or for the CPU's cores.

    Use as `@numfuse.jit` or `@numfuse.jit(static_argnames=("axis",))`. The function is traced
    once per input signature; see JitFunction.plan and JitFunction.explain to inspect.

    `stream`: the CUDA stream every call's kernels and copies run on (a Numba stream, a CuPy or
    PyTorch stream, an object with `__cuda_stream__`, or a CUstream handle). By default a call
    runs on the current stream of its device arguments' library (CuPy's, PyTorch's), else on
    the default stream.

    `autotune=True`: at each kernel's first launch, time the launch configurations the cost
    model considers (block sizes, rows per block) and keep the fastest, remembered in the disk
    cache for later processes (targets/cuda/autotune.py).

    `cuda_graphs=True`: on a GPU, a plan of several kernels called again with device arrays of
    the same signature launches as one CUDA graph whose kernel parameters are updated each call
    (targets/cuda/graphs.py), rather than kernel by kernel.

    `graph_breaks=True` (the default): where Python needs the value of a traced array (`if`,
    `while`, float(), .item(), np.asarray, a size from data), calls a NumPy function numfuse does
    not trace, or draws random numbers, the function runs segment by segment at every call:
    what was traced so far runs as fused kernels, Python gets real values and goes on
    (graph_breaks.py; explain lists the breaks). `graph_breaks=False`: a TracingError there.

    `target`: "auto" (the default; NUMFUSE_TARGET sets another), "cuda" or "cpu". "auto" runs on
    the GPU (target "cuda") when a CUDA GPU is found or device arrays are passed, else on the
    CPU's cores (target "cpu": Numba parallel functions, in place on NumPy arrays). Numba's CUDA
    simulator runs only when asked for: target="cuda" with NUMBA_ENABLE_CUDASIM=1.
    """
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    if fn is None:
        return lambda f: jit(f, static_argnums=static_argnums, static_argnames=static_argnames, stream=stream,
                             autotune=autotune, cuda_graphs=cuda_graphs, graph_breaks=graph_breaks, target=target)
    if isinstance(fn, JitFunction):
        fn = fn._fn  # jit(jit(f)): one JitFunction of f, with these options
    return JitFunction(fn, static_argnums, static_argnames, stream, autotune, cuda_graphs, graph_breaks, target)
