"""The loop nest of one kernel: what it iterates over, loads, computes, accumulates and stores.

This description is target-neutral: it says nothing of threads or blocks, only which loops there
are (outer dims, and for reductions inner dims reduced into accumulators), which statements run
at each point, and a schedule that a target maps to threads (targets/cuda/codegen.py). A reduction runs
in phases: each phase is one pass over a row's reduced points and completes its accumulators, which
later phases read (softmax: the max, then the sum of exponentials, then a pass that stores). A
buffer read in several phases may be cached on chip by its first one. Here the README's
`z = np.exp(x) * y + 1.0; return z, z.sum(axis=1)` on (4, 6) arrays:

    kernel nf_red_exp_multiply_add_sum  reduction[rows]
      in  in_a:f32[4,6]  in_b:f32[4,6]
      out out_e:f32[4,6]  out_f:f32[4]
      for o0 < no0:  (no0=4)
        acc0:f32 = 0.0 (add)
        for r0 < nr0:  (nr0=6)
          v0 = load in_a[o0, r0]
          v1:f32 = exp v0
          v2 = load in_b[o0, r0]
          v3:f32 = multiply v1 v2
          v4:f32 = add v3 1.0:f32
          acc0 = add acc0 v4
          store out_e[o0, r0] = v4
        store out_f[o0] = acc0
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

import numpy as np

from ..ir.dtypes import short_name
from ..errors import SourceLoc
from ..ir.indexing import DivMod, Lin
from ..ir.graph import Literal

# An index is a loop variable's name, a constant (0 for a broadcast or size-one dimension), or
# an indexing.Lin / DivMod of loop variables (`2*i0 + 1`, `i0 // 6`), printed as Python.
Index = Union[str, int, Lin, DivMod]
# An operand is a value's name or a typed constant.
Operand = Union[str, Literal]


@dataclass(frozen=True)
class Dim:
    """A loop: variable `name` runs over range(size); `param` is the kernel argument holding size."""

    name: str
    param: str
    size: int


@dataclass(frozen=True)
class BufferParam:
    """An array argument. `view` is the shape the kernel sees (a reshape of the buffer). A
    `strided` buffer is seen at its own shape and through its own strides: it may be any
    layout (a strided argument, or one indexed at computed points)."""

    name: str
    dtype: np.dtype
    view: tuple[int, ...]
    role: str  # "in" | "out"
    strided: bool = False


@dataclass(frozen=True)
class ScalarParam:
    """A runtime scalar argument of the traced function, already cast to `dtype`."""

    name: str
    dtype: np.dtype
    input_index: int


@dataclass(frozen=True)
class CountParam:
    """A constant passed as a kernel argument of `dtype` so that the kernel's code is the same
    for every size: the count a mean divides by (ir.SizeConst, `count0`), an int64 offset in an
    index or a concatenation's bound (`off0`), or a constant of the user's formula, float or
    integer (`const0`, a `coefficient`: lower.py, Lowerer._constant), so that the kernels of a
    loop whose constants change from one iteration to the next share one code."""

    name: str
    dtype: np.dtype
    value: object  # a NumPy scalar of dtype
    coefficient: bool = False


@dataclass(frozen=True)
class Load:
    dst: str
    buffer: str
    index: tuple[Index, ...]


@dataclass(frozen=True)
class Compute:
    """dst = op(args) in `dtype`; `type_dtype` fills the template's T (the loop dtype)."""

    dst: str
    op: str  # an ops.ELEMENTWISE name, or "convert"
    args: tuple[Operand, ...]
    dtype: np.dtype
    type_dtype: np.dtype


@dataclass(frozen=True)
class Iota:
    """dst (int64) = `index`, the point's own index along an axis: the values of np.arange,
    np.eye and np.indices, computed where they are read instead of loaded from memory."""

    dst: str
    index: Index


@dataclass(frozen=True)
class Store:
    buffer: str
    index: tuple[Index, ...]
    src: Operand


