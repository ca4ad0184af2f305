"""Arguments that share memory (aliasing.py) and arrays and scalars read from globals and
closures (captures.py): NumPy's results, with no error, on every target."""

import types

import numpy as np
import pytest

import numfuse


def both(fn, make_args):
    """Run fn as NumPy and as numfuse on fresh arguments from make_args (which returns the
    arrays to compare afterwards first, then the call's arguments)."""
    expected_state, expected_args = make_args()
    expected = fn(*expected_args)
    got_state, got_args = make_args()
    got = numfuse.jit(fn)(*got_args)
    for e, g in zip(expected_state, got_state):
        np.testing.assert_array_equal(g, e)
    if expected is not None:
        np.testing.assert_array_equal(got, expected)


def write_then_read(a, b):
    a[:] = b * 2
    a += b
    return a * b


def test_the_same_array_passed_twice_sees_its_own_writes():
    def args():
        x = np.arange(5.0)
        return [x], [x, x]
    both(write_then_read, args)


def test_overlapping_slices_of_one_array():
    def shift(a, b):
        a[:] = b + 1
        a *= b
        return b.sum()

    def args():
        base = np.arange(8.0)
        return [base], [base[:6], base[2:]]
    both(shift, args)


@pytest.mark.parametrize("views", [
    lambda m: (m[:, :-1], m[:, 1:]),
    lambda m: (m[1:], m[:-1]),
    lambda m: (m, m.T),
    lambda m: (m[::2], m[1::2]),
    lambda m: (m[0], m[:, 1]),
    lambda m: (m[::-1], m),
    lambda m: (m[1:3, None, 1:], m[2:4, None, :-1]),
])
def test_views_of_one_matrix(views):
    def smooth(a, b):
        a += 0.5 * b
        return a - b

    def args():
        m = np.arange(36.0).reshape(6, 6)
        return [m], list(views(m))
    both(smooth, args)


def test_a_written_argument_that_overlaps_one_only_read_keeps_numpy_order():
    def axpy(y, x):
        y += 2 * x
        y += x  # reads x after y's first update: x is part of y

    def args():
        base = np.arange(10.0)
        return [base], [base[:8], base[1:9]]
    both(axpy, args)


def test_fast_path_calls_with_and_then_without_sharing():
    f = numfuse.jit(write_then_read)
    for i in range(3):  # the fast path serves separate arrays; the same one twice does not take it
        x, y = np.arange(4.0), np.arange(4.0) + i
        xe, ye = x.copy(), y.copy()
        np.testing.assert_array_equal(f(x, y), write_then_read(xe, ye))
        np.testing.assert_array_equal(x, xe)
        z, ze = np.arange(4.0) + i, np.arange(4.0) + i
        np.testing.assert_array_equal(f(z, z), write_then_read(ze, ze))
        np.testing.assert_array_equal(z, ze)


def test_arrays_that_overlap_but_are_only_read():
    f = numfuse.jit(lambda a, b: a * b + 1)
    base = np.arange(10.0)
    np.testing.assert_array_equal(f(base[:6], base[4:]), base[:6] * base[4:] + 1)


def test_overlap_of_another_dtype_that_is_written_is_refused_with_the_names():
    def f(a, b):
        a += 1
        return b + 0

    x = np.zeros(4, np.int32)
    with pytest.raises(numfuse.UnsupportedError, match="arguments 'a' and 'b' share memory"):
        numfuse.jit(f)(x, x.view(np.float32))


# -- globals and closures ----------------------------------------------------------------------

WEIGHTS = np.ones(4)
SCALE = 2.0


def uses_globals(x):
    return x * WEIGHTS + SCALE


def test_a_global_array_is_read_at_each_call():
    global WEIGHTS
    f = numfuse.jit(uses_globals)
    x = np.arange(4.0)
    saved = WEIGHTS
    try:
        np.testing.assert_array_equal(f(x), uses_globals(x))
        WEIGHTS[:] = 3.0  # changed in place
        np.testing.assert_array_equal(f(x), uses_globals(x))
        np.testing.assert_array_equal(f(x), uses_globals(x))  # (the fast path too)
        WEIGHTS = np.full(4, 5.0)  # rebound
        np.testing.assert_array_equal(f(x), uses_globals(x))
        WEIGHTS = np.arange(4, dtype=np.int32)  # rebound with another dtype
        got = f(x)
        assert got.dtype == uses_globals(x).dtype
        np.testing.assert_array_equal(got, uses_globals(x))
    finally:
        WEIGHTS = saved


