"""The fast call path (targets/cuda/fastcall.py): a signature's second call on device arrays skips
classification, tracing and planning, and packs only what changed. Each test calls with new
data of one signature several times and checks every result against NumPy and that the full
path ran once."""

import threading
import warnings
from types import SimpleNamespace

import numpy as np
import pytest

import numfuse
from numfuse.jit_function import JitFunction
from numfuse.targets.cuda.device import backend
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


# -- the GPU fast path, without a GPU -------------------------------------------------------------
#
# A GPU-mode FastCall is built from a plan run once here, with stand-ins for the library (arrays
# with a data pointer and the CUDA array interface), for allocation and for the kernels (which
# record their parameters). Every packed parameter is then checked against the loop nest: where
# each array's pointer, sizes and strides go, each scalar's value, each size.


class StandIn:
    def __init__(self, shape, dtype, ptr, strides=None):
        self.shape, self.dtype, self.ptr = tuple(shape), np.dtype(dtype), ptr
        self.strides = strides or tuple(int(s) for s in np.empty(shape, dtype).strides)

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "strides": self.strides, "typestr": self.dtype.str,
                "data": (self.ptr, False), "version": 3}


class _Recorder:
    config, function = "config", "function"  # what a graph's kernel node takes (launch.GpuKernel)

    def __init__(self, record):
        self.record = record

    def __call__(self, stream, params):
        self.record.append(list(params))


class _DryExecutable:
    def __init__(self, real, record, graphs=False):
        from numfuse.targets.cuda.device_props import H200
        from numfuse.targets.cuda.device import Backend

        self.plan, self.launches = real.plan, real.launches
        self.scalar_casts, self.checks_errors = real.scalar_casts, real.checks_errors
        self.buffers = real.buffers
        self.contexts = []  # the thread of each cuda.current_context() call
        cuda = SimpleNamespace(current_context=lambda: self.contexts.append(threading.get_ident()))
        self.backend = Backend(cuda=cuda, simulated=False, props=H200)
        self.core_streams = type("Streams", (), {"get": staticmethod(lambda handle: handle)})()
        self.kernel_for = _Recorder(record)
        self._real = real
        self.cuda_graphs = graphs


    def kernel(self, device_id, index):
        return self.kernel_for

    def device_consts(self, call):
        return {}

    def scratch_array(self, call, launch, position, shape, dtype, zeroed):
        return StandIn(shape, dtype, 0x7000_0000 + 0x1000 * position)


def dry_gpu_call(fn, host_args, graphs=False, calls=1):
    from types import SimpleNamespace

    from numfuse.targets.cuda import fastcall
    from numfuse.targets.cuda.arrays import FastAccess

    jf = numfuse.jit(fn)
    jf(*[device(a) if isinstance(a, np.ndarray) else a for a in host_args])
    compiled = next(iter(jf._cache.values()))
    pointers = iter(range(0x1000_0000, 0x2000_0000, 0x10_0000))
    args = [StandIn(a.shape, a.dtype, next(pointers), a.strides) if isinstance(a, np.ndarray) else a
            for a in host_args]
    allocated = []

    def empty(shape, dtype):
        allocated.append(StandIn(shape, dtype, next(pointers)))
        return allocated[-1], allocated[-1].ptr

    record = []
    dry = _DryExecutable(compiled.executable, record, graphs)
    call = SimpleNamespace(library=None, handle=0, stream=0, device_id=None, cuda=None)
    fast = fastcall.FastCall(dry, call, FastAccess(lambda a: a.ptr, empty, lambda: 0), args,
                             compiled.traced_positions, lambda outs: outs, True)
    assert fast.stub is not None
    for _ in range(calls):
        outputs = fast.run(args)
    return compiled, args, allocated, record, outputs


