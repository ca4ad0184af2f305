"""Array kinds and streams, on whatever runs kernels (the simulator, or a GPU with --gpu).

A pretend device library (numfuse_tests/interop.py) takes the path CuPy and PyTorch take:
its arrays are read in place, every buffer is allocated through it, results come back as its
arrays, kernels run on its current stream, and calls never wait for the GPU. The real CuPy and
PyTorch paths are in test_gpu_interop.py.
"""

import numpy as np
import pytest

import numfuse
import numfuse.jit_function as jit_module
from numfuse.targets.cuda import streams
from numfuse.targets.cuda.device import backend
from numfuse_tests.helpers import assert_same
from numfuse_tests.interop import FakeTensor, address, fakelib, kernel_addresses, launches  # noqa: F401

X = np.arange(36, dtype=np.float32).reshape(6, 6) % 7


def shift(x, s):
    """Two kernels: row maxima (an intermediate buffer), then an elementwise pass that reads
    them along the columns (another row's result, so not a second pass of the first kernel)."""
    return (x - x.max(axis=1)) * s


def forbid(*args, **kwargs):
    raise AssertionError("numfuse allocated with Numba while the call's library should have")


# -- Numba device arrays -----------------------------------------------------------------------


def test_numba_device_arrays_are_read_and_written_in_place(launches):
    cuda = backend().cuda
    x = cuda.to_device(X)
    out = numfuse.jit(shift)(x, 0.5)
    assert type(out) is type(x)
    touched = kernel_addresses(launches)
    assert address(x) in touched and address(out) in touched
    assert_same(out.copy_to_host(), shift(X, np.float32(0.5)))


@pytest.mark.parametrize("view", ["x[1:, ::2]", "x.T", "x.reshape(9, 4)", "x[::-1]"])
def test_a_view_of_a_numba_device_array_comes_back_as_that_view_of_it(view):
    cuda = backend().cuda
    fn = eval(f"lambda x: {view}")
    x = cuda.to_device(X)
    out = numfuse.jit(fn)(x)
    expected = fn(X)
    assert type(out) is type(x)
    offset = expected.__array_interface__["data"][0] - X.__array_interface__["data"][0]
    assert address(out) - address(x) == offset  # the caller's memory: a view, no copy
    assert_same(out.copy_to_host(), expected)


def test_a_view_numbas_device_arrays_cannot_make_comes_back_as_a_new_array():
    cuda = backend().cuda
    x = cuda.to_device(X)
    out = numfuse.jit(lambda x: np.broadcast_to(x, (2, 6, 6)))(x)
    assert_same(out.copy_to_host(), np.broadcast_to(X, (2, 6, 6)))


# -- another library's arrays ---------------------------------------------------------------------


def test_library_arrays_in_library_arrays_out_every_buffer_from_the_library(fakelib, launches, monkeypatch):
    cuda = backend().cuda
    x = fakelib.array(X)
    monkeypatch.setattr(cuda, "device_array", forbid)
    monkeypatch.setattr(cuda, "to_device", forbid)
    out = numfuse.jit(shift)(x, 0.5)
    assert isinstance(out, FakeTensor)
    assert len(fakelib.allocated) == 2  # the row maxima and the result
    assert any(out is t for t in fakelib.allocated)
    # The kernels touched the caller's array and the library's allocations, nothing else.
    assert kernel_addresses(launches) == {address(x.data)} | {address(t.data) for t in fakelib.allocated}
    assert fakelib.entered == [0]  # allocations happened in the library's context for GPU 0
    assert_same(out.get(), shift(X, np.float32(0.5)))


def test_kernels_run_on_the_librarys_current_stream(fakelib, launches):
    numfuse.jit(shift)(fakelib.array(X), 0.5)
    assert len(launches) == 2
    assert all(launch.stream is fakelib.stream for launch in launches)


def test_the_stream_option_overrides_the_librarys_stream(fakelib, launches):
    mine = backend().cuda.stream()
    out = numfuse.jit(shift, stream=mine)(fakelib.array(X), 0.5)
    assert launches and all(launch.stream is mine for launch in launches)
    assert_same(out.get(), shift(X, np.float32(0.5)))


def test_with_the_stream_option_buffers_come_from_that_streams_pool(fakelib, monkeypatch):
    """Buffers the call frees (the intermediate row maxima) are reused by a stream-ordered pool
    only after the work of the stream they were allocated for: with numfuse.jit(stream=...),
    that is the option's stream, not the library's current one."""
    from numfuse.targets.cuda import streams as streams_module

    monkeypatch.setattr(streams_module, "handle_of", lambda stream: 4242 if stream else 0)
    numfuse.jit(shift)(fakelib.array(X), 0.5)
    assert fakelib.own_streams and set(fakelib.own_streams) == {None}  # the library's stream
    fakelib.own_streams.clear()
    numfuse.jit(shift, stream=backend().cuda.stream())(fakelib.array(X), 0.5)
    assert len(fakelib.own_streams) == 2 and set(fakelib.own_streams) == {4242}


