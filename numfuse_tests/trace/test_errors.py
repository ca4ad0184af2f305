"""What numfuse refuses, and how it says so: at trace time, naming the user's file and line."""

import inspect
import os

import numpy as np
import pytest

import numfuse
from numfuse.ir import format_graph

HERE = os.path.basename(__file__)
X = np.ones((4, 5), np.float32)


def line_of(fn, offset: int) -> int:
    """The line number `offset` lines below `fn`'s `def` line."""
    return inspect.getsourcelines(fn)[1] + offset


# -- unsupported NumPy functions -----------------------------------------------------------------


def unique(x):
    return np.unique(x)


def eig(x):
    return np.linalg.eig(x)


def nonzero(x):
    return np.nonzero(x)


def argwhere(x):
    return np.argwhere(x)


def fftshift(x):
    return np.fft.fftshift(x)


@pytest.mark.parametrize(
    "fn, name",
    [(unique, "np.unique"), (eig, "np.linalg.eig"), (nonzero, "np.nonzero"),
     (argwhere, "np.argwhere"), (fftshift, "np.fft.fftshift")],
    ids=lambda v: v if isinstance(v, str) else v.__name__,
)
def test_unsupported_function_names_itself_and_the_line(fn, name):
    with pytest.raises(numfuse.UnsupportedError) as info:
        numfuse.jit(fn, graph_breaks=False).graph(X)
    message = str(info.value)
    assert name in message
    assert "not supported" in message
    assert f"{HERE}:{line_of(fn, 1)}" in message, message


@pytest.mark.parametrize("fn, name", [(unique, "np.unique"), (nonzero, "np.nonzero")], ids=["unique", "nonzero"])
def test_untraced_function_is_a_graph_break_that_plan_names(fn, name):
    # With graph breaks (the default) the function runs, segment by segment; it has no one
    # graph, and graph() says why, with the user's line.
    with pytest.raises(numfuse.TracingError) as info:
        numfuse.jit(fn).graph(X)
    message = str(info.value)
    assert "segment by segment" in message
    assert f"{name} is not traced" in message
    assert f"{HERE}:{line_of(fn, 1)}" in message, message


# -- Python control flow on traced values --------------------------------------------------------


def branch(x):
    if x.sum() > 0:
        return x
    return -x


def to_float(x):
    return x * float(x)


def to_int(x):
    return int(x.max())


def while_loop(x):
    while (x > 1).any():
        x = x / 2
    return x


@pytest.mark.parametrize("fn, offset", [(branch, 1), (to_float, 1), (to_int, 1), (while_loop, 1)],
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_concrete_value_needed_raises_tracing_error(fn, offset):
    with pytest.raises(numfuse.TracingError) as info:
        numfuse.jit(fn, graph_breaks=False).graph(X)
    message = str(info.value)
    assert "np.where" in message
    assert "graph_breaks=False" in message
    assert f"{HERE}:{line_of(fn, offset)}" in message, message
    # With graph breaks: no single graph, and graph() names the break's line.
    with pytest.raises(numfuse.TracingError) as info:
        numfuse.jit(fn).graph(X)
    assert "segment by segment" in str(info.value)
    assert f"{HERE}:{line_of(fn, offset)}" in str(info.value), str(info.value)


def test_tracing_error_is_a_numfuse_error():
    assert issubclass(numfuse.TracingError, numfuse.NumfuseError)
    assert issubclass(numfuse.UnsupportedError, numfuse.NumfuseError)


# -- unsupported dtypes --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "array",
    [
        np.array([1, "a", None], dtype=object),
        np.array(["2024-01-01"], dtype="datetime64[D]"),
        np.array([1, 2], dtype="timedelta64[s]"),
        np.array(["abc", "de"]),
        np.array([b"abc"]),
        np.zeros(3, dtype=[("a", "<i4"), ("b", "<f8")]),
        np.ones(3, dtype=">f4"),
    ],
    ids=lambda a: str(a.dtype),
)
def test_unsupported_dtype_argument(array):
    def f(x):
        return x + x

    with pytest.raises(numfuse.UnsupportedError) as info:
        numfuse.jit(f).graph(array)
    assert str(array.dtype) in str(info.value)
    assert "'x'" in str(info.value)  # the argument's name


@pytest.mark.parametrize("scalar", [np.datetime64("2024-01-01"), np.timedelta64(3, "s"), np.void(b"ab")],
                         ids=["datetime64", "timedelta64", "void"])
def test_unsupported_scalar_argument(scalar):
    def f(x, s):
        return x * s

    with pytest.raises(numfuse.UnsupportedError):
        numfuse.jit(f).graph(X, scalar)


def test_unsupported_dtype_in_astype_names_it():
    def f(x):
        return x.astype("timedelta64[s]")

    with pytest.raises(numfuse.UnsupportedError, match=r"timedelta64\[s\]"):
        numfuse.jit(f).graph(X)