@dataclass(frozen=True)
class Accumulate:
    acc: str
    src: Operand


@dataclass(frozen=True)
class OnlineAccumulate:
    """softmax's max and sum of exponentials in one pass (the row's maximum so far rescales the
    sum): max_acc = max(max_acc, src); sum_acc = sum_acc * exp(old max - max_acc) +
    exp(src - max_acc)."""

    max_acc: str
    sum_acc: str
    src: "Operand"


@dataclass(frozen=True)
class Check:
    """Where the op's runtime check (ops.RuntimeCheck) holds on `args`, record error `code`."""

    code: int
    op: str
    args: tuple[Operand, ...]
    type_dtype: np.dtype


@dataclass(frozen=True)
class Guard:
    """Run `body` only where every loop variable in `zero` is 0 (a smaller output's points)."""

    zero: tuple[str, ...]
    body: tuple


@dataclass(frozen=True)
class Select:
    """dst (of `dtype`) = the value of the first branch whose range holds `index` (a
    concatenation: each range of the result reads its own operand). Branch k runs its `body`
    and takes `src` where index < bounds[k]; the last branch takes every other point."""

    dst: str
    dtype: np.dtype
    index: Index
    bounds: tuple[Index, ...]  # one fewer than branches: kernel arguments (`off1`)
    branches: tuple[tuple[tuple, "Operand"], ...]  # (body, src)


@dataclass(frozen=True)
class Part:
    """One pointwise loop nest inside a kernel that runs several (plan/horizontal.py: pointwise
    kernels that touch no common point share a kernel). Its points are the kernel's flat points
    from `start` on; its own loop variables `dims` are unravelled from the flat index minus
    `start` (or, on the CPU, it is a loop of its own over them: targets/cpu/codegen.py)."""

    start: Index  # a count argument (`start1`), or 0 for the first part
    dims: tuple[Dim, ...]  # sizes are count arguments (`p1_n0`), so one code serves every size
    body: tuple


@dataclass(frozen=True)
class Parts:
    """Run the first part whose range holds the flat index `index`: part k takes the points
    below bounds[k] (each the next part's start), the last part every other point."""

    index: str
    bounds: tuple[Index, ...]
    parts: tuple[Part, ...]


Stmt = Union[Load, Compute, Iota, Store, Accumulate, OnlineAccumulate, Check, Guard, Select, Parts]

# The int32[1] buffer kernels with runtime checks write error codes to.
ERRORS_BUFFER = "nf_errors"


@dataclass(frozen=True)
class Accumulator:
    name: str
    combine: str  # an ops.ELEMENTWISE name, "argmax" / "argmin", or "online_sum"
    dtype: np.dtype  # of the values combined
    identity: object  # a NumPy scalar of dtype
    partner: str = ""  # an online_sum's maximum accumulator
    # A scan's (np.cumsum): its points combine one after another in the row's order, and the
    # statements after its Accumulate read its running value (the scan at that point).
    running: bool = False
    # A sum of values its reduction casts (np.mean of ints, x.sum(dtype=np.float64) of float32):
    # NumPy casts the row into buffers of this many points and adds each buffer's sum to the
    # total in turn; 0: the row is one sum.
    blocks: int = 0

    @property
    def indexed(self) -> bool:
        """argmax and argmin also carry the flat reduced index of their value (`{name}_i`)."""
        return self.combine in ("argmax", "argmin")


