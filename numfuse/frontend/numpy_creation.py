"""Arrays the traced function makes itself: np.zeros, np.ones, np.empty, np.full, np.eye,
np.identity, np.arange, np.linspace, np.logspace, np.tri, and np.triu / np.tril.

These NumPy functions take no array argument, so NumPy never dispatches them to numfuse: while a
function is traced, `creating_arrays(ctx)` replaces them in the numpy module by versions that,
called from the user's code on the tracing thread, give traced values (from numfuse's own code,
NumPy's, or another thread, they are NumPy's, unchanged). The replacement is installed once for
all concurrent traces and removed when the last one ends.

What they make, with NumPy's dtypes and shapes (NumPy makes a real array of the same arguments,
and decides):
- a filled array (np.zeros, np.ones, np.full, np.empty: zeros) is a broadcast of one value, never
  memory: writing into it by slices or masks works as into any array the function computes;
- np.full with a traced fill value broadcasts that value;
- the others (np.arange, np.eye, np.indices, np.mgrid, ...) are computed from their indices
  where the kernels read them (numpy_index_arrays.py), or, where no formula of the indices gives
  NumPy's values bit for bit, NumPy's array itself, a constant of the trace.
"""

from __future__ import annotations

import contextlib
import linecache
import operator
import os
import sys
import sysconfig
import threading

import numpy as np

from ..errors import at_user_line, unsupported
from . import numpy_index_arrays as index_arrays
from .traced import TracedArray, holds_traced

_local = threading.local()  # this thread's traces, innermost last
_lock = threading.Lock()
_installed = [0]  # how many traces, on every thread, are running
_ORIGINALS: dict[str, object] = {}
_NAMES = ("zeros", "ones", "empty", "full", "eye", "identity", "arange", "linspace", "logspace", "tri",
          "indices", "array", "asarray", "asanyarray", "ascontiguousarray")
_GRIDS = ("mgrid", "ogrid")


def tracing_now() -> bool:
    """Whether this thread is tracing a function (and not inside a graph break's run)."""
    return _current() is not None


def current_context():
    """The TraceContext this thread is tracing into, or None."""
    return _current()


def _current():
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None


def _from_user_code(depth: int = 2, name: str | None = None) -> bool:
    """Whether the caller of the replaced function is the user's code (not numfuse's, NumPy's).
    With `name`: and the user's line names it. C code (NumPy's random generators) calls
    np.empty through the module too, and has no frame: the user's line then calls another
    function, and the array must be a real one."""
    frame = sys._getframe(depth)
    module = frame.f_globals.get("__name__", "")
    if module in ("numfuse", "numpy") or module.startswith(("numfuse.", "numpy.")):
        return False
    if name is None:
        return True
    return name in linecache.getline(frame.f_code.co_filename, frame.f_lineno) or not linecache.getline(
        frame.f_code.co_filename, frame.f_lineno)


# A library's np.array(list_of_traced_values) (SciPy's, say) wants a real array: only the user's
# own code gets a traced one.
_ONLY_IN_OWN_CODE = ("array", "asarray", "asanyarray", "ascontiguousarray")


def _in_installed_package(depth: int) -> bool:
    filename = os.path.abspath(sys._getframe(depth + 1).f_code.co_filename)
    paths = sysconfig.get_paths()
    return filename.startswith(tuple(os.path.abspath(paths[k]) + os.sep for k in ("purelib", "platlib")))


def _traced(name: str, original):
    def make(*args, **kwargs):
        ctx = _current()
        if ctx is None or not _from_user_code(2, name) or (name in _ONLY_IN_OWN_CODE and _in_installed_package(1)):
            return original(*args, **kwargs)
        return _make(ctx, name, original, args, kwargs)

    make.__name__ = name
    make.__qualname__ = name
    make.__doc__ = original.__doc__
    make.__wrapped__ = original
    return make


class _TracedGrid:
    """np.mgrid or np.ogrid while a function is traced: indexed from the user's code on the
    tracing thread, a value computed from its indices (NumPy's grid where none matches)."""

    def __init__(self, name: str, original):
        self._name, self._original = name, original

    def __getitem__(self, key):
        result = self._original[key]
        ctx = _current()
        if ctx is None or not _from_user_code(2, self._name):
            return result
        made = index_arrays.grid(ctx, result, key, sparse=self._name == "ogrid")
        if made is not None:
            return made
        if self._name == "mgrid":
            return result  # NumPy's own array (numpy_index_arrays.grid says why)
        if isinstance(result, tuple):
            return tuple(ctx.as_tracer(ctx.operand(a)) for a in result)
        return ctx.as_tracer(ctx.operand(result))

    def __getattr__(self, name):
        return getattr(self._original, name)

    def __len__(self):
        return len(self._original)