def test_unsupported_captured_constant():
    table = np.arange(5).astype("timedelta64[s]")

    def f(x):
        return x + table

    with pytest.raises(numfuse.UnsupportedError, match="timedelta64"):
        numfuse.jit(f).graph(X)


# -- indexing and in-place updates ---------------------------------------------------------------


def mask_write(x):
    x[x > 0] = x[0, :1].repeat(3)  # one value per selected element: where, known only at run time
    return x


def boolean_mask(x):
    return x[x > 0]


@pytest.mark.parametrize("fn", [mask_write, boolean_mask], ids=lambda f: f.__name__)
def test_mask_reads_and_writes_of_a_data_dependent_size_are_no_single_graph(fn):
    with pytest.raises((numfuse.UnsupportedError, numfuse.TracingError)) as info:
        numfuse.jit(fn).graph(X.copy())
    assert HERE in str(info.value)


def ufunc_out_global(x):
    np.add(x, 1, out=GLOBAL_OUT)
    return x


GLOBAL_OUT = np.zeros((4, 5), np.float32)


def test_ufunc_out_into_a_global_array_is_traced_as_a_write_of_it():
    # The global is traced as an input (captures.py), so out= writes it, without a graph break.
    jitted = numfuse.jit(ufunc_out_global, graph_breaks=False)
    graph = jitted.graph(X)
    assert graph.writebacks, str(graph)
    assert "global GLOBAL_OUT" in jitted.explain(X).splitlines()[0]


def test_indexing_raises_numpys_errors():
    def out_of_bounds(x):
        return x[4]

    def too_many(x):
        return x[0, 0, 0]

    for fn in (out_of_bounds, too_many):
        with pytest.raises(IndexError):
            fn(X)
        with pytest.raises(IndexError):
            numfuse.jit(fn).graph(X)


def test_writing_into_a_broadcast_view_is_read_only_as_in_numpy():
    def through_view(x):
        y = np.broadcast_to(x, (3,) + x.shape)
        y[0] = 1
        return y

    def augmented(x):
        y = np.broadcast_to(x, (2,) + x.shape)
        y += 1
        return y

    for fn in (through_view, augmented):
        with pytest.raises(ValueError, match="read-only"):
            fn(X)
        with pytest.raises(ValueError, match="read-only"):
            numfuse.jit(fn).graph(X)
    # A broadcast argument (stride 0) is read-only too.
    b = np.broadcast_to(np.ones(4, np.float32), (3, 4))
    with pytest.raises(ValueError, match="read-only"):
        numfuse.jit(lambda a: a.__setitem__(0, 2.0)).graph(b)


def test_inplace_update_of_a_local_follows_numpy_aliasing():
    def f(x):
        y = x * 2
        z = y
        z += 1
        return y

    x = np.ones(3, np.float32)
    assert list(f(x)) == [3, 3, 3]  # NumPy: y and z are one array
    assert format_graph(numfuse.jit(f).graph(x), with_locs=False) == (
        "{ lambda a:f32[3] .\n"
        "  let b:f32[3] = multiply a 2.0:f32\n"
        "      c:f32[3] = add b 1.0:f32\n"
        "  in (c) }"
    )


def test_inplace_update_keeps_the_local_dtype():
    def f(x, w):
        y = x * 2
        y += w  # float64 added into a float32 array stays float32
        return y

    x = np.ones((2, 3), np.float32)
    w = np.ones(3)
    assert f(x, w).dtype == np.float32
    assert format_graph(numfuse.jit(f).graph(x, w), with_locs=False) == (
        "{ lambda a:f32[2,3] b:f64[3] .\n"
        "  let c:f32[2,3] = multiply a 2.0:f32\n"
        "      d:f64[2,3] = convert[dtype=f64] c\n"
        "      e:f64[2,3] = broadcast[shape=(2,3)] b\n"
        "      f:f64[2,3] = add d e\n"
        "      g:f32[2,3] = convert[dtype=f32] f\n"
        "  in (g) }"
    )


def test_inplace_update_raises_numpys_errors():
    def cast(x):
        y = (x * 2).astype(np.int32)
        y += 1.5  # float64 into int32: NumPy refuses (same_kind casting)
        return y

    def grow(x):
        y = x * 2
        y += np.ones((3, 4, 5), np.float32)  # would need a bigger y
        return y

    for fn, error in [(cast, TypeError), (grow, ValueError)]:
        with pytest.raises(error):
            fn(X)
        with pytest.raises(error):
            numfuse.jit(fn).graph(X)


