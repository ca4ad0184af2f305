"""JitFunction, what `numfuse.jit` (api.py) returns: trace once per input signature, plan,
generate kernels, run.

A call's signature is, for each argument: for arrays whether they are NumPy or device arrays
(of any library: targets/cuda/libraries.py), shape, dtype and layout; for Python scalars their type
(the value is a kernel argument); for NumPy scalars their dtype; for static arguments their value.
The cache maps a signature to the traced graph, its plan and its kernels, so a second call with
the same signature does no tracing, planning or compiling.

A Python scalar argument that the function uses as a Python value (an axis, a loop count) cannot
be traced; jit then retraces with that argument static, keyed by its value.
"""

from __future__ import annotations

import array
import copy
import functools
import inspect
import operator
import os
import warnings
from typing import Any, Callable

import numpy as np

from .codegen.statements import KernelSource
from .compiled import (
    Compiled, Place, array_positions, checked_fast_run, externals_match, kernel_header, without_gc,
)
from .errors import (
    NeedsGraphBreak, NumfuseWarning, RunUntraced, ScalarOutOfRange, TakeFullPath, TracingError, UnfusedCallWarning,
    UnsupportedError, tracing_error_in, warn_once,
)
from .ir.graph import check_graph, format_graph
from .ir.primitives import abstract_eval
from .plan.planner import Plan, plan as make_plan
from .targets.cuda.libraries import describe as describe_array, library_of
from .targets.cuda.streams import check_stream_option
from .frontend.aliasing import Recipe, base_of, external_sharing, find_sharing
from .frontend.arguments import (
    RANDOM_STATES, ContainerCopies, caller_containers, classify, compares_bools_by_identity, flatten_containers,
    has_array_leaf, holds_caller_container,
)
from .frontend.effects import Effects, TraceEffects, Watch, after_raise, after_trace
from .frontend.captures import (
    captures_of, changed_guard, guards_hold, loosened, one_trace_at_a_time, swapped_arrays,
)
from .frontend.captures import traced_function as captures_traced_function
from .frontend.type_builtin import numpy_type_visible
from . import debug, numpy_fallback
from .frontend import fp_modes, numpy_warnings
from .targets import Target, choose as choose_target, requested as requested_target
from .explain import emit_plan, explain_text, segmented_explain_text, signature_text
from .frontend.returns import as_numpy_returns, subclass_wrapper
from .frontend.tracer import ArgSpec, TraceResult, external_spec, trace, unflatten_outputs


# Arguments that are buffers of memory, not arrays: NumPy reads them as arrays.
BUFFERS = (memoryview, bytearray, array.array)

MAX_SEGMENTS = 256  # graph-break segments kept per JitFunction
# Global arrays whose sharing with the arguments is part of the cache key (JitFunction._externals):
# beyond them, each cached trace checks its own (externals_match), and a mismatch traces again.
MAX_EXTERNALS = 16
STALE_TRACES_WARNED = 8  # a guarded global changed this often: warn once that it costs a trace each time


