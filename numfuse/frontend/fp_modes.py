"""NumPy's floating-point error modes (`np.errstate`, `np.seterr`, and warnings filters that
turn NumPy's RuntimeWarning into an exception) at a call, and while a function is traced.

numfuse's kernels keep no floating-point status: a division by zero gives NumPy's value (inf),
never NumPy's warning. That is the same answer where NumPy only warns, but not where the caller
asked NumPy to raise (`np.errstate(divide="raise")`), call a function or log: there NumPy stops
the program, and a kernel would carry on with inf. Such a call on NumPy arrays runs the user's
function as written, through NumPy, so that NumPy raises as it would. (Device arrays keep the
kernels: CuPy has no floating-point modes either.) Warn and ignore, NumPy's defaults, keep the
kernels too: the values are NumPy's, only the RuntimeWarning is not given; but a warning that
a `warnings` filter makes an error (`warnings.simplefilter("error")`) stops the program too.

The same modes set inside the function (`with np.errstate(divide="raise"):` around NumPy code
that it catches FloatingPointError from) are seen while tracing: the tracer asks at each
operation (`stopping_categories`), and such a function runs as written, through NumPy.
"""

from __future__ import annotations

import warnings

import numpy as np

# The modes that change what a program does, not only what it prints to stderr.
STOPPING_MODES = frozenset({"raise", "call", "print", "log"})
CATEGORIES = ("divide", "over", "under", "invalid")

try:  # NumPy 2: the error state is a context variable, read in tens of nanoseconds
    from numpy._core._multiarray_umath import _extobj_contextvar as _ERROR_STATE
except ImportError:  # pragma: no cover - another NumPy layout: np.geterr() at each call (about 1 us)
    _ERROR_STATE = None

# The last error state seen and its answer, as one tuple so that threads read a matching pair:
# a cache, keyed by the state object's identity (held here, so the identity is not reused while
# it is the key).
_last_state: list = [(None, ())]


def stopping_categories() -> tuple[str, ...]:
    """The categories (divide, over, under, invalid) whose current mode stops a program: not
    ignore, nor warn where warnings stay warnings."""
    filters = warnings.filters
    if _ERROR_STATE is None:
        return _stopping(np.geterr(), _warnings_raise())
    key = (_ERROR_STATE.get(), id(filters), len(filters))
    seen, answer = _last_state[0]
    if key == seen:
        return answer
    answer = _stopping(np.geterr(), _warnings_raise())
    _last_state[0] = (key, answer)
    return answer


def _stopping(modes: dict, warnings_raise: bool) -> tuple[str, ...]:
    stopping = STOPPING_MODES | {"warn"} if warnings_raise else STOPPING_MODES
    return tuple(c for c in CATEGORIES if modes.get(c) in stopping)


def _warnings_raise() -> bool:
    """Whether the warnings filters make NumPy's RuntimeWarning an exception: the first filter
    for all messages of every module that covers RuntimeWarning says "error"."""
    for action, message, category, module, lineno in warnings.filters:
        if issubclass(RuntimeWarning, category) and message is None and module is None and not lineno:
            return action == "error"
    return False


def host_only(values, library_of) -> bool:
    """No value (nor item of a list, tuple or dict value) is a device array. `library_of`: the
    device array library of a value, or None (targets/cuda/libraries.py)."""
    for value in values:
        items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else (value,)
        for item in items:
            library = None if isinstance(item, np.ndarray) else library_of(item)
            if library is not None and not library.on_host:
                return False
    return True


def errstate_stops(categories: tuple[str, ...]) -> bool:
    """Whether np.errstate or np.seterr itself asks to stop (not only the warnings filters),
    which a call run unfused says with a warning (one that such filters would make an error)."""
    modes = np.geterr()
    return any(modes[c] in STOPPING_MODES for c in categories)


def reason(categories: tuple[str, ...], inside: str | None = None) -> str:
    """Why a call runs unfused; `inside`: where the function set the modes itself."""
    modes = np.geterr()
    said = ", ".join(f"{c}={modes[c]!r}" for c in categories if modes[c] != "warn")
    if said:
        said = f"NumPy's floating-point error state asks for {said} (np.errstate or np.seterr)"
    else:
        said = "the warnings filters make NumPy's RuntimeWarning an error"
    if inside is not None:
        return f"{said} inside the function ({inside}), which fused kernels cannot do: it runs through NumPy, unfused"
    return f"{said}, which fused kernels cannot do: this call runs the function through NumPy, unfused"
