"""The fast call path (runtime/fastcall.py): a signature's second call on device arrays skips
classification, tracing and planning, and packs only what changed. Each test calls with new
data of one signature several times and checks every result against NumPy and that the full
path ran once."""

import numpy as np
import pytest

import numfuse
from numfuse.jit_function import JitFunction
from numfuse.runtime.device import backend
from numfuse_tests.helpers import assert_same
from numfuse_tests.interop import fakelib, launches  # noqa: F401

RNG = np.random.default_rng(5)


@pytest.fixture
def full_calls(monkeypatch) -> list:
    """Every call that went through the full path (classify, trace, plan, run)."""
    record = []
    real = JitFunction._call

    def call(self, args, kwargs):
        record.append(args)
        return real(self, args, kwargs)

    monkeypatch.setattr(JitFunction, "_call", call)
    return record


def device(array):
    return backend().cuda.to_device(array)


def host(array):
    return array.copy_to_host() if hasattr(array, "copy_to_host") else array


def chain(x, y, s):
    z = np.exp(x) * y + s
    return z, z.sum(axis=1)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layer_norm(x, w, b):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * w + b


def check(fn, make_args, full_calls, calls=3):
    jf = numfuse.jit(fn)
    for _ in range(calls):
        args = make_args()
        expected = fn(*args)
        got = jf(*[device(a) if isinstance(a, np.ndarray) else a for a in args])
        if isinstance(expected, tuple):
            for g, e in zip(got, expected):
                assert_same(host(g), e)
        else:
            assert_same(host(got), expected)
    assert len(full_calls) == 1, "only the first call of a signature takes the full path"
    return jf


def test_an_elementwise_chain_with_a_reduction_and_a_scalar(full_calls):
    shape = (6, 9)
    check(chain, lambda: (RNG.random(shape, np.float32), RNG.random(shape, np.float32), float(RNG.random())),
          full_calls)


def test_softmax_and_layer_norm_persistent_kernels(full_calls):
    check(softmax, lambda: (RNG.standard_normal((5, 33)).astype(np.float32),), full_calls)
    full_calls.clear()
    check(layer_norm, lambda: tuple(RNG.standard_normal(s).astype(np.float32) for s in ((4, 20), (20,), (20,))),
          full_calls)


def test_numpy_scalars_and_ints(full_calls):
    def f(x, a, n):
        return x * a + n

    check(f, lambda: (RNG.integers(-9, 9, (7,)).astype(np.int16), np.int16(RNG.integers(-3, 3)),
                      int(RNG.integers(0, 5))), full_calls)


def test_in_place_updates_of_a_device_argument_every_call(full_calls):
    def step(a, b):
        a[1:-1] += b[1:-1] * 2
        return a

    jf = numfuse.jit(step)
    a, b = np.arange(10.0), np.ones(10)
    da, db = device(a), device(b)
    for _ in range(3):
        out = jf(da, db)
        step(a, b)
        assert out is da
        assert_same(da.copy_to_host(), a)
    assert len(full_calls) == 1


def test_a_transposed_argument_is_read_through_its_strides_on_the_fast_path(full_calls):
    def f(x):
        return x * 2 + 1

    jf = numfuse.jit(f)
    for _ in range(3):
        x = RNG.random((4, 6), np.float32)
        dx = device(np.ascontiguousarray(x.T)).T  # a device array in Fortran order
        assert_same(host(jf(dx)), f(x))
    assert len(full_calls) == 1


def test_a_new_shape_dtype_or_layout_takes_the_full_path_once(full_calls):
    def f(x):
        return x + 1

    jf = numfuse.jit(f)
    for shape, dtype in [((5,), np.float32), ((5,), np.float32), ((6,), np.float32), ((5,), np.float64),
                         ((6,), np.float32)]:
        x = np.arange(shape[0], dtype=dtype)
        assert_same(host(jf(device(x))), f(x))
    assert len(full_calls) == 3


def test_an_int_out_of_range_leaves_the_fast_path_for_numpys_answer(full_calls):
    def f(x, n):
        return x + n

    jf = numfuse.jit(f)
    x = device(np.arange(4, dtype=np.int8))
    assert_same(host(jf(x, 3)), np.arange(4, dtype=np.int8) + 3)
    assert_same(host(jf(x, 4)), np.arange(4, dtype=np.int8) + 4)
    with pytest.raises(OverflowError):
        jf(x, 1000)  # NumPy 2: a Python int that does not fit int8 raises
    assert len(full_calls) == 2


def test_numpy_arguments_always_take_the_full_path(full_calls):
    x = np.arange(5.0)
    jf = numfuse.jit(lambda x: x * 3)
    for _ in range(2):
        out = jf(x)
        assert isinstance(out, np.ndarray)
        assert_same(out, x * 3)
    assert len(full_calls) == 2


def test_keyword_calls_and_other_libraries_take_the_full_path(full_calls, fakelib):  # noqa: F811
    def f(x, s=2.0):
        return x * s

    jf = numfuse.jit(f)
    x = np.arange(4, dtype=np.float32)
    for _ in range(2):
        assert_same(host(jf(device(x), s=3.0)), x * 3)
        assert_same(jf(fakelib.array(x)).get(), x * 2)
    assert len(full_calls) == 4


def test_a_python_int_that_steers_code_is_static_on_the_fast_path_too(full_calls):
    def f(x, axis):
        return x.sum(axis=axis)

    jf = numfuse.jit(f)
    x = RNG.random((3, 4), np.float32)
    for axis in (0, 1, 0, 1):
        assert_same(host(jf(device(x), axis)), f(x, axis))
    assert len(full_calls) == 2