class JitFunction:
    """A NumPy function compiled to fused CUDA kernels; see `jit`."""

    def __init__(self, fn: Callable, static_argnums=(), static_argnames=(), stream=None, autotune=False,
                 cuda_graphs=False, graph_breaks=True, target=None, numpy_fallback=None):
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
        self._numpy_fallback = numpy_fallback  # None: NUMFUSE_NUMPY_FALLBACK decides (numpy_fallback.py)
        # Segments of functions run with graph breaks, by structure (graph_breaks.structure_key).
        self._segments: dict[tuple, Compiled] = {}
        # Modules whose code calls the builtin `type` (type_builtin.py), for runs with graph
        # breaks: found once, with the first.
        self._type_holders: tuple | None = None
        self._signature = inspect.signature(fn)
        params = list(self._signature.parameters.values())
        self._names = [p.name for p in params]
        self._simple = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
        self._static = set(static_argnames) | {self._names[i] for i in static_argnums if i < len(self._names)}
        _check_static_options(fn, params, static_argnums, static_argnames)
        self._auto_static: set[str] = set()
        # (`flag is True` in the code: its bool arguments are static, the objects themselves)
        self._bools_static = compares_bools_by_identity(fn)
        self._cache: dict[tuple, Compiled] = {}
        # Every array a trace read from the function's globals, closure or static arguments:
        # which arguments share memory with them is part of the cache key (_external_part).
        self._externals: list = []
        self._stale_traces = 0  # traces made again because a guarded global changed
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
        if any(isinstance(v, BUFFERS) for v in values):
            # A memoryview, bytearray or array.array: read as NumPy reads it (np.asarray, which
            # shares its memory, so writes reach it).
            values = [np.asarray(v) if isinstance(v, BUFFERS) else v for v in values]
        if not any(has_array_leaf(v, describe_array) for n, v in zip(names, values) if n not in self._static):
            return names, values, call
        return flatten_containers(names, values, call, describe_array, keep=self._static)

    def _bind_arguments(self, args, kwargs) -> tuple[list[str], list[Any], Callable]:
        if self._simple and not kwargs and len(args) == len(self._names):
            return self._names, list(args), lambda fn, vals: fn(*vals)
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as err:  # Python's message, naming the function as Python would
            raise TypeError(f"{getattr(self._fn, '__qualname__', 'the function')}(): {err}") from None
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
        static = self._static_now(names, values, also_static)
        key_parts, specs = [], []
        for name, value in zip(names, values):
            part, spec = classify(name, value, name in static, describe_array)
            key_parts.append(part)
            specs.append(spec)
        structure = getattr(call, "structure", None)  # containers' shapes: part of the key
        sharing = self._sharing(values, specs)
        key = (tuple(key_parts), structure, None if sharing is None else sharing.key,
               self._external_part(values, specs))
        compiled = self._cache.get(key)
        if compiled is not None and not externals_match(compiled, values, array_positions(specs)):
            compiled = None  # (a global array beyond MAX_EXTERNALS shares memory otherwise now)
        if compiled is not None and compiled.guards and not guards_hold(compiled.guards):
            # A global or closure variable the trace read was rebound: every trace is stale.
            changed = changed_guard(compiled.guards)
            if debug.enabled("cache"):
                debug.emit("cache", self._label(), f"{changed} changed since the trace: every signature is traced again")
            self._stale_traces += 1
            if self._stale_traces == STALE_TRACES_WARNED:
                warn_once(f"{self._label()} was traced again {STALE_TRACES_WARNED} times because what it reads "
                          f"besides its arguments changed ({changed!r} the last time): pass such a value as an "
                          "argument, which needs no new trace")
            self._cache.clear()
            self._fast.clear()
            self._externals.clear()
            compiled = None
        if debug.enabled("cache"):
            debug.emit("cache", self._label(), ("signature found: no trace" if compiled is not None else
                                                "new signature: tracing") + f" ({signature_text(names, key_parts)})")
        if compiled is None:
            with one_trace_at_a_time():
                compiled = self._compile(names, values, specs, call, sharing)
            # The key under which it was found may have changed (arguments made static).
            static = self._static_now(names, values, also_static)
            classified = [classify(n, v, n in static, describe_array) for n, v in zip(names, values)]
            specs = [c[1] for c in classified]
            sharing = self._sharing(values, specs)
            key = (tuple(c[0] for c in classified), structure, None if sharing is None else sharing.key,
                   self._external_part(values, specs))
            self._cache[key] = compiled
        if compiled.extra:
            values = values + [make(values) for make in compiled.extra]
        traced_values = [values[i] for i in compiled.traced_positions]
        return compiled, traced_values

    def _static_now(self, names, values, also_static=frozenset()) -> set[str]:
        """The names static in a call with these values: the user's, and those numfuse made
        static where a scalar steered Python code (`range(n)`), while they hold a scalar; an
        array passed there later (`np.histogram(x, bins)` with bins=10, then edges) is traced."""
        made = {n for n, v in zip(names, values)
                if (n in self._auto_static and isinstance(v, (bool, int, float, complex, np.generic)))
                or (self._bools_static and type(v) is bool)}
        return self._static | made | also_static

    @staticmethod
    def _sharing(values, specs):
        """Which array arguments overlap in memory (aliasing.py), or None."""
        arrays = array_positions(specs)
        return find_sharing(values, arrays) if len(arrays) > 1 else None

    def _external_part(self, values, specs) -> tuple:
        """Which array arguments share memory with arrays a trace read from the function's
        globals (aliasing.external_sharing): `f(W)` of a function reading the global W."""
        if not self._externals:
            return ()
        return external_sharing(values, array_positions(specs), self._externals)

    def _compile(self, names, values, specs, call, sharing=None) -> Compiled:
        random_argument = next((n for n, v in zip(names, values) if isinstance(v, RANDOM_STATES)), None)
        if random_argument is not None:
            return self._segmented(names, f"argument {random_argument!r} is a random generator, whose draws "
                                          "differ at every call")
        statics = [(n, s[1]) for n, s in zip(names, specs) if not isinstance(s, ArgSpec) and s[0] == "static"]
        captured = captures_of(self._fn, statics)
        fn_name = getattr(self._fn, "__name__", "f")
        real = len(names)
        hidden: list = []  # (name, spec, make): bases of arguments that share memory
        # Arrays of the globals that are arguments, or views of one: read through the argument.
        through = {id(self._externals[j]): (i, how, names[i], self._externals[j])
                   for i, j, how in self._external_part(values, specs) if how is not False}
        budget = numpy_fallback.trace_budget(self._numpy_fallback, values)
        target = self._target_for(values)
        if sharing is not None and any(g.repeats_an_object for g in sharing.groups):
            # One array object at several positions is one traced object (X is Y), whatever
            # the function writes: traced so from the start.
            specs, hidden = self._shared_specs(names, values, specs, sharing)
        while True:
            all_specs = list(specs) + [h[1] for h in hidden]
            traced_positions = [i for i, s in enumerate(all_specs) if isinstance(s, ArgSpec)]
            try:
                found = TraceEffects()  # (filled in by _call_traced)
                traced = trace(functools.partial(self._call_traced, call, captured, real, statics, found), all_specs,
                               fn_name,
                               hidden=len(hidden), external=captured.arrays,
                               external_arguments={k: v[:3] for k, v in through.items()}, budget=budget,
                               fuses_product=target.fuses_product)
            except Exception as raised:
                err = tracing_error_in(raised)
                if err is None:
                    raise
                if isinstance(err, NeedsGraphBreak):
                    return self._segmented(names, err.reason, err.refusal)
                if isinstance(err, RunUntraced):
                    return Compiled(None, None, [], [], arg_names=names,
                                    numpy_choice=numpy_fallback.MeasuredChoice(chosen="numpy", reason=err.reason))
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
                continue
            read = [a for _, a in traced.external]
            shared = external_sharing(values, array_positions(specs), read)
            if any(how is not False for _, _, how in shared):
                # A global array read that is an argument (or a view of one): trace again,
                # reading it through the argument.
                through.update({id(read[j]): (i, how, names[i], read[j]) for i, j, how in shared if how is not False})
                continue
            if shared and traced.graph.writebacks:
                i, j, _ = shared[0]
                raise UnsupportedError(
                    f"argument {names[i]!r} shares memory with {traced.external[j][0]}, which {fn_name} also reads, "
                    f"and {fn_name} writes into an array: numfuse follows that where the global array is the "
                    "argument or a view of it, not here. Pass the array only one way (as the argument, or read "
                    "only the global), or pass a copy")
            if sharing is None or hidden or any(s[0] == "alias" for s in specs if not isinstance(s, ArgSpec)):
                break
            written = {traced_positions[i] for i in traced.graph.writebacks}
            if not written & sharing.members():
                break  # the overlapping arguments are only read: each can be its own buffer
            refusal = sharing.refusal(names, written, fn_name)
            if refusal is not None:
                raise refusal
            specs, hidden = self._shared_specs(names, values, specs, sharing)  # and trace again
        externals = [a for _, a in traced.external]
        overlap = _written_global_overlap(traced, len(traced_positions))
        if overlap is not None:
            # (two arrays of the globals or attributes that share memory, one written: NumPy
            # sees each write through the other; the function's Python code runs on them)
            return self._segmented(names, f"{fn_name} writes into {overlap[0]}, which shares memory with "
                                          f"{overlap[1]} (arrays it reads besides its arguments): it runs segment "
                                          "by segment, NumPy computing with them")
        all_specs = list(specs) + [h[1] for h in hidden] + [external_spec(n, a) for n, a in traced.external]
        traced_positions = [i for i, s in enumerate(all_specs) if isinstance(s, ArgSpec)]
        scalar_inputs = {k for k, i in enumerate(traced_positions) if all_specs[i].kind != "array"}
        strided_inputs = {k for k, i in enumerate(traced_positions) if all_specs[i].strided}
        if debug.enabled("graph"):
            debug.emit("graph", self._label(), format_graph(traced.graph))
        with without_gc():
            plan = make_plan(traced.graph, scalar_inputs, strided_inputs, target=target)
            sources = [target.render(k.nest, kernel_header(plan, i)) for i, k in enumerate(plan.kernels)]
        emit_plan(self._label(), plan, sources, target)
        # An array read from an attribute or a container's item (`self.x`, CACHE["w"]) is read
        # from there at each call, as NumPy reads it (compiled.Place): another method may have
        # put a new array there (a layer's forward pass, for its backward pass), or a replayed
        # change of this one (`self.avg = 0.9 * self.avg + x`). Its guard asks only for an
        # array of the same kind; the places a replay sets are guarded as replay_of says.
        read = {id(a) for a in externals}
        places = {id(array): Place(holder, key) for holder, key, array in captured.swaps if id(array) in read}
        guards = loosened(captured.guards, [(p.holder, p.key) for p in places.values()], captured.swaps) + \
            tuple(found.guards)
        extra = [h[2] for h in hidden] + [places.get(id(a)) or functools.partial(_constant, a) for a in externals]
        all_names = list(names) + [h[0] for h in hidden] + [n for n, _ in traced.external]
        aliased = any(not isinstance(s, ArgSpec) and s[0] == "alias" for s in specs)
        arrays_read = tuple(externals) + tuple(v[3] for v in through.values())
        watch = tuple(places.get(id(a), a) for a in externals) + tuple(v[3] for v in through.values())
        for external in arrays_read:
            if len(self._externals) < MAX_EXTERNALS and not any(external is known for known in self._externals):
                self._externals.append(external)
        return Compiled(traced, plan, sources, traced_positions, arg_names=all_names, target=target,
                        extra=extra, guards=guards, sharing=sharing if aliased else None, replay=found.replay,
                        caller_containers=found.caller_containers,
                        external_watch=watch,
                        external_part=external_sharing(values, array_positions(specs), arrays_read))

    def _call_traced(self, call, captured, real, statics, found, *values):
        """The function called by the trace: with the arrays its code names among its globals
        and closure traced (captures.traced_function), on the bound arguments. What it changes
        besides is replayed or makes it run segment by segment (effects.after_trace, which
        fills in `found`)."""
        from .frontend.numpy_creation import current_context

        ctx = current_context()
        found.replay, found.caller_containers = None, False
        name = getattr(self._fn, "__qualname__", "the function")
        with numpy_type_visible(captured.type_holders):
            fn, check = captures_traced_function(self._fn, ctx, captured)
            with swapped_arrays(ctx, captured):
                watch = Watch(self._fn, statics)
                copies = ContainerCopies() if getattr(call, "structure", None) is not None else None
                unlock = watch.locked()
                try:
                    result = call(fn, values[:real]) if copies is None else call(fn, values[:real], copies)
                except Exception as raised:
                    unlock()
                    after_raise(watch, copies, ctx, raised, name, unlock)
                    raise
                finally:
                    unlock()
                swapped = {(id(holder), key): array for holder, key, array in captured.swaps}
                result = after_trace(watch, copies, result, ctx, name, found, swapped)
        check()
        return result

    @staticmethod
    def _shared_specs(names, values, specs, sharing):
        """Specs tracing each group of arguments that share memory as one buffer: the same
        object as the first position passed it (`X is Y` holds in the trace as in NumPy),
        other arrays of the same memory as whole views of the first, views as views of a
        hidden base argument (aliasing.py)."""
        specs = list(specs)
        hidden = []
        for group in sharing.groups:
            first = group.positions[0]
            if group.same:
                for p, same_object in zip(group.positions[1:], group.identical[1:]):
                    ndim = np.ndim(values[p])
                    specs[p] = ("alias", same_object, None) if same_object != p else \
                        ("alias", first, Recipe.whole(ndim) if ndim else None)
                continue
            position = len(values) + len(hidden)
            base = base_of(values[first])
            name = "base of " + ", ".join(names[p] for p in group.positions)
            hidden.append((name, classify(name, base, False, describe_array)[1], functools.partial(_base_of_argument, first)))
            for p, recipe, same_object in zip(group.positions, group.recipes, group.identical):
                specs[p] = ("alias", same_object, None) if same_object != p else ("alias", position, recipe)
        return specs, hidden

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
        from .frontend.graph_breaks import run_segmented

        names, values, call = self._bind(args, kwargs)
        static = self._static_now(names, values, also_static)
        # Python ints are static here: the function's Python code runs at every call anyway,
        # and NumPy's answer for an int out of a dtype's range depends on its value, which a
        # segment cannot trace again once earlier segments ran.
        specs = [classify(n, v, n in static or (type(v) is int or type(v) is bool), describe_array)[1]
                 for n, v in zip(names, values)]
        fn_name = getattr(self._fn, "__name__", "f")
        if self._type_holders is None:
            self._type_holders = captures_of(self._fn).type_holders
        statics = [(n, s[1]) for n, s in zip(names, specs) if not isinstance(s, ArgSpec) and s[0] == "static"]
        # Arguments that share memory: views of their base, passed as a hidden argument, as
        # when traced once (an array passed twice is one array object: run_segmented).
        sharing = self._sharing(values, specs)
        hidden, unfollowed = [], {}
        if sharing is not None and any(g.expressible for g in sharing.groups):
            expressible = type(sharing)(tuple(g for g in sharing.groups if g.expressible))
            specs, hidden = self._shared_specs(names, values, specs, expressible)
            hidden = [(name, spec, make(values)) for name, spec, make in hidden]
        for group in sharing.groups if sharing is not None else ():
            if not group.expressible:  # (a write into one of them is refused when it would run)
                unfollowed.update({p: sharing.refusal(names, {p}, fn_name) for p in group.positions})
        with one_trace_at_a_time(), numpy_type_visible(self._type_holders):
            copies = ContainerCopies() if getattr(call, "structure", None) is not None else None
            effects = Effects(Watch(self._fn, statics), copies)
            run = (lambda *vals: call(self._fn, vals)) if copies is None else \
                (lambda *vals: call(self._fn, vals, copies))
            return run_segmented(run, specs, values, names, self._run_segment, fn_name, describe_array,
                                 self._target_for(values).fuses_product, effects,
                                 budget=numpy_fallback.trace_budget(self._numpy_fallback, values), hidden=hidden,
                                 unfollowed=unfollowed)

    def _run_segment(self, graph, specs, values, names):
        """Plan (once per structure), compile and run one segment: (outputs, its Compiled)."""
        from .frontend.graph_breaks import structure_key

        key = structure_key(graph, specs)
        compiled = self._segments.get(key)
        if compiled is None:
            check_graph(graph, abstract_eval)  # (the tracer's check, once per structure)
            scalar_inputs = {k for k, s in enumerate(specs) if s.kind != "array"}
            strided_inputs = {k for k, s in enumerate(specs) if s.strided}
            target = self._target_for(values)
            if debug.enabled("graph"):
                debug.emit("graph", self._label(), "a segment (graph breaks):\n" + format_graph(graph))
            with without_gc():
                plan = make_plan(graph, scalar_inputs, strided_inputs, target=target)
                sources = [target.render(k.nest, kernel_header(plan, i)) for i, k in enumerate(plan.kernels)]
            emit_plan(self._label(), plan, sources, target)
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
        stopping = fp_modes.stopping_categories()
        if stopping:
            if fp_modes.host_only((*args, *kwargs.values()), library_of) and not _inside_a_trace(args, kwargs):
                if fp_modes.errstate_stops(stopping):
                    warnings.warn(f"numfuse: {self._label()}: {fp_modes.reason(stopping)}", UnfusedCallWarning,
                                  stacklevel=2)
                return self._fn(*args, **kwargs)
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

    def _label(self) -> str:
        """"f at file.py:10": the function, as progress lines and debug output name it."""
        code = getattr(self._fn, "__code__", None)
        name = getattr(self._fn, "__qualname__", getattr(self._fn, "__name__", "the function"))
        if code is None:
            return name
        return f"{name} at {os.path.basename(code.co_filename)}:{code.co_firstlineno}"

    def _executable(self, compiled):
        options = {"autotune": self._autotune, "cuda_graphs": self._cuda_graphs, "label": self._label()}
        return compiled.target.executable(compiled.plan, compiled.sources, compiled.traced.leaf_kinds, options)

    def _call(self, args, kwargs):
        # (Off the fast path: traced arguments never take it, fast_key has no key for them.)
        if _inside_a_trace(args, kwargs):
            # Called by a function being traced: traced inline, as part of the caller's graph
            # (this function's own options do not apply).
            from .frontend.numpy_creation import current_context

            ctx = current_context()
            if ctx is not None:
                ctx.notes.append(f"{getattr(self._fn, '__qualname__', self._fn)} (a numfuse.jit function) is traced "
                                 "inline, as part of this graph: its own options do not apply")
            return self._fn(*args, **kwargs)
        with numpy_warnings.one_call():  # (its traces give NumPy's warnings once)
            return self._traced_call(args, kwargs)

    def _traced_call(self, args, kwargs):
        compiled, traced_values = self._compiled(args, kwargs)
        choice = self._choice(compiled, args, kwargs)
        if not choice:
            return self._run(args, kwargs, compiled, traced_values)
        remember_fast = choice.chosen == "numfuse"
        result = choice.call(lambda: self._run(args, kwargs, compiled, traced_values, remember_fast),
                             lambda: self._fn(*args, **kwargs))
        if choice.runs_numpy:
            self._remember_plain_fast_path(args, kwargs)
        return result

    def _choice(self, compiled: Compiled, args, kwargs):
        """The signature's MeasuredChoice between its plan and the plain function, or False."""
        if compiled.numpy_choice is None:
            values = self._bind(args, kwargs)[1]
            target = compiled.target or self._target_for(values)
            applies = numpy_fallback.applies(self._numpy_fallback, values, target)
            compiled.numpy_choice = numpy_fallback.MeasuredChoice() if applies else False
        return compiled.numpy_choice

    def _remember_plain_fast_path(self, args, kwargs) -> None:
        """Calls of a signature that runs as the plain function: straight to it."""
        if kwargs or not self._simple or len(args) != len(self._names) or debug.enabled("launch"):
            return
        from .runtime.fast_keys import fast_key

        key = fast_key(args, self._static_positions)
        if key is not None and key not in self._fast:
            self._fast_key = fast_key
            fn = self._fn
            self._fast[key] = lambda fast_args: fn(*fast_args)

    def _run(self, args, kwargs, compiled: Compiled, traced_values, remember_fast=True):
        """Run numfuse's plan (or segments) for this call."""
        also_static: frozenset = frozenset()
        while True:
            if compiled.graph_break is not None:
                run = self._run_segmented(args, kwargs, also_static)
                if run.on_numpy is not None and compiled.numpy_choice:
                    # (its calls would trace as much: the plain function runs them, untimed)
                    compiled.numpy_choice.chosen, compiled.numpy_choice.reason = "numpy", run.on_numpy
                result = run.result
                if holds_caller_container(result):
                    result = caller_containers(result, self._bind_arguments(args, kwargs)[1])
                return result
            if compiled.executable is None:
                compiled.executable = self._executable(compiled)
            numpy_warnings.given_again(compiled.traced.warnings)  # (as NumPy gives them at every call)
            names = [compiled.arg_names[i] for i in compiled.traced_positions]
            try:
                outputs = compiled.executable(traced_values, names, self._stream)
                break
            except ScalarOutOfRange as err:
                # Trace this call again with that Python int as a constant: NumPy's rules then
                # see its value (and raise, or compare exactly) as they do at a real call.
                position = compiled.traced_positions[err.input_index]
                also_static = also_static | {compiled.arg_names[position]}
                compiled, traced_values = self._compiled(args, kwargs, also_static)
        wrapper = subclass_wrapper(traced_values)
        traced = compiled.traced
        if traced.views or traced.returned or traced.output_views or traced.readonly or traced.same_as \
                or wrapper is not None:
            bound = self._bind(args, kwargs)[1] if compiled.traced.returned else ()
            outputs = as_numpy_returns(compiled, outputs, traced_values, wrapper, bound)
        elif remember_fast and not kwargs and not also_static and self._simple and len(args) == len(self._names) \
                and len(compiled.arg_names) - len(compiled.extra) == len(args) and compiled.sharing is None \
                and compiled.replay is None:
            # (containers flattened, arguments sharing memory, changes replayed: no fast path)
            self._remember_fast_path(args, compiled, traced_values, names)
        result = unflatten_outputs(compiled.traced.out_tree, outputs)
        if compiled.replay is not None:
            result, values = result
            compiled.replay.apply(values, self._bind_arguments(args, kwargs)[1])
        if compiled.caller_containers:
            result = caller_containers(result, self._bind_arguments(args, kwargs)[1])
        return result

    def _remember_fast_path(self, args, compiled: Compiled, traced_values, names) -> None:
        if debug.enabled("launch"):
            return  # every launch printed: every call takes the full path
        if compiled.target.name == "cuda" and any(isinstance(a, np.ndarray) for a in (*args, *traced_values)):
            # NumPy arguments (or global arrays read) are copied each call: never a fast path
            # (don't try each call).
            return
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
            self._fast[key] = None if fast is None else checked_fast_run(fast.run, compiled, len(args))

    def _one_graph(self, args, kwargs) -> Compiled:
        compiled = self._compiled(args, kwargs)[0]
        if compiled.plan is None and compiled.graph_break is None:
            raise TracingError(
                f"{getattr(self._fn, '__name__', 'the function')} runs as the plain function, untraced: "
                f"{compiled.numpy_choice.reason}; numfuse.jit(fn, numpy_fallback=False) traces it whole however long "
                "that takes")
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
        if compiled.plan is None and compiled.graph_break is None:  # the plain function, untraced
            return str(compiled.numpy_choice) + "\n"
        if compiled.graph_break is None:
            text = explain_text(compiled)
        else:
            copies = [_copy_for_explain(a) for a in args]
            copied_kwargs = {k: _copy_for_explain(a) for k, a in kwargs.items()}
            # (what the function reaches besides its arguments is put back after: explain
            # changes nothing of the user's)
            objects = [(f"argument {k}", a) for k, a in enumerate([*copies, *copied_kwargs.values()])]
            put_back = Watch(self._fn, objects).kept()
            try:
                run = self._run_segmented(copies, copied_kwargs)
            finally:
                put_back()
            text = segmented_explain_text(getattr(self._fn, "__name__", "f"), run, compiled.graph_break)
        if compiled.numpy_choice:  # (made at the first call that ran: numpy_fallback.py)
            text = text.rstrip("\n") + "\n\n" + str(compiled.numpy_choice) + "\n"
        return text

    def numpy_choice(self, *args, **kwargs):
        """The signature's numpy_fallback.MeasuredChoice (the times so far and, once made, whether
        its calls run numfuse's plan or the plain function), or None where none is made."""
        return self._compiled(args, kwargs)[0].numpy_choice or None

    def __repr__(self) -> str:
        return f"<numfuse.jit {getattr(self._fn, '__qualname__', self._fn)}>"