def _random_functions() -> list[str]:
    """np.random's functions (the global generator's draws, default_rng): not its classes."""
    return [n for n in np.random.__all__ if callable(getattr(np.random, n, None))
            and not isinstance(getattr(np.random, n), type)]


def _noting_random(name: str, original):
    """np.random.`name` while a function is traced: a draw differs at every call (and
    default_rng() seeds itself afresh), so the function must run at every call, segment by
    segment; the draw itself makes real arrays."""

    def make(*args, **kwargs):
        ctx = _current()
        if ctx is not None and _from_user_code() and holds_traced([*args, *kwargs.values()]):
            return random_of_traced(ctx, original, f"np.random.{name}", args, kwargs)
        if ctx is not None and ctx.breaks is None and _from_user_code():
            ctx.break_needed = ctx.break_needed or at_user_line(
                f"np.random.{name} draws numbers that differ at every call")
        with suspended():
            result = original(*args, **kwargs)
        if isinstance(result, np.random.Generator):
            return SuspendingGenerator(result)
        return result

    make.__name__ = name
    make.__qualname__ = name
    make.__doc__ = original.__doc__
    make.__wrapped__ = original
    return make


def random_of_traced(ctx, draw, name: str, args, kwargs):
    """A random draw given traced values (np.random.shuffle(x), rng.permutation(x),
    default_rng(seed) of a seed argument): NumPy's, on the real values at a graph break, as
    NumPy draws it (its shuffle of a non-ndarray swaps rows through views, which duplicates
    them). A shuffle writes into the array it was given."""
    from .untraced import untraced

    what = f"{name} draws numbers that differ at every call"
    return untraced(ctx, draw, args, kwargs, unsupported(f"{name} of a traced value"), what,
                    may_write=name.endswith("shuffle"))


def _from_sequence(ctx, items, dtype):
    """np.array of a (nested) list of traced and Python values: their stack, of NumPy's dtype
    (each element as an array: a Python float is float64 here, as np.array makes it)."""

    def leaves(v):
        return [x for item in v for x in leaves(item)] if isinstance(v, (list, tuple)) else [v]

    if dtype is None:
        dtype = np.result_type(*[x.dtype if isinstance(x, TracedArray) else np.asarray(x).dtype for x in leaves(items)])

    def build(v):
        if isinstance(v, (list, tuple)):
            return np.stack([build(item) for item in v]) if len(v) else np.zeros((0,), dtype)
        return ctx.convert(ctx.as_tracer(ctx.operand(v)), dtype)

    return build(items)