def test_a_rebound_global_scalar_traces_again():
    global SCALE
    f = numfuse.jit(uses_globals)
    x = np.arange(4.0)
    saved = SCALE
    try:
        f(x)
        f(x)
        SCALE = -1.5
        np.testing.assert_array_equal(f(x), uses_globals(x))
        SCALE = 7  # an int now
        np.testing.assert_array_equal(f(x), uses_globals(x))
    finally:
        SCALE = saved


def test_closure_arrays_and_scalars():
    table = np.arange(3.0)
    factor = 2.0

    def g(x):
        return x * table * factor

    f = numfuse.jit(g)
    x = np.ones(3)
    np.testing.assert_array_equal(f(x), g(x))
    table[0] = 10.0
    np.testing.assert_array_equal(f(x), g(x))
    factor = 4.0  # noqa: F841 (read by g through its closure cell)
    np.testing.assert_array_equal(f(x), g(x))


def test_device_arrays_that_share_memory():
    import os

    if os.environ.get("NUMFUSE_TARGET") == "cpu":
        pytest.skip("device arrays run on the CUDA target")
    from numba import cuda

    def step(a, b):
        a[:] = b * 2
        a += b
        return a.sum()

    expected_base = np.arange(8.0)
    expected = step(expected_base[:6], expected_base[2:])
    device = cuda.to_device(np.arange(8.0))
    got = numfuse.jit(step)(device[:6], device[2:])
    np.testing.assert_array_equal(np.asarray(got.copy_to_host() if hasattr(got, "copy_to_host") else got), expected)
    np.testing.assert_array_equal(device.copy_to_host(), expected_base)
    same = cuda.to_device(np.arange(3.0))
    numfuse.jit(step)(same, same)
    np.testing.assert_array_equal(same.copy_to_host(), [0.0, 4.0, 8.0])


class Layer:
    def __init__(self):
        self.weight = np.ones(3)

    @numfuse.jit
    def __call__(self, x):
        return x * self.weight + 1


def test_an_array_attribute_of_self_is_read_at_each_call_and_rebinding_it_traces_again():
    layer, x = Layer(), np.arange(3.0)
    np.testing.assert_array_equal(layer(x), x + 1)
    layer.weight[:] = 5.0
    np.testing.assert_array_equal(layer(x), x * 5 + 1)
    layer.weight = np.full(3, -2.0)
    np.testing.assert_array_equal(layer(x), x * -2 + 1)
    np.testing.assert_array_equal(layer(x), x * -2 + 1)


def test_a_broadcast_view_of_a_written_argument():
    def f(a, b):
        a += b[0]
        return b.sum(axis=0)

    def args():
        base = np.arange(4.0)
        return [base], [base, np.broadcast_to(base, (3, 4))]
    both(f, args)


TABLE = np.arange(6.0).reshape(2, 3)
CALLS = 0


def uses_table(x):
    # NumPy's own work on the global (a view, a reduction) is traced too: fresh at each call.
    return x * TABLE.T + TABLE[1:].sum()


def test_what_numpy_computes_from_a_global_is_fresh_at_each_call():
    f = numfuse.jit(uses_table)
    x = np.ones((3, 2))
    saved = TABLE.copy()
    try:
        np.testing.assert_array_equal(f(x), uses_table(x))
        TABLE[:] = -1.0
        np.testing.assert_array_equal(f(x), uses_table(x))
    finally:
        TABLE[:] = saved


def test_writes_into_a_global_array_reach_it():
    def scale_table(s):
        TABLE[...] *= s
        return TABLE.sum()

    saved = TABLE.copy()
    try:
        expected_table = saved.copy()
        f = numfuse.jit(scale_table)
        for s in (2.0, 3.0):
            got = f(s)
            expected_table *= s
            np.testing.assert_array_equal(TABLE, expected_table)
            assert got == expected_table.sum()
    finally:
        TABLE[:] = saved


def count_calls(x):
    global CALLS
    CALLS += 1
    return x * CALLS