def check_packed(compiled, args, allocated, record):
    from numfuse.targets.cuda.launch import c_strides

    plan = compiled.plan
    traced = [args[i] for i in compiled.traced_positions]
    input_of = {v: traced[k] for k, v in enumerate(plan.graph.inputs)}
    allocated_pointers = {a.ptr for a in allocated}
    launched = [(k, s) for k, s in zip(plan.kernels, compiled.sources) if k.nest.outer_size > 0]
    assert len(record) == len(launched)
    for (kernel, source), params in zip(launched, record):
        views = {b.name: b for b in kernel.nest.buffers}
        at = 0
        for p in source.params:
            if p.kind == "buffer":
                b = views[p.name]
                n = len(b.view)
                head, shape, strides = params[at:at + 5], params[at + 5:at + 5 + n], params[at + 5 + n:at + 5 + 2 * n]
                at += 5 + 2 * n
                assert head[:4] == [0, 0, int(np.prod(b.view)), b.dtype.itemsize], p.name
                assert tuple(shape) == b.view, p.name
                var = kernel.buffer_vars[p.name]
                source_array = input_of.get(plan.aliases.get(var, var))
                if source_array is not None and not isinstance(source_array, (int, float)):
                    assert head[4] == source_array.ptr, p.name
                    expected = source_array.strides if b.strided else c_strides(b.view, b.dtype.itemsize)
                else:
                    assert head[4] in allocated_pointers, p.name
                    expected = c_strides(b.view, b.dtype.itemsize)
                assert tuple(strides) == tuple(expected), p.name
            elif p.kind == "scalar":
                scalar = next(s for s in kernel.nest.scalars if s.name == p.name)
                value = params[at]
                at += 1
                want = scalar.dtype.type(traced[scalar.input_index])
                got = value if isinstance(value, bool) else value.value
                if scalar.dtype == np.float16:
                    got = np.uint16(got).view(np.float16)
                if scalar.dtype.kind == "c":  # two parameters: the real part, the imaginary part
                    got = complex(got, params[at].value)
                    at += 1
                assert got == want, p.name
            elif p.kind in ("partial", "counter"):
                at += 7
            elif p.kind == "count":
                assert np.dtype(p.dtype).type(params[at].value) == p.value, p.name
                at += 1
            else:
                assert params[at].value == (p.value if p.kind != "cache_points" else params[at].value)
                at += 1
        assert at == len(params)


@pytest.mark.parametrize("case", ["scalars", "softmax", "strided", "float16", "in place", "two kernels", "complex",
                                  "mean and var"])
def test_the_gpu_fast_path_packs_every_parameter_where_the_kernel_reads_it(case):
    x = RNG.random((6, 10), np.float32)
    fn, host_args = {
        "scalars": (lambda x, a, n, flag: np.where(flag, x * a + n, x), (x, np.float32(1.5), 3, True)),
        "softmax": (softmax, (x,)),
        "strided": (lambda x, y: x.T * y, (np.asfortranarray(x), RNG.random((10, 6), np.float32))),
        "float16": (lambda h, s: h * s, (x.astype(np.float16), 0.25)),
        "in place": (lambda a, b: a.__setitem__(slice(1, -1), a[1:-1] + b[1:-1]) or a,
                     (RNG.random(9), RNG.random(9))),
        "two kernels": (lambda x: x - x.max(axis=1), (RNG.random((5, 5), np.float32),)),
        "mean and var": (lambda x: (x.mean(axis=1), x.var(axis=0, ddof=1)), (RNG.random((5, 7), np.float32),)),
        "complex": (lambda z, a, n, b: z * a + n * b,
                    ((RNG.random(6) + 1j * RNG.random(6)).astype(np.complex64), np.complex64(1 - 2j), 3, 0.5 + 1.5j)),
    }[case]
    compiled, args, allocated, record, outputs = dry_gpu_call(fn, host_args)
    check_packed(compiled, args, allocated, record)
    for out in outputs:
        assert out in args or any(out is a for a in allocated)


