"""A generated program: its inputs, its operations as lines of Python, and its outputs.

One representation serves three uses, so that what runs is exactly what is printed:

- `source()` is the text of a plain NumPy function `f(x0, x1, s0, ...)`;
- `function()` execs that text into a real function, which the fuzzer runs through NumPy and
  through `numfuse.jit`;
- `snippet()` is a ready-to-run script: the function, its inputs as `np.array(...)` literals
  and a comparison of numfuse's results with NumPy's.

Operations are templates over operand slots (`np.add({0}, {1})`, `{0}.sum(axis=1)`), bound to
values by position, so that a shrunk program can drop unused operations and renumber the rest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

ARRAY, NUMPY_SCALAR, PYTHON_SCALAR = "array", "numpy scalar", "python scalar"


@dataclass
class Input:
    """One argument of the program: an array (in a layout), a NumPy scalar or a Python scalar."""

    kind: str
    value: Any
    layout: str = "C"  # arrays only: "C", "F", "strided" or "transposed" (see `laid_out`)
    # An index array's values lie in [-bound, bound) (negative ones wrap, as in NumPy): a second
    # call redraws them there, so that its gathers stay in bounds. None: any values.
    bound: int | None = None

    def argument(self):
        """The value passed to the program (arrays in their layout, a fresh copy each call)."""
        if self.kind == ARRAY:
            return laid_out(np.array(self.value), self.layout)
        return self.value

    def literal(self) -> str:
        if self.kind == ARRAY:
            return layout_literal(array_literal(self.value), self.layout, np.ndim(self.value))
        if self.kind == NUMPY_SCALAR:
            return f"np.{self.value.dtype.name}({scalar_literal(self.value.item())})"
        return scalar_literal(self.value)


@dataclass
class Op:
    """One operation: Python statements assigning `{out}`, reading operand slots {0}, {1}, ...

    `operands` are positions in the program's value list (inputs first, then each op's result).
    """

    lines: tuple[str, ...]
    operands: tuple[int, ...]
    rules: Any = field(default=None, compare=False, repr=False)  # builder.Rules: how it is checked

    def render(self, names: list[str], out: str) -> list[str]:
        args = [names[i] for i in self.operands]
        return [line.format(*args, out=out) for line in self.lines]


@dataclass
class Call:
    """Another call of the same jitted function: new arguments of the same signature (shapes,
    dtypes, layouts, scalar types), which reuse the traced plan and compiled kernels."""

    inputs: list[Input]
    tolerances: list[Any]
    packing: str = ""  # see Program.packing
    shared: tuple[int, int] | None = None  # see Program.shared

    def arguments(self) -> list:
        return pack(share([inp.argument() for inp in self.inputs], self.shared), self.packing)


@dataclass
class Program:
    inputs: list[Input]
    ops: list[Op]
    outputs: list[int]  # positions in the value list
    # Per output: an absolute error bound per element (0 where the value must be exact), from
    # the fuzzer's error model (numerics.py).
    tolerances: list[Any] = field(default_factory=list)
    again: list[Call] = field(default_factory=list)
    # "": one parameter per input; "dict": the inputs in one dict argument ({"x0": ...}), "list":
    # in one list, "nested": a tuple of (a list of the arrays, a dict of the scalars), as ML code
    # passes its parameters (numfuse flattens containers into their leaves). "+store" after
    # one: the function also puts its first output into that container (args["out"] = v, or
    # appends it), as a layer keeps what its backward pass needs: the caller's container must
    # hold NumPy's value after the call (frontend/effects.py).
    packing: str = ""
    # (i, j): the first call passes input i's array object as input j too (equal values), as
    # f(x, x) does: which arguments share memory is part of numfuse's signature (aliasing.py).
    shared: tuple[int, int] | None = None
    # The first call also runs from several Python threads at once, each on its own arguments.
    concurrent: bool = False

    def __repr__(self) -> str:  # hypothesis prints this; the snippet is the useful form
        return f"<program: {len(self.inputs)} inputs, {len(self.ops)} ops, {len(self.outputs)} outputs>"

    def calls(self) -> list[Call]:
        first = Call(self.inputs, self.tolerances, self.packing, self.shared)
        return [first, *(Call(c.inputs, c.tolerances, self.packing) for c in self.again)]

    def names(self) -> list[str]:
        names, arrays, scalars = [], 0, 0
        for inp in self.inputs:
            if inp.kind == ARRAY:
                names.append(f"x{arrays}")
                arrays += 1
            else:
                names.append(f"s{scalars}")
                scalars += 1
        return names + [f"v{k}" for k in range(len(self.ops))]

    def source(self, name: str = "f") -> str:
        names = self.names()
        params = ", ".join(names[: len(self.inputs)])
        body = []
        if self.packing:
            body.append(f"{params}, = {unpack_expression(names[: len(self.inputs)], self.inputs, self.packing)}"
                        if params else "pass")
            params = "args"
        for k, op in enumerate(self.ops):
            body += op.render(names, names[len(self.inputs) + k])
        outs = ", ".join(names[i] for i in self.outputs)
        if self.packing.endswith("+store"):
            body.append(stored_statement(self.packing, names[self.outputs[0]]))
        body.append(f"return ({outs},)" if len(self.outputs) == 1 else f"return {outs}")
        return f"def {name}({params}):\n" + "".join(f"    {line}\n" for line in body)

    def function(self, name: str = "f"):
        namespace = {"np": np}
        exec(compile(self.source(name), f"<numfuse fuzz program {name}>", "exec"), namespace)  # noqa: S102
        return namespace[name]

    def arguments(self) -> list:
        return pack(share([inp.argument() for inp in self.inputs], self.shared), self.packing)

    def pruned(self) -> Program:
        """The same program without the operations and inputs no output depends on, renumbered."""
        n_in = len(self.inputs)
        needed = set(self.outputs)
        for k in range(len(self.ops) - 1, -1, -1):
            if n_in + k in needed:
                needed.update(self.ops[k].operands)
        inputs = [i for i in range(n_in) if i in needed]
        kept = [k for k in range(len(self.ops)) if n_in + k in needed]
        position = {old: new for new, old in enumerate(inputs + [n_in + k for k in kept])}
        ops = [Op(self.ops[k].lines, tuple(position[i] for i in self.ops[k].operands), self.ops[k].rules)
               for k in kept]
        again = [Call([c.inputs[i] for i in inputs], c.tolerances) for c in self.again]
        shared = None
        if self.shared is not None and all(i in position for i in self.shared):
            shared = (position[self.shared[0]], position[self.shared[1]])
        return Program([self.inputs[i] for i in inputs], ops, [position[i] for i in self.outputs],
                       self.tolerances, again, self.packing, shared, self.concurrent)

    def snippet(self, note: str = "") -> str:
        """A standalone script that runs the program through NumPy and numfuse and asserts that
        they agree as the fuzzer requires (exact where the tolerance is 0)."""
        names = self.names()[: len(self.inputs)]
        lines = ["import numpy as np", "import numfuse", "", ""]
        if note:
            lines[2:2] = ["# " + line for line in note.splitlines()]
        lines.append(self.source())
        lines += [f"{name} = {inp.literal()}" for name, inp in zip(names, self.inputs)]
        lines += ["# Calls of one jitted function: (arguments, per output the largest difference",
                  "# allowed, 0: exact). Calls after the first reuse its compiled kernels.", "calls = ["]
        for k, call in enumerate(self.calls()):
            args = list(names) if k == 0 else [inp.literal() for inp in call.inputs]
            if call.shared is not None:  # the same array object twice
                args[call.shared[1]] = args[call.shared[0]]
            args = pack_literal(args, call.inputs, self.packing)
            atols = [float(np.max(t, initial=0.0)) for t in call.tolerances] or [0.0] * len(self.outputs)
            lines.append(f"    (({', '.join(args)},), {atols!r}),")
        lines.append("]")
        lines += SNIPPET_CHECK.splitlines()
        return "\n".join(lines) + "\n"


SNIPPET_CHECK = '''jitted = numfuse.jit(f, numpy_fallback=False)
for args, atols in calls:
    with np.errstate(all="ignore"):
        expected = f(*args)
    got = jitted(*args)
    for i, (g, e, atol) in enumerate(zip(got, expected, atols)):
        assert type(g) is type(e), (i, type(g), type(e))
        g, e = np.asarray(g), np.asarray(e)
        assert (g.shape, g.dtype) == (e.shape, e.dtype), (i, g.shape, g.dtype, e.shape, e.dtype)
        if e.dtype.kind != "f":
            np.testing.assert_array_equal(g, e, err_msg=f"output {i}")
            continue
        np.testing.assert_allclose(g.astype(float), e.astype(float), rtol=0, atol=atol, equal_nan=True,
                                   err_msg=f"output {i}")
        if atol == 0:
            np.testing.assert_array_equal(np.signbit(g), np.signbit(e), err_msg=f"output {i}: signs")
print("numfuse and NumPy agree")'''


# -- containers ----------------------------------------------------------------------------------


def share(values: list, shared: tuple[int, int] | None) -> list:
    """The arguments with input j replaced by input i's object (Program.shared)."""
    if shared is not None:
        values[shared[1]] = values[shared[0]]
    return values