def test_a_function_that_assigns_a_global_runs_its_python_code_at_every_call():
    global CALLS
    CALLS = 0
    f = numfuse.jit(count_calls)
    x = np.ones(2)
    np.testing.assert_array_equal(f(x), [1.0, 1.0])
    np.testing.assert_array_equal(f(x), [2.0, 2.0])
    assert CALLS == 2
    with pytest.raises(numfuse.TracingError, match="assigns to 'CALLS'"):
        numfuse.jit(count_calls, graph_breaks=False)(x)


def test_an_argument_sharing_memory_is_returned_as_itself():
    def step(a, b):
        a[:] = b * 2
        return a

    base = np.arange(8.0)
    a = base[:6]
    assert numfuse.jit(step)(a, base[2:]) is a
    x = np.arange(3.0)
    assert numfuse.jit(step)(x, x) is x


HELPER_TABLE = np.arange(3.0)


def _scaled_by_the_table(x):
    return x * HELPER_TABLE


def test_a_global_array_read_by_a_helper_is_read_at_each_call():
    f = numfuse.jit(lambda x: _scaled_by_the_table(x) + 1)
    x = np.ones(3)
    saved = HELPER_TABLE.copy()
    try:
        np.testing.assert_array_equal(f(x), saved + 1)
        HELPER_TABLE[:] = 7.0
        np.testing.assert_array_equal(f(x), np.full(3, 8.0))
    finally:
        HELPER_TABLE[:] = saved


# -- a global array that is also an argument ---------------------------------------------------

SIGNAL = np.arange(8.0)


def shift_into(out):
    out[1:] = SIGNAL[:-1]  # NumPy: SIGNAL is out when called as shift_into(SIGNAL)
    return out.sum()


def add_the_head(out):
    out += SIGNAL[: len(out)]


def add_global(x):
    x += SIGNAL[::-1]
    return x


def _numpy_on_the_global(fn, make_argument):
    """What NumPy leaves in SIGNAL, and returns, for fn(make_argument()); SIGNAL restored."""
    saved = SIGNAL.copy()
    result = fn(make_argument())
    state = SIGNAL.copy()
    SIGNAL[:] = saved
    return state, result


def test_a_global_array_passed_as_the_argument_is_written_through_it():
    saved = SIGNAL.copy()
    f = numfuse.jit(shift_into)
    try:
        for _ in range(3):  # the first call, then the fast path
            separate = np.array(saved)
            assert f(separate) == shift_into(np.array(saved))
            np.testing.assert_array_equal(SIGNAL, saved)
        expected_state, expected = _numpy_on_the_global(shift_into, lambda: SIGNAL)
        assert not np.array_equal(expected_state, saved)  # (NumPy did write through the global)
        for _ in range(3):
            SIGNAL[:] = saved
            got = f(SIGNAL)
            np.testing.assert_array_equal(SIGNAL, expected_state)
            assert got == expected
        SIGNAL[:] = saved
        other = np.zeros(8)
        f(other)  # separate again: the first trace serves
        np.testing.assert_array_equal(other[1:], saved[:-1])
        np.testing.assert_array_equal(SIGNAL, saved)
        assert "global SIGNAL is argument 'out'" in f.explain(SIGNAL)
    finally:
        SIGNAL[:] = saved


@pytest.mark.parametrize("argument", ["the global", "a view of all of it", "its reverse"])
def test_a_global_read_through_the_argument_that_is_it_or_a_view_of_it(argument):
    make = {"the global": lambda: SIGNAL, "a view of all of it": lambda: SIGNAL[:],
            "its reverse": lambda: SIGNAL[::-1]}[argument]
    saved = SIGNAL.copy()
    try:
        expected_state, expected = _numpy_on_the_global(lambda x: add_global(x).copy(), make)
        f = numfuse.jit(add_global)
        for _ in range(2):
            SIGNAL[:] = saved
            got = f(make())
            np.testing.assert_array_equal(SIGNAL, expected_state)
            np.testing.assert_array_equal(got, expected)
    finally:
        SIGNAL[:] = saved


