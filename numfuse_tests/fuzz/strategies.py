"""The hypothesis strategy for random NumPy programs that numfuse must run as NumPy does.

Inputs first: arrays of every dtype over a random shape of rank 0-4 (size-one and, one program
in ten, zero-size dimensions), each broadcasting against it, in C, Fortran, strided or transposed
layout, with a few NaN, infinities, -0.0 or integer extremes; and Python and NumPy scalars.
Then up to 30 steps, each drawing an operation kind and its operands (mostly the latest value,
so operations chain) and handing it to the builder, which keeps it only if NumPy runs it inside
its domain and stably (builder.py). Every value no operation reads is an output. One program
in three is called a second time, with new values of the same signature.

Shrinking: each step is its own span of choices, which hypothesis can delete; choices shrink
toward the first entries of each list (the common dtypes, the simplest kinds) and toward small
shapes and zeros. What hypothesis leaves, the reducer (reduce.py) cuts further.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
from hypothesis import strategies as st

from . import catalog as C
from . import known_bugs  # noqa: F401  (its predicates are called here while a bug is open)
from . import numerics as N
from .builder import (
    ARRAY,
    MAX_RESULT,
    NUMPY_SCALAR,
    PYTHON_SCALAR,
    Builder,
    Rules,
    Value,
    evaluate,
    literal,
)
from .program import Call, Input, Program

MAX_ELEMENTS = 64  # of an input: the simulator takes ~3 us per element and launch
MAX_STEPS = 30
LAYOUTS = ["C", "F", "strided", "transposed"]
KINDS = ["unary", "binary", "reduce", "binary", "unary", "reduce", "where", "astype", "clip",
         "round", "transpose", "fill", "inplace", "slice", "statistic", "setitem",
         "matmul", "scan", "sort", "gather", "mask", "compose", "matmul", "gather", "compose", "break", "made",
         "scatter"]


class Drawing:
    """The builder plus hypothesis's draw: choosing operands and constants."""

    def __init__(self, draw, builder: Builder):
        self.draw, self.b = draw, builder

    @property
    def values(self) -> list[Value]:
        return self.b.values

    def pick(self, where=lambda v: True, label: str = "operand", other_than: tuple[int, ...] = ()) -> int | None:
        """A value: for a first operand mostly the latest, so that operations chain into deep
        programs; for further operands (`other_than` the ones chosen) mostly any other."""
        candidates = [i for i, v in enumerate(self.values) if where(v)]
        if not candidates:
            return None
        others = [i for i in candidates if i not in other_than] or candidates
        if other_than:
            latest = self.draw(st.integers(0, 2), label=f"{label}: latest") == 2
        else:
            latest = self.draw(st.integers(0, 2), label=f"{label}: latest") != 2
        return others[-1] if latest else self.draw(st.sampled_from(others), label=label)

    def broadcasts_with(self, *indices: int):
        shapes = [self.values[i].shape for i in indices]

        def ok(v: Value) -> bool:
            try:
                return math.prod(np.broadcast_shapes(v.shape, *shapes)) <= MAX_RESULT
            except ValueError:
                return False

        return ok

    def constant_for(self, dtype: np.dtype, label: str):
        """A Python constant that suits `dtype` (one in five of the other kind, promoting it),
        one in six a NumPy scalar (strongly typed, unlike a Python scalar)."""
        pool = C.INT_CONSTANTS if dtype.kind in "biu" else C.FLOAT_CONSTANTS
        if self.draw(st.integers(0, 4), label=f"{label}: other kind") == 0:
            pool = C.FLOAT_CONSTANTS if pool is C.INT_CONSTANTS else C.INT_CONSTANTS
        value = self.draw(st.sampled_from(pool), label=label)
        if self.draw(st.integers(0, 5), label=f"{label}: numpy scalar") == 0:
            typed = self.draw(st.sampled_from(C.DTYPES), label=f"{label}: dtype")
            if C.cast_defined(np.float64(value), typed) and (typed.kind != "u" or value >= 0):
                with np.errstate(all="ignore"):
                    return typed.type(value)
        return value


# -- inputs -------------------------------------------------------------------------------------------


def element_strategy(dtype: np.dtype):
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind == "i":
        return st.integers(-20, 20)
    if dtype.kind == "u":
        return st.integers(0, 40)
    return st.integers(-64, 64).map(lambda k: k / 16)  # exact in every float dtype


def specials(dtype: np.dtype) -> list:
    if dtype.kind == "f":
        return [math.nan, math.inf, -math.inf, -0.0]
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return [int(info.max), int(info.min)] if dtype.kind == "i" else [int(info.max)]
    return [True]


def draw_array(draw, shape: tuple[int, ...], dtype: np.dtype, label: str) -> np.ndarray:
    size = math.prod(shape)
    flat = draw(st.lists(element_strategy(dtype), min_size=size, max_size=size), label=label)
    if dtype.kind == "f":
        scale = draw(st.sampled_from([1.0, 1024.0, 1 / 1024]), label=f"{label} scale")
        flat = [v * scale for v in flat]
    if size and draw(st.integers(0, 2), label=f"{label} has specials") == 0:
        for i, v in draw(st.lists(st.tuples(st.integers(0, size - 1), st.sampled_from(specials(dtype))),
                                  min_size=1, max_size=3), label=f"{label} specials"):
            flat[i] = v
    return np.array(flat, dtype=dtype).reshape(shape)


def draw_inputs(draw, b: Builder) -> None:
    rank = draw(st.sampled_from([1, 2, 3, 2, 3, 4, 0]), label="rank")
    domain = [draw(st.integers(1, 5), label="dim") for _ in range(rank)]
    while math.prod(domain) > MAX_ELEMENTS:
        domain[domain.index(max(domain))] -= 1
    if rank and draw(st.integers(0, 9), label="empty") == 0:
        domain[draw(st.integers(0, rank - 1), label="empty axis")] = 0
    for k in range(draw(st.integers(1, 3), label="arrays")):
        r = draw(st.integers(0, rank), label="input rank") if k else rank
        shape = tuple(1 if draw(st.integers(0, 3), label="size one") == 0 else d for d in domain[rank - r:])
        dtype = draw(st.sampled_from(C.DTYPES), label="dtype")
        x = draw_array(draw, shape, dtype, f"x{k}")
        b.add_input(Input(ARRAY, x, draw(st.sampled_from(LAYOUTS), label="layout")))
    if draw(st.integers(0, 2), label="product operands") == 0:
        draw_product_inputs(draw, b, domain)
    if draw(st.integers(0, 2), label="index arrays") == 0:
        for k in range(draw(st.integers(1, 2), label="index array count")):
            b.add_input(draw_index_input(draw, domain, f"idx{k}"))
    for k in range(draw(st.integers(0, 2), label="scalars")):
        form = draw(st.sampled_from(["float", "int", "numpy", "bool"]), label="scalar form")
        if form == "numpy":
            dtype = draw(st.sampled_from(C.DTYPES), label="scalar dtype")
            b.add_input(Input(NUMPY_SCALAR, draw_array(draw, (), dtype, f"s{k}")[()]))
        else:
            values = {"float": element_strategy(np.dtype(np.float64)), "int": st.integers(-5, 5),
                      "bool": st.booleans()}[form]
            b.add_input(Input(PYTHON_SCALAR, draw(values, label=f"s{k}")))


