"""`numfuse.jit`: the decorator, its options, and what it accepts (a function, a method, a
ufunc, a jitted function); the JitFunction it returns is jit_function.py."""

from __future__ import annotations

import inspect
from typing import Callable

import numpy as np

from .errors import UnsupportedError
from .jit_function import JitFunction


_NO_FUNCTION = object()


def _ufunc_caller(ufunc: np.ufunc) -> Callable:
    """numfuse.jit(np.add): a function that calls the ufunc with what it is given (its own
    signature lists every keyword with a default, some of which may not be passed together)."""

    def call(*args, **kwargs):
        return ufunc(*args, **kwargs)

    call.__name__ = call.__qualname__ = ufunc.__name__
    call.__doc__ = ufunc.__doc__
    return call


def jit(fn: Callable | None = _NO_FUNCTION, *, static_argnums=(), static_argnames=(), stream=None, autotune=False,
        cuda_graphs=False, graph_breaks=True, target=None, numpy_fallback=None):
    """Compile a NumPy function into fused kernels, for a GPU or for the CPU's cores.

    Use as `@numfuse.jit`, `numfuse.jit(fn)` or `@numfuse.jit(static_argnames=("axis",))`.
    The function is traced once per input signature (shapes, dtypes, layouts, scalar types,
    static values, which arguments share memory), planned into as few kernels as possible,
    and compiled at its first call; later calls of the signature only launch. Inspect with
    `.explain(*args)`, `.plan(*args)`, `.graph(*args)`; `.compile(*args)` compiles ahead.

    Arguments the function may be called with:
      - NumPy arrays (any dtype but object, strings and datetimes; any strides), memoryview,
        bytearray and array.array (read as np.asarray reads them), plain ndarray subclasses
        (results keep the class), and device arrays of any library with
        __cuda_array_interface__ or DLPack (CuPy, PyTorch, Numba): results come back as the
        same kind, with no copies;
      - Python and NumPy scalars (their values are kernel arguments; a Python int used as a
        Python value, `range(n)`, becomes static by itself);
      - dicts, lists, tuples and namedtuples of those (flattened to their leaves);
      - any hashable value, static: part of the signature by value.
    Arrays read from the function's globals and closure are read at each call; a rebound
    global name or closure variable traces again. Writes into arguments reach the caller's
    arrays, arguments sharing memory see each other's writes, and a view of an argument is
    returned as a view of it, all as in NumPy.

    Options:
      static_argnums, static_argnames: arguments whose values are constants of the trace, by
        position (an int or a tuple) or name (a str or a tuple); an unknown name or an
        out-of-range position is a ValueError here.
      target: "auto" (the default; NUMFUSE_TARGET sets another), "cuda" or "cpu". "auto" runs
        on the GPU when a CUDA GPU is found or device arrays are passed, else on the CPU's
        cores (Numba parallel functions, in place on NumPy arrays). Numba's CUDA simulator
        runs only when asked for: target="cuda" with NUMBA_ENABLE_CUDASIM=1.
      graph_breaks: True (the default): where Python needs the value of a traced array (`if`,
        `while`, float(), .item(), a size from data), calls a NumPy function numfuse does not
        trace, or draws random numbers, the function runs segment by segment at every call
        (explain lists the breaks). False: a TracingError there.
      stream: the CUDA stream every call's kernels and copies run on (a Numba, CuPy or PyTorch
        stream, an object with __cuda_stream__, or a CUstream handle). By default a call runs
        on the current stream of its device arguments' library, else on the default stream.
      autotune: at each kernel's first launch, time the launch configurations the cost model
        considers and keep the fastest, remembered in the disk cache.
      cuda_graphs: on a GPU, a plan of several kernels called again with device arrays of the
        same signature launches as one CUDA graph.
      numpy_fallback: None (the default: on, unless NUMFUSE_NUMPY_FALLBACK=0) or True: where
        every argument is a NumPy array or a scalar (and not on the CUDA simulator), the 2nd
        to 5th calls of a signature take turns between numfuse's plan and the plain function
        on NumPy, timed (the 2nd and 3rd alone where one is 4 times faster), and the faster
        runs from then on (a loop of scalar code that breaks
        the graph at every `if` is faster uncompiled); explain says which. A trace past
        50,000 operations (a Python loop traced whole) is abandoned for the plain function.
        False: numfuse's plan always, traced whole.

    Errors: numfuse.UnsupportedError (a TypeError) for what numfuse does not support, saying
    what to write instead; numfuse.TracingError where the function cannot be traced (with
    graph_breaks=False); NumPy's own exceptions (ValueError, IndexError, AxisError, ...) where
    NumPy raises them, at the user's line; numfuse.CacheSecurityError for a cache folder others
    can write; NumPy's FloatingPointError where np.errstate asks NumPy to raise (such a call runs
    through NumPy, unfused). Warnings are numfuse.NumfuseWarning (numfuse.SimulatorWarning,
    numfuse.TargetWarning, numfuse.UnfusedCallWarning). NUMFUSE_DEBUG, NUMFUSE_DUMP and
    NUMFUSE_QUIET: see the guide.

    The user guide, with every option and error: docs/user-guide.md in numfuse's source tree.
    """
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    options = dict(static_argnums=static_argnums, static_argnames=static_argnames, stream=stream,
                   autotune=autotune, cuda_graphs=cuda_graphs, graph_breaks=graph_breaks, target=target,
                   numpy_fallback=numpy_fallback)
    if fn is _NO_FUNCTION:
        return lambda f: jit(f, **options)
    if isinstance(fn, JitFunction):
        if all(not v for k, v in options.items() if k not in ("graph_breaks", "numpy_fallback")) and graph_breaks \
                and numpy_fallback is None:
            return fn  # jit(jit(f)) is jit(f)
        fn = fn._fn  # jit(jit(f), options): one JitFunction of f, with these options
    if isinstance(fn, (staticmethod, classmethod)):  # @numfuse.jit above @staticmethod
        return type(fn)(jit(fn.__func__, **options))
    if not callable(fn):
        raise TypeError(f"numfuse.jit expects a function, got {type(fn).__name__} {fn!r:.60}")
    if isinstance(fn, np.ufunc):
        fn = _ufunc_caller(fn)
    if inspect.isgeneratorfunction(fn) or inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        raise UnsupportedError(
            f"numfuse.jit({getattr(fn, '__qualname__', fn)}): a generator or async function returns a generator "
            "or coroutine, not arrays, which numfuse cannot compile; jit the function that computes with "
            "what it yields, or call it without numfuse.jit")
    try:
        inspect.signature(fn)
    except (TypeError, ValueError):
        raise TypeError(f"numfuse.jit expects a Python function, got {fn!r:.60}: its signature is unknown") from None
    return JitFunction(fn, static_argnums, static_argnames, stream, autotune, cuda_graphs, graph_breaks, target,
                       numpy_fallback)