def test_an_argument_that_is_part_of_a_global_it_reads_and_writes_is_refused():
    saved = SIGNAL.copy()
    try:
        with pytest.raises(numfuse.UnsupportedError, match="shares memory with global SIGNAL"):
            numfuse.jit(add_the_head)(SIGNAL[2:])
        np.testing.assert_array_equal(SIGNAL, saved)  # nothing written
    finally:
        SIGNAL[:] = saved


def test_a_global_only_read_and_also_passed_needs_nothing():
    f = numfuse.jit(lambda x: x * SIGNAL[::-1] + SIGNAL)
    for _ in range(3):
        np.testing.assert_array_equal(f(SIGNAL), SIGNAL * SIGNAL[::-1] + SIGNAL)
        np.testing.assert_array_equal(f(SIGNAL[::-1]), SIGNAL[::-1] * SIGNAL[::-1] + SIGNAL)


# -- what the function reads through attributes and helper functions: guarded ------------------

class Settings:
    def __init__(self):
        self.eps = 1e-3
        self.table = np.arange(3.0)
        self.inner = types.SimpleNamespace(factor=2.0)


SETTINGS = Settings()
CONSTANTS = types.ModuleType("constants")  # as a user's module of constants
CONSTANTS.OFFSET = 1.0
HELPER_SCALE = 3.0


def _scaled(x):
    return x * HELPER_SCALE


def reads_attributes(x):
    return (x + SETTINGS.eps) * SETTINGS.inner.factor + CONSTANTS.OFFSET + SETTINGS.table


def test_scalars_read_through_attributes_of_globals_are_guarded():
    f = numfuse.jit(reads_attributes)
    x = np.arange(3.0)
    saved = (SETTINGS.eps, SETTINGS.inner.factor, CONSTANTS.OFFSET)
    try:
        for change in (lambda: setattr(SETTINGS, "eps", 0.5), lambda: setattr(SETTINGS.inner, "factor", -1.0),
                       lambda: setattr(CONSTANTS, "OFFSET", 10.0),
                       lambda: setattr(SETTINGS, "inner", types.SimpleNamespace(factor=7.0))):
            np.testing.assert_array_equal(f(x), reads_attributes(x))
            np.testing.assert_array_equal(f(x), reads_attributes(x))  # (the fast path)
            change()
            np.testing.assert_array_equal(f(x), reads_attributes(x))
    finally:
        SETTINGS.eps, CONSTANTS.OFFSET = saved[0], saved[2]
        SETTINGS.inner = types.SimpleNamespace(factor=saved[1])


def test_an_array_attribute_of_a_global_object_is_read_at_each_call():
    f = numfuse.jit(reads_attributes)
    x = np.ones(3)
    saved = SETTINGS.table.copy()
    try:
        f(x)
        SETTINGS.table[:] = 100.0  # in place: no new trace, its contents read at the call
        np.testing.assert_array_equal(f(x), reads_attributes(x))
        np.testing.assert_array_equal(f(x), reads_attributes(x))
    finally:
        SETTINGS.table[:] = saved


def test_a_scalar_global_of_a_helper_function_is_guarded():
    global HELPER_SCALE
    f = numfuse.jit(lambda x: _scaled(x) + 1)
    x = np.arange(3.0)
    saved = HELPER_SCALE
    try:
        np.testing.assert_array_equal(f(x), x * 3.0 + 1)
        HELPER_SCALE = -2.0
        np.testing.assert_array_equal(f(x), x * -2.0 + 1)
    finally:
        HELPER_SCALE = saved


class Scaler:
    def __init__(self, scale):
        self.scale = scale
        self.config = types.SimpleNamespace(shift=0.0)

    def _shifted(self, x):
        return x + self.config.shift

    @numfuse.jit
    def __call__(self, x):
        return self._shifted(x) * self.scale


def test_scalar_attributes_of_self_are_guarded():
    layer = Scaler(2.0)
    x = np.arange(4.0)
    np.testing.assert_array_equal(layer(x), x * 2.0)
    layer.scale = 5.0
    np.testing.assert_array_equal(layer(x), x * 5.0)
    np.testing.assert_array_equal(Scaler(-1.0)(x), -x)  # another instance: its own
    np.testing.assert_array_equal(layer(x), x * 5.0)


