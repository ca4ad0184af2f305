"""NumPy's warnings that a call's signature decides, given at every call as NumPy gives them.

Some of NumPy's warnings depend only on dtypes and shapes, never on values: a cast that drops
the imaginary part (ComplexWarning), a deprecated form (`np.cross` of 2-vectors), the mean of
an empty slice. numfuse gives them while it traces, at the user's line; a cached call does not
run the user's Python code, so each warning is kept with the trace (TraceResult.warnings) and
given again at every later call of that signature, with the same category, message, file and
line, through the same registry: Python's filters ("default" once per line, "always", "error",
"ignore") then treat them as they treat NumPy's own.

Warnings that values decide (NumPy's RuntimeWarnings for a division by zero or an overflow) are
not among them: see docs/user-guide.md.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

from ..errors import user_frame

__all__ = ["SignatureWarning", "warn"]


@dataclass(frozen=True)
class SignatureWarning:
    """One warning as Python's `warnings.warn` gives it from the user's line."""

    category: type
    message: str
    filename: str
    lineno: int
    module_globals: dict = field(compare=False, repr=False)

    def emit(self) -> None:
        registry = self.module_globals.setdefault("__warningregistry__", {})
        warnings.warn_explicit(self.message, self.category, self.filename, self.lineno,
                               module=self.module_globals.get("__name__", "<string>"), registry=registry,
                               module_globals=self.module_globals)


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
    given.emit()
