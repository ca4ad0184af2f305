"""NumPy's floating-point error modes (`np.errstate`, `np.seterr`) at a call.

numfuse's kernels keep no floating-point status: a division by zero gives NumPy's value (inf),
never NumPy's warning. That is the same answer where NumPy only warns, but not where the caller
asked NumPy to raise (`np.errstate(divide="raise")`), call a function or log: there NumPy stops
the program, and a kernel would carry on with inf. Such a call on NumPy arrays runs the user's
function as written, through NumPy, so that NumPy raises as it would. (Device arrays keep the
kernels: CuPy has no floating-point modes either.) Warn and ignore, NumPy's defaults, keep the
kernels too: the values are NumPy's, only the RuntimeWarning is not given.
"""

from __future__ import annotations

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
    """The categories (divide, over, under, invalid) whose current mode is not warn or ignore."""
    if _ERROR_STATE is None:
        return _stopping(np.geterr())
    state = _ERROR_STATE.get()
    seen, answer = _last_state[0]
    if state is seen:
        return answer
    answer = _stopping(np.geterr())
    _last_state[0] = (state, answer)
    return answer


def _stopping(modes: dict) -> tuple[str, ...]:
    return tuple(c for c in CATEGORIES if modes.get(c) in STOPPING_MODES)


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


def reason(categories: tuple[str, ...]) -> str:
    modes = np.geterr()
    said = ", ".join(f"{c}={modes[c]!r}" for c in categories)
    return (f"NumPy's floating-point error state asks for {said} (np.errstate or np.seterr), which fused "
            "kernels cannot do: this call runs the function through NumPy, unfused")