def stored_statement(packing: str, value: str) -> str:
    """The statement that puts `value` into the container argument (Program.packing "+store")."""
    packing = packing.removesuffix("+store")
    if packing == "dict":
        return f"args['out'] = {value}"
    if packing == "list":
        return f"args.append({value})"
    return f"args[1]['out'] = {value}"


def stored(args: list, packing: str):
    """What the call's container holds where the function stores its first output, or None."""
    if not packing.endswith("+store"):
        return None
    container = args[0] if not packing.startswith("nested") else args[0][1]
    return container[-1] if isinstance(container, list) else container.get("out")


def pack(values: list, packing: str) -> list:
    """The call's arguments: the inputs as they are, or in one container (Program.packing)."""
    packing = packing.removesuffix("+store")
    if not packing:
        return values
    if packing == "dict":
        return [{f"a{k}": v for k, v in enumerate(values)}]
    if packing == "list":
        return [list(values)]
    arrays = [v for v in values if isinstance(v, np.ndarray)]
    scalars = {f"s{k}": v for k, v in enumerate(values) if not isinstance(v, np.ndarray)}
    return [(arrays, scalars)]


def pack_literal(texts: list[str], inputs: list, packing: str) -> list[str]:
    """The call's arguments in program text, packed as `pack` packs them."""
    packing = packing.removesuffix("+store")
    if not packing:
        return texts
    if packing == "dict":
        return ["{" + ", ".join(f"'a{k}': {t}" for k, t in enumerate(texts)) + "}"]
    if packing == "list":
        return ["[" + ", ".join(texts) + "]"]
    arrays = [t for t, inp in zip(texts, inputs) if inp.kind == ARRAY]
    scalars = [f"'s{k}': {t}" for k, (t, inp) in enumerate(zip(texts, inputs)) if inp.kind != ARRAY]
    return ["([" + ", ".join(arrays) + "], {" + ", ".join(scalars) + "})"]


