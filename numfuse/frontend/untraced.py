"""A NumPy call numfuse does not trace, wherever a rule meets one."""

from __future__ import annotations

from ..errors import NeedsGraphBreak, at_user_line


def untraced(ctx, func, args, kwargs, refusal: Exception, what: str, loc=None, may_write: bool = True):
    """A call numfuse does not trace: run on real arrays at a graph break (graph_breaks.py);
    when tracing once, the trace stops (NeedsGraphBreak, or `refusal` with graph_breaks=False).
    `loc`: the user's line, where it is not the innermost (a returned value's)."""
    if ctx.breaks is not None:
        return ctx.breaks.foreign_call(func, args, kwargs, may_write, what)
    reason = at_user_line(what) if loc is None else f"{what}\n  at {loc}: {loc.text}"
    ctx.break_needed = ctx.break_needed or reason
    raise NeedsGraphBreak(reason, refusal)
