"""No lost state: an error raised inside a kernel, or a KeyboardInterrupt while compiling,
leaves the function and the cache usable for the next call."""

import numpy as np
import pytest

import numfuse


def gather_scaled(x, idx):
    return x[idx] * 2 + 1


def test_an_index_error_inside_a_kernel_leaves_the_function_usable():
    f = numfuse.jit(gather_scaled)
    x = np.arange(10.0)
    good, bad = np.array([1, 3, 5]), np.array([1, 30, 5])
    np.testing.assert_array_equal(f(x, good), gather_scaled(x, good))
    for _ in range(2):  # the full path, then the fast path
        with pytest.raises(IndexError, match="out of bounds"):
            f(x, bad)
        np.testing.assert_array_equal(f(x, good), gather_scaled(x, good))


def test_an_error_at_the_first_call_leaves_nothing_half_built():
    f = numfuse.jit(gather_scaled)
    x = np.arange(10.0)
    with pytest.raises(IndexError):
        f(x, np.array([11]))
    np.testing.assert_array_equal(f(x, np.array([0, 9])), gather_scaled(x, np.array([0, 9])))


def test_a_keyboard_interrupt_while_compiling_leaves_the_function_and_cache_usable(monkeypatch):
    from numfuse.runtime import kernel_files

    real = kernel_files.load_function
    calls = []

    def interrupted(kernel):
        calls.append(kernel.name)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return real(kernel)

    monkeypatch.setattr(kernel_files, "load_function", interrupted)
    for module in ("numfuse.targets.cpu.loader", "numfuse.targets.cuda.kernel_cache"):
        loaded = __import__(module, fromlist=["load_function"])
        if hasattr(loaded, "load_function"):
            monkeypatch.setattr(loaded, "load_function", interrupted)

    def f(x):
        return np.sqrt(x * 3.0 + 0.25).sum(axis=-1)

    jitted = numfuse.jit(f)
    x = np.arange(12.0).reshape(3, 4)
    with pytest.raises(KeyboardInterrupt):
        jitted(x)
    assert calls, "the kernel was not loaded through kernel_files.load_function"
    np.testing.assert_allclose(jitted(x), f(x), rtol=1e-15)
    np.testing.assert_allclose(jitted(x), f(x), rtol=1e-15)