# The dtypes of matrix products (both operands; NumPy promotes mixed ones).
PRODUCT_DTYPES = [np.dtype(d) for d in ("float64", "float32", "int32", "int8", "bool", "int64")]
# Operand shapes of products large enough that numfuse runs them as a library call (cuBLAS on a
# GPU, NumPy on the simulator): more multiply-adds than library_ops.FUSE_PRODUCT_RATIO times
# their largest array (test_fuzz_generator checks which way each goes).
LIBRARY_PRODUCTS = [((12, 16), (16, 12)), ((9, 24), (24, 10)), ((2, 9, 14), (2, 14, 9)), ((16, 16), (16, 16))]
# ...and smaller ones beside them that it fuses as a sum of products (a matrix times a vector).
FUSED_PRODUCTS = [((16, 16), (16,)), ((3, 16), (16, 4))]
PRODUCT_ELEMENTS = 256  # of a product operand: larger than other inputs, for the library call


def draw_product_inputs(draw, b: Builder, domain: list[int]) -> None:
    """Operands for matrix products: a matrix or vector fitting the domain's last axis (small:
    numfuse fuses their products), or a pair of larger matrices (a library call)."""
    dtype = draw(st.sampled_from(PRODUCT_DTYPES), label="product dtype")
    if draw(st.integers(0, 2), label="large product") == 0:
        shapes = draw(st.sampled_from(LIBRARY_PRODUCTS + FUSED_PRODUCTS), label="product shapes")
        for k, shape in enumerate(shapes):
            other = draw(st.sampled_from([dtype, *PRODUCT_DTYPES]), label="product operand dtype") if k else dtype
            x = draw_array(draw, shape, other, f"m{k}")
            b.add_input(Input(ARRAY, x, draw(st.sampled_from(LAYOUTS), label="layout")))
        return
    last = domain[-1] if domain else 3
    m = draw(st.integers(1, 5), label="product columns")
    shapes = [(last, m), (last,), (m, last)]
    if len(domain) >= 3:
        shapes.append((domain[-3], last, m))
    shape = draw(st.sampled_from(shapes), label="product operand shape")
    x = draw_array(draw, shape, dtype, "m0")
    b.add_input(Input(ARRAY, x, draw(st.sampled_from(LAYOUTS), label="layout")))


def draw_index_input(draw, domain: list[int], label: str) -> Input:
    """An int64 or int32 index array whose values are within the bounds of one axis of the
    domain, negative ones included (they wrap, as in NumPy)."""
    dtype = draw(st.sampled_from([np.dtype(np.int64), np.dtype(np.int32)]), label=f"{label} dtype")
    bound = draw(st.sampled_from([n for n in domain if n > 0] or [3]), label=f"{label} bound")
    shape = draw(st.sampled_from([(1,), (2,), (3,), (4,), (2, 2), (2, 3), ()]), label=f"{label} shape")
    return Input(ARRAY, index_array(draw, shape, dtype, bound, label), bound=bound)


def index_array(draw, shape, dtype, bound: int, label: str) -> np.ndarray:
    size = math.prod(shape)
    flat = draw(st.lists(st.integers(-bound, bound - 1), min_size=size, max_size=size), label=label)
    return np.array(flat, dtype=dtype).reshape(shape)


# -- operations -------------------------------------------------------------------------------------


def _ufunc_rules(u: np.ufunc, constant=None, constant_first=False) -> Rules:
    def domain(args, result):
        if constant is not None:
            args = [constant, *args] if constant_first else [*args, constant]
        return C.in_domain(u, args, result)

    return Rules(f"ufunc {u.__name__}", domain=domain, ufunc=u)


def _spelling(d: Drawing, u: np.ufunc) -> str:
    form = C.OPERATOR_FORMS.get(u) if d.draw(st.booleans(), label="operator form") else None
    return form or (f"np.{u.__name__}({{0}})" if u.nin == 1 else f"np.{u.__name__}({{0}}, {{1}})")


def op_unary(d: Drawing) -> bool:
    # The ufunc first, then an operand it accepts: every ufunc gets its share of programs.
    u = d.draw(st.sampled_from(C.UNARY), label="unary ufunc")
    i = d.pick(lambda v: C.accepts(u, (v.dtype,)), label="unary operand")
    if i is None:
        return False
    return d.b.add(("{out} = " + _spelling(d, u),), (i,), _ufunc_rules(u))


def op_binary(d: Drawing) -> bool:
    u = d.draw(st.sampled_from(C.BINARY), label="binary ufunc")
    i = d.pick(lambda v: C.accepts(u, (v.dtype, v.dtype)), label="left operand")
    if i is None:
        return False
    dtype = d.values[i].dtype
    template = _spelling(d, u)
    if d.draw(st.integers(0, 2), label="constant operand") == 0:
        c = d.constant_for(dtype, "constant")
        first = d.draw(st.booleans(), label="constant first")
        slots = (literal(c), "{0}") if first else ("{0}", literal(c))
        line = "{out} = " + template.format(*slots, out="{out}")
        return d.b.add((line,), (i,), _ufunc_rules(u, c, first))
    j = d.pick(d.broadcasts_with(i), label="right operand", other_than=(i,))
    return d.b.add(("{out} = " + template,), (i, j), _ufunc_rules(u))


def op_reduce(d: Drawing) -> bool:
    i = d.pick(lambda v: v.kind != PYTHON_SCALAR and len(v.shape) > 0, label="reduced operand")
    if i is None:
        i = d.pick(lambda v: v.kind != PYTHON_SCALAR, label="reduced scalar")
    x = d.values[i]
    kind = d.draw(st.sampled_from(C.REDUCTIONS), label="reduction")
    form = d.draw(st.sampled_from(["method", "function", "ufunc"]), label="reduction form")
    ndim = len(x.shape)
    axis = d.draw(st.one_of(
        st.none(), st.integers(-max(ndim, 1), max(ndim - 1, 0)),
        st.lists(st.integers(-ndim, ndim - 1), max_size=ndim).map(tuple) if ndim else st.just(()),
    ), label="axis")
    pass_axis = axis is not None or d.draw(st.booleans(), label="axis=None")
    keepdims = d.draw(st.sampled_from([None, True, False]), label="keepdims")
    dtype = None
    if kind in C.TAKES_DTYPE and d.draw(st.integers(0, 3), label="pass dtype") == 0:
        dtype = d.draw(st.sampled_from(C.DTYPES), label="reduction dtype")
    args = ([f"axis={axis!r}"] if pass_axis else []) + ([f"keepdims={keepdims}"] if keepdims is not None else [])
    args += [f"dtype=np.{dtype.name}"] if dtype is not None else []
    if form == "method":
        call = f"{{0}}.{kind}({', '.join(args)})"
    elif form == "function":
        name = d.draw(st.sampled_from(C.FUNCTION_ALIASES.get(kind, [kind])), label="function name")
        call = f"np.{name}({', '.join(['{0}'] + args)})"
    else:
        if kind not in C.UFUNC_REDUCE:
            return False
        call = f"np.{C.UFUNC_REDUCE[kind]}.reduce({', '.join(['{0}'] + args)})"
        axis = axis if pass_axis else 0  # ufunc.reduce's default
    def domain(args, result):
        if dtype is not None and not C.cast_defined(args[0], dtype):
            return False
        # The mean of nothing is NaN, which NumPy then casts to an integer dtype: undefined in C.
        empty = math.prod(np.shape(args[0])[a] for a in C.reduced_axes(axis, np.ndim(args[0]))) == 0
        return not (kind == "mean" and empty and np.asarray(result).dtype.kind in "biu")

    rules = Rules(f"reduce {kind} {form}", domain=domain, reduction=(kind, axis, bool(keepdims)))
    return d.b.add(("{out} = " + call,), (i,), rules)


