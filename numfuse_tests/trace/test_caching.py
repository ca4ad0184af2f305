"""One trace and one plan per input signature."""

import numpy as np

import numfuse

F32 = np.float32


def make():
    def f(x, s):
        return (x * s + 1).sum(axis=-1)

    return numfuse.jit(f)


def test_same_signature_returns_the_cached_plan():
    jf = make()
    x = np.ones((4, 5), F32)
    plan = jf.plan(x, 2.0)
    assert jf.plan(x, 2.0) is plan
    assert jf.plan(np.zeros((4, 5), F32), 2.0) is plan  # values are not part of the signature
    assert jf.graph(x, 2.0) is plan.graph
    assert jf.trace(x, 2.0).graph is plan.graph


def test_plan_is_not_retraced(monkeypatch):
    # (traces counted where jit makes them: a list the function appended to would be a change
    # the function makes at every call, which runs it segment by segment: effects.py)
    from numfuse import jit_function

    calls = []

    def counted(*args, **kwargs):
        calls.append(1)
        return trace(*args, **kwargs)

    trace = jit_function.trace
    monkeypatch.setattr(jit_function, "trace", counted)

    def f(x):
        return x + 1

    jf = numfuse.jit(f)
    x = np.ones(3, F32)
    jf.plan(x)
    jf.graph(x)
    jf.explain(x)
    jf.plan(np.ones(3, F32))
    assert len(calls) == 1


def test_different_shape_gives_a_new_plan():
    jf = make()
    small = jf.plan(np.ones((4, 5), F32), 2.0)
    large = jf.plan(np.ones((8, 5), F32), 2.0)
    assert large is not small
    assert large.graph.outputs[0].aval.shape == (8,)
    assert small.graph.outputs[0].aval.shape == (4,)
    assert jf.plan(np.ones((4, 5), F32), 2.0) is small


def test_different_dtype_or_layout_gives_a_new_plan():
    jf = make()
    x = np.ones((4, 5), F32)
    plan = jf.plan(x, 2.0)
    assert jf.plan(x.astype(np.float64), 2.0) is not plan
    assert jf.plan(np.asfortranarray(x), 2.0) is not plan


def test_python_scalar_values_share_one_plan():
    jf = make()
    x = np.ones((4, 5), F32)
    plan = jf.plan(x, 2.0)
    assert jf.plan(x, -7.5) is plan
    assert jf.plan(x, 1e30) is plan
    ints = jf.plan(x, 3)
    assert jf.plan(x, 0) is ints and jf.plan(x, 100) is ints
    flags = jf.plan(x, True)
    assert jf.plan(x, False) is flags


def test_python_scalar_types_do_not_share_a_plan():
    jf = numfuse.jit(lambda x, s: x * s)
    x = np.ones(3, np.int8)
    as_int, as_float, as_bool = jf.plan(x, 2), jf.plan(x, 2.0), jf.plan(x, True)
    assert len({id(as_int), id(as_float), id(as_bool)}) == 3
    assert as_int.graph.outputs[0].aval.dtype == np.int8
    assert as_float.graph.outputs[0].aval.dtype == np.float64
    assert as_bool.graph.outputs[0].aval.dtype == np.int8


def test_numpy_scalar_values_share_a_plan_per_dtype():
    jf = numfuse.jit(lambda x, s: x * s)
    x = np.ones(3, F32)
    plan = jf.plan(x, np.float32(2))
    assert jf.plan(x, np.float32(-3)) is plan
    wide = jf.plan(x, np.float64(2))
    assert wide is not plan
    assert wide.graph.outputs[0].aval.dtype == np.float64
    assert jf.plan(x, 2.0) is not wide  # a Python float is weak, np.float64 is not


def test_static_values_each_have_a_plan():
    jf = numfuse.jit(lambda x, axis: x.sum(axis=axis))
    x = np.ones((4, 5), F32)
    rows = jf.plan(x, 1)
    cols = jf.plan(x, 0)
    assert rows is not cols
    assert jf.plan(x, 1) is rows
    assert jf.plan(x, 0) is cols


def test_kernel_sources_are_cached_with_the_plan():
    jf = make()
    x = np.ones((4, 5), F32)
    sources = jf.kernel_sources(x, 2.0)
    assert jf.kernel_sources(x, 2.0) is sources
    assert len(sources) == len(jf.plan(x, 2.0).kernels) == 1
