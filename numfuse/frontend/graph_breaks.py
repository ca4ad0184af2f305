"""Graph breaks: running a function segment by segment where Python needs real values.

Tracing stops where Python needs the value of a traced array (`if`, `while`, `bool()`,
`float()`, `.item()`, `np.asarray`, a size from data), where it calls a NumPy function numfuse
does not trace, or where it draws random numbers. Such a function is run at every call on
tracers whose context has a `Breaker`: at each of those points the Breaker plans and runs what was
traced since the last one (a segment), keeps the value of every array the function still holds
(the live tracers, tracked by weak reference), and goes on tracing with those values as the next
segment's inputs. Python gets real values; the function's own exceptions are real ones.

A segment is cached by its structure (`structure_key`: operations, shapes, dtypes, layouts,
literals), so a loop whose body breaks once per iteration plans and compiles its body once.

What Python gets:
- a value it converts (bool, float, int, an index, `.item()`, `.tolist()`, str): the value;
- np.asarray of a traced array, in another library's code (in the user's own it is the traced
  array itself, numpy_creation.py): a read-only view of its own buffer, which later traced writes
  into it update at once (`written`), so that it shows what NumPy's would; writing into it,
  which in NumPy would change the traced array, raises rather than is lost (np.array: a copy of
  its own);
- an untraced NumPy function: its result on the real arrays; an argument that owns its buffer is
  passed as that buffer (np.fill_diagonal writes into it, as in NumPy), a view as a read-only
  snapshot.
A NumPy array the function made with NumPy (or a random draw) is read by the next segment as an
input, copied when it is first used: writing into it afterwards does not reach the segment,
as NumPy's eager evaluation would have read it then.
"""

from __future__ import annotations

import itertools
import sys
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .arguments import classify, leaves_of, rebuilt_container
from ..errors import SourceLoc, UnsupportedError, user_location
from ..ir import viewmaps
from ..ir.graph import Aval, Graph, SizeConst, Var
from .proxy import Tracer, _View
from .returns import view_or_copy
from .traced import root_array
from .tracer import ArgSpec, TraceContext, argument_view, flatten_outputs, kept_values, unflatten_outputs
from .effects import Effects
from .numpy_creation import SuspendingGenerator, creating_arrays, stop_tracing, suspended
from .numpy_views import layout_refusal
from . import eager, opaque


# What a segment costs the host, in traced operations (about 40 µs each on the CPU), for the
# budget of a run segment by segment: its run (npbench's crc16: 1,600 segments of 3 operations,
# 0.3 s), and a structure met for the first time in the call, planned or found in the cache
# (npbench's nussinov: 11,800 segments that differ in their indices, 4.4 ms each).
SEGMENT_RUN_COST = 5
SEGMENT_PLAN_COST = 100


@dataclass
class Break:
    """One graph break of a run: where, why, and the segment it ended."""

    loc: SourceLoc | None
    reason: str
    segment: Any = None  # what run_graph returned for the segment: its cache entry

    def __str__(self) -> str:
        where = f"{self.loc.short()} ({self.loc.text})" if self.loc is not None else "(no user line)"
        return f"{where}: {self.reason}"


@dataclass
class SegmentedRun:
    """The breaks of one run, and its result."""

    result: Any
    breaks: list[Break] = field(default_factory=list)
    final: Any = None  # the last segment's cache entry
    on_numpy: str | None = None  # why the call went on in NumPy (eager.py), if it did


def to_host(value) -> np.ndarray:
    """A NumPy array of `value`'s elements: a NumPy array itself, a device array read back."""
    if isinstance(value, np.ndarray):
        return value
    for method in ("get", "copy_to_host"):  # CuPy; Numba's device arrays
        read = getattr(value, method, None)
        if callable(read):
            return np.asarray(read())
    if hasattr(value, "cpu") and hasattr(value, "numpy"):  # PyTorch
        return value.detach().cpu().numpy()
    return np.asarray(value)


