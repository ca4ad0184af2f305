"""Runtime behaviour: array kinds in and out, the signature cache, runtime scalars, the simulator
warning, generated kernel files."""

import os
import subprocess
import sys

import numpy as np
import pytest

import numfuse
from numfuse.targets.cuda.device import backend
from numfuse_tests.helpers import assert_same


def axpy(a, x, y):
    return a * x + y, (x * y).sum(axis=-1)


def test_device_arrays_in_device_arrays_out():
    cuda = backend().cuda
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = np.ones((3, 4), np.float32)
    jf = numfuse.jit(axpy)
    out, s = jf(2.0, cuda.to_device(x), cuda.to_device(y))
    assert hasattr(out, "copy_to_host") and hasattr(s, "copy_to_host")
    assert_same(out.copy_to_host(), 2.0 * x + y)
    assert_same(s.copy_to_host(), (x * y).sum(axis=-1))


def test_numpy_and_device_arguments_mixed_give_device_results():
    cuda = backend().cuda
    x = np.arange(6, dtype=np.float64)
    out, s = numfuse.jit(axpy)(0.5, x, cuda.to_device(x))
    assert hasattr(out, "copy_to_host")
    assert_same(out.copy_to_host(), 0.5 * x + x)


def test_numpy_in_numpy_out_and_scalars_where_numpy_returns_scalars():
    x = np.arange(5, dtype=np.int32)
    total, doubled = numfuse.jit(lambda x: (x.sum(), x * 2))(x)
    assert isinstance(total, np.int64) and total == 10
    assert isinstance(doubled, np.ndarray) and doubled.dtype == np.int32


def test_second_call_does_not_trace_again(monkeypatch):
    import numfuse.jit_function as jit_module

    calls = []
    real = jit_module.trace
    monkeypatch.setattr(jit_module, "trace", lambda *a, **k: calls.append(1) or real(*a, **k))
    jf = numfuse.jit(axpy)
    x = np.ones((2, 3), np.float32)
    jf(1.0, x, x)
    jf(3.0, x, x)  # a new scalar value is a kernel argument, not a new signature
    assert len(calls) == 1
    out, _ = jf(3.0, x, x)
    assert_same(out, 3.0 * x + x)
    jf(1.0, np.ones((4, 3), np.float32), np.ones((4, 3), np.float32))
    assert len(calls) == 2


def test_scalar_argument_values_reach_the_kernel():
    jf = numfuse.jit(lambda x, s, k: (x * s + k, x > k))
    x = np.linspace(-1, 1, 7, dtype=np.float32)
    for s, k in [(2.0, 1), (-3.5, 0), (0.25, -1)]:
        got = jf(x, s, k)
        assert_same(got, (x * s + k, x > k))


def test_python_int_out_of_range_for_the_array_dtype_raises_like_numpy():
    jf = numfuse.jit(lambda x, k: x + k)
    x = np.arange(4, dtype=np.uint8)
    with pytest.raises(OverflowError):
        x + 300
    assert_same(jf(x, 3), x + 3)
    with pytest.raises(OverflowError):
        jf(x, 300)


def test_axis_argument_becomes_static():
    jf = numfuse.jit(lambda x, axis: x.sum(axis=axis))
    x = np.arange(12, dtype=np.float64).reshape(3, 4)
    assert_same(jf(x, 0), x.sum(axis=0))
    assert_same(jf(x, 1), x.sum(axis=1))


def test_arguments_are_not_modified_and_inputs_pass_through():
    x = np.arange(4.0)
    same, plus = numfuse.jit(lambda x: (x, x + 1))(x)
    assert same is x
    np.testing.assert_array_equal(x, np.arange(4.0))


def test_generated_kernels_are_files_in_the_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMFUSE_CACHE_DIR", str(tmp_path))
    jf = numfuse.jit(lambda x: np.sqrt(x) + 2.0)
    x = np.arange(9.0)
    assert_same(jf(x), np.sqrt(x) + 2.0)
    files = list((tmp_path / "kernels").glob("nf_pw_sqrt_add_*.py"))
    assert len(files) == 1
    text = files[0].read_text()
    assert text.startswith("# numfuse kernel nf_pw_sqrt_add")
    assert "test_runtime.py" in text  # the header names the user's source lines


def test_simulator_is_announced_once_when_no_driver_is_found():
    from numfuse.targets.cuda.device import driver_has_device

    code = (
        "import warnings, numpy as np, numfuse\n"
        "warnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    f = numfuse.jit(lambda x: x + 1)\n"
        "    f(np.ones(3)); f(np.ones(4))\n"
        "print(sum('simulator' in str(x.message) for x in w))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    expected = 0 if driver_has_device() else 1
    assert out.stdout.strip() == str(expected), out.stderr


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_negative_integer_powers_raise_like_numpy(dtype):
    jf = numfuse.jit(lambda x, y: (x ** y, x + 1))
    x = np.arange(1, 7, dtype=dtype)
    good = np.array([0, 1, 2, 3, 2, 1], dtype)
    assert_same(jf(x, good), (x ** good, x + 1))
    bad = good.copy()
    bad[3] = -1
    with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed"):
        x ** bad
    with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed"):
        jf(x, bad)
    empty = np.zeros(0, dtype)
    assert_same(jf(empty, empty), (empty ** empty, empty + 1))  # nothing to raise for


def test_unsigned_and_float_powers_need_no_runtime_check():
    for dtype in (np.uint8, np.float32):
        x = np.arange(4, dtype=dtype)
        nest = numfuse.jit(lambda x, y: x ** y).plan(x, x).kernels[0].nest
        assert all(b.name != "nf_errors" for b in nest.buffers)