def test_an_attribute_read_by_a_method_of_self_is_guarded():
    layer = Scaler(1.0)
    x = np.arange(4.0)
    np.testing.assert_array_equal(layer(x), x)
    layer.config.shift = 10.0
    np.testing.assert_array_equal(layer(x), x + 10.0)
    layer.config = types.SimpleNamespace(shift=-1.0)
    np.testing.assert_array_equal(layer(x), x - 1.0)


def test_a_closure_objects_attribute_is_guarded():
    options = types.SimpleNamespace(alpha=0.5)

    def g(x):
        return x * options.alpha

    f = numfuse.jit(g)
    x = np.arange(3.0)
    np.testing.assert_array_equal(f(x), x * 0.5)
    options.alpha = 4.0
    np.testing.assert_array_equal(f(x), x * 4.0)


def test_a_value_that_changes_at_every_call_warns_once_that_it_costs_a_trace():
    state = types.SimpleNamespace(step=0.0)
    f = numfuse.jit(lambda x: x + state.step)
    x = np.zeros(2)
    with pytest.warns(numfuse.NumfuseWarning, match="traced again 8 times .*'step'"):
        for k in range(10):
            state.step = float(k)
            np.testing.assert_array_equal(f(x), np.full(2, float(k)))


OPTIONS = {"eps": 1e-3, "sizes": [2.0, 3.0]}
FACTORS = [1.5, np.arange(3.0)]


def reads_items(x):
    return (x + OPTIONS["eps"]) * OPTIONS["sizes"][1] + FACTORS[0] * FACTORS[1]


def test_items_of_global_dicts_and_lists_read_by_constant_keys_are_guarded():
    f = numfuse.jit(reads_items)
    x = np.arange(3.0)
    saved = (OPTIONS["eps"], list(OPTIONS["sizes"]), FACTORS[0], FACTORS[1])
    try:
        for change in (lambda: OPTIONS.__setitem__("eps", 0.25), lambda: OPTIONS["sizes"].__setitem__(1, -4.0),
                       lambda: FACTORS.__setitem__(0, 10.0), lambda: FACTORS[1].__setitem__(0, 100.0),
                       lambda: FACTORS.__setitem__(1, np.ones(3))):
            np.testing.assert_array_equal(f(x), reads_items(x))
            np.testing.assert_array_equal(f(x), reads_items(x))
            change()
            np.testing.assert_array_equal(f(x), reads_items(x))
    finally:
        OPTIONS["eps"], OPTIONS["sizes"] = saved[0], saved[1]
        FACTORS[:] = [saved[2], saved[3]]


class Weighted:
    def __init__(self):
        self.w = np.arange(3.0)

    @numfuse.jit
    def __call__(self, x):
        return x + self.w * 2 + SETTINGS.table[::-1] * 3  # NumPy work on the arrays alone


def _doubled_table(x):
    return x + HELPER_TABLE * 2


def test_what_numpy_computes_from_attribute_and_helper_arrays_alone_is_fresh_at_each_call():
    layer = Weighted()
    x = np.ones(3)
    saved = SETTINGS.table.copy(), HELPER_TABLE.copy()
    f = numfuse.jit(lambda x: _doubled_table(x) - FACTORS[1] * 2)
    try:
        for _ in range(2):
            np.testing.assert_array_equal(layer(x), x + layer.w * 2 + SETTINGS.table[::-1] * 3)
            np.testing.assert_array_equal(f(x), x + HELPER_TABLE * 2 - FACTORS[1] * 2)
            layer.w[:] = -5.0
            SETTINGS.table[:] = 7.0
            HELPER_TABLE[:] = 9.0
            FACTORS[1][:] = 4.0
        assert isinstance(layer.w, np.ndarray) and isinstance(SETTINGS.table, np.ndarray)  # (put back)
    finally:
        SETTINGS.table[:], HELPER_TABLE[:] = saved
        FACTORS[1][:] = np.arange(3.0)


def test_threads_tracing_methods_that_read_array_attributes_at_once():
    import concurrent.futures
    import sys

    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch inside each other's traces (the race this checks)
    try:
        for _ in range(4):
            class Fresh(Weighted):  # a new jit function: each round traces again
                __call__ = numfuse.jit(Weighted.__call__._fn)

            layers = [Fresh() for _ in range(4)]
            for k, layer in enumerate(layers):
                layer.w = np.full(3, float(k))
            xs = [np.full(3, float(k)) for k in range(8)]
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                got = list(pool.map(lambda k: layers[k % 4](xs[k]), range(8)))
            for k in range(8):
                np.testing.assert_array_equal(got[k], xs[k] + layers[k % 4].w * 2 + SETTINGS.table[::-1] * 3)
            assert all(isinstance(layer.w, np.ndarray) for layer in layers)
    finally:
        sys.setswitchinterval(switching)