STATISTICS = ["var", "std", "argmax", "argmin", "ptp", "count_nonzero", "nansum", "nanmean", "nanmax",
              "nanmin", "nanvar", "nanstd"]
METHODS = {"var", "std", "argmax", "argmin"}


def _ptp_fits(args, result) -> bool:
    """max - min of a signed integer type wraps in NumPy (to a negative value): C leaves the
    overflow undefined."""
    return np.asarray(args[0]).dtype.kind != "i" or bool(np.all(np.asarray(result) >= 0))


def op_statistics(d: Drawing) -> bool:
    """var and std (ddof), argmax and argmin, ptp, count_nonzero and the NaN-ignoring reductions."""
    kind = d.draw(st.sampled_from(STATISTICS), label="statistic")
    nan = kind.startswith("nan")
    i = d.pick(lambda v: v.kind != PYTHON_SCALAR and (not nan or v.dtype.kind == "f"), label="statistic operand")
    if i is None:
        return False
    ndim = len(d.values[i].shape)
    single = st.integers(-max(ndim, 1), max(ndim - 1, 0))
    axes = st.lists(st.integers(-ndim, ndim - 1), max_size=ndim, unique=True).map(tuple) if ndim else st.just(())
    axis = d.draw(st.none() | single if kind in ("argmax", "argmin") else st.none() | single | axes, label="axis")
    args = [f"axis={axis!r}"] if axis is not None or d.draw(st.booleans(), label="axis=None") else []
    keepdims = d.draw(st.sampled_from([None, True, False]), label="keepdims")
    args += [f"keepdims={keepdims}"] if keepdims is not None else []
    ddof = 0
    if kind in ("var", "std", "nanvar", "nanstd") and d.draw(st.booleans(), label="pass ddof"):
        ddof = d.draw(st.integers(0, 1), label="ddof")
        args.append(f"ddof={ddof}")
    if kind in METHODS and d.draw(st.booleans(), label="statistic method"):
        call = f"{{0}}.{kind}({', '.join(args)})"
    else:
        call = f"np.{kind}({', '.join(['{0}'] + args)})"
    exact = kind in ("argmax", "argmin", "count_nonzero")  # which element wins may follow rounding
    domain = _ptp_fits if kind == "ptp" else None
    rules = Rules(f"statistic {kind}", domain=domain, reduction=(f"{kind}:{ddof}", axis, bool(keepdims)),
                  exact_operands=exact)
    return d.b.add(("{out} = " + call,), (i,), rules)


def op_where(d: Drawing) -> bool:
    any_condition = d.draw(st.integers(0, 3), label="any condition") == 0
    c = d.pick(lambda v: any_condition or v.dtype.kind == "b", label="condition")
    if c is None:
        return False
    i = d.pick(d.broadcasts_with(c), label="where x", other_than=(c,))
    if d.draw(st.integers(0, 2), label="constant y") == 0:
        y = literal(d.constant_for(d.values[i].dtype, "where constant"))
        return d.b.add((f"{{out}} = np.where({{0}}, {{1}}, {y})",), (c, i), Rules("where"))
    j = d.pick(d.broadcasts_with(c, i), label="where y", other_than=(c, i))
    return d.b.add(("{out} = np.where({0}, {1}, {2})",), (c, i, j), Rules("where"))


def op_astype(d: Drawing) -> bool:
    i = d.pick(lambda v: v.kind != PYTHON_SCALAR, label="cast operand")
    dtype = d.draw(st.sampled_from(C.DTYPES), label="cast dtype")
    form = d.draw(st.sampled_from(["{{0}}.astype(np.{})", "np.astype({{0}}, np.{})"]), label="cast form")
    rules = Rules("astype", domain=lambda args, r: C.cast_defined(args[0], dtype))
    return d.b.add(("{out} = " + form.format(dtype.name),), (i,), rules)


def op_clip(d: Drawing) -> bool:
    i = d.pick(lambda v: v.kind == ARRAY, label="clipped operand")
    if i is None:
        return False
    dtype = d.values[i].dtype
    bounds, operands = [], [i]
    for side in ("lo", "hi"):
        choice = d.draw(st.sampled_from(["constant", "none", "value"]), label=f"clip {side}")
        if choice == "value":
            operands.append(d.pick(d.broadcasts_with(i), label=f"clip {side} value", other_than=tuple(operands)))
            bounds.append(f"{{{len(operands) - 1}}}")
        elif choice == "none":
            bounds.append("None")
        else:
            bounds.append(literal(d.constant_for(dtype, f"clip {side}")))
    if bounds == ["None", "None"]:
        return False
    form = d.draw(st.sampled_from(["np.clip({0}, {lo}, {hi})", "{0}.clip({lo}, {hi})"]), label="clip form")
    line = "{out} = " + form.replace("{lo}", bounds[0]).replace("{hi}", bounds[1])

    return d.b.add((line,), tuple(operands), Rules("clip", free_zero_sign=True))


def op_round(d: Drawing) -> bool:
    i = d.pick(lambda v: v.kind != PYTHON_SCALAR, label="rounded operand")
    decimals = d.draw(st.sampled_from(C.ROUND_DECIMALS), label="decimals")
    form = d.draw(st.sampled_from(["np.round({{0}}, {})", "{{0}}.round({})", "np.around({{0}}, {})"]),
                  label="round form")

    def domain(args, result):
        x = np.asarray(args[0])
        # NumPy rounds integers in float64 and casts back: defined only where the result fits.
        return x.dtype.kind not in "iu" or decimals >= 0 or C.cast_defined(np.round(x.astype(np.float64), decimals), x.dtype)

    # np.round scales by 10**decimals and back: the scaling rounds like a product.
    rules = Rules("round", domain=domain, ulps=1 if decimals else 0)
    return d.b.add(("{out} = " + form.format(decimals),), (i,), rules)


def op_transpose(d: Drawing) -> bool:
    i = d.pick(lambda v: v.kind == ARRAY, label="transposed operand")
    if i is None:
        return False
    ndim = len(d.values[i].shape)
    perm = tuple(d.draw(st.permutations(range(ndim)), label="perm"))
    form = d.draw(st.sampled_from(["{0}.T", "{0}.transpose({perm})", "np.transpose({0}, {perm})", "np.transpose({0})"]),
                  label="transpose form")
    if "{perm}" not in form:
        perm = tuple(reversed(range(ndim)))
    return d.b.add(("{out} = " + form.replace("{perm}", repr(perm)),), (i,), Rules("transpose", transpose=perm))


STEPS = [None, 1, 2, -1, -2, 3]


