"""numfuse.jit functions composed: called inside another (traced inline), jit of a jit, methods,
staticmethods and functools.partial."""

from __future__ import annotations

import functools

import numpy as np

import numfuse

X = np.linspace(-2.0, 2.0, 12).reshape(3, 4)


@numfuse.jit
def activation(x):
    return np.tanh(x) * 2


def _plain_activation(x):
    return np.tanh(x) * 2


@numfuse.jit
def network(x):
    return activation(x) + activation(x * 3).sum(axis=0)


def test_a_jitted_function_inside_another_is_traced_inline():
    expected = _plain_activation(X) + _plain_activation(X * 3).sum(axis=0)
    np.testing.assert_allclose(network(X), expected, rtol=1e-12)
    plan = network.plan(X)
    assert len(plan.kernels) <= 2  # one graph: the inner calls fused with the outer's work
    assert any("traced inline" in note for note in plan.notes)


def test_jit_of_a_jit_methods_and_partials():
    again = numfuse.jit(activation)
    assert again._fn is activation._fn
    np.testing.assert_allclose(again(X), _plain_activation(X), rtol=1e-12)

    class Layer:
        def __init__(self, scale):
            self.scale = scale

        @numfuse.jit
        def forward(self, x):
            return x * self.scale + 1

        @staticmethod
        @numfuse.jit
        def shift(x):
            return x - 1

    layer = Layer(3.0)
    np.testing.assert_allclose(layer.forward(X), X * 3.0 + 1)
    np.testing.assert_allclose(Layer.shift(X), X - 1)
    np.testing.assert_allclose(functools.partial(activation)(X), _plain_activation(X), rtol=1e-12)