@dataclass(frozen=True)
class Phase:
    """One pass over the reduced points of a row. Its accumulators are complete, combined over the
    whole row, before the next phase starts; later phases and the epilogue read them."""

    accumulators: tuple[Accumulator, ...]
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class LoopNest:
    name: str
    kind: str  # "pointwise" | "reduction"
    # pointwise: "flat" (one loop) or "2d" (several: the last across threads, the others once per
    # row of threads). reduction: "rows" (the reduced points of a row are adjacent in memory:
    # threads side by side take neighbouring reduced points) or "columns" (neighbouring outputs
    # are adjacent: threads side by side take neighbouring outputs).
    schedule: str
    buffers: tuple[BufferParam, ...]
    scalars: tuple[ScalarParam, ...]
    outer: tuple[Dim, ...]
    inner: tuple[Dim, ...]
    phases: tuple[Phase, ...]  # a pointwise kernel: one phase without accumulators
    epilogue: tuple[Stmt, ...]
    cached: tuple[str, ...] = ()  # buffers a row keeps on chip from the first phase that loads it
    split: bool = False  # a row's reduced points are spread over several blocks (one phase only)
    counts: tuple[CountParam, ...] = ()
    # The choices made from sizes that shape the code (see strategy.compiled_for): another size
    # that changes one of them compiles another kernel.
    compiled_for: tuple[str, ...] = field(default=(), compare=False)
    sources: tuple[SourceLoc, ...] = field(default=(), compare=False)

    @property
    def accumulators(self) -> tuple[Accumulator, ...]:
        return tuple(a for p in self.phases for a in p.accumulators)

    @property
    def scans(self) -> bool:
        """Whether a phase holds a running accumulator: its rows run point by point, in order."""
        return any(a.running for a in self.accumulators)

    @property
    def body(self) -> tuple[Stmt, ...]:
        """Every statement of every phase (for walks over the statements)."""
        return tuple(s for p in self.phases for s in p.body)

    @property
    def outer_size(self) -> int:
        return int(np.prod([d.size for d in self.outer], dtype=np.int64))

    @property
    def inner_size(self) -> int:
        return int(np.prod([d.size for d in self.inner], dtype=np.int64))

    def buffer(self, name: str) -> BufferParam:
        for b in self.buffers:
            if b.name == name:
                return b
        raise KeyError(name)

    @property
    def strategy(self) -> str:
        """The schedule and its options, as the kernel header and `explain` print them."""
        options = [self.schedule]
        if self.cached:
            options.append("cached " + " ".join(self.cached))
        if self.split:
            options.append("split")
        parts = [s for s in self.body if isinstance(s, Parts)]
        if parts:
            options.append(f"{len(parts[0].parts)} parts")
        return ", ".join(options)

    def __str__(self) -> str:
        return format_loopnest(self)


def _operand(op: Operand) -> str:
    return str(op) if isinstance(op, Literal) else op


def _index(index: tuple[Index, ...]) -> str:
    return ", ".join(str(i) for i in index)


def format_statements(stmts, indent: str, dtypes: dict) -> list[str]:
    """Statements as lines of text; `dtypes`: each accumulator's combine, for Accumulate."""
    lines = []
    for s in stmts:
        if isinstance(s, Load):
            lines.append(f"{indent}{s.dst} = load {s.buffer}[{_index(s.index)}]")
        elif isinstance(s, Compute):
            args = " ".join(_operand(a) for a in s.args)
            param = f"[{short_name(s.dtype)}]" if s.op == "convert" else ""
            lines.append(f"{indent}{s.dst}:{short_name(s.dtype)} = {s.op}{param} {args}")
        elif isinstance(s, Iota):
            lines.append(f"{indent}{s.dst}:i64 = index {s.index}")
        elif isinstance(s, Store):
            lines.append(f"{indent}store {s.buffer}[{_index(s.index)}] = {_operand(s.src)}")
        elif isinstance(s, Accumulate):
            lines.append(f"{indent}{s.acc} = {dtypes[s.acc]} {s.acc} {_operand(s.src)}")
        elif isinstance(s, OnlineAccumulate):
            lines.append(f"{indent}{s.max_acc}, {s.sum_acc} = online_max_sum {s.max_acc} {s.sum_acc} {_operand(s.src)}")
        elif isinstance(s, Check):
            args = " ".join(_operand(a) for a in s.args)
            lines.append(f"{indent}check {s.op} {args} else error {s.code}")
        elif isinstance(s, Guard):
            cond = " and ".join(f"{z} == 0" for z in s.zero)
            lines.append(f"{indent}if {cond}:")
            lines.extend(format_statements(s.body, indent + "  ", dtypes))
        elif isinstance(s, Select):
            for k, (body, src) in enumerate(s.branches):
                if k < len(s.bounds):
                    lines.append(f"{indent}{'el' if k else ''}if {s.index} < {s.bounds[k]}:")
                else:
                    lines.append(f"{indent}else:")
                lines.extend(format_statements(body, indent + "  ", dtypes))
                lines.append(f"{indent}  {s.dst}:{short_name(s.dtype)} = {_operand(src)}")
        elif isinstance(s, Parts):
            for k, part in enumerate(s.parts):
                start = f" - {part.start}" if part.start != 0 else ""
                loops = ", ".join(f"{d.name} < {d.param}" for d in part.dims) or "one point"
                test = f"if {s.index} < {s.bounds[k]}" if k < len(s.bounds) else "else"
                lines.append(f"{indent}{'el' if k and k < len(s.bounds) else ''}{test}:  part {k}: "
                             f"{loops} from {s.index}{start}")
                lines.extend(format_statements(part.body, indent + "  ", dtypes))
    return lines


