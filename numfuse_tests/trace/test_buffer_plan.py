"""The buffer plan every target's executable uses (runtime/buffer_plan.py), compared as text."""

import numpy as np

import numfuse
from numfuse.runtime.buffer_plan import buffer_plan

X = np.ones((3, 4), np.float32)


def test_an_updated_argument_is_an_alias_written_back_and_results_are_allocated():
    def f(x, y):
        x += 1.0
        z = x * y
        return z, z.sum(axis=1)

    assert str(buffer_plan(numfuse.jit(f).plan(X, X.copy()))) == "\n".join([
        "buffer plan",
        "  input #0 a:f32[3,4]",
        "  input #1 b:f32[3,4]",
        "  allocate f:f32[3]",
        "  allocate e:f32[3,4]",
        "  alias d -> a",
        "  write back #0 <- d",
    ])


def test_a_library_calls_output_is_allocated_like_a_kernels():
    text = str(buffer_plan(numfuse.jit(lambda x: np.sort(x) + 1).plan(X)))
    assert text == "buffer plan\n  input #0 a:f32[3,4]\n  allocate c:f32[3,4]\n  allocate b:f32[3,4]"