def _written_global_overlap(traced, first: int):
    """(name, name) of a global (or attribute) array the trace writes into and another it reads
    that shares memory with it (`self.V = self.W[:1]`), or None. `first`: the position of the
    first of them among the graph's inputs."""
    external = traced.external
    for position in traced.graph.writebacks:
        if position < first or len(external) < 2:
            continue
        name, written = external[position - first]
        for other_name, other in external:
            if other is not written and np.may_share_memory(written, other) and np.shares_memory(written, other):
                return name, other_name
    return None


def _copy_for_explain(value):
    """An argument as explain runs the function on it: arrays copied, and containers (which
    the function may change) with them."""
    if isinstance(value, (dict, list, tuple)):
        try:
            return copy.deepcopy(value)
        except Exception:  # (something inside that cannot be copied: the container itself)
            return value
    return value.copy() if hasattr(value, "copy") and hasattr(value, "shape") else value


def _constant(value, _values):
    return value


def _base_of_argument(position, values):
    return base_of(values[position])


def _inside_a_trace(args, kwargs) -> bool:
    from .frontend.proxy import Tracer
    from .frontend.numpy_creation import tracing_now

    return tracing_now() or any(isinstance(a, Tracer) for a in args) or any(
        isinstance(a, Tracer) for a in kwargs.values())


def _check_static_options(fn, params, static_argnums, static_argnames) -> None:
    """static_argnums and static_argnames name parameters of `fn`: a typo is an error at jit
    time, not a silently traced argument."""
    names = [p.name for p in params]
    varargs = any(p.kind == p.VAR_POSITIONAL for p in params)
    varkw = any(p.kind == p.VAR_KEYWORD for p in params)
    what = getattr(fn, "__qualname__", "the function")
    for i in static_argnums:
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
            raise TypeError(f"numfuse.jit(static_argnums=...) takes ints, got {i!r}")
        if not varargs and not -len(names) <= i < len(names):
            raise ValueError(f"numfuse.jit(static_argnums=...): {i} is out of range: {what} has "
                             f"{len(names)} parameter(s) ({', '.join(names) or 'none'})")
    for name in static_argnames:
        if not isinstance(name, str):
            raise TypeError(f"numfuse.jit(static_argnames=...) takes parameter names, got {name!r}")
        if name not in names and not varkw:
            raise ValueError(f"numfuse.jit(static_argnames=...): {what} has no parameter {name!r} "
                             f"(its parameters: {', '.join(names) or 'none'})")