class _FakeGraphs:
    """cuda.core's explicit graphs as far as graphs.py uses them: nodes record their launch
    parameters; a graph launch records every node's current parameters, in order."""

    def __init__(self):
        self.definitions, self.launches = [], []
        fake = self

        class Node:
            def __init__(self, definition, pred, config, kernel, args):
                self.definition, self.pred = definition, pred
                self.params = [config, kernel, list(args)]
                definition.nodes.append(self)

            def launch(self, config, kernel, *args):
                return Node(self.definition, self, config, kernel, args)

        class Definition:
            def __init__(self):
                self.nodes, self.instantiated = [], 0
                fake.definitions.append(self)

            def launch(self, config, kernel, *args):
                return Node(self, None, config, kernel, args)

            def instantiate(self):
                self.instantiated += 1
                return Graph(self)

        class ExecNode:
            def __init__(self, graph, node):
                self.graph, self.node = graph, node

            def update(self, *, config, kernel, args):
                self.graph.current[self.node] = [config, kernel, list(args)]

        class Graph:
            def __init__(self, definition):
                self.definition = definition
                self.current = {n: n.params for n in definition.nodes}

            def __getitem__(self, node):
                return ExecNode(self, node)

            def launch(self, stream):
                fake.launches.append([self.current[n][2] for n in self.definition.nodes])

        self.Definition = Definition


@pytest.mark.parametrize("case", ["two kernels", "mean and var", "one kernel"])
def test_with_cuda_graphs_several_kernels_launch_as_one_graph_updated_every_call(case, monkeypatch):
    from numfuse.targets.cuda import graphs

    fake = _FakeGraphs()
    monkeypatch.setattr(graphs, "graph_definition_class", lambda: fake.Definition)
    fn, x = {
        "two kernels": (lambda x: x - x.max(axis=1), RNG.random((5, 5), np.float32)),
        "mean and var": (lambda x: (x.mean(axis=1), x.var(axis=0, ddof=1)), RNG.random((5, 7), np.float32)),
        "one kernel": (lambda x: x * 2 + 1, RNG.random((5, 7), np.float32)),
    }[case]
    compiled, args, allocated, record, _ = dry_gpu_call(fn, (x,), graphs=True, calls=3)
    if len(compiled.plan.kernels) == 1:  # nothing to gain: launched directly
        assert fake.definitions == [] and len(record) == 3
        return
    assert len(compiled.plan.kernels) == 2 and record == []  # no kernel launched on its own
    definition, = fake.definitions  # built once, at the first call, then updated
    assert definition.instantiated == 1 and len(fake.launches) == 3
    first, second = definition.nodes
    assert first.pred is None and second.pred is first  # the plan's order
    per_call = len(allocated) // 3
    for k, params in enumerate(fake.launches):
        # Each launch has every parameter where the kernel reads it, with this call's buffers.
        check_packed(compiled, args, allocated[k * per_call:(k + 1) * per_call], params)


def test_complex_arrays_and_scalars(full_calls):
    def f(z, a, s):
        return np.exp(z) * a + s, abs(z) * 2

    def make():
        z = (RNG.standard_normal(8) + 1j * RNG.standard_normal(8)).astype(np.complex64)
        return z, np.complex64(complex(*RNG.standard_normal(2))), complex(*RNG.standard_normal(2))

    check(f, make, full_calls)


def test_a_complex_scalar_cast_to_a_real_dtype_keeps_its_real_part_on_the_fast_path(full_calls):
    """np.full_like(x, c) of a float x and a complex c holds c's real part, as NumPy's unsafe
    cast gives it; the fast path's cast must not be np.float32(c), which refuses."""
    def f(x, c):
        return np.full_like(x, c)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        check(f, lambda: (RNG.standard_normal(6).astype(np.float32), complex(*RNG.standard_normal(2))), full_calls)


def test_a_numba_cuda_without_the_internals_falls_back_to_numbas_launch(monkeypatch):
    """Where numba-cuda lacks what launch.py reads (the loaded function's cuda.core kernel, say),
    kernels launch through Numba's dispatcher, with a warning, and take the full path."""
    from numfuse.targets.cuda.device_props import H200
    from numfuse.errors import NumfuseWarning
    from numfuse.targets.cuda import executable as executable_module, launch
    from numfuse.targets.cuda.device import Backend

    def missing(self, *args):
        raise AttributeError("'CudaFunction' object has no attribute 'kernel'")

    monkeypatch.setattr(launch.GpuKernel, "__init__", missing)
    executable_module.warn_once.cache_clear()
    jf = numfuse.jit(lambda x: x + 1)
    x = np.arange(4.0)
    jf(x)
    executable = next(iter(jf._cache.values())).executable
    executable.backend = Backend(cuda=backend().cuda, simulated=False, props=H200)
    executable._kernels.clear()
    with pytest.warns(NumfuseWarning, match="Numba's dispatcher"):
        kernel = executable.kernel(None, 0)
    assert isinstance(kernel, launch.DispatcherKernel) and not kernel.packed
    # It launches on the call's stream, not the default stream.
    configured = []
    kernel.compiled = _Configure(configured)
    stream = backend().cuda.stream()
    kernel(stream, [])
    assert configured == [(kernel.config.grid, kernel.config.block, stream, kernel.config.shared_bytes)]