def unpack_expression(names: list[str], inputs: list, packing: str) -> str:
    """The expression that unpacks `args` into the inputs' names, in order."""
    packing = packing.removesuffix("+store")
    if packing == "dict":
        return "(" + ", ".join(f"args['a{k}']" for k in range(len(names))) + ",)"
    if packing == "list":
        return "(" + ", ".join(f"args[{k}]" for k in range(len(names))) + ",)"
    parts, a = [], 0
    for k, inp in enumerate(inputs):
        if inp.kind == ARRAY:
            parts.append(f"args[0][{a}]")
            a += 1
        else:
            parts.append(f"args[1]['s{k}']")
    return "(" + ", ".join(parts) + ",)"


# -- layouts --------------------------------------------------------------------------------------


def laid_out(x: np.ndarray, layout: str) -> np.ndarray:
    """The same values in C order, Fortran order, as a strided view, or as the transposed view
    of a C array (the last three only where the rank makes them differ)."""
    if layout == "F" and x.ndim >= 2:  # np.asfortranarray makes a 0-d array 1-d
        return np.asfortranarray(x)
    if layout == "strided" and x.ndim:
        return np.repeat(x, 2, axis=-1)[..., ::2]
    if layout == "transposed" and x.ndim >= 2:
        return np.ascontiguousarray(x.T).T
    return x


def layout_literal(text: str, layout: str, ndim: int) -> str:
    if layout == "F" and ndim >= 2:
        return f"np.asfortranarray({text})"
    if layout == "strided" and ndim:
        return f"np.repeat({text}, 2, axis=-1)[..., ::2]"
    if layout == "transposed" and ndim >= 2:
        return f"np.ascontiguousarray({text}.T).T"
    return text


# -- literals -------------------------------------------------------------------------------------


def scalar_literal(v) -> str:
    """Python source for a Python scalar that evaluates to exactly `v`."""
    if isinstance(v, (bool, np.bool_)):
        return repr(bool(v))
    if isinstance(v, (int, np.integer)):
        return repr(int(v))
    v = float(v)
    if math.isnan(v):
        return "np.nan"
    if math.isinf(v):
        return "np.inf" if v > 0 else "-np.inf"
    return repr(v)


def array_literal(a: np.ndarray) -> str:
    a = np.asarray(a)
    dtype = f"np.{a.dtype.name}"
    if a.size == 0:
        return f"np.zeros({a.shape!r}, dtype={dtype})"

    def nested(x):
        if x.ndim == 0:
            return scalar_literal(x.item())
        return "[" + ", ".join(nested(row) for row in x) + "]"

    return f"np.array({nested(a)}, dtype={dtype})"
