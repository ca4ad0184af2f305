"""Tracing: run the user's NumPy function on proxy arrays and record what it does as a Graph.

`trace` calls the function with a Tracer (proxy.py) per traced argument; the TraceContext here
records the equations that NumPy calls on tracers bind (numpy_api.py and the rules it calls),
merges repeated ones, and builds views; the strides of values and the versions of updated
buffers are kept by its base class, Layouts (layouts.py). The function's return value is
flattened into the graph's outputs (`flatten_outputs`, `unflatten_outputs`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from . import aliasing, fp_modes, numpy_api, numpy_views, opaque
from ..ir import viewmaps
from ..ir.dtypes import check_supported
from ..errors import (
    NeedsGraphBreak, RunUntraced, TraceTooLong, TracingError, at_user_line, tracing_error_in, unsupported, user_location,
)
from ..ir.graph import Atom, Aval, Eqn, Graph, Literal, SizeConst, SizeValue, Var, check_graph
from .numpy_creation import creating_arrays
from .numpy_masked import MaskedSelection, returned_error
from ..ir.primitives import VIEWS, abstract_eval
from .layouts import Layouts
from .numpy_api import Operand
from .proxy import _UNSURE_HINT, Tracer, _concrete_value_error, _Flat, _view, _View
from .traced import root_array
from .proxy import UnsupportedAttributeError  # noqa: F401  (re-exported: numfuse.tracer names it too)


@dataclass(frozen=True)
class ArgSpec:
    """What a traced argument is: an array, a NumPy scalar (strong), or a Python scalar (weak)."""

    kind: str  # "array" | "scalar" | "python"
    aval: Aval
    readonly: bool = False  # an array NumPy will not write into (a broadcast view, say)
    layout: str = "C"  # "C", "F" (Fortran-contiguous), or "A" (neither)
    strides: tuple[int, ...] | None = None  # element strides of an "A" array, where known
    on_host: bool = True  # a NumPy array (False: a device array of some library)
    # A NumPy array's own strides in bytes where an axis of length 0 or 1 leaves them to what
    # made it (`x[None]` has 0 there): x.strides answers them (array_flags.py).
    byte_strides: tuple[int, ...] | None = None

    @property
    def weak(self) -> bool:
        return self.kind == "python"

    @property
    def strided(self) -> bool:
        """Not C-contiguous: kernels read it through its strides."""
        return self.layout != "C"


def external_spec(name: str, array: np.ndarray) -> ArgSpec:
    """The spec of a NumPy array read from the function's globals or closure: as an argument's
    (arguments.classify), but that its layout and strides are known to the trace only."""
    dtype = check_supported(array.dtype, f"the array {name}")
    layout = "C" if array.flags.c_contiguous else "F" if array.flags.f_contiguous else "A"
    strides = None
    if layout == "A" and all(s % dtype.itemsize == 0 for s in array.strides):
        strides = tuple(s // dtype.itemsize for s in array.strides)
    return ArgSpec("array", Aval(array.shape, dtype), not array.flags.writeable, layout, strides)


# Primitives whose result NumPy lays out in C order whatever its operands' layout (an update
# keeps its buffer's strides, set by its caller; matrix products allocate C-ordered results).
C_ORDER_RESULTS = frozenset({"update", "matmul", "dot"})


class TraceContext(Layouts):
    """The equations recorded while one function is traced."""

    def __init__(self) -> None:
        self.inputs: list[Var] = []
        self.eqns: list[Eqn] = []
        self.consts: dict[Var, np.ndarray] = {}
        self._const_by_id: dict[int, tuple[np.ndarray, Var]] = {}
        self._cse: dict[tuple, Var] = {}
        self.notes: list[str] = []  # see Graph.notes
        self.signature_warnings: list = []  # numpy_warnings.SignatureWarning, given at every call
        self.scalar_positions: set[int] = set()  # inputs that are Python scalar arguments
        self.by_value: set[Var] = set()  # inputs passed by value (scalars), not buffers
        # A graph_breaks.Breaker when the function runs segment by segment: Python then gets
        # real values where it needs them. None when tracing once: what needs a value stops
        # the trace, and `break_needed` says why (even if the function caught the exception).
        self.breaks = None
        self.break_needed: str | None = None
        # The most equations this trace may record (None: any number): past them bind raises
        # TraceTooLong, and the plain function runs instead (numpy_fallback.py).
        self.budget: int | None = None
        # The target's rule for matrix products: (dtype, sizes, space, terms, computed) ->
        # (fused, why); None: ir.library_ops.fused_by_size.
        self.fuses_product: Callable | None = None
        self.untraced: str | None = None  # why the function must run as written (RunUntraced)
        # Across graph breaks: a value's var in an earlier segment -> its var in the next, where
        # the value is unchanged (a break is no write: views that must not follow writes of
        # their base may still read it).
        self.carried: dict[Var, Var] = {}
        self.external_candidates: dict[int, tuple[str, Any]] = {}  # see trace()
        self.external_inputs: list[tuple[str, Any]] = []
        self.external_tracers: dict[int, Tracer] = {}  # by the array's id
        self.external_initial: dict[int, Var] = {}  # its input, the version before any write
        # An external array that is an argument, or a view of one (`f(W)` reading the global W):
        # id -> (the argument's tracer, Recipe or None); read through the argument (aliasing.py).
        self.external_arguments: dict[int, tuple] = {}
        # What isinstance(a traced array, ...) answers as (Tracer.__class__): NumPy's ndarray
        # while every array argument is one; None once a device array, whose library the
        # trace does not know (one trace serves them all), is an argument.
        self.array_class: type | None = np.ndarray
        self.argument_byte_strides: dict[Var, tuple[int, ...]] = {}  # see ArgSpec.byte_strides
        super().__init__()  # strides, family, latest, owner: see layouts.py

    # -- values --------------------------------------------------------------------------------

    def add_input(self, spec: ArgSpec) -> Var:
        """A new input of the graph, laid out as `spec` says."""
        var = Var(spec.aval)
        self.inputs.append(var)
        if spec.kind == "array" and not spec.on_host:
            self.array_class = None
        if spec.byte_strides is not None:
            self.argument_byte_strides[var] = spec.byte_strides
        if spec.kind != "array":
            self.by_value.add(var)
        elif spec.layout == "F":
            self.strides[var] = numpy_views.f_strides(spec.aval.shape)
        elif spec.layout != "C":
            self.strides[var] = spec.strides
        return var

    def wrote_inputs(self) -> bool:
        """Whether the trace so far wrote into an input (an argument, a global array)."""
        return any(self.latest.get(v, v) is not v for v in self.inputs)

    def start_segment(self) -> None:
        """Forget the equations traced so far (a graph break ran them): what follows is a new
        graph, whose inputs the Breaker adds."""
        self.inputs, self.eqns, self._cse, self._const_by_id = [], [], {}, {}
        self.consts, self.notes = {}, []
        self.by_value, self.scalar_positions = set(), set()
        Layouts.__init__(self)

    def carried_to(self, var: Var) -> Var:
        """`var`'s value in the current segment, where no write changed it since (see carried)."""
        while var in self.carried:
            var = self.carried[var]
        return var

    def new_input(self, spec: ArgSpec) -> "Tracer":
        var = self.add_input(spec)
        mutable = spec.kind == "array"
        tracer = Tracer(self, var, weak=spec.weak, numpy_scalar=not mutable, argument=mutable)
        tracer._readonly = spec.readonly
        if mutable:
            self.owner[var] = tracer
        if not mutable and self.breaks is None:
            tracer._input_position = len(self.inputs) - 1
        if spec.kind == "python":
            tracer._passed_as = {"b": bool, "i": int, "f": float, "c": complex}[spec.aval.dtype.kind]
        elif spec.kind == "scalar":
            tracer._passed_as = spec.aval.dtype.type
        if spec.kind == "python":
            self.scalar_positions.add(len(self.inputs) - 1)
        return tracer

    # -- values Python needs -------------------------------------------------------------------

    def concrete(self, tracer: "Tracer", what: str, expose: bool = False) -> np.ndarray:
        """The value of `tracer` as a NumPy array, for Python code that needs it (`what`). When
        the function runs segment by segment it comes from running what was traced so far (a
        graph break). When tracing once: a value computed from Python scalar arguments only
        makes them static (jit traces again); any other stops the trace (NeedsGraphBreak)."""
        if self.breaks is not None:
            return self.breaks.value_of(tracer, what, expose)
        error = _concrete_value_error(what, tracer)
        positions = self.scalar_inputs_behind(tracer._var)
        if positions:
            error.input_positions = positions
            error.input_position = positions[0]
            raise error
        reason = at_user_line(what)
        self.break_needed = self.break_needed or reason
        raise NeedsGraphBreak(reason, error)

    def scalar_inputs_behind(self, var: Var) -> list[int]:
        """The positions of the Python scalar arguments that `var` is computed from, when it is
        computed from nothing else (no array, no other input); else []."""
        producers = {eqn.out: eqn for eqn in self.eqns}
        position = {v: i for i, v in enumerate(self.inputs)}
        found, stack, seen = set(), [var], set()
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            if v in position:
                if position[v] not in self.scalar_positions:
                    return []
                found.add(position[v])
            elif v in self.consts:
                return []
            else:
                stack.extend(a for a in producers[v].inputs if isinstance(a, Var))
        return sorted(found)

    def is_scalar_input(self, var: Var) -> bool:
        """Whether `var` is an input passed by value (a scalar argument), not a buffer."""
        return var in self.by_value

    def operand(self, x) -> Operand:
        """Classify a NumPy call's argument (see numpy_api.Operand)."""
        if isinstance(x, Tracer):
            if x._ctx is not self:
                raise TracingError(
                    at_user_line("a traced array from another numfuse.jit trace leaked into this one")
                )
            return Operand(x, None, x.dtype, x._weak)
        if isinstance(x, SizeValue):
            dtype = check_supported(np.asarray(x.value).dtype, "a count")
            return Operand(None, x.value, dtype, False, x.key)
        # NumPy scalars first: np.float64 is a subclass of float, yet strongly typed.
        if isinstance(x, np.generic):
            dtype = check_supported(x.dtype, f"the NumPy scalar {x!r}")
            return Operand(None, x, dtype, False)
        if isinstance(x, bool):
            return Operand(None, np.bool_(x), np.dtype(bool), True)
        if isinstance(x, int):
            return Operand(None, x, np.dtype(np.int64), True)
        if isinstance(x, float):
            return Operand(None, x, np.dtype(np.float64), True)
        if isinstance(x, complex):
            return Operand(None, x, np.dtype(np.complex128), True)
        if isinstance(x, MaskedSelection):
            x = x.compacted("x[mask] beside an array")
        if isinstance(x, _Flat):  # x.flat as an operand: the 1-D array of its points, as NumPy reads it
            return self.operand(x._array.ravel())
        if isinstance(x, (np.ndarray, list, tuple)):
            array = np.asarray(x)
            dtype = check_supported(array.dtype, "a constant array captured by the function")
            if array.ndim == 0:
                return Operand(None, array[()], dtype, False)
            return Operand(self._const(array), None, dtype, False)
        raise unsupported(f"an operand of type {type(x).__name__}")

    def _const(self, array: np.ndarray) -> "Tracer":
        if self.breaks is not None:
            return self.breaks.foreign_array(array)  # an input of the segment, not a constant
        if id(array) in self.external_tracers:
            return self.external_tracers[id(array)]
        found = self._const_by_id.get(id(array))
        if found is None and self.external_candidates.get(id(array), (None, None))[1] is array:
            return self.external_array(array)
        if found is None and array.base is not None and self.external_candidates:
            view = self._external_view(array)
            if view is not None:  # W.T of a global W, made by NumPy before the trace saw it
                self._const_by_id[id(array)] = (array, view._var)
                return view
        if found is None:
            var = Var(Aval(array.shape, array.dtype))
            # Copied: the graph keeps the value it was traced with, as JAX does.
            self.consts[var] = np.ascontiguousarray(array).copy()
            # The original is kept too, so that its id is not reused by another array.
            found = self._const_by_id[id(array)] = (array, var)
        return Tracer(self, found[1])

    def external_array(self, array: np.ndarray) -> "Tracer":
        """The tracer of an array of the function's globals or closure (or an array attribute
        of a static argument): NumPy reads its contents at the call, so it is an input, passed
        at each call (TraceResult.external), not a constant; writes into it go back into it."""
        tracer = self.external_tracers.get(id(array))
        if tracer is None and id(array) in self.external_arguments:
            argument, recipe = self.external_arguments[id(array)]
            return argument if recipe is None else recipe.apply(argument)
        if tracer is None:
            name = self.external_candidates.get(id(array), (f"global array #{len(self.external_inputs)}",))[0]
            tracer = self.new_input(external_spec(name, array))
            self.external_initial[id(array)] = tracer._var
            self.external_inputs.append((name, array))
            self.external_tracers[id(array)] = tracer
            self._const_by_id[id(array)] = (array, tracer._var)
        return tracer

    def _external_view(self, array: np.ndarray) -> "Tracer | None":
        """`array` as a view of a global or closure array it is a view of (W.T, W[1:]), traced
        from that array's input, or None."""
        root = aliasing.base_of(array)
        for _, candidate in self.external_candidates.values():
            if aliasing.base_of(candidate) is root and candidate is not array:
                recipe = aliasing.recipe_for(array, candidate)
                if recipe is not None:
                    return recipe.apply(self._const(candidate))
        return None

    def as_tracer(self, operand: Operand) -> "Tracer":
        if operand.tracer is not None:
            return operand.tracer
        value = operand.value
        if type(value) is int and not -2**63 <= value < 2**63:
            # NumPy's array of a Python int past int64: uint64 up to 2**64 - 1 (a hash constant
            # searched for in a uint64 array), else of dtype object, which numfuse refuses
            array = np.asarray(value)
            check_supported(array.dtype, f"the Python int {value}")
            return self.broadcast(array[()], ())
        return self.broadcast(operand.dtype.type(value), ())

    def atom(self, tracer: "Tracer") -> Var:
        return tracer._var

    def numpy_scalar(self, tracer: "Tracer") -> "Tracer":
        """The same value, as NumPy returns it from a reduction: a scalar when 0-d."""
        return Tracer(self, tracer._var, weak=tracer._weak, numpy_scalar=not tracer.shape)

    # -- equations -----------------------------------------------------------------------------

    def bind(self, prim, atoms, shape, dtype, params=(), weak=False, numpy_scalar=False) -> "Tracer":
        """Record `prim[params] atoms` (or find it already recorded) and return its value."""
        aval = Aval(tuple(int(s) for s in shape), np.dtype(dtype))
        # The dtype's char too: np.longlong equals np.int64 as a dtype, yet NumPy's scalars of
        # the two are different types (a comparison's loop casts to 'q', a sum gives 'l').
        key = (prim, tuple(_atom_key(a) for a in atoms), params, aval, aval.dtype.char)
        var = self._cse.get(key)
        if self.breaks is None and self.array_class is np.ndarray and fp_modes.stopping_categories():
            # np.errstate(divide="raise") (or warnings made errors) in the function, around
            # NumPy code on NumPy arrays: the function runs as written (fp_modes.py).
            loc = user_location()
            self.untraced = fp_modes.reason(fp_modes.stopping_categories(), loc.short() if loc else "")
            raise RunUntraced(self.untraced)
        if var is None:
            if self.budget is not None and len(self.eqns) >= self.budget:
                raise TraceTooLong(_too_long(self.budget))
            var = Var(aval)
            self.eqns.append(Eqn(prim, tuple(atoms), var, tuple(params), user_location()))
            self._cse[key] = var
            # Views and updates: their caller sets the strides (of the operand, or of its buffer).
            if prim not in VIEWS and prim not in C_ORDER_RESULTS and aval.ndim > 1 \
                    and not all(self.in_c_order(a) for a in atoms):
                # NumPy lays what it computes out like its operands (order "K"): not in C order
                # here, in an order numfuse does not trace.
                self.strides[var] = None
        # A fresh Tracer even for a repeated equation: in-place updates change one Python object.
        return Tracer(self, var, weak=weak, numpy_scalar=numpy_scalar and not shape)

    def coerce(self, operand: Operand, dtype: np.dtype, shape) -> Atom:
        """The operand as an equation input of `dtype`: a Literal, or a Var broadcast to `shape`."""
        if operand.tracer is None:
            value = np.array(operand.value)
            if value.dtype.kind == "c" and np.dtype(dtype).kind not in "cb":
                value = value.real  # the cast's value, without a second ComplexWarning
            value = value.astype(dtype, casting="unsafe")[()]
            if operand.size_key is not None:
                return SizeConst(value, operand.size_key)  # a kernel argument, see ir.SizeConst
            return Literal(value)
        value = self.convert(operand.tracer, dtype)
        if value.shape != tuple(shape):
            value = self.broadcast(value, shape)
        return value._var

    def convert(self, tracer: "Tracer", dtype) -> "Tracer":
        dtype = np.dtype(dtype)
        if tracer.dtype == dtype:
            return tracer
        check_supported(dtype, "astype")
        return self.bind("convert", [tracer._var], tracer.shape, dtype, params=(("dtype", dtype),))

    def broadcast(self, value, shape) -> "Tracer":
        """NumPy broadcasting of a traced value or a NumPy scalar to `shape`."""
        shape = tuple(shape)
        atom = value._var if isinstance(value, Tracer) else Literal(value)
        dtype = atom.aval.dtype
        if isinstance(value, Tracer) and value.shape == shape:
            return value
        out = self.bind("broadcast", [atom], shape, dtype, params=(("shape", shape),))
        if isinstance(atom, Var):
            strides = self.strides_of(atom)
            if strides is None:
                self.strides[out._var] = None
            else:
                probe = numpy_views.stand_in(atom.aval.shape, strides)
                self.strides[out._var] = tuple(s // 8 for s in np.broadcast_to(probe, shape).strides)
        return out

    # -- views ---------------------------------------------------------------------------------

    def transpose(self, tracer: "Tracer", axes=None) -> "Tracer":
        ndim = tracer.ndim
        if axes is None:
            perm = tuple(reversed(range(ndim)))
        else:
            perm = numpy_api.normalize_axis_tuple(axes, ndim)
            if len(perm) != ndim:
                raise ValueError(at_user_line("axes don't match array"))
        return self.permuted(tracer, perm)

    def permuted(self, tracer: "Tracer", perm) -> "Tracer":
        perm = tuple(perm)
        unmap = lambda imap: viewmaps.transpose_operand(perm, imap)  # noqa: E731
        shape = tuple(tracer.shape[p] for p in perm)
        return _view(self, tracer, shape, lambda var: self.transpose_var(var, perm), unmap)

    def reshaped(self, tracer: "Tracer", shape, ravel: bool = False) -> "Tracer":
        """NumPy's reshape (or ravel): a view where NumPy gives one, else a copy (a new array
        that writes do not share). Where NumPy's choice depends on strides numfuse does not
        know (a strided argument's), writing through the result, or reading it after its
        array was written, is refused."""
        shape = tuple(shape)
        kind = numpy_views.reshape_kind(tracer.shape, self.strides_of(tracer._var), shape, ravel)
        if kind == "copy":
            return Tracer(self, self.new_array(self.reshape_var(tracer._var, shape, ravel)))
        before = tracer.shape
        unmap = lambda imap: viewmaps.reshape_operand(before, shape, imap)  # noqa: E731
        if kind == "view":
            return _view(self, tracer, shape, lambda v: self.reshape_var(v, shape, ravel), unmap)
        origin = tracer._var
        unsure = f"{'ravel' if ravel else 'reshape'} of an array whose memory layout numfuse does not trace"

        def make(v: Var) -> Var:
            if v is not origin and self.carried_to(origin) is not v:
                raise unsupported(f"reading a {unsure} after the array was written", _UNSURE_HINT)
            return self.reshape_var(v, shape, ravel)

        return _view(self, tracer, shape, make, unmap, unsure=unsure)

    def broadcast_view(self, tracer: "Tracer", shape) -> "Tracer":
        """np.broadcast_to: a read-only view."""
        make = lambda var: self.broadcast(Tracer(self, var), shape)._var  # noqa: E731
        return _view(self, tracer, shape, make, None, readonly=True)

    def wrap(self, var: Var, weak: bool = False, numpy_scalar: bool = False) -> "Tracer":
        return Tracer(self, var, weak=weak, numpy_scalar=numpy_scalar)

    def view(self, tracer: "Tracer", make, unmap=None, readonly=None, refusal=None, hint="", dtype=None,
             rewrite=None) -> "Tracer":
        """A view of `tracer`, of its shape (and `dtype`, else its dtype), whose value is
        `make(var)` of its base's current value. Writes go through `unmap` (an index map over
        the view to the base's points) or `rewrite` (see _View); without either they are
        refused with `refusal` (and `hint`)."""
        writable = unmap is not None or rewrite is not None
        return _View(self, tracer, tracer.shape, make, unmap, readonly,
                     refusal=None if writable else (refusal or "writing through this view", hint),
                     dtype=dtype, rewrite=rewrite)

    def astype(self, x, dtype, copy: bool = True) -> "Tracer":
        tracer = self.as_tracer(self.operand(x))
        dtype = check_supported(dtype, "astype")
        result = self.convert(tracer, dtype)
        if result is tracer and copy:
            # A copy, as in NumPy (order "K"): a new array object, whose in-place updates stay
            # its own (if it is returned as it is, trace() makes it a real copy).
            result = Tracer(self, self.new_array(tracer._var, "K"))
        if tracer._numpy_scalar:
            result = self.numpy_scalar(result)  # np.float64(1).astype(np.float32) is a scalar
        return result

    def graph(self, outputs: list[Atom], name: str, writebacks=None, rederive: bool = True) -> Graph:
        """The graph traced so far. `rederive`: check every equation's aval against the
        registry's rule (a graph break's segment is checked where its structure is first
        planned: at every iteration of a loop, the same structure would be checked again)."""
        graph = Graph(list(self.inputs), list(self.eqns), outputs, dict(self.consts), name, writebacks or {},
                      list(dict.fromkeys(self.notes)))
        check_graph(graph, abstract_eval if rederive else None)
        return graph


def _atom_key(atom: Atom):
    if isinstance(atom, Var):
        return ("v", atom.id)
    if isinstance(atom, SizeConst):
        return ("n", atom.aval.dtype.str, atom.key)
    return ("l", atom.aval.dtype.str, atom.value.tobytes())


# ---------------------------------------------------------------------------------------------


@dataclass
class TraceResult:
    graph: Graph
    out_tree: Any  # the return value's structure; see flatten_outputs
    leaf_kinds: list[str]  # per graph output: "array", "numpy_scalar" or "python"
    # (name, array) of the global and closure arrays read, in the order of their inputs
    external: list = field(default_factory=list)
    # Outputs that are views of arguments: output index -> (traced argument index, view eqns).
    views: dict = field(default_factory=dict)
    # Outputs that are an argument traced as a view of others' base (aliasing.py), returned:
    # output index -> that argument's position.
    returned: dict = field(default_factory=dict)
    # Outputs that are views of other outputs (`return y, y[1:]`): index -> (that output, eqns).
    output_views: dict = field(default_factory=dict)
    # Outputs NumPy makes read-only (x.imag of a real x, np.broadcast_to of a computed value).
    readonly: tuple = ()
    # Outputs that are the same array object as an earlier one (`return y, y`): index -> that one.
    same_as: dict = field(default_factory=dict)
    # NumPy's warnings that the signature decides (numpy_warnings.py), in the order given.
    warnings: tuple = ()


def flatten_outputs(value, leaves: list) -> Any:
    """The return value with each Tracer replaced by ('__leaf__', index) into `leaves`."""
    if isinstance(value, Tracer):
        leaves.append(value)
        return ("__leaf__", len(leaves) - 1)
    if isinstance(value, MaskedSelection):
        # Its size depends on the data: compacted at a graph break (a NumPy array returned).
        if value._value is not None:
            return ("__const__", value._value)  # (already: the call may have gone on in NumPy, eager.py)
        return ("__const__", value.compacted("returning x[mask]", returned_error(value), at_its_line=True))
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        # A namedtuple (np.linalg's results): rebuilt as its own type.
        return ("__namedtuple__", (type(value), [flatten_outputs(v, leaves) for v in value]))
    if isinstance(value, tuple):
        return ("__tuple__", [flatten_outputs(v, leaves) for v in value])
    if isinstance(value, list):
        return ("__list__", [flatten_outputs(v, leaves) for v in value])
    if isinstance(value, dict):
        return ("__dict__", {k: flatten_outputs(v, leaves) for k, v in value.items()})
    return ("__const__", value)


def kept_values(tree) -> Iterator[Any]:
    """The values flatten_outputs kept as they are (neither traced nor a container it rebuilds)."""
    tag, body = tree
    if tag == "__const__":
        yield body
    elif tag == "__namedtuple__":
        for t in body[1]:
            yield from kept_values(t)
    elif tag in ("__tuple__", "__list__"):
        for t in body:
            yield from kept_values(t)
    elif tag == "__dict__":
        for t in body.values():
            yield from kept_values(t)


def unflatten_outputs(tree, values: Sequence) -> Any:
    tag, body = tree
    if tag == "__leaf__":
        return values[body]
    if tag == "__tuple__":
        return tuple(unflatten_outputs(t, values) for t in body)
    if tag == "__namedtuple__":
        return body[0](*(unflatten_outputs(t, values) for t in body[1]))
    if tag == "__list__":
        return [unflatten_outputs(t, values) for t in body]
    if tag == "__dict__":
        return {k: unflatten_outputs(t, values) for k, t in body.items()}
    return body


def trace(fn: Callable, specs: Sequence[ArgSpec | tuple], name: str | None = None, hidden: int = 0,
          external: dict | None = None, external_arguments: dict | None = None,
          budget: int | None = None, fuses_product: Callable | None = None) -> TraceResult:
    """Trace `fn` once. Each spec is an ArgSpec (a traced argument), ("static", value), or
    ("alias", position, recipe): the argument at `position` itself (recipe None) or its view
    `recipe.apply(...)` (aliasing.py: arguments that share memory). The last `hidden` specs are
    traced inputs that `fn` is not given (the base of such views). `external`: id -> (name,
    array) of the arrays the function may read from its globals and closure: each it reads
    becomes an input (TraceResult.external), read at each call as NumPy reads it, except those
    in `external_arguments`, id -> (spec position, Recipe or None, the argument's name): the
    argument there (or that view of it), which the call passes (aliasing.external_sharing).
    `budget`: the most operations the trace may record, else TraceTooLong. `fuses_product`: the
    target's rule for matrix products (Target.fuses_product)."""
    ctx = TraceContext()
    ctx.budget = budget
    ctx.fuses_product = fuses_product
    ctx.external_candidates = external or {}
    args = [ctx.new_input(s) if isinstance(s, ArgSpec) else s[1] if s[0] == "static" else None for s in specs]
    arguments = [a for a in args if isinstance(a, Tracer)]
    for i, s in enumerate(specs):
        if not isinstance(s, ArgSpec) and s[0] == "alias":
            source = args[s[1]]
            args[i] = source if s[2] is None else s[2].apply(source)
    aliases = {i: a for i, (s, a) in enumerate(zip(specs, args)) if not isinstance(s, ArgSpec) and s[0] == "alias"}
    for key, (position, recipe, argument) in (external_arguments or {}).items():
        ctx.external_arguments[key] = (args[position], recipe)
        name = ctx.external_candidates.get(key, ("a global array",))[0]
        what = f"argument {argument!r}" if recipe is None else f"a view of argument {argument!r} ({recipe})"
        ctx.notes.append(f"{name} is {what}: read and written through it, as NumPy uses one array")
    if hidden:
        args = args[:-hidden]
    initial = [a._var for a in arguments]
    random_before = _global_random_state()
    try:
        with creating_arrays(ctx):  # np.zeros and friends in the function make traced values
            result = fn(*args)
        if ctx.break_needed is None and _global_random_state() != random_before:
            ctx.break_needed = ("np.random drew numbers, which differ at every call (called in "
                                f"{name or getattr(fn, '__name__', 'f')})")
        if ctx.untraced is not None:
            raise RunUntraced(ctx.untraced)  # (the function caught bind's exception)
        if ctx.break_needed is not None:
            # Something needed real values, and the function caught numfuse's exception (or
            # never saw one: a random draw): it runs segment by segment, or is refused.
            refusal = TracingError(f"{ctx.break_needed}: numfuse.jit(graph_breaks=False) refuses it")
            raise NeedsGraphBreak(ctx.break_needed, refusal)
    except Exception as err:
        if tracing_error_in(err) is not None:
            # jit traces again, runs it segment by segment or as the plain function: that run
            # draws what NumPy would have drawn at this call.
            _restore_global_random_state(random_before)
        raise
    if budget is not None and len(ctx.eqns) >= budget:
        raise TraceTooLong(_too_long(budget))  # (the function caught bind's exception)
    leaves: list[Tracer] = []
    tree = flatten_outputs(result, leaves)
    for leaf in leaves:
        if leaf._ctx is not ctx:
            raise TracingError("the function returned a traced array from another trace")
    for kept in kept_values(tree):
        held = opaque.where(kept)
        if held is not None:
            raise RunUntraced(
                f"{name or getattr(fn, '__name__', 'f')} returns {held}, a traced array: numfuse makes arrays, "
                "and tuples, lists, dicts and namedtuples of them, at each call, not other objects, so the "
                "function runs as written")
    kinds = ["python" if t._weak else "numpy_scalar" if t._numpy_scalar else "array" for t in leaves]
    outputs = []
    views = {}
    returned = {}  # output -> the position of an argument traced as a view of another's memory
    output_views = {}  # output -> (the output it is a view of, view eqns)
    for k, t in enumerate(leaves):
        position = next((i for i, a in aliases.items() if t is a), None)
        if position is not None:
            returned[k] = position  # `return b`: NumPy returns b itself
        view = argument_view(ctx, t, arguments)
        if view is not None:
            # A view of an argument (x[1:], x.T): NumPy returns a view of the caller's array,
            # and so does jit where the array's library can make it (returned_view); the graph
            # still computes it, for the device arrays of other libraries.
            views[k] = view
        else:
            view = argument_view(ctx, t, [leaf if leaf is not t else None for leaf in leaves])
            if view is not None:  # `y = x + 1; return y, y[1:]`: a view of another result
                output_views[k] = view
        var = t._var
        if (var in ctx.consts or var in ctx.inputs) and not any(t is a for a in arguments) and \
                not any(t is e for e in ctx.external_tracers.values()):
            # Not the argument itself but a copy of it (x.astype(x.dtype)): a new array.
            var = ctx.bind("convert", [var], t.shape, t.dtype, params=(("dtype", t.dtype),))._var
        elif var in ctx.family and ctx.latest.get(ctx.family[var]) is not var:
            # An earlier version of an array updated since: its buffer holds the latest.
            var = ctx.copy_var(var)
        elif not any(t is a for a in arguments) and (
                any(a._var is var for a in arguments) or
                any(e._var is var and t is not e for e in ctx.external_tracers.values())):
            # A copy of an argument (or global array) written in place (`x += 1; return
            # x.copy()`): the argument's buffer holds that version, and the caller's array is
            # not NumPy's new array.
            var = ctx.copy_var(var)
        if not (t._weak or t._numpy_scalar) and k not in views and k not in output_views and k not in returned \
                and any(o is var and leaves[j] is not t and kinds[j] == "array" for j, o in enumerate(outputs)):
            # Another array object with the same values (`return y, y.copy()`): its own
            # buffer, as NumPy's copy is a new array (the same object twice stays one).
            var = ctx.copy_var(var)
        outputs.append(var)
    _drop_unread_externals(ctx, outputs)
    # A view of a global array (`return G[1:]`): a view of it, as NumPy's (its input follows
    # the arguments' among the call's values).
    globals_read = [ctx.external_tracers.get(id(a)) for _, a in ctx.external_inputs]
    for k, t in enumerate(leaves):
        if k not in views and k not in returned and k not in output_views:
            of_global = argument_view(ctx, t, [None] * len(arguments) + globals_read)
            if of_global is not None:
                views[k] = of_global
    # Arguments written into: their final versions go back into the caller's arrays; and so do
    # global arrays written into.
    writebacks = {
        ctx.inputs.index(v0): a._var for a, v0 in zip(arguments, initial) if a._var is not v0
    }
    for key, t in ctx.external_tracers.items():
        if t._var is not ctx.external_initial[key]:
            writebacks[ctx.inputs.index(ctx.external_initial[key])] = t._var
    graph = ctx.graph(outputs, name or getattr(fn, "__name__", "f"), writebacks)
    # (a view of an argument too: np.diagonal(x) is a read-only view of x's memory)
    readonly = tuple(k for k, t in enumerate(leaves) if t._readonly is True and k not in returned)
    first = {}
    same_as = {k: first.setdefault(id(t), k) for k, t in enumerate(leaves) if kinds[k] == "array"}
    same_as = {k: j for k, j in same_as.items() if j != k}
    return TraceResult(graph, tree, kinds, list(ctx.external_inputs), views, returned, output_views, readonly,
                       same_as, tuple(ctx.signature_warnings))


def _drop_unread_externals(ctx, outputs) -> None:
    """Forget the inputs of global arrays the trace never read (a name in an untaken branch):
    the call need not pass them."""
    read = {a for eqn in ctx.eqns for a in eqn.inputs} | set(outputs)
    for key, t in list(ctx.external_tracers.items()):
        var = ctx.external_initial[key]
        if var not in read and t._var is var:
            index = ctx.inputs.index(var)
            del ctx.inputs[index]
            del ctx.external_tracers[key]
            ctx.external_inputs = [(n, a) for n, a in ctx.external_inputs if id(a) != key]


def argument_view(ctx, tracer, arguments):
    """(index among the traced arguments, the view equations from it) where `tracer` is a view
    (proxy._View) of an argument, computed by view primitives from its latest version; else
    None. A plain Tracer over the same values (x.flatten(), x.copy()) is a new array."""
    if not isinstance(tracer, _View) or tracer._weak or tracer._numpy_scalar:
        return None
    root = root_array(tracer)
    index = next((i for i, a in enumerate(arguments) if a is root), None)
    if index is None:
        return None
    var = tracer._var  # (first: a view binds its equations when first read)
    chain = viewmaps.view_chain(ctx.eqns, var, root._var, dtype_views=True)
    return None if chain is None else (index, chain)


def returned_view(array, chain):
    """The view `chain` (view equations, from argument_view) of the caller's `array`, made by
    NumPy as the function made it."""
    return viewmaps.view_through(np, array, chain)


def _global_random_state():
    """NumPy's global generator's position (np.random.rand and friends draw from it)."""
    state = np.random.get_state()
    return (state[1].tobytes(), state[2], state[3], state[4])


def _restore_global_random_state(saved) -> None:
    if _global_random_state() != saved:
        keys, pos, has_gauss, gauss = saved
        np.random.set_state(("MT19937", np.frombuffer(keys, np.uint32).copy(), pos, has_gauss, gauss))


def _too_long(budget: int) -> str:
    loc = user_location()
    where = f" (at {loc.short()}: {loc.text})" if loc is not None else ""
    return (f"its trace passed {budget:,} operations{where}: a Python loop traced whole, whose plan would be "
            "thousands of small kernels")