def _breaks_then_reads_the_table(x):
    if float(x.sum()) > 0:  # a graph break: this Python code runs at every call
        return x * 2 + SETTINGS.table
    return x - SETTINGS.table


def test_runs_with_graph_breaks_meet_no_tracer_of_another_threads_trace():
    import concurrent.futures
    import sys

    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(4):
            class Fresh(Weighted):
                __call__ = numfuse.jit(Weighted.__call__._fn)

            layer, breaking = Fresh(), numfuse.jit(_breaks_then_reads_the_table)
            xs = [np.full(3, float(k)) for k in range(8)]
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                got = list(pool.map(lambda k: layer(xs[k]) if k % 2 else breaking(xs[k]), range(8)))
            for k in range(8):
                want = xs[k] + layer.w * 2 + SETTINGS.table[::-1] * 3 if k % 2 else _breaks_then_reads_the_table(xs[k])
                np.testing.assert_array_equal(got[k], want)
    finally:
        sys.setswitchinterval(switching)


class WithConstants:
    EPS = 1e-3

    @numfuse.jit
    def __call__(self, x):
        return x + self.EPS


class Limits:
    LOW = -1.0


def test_class_constants_read_through_an_instance_or_the_class_are_guarded():
    model, x = WithConstants(), np.zeros(2)
    f = numfuse.jit(lambda x: np.maximum(x, Limits.LOW))
    try:
        np.testing.assert_array_equal(model(x), x + 1e-3)
        WithConstants.EPS = 0.5  # the class's
        np.testing.assert_array_equal(model(x), x + 0.5)
        model.EPS = 2.0  # an instance attribute now hides it
        np.testing.assert_array_equal(model(x), x + 2.0)
        np.testing.assert_array_equal(f(np.array([-5.0, 3.0])), [-1.0, 3.0])
        Limits.LOW = 0.0
        np.testing.assert_array_equal(f(np.array([-5.0, 3.0])), [0.0, 3.0])
    finally:
        WithConstants.EPS, Limits.LOW = 1e-3, -1.0


def test_past_the_global_arrays_in_the_signature_each_trace_checks_its_own(monkeypatch):
    import numfuse.jit_function as jit_function

    monkeypatch.setattr(jit_function, "MAX_EXTERNALS", 0)  # none in the signature
    saved = SIGNAL.copy()
    f = numfuse.jit(shift_into)
    try:
        expected_state, expected = _numpy_on_the_global(shift_into, lambda: SIGNAL)
        for _ in range(2):
            other = np.array(saved)
            assert f(other) == shift_into(np.array(saved))
            SIGNAL[:] = saved
            assert f(SIGNAL) == expected
            np.testing.assert_array_equal(SIGNAL, expected_state)
            SIGNAL[:] = saved
    finally:
        SIGNAL[:] = saved


PAIR = (np.arange(3.0), 2.0)  # an array in a tuple: read at each call where it meets a traced value


def test_an_array_in_a_global_tuple_is_read_at_each_call():
    f = numfuse.jit(lambda x: x * PAIR[1] + PAIR[0])
    x = np.ones(3)
    saved = PAIR[0].copy()
    try:
        np.testing.assert_array_equal(f(x), x * 2.0 + saved)
        PAIR[0][:] = 7.0
        np.testing.assert_array_equal(f(x), x * 2.0 + 7.0)
    finally:
        PAIR[0][:] = saved


# Found by a battery of public-style code on the CPU target: each returned the first trace's
# values after the change, with no error.
class _Layer:
    def __init__(self):
        self.scale = 2

    def __call__(self, x):
        return x * self.scale


LAYER = _Layer()
COEFFICIENTS = [1.0, -2.0, 3.0]
WEIGHTS_BY_NAME = {"a": 1.0, "b": 2.0}
OFFSET = 0.0