def draw_index(d: Drawing, shape: tuple[int, ...], label: str, newaxis: bool = True) -> str | None:
    """A basic index of an array of `shape`: per axis a full slice, a random start:stop:step
    (negative steps included) or (on one axis at most) an integer in range;
    perhaps a None (if `newaxis`), an Ellipsis, or fewer entries than axes. None if empty."""
    parts: list[str] = []
    used_int = False
    for axis, n in enumerate(shape):
        choice = d.draw(st.integers(0, 3), label=f"{label} axis {axis}")
        if choice == 0:
            parts.append(":")
        elif choice == 3 and not used_int and n > 0:
            used_int = True
            parts.append(str(d.draw(st.integers(-n, n - 1), label=f"{label} integer")))
        else:
            bound = st.one_of(st.none(), st.integers(-n - 1, n + 1))
            start = d.draw(bound, label=f"{label} start")
            stop = d.draw(bound, label=f"{label} stop")
            step = d.draw(st.sampled_from(STEPS), label=f"{label} step")
            text = ("" if start is None else str(start)) + ":" + ("" if stop is None else str(stop))
            parts.append(text + ("" if step is None else f":{step}"))
    if parts and d.draw(st.integers(0, 3), label=f"{label} drop trailing") == 0:
        parts = parts[: d.draw(st.integers(0, len(parts) - 1), label=f"{label} kept")]
        if parts and d.draw(st.booleans(), label=f"{label} ellipsis"):
            parts.insert(d.draw(st.integers(0, len(parts)), label=f"{label} ellipsis at"), "...")
    if newaxis and d.draw(st.integers(0, 3), label=f"{label} newaxis") == 0:
        parts.insert(d.draw(st.integers(0, len(parts)), label=f"{label} None at"), "None")
    if not parts:
        return None
    return ", ".join(parts)


def reshapes(shape: tuple[int, ...]) -> list[str]:
    """Shapes an array of `shape` can be reshaped to, as argument text (with -1 where it is
    unambiguous)."""
    size = math.prod(shape)
    out = [f"({size},)", "(-1,)", f"{shape[::-1]!r}", f"(1, {size})", f"({size}, 1)"]
    for a in range(2, 6):
        if size % a == 0 and size:
            out += [f"({a}, {size // a})", f"({a}, -1)", f"(-1, {a})", f"({size // a}, 1, {a})"]
    if size == 0:
        out += ["(0, 3)", "(2, 0)", "(3, -1)"]
    return out


def op_slice(d: Drawing) -> bool:
    """A view: basic indexing (slices, an integer, None, Ellipsis), reshape or ravel."""
    i = d.pick(lambda v: v.kind == ARRAY, label="sliced operand")
    if i is None:
        return False
    shape = d.values[i].shape
    form = d.draw(st.sampled_from(["index", "index", "reshape", "ravel"]), label="view form")
    if form == "index":
        index = draw_index(d, shape, "index")
        if index is None:
            return False
        line = f"{{out}} = {{0}}[{index}]"
    elif form == "reshape":
        target = d.draw(st.sampled_from(reshapes(shape)), label="reshape to")
        spelling = d.draw(st.sampled_from(["{0}.reshape({t})", "np.reshape({0}, {t})", "{0}.reshape(*{t})"]),
                          label="reshape form")
        line = "{out} = " + spelling.replace("{t}", target)
    else:
        line = "{out} = " + d.draw(st.sampled_from(["{0}.ravel()", "np.ravel({0})", "{0}.flatten()"]),
                                   label="ravel form")
    return d.b.add((line,), (i,), Rules(f"view {form}", view=line))


def op_fill(d: Drawing) -> bool:
    i = d.pick(lambda v: v.kind != PYTHON_SCALAR, label="fill prototype")
    name = d.draw(st.sampled_from(["zeros_like", "ones_like", "full_like"]), label="fill")
    args = ["{0}"]
    dtype = d.draw(st.one_of(st.none(), st.sampled_from(C.DTYPES)), label="fill dtype")
    if name == "full_like":
        value = d.constant_for(d.values[i].dtype, "fill value")
        if not C.cast_defined(np.float64(value), dtype or d.values[i].dtype):
            return False
        args.append(literal(value))
    if dtype is not None:
        args.append(f"dtype=np.{dtype.name}")
    return d.b.add((f"{{out}} = np.{name}({', '.join(args)})",), (i,), Rules(name, reads_values=False))


def op_inplace(d: Drawing) -> bool:
    i = d.pick(lambda v: v.kind == ARRAY, label="updated array")
    if i is None:
        return False
    j = d.pick(d.broadcasts_with(i), label="update operand", other_than=(i,))
    operator = d.draw(st.sampled_from(["+=", "-=", "*=", "//="]), label="in-place operator")
    u = {"+=": np.add, "-=": np.subtract, "*=": np.multiply, "//=": np.floor_divide}[operator]
    rules = Rules(f"in-place {operator}", domain=lambda args, r: C.in_domain(u, args, r), ufunc=u)
    return d.b.add(("{out} = {0} * 1", f"{{out}} {operator} {{1}}"), (i, j), rules)


# Views of a local copy written through. NumPy lays `{0} * 1` out like {0}, so a reshape of it
# may be a copy, and numfuse refuses to guess which: reshapes are written through a C-ordered
# `.copy()`, whose reshapes are views.
WRITE_VIEWS = ["{out}", "{out}", "{out}", "{out}.T", "np.moveaxis({out}, 0, -1)", "np.swapaxes({out}, 0, -1)",
               "{out}.ravel()", "{out}.reshape(-1)", "{out}[::-1]", "np.expand_dims({out}, 0)", "reshape"]


def op_setitem(d: Drawing) -> bool:
    """Item assignment on a local copy, or through a view of it: `out[index] = value`,
    `out.T[index] += value`, ..., the value broadcasting to the indexed region (or a
    constant)."""
    i = d.pick(lambda v: v.kind == ARRAY, label="assigned array")
    if i is None:
        return False
    x = d.values[i]
    # `{0} * 1` of a 0-d array is a NumPy scalar, whose "views" are new arrays: write into it.
    view = d.draw(st.sampled_from(WRITE_VIEWS), label="written through") if x.shape else "{out}"
    if view == "reshape":
        view = "{out}.reshape(" + d.draw(st.sampled_from(reshapes(x.shape)), label="written through reshape") + ")"
    try:
        viewed = eval(view.replace("{out}", "v"), {"np": np, "v": np.empty(x.shape)})
    except (IndexError, ValueError):
        return False
    whole = d.draw(st.integers(0, 4), label="whole array") == 0
    index = "..." if whole else draw_index(d, viewed.shape, "assigned index")
    if index is None:
        return False
    try:
        region = viewed[eval(f"np.s_[{index}]", {"np": np})].shape
    except (IndexError, ValueError):
        return False
    operator = d.draw(st.sampled_from(["=", "+=", "=", "-="]), label="assignment operator")
    if d.draw(st.integers(0, 2), label="constant value") == 0:
        value, operands = literal(d.constant_for(x.dtype, "assigned constant")), (i,)
    else:
        def fits(v: Value) -> bool:
            try:
                return np.broadcast_shapes(v.shape, region) == region
            except ValueError:
                return False
        j = d.pick(fits, label="assigned value", other_than=(i,))
        if j is None:
            return False
        value, operands = "{1}", (i, j)
    u = {"=": None, "+=": np.add, "-=": np.subtract}[operator]

    def domain(args, result):
        if u is None:
            return len(args) < 2 or C.cast_defined(args[1], np.asarray(result).dtype)
        return C.in_domain(u, args, result)

    copy = "{out} = ({0} * 1).copy()" if "reshape" in view or "ravel" in view else "{out} = {0} * 1"
    lines = [copy, f"{view}[{index}] {operator} {value}"]
    # More writes into the same array, of other regions (disjoint or not: updates of disjoint
    # regions share a kernel, the others keep NumPy's order).
    for k in range(d.draw(st.integers(0, 3), label="more writes")):
        more = draw_index(d, viewed.shape, f"more index {k}", newaxis=False)
        if more is None:
            continue
        try:
            more_region = viewed[eval(f"np.s_[{more}]", {"np": np})].shape
        except (IndexError, ValueError):
            continue
        reuse = False
        if value == "{1}" and operator == "=":
            try:
                reuse = np.broadcast_shapes(d.values[operands[1]].shape, more_region) == more_region
            except ValueError:
                pass
        more_value = "{1}" if reuse and d.draw(st.booleans(), label=f"more value {k}") else literal(
            d.constant_for(x.dtype, f"more constant {k}"))
        lines.append(f"{view}[{more}] = {more_value}")
    return d.b.add(tuple(lines), operands, Rules(f"setitem {operator}", domain=domain, ufunc=u))


