"""Errors numfuse raises, and how they name the user's source line."""

from __future__ import annotations

import builtins
import contextlib
import dis
import functools
import linecache
import os
import sys
import sysconfig
from dataclasses import dataclass

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class NumfuseError(Exception):
    """Base class of every error numfuse raises on its own account."""


class UnsupportedError(NumfuseError, TypeError):
    """A NumPy function, method, argument or dtype that numfuse cannot trace."""


class LayoutError(UnsupportedError):
    """A result that depends on the memory layout NumPy gives an array (np.ravel(x,
    order="K"), as_strided), where numfuse does not know that layout: NumPy's function run on
    numfuse's real array, laid out in C order, would give other values, so it is refused
    rather than run at a graph break."""


class TracingError(NumfuseError):
    """Python code asked for a concrete value of an array that only exists at run time.

    Deliberately not a TypeError: code that probes conversions (`operator.index` inside
    NumPy's axis handling, say) must not swallow it and carry on with a wrong guess."""


class NeedsGraphBreak(TracingError):
    """Internal: tracing reached code that needs real values (Python control flow on an array,
    a NumPy function numfuse does not trace, a random draw). jit then runs the function segment
    by segment (graph_breaks.py); with graph_breaks=False the user gets `refusal`, the error
    that says why."""

    def __init__(self, reason: str, refusal: Exception):
        super().__init__(str(refusal))
        self.reason = reason
        self.refusal = refusal
        self.input_position = None


class RunUntraced(TracingError):
    """Internal: the trace met what only the function as written does as NumPy does (np.errstate
    asking NumPy to raise, inside the function): the plain function runs instead, from this
    call on; `reason` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason
        self.input_position = None


class TraceTooLong(RunUntraced):
    """Internal: the trace passed its budget of operations (numpy_fallback.TRACE_BUDGET), where
    the plain function runs instead; `reason` says where."""


class CacheSecurityError(NumfuseError, PermissionError):
    """A cache folder or file that another user owns or can write: numfuse imports the Python
    files it holds, so it refuses it."""


class NumfuseWarning(UserWarning):
    """Something numfuse could not do as well as it meant to; results are still right."""


class SimulatorWarning(NumfuseWarning):
    """numfuse runs kernels on Numba's CUDA simulator (no CUDA driver or GPU was found)."""


class UnfusedCallWarning(NumfuseWarning):
    """A call ran the function through NumPy, unfused, because NumPy's floating-point error state
    (np.errstate, np.seterr) asks to raise, call or log, which kernels cannot do."""


class TargetWarning(NumfuseWarning):
    """Said once per process when target "auto" finds no GPU and runs on the CPU target."""


@functools.lru_cache(maxsize=None)
def warn_once(message: str) -> None:
    """A NumfuseWarning, once per process for each message (a cache, not a setting)."""
    import warnings

    warnings.warn(message, NumfuseWarning, stacklevel=3)


class TakeFullPath(Exception):
    """Internal: the fast path (targets/cuda/fastcall.py) cannot make this call as it is; the full
    path makes it."""


class ScalarOutOfRange(TakeFullPath):
    """Internal: a Python int argument does not fit a dtype the plan casts it to. NumPy's
    answer then depends on the value (an exact comparison, or an OverflowError), so jit
    traces that call again with the argument static."""

    def __init__(self, input_index: int):
        super().__init__(input_index)
        self.input_index = input_index


class OtherStream(TakeFullPath):
    """Internal: a fast call on another stream than its own, for a plan whose split reductions
    keep scratch arrays per stream (two streams sharing one arrival counter would corrupt each
    other's sums); the full path takes that stream's scratch."""


@dataclass(frozen=True)
class SourceLoc:
    """A line of the user's code: where a traced operation came from."""

    filename: str
    lineno: int
    function: str

    @property
    def text(self) -> str:
        return linecache.getline(self.filename, self.lineno).strip()

    def short(self) -> str:
        return f"{os.path.basename(self.filename)}:{self.lineno}"

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno} in {self.function}"


@functools.lru_cache(maxsize=None)
def _internal_dirs() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """numfuse, NumPy and the standard library (contextlib, functools) are never the user's
    code; site-packages below the standard library may be."""
    import numpy

    paths = sysconfig.get_paths()
    numpy_dir = os.path.dirname(os.path.abspath(numpy.__file__))
    internal = tuple(os.path.abspath(d) + os.sep for d in (_PACKAGE_DIR, numpy_dir, paths["stdlib"]))
    external = tuple(os.path.abspath(paths[k]) + os.sep for k in ("purelib", "platlib"))
    return internal, external


@functools.lru_cache(maxsize=4096)
def _is_internal(filename: str) -> bool:
    path = os.path.abspath(filename)
    internal, external = _internal_dirs()
    if path.startswith(internal[:2]):
        return True
    return path.startswith(internal[2:]) and not path.startswith(external)


def called_from_numfuse() -> bool:
    """Whether the caller of the caller is numfuse's (or NumPy's) code, not the user's."""
    return _is_internal(sys._getframe(2).f_code.co_filename)


def user_frame():
    """The innermost stack frame outside numfuse and NumPy (the user's), or None."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not _is_internal(filename) and not filename.startswith("<frozen"):
            return frame
        frame = frame.f_back
    return None


def user_location() -> SourceLoc | None:
    """The innermost stack frame outside numfuse and NumPy: the user's line."""
    frame = user_frame()
    return None if frame is None else SourceLoc(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)