def _make(ctx, name, original, args, kwargs):

    if name == "asanyarray":
        name = "asarray"  # (a traced array is an ndarray of its own class)
    if name == "ascontiguousarray" and args and isinstance(args[0], TracedArray):
        made = _contiguous(ctx, *args, **kwargs)
        return made if made is not None else original(*args, **kwargs)
    if name == "ascontiguousarray":
        return original(*args, **kwargs)
    if name in ("array", "asarray"):
        if args and isinstance(args[0], TracedArray):
            made = _array_of_traced(name, *args, **kwargs)
            if made is not None:
                return made
        if not args or not isinstance(args[0], (list, tuple)) or not holds_traced(args[0]):
            return original(*args, **kwargs)  # np.asarray(traced): a graph break (proxy.__array__)
        dtype = args[1] if len(args) > 1 else kwargs.get("dtype")
        return _from_sequence(ctx, args[0], None if dtype is None else np.dtype(dtype))

    if name in ("zeros", "ones", "empty", "full"):
        args, kwargs = list(args), dict(kwargs)
        shape = args.pop(0) if args else kwargs.pop("shape")
        fill = None
        if name == "full":
            fill = args.pop(0) if args else kwargs.pop("fill_value")
        if isinstance(fill, TracedArray):
            dtype = args[0] if args else kwargs.get("dtype")
            dtype = fill.dtype if dtype is None else np.dtype(dtype)
            return ctx.broadcast(ctx.convert(fill, dtype), _shape(shape))
        if any(isinstance(a, TracedArray) for a in args + list(kwargs.values())):
            raise unsupported(f"np.{name} with a traced argument", "pass its arguments as Python values")
        # NumPy makes one element (its dtype, its fill value, its errors); the array is that
        # value broadcast, which holds no memory.
        one = original((), *([fill] if name == "full" else []), *args, **kwargs)
        if one.dtype.kind in "OSUVMm":
            raise unsupported(f"np.{name} of dtype {one.dtype}")
        return ctx.broadcast(one[()] if name != "empty" else one.dtype.type(0), _shape(shape))
    def as_size(a):
        # A traced int is a size or a count: from int arguments, they are made static (jit
        # traces again); from data, its value comes from a graph break.
        return operator.index(a) if isinstance(a, TracedArray) and a.dtype.kind in "biu" and a.ndim == 0 else a

    args = [as_size(a) for a in args]
    kwargs = {k: as_size(a) for k, a in kwargs.items()}
    traced = [a for a in list(args) + list(kwargs.values()) if isinstance(a, TracedArray)]
    if traced and name == "linspace":
        return _linspace(ctx, *args, **kwargs)
    if traced and name == "logspace":
        return _logspace(ctx, *args, **kwargs)
    if traced and all(a.ndim == 0 for a in traced):
        # np.arange(x.sum()): the array's size depends on the value, which a graph break gives
        # (as NumPy's scalar of its dtype, so that NumPy's result dtype is the same).
        def real(a):
            return ctx.concrete(a, f"np.{name} of a traced value (its size depends on it)")[()] \
                if isinstance(a, TracedArray) else a

        args, kwargs = [real(a) for a in args], {k: real(a) for k, a in kwargs.items()}
    elif traced:
        raise unsupported(f"np.{name} with a traced argument", "pass its arguments as Python values (static arguments)")
    array = original(*args, **kwargs)
    made = _from_indices(ctx, name, array, args, kwargs)
    if made is not None:
        return made
    if isinstance(array, tuple):  # np.indices(sparse=True); np.linspace(retstep=True): its step
        return tuple(ctx.as_tracer(ctx.operand(a)) if isinstance(a, np.ndarray) else a for a in array)
    result = ctx.as_tracer(ctx.operand(array))
    return ctx.numpy_scalar(result) if array.ndim == 0 else result


_UNSET = object()  # (np.array copies by default; copy=None asks for a copy only where needed)


def _array_of_traced(name, a, dtype=None, *args, copy=_UNSET, order=None, ndmin=0, subok=False, device=None,
                     like=None):
    """np.asarray(x) and np.array(x) of a traced array in the user's own code, as NumPy gives
    them: x itself where no copy or cast is asked for (so writes through either show in both),
    else a traced copy or cast. None (then NumPy's own function, a graph break) for what this
    does not model: an order that may reorder the copy, ndmin, like=, or a cast that copy=False
    forbids."""
    if args or like is not None or ndmin > a.ndim or order not in (None, "K", "A"):
        return None
    if copy is _UNSET:
        copy = True if name == "array" else None
    dtype = a.dtype if dtype is None else np.dtype(dtype)
    if a._weak or a._numpy_scalar:
        # A scalar's array is a new 0-d array (a scalar is immutable, never its buffer).
        made = a.astype(dtype) if dtype != a.dtype else a
        return type(made)(made._ctx, made._ctx.new_array(made._var))
    if dtype == a.dtype and not copy:
        return a
    if copy is False:
        return None  # NumPy's ValueError: a cast needs a copy
    return a.astype(dtype) if dtype != a.dtype else a.copy()


def _contiguous(ctx, a, dtype=None, *, like=None):
    """np.ascontiguousarray of a traced array: the array itself where it is C-contiguous and of
    that dtype (writes through either show in both, as in NumPy), else a C-ordered copy; at
    least 1-d (a 0-d array's 1-element view). None (NumPy's own, a graph break) for like=."""
    if like is not None:
        return None
    dtype = a.dtype if dtype is None else np.dtype(dtype)
    if a._weak or a._numpy_scalar:
        a = _array_of_traced("asarray", a)
    if a.ndim == 0:
        a = a.reshape(1)
    if dtype != a.dtype:
        return a.astype(dtype)
    return a if ctx.c_contiguous(a._var) else a.copy()