def structure_key(graph: Graph, specs: list[ArgSpec]) -> tuple:
    """What a segment's plan and kernels depend on: its inputs' kinds, shapes, dtypes and
    layouts, and each equation's primitive, operands (by position), parameters and result. Two
    segments with the same key are planned, compiled and run alike."""
    number = {v: i for i, v in enumerate(graph.inputs)}
    parts: list[Any] = [tuple((s.kind, s.aval.shape, s.aval.dtype.str, s.aval.dtype.char, s.layout,
                               s.strides, s.readonly) for s in specs)]

    def key(atom):
        if isinstance(atom, Var):
            return number[atom]
        kind = "n" if isinstance(atom, SizeConst) else "l"
        return (kind, atom.aval.dtype.str, atom.value.tobytes(), getattr(atom, "key", None))

    for eqn in graph.eqns:
        parts.append((eqn.prim, tuple(key(a) for a in eqn.inputs), eqn.params, eqn.out.aval.shape,
                      eqn.out.aval.dtype.str, eqn.out.aval.dtype.char))
        number[eqn.out] = len(number)
    parts.append(tuple(key(o) for o in graph.outputs))
    parts.append(tuple(sorted((p, number[v]) for p, v in graph.writebacks.items())))
    return tuple(parts)


def _base_and_chain(ctx, view: _View):
    """(the array object `view` is a view of, the view equations from its buffer), or None."""
    root = root_array(view)
    if root._weak or root._numpy_scalar:
        return None
    found = argument_view(ctx, view, [root])
    return None if found is None else (root, found[1])


def _reads_memory_layout(func, args, kwargs) -> bool:
    """Whether untraced `func` gives values that depend on its array arguments' memory layout
    (as_strided's windows over the memory, a view as a dtype of another size, the bytes, an
    'A' or 'K' order)."""
    name = getattr(func, "__name__", "")
    if func is as_strided or name in ("ndarray.tobytes", "ndarray.tofile", "ndarray.data"):
        return True
    if name == "ndarray.view":
        dtype = kwargs.get("dtype", args[1] if len(args) > 1 else None)
        return dtype is not None and not (isinstance(dtype, type) and issubclass(dtype, np.ndarray))
    order = kwargs.get("order")
    return order in ("A", "K") and name in ("ndarray.ravel", "ndarray.reshape", "ndarray.flatten", "ndarray.copy",
                                            "ravel", "reshape", "copy", "array", "asarray")