class _Configure:
    """A dispatcher stand-in recording each launch configuration `[grid, block, stream, shared]`."""

    def __init__(self, record: list):
        self.record = record

    def __getitem__(self, config):
        self.record.append(config)
        return lambda *args: None


def test_numbas_launch_never_gets_a_configuration_past_48_kib(monkeypatch):
    """An autotune winner remembered on disk may opt into more shared memory than a launch gets
    by default; where kernels fall back to Numba's dispatcher, which cannot opt in, the kernel
    takes the cost model's configuration instead."""
    from dataclasses import replace

    from numfuse.targets.cuda.device_props import H200
    from numfuse.errors import NumfuseWarning
    from numfuse.targets.cuda import executable as executable_module, launch
    from numfuse.targets.cuda.device import Backend
    from numfuse.targets.cuda.launch_model import candidate_configs

    def missing(self, *args):
        raise AttributeError("'CudaFunction' object has no attribute 'kernel'")

    monkeypatch.setattr(launch.GpuKernel, "__init__", missing)
    executable_module.warn_once.cache_clear()
    jf = numfuse.jit(lambda x: (x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, keepdims=True))
    x = RNG.random((2, 6000))
    jf(x)
    executable = next(iter(jf._cache.values())).executable
    props = replace(H200, shared_optin_usable=True)
    executable.backend = Backend(cuda=backend().cuda, simulated=False, props=props)
    nest = executable.launches[0].nest
    wide = next(c for c in candidate_configs(nest, props) if c.shared_bytes > launch.STATIC_SHARED_BYTES)
    executable.launches[0] = executable._make_launch(executable.plan.kernels[0], executable.launches[0].source, wide)
    executable._kernels.clear()
    with pytest.warns(NumfuseWarning, match="Numba's dispatcher"):
        kernel = executable.kernel(None, 0)
    assert not kernel.packed and kernel.config == executable.launches[0].config
    assert kernel.config.shared_bytes <= launch.STATIC_SHARED_BYTES and kernel.config == candidate_configs(nest, props)[0]


def test_a_cuda_core_without_explicit_graphs_launches_kernel_by_kernel_with_a_warning(monkeypatch):
    from numfuse.errors import NumfuseWarning
    from numfuse.targets.cuda import graphs

    monkeypatch.setattr(graphs, "graph_definition_class", lambda: None)
    with pytest.warns(NumfuseWarning, match="no explicit CUDA graphs"):
        compiled, args, allocated, record, _ = dry_gpu_call(
            lambda x: x - x.max(axis=1), (RNG.random((5, 5), np.float32),), graphs=True, calls=2)
    assert len(record) == 4
    check_packed(compiled, args, allocated, record[2:])


def test_a_graph_that_cannot_be_built_launches_kernel_by_kernel_with_a_warning(monkeypatch):
    """A driver or cuda.core that refuses the graph (instantiate raises) costs a warning, not
    the call: every call's kernels then launch one by one, each with that call's buffers."""
    from numfuse.errors import NumfuseWarning
    from numfuse.targets.cuda import graphs

    fake = _FakeGraphs()

    class Refusing(fake.Definition):
        def instantiate(self):
            raise RuntimeError("CUDA_ERROR_NOT_SUPPORTED")

    monkeypatch.setattr(graphs, "graph_definition_class", lambda: Refusing)
    with pytest.warns(NumfuseWarning, match="could not build a CUDA graph"):
        compiled, args, allocated, record, _ = dry_gpu_call(
            lambda x: x - x.max(axis=1), (RNG.random((5, 5), np.float32),), graphs=True, calls=3)
    assert len(compiled.plan.kernels) == 2 and fake.launches == []
    assert len(record) == 6  # two kernels a call, three calls
    per_call = len(allocated) // 3
    for k in range(3):
        check_packed(compiled, args, allocated[k * per_call:(k + 1) * per_call], record[2 * k:2 * k + 2])


