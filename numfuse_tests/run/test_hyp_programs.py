"""Whole programs against NumPy: hypothesis writes random chains of elementwise operations,
reductions (over random axes, with keepdims), transposes, np.where, np.clip, casts, in-place
updates and Python scalar arguments over inputs that broadcast against each other (size-one and
zero-size dimensions, C, Fortran and strided layouts), and returns several values of different
shapes. The fusion planner must give NumPy's results whatever it fuses. Then np.where, np.clip,
zeros_like/ones_like/full_like, astype and transposes on their own, over every dtype.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import numfuse
from numfuse.ir.dtypes import REAL
from numfuse_tests.helpers import assert_same, check, check_like_numpy

DTYPES = list(REAL)  # every operation; complex: test_hyp_complex.py
SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck))
CAP = 1e6  # no value of a generated program grows past this: no integer overflow anywhere


def grid(lo: float, hi: float):
    """Multiples of 1/16: exact in every float dtype, sums exact in any order."""
    return st.integers(int(lo * 16), int(hi * 16)).map(lambda k: k / 16)


# -- layouts ------------------------------------------------------------------------------------


def with_layout(x: np.ndarray, layout: str) -> np.ndarray:
    """The same values as `x`, laid out in C order, Fortran order, as a strided view, or as
    the transpose of a C array."""
    if layout == "F":
        return np.asfortranarray(x)
    if layout == "strided" and x.ndim:
        wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
        wide[..., ::2] = x
        view = wide[..., ::2]
        assert np.array_equal(view, x, equal_nan=True)
        return view
    if layout == "transposed" and x.ndim >= 2:
        return np.ascontiguousarray(x.T).T
    return np.ascontiguousarray(x)


LAYOUTS = st.sampled_from(["C", "F", "strided", "transposed"])


# -- random programs ----------------------------------------------------------------------------

UNARY = {
    "negative": (np.negative, lambda b: b),
    "abs": (np.abs, lambda b: b),
    "tanh": (np.tanh, lambda b: 1.0),
    "sin": (np.sin, lambda b: 1.0),
    "cos": (np.cos, lambda b: 1.0),
    "sqrt_abs": (lambda v: np.sqrt(np.abs(v) + 1.0), lambda b: math.sqrt(b + 1.0)),
    "square": (lambda v: v * v, lambda b: b * b),
    "half": (lambda v: v / 2, lambda b: b / 2),
    "to_f64": (lambda v: v.astype(np.float64), lambda b: b),
    "clip": (lambda v: np.clip(v, -1.5, 2), lambda b: min(b, 2.0)),
    "shift": (lambda v: 3 - v * 2, lambda b: 3 + 2 * b),
}
BINARY = {
    "add": (np.add, lambda a, b: a + b),
    "subtract": (lambda u, v: u - v, lambda a, b: a + b),
    "multiply": (lambda u, v: u * v, lambda a, b: a * b),
    "maximum": (np.maximum, max),
    "minimum": (np.minimum, max),
    "inplace_add": (None, lambda a, b: a + b),  # w = u * 1; w += v
}
REDUCTIONS = ["sum", "mean", "max", "min"]


def magnitude(x) -> float:
    x = np.asarray(x)
    finite = x[np.isfinite(x)] if x.dtype.kind == "f" else x
    return float(np.max(np.abs(finite.astype(np.float64)))) if finite.size else 0.0


def apply_step(step, vals, cond, s):
    kind = step[0]
    if kind == "unary":
        return UNARY[step[1]][0](vals[step[2]])
    if kind == "binary":
        name, i, j = step[1:]
        if name == "inplace_add":
            w = vals[i] * 1
            w += vals[j]
            return w
        return BINARY[name][0](vals[i], vals[j])
    if kind == "scalar":
        return vals[step[1]] * s + 1
    if kind == "reduce":
        name, i, axis, keepdims = step[1:]
        return getattr(vals[i], name)(axis=axis, keepdims=keepdims)
    if kind == "center":  # a reduction broadcast back against its input
        name, i, axis = step[1:]
        return vals[i] - getattr(vals[i], name)(axis=axis, keepdims=True)
    if kind == "transpose":
        i, perm = step[1:]
        return vals[i].T if perm is None else vals[i].transpose(perm)
    if kind == "where":
        c, i, j = step[1:]
        return np.where(cond[c] > 0, vals[i], vals[j])
    raise AssertionError(step)


def run_program(steps, outputs, n_inputs, args):
    """The program on its arguments (NumPy arrays, or numfuse's traced values)."""
    inputs, s = args[:n_inputs], args[n_inputs]
    vals = list(inputs)
    for step in steps:
        vals.append(apply_step(step, vals, inputs, s))
    return tuple(vals[k] for k in outputs)


@st.composite
def programs(draw):
    rank = draw(st.sampled_from([0, 1, 2, 2, 3, 3]), label="rank")
    domain = tuple(draw(st.lists(st.integers(0, 5), min_size=rank, max_size=rank), label="domain"))
    n_inputs = draw(st.integers(1, 3), label="inputs")
    inputs = []
    for k in range(n_inputs):
        rank = draw(st.integers(0, len(domain)))
        shape = tuple(d if draw(st.booleans()) else 1 for d in domain[len(domain) - rank:]) if rank else ()
        dtype = draw(st.sampled_from([np.float64, np.float64, np.int32, np.int64]))
        values = grid(-4, 4) if dtype == np.float64 else st.integers(-8, 8)
        x = draw(hnp.arrays(dtype, shape, elements=values), label=f"input {k}")
        inputs.append(with_layout(x, draw(LAYOUTS, label=f"layout {k}")))
    s = draw(st.one_of(st.integers(-3, 3), grid(-2, 2)), label="scalar argument")
    vals = [np.asarray(x) for x in inputs]
    bounds = [magnitude(x) for x in inputs]
    reduced = [1 for _ in inputs]
    steps = []
    for _ in range(draw(st.integers(1, 8), label="steps")):
        kind = draw(st.sampled_from(["unary", "binary", "binary", "scalar", "reduce", "reduce", "center", "transpose", "where"]))
        i = draw(st.one_of(st.just(len(vals) - 1), st.integers(0, len(vals) - 1)))  # often the latest
        step, bound, count = None, bounds[i], reduced[i]
        if kind == "unary":
            name = draw(st.sampled_from(sorted(UNARY)))
            step, bound = ("unary", name, i), UNARY[name][1](bounds[i])
        elif kind == "binary":
            j = draw(st.integers(0, len(vals) - 1))
            name = draw(st.sampled_from(sorted(BINARY)))
            try:
                shape = np.broadcast_shapes(vals[i].shape, vals[j].shape)
            except ValueError:
                continue
            if name == "inplace_add" and shape != vals[i].shape:
                continue
            if math.prod(shape) <= 200:
                step, bound = ("binary", name, i, j), BINARY[name][1](bounds[i], bounds[j])
                count = max(reduced[i], reduced[j])
        elif kind == "scalar":
            step, bound = ("scalar", i), bounds[i] * 3 + 1
        elif kind == "reduce" and vals[i].ndim:
            name = draw(st.sampled_from(REDUCTIONS))
            ndim = vals[i].ndim
            axis = draw(st.one_of(
                st.none(),
                st.integers(-ndim, ndim - 1),
                st.lists(st.integers(0, ndim - 1), unique=True, min_size=1, max_size=ndim).map(tuple),
            ))
            keepdims = draw(st.booleans())
            axes = range(ndim) if axis is None else [a % ndim for a in ((axis,) if isinstance(axis, int) else axis)]
            n = math.prod(vals[i].shape[a] for a in axes)
            if n == 0 and name in ("max", "min"):
                name = "sum"  # max of nothing raises; tested in test_hyp_reductions
            step = ("reduce", name, i, axis, keepdims)
            bound = bounds[i] * max(n, 1) if name == "sum" else bounds[i]
            count = reduced[i] * max(n, 1)
        elif kind == "center" and vals[i].ndim:
            name = draw(st.sampled_from(["mean", "max", "sum"]))
            axis = draw(st.integers(-vals[i].ndim, vals[i].ndim - 1))
            if vals[i].shape[axis] == 0 and name == "max":
                name = "mean"
            step = ("center", name, i, axis)
            n = max(vals[i].shape[axis], 1)
            bound = bounds[i] * (n + 1) if name == "sum" else 2 * bounds[i]
            count = reduced[i] * n
        elif kind == "transpose" and vals[i].ndim >= 2:
            perm = draw(st.one_of(st.none(), st.permutations(range(vals[i].ndim)).map(tuple)))
            step = ("transpose", i, perm)
        elif kind == "where":
            c = draw(st.integers(0, n_inputs - 1))
            j = draw(st.integers(0, len(vals) - 1))
            try:
                shape = np.broadcast_shapes(inputs[c].shape, vals[i].shape, vals[j].shape)
            except ValueError:
                continue
            if math.prod(shape) <= 200:
                step, bound = ("where", c, i, j), max(bounds[i], bounds[j])
                count = max(reduced[i], reduced[j])
        if step is None or bound > CAP:
            continue
        try:
            with np.errstate(all="ignore"):
                value = np.asarray(apply_step(step, vals, inputs, s))
        except TypeError:
            continue  # NumPy refuses it (int32 += float64): not a program to compare
        vals.append(value)
        bounds.append(bound)
        reduced.append(count)
        steps.append(step)
    if not steps:
        steps.append(("unary", "tanh", 0))
        vals.append(np.tanh(vals[0]))
        reduced.append(reduced[0])
    made = list(range(n_inputs, len(vals)))
    outputs = [made[-1]] + draw(st.lists(st.sampled_from(made[:-1]), max_size=3, unique=True), label="outputs") if made[:-1] else [made[-1]]
    outputs = sorted(outputs, key=lambda k: -k) if draw(st.booleans()) else outputs
    return inputs, s, steps, outputs, max(reduced[k] for k in outputs)


@settings(max_examples=60, **SETTINGS)
@given(program=programs())
def test_random_programs_match_numpy(program):
    inputs, s, steps, outputs, reduced = program
    n = len(inputs)

    def f(*args):
        return run_program(steps, outputs, n, args)

    # Summation orders differ after inexact operations (tanh, mean, ...): a tolerance scaled
    # far beyond rounding, far below what a wrong index or identity gives.
    check(f, *inputs, s, reduced=max(reduced, 1) * 10**4)


@settings(max_examples=20, **SETTINGS)
@given(
    big=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4).filter(lambda sh: 0 in sh),
    data=st.data(),
)
def test_smaller_outputs_next_to_an_empty_output(big, data):
    """An output whose shape broadcasts into an empty domain must still be computed: x * 3 is
    not empty even when x + y is."""
    rank = data.draw(st.integers(0, len(big)), label="rank")
    small = tuple(1 if d == 0 else d for d in big[len(big) - rank:]) if rank else ()
    x = data.draw(hnp.arrays(np.float64, small, elements=grid(-4, 4)), label="x")
    y = np.zeros(big)

    def f(x, y):
        return x + y, x * 3, np.sin(x), (x * 2).sum()

    check(f, x, y, reduced=max(1, x.size))