def _linspace_arguments(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    return start, stop, operator.index(num), endpoint, retstep, dtype, axis


def _logspace_arguments(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    return start, stop, operator.index(num), endpoint, base, dtype, axis


def _from_indices(ctx, name, array, args, kwargs):
    """NumPy's `array` (the result of np.`name`) as a value computed from its indices
    (numpy_index_arrays.py), or None: then it is a constant of the trace."""
    if name == "arange":
        return index_arrays.arange(ctx, array)
    if name in ("eye", "identity"):
        return index_arrays.eye(ctx, array, args, kwargs, 2 if name == "eye" else None)
    if name == "tri":
        return index_arrays.tri(ctx, array, args, kwargs)
    if name == "indices":
        dtype = args[1] if len(args) > 1 else kwargs.get("dtype", int)
        return index_arrays.indices(ctx, array, np.dtype(dtype))
    if name == "linspace":
        start, stop, num, endpoint, retstep, dtype, axis = _linspace_arguments(*args, **kwargs)
        values = array[0] if retstep else array
        if axis != 0 or np.ndim(start) or np.ndim(stop):
            return None
        made = index_arrays.linspace(ctx, values, start, stop, num, endpoint, dtype)
        return None if made is None else (made, array[1]) if retstep else made
    if name == "logspace":
        start, stop, num, endpoint, base, dtype, axis = _logspace_arguments(*args, **kwargs)
        if axis != 0 or np.ndim(start) or np.ndim(stop) or np.ndim(base):
            return None
        line = _ORIGINALS.get("linspace", np.linspace)(start, stop, num=num, endpoint=endpoint)
        exponent = index_arrays.linspace(ctx, line, start, stop, num, endpoint, line.dtype)
        if exponent is None:
            return None
        # NumPy's np.power(base, y): base is a Python or NumPy scalar, as NumPy weighs it.
        return np.power(base, exponent).astype(array.dtype)
    return None


def _linspace(ctx, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """np.linspace with traced endpoints (scalars or arrays, any axis), computed as NumPy
    computes it: start + i * step, or i / div * delta where any step is zero (NumPy's choice
    for the whole array), the last point set to stop, the new axis moved to `axis`."""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = (num - 1) if endpoint else num
    start_op, stop_op = ctx.operand(start), ctx.operand(stop)
    # (stand-ins, not resolve_type: np.result_type reads the type `int` as int64, a value 0 as weak)
    dt = np.result_type(start_op.stand_in(), stop_op.stand_in(), float(num))
    start_t = ctx.convert(ctx.as_tracer(start_op), dt)
    stop_t = ctx.convert(ctx.as_tracer(stop_op), dt)
    delta = stop_t - start_t
    index = ctx.as_tracer(ctx.operand(
        _ORIGINALS.get("arange", np.arange)(0, num, dtype=dt).reshape((-1,) + (1,) * delta.ndim)))
    if div > 0:
        step = delta / div
        any_zero = step == 0 if delta.ndim == 0 else (step == 0).any()
        y = np.where(any_zero, index / div * delta, index * step)
    else:
        step = float("nan")  # NumPy's: a Python float
        y = index * delta
    y = y + start_t
    if endpoint and num > 1:
        last = np.broadcast_to(stop_t, y.shape[1:])
        y = np.concatenate([y[:-1], np.reshape(last, (1,) + y.shape[1:])])
    if axis != 0:
        y = np.moveaxis(y, 0, axis)
    if dtype is not None:
        if np.dtype(dtype).kind in "iu":
            y = np.floor(y)
        y = y.astype(dtype)
    if retstep:
        if isinstance(step, float):
            return y, step
        return y, ctx.wrap(step._var, numpy_scalar=True) if step.ndim == 0 else step  # NumPy's kinds
    return y


def _logspace(ctx, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """np.logspace with traced arguments, as NumPy computes it: base ** linspace(start, stop);
    an array base broadcast with the endpoints, its new axis at `axis`."""
    if not isinstance(base, (float, int)) and np.ndim(base):
        ndmax = len(np.broadcast_shapes(np.shape(start), np.shape(stop), np.shape(base)))

        def at_least(a):
            return np.reshape(a, (1,) * (ndmax - np.ndim(a)) + np.shape(a))

        start, stop, base = at_least(start), at_least(stop), np.expand_dims(at_least(base), axis)
    y = _linspace(ctx, start, stop, num=num, endpoint=endpoint, axis=axis)
    power = np.power(base, y)
    return power if dtype is None else power.astype(dtype)


def _shape(shape) -> tuple[int, ...]:
    """NumPy's shape from `shape` (an int or a sequence), with NumPy's errors; a traced int in
    it (a scalar argument) raises the TracingError that makes that argument static."""
    sizes = shape if isinstance(shape, (tuple, list)) else (shape,)
    sizes = tuple(operator.index(s) for s in sizes)  # a traced size: its TracingError
    return np.broadcast_to(np.empty((), bool), sizes).shape


_REPLACING: list = []  # a cache: what _replacements made last, reused while NumPy's are the same


def _replacements() -> list:
    """(module, name, key in _ORIGINALS, NumPy's function, its replacement while tracing) of
    each function creating_arrays replaces; made once (a run with graph breaks installs them at
    every call), again where NumPy's own were replaced since (a user's patch)."""
    if _REPLACING and all(getattr(module, name) is original for module, name, _, original, _ in _REPLACING):
        return _REPLACING
    made = [(np, n, n, getattr(np, n), _traced(n, getattr(np, n))) for n in _NAMES]
    made += [(np, n, n, getattr(np, n), _TracedGrid(n, getattr(np, n))) for n in _GRIDS]
    made += [(np.random, n, "random." + n, getattr(np.random, n), _noting_random(n, getattr(np.random, n)))
             for n in _random_functions()]
    _REPLACING[:] = made
    return made


@contextlib.contextmanager
def creating_arrays(ctx):
    """Within: np.zeros and friends, called by the user's code on this thread, make traced
    values of `ctx`."""
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    with _lock:
        if _installed[0] == 0:
            for module, name, key, original, replacement in _replacements():
                _ORIGINALS[key] = original
                setattr(module, name, replacement)
        _installed[0] += 1
    stack.append(ctx)
    try:
        yield
    finally:
        stack.pop()
        with _lock:
            _installed[0] -= 1
            if _installed[0] == 0:
                for name, original in _ORIGINALS.items():
                    if name.startswith("random."):
                        setattr(np.random, name[len("random."):], original)
                    else:
                        setattr(np, name, original)
                _ORIGINALS.clear()


class SuspendingGenerator:
    """A np.random.Generator whose methods make real arrays while a function is traced (its C
    code calls np.empty through the numpy module)."""

    def __init__(self, generator):
        self.generator = generator

    def __getattr__(self, name):
        attribute = getattr(self.generator, name)
        if not callable(attribute):
            return attribute

        def call(*args, **kwargs):
            ctx = _current()
            if ctx is not None and holds_traced([*args, *kwargs.values()]):
                return random_of_traced(ctx, attribute, f"Generator.{name}", args, kwargs)
            with suspended():
                return attribute(*args, **kwargs)

        return call


def stop_tracing(ctx) -> None:
    """From now on, within creating_arrays(ctx) on this thread: NumPy's own np.zeros and
    friends (the call goes on in NumPy, eager.py)."""
    stack = getattr(_local, "stack", None) or []
    for k, entry in enumerate(stack):
        if entry is ctx:
            stack[k] = None


@contextlib.contextmanager
def suspended():
    """Within: NumPy's own np.zeros and friends on this thread, whoever calls them (a graph
    break runs kernels and untraced functions, which make real arrays)."""
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    stack.append(None)
    try:
        yield
    finally:
        stack.pop()


# -- functions of an array, reached through __array_function__ ---------------------------------


def _triangle(lower: bool):
    def handler(ctx, m, k=0):
        t = ctx.as_tracer(ctx.operand(m))
        if t.ndim == 0:
            raise ValueError("input array must be at least 1-d")  # as np.tri's shape check says
        rows, cols = t.shape[-2:] if t.ndim >= 2 else (t.shape[-1], t.shape[-1])  # 1-D: (n, n)
        mask = index_arrays.triangle_mask(ctx, rows, cols, operator.index(k), lower)
        return np.where(mask, t, t.dtype.type(0))

    return handler


FUNCTIONS = {
    np.triu: _triangle(lower=False),
    np.tril: _triangle(lower=True),
}