def test_a_split_reduction_on_another_stream_takes_that_streams_scratch(monkeypatch):
    """A split reduction's arrival counters and partial results are kept per stream: calls on
    two streams may overlap, and sharing one counter would corrupt both sums. The fast path
    holds its own stream's scratch, so a call on another stream takes the full path."""
    from types import SimpleNamespace

    from numfuse.errors import OtherStream
    from numfuse.targets.cuda import fastcall
    from numfuse.targets.cuda.arrays import FastAccess

    jf = numfuse.jit(lambda x: x.sum())
    x = RNG.random(20000).astype(np.float32)
    jf(device(x))
    compiled = next(iter(jf._cache.values()))
    assert any(arg[0] == "scratch" for arg in compiled.executable.launches[0].args)  # split
    handles = iter([0, 7, 7])
    dry = _DryExecutable(compiled.executable, [])
    call = SimpleNamespace(library=None, handle=0, stream=0, device_id=None, cuda=None)
    access = FastAccess(lambda a: a.ptr, lambda shape, dtype: (StandIn(shape, dtype, 0x3000_0000),) * 2,
                        lambda: next(handles))
    fast = fastcall.FastCall(dry, call, access, [StandIn(x.shape, x.dtype, 0x1000_0000)],
                             compiled.traced_positions, lambda outs: outs, True)
    args = [StandIn(x.shape, x.dtype, 0x1000_0000)]
    fast.run(args)  # its own stream (handle 0): launched
    assert len(dry.kernel_for.record) == 1
    with pytest.raises(OtherStream):
        fast.run(args)  # stream 7, through the straight-line stub
    with pytest.raises(OtherStream):
        fast(args)  # and through FastCall's own loops

    # The full path keys the scratch by the call's stream.
    executable = compiled.executable
    key_of = lambda handle: SimpleNamespace(device_id=None, handle=handle,  # noqa: E731
                                            upload_constants=lambda arrays: dict(arrays))
    first = executable.scratch_array(key_of(0), 0, 5, (4,), np.dtype(np.int32), True)
    assert executable.scratch_array(key_of(0), 0, 5, (4,), np.dtype(np.int32), True) is first
    assert executable.scratch_array(key_of(7), 0, 5, (4,), np.dtype(np.int32), True) is not first


def test_each_thread_makes_a_context_current_before_its_first_fast_launch():
    """Kernels launch into the thread's current CUDA context, and a fast call enters none: a
    fresh thread whose call allocates nothing (it only writes into its argument) would launch
    without one. Each thread's first fast call makes one current; later calls pay nothing."""
    from numfuse.targets.cuda import fastcall
    from numfuse.targets.cuda.arrays import FastAccess

    def double_in_place(x):
        x *= 2
        return x

    jf = numfuse.jit(double_in_place)
    x = RNG.random(8).astype(np.float32)
    jf(device(x))
    compiled = next(iter(jf._cache.values()))
    dry = _DryExecutable(compiled.executable, [])
    call = SimpleNamespace(library=None, handle=0, stream=0, device_id=None, cuda=None)
    args = [StandIn(x.shape, x.dtype, 0x1000_0000)]
    fast = fastcall.FastCall(dry, call, FastAccess(lambda a: a.ptr, None, lambda: 0), args,
                             compiled.traced_positions, lambda outs: outs, True)
    assert fast.alloc_slots == []  # nothing allocated: nothing else would make a context current
    for run in (fast.run, fast):  # the straight-line stub, and FastCall's own loops
        for calls in (2, 1):  # each in a fresh thread: no context made current yet
            dry.contexts.clear()
            worker = threading.Thread(target=lambda: [run(args) for _ in range(calls)])
            worker.start()
            worker.join()
            assert len(dry.contexts) == 1 and dry.contexts[0] == worker.ident
    assert len(dry.kernel_for.record) == 6