def test_astype_copies():
    """x.astype(x.dtype) is a new array in NumPy (copy=True): updating it in place changes
    neither the local it came from nor the argument."""

    def local(x):
        y = x * 2
        z = y.astype(np.float32)
        z += 1
        return y, z

    def argument(x):
        z = x.astype(np.float32)
        z += 1
        return z

    x = np.ones(3, np.float32)
    y, z = local(x)
    assert list(y) == [2, 2, 2] and list(z) == [3, 3, 3]
    graph = numfuse.jit(local).graph(x)
    assert format_graph(graph, with_locs=False) == (
        "{ lambda a:f32[3] .\n"
        "  let b:f32[3] = multiply a 2.0:f32\n"
        "      c:f32[3] = add b 1.0:f32\n"
        "  in (b, c) }"
    )
    assert list(argument(x)) == [2, 2, 2] and list(x) == [1, 1, 1]
    graph = numfuse.jit(argument).graph(x)
    assert [e.prim for e in graph.eqns] == ["add"]


def test_view_of_a_local_sees_a_later_inplace_update():
    """t = y.T is a view: NumPy's t shows y's later in-place update. numfuse must either
    follow that or refuse it, never return the stale value."""

    def f(x):
        y = x * 2
        t = y.T
        y += 1
        return t

    x = np.ones((2, 3), np.float32)
    assert (f(x) == 3).all()
    try:
        graph = numfuse.jit(f).graph(x)
    except numfuse.UnsupportedError:
        return
    producers = graph.producers()
    out = producers[graph.outputs[0]]
    assert out.prim == "transpose", str(graph)
    assert producers[out.inputs[0]].prim == "add", f"the transpose reads y before its update:\n{graph}"


def test_python_scalar_argument_may_be_updated_in_place():
    def f(x, s):
        s += 1  # rebinds s: Python scalars are immutable
        return x * s

    graph = numfuse.jit(f).graph(np.ones(3, np.float32), 2.0)
    assert [e.prim for e in graph.eqns][-1] == "multiply"


# -- Python values steering the code -------------------------------------------------------------


def test_python_int_axis_argument_works():
    def f(x, axis):
        return x.sum(axis=axis)

    jf = numfuse.jit(f)
    assert format_graph(jf.graph(X, 1), with_locs=False) == (
        "{ lambda a:f32[4,5] .\n"
        "  let b:f32[4] = reduce_sum[axes=(1,) keepdims=False] a\n"
        "  in (b) }"
    )
    assert format_graph(jf.graph(X, -2), with_locs=False) == (
        "{ lambda a:f32[4,5] .\n"
        "  let b:f32[5] = reduce_sum[axes=(0,) keepdims=False] a\n"
        "  in (b) }"
    )
    with pytest.raises(np.exceptions.AxisError):
        jf.graph(X, 2)


def test_python_int_axis_keyword_argument_works():
    def f(x, *, axis=0, keepdims=False):
        return x.max(axis=axis, keepdims=keepdims)

    jf = numfuse.jit(f)
    assert jf.graph(X, axis=1).outputs[0].aval.shape == (4,)
    assert jf.graph(X, axis=1, keepdims=True).outputs[0].aval.shape == (4, 1)
    assert jf.graph(X).outputs[0].aval.shape == (5,)


def test_static_argnames():
    jf = numfuse.jit(lambda x, axis: x.mean(axis=axis), static_argnames="axis")
    assert jf.graph(X, (0, 1)).outputs[0].aval.shape == ()
    assert jf.graph(X, None).outputs[0].aval.shape == ()
    assert jf.graph(X, 0).outputs[0].aval.shape == (5,)


def test_unhashable_static_argument():
    jf = numfuse.jit(lambda x, axis: x.sum(axis=axis), static_argnames="axis")
    with pytest.raises(numfuse.UnsupportedError):
        jf.graph(X, [0])


def _stash():
    kept = []
    return kept.append, kept


def test_leaked_tracer_from_another_trace():
    # (kept where effects.Watch does not look: a helper's closure; a list of keep's own closure
    # or globals would be a change it makes at every call, run segment by segment)
    stash, leaked = _stash()

    def keep(x):
        stash(x)
        return x + 1

    def use(y):
        return y + leaked[0]

    numfuse.jit(keep).graph(X)
    with pytest.raises(numfuse.TracingError):
        numfuse.jit(use).graph(X)


# -- values computed from Python int arguments are static (not graph breaks) ----------------------


def test_arithmetic_on_int_arguments_used_as_python_values_makes_them_static():
    def f(x, n):
        total = x[: n - 1].sum(axis=0)
        for _ in range(n // 2):
            total = total * 2
        return total + np.zeros(n + 1)[:1]

    jitted = numfuse.jit(f)
    graph = jitted.graph(X, 3)  # one graph: no graph break
    assert "n" in jitted._auto_static
    assert [v.aval.shape for v in graph.inputs] == [X.shape]


def test_a_value_from_data_and_an_int_argument_is_a_graph_break():
    def f(x, n):
        if x.sum() > n:
            return x
        return -x

    with pytest.raises(numfuse.TracingError, match="segment by segment"):
        numfuse.jit(f).graph(X, 3)