# -- np.where -----------------------------------------------------------------------------------

SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
TRIPLES = hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, min_side=0, max_side=4)


def small_values(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind == "u":
        return st.integers(0, 20)
    if dtype.kind == "i":
        return st.integers(-20, 20)
    return st.one_of(st.floats(-20, 20, width=dtype.itemsize * 8), st.sampled_from([math.nan, math.inf, -math.inf]))


def operand(data, dtype, shape, label):
    """An array of dtype, or a Python scalar, or a NumPy scalar."""
    form = data.draw(st.sampled_from(["array", "array", "python", "numpy"]), label=f"{label} form")
    if form == "array":
        return data.draw(hnp.arrays(dtype, shape, elements=small_values(dtype)), label=label)
    if form == "numpy":
        return data.draw(small_values(dtype).map(np.dtype(dtype).type), label=label)
    return data.draw(st.one_of(st.integers(0, 20), st.floats(-20, 20), st.booleans()), label=label)


@settings(max_examples=30, **SETTINGS)
@given(a=st.sampled_from(DTYPES), b=st.sampled_from(DTYPES), shapes=TRIPLES, data=st.data())
def test_where(a, b, shapes, data):
    c_shape, x_shape, y_shape = shapes.input_shapes
    cond = data.draw(hnp.arrays(np.bool_, c_shape), label="cond")
    x = operand(data, a, x_shape, "x")
    y = operand(data, b, y_shape, "y")
    check_like_numpy(lambda c, x, y: np.where(c, x, y), cond, x, y)
    check_like_numpy(lambda c, x: (np.where(c, x, 0), np.where(c, 1.5, x)), cond, x)


@settings(max_examples=30, **SETTINGS)
@given(dtype=st.sampled_from(DTYPES), shape=SHAPES, data=st.data())
def test_where_on_computed_conditions(dtype, shape, data):
    x = data.draw(hnp.arrays(dtype, shape, elements=small_values(dtype)), label="x")

    def f(x):
        return np.where(x > 1, x, -x) if dtype.kind != "b" else np.where(x, x, ~x), np.where(x == x, 1, 0)

    check_like_numpy(f, x)


# -- np.clip ------------------------------------------------------------------------------------


@settings(max_examples=40, **SETTINGS)
@given(dtype=st.sampled_from(DTYPES), data=st.data())
def test_clip(dtype, data):
    shapes = data.draw(TRIPLES, label="shapes").input_shapes
    x = data.draw(hnp.arrays(dtype, shapes[0], elements=small_values(dtype)), label="x")
    form = data.draw(st.sampled_from(["scalars", "arrays", "lower only", "upper only", "method", "keywords"]), label="form")
    lo = data.draw(st.one_of(st.integers(0, 5), st.floats(-5, 5)), label="lo")
    hi = data.draw(st.one_of(st.integers(5, 15), st.floats(5, 15)), label="hi")
    if form == "scalars":
        check_like_numpy(lambda x: np.clip(x, lo, hi), x)
    elif form == "arrays":
        lo_a = data.draw(hnp.arrays(dtype, shapes[1], elements=small_values(dtype)), label="lo array")
        hi_a = data.draw(hnp.arrays(dtype, shapes[2], elements=small_values(dtype)), label="hi array")
        check_like_numpy(lambda x, lo, hi: np.clip(x, lo, hi), x, lo_a, hi_a)
    elif form == "lower only":
        check_like_numpy(lambda x: np.clip(x, lo, None), x)
    elif form == "upper only":
        check_like_numpy(lambda x: np.clip(x, None, hi), x)
    elif form == "method":
        check_like_numpy(lambda x, lo: x.clip(lo, hi), x, lo)
    else:
        check_like_numpy(lambda x: (np.clip(x, min=lo), np.clip(x, max=hi)), x)


# -- zeros_like, ones_like, full_like -----------------------------------------------------------


@settings(max_examples=30, **SETTINGS)
@given(a=st.sampled_from(DTYPES), b=st.sampled_from(DTYPES + [None]), shape=SHAPES, data=st.data())
def test_fill_like(a, b, shape, data):
    x = data.draw(hnp.arrays(a, shape, elements=small_values(a)), label="x")
    fill = data.draw(st.one_of(st.integers(0, 100), st.floats(0, 100), st.booleans(), st.integers(0, 100).map(np.int16)), label="fill")

    def f(x):
        return (np.zeros_like(x, dtype=b), np.ones_like(x, dtype=b), np.full_like(x, fill, dtype=b),
                np.zeros_like(x) + x, np.full_like(x, 7))

    check_like_numpy(f, x)


# -- astype -------------------------------------------------------------------------------------


def cast_values(src, dst):
    """Values whose cast from src to dst NumPy defines: float to integer only in range (and not
    negative for unsigned), integers wrap, floats round and overflow to inf, NaN to bool."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src.kind == "b":
        return st.booleans()
    if src.kind in "iu":
        info = np.iinfo(src)
        return st.one_of(st.integers(max(int(info.min), -300), min(int(info.max), 300)), st.sampled_from([int(info.min), int(info.max)]))
    width = src.itemsize * 8
    if dst.kind in "iu":
        # i + k/16 truncates to i or i + 1, both inside dst's range; exact in float32.
        info = np.iinfo(dst)
        lo = 0 if dst.kind == "u" else max(int(info.min) + 1, -(10**6))
        hi = min(int(info.max) - 1, 10**6)
        return st.builds(lambda i, k: i + k / 16, st.integers(lo, hi), st.integers(0, 15))
    return st.one_of(st.floats(allow_nan=False, width=width), st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 1e-30]))


@settings(max_examples=60, **SETTINGS)
@given(src=st.sampled_from(DTYPES), dst=st.sampled_from(DTYPES), shape=SHAPES, data=st.data())
def test_astype(src, dst, shape, data):
    x = data.draw(hnp.arrays(src, shape, elements=cast_values(src, dst)), label="x")

    def f(x):
        return x.astype(dst), np.astype(x, dst), (x.astype(dst) == x.astype(dst))

    check_like_numpy(f, x)


# -- transposes ---------------------------------------------------------------------------------


@settings(max_examples=30, **SETTINGS)
@given(dtype=st.sampled_from(DTYPES), shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5), data=st.data())
def test_transposes(dtype, shape, data):
    x = data.draw(hnp.arrays(dtype, shape, elements=small_values(dtype)), label="x")
    perm = data.draw(st.permutations(range(len(shape))).map(tuple), label="perm")
    y = data.draw(hnp.arrays(dtype, tuple(shape[p] for p in perm), elements=small_values(dtype)), label="y")
    x = with_layout(x, data.draw(LAYOUTS, label="layout"))

    def f(x, y):
        t = x.transpose(perm)
        return t, x.T, np.transpose(x), t | y if dtype.kind in "biu" else t + y, t.max(axis=0), x.T.T, x.transpose(*perm)

    if 0 in shape:
        check_like_numpy(lambda x, y: f(x, y)[:4], x, y)  # max over an empty axis raises
    else:
        check_like_numpy(f, x, y)


# -- in-place updates ---------------------------------------------------------------------------


@settings(max_examples=25, **SETTINGS)
@given(dtype=st.sampled_from([np.dtype(d) for d in (np.int32, np.int64, np.float32, np.float64)]), data=st.data())
def test_in_place_updates_of_temporaries(dtype, data):
    x_shape, y_shape = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, max_side=4), label="shapes").input_shapes
    shape = np.broadcast_shapes(x_shape, y_shape)
    x = data.draw(hnp.arrays(dtype, shape, elements=small_values(dtype).filter(lambda v: math.isfinite(v))), label="x")
    y = data.draw(hnp.arrays(dtype, y_shape, elements=small_values(dtype).filter(lambda v: math.isfinite(v))), label="y")

    def f(x, y, s):
        w = x * 1
        alias = w
        w += y
        w *= 2
        w -= s
        v = x + 0
        v //= 3
        return w, alias, v, x

    check_like_numpy(f, x, y, 3)


# -- calling conventions and returned structures -------------------------------------------------


@settings(max_examples=15, **SETTINGS)
@given(shape=hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=4), data=st.data())
def test_scalar_argument_used_as_an_axis(shape, data):
    """An int argument that the function uses as an axis is made static: each axis value gives
    its own, correct result, also when calls alternate."""
    x = data.draw(hnp.arrays(np.float64, shape, elements=grid(-4, 4)), label="x")
    axes = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=2, max_size=4), label="axes")

    def f(x, axis, s):
        return x.sum(axis=axis) * s, x.max(axis=axis, keepdims=True)

    jf = numfuse.jit(f)
    for k, axis in enumerate(axes):
        expected = f(x, axis, k + 0.5)
        assert_same(jf(x, axis, k + 0.5), expected, reduced=x.size)


def test_keyword_and_default_arguments():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)

    def f(x, s=2.0, *, k=3, **extra):
        return x * s + k + extra.get("bias", 0), x.sum(axis=extra.get("axis", 0))

    jf = numfuse.jit(f)
    for args, kwargs in [((x,), {}), ((x, 0.5), {}), ((x,), {"s": -1.0, "k": 7}),
                         ((x,), {"k": 1, "bias": 2.5}), ((x, 3), {"axis": 1})]:
        assert_same(jf(*args, **kwargs), f(*args, **kwargs), reduced=4)


@settings(max_examples=15, **SETTINGS)
@given(dtype=st.sampled_from(DTYPES), shape=SHAPES, data=st.data())
def test_returned_structures(dtype, shape, data):
    """Lists, dicts and nested tuples come back as NumPy gives them, constants included; an
    argument returned unchanged, and the same array passed twice."""
    x = data.draw(hnp.arrays(dtype, shape, elements=small_values(dtype)), label="x")

    def f(x, y):
        return {"a": x == y, "b": [x.any(), (x, 3)], "c": (np.logical_not(y), 2.5, "text")}

    check_like_numpy(f, x, x)


@settings(max_examples=15, **SETTINGS)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=1, max_side=4), data=st.data())
def test_captured_constant_arrays(shapes, data):
    """Arrays the function captures (not arguments) are read as constants."""
    x_shape, c_shape = shapes.input_shapes
    x = data.draw(hnp.arrays(np.float32, x_shape, elements=grid(-4, 4)), label="x")
    c = data.draw(hnp.arrays(np.int16, c_shape, elements=st.integers(-9, 9)), label="c")

    def f(x):
        return x * c + 1, (x - c).sum(), c * 2

    check(f, x, reduced=max(1, math.prod(np.broadcast_shapes(x_shape, c_shape))))