def user_catches(error: type) -> bool:
    """Whether the user's code being traced (its frames, innermost first, down to numfuse's
    own) is inside a `try` whose `except` catches `error`: what may raise it must then run
    where Python can catch it, at a graph break, not later in a kernel or a plan's step. Read
    from the code's exception table (Python 3.11+; on 3.10, no): the innermost handler there
    whose `except` clauses name a class of `error`, or a bare `except:`; a `finally` or a `with`
    block's exit does not count."""
    if sys.version_info < (3, 11):
        return False
    frame = sys._getframe(1)
    while frame is not None and _is_internal(frame.f_code.co_filename):
        frame = frame.f_back
    while frame is not None and not _is_internal(frame.f_code.co_filename):
        if _catches(frame, error):
            return True
        frame = frame.f_back
    return False


def _catches(frame, error: type) -> bool:
    offset = frame.f_lasti
    for start, end, target in _handlers(frame.f_code):
        if start <= offset < end:
            return _handler_catches(frame, target, error)
    return False


@functools.lru_cache(maxsize=256)
def _handlers(code) -> tuple:
    """(start, end, handler) of each entry of `code`'s exception table."""
    return tuple((e.start, e.end, e.target) for e in dis.Bytecode(code).exception_entries)


@functools.lru_cache(maxsize=256)
def _instructions(code) -> dict:
    """`code`'s instructions by offset: (opname, argval)."""
    return {i.offset: (i.opname, i.argval) for i in dis.get_instructions(code)}


_LOADS = ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_FAST", "LOAD_DEREF", "LOAD_ATTR", "BUILD_TUPLE")


def _handler_catches(frame, target: int, error: type) -> bool:
    """Whether the handler at `target` catches `error`: one of its `except` clauses names a
    class of it (the classes it loads before CHECK_EXC_MATCH, each clause tried in turn), or it
    is a bare `except:`; a `finally` or a `with` block's handler does not."""
    code = frame.f_code
    instructions = _instructions(code)
    offsets = sorted(instructions)
    at = offsets.index(target) if target in instructions else None
    if at is None or instructions[offsets[at]][0] != "PUSH_EXC_INFO":
        return False
    at += 1
    while at < len(offsets):
        opname, _ = instructions[offsets[at]]
        if opname == "POP_TOP":
            return True  # a bare `except:`
        stack: list = []
        while at < len(offsets) and instructions[offsets[at]][0] in _LOADS:
            opname, argval = instructions[offsets[at]]
            if opname in ("LOAD_GLOBAL", "LOAD_NAME"):
                stack.append(frame.f_globals.get(argval, getattr(builtins, str(argval), None)))
            elif opname in ("LOAD_FAST", "LOAD_DEREF"):
                stack.append(frame.f_locals.get(argval))
            elif opname == "LOAD_ATTR" and stack:
                stack.append(getattr(stack.pop(), argval, None))
            elif opname == "BUILD_TUPLE":
                count = int(argval)
                stack[len(stack) - count:] = [tuple(stack[len(stack) - count:])]
            at += 1
        if at >= len(offsets) or instructions[offsets[at]][0] != "CHECK_EXC_MATCH" or len(stack) != 1:
            return False  # a `finally`, a `with` block's exit, or what is not read here
        classes = stack[0] if isinstance(stack[0], tuple) else (stack[0],)
        if any(isinstance(c, type) and issubclass(error, c) for c in classes):
            return True
        opname, argval = instructions[offsets[at + 1]] if at + 1 < len(offsets) else ("", None)
        if not opname.startswith("POP_JUMP") or argval not in instructions:
            return False
        at = offsets.index(argval)  # the next clause
    return False


def user_stacklevel() -> int:
    """The `stacklevel` that makes warnings.warn point at the user's line (from the caller)."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and _is_internal(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    return level


def at_user_line(message: str) -> str:
    """`message`, followed by the user's file and line when one is on the stack."""
    loc = user_location()
    if loc is None:
        return message
    text = loc.text
    where = f"{loc}" + (f": {text}" if text else "")
    return f"{message}\n  at {where}"


def tracing_error_in(error: BaseException) -> TracingError | None:
    """`error` itself if it is a TracingError, or the TracingError NumPy raised it from (jit
    then traces again, or runs the function another way)."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, TracingError):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def note_user_line(err: BaseException) -> BaseException:
    """`err` with a note naming the user's line (where one is found), for NumPy's own errors
    that numfuse raises."""
    loc = user_location()
    if loc is not None and hasattr(err, "add_note"):
        err.add_note(f"  (traced by numfuse at {loc}: {loc.text})")
    return err


@contextlib.contextmanager
def user_line_noted():
    """Let NumPy's own errors through unchanged, with a note naming the user's line (found
    only when one is raised: the with statement's frame is still below this one then)."""
    try:
        yield
    except Exception as err:
        note_user_line(err)
        raise


def unsupported(what: str, hint: str = "") -> UnsupportedError:
    message = f"{what} is not supported by numfuse"
    if hint:
        message += f"; {hint}"
    return UnsupportedError(at_user_line(message))