@pytest.mark.parametrize("name", ["cupy", "torch"])
def test_cupy_and_torch_allocate_inside_the_own_streams_context(name, monkeypatch):
    """CupyArrays.empty and TorchTensors.empty make `own_stream` current around the allocation
    (stand-in modules: CuPy's pool and PyTorch's caching allocator take the current stream)."""
    import sys
    from types import SimpleNamespace

    from numfuse.targets.cuda.libraries import CupyArrays, TorchTensors

    current = [None]
    allocations = []

    class ExternalStream:
        def __init__(self, handle, device=None):
            self.handle = handle

        def __enter__(self):
            current.append(self.handle)

        def __exit__(self, *exc):
            current.pop()

    class Allocated:
        __cuda_array_interface__ = {}

    def empty(shape, *args, **kwargs):
        allocations.append(current[-1])
        return Allocated()

    cuda = SimpleNamespace(from_cuda_array_interface=lambda desc, owner, sync: owner)
    if name == "cupy":
        cupy_cuda = SimpleNamespace(ExternalStream=ExternalStream, Stream=SimpleNamespace(null=ExternalStream(0)))
        module, library = SimpleNamespace(empty=empty, cuda=cupy_cuda), CupyArrays()
    else:
        module = SimpleNamespace(empty=empty, float32="torch.float32", device=lambda kind, i: (kind, i),
                                 cuda=SimpleNamespace(ExternalStream=ExternalStream, stream=lambda s: s,
                                                      default_stream=lambda device: ExternalStream(0)))
        library = TorchTensors()
    monkeypatch.setitem(sys.modules, name, module)
    library.empty(cuda, (3,), np.float32, 0, None)
    library.empty(cuda, (3,), np.float32, 0, None, own_stream=77)
    library.empty(cuda, (3,), np.float32, 0, None, own_stream=0)  # the default stream's own
    assert allocations == [None, 77, 0] and current == [None]


def test_numpy_calls_run_on_the_default_stream_or_the_stream_option(launches):
    numfuse.jit(shift)(X, 0.5)
    assert launches and all(launch.stream == 0 for launch in launches)
    launches.clear()
    mine = backend().cuda.stream()
    out = numfuse.jit(shift, stream=mine)(X, 0.5)
    assert launches and all(launch.stream is mine for launch in launches)
    assert_same(out, shift(X, np.float32(0.5)))


def test_numpy_arguments_are_copied_into_the_device_arguments_library(fakelib):
    y = np.linspace(-1, 1, 36, dtype=np.float32).reshape(6, 6)
    out = numfuse.jit(lambda x, y: x * y + 1)(fakelib.array(X), y)
    assert isinstance(out, FakeTensor)
    copies = [t for t in fakelib.allocated if t is not out]
    assert len(copies) == 1 and np.array_equal(copies[0].get(), y)
    assert_same(out.get(), X * y + 1)


def test_arguments_returned_unchanged_are_the_callers_objects(fakelib):
    x, y = fakelib.array(X), fakelib.array(X + 1)
    same, total = numfuse.jit(lambda x, y: (x, x + y))(x, y)
    assert same is x
    assert isinstance(total, FakeTensor)
    assert_same(total.get(), X + (X + 1))


def test_one_compiled_function_serves_every_kind_of_array(fakelib, monkeypatch):
    calls = []
    real = jit_module.trace
    monkeypatch.setattr(jit_module, "trace", lambda *a, **k: calls.append(1) or real(*a, **k))
    jf = numfuse.jit(shift)
    jf(fakelib.array(X), 0.5)
    jf(backend().cuda.to_device(X), 0.5)  # device arrays of another library: same signature
    assert len(calls) == 1
    jf(X, 0.5)  # NumPy arrays: a new signature (results come back to the host)
    assert len(calls) == 2


def test_device_calls_never_wait_and_numpy_calls_wait_for_their_stream(fakelib, monkeypatch):
    cuda = backend().cuda
    x = fakelib.array(X)
    waits, copies = [], []
    real_copy = type(x.data).copy_to_host
    with monkeypatch.context() as patch:
        patch.setattr(type(fakelib.stream), "synchronize", lambda self: waits.append(self))
        patch.setattr(cuda, "synchronize", lambda: waits.append("the whole device"))
        patch.setattr(type(x.data), "copy_to_host", lambda *a, **k: copies.append(1) or real_copy(*a, **k))
        out = numfuse.jit(shift)(x, 0.5)
    assert waits == [] and copies == []
    assert_same(out.get(), shift(X, np.float32(0.5)))

    with monkeypatch.context() as patch:
        patch.setattr(type(fakelib.stream), "synchronize", lambda self: waits.append(self))
        patch.setattr(cuda, "synchronize", lambda: waits.append("the whole device"))
        host = numfuse.jit(shift, stream=fakelib.stream)(X, 0.5)
    assert waits and all(w is fakelib.stream for w in waits)
    assert_same(host, shift(X, np.float32(0.5)))