# -- library calls, gathers and masks -----------------------------------------------------------------


def _stand_in(v: Value):
    """A value of v's type, shape and dtype (zeros), for asking NumPy whether an op fits."""
    return np.zeros(v.shape, v.dtype) if v.kind == ARRAY else v.value


def _fits(template: str, operands: list[Value]):
    """The template's result on stand-ins of the operands (ones), or None where NumPy refuses
    it or it is too large. On ones a sum of products gives, at every point, its number of terms."""
    args = [np.ones(v.shape, v.dtype) if v.kind == ARRAY else v.value for v in operands]
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = eval(template.format(*[f"a{k}" for k in range(len(args))]),  # noqa: S307
                       {"np": np, **{f"a{k}": a for k, a in enumerate(args)}})
    except (TypeError, ValueError, IndexError, ArithmeticError):
        return None
    return out if np.size(out) <= MAX_RESULT else None


PRODUCT_FORMS = ["{0} @ {1}", "np.matmul({0}, {1})", "np.dot({0}, {1})", "einsum", "{0} @ {1}.T",
                 "np.matmul({0}, np.swapaxes({1}, -1, -2))", "{0}.T @ {1}", "np.linalg.matmul({0}, {1})"]
EINSUMS = ["ij,jk->ik", "ij,j->i", "i,i->", "...ij,...jk->...ik", "ij,kj->ik", "i,ij->j", "bij,bjk->bik",
           "i,j->ij", "ij,ij->i", "...j,...j->...", "ij,ji->", "jk,ij->ik"]


def op_matmul(d: Drawing) -> bool:
    """A matrix product: @, np.matmul, np.dot or np.einsum of 1-D, 2-D or batched operands."""
    form = d.draw(st.sampled_from(PRODUCT_FORMS), label="product form")
    if form == "np.linalg.matmul" and not hasattr(np.linalg, "matmul"):
        form = "{0} @ {1}"
    operand = lambda v: v.kind == ARRAY and len(v.shape) >= 1 and v.dtype in PRODUCT_DTYPES  # noqa: E731
    i = d.pick(operand, label="product left")
    if i is None:
        return False
    x = d.values[i]
    if form == "einsum":
        j = d.pick(lambda v: operand(v) and any(_fits(f"np.einsum({e!r}, {{0}}, {{1}})", [x, v]) is not None
                                                for e in EINSUMS), label="product right", other_than=(i,))
        if j is None:
            return False
        subscripts = [e for e in EINSUMS if _fits(f"np.einsum({e!r}, {{0}}, {{1}})", [x, d.values[j]]) is not None]
        if not subscripts:
            return False
        template = f"np.einsum({d.draw(st.sampled_from(subscripts), label='einsum subscripts')!r}, {{0}}, {{1}})"
    else:
        template = form
        j = d.pick(lambda v: operand(v) and _fits(template, [x, v]) is not None, label="product right",
                   other_than=(i,))
        if j is None:
            return False
    ones = _fits(template, [x, d.values[j]])
    if ones is None:
        return False
    count = int(np.max(ones, initial=0))  # the terms each result sums

    def error(run, vals, errs, result):
        return N.product_error(run, vals, errs, result, count)

    label = "matmul " + {"{0} @ {1}": "@", "{0} @ {1}.T": "@ .T", "{0}.T @ {1}": ".T @"}.get(form, form.split("(")[0])
    return d.b.add(("{out} = " + template,), (i, j), Rules(label, error=error, free_zero_sign=True))


def op_scan(d: Drawing) -> bool:
    """np.cumsum or np.cumprod (or the methods) along an axis, or of the flattened array."""
    kind = d.draw(st.sampled_from(["cumsum", "cumprod"]), label="scan")
    i = d.pick(lambda v: v.kind != PYTHON_SCALAR, label="scanned operand")
    if i is None:
        return False
    ndim = len(d.values[i].shape)
    axis = d.draw(st.none() | st.integers(-max(ndim, 1), max(ndim - 1, 0)), label="scan axis")
    args = f"axis={axis}" if axis is not None or d.draw(st.booleans(), label="scan axis=None") else ""
    if d.draw(st.booleans(), label="scan method") and d.values[i].kind == ARRAY:
        call = f"{{0}}.{kind}({args})"
    else:
        call = f"np.{kind}({{0}}{', ' + args if args else ''})"

    def error(run, vals, errs, result):
        return N.scan_error(kind, vals[0], errs[0], axis, result)

    return d.b.add(("{out} = " + call,), (i,), Rules(f"scan {kind}", error=error, free_zero_sign=True))


def _sort_error(axis):
    def error(run, vals, errs, result):
        """A sorted value is within the largest error of the values it is sorted among."""
        if errs[0] is None:
            return None
        e = np.broadcast_to(errs[0], np.shape(vals[0]))
        if axis is None or e.ndim == 0:
            return np.full(np.shape(result), float(np.max(e, initial=0.0)))
        return np.broadcast_to(np.max(e, axis=axis, keepdims=True, initial=0.0), np.shape(result))

    return error


