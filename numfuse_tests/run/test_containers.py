"""Container arguments (dicts, lists, tuples and namedtuples of arrays and scalars, nested), as
ML code passes its parameters: flattened into leaves named by their path, rebuilt for the
function; results of those types come back with the same structure and types."""

from __future__ import annotations

import collections

import numpy as np

import numfuse

Linear = collections.namedtuple("Linear", "w b")
RNG = np.random.default_rng(5)
X = RNG.standard_normal((4, 3))
PARAMS = {"w": RNG.standard_normal((3, 5)), "b": RNG.standard_normal(5)}
LAYERS = [Linear(RNG.standard_normal(5), 0.5), Linear(RNG.standard_normal(5), np.float32(0.25))]


def mlp(x, params, layers):
    h = x @ params["w"] + params["b"]
    for layer in layers:
        h = np.tanh(h * layer.w + layer.b)
    return {"out": h, "stats": (h.sum(), [h.max(), Linear(h.min(), h.mean())])}


def _same(got, expected):
    assert type(got) is type(expected), (type(got), type(expected))
    if isinstance(expected, dict):
        assert list(got) == list(expected)
        for k in expected:
            _same(got[k], expected[k])
    elif isinstance(expected, (list, tuple)):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            _same(g, e)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_nested_parameters_in_and_structured_results_out():
    jitted = numfuse.jit(mlp)
    _same(jitted(X, PARAMS, LAYERS), mlp(X, PARAMS, LAYERS))
    text = jitted.explain(X, PARAMS, LAYERS)
    assert "params['w']: f64[3,5]" in text and "layers[1].b: f32[]" in text


def test_structure_is_part_of_the_signature():
    jitted = numfuse.jit(mlp)
    _same(jitted(X, PARAMS, LAYERS), mlp(X, PARAMS, LAYERS))
    one = LAYERS[:1]
    _same(jitted(X, PARAMS, one), mlp(X, PARAMS, one))  # one layer: traced again
    swapped = {"b": PARAMS["b"], "w": PARAMS["w"]}
    _same(jitted(X, swapped, LAYERS), mlp(X, swapped, LAYERS))
    assert len(jitted._cache) == 3


def test_writes_into_a_container_leaf_reach_the_caller():
    def step(state, lr):
        state["w"] -= lr * state["g"]
        state["g"][...] = 0.0
        return state["w"].sum()

    ours = {"w": np.arange(6.0), "g": np.ones(6)}
    theirs = {k: v.copy() for k, v in ours.items()}
    got = numfuse.jit(step)(ours, 0.1)
    expected = step(theirs, 0.1)
    np.testing.assert_allclose(got, expected)
    for k in theirs:
        np.testing.assert_array_equal(ours[k], theirs[k])


def test_an_int_in_a_container_used_as_a_python_value_is_static():
    def f(x, config):
        for _ in range(config["steps"]):
            x = x * config["scale"]
        return x[: config["steps"]]

    for steps in (2, 3):
        config = {"steps": steps, "scale": 1.5, "unused": np.zeros(1)}
        np.testing.assert_allclose(numfuse.jit(f)(X, config), f(X, config))


def test_containers_without_arrays():
    def f(x, shape):
        return x.reshape(shape).sum(0)

    np.testing.assert_allclose(numfuse.jit(f)(X, (3, 4)), f(X, (3, 4)))  # a tuple: a static value
    np.testing.assert_allclose(numfuse.jit(f)(X, [3, 4]), f(X, [3, 4]))  # a list: ints made static

    def g(config):
        return -np.negative(config["scale"]), config["steps"] * 2

    for config in ({"scale": 0.0, "steps": 3}, {"scale": -1.5, "steps": 4}):
        got, expected = numfuse.jit(g)(config), g(config)
        assert got == expected and [type(v) for v in got] == [type(v) for v in expected]