def _replace_tracers(value, concrete: dict[int, Any]):
    if isinstance(value, Tracer):
        return concrete[id(value)]
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return type(value)(*(_replace_tracers(v, concrete) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(_replace_tracers(v, concrete) for v in value)
    if isinstance(value, dict):
        return {k: _replace_tracers(v, concrete) for k, v in value.items()}
    return value


class Breaker:
    """The segments of one run of a function: see the module docstring.

    `run_graph(graph, specs, values, names)` plans (or finds in its cache) and runs one
    segment's graph on its inputs' values, returning (outputs, cache entry). `describe_array`:
    as arguments.classify takes it."""

    def __init__(self, ctx: TraceContext, run_graph: Callable, name: str, describe_array: Callable,
                 budget: int | None = None):
        self.ctx = ctx
        self.describe_array = describe_array
        self.run_graph = run_graph
        self.name = name
        self._tracked: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._ids = itertools.count()
        self.values: dict[Var, Any] = {}  # each input of the segment: its value
        self.specs: dict[Var, ArgSpec] = {}
        self.names: dict[Var, str] = {}
        self._by_id: dict[int, Var] = {}  # array inputs by the identity of their value
        self._numbers: dict[tuple, Var] = {}  # Python numbers' inputs by their type and bits
        # Inputs that an earlier segment computed: in numfuse's buffers, laid out as numfuse
        # chose, which need not be NumPy's layout (array_flags.py answers no strides of them).
        self.numfuse_layout: set[Var] = set()
        self.breaks: list[Break] = []
        self.caller_arrays: set[int] = set()  # ids of the caller's arrays
        self.final = None  # the last segment's cache entry
        self.exposed: set[int] = set()  # ids of buffers Python holds as NumPy arrays
        self._exposed_arrays: list = []
        self.locked: list = []  # arrays made read-only while the run lasts (foreign_call)
        self.read_only_given: list[str] = []  # why each read-only array Python got was needed
        self.buffer_views: list = []  # np.asarray's read-only views of buffers, given to Python
        self.running = False  # a segment is running (or raised)
        # Past `budget` operations traced in this call, the rest of it runs on NumPy (eager.py):
        # then `eager` holds each live traced value's real value, by id, and `on_numpy` why.
        self.budget = budget
        self.traced = 0
        self._entries: set[int] = set()  # the segments run so far (their cache entries' ids)
        self.eager: dict[int, tuple[Any, Any]] | None = None
        self.on_numpy: str | None = None
        self._waiting = False  # for an operation of numfuse to return (_go_on_in_numpy)
        # Arguments that share memory in a way numfuse does not follow (not views of one base):
        # id -> the refusal of a write into one of them (run_segmented's `unfollowed`).
        self.unfollowed: dict[int, Exception] = {}

    to_host = staticmethod(to_host)

    def view_chain(self, view: _View):
        """(the array object `view` is a view of, the view equations from its buffer), or None."""
        return _base_and_chain(self.ctx, view)

    # -- tracers and inputs --------------------------------------------------------------------

    def track(self, tracer) -> None:
        """Keep `tracer` (a Tracer, a view, a MaskedSelection) in sight while it lives."""
        if self.eager is not None:
            raise RuntimeError("numfuse internal error: a value traced after the call went on in NumPy "
                               "(numfuse/frontend/eager.py)")
        self._tracked[next(self._ids)] = tracer

    def input(self, value, spec: ArgSpec, name: str) -> Var:
        """A new input of the segment holding `value`."""
        if spec.kind == "array" and id(value) in self._by_id:
            return self._by_id[id(value)]
        var = self.ctx.add_input(spec)
        self.values[var] = value
        self.specs[var] = spec
        self.names[var] = name
        if spec.kind == "array":
            self._by_id[id(value)] = var
        return var

    def argument(self, value, spec: ArgSpec, name: str) -> Tracer:
        """A traced argument of the call (its first segment's input)."""
        tracer = self.ctx.new_input(spec)
        var = tracer._var
        self.values[var] = value
        self.specs[var] = spec
        self.names[var] = name
        if spec.kind == "array":
            self._by_id[id(value)] = var
            self.caller_arrays.add(id(value))
        return tracer

    def foreign_array(self, array) -> Tracer:
        """A NumPy array (or list) the function made itself: an input of this segment, copied
        now, as NumPy would read it now."""
        snapshot = np.array(array, copy=True)
        name = f"an array made at {user_location().short() if user_location() else '?'}"
        spec = classify(name, snapshot, False, self.describe_array)[1]
        return Tracer(self.ctx, self.input(snapshot, spec, name))

    def python_number(self, value: int | float) -> Tracer:
        """A Python number the function computed, used beside an array: a weak scalar input of
        this segment (numpy_api._python_numbers_as_inputs), so that its value is no part of
        the segment's structure."""
        # One input for one number in a segment: `x[x > 0] = x[x > 0] ** 2` reads one mask.
        key = (type(value), value.hex() if type(value) is float else value)
        var = self._numbers.get(key)
        if var is None:
            loc = user_location()
            name = f"a Python number at {loc.short() if loc else '?'}"
            dtype = np.dtype(np.float64 if type(value) is float else np.int64)
            var = self._numbers[key] = self.input(value, ArgSpec("python", Aval((), dtype)), name)
        return self.ctx.wrap(var, weak=True)

    # -- breaks --------------------------------------------------------------------------------

    def value_of(self, tracer: Tracer, what: str, expose: bool = False) -> np.ndarray:
        """`tracer`'s value on the host, for `what`, running what was traced so far if need be.
        `expose`: np.asarray's result, a read-only view of the array's own buffer that later
        traced writes into it keep current (see `written`)."""
        own_buffer = expose and not isinstance(tracer, _View) and not (tracer._weak or tracer._numpy_scalar)
        if own_buffer:
            self._own_buffer([tracer])
        var = tracer._var
        if var in self.values and self.ctx.latest.get(var, var) is var:
            value = self.values[var]  # an input, not written since: no segment to run
        else:
            value = self.run([tracer], what)[id(tracer)]
        if own_buffer and isinstance(value, np.ndarray):
            self._expose(tracer, value)
            view = value.view()
            view.flags.writeable = False  # Python's writes would not reach the pending segment
            self.read_only_given.append(what)
            self.buffer_views.append(view)
            return view
        host = to_host(value)
        if expose:
            host = np.array(host, copy=True)  # a view's, or a device array's: a snapshot
            host.flags.writeable = False
            self.read_only_given.append(what)
        else:
            self._go_on_in_numpy()
        return host

    def _own_buffer(self, tracers: list[Tracer]) -> None:
        """Give each of `tracers` a buffer no other array object shares (a copy where one
        does), so that what is done to its real array is done to it alone."""
        ctx = self.ctx
        roots = self._roots()
        for t in tracers:
            if isinstance(t, _View) or t._weak or t._numpy_scalar:
                continue
            shared = any(r is not t and r._var is t._var for r in roots) or t._var in self.values
            if shared and not ctx.owns(t, t._var):
                var = ctx.copy_var(t._var)
                ctx.owner[var] = t
                t._var = var

    def _expose(self, tracer: Tracer, value: np.ndarray) -> None:
        """Python holds `value`, `tracer`'s buffer, as a NumPy array: from now on every traced
        write into it runs at once, and an in-place operator writes into it (as NumPy's)."""
        self.exposed.add(id(value))
        self._exposed_arrays.append(value)  # its id stays its own
        tracer._argument = True
        self.ctx.owner[tracer._var] = tracer  # its writes go into that buffer

    def written(self, tracer: Tracer) -> None:
        """After a traced write into `tracer`'s buffer: run it now if Python holds that
        buffer as a NumPy array."""
        ctx = self.ctx
        root = ctx.family.get(tracer._var, tracer._var)
        if root in self.values and id(self.values[root]) in self.exposed:
            self.run([], "a write into an array that Python holds as a NumPy array (np.asarray) runs at once")

    def foreign_call(self, func, args, kwargs, may_write: bool = True, what: str | None = None):
        """An untraced NumPy function, called on the real arrays at a break (`may_write`:
        it may write into them, as np.fill_diagonal does; `what`: why, for explain)."""
        from .numpy_api import function_name

        passed: list[Tracer] = leaves_of((args, kwargs), Tracer, [])
        # A view is given as the same view of its base's buffer (np.fill_diagonal(S[j], v)
        # writes S), where its chain of views from that base is known.
        bases = {id(t): _base_and_chain(self.ctx, t) for t in passed if isinstance(t, _View)} if may_write else {}
        if _reads_memory_layout(func, args, kwargs):
            for t in passed:
                if not self.given_in_numpys_layout(t, bases.get(id(t)) is not None):
                    name = func.__name__ if func.__name__.startswith("ndarray.") else function_name(func)
                    raise layout_refusal(
                        f"{name} of an array not C-contiguous in NumPy (or of a layout numfuse does not know)",
                        "it reads the array's memory, which numfuse lays out in C order")
        if may_write:
            # What it writes into is the array object it was given, alone.
            self._own_buffer(passed + [b[0] for b in bases.values() if b is not None])
        needed = passed + [b[0] for b in bases.values() if b is not None]
        concrete = self.run(needed, f"{what or function_name(func) + ' is not traced'}: it ran on the real arrays here")
        real = {}
        for t in passed:
            value = concrete[id(t)]
            base = bases.get(id(t))
            if base is not None and isinstance(concrete[id(base[0])], np.ndarray):
                value = viewmaps.view_through(np, concrete[id(base[0])], base[1])
            elif isinstance(t, _View) and isinstance(value, np.ndarray):
                value = value.copy()
                value.flags.writeable = False  # a view's snapshot: writes would not reach its base
            if t._weak or t._numpy_scalar:
                value = to_host(value)[()]
                value = value.item() if t._weak else value
            real[id(t)] = value
        with suspended():
            result = func(*_replace_tracers(args, real), **_replace_tracers(kwargs, real))
        # A result that is (a view of) an array it was given: Python now holds that buffer.
        returned = leaves_of(result, np.ndarray, [])
        for t in passed:
            buffer = real[id(t)]
            if isinstance(t, _View) or not isinstance(buffer, np.ndarray):
                continue
            for array in returned:
                if np.may_share_memory(array, buffer):
                    if array.flags.writeable:
                        # (until the run ends: the array may be the caller's own, np.clip's out=x)
                        array.flags.writeable = False
                        self.locked.append(array)
                        self.read_only_given.append(what or f"{function_name(func)} is not traced")
                    self._expose(t, buffer)
        return result

    def given_in_numpys_layout(self, t: Tracer, as_view: bool = False) -> bool:
        """Whether the real array Python gets for `t` is laid out as NumPy's would be: a
        scalar, a C-contiguous array, the caller's own array (an argument not written since),
        or (`as_view`) the real view of its base's buffer. A view's snapshot and what numfuse
        computed are in C order, whatever NumPy's layout."""
        if t._weak or t._numpy_scalar or t.ndim < 2 or self.ctx.c_contiguous(t._var):
            return True
        if isinstance(t, _View):
            return as_view
        return t._var in self.values and t._var not in self.numfuse_layout

    def _roots(self) -> list[Tracer]:
        # Views are rebuilt from their bases: only arrays that own their value are kept.
        return [t for t in list(self._tracked.values()) if isinstance(t, Tracer) and not isinstance(t, _View)]

    def run(self, needed: list[Tracer], reason: str, final: bool = False) -> dict[int, Any]:
        """Run the segment traced so far; every live array keeps its value as an input of the
        next segment. Returns the value of each of `needed` (by id)."""
        if self.eager is not None:  # (the call goes on in NumPy: nothing is traced)
            return {id(t): eager.real(t, self.eager) for t in needed}
        self.running = True  # (stays so where the segment raises)
        ctx = self.ctx
        self.traced += len(ctx.eqns)
        roots = self._roots()
        holders = roots + [t for t in needed if isinstance(t, _View)]
        outputs: dict[Var, int] = {}  # the segment's outputs, by position
        source: dict[Var, tuple[str, Any]] = {}  # each held var: ("input", var) or ("output", k)
        unchanged: set[Var] = set()  # held vars whose value no write changed in this segment

        def output(var: Var) -> tuple[str, Any]:
            return ("output", outputs.setdefault(var, len(outputs)))

        for t in holders:
            var = t._var
            if var in source:
                continue
            root = ctx.family.get(var, var)
            latest = ctx.latest.get(root, root)
            if var in self.values and latest is var:
                source[var] = ("input", var)
                unchanged.add(var)
            elif latest is not var:
                # An earlier version of an array written since: its own copy, made before.
                source[var] = output(ctx.copy_var(var))
            elif root in self.values:
                source[var] = ("input", root)  # the last version of an input, written back
            else:
                source[var] = output(var)
                unchanged.add(var)  # computed, never written: the same value after the break
        inputs = list(ctx.inputs)
        writebacks = {i: ctx.latest[v] for i, v in enumerate(inputs) if ctx.latest.get(v, v) is not v}
        values = [self.values[v] for v in inputs]
        for i in writebacks:
            if id(values[i]) in self.unfollowed:
                raise self.unfollowed[id(values[i])]  # (before anything of this segment is written)
        entry = None
        results: list[Any] = []
        if outputs or writebacks:
            graph = ctx.graph(list(outputs), self.name, writebacks, rederive=False)  # (run_graph's)
            specs = [self.specs[v] for v in inputs]
            _unlock(self.locked)  # (read-only to Python's writes, not to the segment's)
            try:
                with suspended():
                    results, entry = self.run_graph(graph, specs, values, [self.names[v] for v in inputs])
            finally:
                for array in self.locked:
                    array.flags.writeable = False
            # (a segment's host time, counted as traced operations' against the budget)
            self.traced += SEGMENT_RUN_COST if id(entry) in self._entries else SEGMENT_PLAN_COST
            self._entries.add(id(entry))
        loc = user_location()
        if not final:
            self.breaks.append(Break(loc, reason, entry))
        else:
            self.final = entry

        def value_of_source(src):
            kind, what = src
            return self.values[what] if kind == "input" else results[what]

        concrete = {id(t): value_of_source(source[t._var]) for t in needed}
        if not final:
            held = [(t, t._var, ctx.owns(t, t._var)) for t in roots]
            kept = {}
            for t, var, _ in held:
                kind, what = source[var]
                name = self.names[what] if kind == "input" else "a value computed before a graph break"
                kept[var] = (value_of_source(source[var]), name, kind == "output" or what in self.numfuse_layout)
            self._next_segment(held, kept, unchanged)
        self.running = False
        return concrete

    def _go_on_in_numpy(self) -> None:
        """Past the budget, at a break where Python's own code converts a traced value (`if`,
        `while`, float(): no operation of numfuse is under way), the rest of the call runs on
        NumPy (eager.py), where every live traced value's real value is known. At a break
        inside an operation of numfuse (x[a:b] with bounds from data), when that operation
        returns to the function (a profile hook, where no profiler is set)."""
        if self.budget is None or self.traced <= self.budget or self.eager is not None:
            return
        if eager.at_user_level(sys._getframe(2)):  # (value_of's caller)
            self._switch()
        elif not self._waiting and sys.getprofile() is None:
            self._waiting = True
            sys.setprofile(self._on_return)

    def _on_return(self, frame, event, arg) -> None:
        """The profile hook of `_go_on_in_numpy`: at the return of numfuse's operation to the
        function (arg, its result, is live: it switches too), run what was traced since the
        last break, then switch."""
        # (arg None: perhaps an exception on its way, not to be hidden by a segment's own)
        if event != "return" or arg is None or not eager.numfuse_frame(frame) or eager.numfuse_frame(frame.f_back) \
                or not eager.at_user_level(frame.f_back):
            return
        self.stop_waiting()
        self.run([], "the call went on in NumPy here, past the trace budget")
        self._switch()

    def stop_waiting(self) -> None:
        if self._waiting:
            sys.setprofile(None)
            self._waiting = False

    def _switch(self) -> None:
        found = eager.real_values(self)
        if found is None:
            return
        eager.switch(self, found)
        stop_tracing(self.ctx)  # np.zeros and friends are NumPy's again
        # (no pending segment for Python's writes to miss: NumPy's would have been writeable)
        _unlock(self.locked + [v for v in self.buffer_views if v.base is not None and v.base.flags.writeable])
        self.locked, self.buffer_views = [], []
        count = f"{len(self.breaks)} graph break{'s' if len(self.breaks) != 1 else ''}"
        self.on_numpy = (f"the run segment by segment passed the trace budget in one call ({self.budget:,} "
                         f"operations, a segment counting as {SEGMENT_RUN_COST} and one new to the call as "
                         f"{SEGMENT_PLAN_COST}; {count}, the last at {self.breaks[-1]}): the rest of that call "
                         "ran on NumPy")

    def _next_segment(self, held, kept, unchanged) -> None:
        """Start the next segment: each live array's value (`kept`: value and name by its
        var) is one of its inputs."""
        ctx = self.ctx
        carried = ctx.carried
        ctx.start_segment()
        self.values, self.specs, self.names, self._by_id, self._numbers = {}, {}, {}, {}, {}
        numfuse_layout: set[Var] = set()
        new_var: dict[Var, Var] = {}
        for t, var, owned in held:
            if var not in new_var:
                value, name, computed = kept[var]
                if t._weak or t._numpy_scalar:
                    value = to_host(value)[()]
                    value = value.item() if t._weak else value
                    spec = ArgSpec("python" if t._weak else "scalar", t._aval)
                else:
                    spec = classify(name, value, False, self.describe_array)[1]
                new_var[var] = self.input(value, spec, name)
                if computed:
                    numfuse_layout.add(new_var[var])
            t._var = new_var[var]
            if owned:
                ctx.owner[t._var] = t
        ctx.carried = {**carried, **{old: new for old, new in new_var.items() if old in unchanged}}
        self.numfuse_layout = numfuse_layout


def _unlock(arrays) -> None:
    """Make the arrays numfuse made read-only writeable again, where NumPy lets it: a view
    NumPy built over an array interface (as_strided's, sliding_window_view's) stays read-only
    (its writes would raise, with _READ_ONLY_NOTE, rather than be lost)."""
    for array in arrays:
        try:
            array.flags.writeable = True
        except ValueError:
            pass


_READ_ONLY_NOTE = (
    "  (numfuse: the array written may be one numfuse gave Python read-only at a graph break ({}): "
    "numfuse does not follow writes into arrays Python holds there, such as a view NumPy made of "
    "one (np.lib.stride_tricks.as_strided, x.view(another dtype)). Write through the traced array "
    "itself (x[...] = ..., x.view() of the same dtype), or call the function without numfuse.jit)"
)


def run_segmented(fn: Callable, specs: list, values: list, names: list[str], run_graph: Callable,
                  name: str, describe_array: Callable, fuses_product: Callable | None = None,
                  effects: Effects | None = None, budget: int | None = None,
                  hidden: list | None = None, unfollowed: dict | None = None) -> SegmentedRun:
    """Call `fn` on tracers of `values` (a spec per argument, as for tracer.trace), running it
    segment by segment. `fuses_product`: the target's rule for matrix products (tracer.trace).
    `effects`: what else the function may change (effects.py), given its values at the end,
    or where the function raises (what it did before stays done, as in NumPy). `budget`: the
    most operations to trace in the call, after which it goes on in NumPy (eager.py).
    `hidden`: (name, spec, value) of the bases of arguments that share memory, which specs
    ("alias", position, recipe) name by their position after the arguments (tracer.trace).
    `unfollowed`: argument position -> the refusal of writing into it (it shares memory with
    another argument otherwise than as a view of one base), raised before such a write runs."""
    ctx = TraceContext()
    ctx.fuses_product = fuses_product
    breaker = Breaker(ctx, run_graph, name, describe_array, budget)
    breaker.unfollowed = {id(values[i]): refusal for i, refusal in (unfollowed or {}).items()}
    ctx.breaks = breaker
    args = []
    passed: dict[int, Tracer] = {}  # an array passed twice is one array object, as in NumPy
    for spec, value, arg_name in zip(specs, values, names):
        if isinstance(spec, ArgSpec) and spec.kind == "array" and id(value) in passed:
            args.append(passed[id(value)])
        elif isinstance(spec, ArgSpec):
            args.append(breaker.argument(value, spec, arg_name))
            passed[id(value)] = args[-1]
        elif spec[0] == "alias":
            args.append(None)  # (below: a view of its base)
        elif isinstance(spec[1], np.random.Generator):
            args.append(SuspendingGenerator(spec[1]))  # its draws make real arrays
        else:
            args.append(spec[1])
    bases = [breaker.argument(value, spec, name) for name, spec, value in hidden or []]
    aliased: dict[int, Any] = {}  # id of an argument traced as a view of its base -> the caller's
    for i, spec in enumerate(specs):
        if not isinstance(spec, ArgSpec) and spec[0] == "alias":
            source = (args + bases)[spec[1]]
            args[i] = source if spec[2] is None else spec[2].apply(source)
            aliased[id(args[i])] = values[i]
    given: dict[int, Any] = {}  # id of a traced value given to the caller -> the value
    owned: set[int] = set()  # ids of the arrays given, each once

    def give(leaf: Tracer, value):
        if id(leaf) in given:
            return given[id(leaf)]
        if id(leaf) in aliased:
            value = aliased[id(leaf)]  # the argument itself, returned: the caller's array object
        elif eager.is_eager(leaf):
            pass  # its real value, shared as NumPy's would be (an argument's is the caller's array)
        elif leaf._weak or leaf._numpy_scalar:
            if not isinstance(value, (np.generic, int, float, complex, bool)):
                value = to_host(value)[()]
            if leaf._weak and isinstance(value, np.generic):
                value = value.item()
        else:
            view = argument_view(ctx, leaf, args) if isinstance(leaf, _View) else None
            if view is not None:
                # A view of an argument (x[1:] after a break): the same view of the caller's
                # array, as NumPy returns it.
                value = view_or_copy(values[view[0]], view[1], value)
            # An array object gets its own buffer; the caller's array only as the argument itself.
            elif (id(value) in breaker.caller_arrays and not leaf._argument) or id(value) in owned:
                value = value.copy()
            if leaf._readonly is True and isinstance(value, np.ndarray):
                value.flags.writeable = False  # (np.diagonal's view, as NumPy's)
            owned.add(id(value))
        given[id(leaf)] = value
        return value

    def finish(needed: list[Tracer], reason: str) -> dict[int, Any]:
        pending = effects.tracers(ctx) if effects is not None else []
        concrete = breaker.run(needed + pending, reason, final=True)
        if effects is not None:
            # (a traced value of another trace, left where no watch saw it: kept as it is)
            effects.settle(lambda t: give(t, concrete[id(t)]) if id(t) in concrete else t)
        return concrete

    try:
        with creating_arrays(ctx):
            try:
                result = fn(*args)
                if effects is not None and effects.copies is not None:
                    result = effects.copies.returned(result, marked=True)  # (the caller's own: jit's)
            except Exception as err:
                if isinstance(err, ValueError) and "read-only" in str(err) and breaker.read_only_given:
                    err.add_note(_READ_ONLY_NOTE.format(breaker.read_only_given[-1].splitlines()[0]))
                if not breaker.running:  # (not a segment's own error: that segment did not run whole)
                    try:
                        finish([], "the function raised")
                    except Exception:
                        pass  # the caller sees the function's own exception
                raise
        leaves: list[Tracer] = []
        tree = flatten_outputs(result, leaves)
        for leaf in leaves:
            if leaf._ctx is not ctx:
                raise ValueError("the function returned a traced array from another trace")
        # (traced values inside other objects returned, `return Model().fit(X)`: the object is
        # new at each run, and gets their real values in place)
        inside = [t for kept in kept_values(tree) for t in opaque.traced_values(kept)]
        concrete = finish(leaves + inside, "the function returned")
    finally:
        breaker.stop_waiting()
        _unlock(breaker.locked)
    returned = [give(leaf, concrete[id(leaf)]) for leaf in leaves]
    for kept in kept_values(tree):
        stuck = opaque.replace(kept, lambda t: give(t, concrete[id(t)]) if id(t) in concrete
                               else eager.real(t, breaker.eager or {}))
        if stuck is not None and breaker.eager is None:  # (after the switch, eager.real's below)
            raise UnsupportedError(
                f"the function returns {stuck}, a traced array that numfuse cannot replace by its value there "
                "(in a tuple, or a generator's local); return the arrays themselves, or build the object outside")
    result = _generators_unwrapped(unflatten_outputs(tree, returned))
    if breaker.eager is not None:
        result = eager.real(result, breaker.eager)  # (dict keys and set members too)
    return SegmentedRun(result, breaker.breaks, breaker.final, breaker.on_numpy)


def _generators_unwrapped(value):
    """`value` with each SuspendingGenerator in it (in tuples, lists and dicts) the Generator it
    stands for: a function that returns its `rng` argument, or one it made, returns that object,
    as NumPy does."""
    if isinstance(value, SuspendingGenerator):
        return value.generator
    if isinstance(value, (tuple, list, dict)) and _holds_generator(value):
        return rebuilt_container(value, _generators_unwrapped)
    return value


def _holds_generator(value) -> bool:
    if isinstance(value, SuspendingGenerator):
        return True
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (tuple, list)) else ()
    return any(_holds_generator(v) for v in items)


__all__ = ["Break", "Breaker", "SegmentedRun", "run_segmented", "structure_key", "to_host"]