def op_sort(d: Drawing) -> bool:
    """np.sort, .sort() on a copy, np.argsort(kind="stable") and .argsort(kind="stable")."""
    kind = d.draw(st.sampled_from(["sort", "argsort", "method sort", "method argsort"]), label="sort")
    i = d.pick(lambda v: v.kind == ARRAY, label="sorted operand")
    if i is None:
        return False
    ndim = len(d.values[i].shape)
    methods = kind.startswith("method")
    axis = d.draw((st.just(-1) if methods and kind.endswith(" sort") else st.none()) | st.integers(-max(ndim, 1),
                                                                                                   max(ndim - 1, 0)),
                  label="sort axis")
    pass_axis = axis is not None or d.draw(st.booleans(), label="sort axis=None")
    if axis is None and not pass_axis:
        axis = -1  # the default
    args = [f"axis={axis}"] if pass_axis else []
    if kind.endswith("argsort"):
        args.append('kind="stable"')
    elif d.draw(st.booleans(), label="stable sort"):
        args.append('kind="stable"')
    if kind == "method sort":
        lines = ("{out} = {0}.copy()", f"{{out}}.sort({', '.join(args)})")
    elif methods:
        lines = (f"{{out}} = {{0}}.argsort({', '.join(args)})",)
    else:
        lines = (f"{{out}} = np.{kind}({', '.join(['{0}'] + args)})",)
    if kind.endswith("argsort"):
        # Which index comes first follows the values' rounding: sort exact values only.
        rules = Rules(f"sort {kind}", exact_operands=True)
    else:
        # Equal values (0.0 and -0.0) may come in either order from an unstable sort.
        rules = Rules(f"sort {kind}", error=_sort_error(axis), free_zero_sign=True)
    return d.b.add(lines, (i,), rules)


GATHERS = ["{0}[{1}]", "{0}[:, {1}]", "np.take({0}, {1}, axis={axis})", "np.take_along_axis({0}, {1}, axis={axis})",
           "{0}[{1}, {2}]", "{0}[..., {1}]", "np.take({0}, {1})", "{0}[{1}[:, None], {2}]", "{0}[1:, {1}]"]


def op_gather(d: Drawing) -> bool:
    """Integer-array indexing: x[idx], x[:, idx], x[i, j], np.take, np.take_along_axis, with index
    arrays of the program (in bounds) or drawn constants, negative indices included."""
    form = d.draw(st.sampled_from(GATHERS), label="gather form")
    i = d.pick(lambda v: v.kind == ARRAY and len(v.shape) >= 1, label="gathered array")
    if i is None:
        return False
    x = d.values[i]
    ndim = len(x.shape)
    axis = d.draw(st.integers(-ndim, ndim - 1), label="gather axis")
    # The axis each index slot indexes (None: the flattened array).
    if form.startswith("np.take("):
        axes = [axis if "axis" in form else None]
    elif "take_along_axis" in form:
        axes = [axis]
    elif "{2}" in form:
        axes = [0, 1]
    else:
        axes = [{"{0}[{1}]": 0, "{0}[:, {1}]": 1, "{0}[..., {1}]": -1, "{0}[1:, {1}]": 1}[form]]
    if any(a is not None and not -ndim <= a < ndim for a in axes):
        return False
    template = form.replace("{axis}", str(axis))
    slots, operands = [], [i]
    for k, a in enumerate(axes):
        n = x.value.size if a is None else x.shape[a]
        along = "take_along_axis" in form
        if d.draw(st.integers(0, 2), label="index constant") == 0:
            if along:
                shape = tuple(d.draw(st.integers(1, 3), label="index length") if ax == a % ndim else s
                              for ax, s in enumerate(x.shape))
            else:
                shape = d.draw(st.sampled_from([(1,), (2,), (3,), (2, 2), (4,)]), label="index shape")
            if n == 0 or math.prod(shape) > MAX_RESULT:
                return False
            values = index_array(d.draw, shape, np.dtype(np.int64), n, "index values")
            if not along and "[:, None]" not in form and values.ndim == 1 and d.draw(st.booleans(), label="index as list"):
                slots.append(repr([int(v) for v in values]))
            else:
                dtype = d.draw(st.sampled_from(["int64", "int32"]), label="index dtype")
                slots.append(f"np.array({values.tolist()!r}, dtype=np.{dtype})")
            continue

        def in_bounds(v: Value, n=n) -> bool:
            if v.dtype.kind not in "iu" or v.kind == PYTHON_SCALAR:
                return False
            if along and len(v.shape) != ndim:
                return False
            values = np.asarray(v.value)
            return bool(np.all((values >= -n) & (values < n)))

        j = d.pick(in_bounds, label="index operand", other_than=tuple(operands))
        if j is None:
            return False
        operands.append(j)
        slots.append(f"{{{len(operands) - 1}}}")
    line = "{out} = " + template.format("{0}", *slots)
    label = form.split("(")[0] if form.startswith("np.") else form.replace("{0}", "x").replace("{1}", "i").replace("{2}", "j")
    return d.b.add((line,), tuple(operands), Rules(f"gather {label}"))


def op_mask(d: Drawing) -> bool:
    """A write through a boolean mask of a copy, the same value for every selected element:
    `y = x * 1.0; y[y > c] = c2`, a mask of the program, np.putmask, np.copyto(where=)."""
    i = d.pick(lambda v: v.kind == ARRAY and len(v.shape) >= 1, label="masked array")
    if i is None:
        return False
    x = d.values[i]
    factor = d.draw(st.sampled_from(["1.0", "1"]), label="mask copy")
    operands = [i]
    if d.draw(st.integers(0, 2), label="mask from a value") == 0:
        def fits(v: Value) -> bool:
            return v.kind == ARRAY and v.dtype.kind == "b" and 0 < len(v.shape) <= len(x.shape)                 and v.shape == x.shape[: len(v.shape)]
        m = d.pick(fits, label="mask", other_than=(i,))
        if m is None:
            return False
        operands.append(m)
        mask = "{1}"
    else:
        comparison = d.draw(st.sampled_from([">", "<", ">=", "<=", "==", "!="]), label="mask comparison")
        mask = f"{{out}} {comparison} {literal(d.constant_for(x.dtype, 'mask bound'))}"
    if d.draw(st.integers(0, 3), label="mask value operand") == 0:
        v = d.pick(lambda v: len(v.shape) == 0, label="mask value", other_than=tuple(operands))
        if v is None:
            return False
        operands.append(v)
        value, value_slot = f"{{{len(operands) - 1}}}", len(operands) - 1
    else:
        constant = d.constant_for(x.dtype, "mask value")
        value, value_slot = literal(constant), None
    write = d.draw(st.sampled_from(["{out}[{mask}] = {value}", "np.putmask({out}, {mask}, {value})",
                                    "np.copyto({out}, {value}, where={mask})"]), label="mask write")
    line = write.replace("{mask}", mask).replace("{value}", value)

    def domain(args, result):
        v = args[value_slot] if value_slot is not None else constant
        return C.cast_defined(v, np.asarray(result).dtype)

    return d.b.add((f"{{out}} = {{0}} * {factor}", line), tuple(operands),
                   Rules(f"mask {write.split('(')[0] if '(' in write else 'setitem'}", domain=domain))


# Scatters into a copy or a view of it; np.put's indices are flat, the others index the view's
# first axis (or its second, `[:, idx]`). Repeated indices: NumPy's last write, or every add.
SCATTER_VIEWS = ["{out}", "{out}", "{out}[1:]", "{out}[::-1]", "{out}.T", "{out}.reshape(-1)"]
SCATTER_FORMS = ["{view}[{idx}] = {value}", "{view}[{idx}] += {value}", "np.add.at({view}, {idx}, {value})",
                 "{view}[:, {idx}] = {value}", "np.put({view}, {idx}, {value})", "{view}[{idx}, 1:] = {value}"]


