"""NumPy's warnings that a call's signature decides, given at every call as NumPy gives them.

Some of NumPy's warnings depend only on dtypes and shapes, never on values: a cast that drops
the imaginary part (ComplexWarning), a deprecated form (`np.cross` of 2-vectors), the mean of
an empty slice. numfuse gives them while it traces, at the user's line; a cached call does not
run the user's Python code, so each warning is kept with the trace (TraceResult.warnings) and
given again at every later call of that signature, with the same category, message, file and
line, through the same registry: Python's filters ("default" once per line, "always", "error",
"ignore") then treat them as they treat NumPy's own.

Two things numfuse does between the calls would make Python show a "default" warning again:
Numba's compiler changes the warnings filters (thousands of times while it compiles), which
makes Python forget what each module's registry says was shown; and a call may trace the
function more than once (a trace abandoned for a graph break, a retrace with a scalar made
static). So a warning its registry already holds is not given again where the filters say
"default" or "module", and a trace gives no more of a warning than an earlier, abandoned trace
of the same call gave (`one_call`).

Warnings that values decide (NumPy's RuntimeWarnings for a division by zero or an overflow) are
not among them: see docs/user-guide.md.
"""

from __future__ import annotations

import collections
import contextlib
import threading
import warnings
from dataclasses import dataclass, field

from ..errors import user_frame

__all__ = ["SignatureWarning", "given_again", "one_call", "warn"]

_local = threading.local()


@dataclass(frozen=True)
class SignatureWarning:
    """One warning as Python's `warnings.warn` gives it from the user's line."""

    category: type
    message: str
    filename: str
    lineno: int
    module_globals: dict = field(compare=False, repr=False)

    @property
    def module(self) -> str:
        return self.module_globals.get("__name__", "<string>")

    def emit(self) -> None:
        registry = self.module_globals.setdefault("__warningregistry__", {})
        action = _action(self)
        if action == "ignore" or action in ("default", "module") and (
                (self.message, self.category, self.lineno if action == "default" else 0) in registry):
            return  # (shown already: the registry's stale version says only that filters changed)
        warnings.warn_explicit(self.message, self.category, self.filename, self.lineno, module=self.module,
                               registry=registry, module_globals=self.module_globals)


def _action(given: SignatureWarning) -> str:
    """The action Python's filters take for `given` (warnings.filters, first match)."""
    for action, message, category, module, lineno in warnings.filters:
        if (message is None or message.match(given.message)) and issubclass(given.category, category) \
                and (module is None or module.match(given.module)) and lineno in (0, given.lineno):
            return action
    return warnings.defaultaction


@contextlib.contextmanager
def one_call():
    """Within: one call of a jitted function, whose traces give each warning as often as the
    most any one of them gave it."""
    outer = getattr(_local, "given", None)
    if outer is None:
        _local.given = collections.Counter()
    try:
        yield
    finally:
        if outer is None:
            _local.given = None


def given_again(given_warnings: tuple) -> None:
    """At a call that runs a cached plan (full or fast path): the trace's warnings, each as
    often as the trace gave it, less those a trace in this same call gave already."""
    shown = getattr(_local, "given", None)
    for given in given_warnings:
        if shown is not None and shown[given] > 0:
            shown[given] -= 1
            continue
        given.emit()


def warn(message: str, category: type) -> None:
    """Give `message` as NumPy would at the user's line, and keep it with the trace being made
    (if any), so that every cached call gives it again."""
    frame = user_frame()
    if frame is None:
        warnings.warn(message, category, stacklevel=2)
        return
    given = SignatureWarning(category, message, frame.f_code.co_filename, frame.f_lineno, frame.f_globals)
    from .numpy_creation import current_context

    ctx = current_context()
    if ctx is not None:
        ctx.signature_warnings.append(given)
        shown = getattr(_local, "given", None)
        if shown is not None:
            # An earlier trace of this call (abandoned) gave it as many times: not again.
            times = ctx.signature_warnings.count(given)
            if times <= shown[given]:
                return
            shown[given] = times
    given.emit()