def test_errors_found_by_kernels_are_raised_for_device_arguments(fakelib):
    x = np.arange(1, 5, dtype=np.int32)
    bad = np.array([1, 2, -1, 0], np.int32)
    with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed"):
        numfuse.jit(lambda x, y: x ** y)(fakelib.array(x), fakelib.array(bad))
    good = numfuse.jit(lambda x, y: x ** y)(fakelib.array(x), fakelib.array(np.abs(bad)))
    assert_same(good.get(), x ** np.abs(bad))


# -- refused combinations ----------------------------------------------------------------------


def test_arrays_on_different_gpus_are_refused_before_anything_runs(fakelib, launches):
    x, y = fakelib.array(X, device=0), fakelib.array(X, device=1)
    with pytest.raises(ValueError, match=r"'x' \(on GPU 0\) and 'y' \(on GPU 1\) are on different GPUs"):
        numfuse.jit(lambda x, y: x + y)(x, y)
    assert launches == [] and fakelib.allocated == []


def test_device_arrays_of_two_libraries_are_refused(fakelib, launches):
    x, y = fakelib.array(X), backend().cuda.to_device(X)
    with pytest.raises(numfuse.UnsupportedError, match=r"'x' \(.*FakeTensor\) and 'y' \(Numba device array\)"):
        numfuse.jit(lambda x, y: x + y)(x, y)
    assert launches == []


@pytest.mark.skipif(not backend().simulated, reason="on a GPU foreign CUDA arrays run (test_gpu_interop.py)")
def test_foreign_cuda_arrays_are_refused_on_the_simulator():
    class Foreign:
        __cuda_array_interface__ = {"shape": (3,), "typestr": "<f4", "data": (0, False), "version": 3}

    with pytest.raises(numfuse.UnsupportedError, match=r"argument 'x' is a .*Foreign.*simulator"):
        numfuse.jit(lambda x: x + 1)(Foreign())


# -- bad input ---------------------------------------------------------------------------------------

BAD_ARRAYS = [
    np.array([1, "a", None], dtype=object),
    np.zeros(3, dtype=[("a", "<i4"), ("b", "<f8")]),
    np.array(["2024-01-01", "2024-01-02", "2024-01-03"], dtype="datetime64[D]"),
    np.array([1, 2, 3], dtype="timedelta64[s]"),
    np.array(["abc", "de", "f"]),
    np.array([b"abc", b"", b"x"]),
    np.ones(3, dtype=">f4"),
]


@pytest.mark.parametrize("bad", BAD_ARRAYS, ids=lambda a: str(a.dtype))
def test_unsupported_dtypes_raise_before_anything_runs(bad, launches, monkeypatch):
    traced = []
    monkeypatch.setattr(jit_module, "trace", lambda *a, **k: traced.append(1))
    with pytest.raises(numfuse.UnsupportedError) as info:
        numfuse.jit(lambda x, y: x + y)(np.ones(3), bad)
    message = str(info.value)
    assert "argument 'y'" in message and str(bad.dtype) in message
    assert traced == [] and launches == []


def test_unsupported_dtypes_of_device_arrays_name_the_argument(launches):
    device = backend().cuda.to_device(np.arange(3).astype("timedelta64[s]"))
    with pytest.raises(numfuse.UnsupportedError, match=r"dtype timedelta64\[s\] \(argument 'z'\)"):
        numfuse.jit(lambda z: z + 1)(device)
    assert launches == []


# -- streams --------------------------------------------------------------------------------------


def test_launch_streams_from_every_form():
    cuda, simulated = backend().cuda, backend().simulated
    numba_stream = cuda.stream()
    assert streams.launch_stream(cuda, simulated, None) == 0
    assert streams.launch_stream(cuda, simulated, numba_stream) is numba_stream
    assert streams.launch_stream(cuda, simulated, 0) == 0
    if simulated:  # everything is synchronous there: foreign streams are the default stream
        assert streams.launch_stream(cuda, True, 12345) == 0
    else:
        assert streams.handle_of(streams.launch_stream(cuda, False, 12345)) == 12345


def test_a_numpy_only_call_runs_on_the_current_gpu():
    """What an executable keeps per GPU (loaded kernels, constants, scratch) is keyed by the
    call's GPU: a NumPy-only call takes the current one, so switching GPUs between calls never
    reuses another GPU's kernels or memory. (On the simulator there is one device: None.)"""
    from types import SimpleNamespace

    from numfuse.targets.cuda.arrays import prepare_call

    x = np.zeros(3)
    cuda = SimpleNamespace(get_current_device=lambda: SimpleNamespace(id=1))
    on_gpu = SimpleNamespace(cuda=cuda, simulated=False)
    assert prepare_call(on_gpu, ["x"], [x]).device_id == 1
    assert prepare_call(SimpleNamespace(cuda=cuda, simulated=True), ["x"], [x]).device_id is None