def op_scatter(d: Drawing) -> bool:
    """Writes through index arrays (constants in bounds, negative ones included) into a copy of
    a value or a view of the copy: x[idx] = v, x[idx] += v, np.add.at, np.put, x[:, idx] = v."""
    i = d.pick(lambda v: v.kind == ARRAY and len(v.shape) >= 1, label="scattered array")
    if i is None:
        return False
    x = d.values[i]
    view = d.draw(st.sampled_from(SCATTER_VIEWS), label="scattered view")
    form = d.draw(st.sampled_from(SCATTER_FORMS), label="scatter form")
    viewed = eval(view.replace("{out}", "v"), {"v": np.empty(x.shape)})  # noqa: S307
    axis = 1 if "[:, " in form else 0
    if "put" in form:
        bound = viewed.size
    elif viewed.ndim > axis and not ("1:]" in form and viewed.ndim < 2):
        bound = viewed.shape[axis]
    else:
        return False
    shape = d.draw(st.sampled_from([(1,), (2,), (3,), (2, 2)]), label="scatter index shape")
    if bound == 0:
        return False
    index = index_array(d.draw, shape, np.dtype(np.int64), bound, "scatter index")
    constant = d.constant_for(x.dtype, "scattered value")
    line = form.replace("{view}", view).replace("{idx}", f"np.array({index.tolist()!r})").replace("{value}", literal(constant))

    def domain(args, result):
        return C.cast_defined(constant, np.asarray(result).dtype)

    label = form.split("(")[0] if form.startswith("np.") else "setitem [idx]"
    return d.b.add(("{out} = ({0} * 1).copy()", line), (i,), Rules(f"scatter {label}", domain=domain))


COMPOSED = ["np.flip({0})", "np.flip({0}, axis={axis})", "np.roll({0}, {shift})", "np.roll({0}, {shift}, axis={axis})",
            "np.diff({0})", "np.diff({0}, n=2, axis={axis})", "np.diff({0}, axis={axis})", "np.outer({0}, {1})",
            "np.concatenate([{0}, {1}], axis={axis})", "np.concatenate(({0}, {1}), axis=None)", "np.hstack([{0}, {1}])",
            "np.fliplr({0})", "np.flipud({0})", "np.vstack([{0}, {1}])"]


def op_compose(d: Drawing) -> bool:
    """Functions numfuse composes from views, gathers and elementwise work: np.flip, np.roll,
    np.diff, np.outer, np.concatenate, np.hstack."""
    form = d.draw(st.sampled_from(COMPOSED), label="composed function")
    i = d.pick(lambda v: v.kind == ARRAY, label="composed operand")
    if i is None:
        return False
    ndim = len(d.values[i].shape)
    axis = d.draw(st.integers(-max(ndim, 1), max(ndim - 1, 0)), label="composed axis")
    shift = d.draw(st.integers(-3, 3), label="roll shift")
    template = form.replace("{axis}", str(axis)).replace("{shift}", str(shift))
    operands = (i,)
    if "{1}" in template:
        j = d.pick(lambda v: _fits(template, [d.values[i], v]) is not None, label="composed second operand",
                   other_than=(i,))
        if j is None:
            return False
        operands = (i, j)
    name = form.split("(")[0].removeprefix("np.")
    u = {"diff": np.subtract, "outer": np.multiply}.get(name)
    return d.b.add(("{out} = " + template,), operands, Rules(f"compose {name}", ufunc=u))


def op_made(d: Drawing) -> bool:
    """An array made from its indices (np.arange, np.linspace, np.eye, np.tri, np.indices,
    np.mgrid: the iota primitive) combined with an operand of a fitting shape."""
    i = d.pick(lambda v: v.kind == ARRAY and len(v.shape) >= 1, label="made-array operand")
    if i is None:
        return False
    shape = d.values[i].shape
    n, rows = shape[-1], shape[-2] if len(shape) >= 2 else 1
    start = d.draw(st.sampled_from([0, 1, -3, 0.5, -2.25]), label="made start")
    step = d.draw(st.sampled_from([1, 2, -1, 0.5, 0.25, 3]), label="made step")
    k = d.draw(st.integers(-3, 3), label="made diagonal")
    forms = [f"np.arange({n})", f"np.arange({start}, {start} + {n} * {step}, {step})[:{n}]",
             f"np.linspace({start}, {start + 3 * step}, {n})", f"np.linspace({start}, {step}, {n}, endpoint=False)",
             f"np.indices({shape!r})[{len(shape) - 1}]", f"np.mgrid[{start}:{start} + {n}]"]
    if len(shape) >= 2:
        forms += [f"np.eye({rows}, {n}, {k})", f"np.tri({rows}, {n}, {k}, dtype=np.int32)",
                  f"np.mgrid[0:{rows}, {start}:{start + n * step}:{step}][1][:, :{n}]", f"np.ogrid[0:{rows}, 0:{n}][0]"]
    made = d.draw(st.sampled_from(forms), label="made array")
    u = d.draw(st.sampled_from([np.add, np.multiply, np.subtract]), label="made combined by")
    operator = {np.add: "+", np.multiply: "*", np.subtract: "-"}[u]
    return d.b.add((f"{{out}} = {{0}} {operator} {made}",), (i,), Rules(f"made {made.split('(')[0]}", ufunc=u))


def op_break(d: Drawing) -> bool:
    """Code that needs values, which numfuse runs at a graph break: a branch on a value, a slice
    bound and a size from data, an untraced NumPy function, np.asarray, and loops that update an
    array in place and stop on its values. Conditions and sizes read exact values only, so that
    rounding cannot take another branch than NumPy's."""
    form = d.draw(st.sampled_from(["branch", "bound", "unique", "asarray", "shift loop", "halving loop"]),
                  label="graph break form")
    exact = lambda v: v.err is None  # noqa: E731
    if form == "branch":
        c = d.pick(lambda v: exact(v) and v.kind == ARRAY, label="branch condition")
        i = d.pick(lambda v: v.kind == ARRAY, label="branch value", other_than=(c,) if c is not None else ())
        if c is None or i is None:
            return False
        test = d.draw(st.sampled_from(["bool(np.any({0}))", "{0}.sum() > 0", "int({0}.max(initial=0)) % 2"]),
                      label="branch test")
        return d.b.add((f"if {test}:", "    {out} = {1} * 2", "else:", "    {out} = {1} - {1}"), (c, i),
                       Rules("graph break: branch", ufunc=np.multiply))
    if form == "bound":
        i = d.pick(lambda v: v.kind == ARRAY and len(v.shape) >= 1, label="sliced by data")
        c = d.pick(lambda v: exact(v) and v.kind == ARRAY, label="slice count", other_than=(i,) if i is not None else ())
        if i is None or c is None:
            return False
        return d.b.add(("{out} = {0}[: int(np.count_nonzero({1})) + 1]",), (i, c),
                       Rules("graph break: slice bound", view="data bound"))
    if form == "unique":
        i = d.pick(lambda v: exact(v) and v.kind == ARRAY, label="unique operand")
        if i is None:
            return False
        return d.b.add(("{out} = np.unique({0})",), (i,), Rules("graph break: np.unique"))
    if form == "asarray":
        i = d.pick(lambda v: v.kind == ARRAY, label="asarray operand")
        if i is None:
            return False
        return d.b.add(("{out} = np.asarray({0}) * 1",), (i,), Rules("asarray (no break in the user's code)", ufunc=np.multiply))
    if form == "shift loop":
        i = d.pick(lambda v: v.kind == ARRAY and len(v.shape) >= 1 and v.dtype.kind in "iuf", label="shifted")
        if i is None:
            return False
        steps = d.draw(st.integers(1, 3), label="shift steps")
        return d.b.add(("{out} = {0} * 1", f"for _k in range({steps}):", "    {out}[1:] += {out}[:-1]"), (i,),
                       Rules("loop: in-place shift", ufunc=np.add))
    i = d.pick(lambda v: exact(v) and v.kind == ARRAY and v.dtype.kind == "f", label="halved")
    if i is None:
        return False
    return d.b.add(("{out} = {0} * 1", "for _k in range(3):", "    if not np.any(np.abs({out}) > 1):",
                    "        break", "    {out} = {out} * 0.5"), (i,), Rules("loop: halving until small"))