def _horner(x):
    r = np.zeros_like(x)
    for c in COEFFICIENTS:
        r = r * x + c
    return r, x * sum(COEFFICIENTS)


def _weighted(x):
    s = np.zeros_like(x)
    for _, v in WEIGHTS_BY_NAME.items():
        s = s + x * v
    return s


def _same(got, expected):
    for g, e in zip(got if isinstance(got, tuple) else (got,), expected if isinstance(expected, tuple) else (expected,)):
        assert g.dtype == e.dtype
        np.testing.assert_array_equal(g, e)
        np.testing.assert_array_equal(np.signbit(g), np.signbit(e))


def test_a_callable_objects_attribute_is_guarded():
    f = numfuse.jit(lambda x: LAYER(x))
    x = np.arange(4, dtype=np.int32)
    try:
        for scale in (2, 5, 2.5):
            LAYER.scale = scale
            _same(f(x), LAYER(x))
    finally:
        LAYER.scale = 2


def test_lists_and_dicts_of_numbers_changed_in_place_trace_again():
    f, g = numfuse.jit(_horner), numfuse.jit(_weighted)
    x = np.array([0.5, 2.0])
    try:
        for change in (lambda: None, lambda: COEFFICIENTS.__setitem__(0, 10.0), lambda: COEFFICIENTS.append(1.0),
                       lambda: COEFFICIENTS.__setitem__(1, -0.0)):
            change()
            _same(f(x), _horner(x))
        for change in (lambda: None, lambda: WEIGHTS_BY_NAME.__setitem__("b", 10.0), lambda: WEIGHTS_BY_NAME.__setitem__("c", 5)):
            change()
            _same(g(x), _weighted(x))
    finally:
        COEFFICIENTS[:] = [1.0, -2.0, 3.0]
        WEIGHTS_BY_NAME.clear()
        WEIGHTS_BY_NAME.update(a=1.0, b=2.0)


def test_a_zero_that_changes_sign_traces_again():
    global OFFSET
    f = numfuse.jit(lambda x: x + OFFSET)
    by_argument = numfuse.jit(lambda x, c: x + c[0])
    x = np.array([-0.0, 1.0])
    try:
        for value in (0.0, -0.0, 0.0, float("nan"), float("nan")):
            OFFSET = value
            _same(f(x), x + OFFSET)
            for _ in range(2):  # (the second call: the fast path)
                _same(by_argument(x, (value,)), x + value)
    finally:
        OFFSET = 0.0


# -- `is` on arguments: the trace gets the caller's objects' identities --------------------------


def _euclidean(X, Y):
    # POT's / scikit-learn's euclidean_distances: the diagonal is zeroed when X is Y
    d = (X ** 2).sum(1)[:, None] + (Y ** 2).sum(1)[None, :] - 2 * X @ Y.T
    if X is Y:
        d[np.arange(len(d)), np.arange(len(d))] = 0.0
    return d, X is Y


def _mask(X, missing_values):
    # scikit-learn 0.20's SimpleImputer._get_mask
    if missing_values is np.nan:
        return np.isnan(X)
    return np.equal(X, missing_values)


def _flagged(x, flag):
    return x * 2 if flag is True else x - 1


@pytest.mark.parametrize("same", [True, False])
def test_the_same_array_twice_is_the_same_object_in_the_trace(same):
    # (read only, the two arguments were two traced stand-ins: X is Y was False)
    X = np.random.default_rng(1).standard_normal((7, 40))
    Y = X if same else X[:]
    (got, got_same), (expected, same_expected) = numfuse.jit(_euclidean)(X, Y), _euclidean(X, Y)
    assert got_same is same_expected is same
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(np.diagonal(got) == 0.0, np.diagonal(expected) == 0.0)


def test_is_on_python_scalar_arguments_answers_as_numpy():
    X = np.array([1.0, np.nan, 3.0])
    masked, flagged = numfuse.jit(_mask), numfuse.jit(_flagged)
    for _ in range(2):  # (the second time through the fast path)
        for v in (np.nan, float("nan"), 3.0, np.inf):
            np.testing.assert_array_equal(masked(X, v), _mask(X, v))
        for flag in (True, False, 1):
            np.testing.assert_array_equal(flagged(X, flag), _flagged(X, flag))