def walk(stmts):
    """Every statement, those inside guards and selects included."""
    for s in stmts:
        yield s
        if isinstance(s, Guard):
            yield from walk(s.body)
        elif isinstance(s, Select):
            for body, _ in s.branches:
                yield from walk(body)
        elif isinstance(s, Parts):
            for part in s.parts:
                yield from walk(part.body)


def format_loopnest(nest: LoopNest, sizes: bool = True) -> str:
    """The loop nest as text; without `sizes`, the same text for every shape it serves."""

    def sig(b: BufferParam) -> str:
        view = ",".join(map(str, b.view)) if sizes else ",".join("_" * len(b.view))
        return f"{b.name}:{short_name(b.dtype)}[{view}]"

    lines = [f"kernel {nest.name}  {nest.kind}[{nest.strategy}]"]
    ins = "  ".join(sig(b) for b in nest.buffers if b.role == "in")
    ins += "".join(f"  {s.name}:{short_name(s.dtype)}" for s in nest.scalars)
    ins += "".join(f"  {c.name}:{short_name(c.dtype)}" + (f"={c.value.item()!r}" if sizes else "") for c in nest.counts)
    outs = "  ".join(sig(b) for b in nest.buffers if b.role == "out")
    lines.append(f"  in  {ins}".rstrip())
    lines.append(f"  out {outs}".rstrip())
    combine = {a.name: a.combine for a in nest.accumulators}
    indent = "  "
    for d in nest.outer:
        lines.append(f"{indent}for {d.name} < {d.param}:" + (f"  ({d.param}={d.size})" if sizes else ""))
        indent += "  "
    if not nest.outer:
        lines.append(f"{indent}once:")
        indent += "  "
    for k, phase in enumerate(nest.phases):
        for a in phase.accumulators:
            index = " @index" if a.indexed else ""
            of = f" of exp(x - {a.partner})" if a.partner else ""
            running = ", running" if a.running else ""
            running += f", in NumPy's buffers of {a.blocks}" if a.blocks else ""
            lines.append(f"{indent}{a.name}:{short_name(a.dtype)}{index} = {a.identity.item()!r} ({a.combine}{of}{running})")
        body_indent = indent
        for d in nest.inner:
            # Sizes are printed once, at the first loop.
            shown = sizes and k == 0
            lines.append(f"{body_indent}for {d.name} < {d.param}:" + (f"  ({d.param}={d.size})" if shown else ""))
            body_indent += "  "
        lines.extend(format_statements(phase.body, body_indent, combine))
    lines.extend(format_statements(nest.epilogue, indent, combine))
    return "\n".join(lines)