OPS = {"break": op_break, "unary": op_unary, "binary": op_binary, "reduce": op_reduce, "where": op_where,
       "astype": op_astype, "clip": op_clip, "round": op_round, "transpose": op_transpose,
       "fill": op_fill, "inplace": op_inplace, "slice": op_slice,
       "statistic": op_statistics, "setitem": op_setitem, "matmul": op_matmul, "scan": op_scan,
       "sort": op_sort, "gather": op_gather, "mask": op_mask, "compose": op_compose, "made": op_made,
       "scatter": op_scatter}
assert set(OPS) == set(KINDS)


@st.composite
def step(draw, b: Builder) -> bool:
    return OPS[draw(st.sampled_from(KINDS), label="op kind")](Drawing(draw, b))


@st.composite
def programs(draw, model: N.ErrorModel = N.SIMULATOR, max_steps: int = MAX_STEPS,
             stop: Callable[[], bool] | None = None) -> Program | None:
    """A random program with its inputs and, per output, the tolerance of each element; None
    when `stop()` says a session is out of time (hypothesis then runs out of new choices fast)."""
    if stop is not None and stop():
        return None
    # The step count comes first: hypothesis's mutations of the inputs (copying one array's
    # choices over another's) shift the choices after them, and would shorten programs.
    steps = draw(st.integers(1, max_steps), label="steps")
    b = Builder(model)
    draw_inputs(draw, b)
    for _ in range(steps):
        draw(step(b))  # each step is one span of choices, which hypothesis can delete whole
    if not b.ops:  # every step was refused: one op that always applies
        b.add(("{out} = np.isfinite({0})",), (0,), Rules("ufunc isfinite"))
    # Every value no operation reads is an output (the four latest), and perhaps one more.
    used = {i for op in b.ops for i in op.operands}
    made = list(range(len(b.inputs), len(b.values)))
    outputs = [k for k in reversed(made) if k not in used][:4]
    others = [k for k in made if k not in outputs]
    if others and draw(st.integers(0, 3), label="extra output") == 0:
        outputs.append(draw(st.sampled_from(others), label="extra output value"))
    program = b.program(outputs)
    # One program in four takes its inputs in a container (a dict, a list, or a tuple of a list
    # and a dict), as ML code passes parameters; half of those also store their first output
    # there (Program.packing's "+store").
    program.packing = draw(st.sampled_from(["", "", "", "", "", "", "dict", "list", "nested", "dict+store",
                                            "list+store", "nested+store"]), label="packing")
    # One program in three is called again with new values of the same signature: the plan and
    # kernels are reused, and runtime scalars and array contents must not have been baked in.
    # Some of those calls change the arrays' layouts or dtypes: a new signature of the same
    # function, traced again beside the first (a cache key missing the dtype or layout would
    # reuse the first's kernels).
    if draw(st.integers(0, 2), label="call again") == 0:
        vary = ("values", "layouts", "dtypes")[draw(st.integers(0, 2), label="again varies")]
        inputs = [redraw(draw, inp, f"again {k}", vary) for k, inp in enumerate(program.inputs)]
        second = evaluate(program, inputs, model)
        if second is None and vary != "values":
            inputs = [redraw(draw, inp, f"again {k}", "values") for k, inp in enumerate(program.inputs)]
            second = evaluate(program, inputs, model)
        if second is not None:
            program.again.append(Call(inputs, second.tolerances(program.outputs)))
    # One program in six passes one array as two arguments (of one shape: the second takes the
    # first's dtype and layout, where the program stays valid).
    pairs = [(i, j) for i, a in enumerate(program.inputs) for j, c in enumerate(program.inputs)
             if i != j and a.kind == c.kind == ARRAY and a.bound is None and c.bound is None
             and a.value.shape == c.value.shape]
    if pairs and draw(st.integers(0, 5), label="shared argument") == 0:
        i, j = draw(st.sampled_from(pairs), label="shared pair")
        inputs = list(program.inputs)
        inputs[j] = Input(ARRAY, inputs[i].value, inputs[i].layout)
        shared = evaluate(program, inputs, model)
        if shared is not None:
            program.inputs, program.tolerances, program.shared = inputs, shared.tolerances(program.outputs), (i, j)
    # One program in ten also runs its first call from several threads at once.
    program.concurrent = draw(st.integers(0, 9), label="concurrent") == 0
    return program


# The dtypes a call that varies them gives an array (its kind's other widths, and float64).
OTHER_DTYPES = {"f": ["float32", "float64", "float16"], "i": ["int64", "int32", "int8"], "u": ["uint8", "uint32"],
                "b": ["bool"], "c": ["complex128", "complex64"]}


def redraw(draw, inp: Input, label: str, vary: str = "values") -> Input:
    """New values for an argument, of the same kind, type, shape, dtype and layout (an index
    array's within its bound); with `vary`, arrays in other layouts or of other dtypes."""
    if inp.kind == ARRAY and inp.bound is not None:
        value = index_array(draw, inp.value.shape, inp.value.dtype, inp.bound, label)
        return Input(ARRAY, value, inp.layout, bound=inp.bound)
    if inp.kind == ARRAY and vary == "layouts":
        layout = draw(st.sampled_from([k for k in LAYOUTS if k != inp.layout]), label=f"{label} layout")
        return Input(ARRAY, draw_array(draw, inp.value.shape, inp.value.dtype, label), layout)
    if inp.kind == ARRAY and vary == "dtypes":
        dtype = np.dtype(draw(st.sampled_from(OTHER_DTYPES.get(inp.value.dtype.kind, [inp.value.dtype.name])),
                              label=f"{label} dtype"))
        return Input(ARRAY, draw_array(draw, inp.value.shape, dtype, label), inp.layout)
    if inp.kind == ARRAY:
        return Input(ARRAY, draw_array(draw, inp.value.shape, inp.value.dtype, label), inp.layout)
    if inp.kind == NUMPY_SCALAR:
        return Input(NUMPY_SCALAR, draw_array(draw, (), inp.value.dtype, label)[()])
    values = {bool: st.booleans(), int: st.integers(-5, 5), float: element_strategy(np.dtype(np.float64))}
    return Input(PYTHON_SCALAR, draw(values[type(inp.value)], label=label))
