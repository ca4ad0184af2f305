"""Library calls as plan steps: shapes and dtypes of every library primitive as NumPy gives
them, NumPy's errors for bad shapes, the choice between a fused sum of products and a library
call, and the plans around library calls (producers and consumers fused)."""

import itertools

import numpy as np
import pytest

import numfuse
from numfuse.ir.library_ops import LIBRARY, matmul_shape

F32 = np.float32


def ones(*shape, dtype=F32):
    return np.ones(shape, dtype)


def plan_of(fn, *args):
    return numfuse.jit(fn).plan(*args)


# -- shapes and dtypes ---------------------------------------------------------------------------

SHAPES = [(3,), (2, 3), (3, 4), (4,), (2, 3, 4), (1, 3, 4), (5, 1, 4, 2), (4, 2), (2, 4, 3)]


@pytest.mark.parametrize("a, b", list(itertools.product(SHAPES, SHAPES)))
def test_matmul_shape_rule_is_numpys(a, b):
    try:
        expected = np.matmul(np.ones(a), np.ones(b)).shape
    except ValueError:
        expected = None
    assert matmul_shape(a, b) == expected


DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.float32, np.float64, np.complex64]


@pytest.mark.parametrize("da, db", list(itertools.product(DTYPES, DTYPES)))
def test_matmul_dtype_is_numpys(da, db):
    x, y = np.ones((8, 16), da), np.ones((16, 8), db)
    graph = numfuse.jit(lambda x, y: x @ y).graph(x, y)
    assert graph.outputs[0].aval.dtype == np.matmul(x, y).dtype
    assert graph.outputs[0].aval.shape == (8, 8)


def _numpy_and_graph_avals(fn, *args):
    expected = fn(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    graph = numfuse.jit(fn).graph(*args)
    return [(np.shape(e), np.asarray(e).dtype) for e in expected], [(v.aval.shape, v.aval.dtype) for v in graph.outputs]


SPD = np.eye(4) * 4 + 0.5


def _scatter(a, i):
    b = a * 2.0
    np.add.at(b, i, 1.0)
    return b


def _put(a, i):
    b = a * 2.0
    np.put(b, i, 5.0)
    return b


def _place(a):
    b = a * 2.0
    np.place(b, b > 1.0, [7.0, 8.0])
    return b


EDGES = np.linspace(0.0, 1.0, 5)
CASES = {
    "put": (_put, np.ones((4, 3), F32), np.array([0, 2, 0])),
    "place": (_place, np.ones((4, 3), F32)),
    "scatter": (_scatter, np.ones((4, 3), F32), np.array([0, 2, 0])),
    "searchsorted": (lambda a, v: np.searchsorted(a, v, side="right"), EDGES, np.ones((2, 3), F32)),
    "digitize": (lambda x, b: np.digitize(x, b), np.ones((2, 3), F32), EDGES),
    "interp": (lambda x, xp: np.interp(x, xp, xp * 2), np.ones(3, F32), EDGES),
    "histogram": (lambda x: np.histogram(x, bins=7), np.ones(9, F32)),
    "histogram_edges": (lambda x, b: np.histogram(x, bins=b, weights=x), np.ones(9, F32), EDGES),
    "bincount": (lambda x: np.bincount(x, minlength=6), np.ones(9, np.int32)),
    "solve": (lambda a, b: np.linalg.solve(a, b), SPD, np.ones(4)),
    "solve_batched": (lambda a, b: np.linalg.solve(a, b), np.stack([SPD] * 3), np.ones((3, 4, 2), F32)),
    "inv": (lambda a: np.linalg.inv(a), SPD.astype(F32)),
    "inv_int": (lambda a: np.linalg.inv(a), np.eye(3, dtype=np.int32) * 2),
    "cholesky": (lambda a: np.linalg.cholesky(a), SPD),
    "det": (lambda a: np.linalg.det(a), np.stack([SPD] * 2)),
    "slogdet": (lambda a: np.linalg.slogdet(a), SPD.astype(F32)),
    "qr": (lambda a: np.linalg.qr(a), np.ones((5, 3))),
    "qr_complete": (lambda a: np.linalg.qr(a, mode="complete"), np.ones((5, 3))),
    "qr_r": (lambda a: np.linalg.qr(a, mode="r"), np.ones((3, 5))),
    "svd": (lambda a: np.linalg.svd(a), np.ones((5, 3), F32)),
    "svd_reduced": (lambda a: np.linalg.svd(a, full_matrices=False), np.ones((3, 5))),
    "svd_s": (lambda a: np.linalg.svd(a, compute_uv=False), np.ones((2, 3, 5))),
    "eigh": (lambda a: np.linalg.eigh(a), SPD),
    "eigvalsh": (lambda a: np.linalg.eigvalsh(a), SPD.astype(F32)),
    "pinv": (lambda a: np.linalg.pinv(a), np.ones((5, 3))),
    "lstsq": (lambda a, b: np.linalg.lstsq(a, b, rcond=None), np.eye(5, 3) + 0.1, np.ones(5)),
    "matrix_power": (lambda a: np.linalg.matrix_power(a, 3), SPD),
    "sort": (lambda a: np.sort(a, axis=0), np.ones((3, 4), np.int16)),
    "sort_flat": (lambda a: np.sort(a, axis=None), np.ones((3, 4))),
    "argsort": (lambda a: np.argsort(a), np.ones((3, 4), F32)),
    "partition": (lambda a: np.partition(a, 1), np.ones((3, 4), F32)),
    "cumsum_i32": (lambda a: np.cumsum(a, axis=1), np.ones((3, 4), np.int32)),
    "cumsum_bool": (lambda a: np.cumsum(a), np.ones((3, 4), bool)),
    "cumprod_u8": (lambda a: np.cumprod(a, axis=0), np.ones((3, 4), np.uint8)),
    "cumsum_dtype": (lambda a: np.cumsum(a, dtype=np.float32), np.ones((3, 4), np.int64)),
    "nancumsum": (lambda a: np.nancumsum(a, axis=0), np.ones((3, 4))),
    # float16 and complex scans are the library's (the others are fused: test_fused_scans.py)
    "cumsum_f16": (lambda a: np.cumsum(a, axis=1), np.ones((3, 4), np.float16)),
    "cumprod_complex": (lambda a: np.cumprod(a), np.ones((3, 4), np.complex64)),
    "nancumsum_complex": (lambda a: np.nancumsum(a, axis=0), np.ones((3, 4), np.complex128)),
    "fft": (lambda a: np.fft.fft(a), np.ones((3, 8), F32)),
    "fft_n": (lambda a: np.fft.fft(a, n=5, axis=0), np.ones((3, 8))),
    "ifft": (lambda a: np.fft.ifft(a), np.ones(8, np.complex64)),
    "rfft": (lambda a: np.fft.rfft(a), np.ones((3, 8), np.int32)),
    "irfft": (lambda a: np.fft.irfft(a), np.ones((3, 5), np.complex128)),
    "irfft_n": (lambda a: np.fft.irfft(a, n=9), np.ones(5, np.complex64)),
    "fft2": (lambda a: np.fft.fft2(a), np.ones((2, 3, 4))),
    "ifft2": (lambda a: np.fft.ifft2(a, s=(3, 5)), np.ones((2, 3, 4))),
    "fftn": (lambda a: np.fft.fftn(a), np.ones((2, 3, 4), F32)),
    "rfft2": (lambda a: np.fft.rfft2(a), np.ones((4, 6))),
    "irfftn": (lambda a: np.fft.irfftn(a, axes=(0, 1)), np.ones((4, 6, 2), np.complex64)),
    "nancumprod": (lambda a: np.nancumprod(a), np.ones((3, 4), F32)),
    "nancumprod_f16": (lambda a: np.nancumprod(a), np.ones((3, 4), np.float16)),
    "matmul": (lambda a, b: a @ b, np.ones((2, 16, 16)), np.ones((16, 16), F32)),
    "ifftn": (lambda a: np.fft.ifftn(a, axes=(0, 2)), np.ones((2, 3, 4))),
    "rfftn": (lambda a: np.fft.rfftn(a), np.ones((4, 6))),
    "irfft2": (lambda a: np.fft.irfft2(a), np.ones((4, 4), np.complex128)),
    "einsum_library": (lambda a, b: np.einsum("bij,bjk->bik", a, b), np.ones((2, 16, 16)), np.ones((2, 16, 16))),
    "einsum_fused": (lambda a, b: np.einsum("ij,j->i", a, b), np.ones((6, 5), F32), np.ones(5, F32)),
    "einsum_implicit": (lambda a, b: np.einsum("ij,kj", a, b), np.ones((3, 2)), np.ones((4, 2))),
    "einsum_ellipsis": (lambda a: np.einsum("...ij->...ji", a), np.ones((2, 3, 4))),
    "tensordot": (lambda a, b: np.tensordot(a, b, axes=([1, 0], [0, 1])), np.ones((3, 4, 5)), np.ones((4, 3, 2))),
    "inner": (lambda a, b: np.inner(a, b), np.ones((2, 3)), np.ones((4, 3), np.int32)),
    "dot_nd": (lambda a, b: np.dot(a, b), np.ones((2, 3, 4)), np.ones((5, 4, 6))),
    "vdot": (lambda a, b: np.vdot(a, b), np.ones((2, 3), np.int32), np.ones(6, np.int32)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_library_function_avals_are_numpys(name):
    fn, *args = CASES[name]
    expected, got = _numpy_and_graph_avals(fn, *args)
    assert got == expected


def test_every_library_primitive_is_reached():
    reached = set()
    for fn, *args in CASES.values():
        reached |= {e.prim for e in numfuse.jit(fn).graph(*args).eqns}
    missing = set(LIBRARY) - reached
    assert not missing, missing


def test_linalg_results_keep_numpys_types():
    fn = numfuse.jit(lambda a: (np.linalg.eigh(a), np.linalg.slogdet(a), np.linalg.svd(a), np.linalg.qr(a)))
    graph = fn.graph(SPD)
    assert len(graph.outputs) == 2 + 2 + 3 + 2


# -- NumPy's errors ------------------------------------------------------------------------------


def _same_error(fn, *args):
    with pytest.raises(Exception) as expected:
        fn(*args)
    with pytest.raises(type(expected.value)) as got:
        numfuse.jit(fn).graph(*args)
    assert str(expected.value) in str(got.value)


@pytest.mark.parametrize("fn, args", [
    (lambda a, b: a @ b, (ones(3, 4), ones(5, 6))),
    (lambda a, b: np.matmul(a, b), (ones(2, 3, 4), ones(3, 4, 2))),
    (lambda a, b: a @ b, (ones(4), ones(5))),
    (lambda a, b: np.dot(a, b), (ones(3, 4), ones(5, 6))),
    (lambda a, b: np.dot(a, b), (ones(2, 3, 4), ones(2, 5, 6))),
    (lambda a: np.linalg.inv(a), (ones(3, 4),)),
    (lambda a: np.linalg.det(a), (ones(3),)),
    (lambda a: np.linalg.cholesky(a), (ones(2, 3),)),
    (lambda a, b: np.linalg.solve(a, b), (ones(3, 3), ones(4))),
    (lambda a: np.linalg.qr(a), (ones(3),)),
    (lambda a: np.sort(a, axis=2), (ones(3, 4),)),
    (lambda a: np.cumsum(a, axis=-3), (ones(3, 4),)),
    (lambda a: np.partition(a, 9), (ones(3, 4),)),
    (lambda a, b: np.vdot(a, b), (ones(3), ones(4))),
    (lambda a, b: np.tensordot(a, b, axes=1), (ones(3, 4), ones(3, 4))),
])
def test_bad_shapes_raise_numpys_error(fn, args):
    _same_error(fn, *args)


def test_matmul_of_a_scalar_raises_numpys_error():
    _same_error(lambda x: np.matmul(x, 2.0), ones(3))


# -- plans -----------------------------------------------------------------------------------------

X, W, B = ones(256, 128), ones(128, 64), ones(64)


def test_bias_and_activation_fuse_after_the_product():
    plan = plan_of(lambda x, w, b: np.tanh(x @ w + b), X, W, B)
    assert [type(s).__name__ for s in plan.steps] == ["LibraryStep", "Kernel"]
    assert len(plan.kernels) == 1 and len(plan.library_steps) == 1
    # The kernel reads the product and the bias, and writes the result: nothing else.
    assert plan.kernels[0].bytes_moved == (256 * 64 * 2 + 64) * 4


def test_reduction_of_a_product_is_one_kernel_after_it():
    plan = plan_of(lambda x, w: (x @ w).sum(1), X, W)
    assert len(plan.library_steps) == 1 and len(plan.kernels) == 1
    assert plan.kernels[0].nest.kind == "reduction"


def test_producers_fuse_into_the_kernel_that_stores_the_library_input():
    plan = plan_of(lambda x, w: np.exp(x * 2.0 - 1.0) @ w, X, W)
    assert [type(s).__name__ for s in plan.steps] == ["Kernel", "LibraryStep"]
    assert plan.kernels[0].bytes_moved == 2 * X.nbytes
    assert "reads" in plan.library_steps[0].reason


def test_matrix_times_vector_is_one_row_reduction():
    plan = plan_of(lambda a, v: a @ v, X, ones(128))
    assert not plan.library_steps and len(plan.kernels) == 1
    assert plan.kernels[0].nest.kind == "reduction"
    assert plan.bytes_moved == plan.min_bytes


@pytest.mark.parametrize("fn, args", [
    (lambda a, b: a @ b, (ones(128), ones(128))),  # a dot product: one full reduction
    (lambda a, b: a @ b, (ones(128), ones(128, 64))),  # a vector times a matrix
    (lambda a, b: a @ b, (ones(1000, 3, 3), ones(1000, 3, 3))),  # tiny matrices
    (lambda a, b: np.dot(a, b), (ones(64, 32), ones(32))),
    (lambda a, b: np.einsum("ij,j->i", a, b), (ones(64, 32), ones(32))),
    (lambda a, b: np.einsum("i,j->ij", a, b), (ones(64), ones(32))),
])
def test_cheap_products_fuse(fn, args):
    plan = plan_of(fn, *args)
    assert not plan.library_steps and len(plan.kernels) == 1


def test_explain_names_the_choice_and_the_library_call():
    text = numfuse.jit(lambda x, w, b: np.tanh(x @ w + b)).explain(X, W, B)
    assert "runs as a library call" in text
    assert "-- library matmul" in text
    text = numfuse.jit(lambda a, v: a @ v).explain(X, ones(128))
    assert "fused as a sum of products" in text


def test_printed_plan_lists_steps_in_order():
    plan = plan_of(lambda x, w: np.linalg.inv(x @ w.T + 1.0) * 2.0, ones(64, 64), ones(64, 64))
    lines = str(plan).splitlines()
    # w.T is read in place by the product: no kernel copies it.
    assert lines[0].startswith("plan: 2 kernel(s) + 2 library call(s)")
    assert [line.split(":")[0].split(" ")[0] for line in lines[1:]] == ["library", "#0", "library", "#1"]
    assert plan.library_steps[0].views


@pytest.mark.parametrize("fn", [
    lambda x, w: x[:, ::2] @ w,  # a slice with a step
    lambda x, w: np.flip(x[:, :64]) @ w,  # negative steps
    lambda x, w: x[3:40:2, 1::2].T @ w[:19, :],  # a slice, then a transpose
    lambda x, w: x.reshape(128, 64)[::2] @ w,  # a reshape, then a slice
    lambda x, w: np.broadcast_to(w[0], (64, 64)) @ w,  # a broadcast
])
def test_library_calls_read_views_of_arguments_in_place(fn):
    # NumPy's call sees the view's strides, which decide its loop (BLAS or not) and so its bits:
    # the library reads the same view, no kernel copies it.
    x, w = ones(64, 128), ones(64, 64)
    plan = plan_of(fn, x, w)
    assert not plan.kernels and len(plan.library_steps) == 1
    (step,) = plan.library_steps
    assert step.views and not step.stored_inputs


def test_library_calls_read_views_of_updated_arrays_in_place():
    # npbench's covariance: products of views of an argument after `data -= mean`. The version
    # the views read is in the argument's buffer once its kernel ran: no kernel copies a view.
    def f(data, w):
        data -= data.mean(axis=0)
        return data[:, ::2] @ w, data.T @ data

    plan = plan_of(f, ones(64, 128), ones(64, 64))
    assert len(plan.kernels) == 2 and len(plan.library_steps) == 2
    written = plan.kernels[-1].spec.update.out
    for step in plan.library_steps:
        assert set(step.stored_inputs) <= {written}  # data itself, as it is in its buffer
        assert {base for base, _ in step.views.values()} == {written}
    assert plan.steps[:2] == plan.kernels  # the calls after the update's kernel
    assert "as a view of" in str(plan)


@pytest.mark.parametrize("later", [
    lambda x, y: x.__imul__(y[0, 0]),  # after the product: it needs its result
    lambda x, y: x.__imul__(2.0),  # free to run before it: the product must still go first
    lambda x, y: x.__setitem__((slice(None), 0), 3.0),  # another region of the buffer
])
def test_a_view_read_by_a_library_call_is_not_overwritten_before_it(later):
    def f(x, w):
        x -= 1.0
        y = x[:, ::2] @ w
        later(x, y)
        return y

    plan = plan_of(f, ones(64, 128), ones(64, 64))
    (step,) = plan.library_steps
    ((base, _),) = step.views.values()
    writer = next(k for k in plan.kernels if k.spec.update is not None and k.spec.update.out is base)
    overwriters = [k for k in plan.kernels if k is not writer and k.spec.update is not None]
    assert plan.steps.index(writer) < plan.steps.index(step)
    assert all(plan.steps.index(k) > plan.steps.index(step) for k in overwriters)


def test_library_input_read_after_an_in_place_update_is_refused_clearly():
    def f(x, w):
        y = x * 2.0
        p = y @ w
        y[0] = 0.0
        return p, y

    plan = plan_of(f, X.copy(), W)
    assert len(plan.library_steps) == 1


def test_a_scalar_argument_is_not_a_matrix():
    with pytest.raises(ValueError):
        numfuse.jit(lambda x, s: np.matmul(x, s)).graph(ones(3), 2.0)


def test_the_library_steps_benchmark_plans_without_a_gpu():
    from benchmarks.library_steps import plan_rows

    rows = {line.split("|")[1].strip(): line for line in plan_rows(large=False)[2:]}
    assert "library matmul → pointwise" in rows["mlp_gelu"]
    assert "library" not in rows["cumsum_normalized"]  # a fused scan


def test_library_calls_run_after_the_kernels_that_write_their_inputs():
    # Two chains whose second products read values of the next level: found by the corpus
    # (npbench's scattering_self_energies), where the steps were once put out of order.
    def f(a, b):
        x = (a @ b[0]) @ (b[0] * 2.0)
        y = (a @ b[1]) @ (b[1] * 3.0)
        return x, y

    plan = plan_of(f, np.ones((2, 2), complex), np.ones((2, 2, 2), complex))
    written_before = set()
    for step in plan.steps:
        if hasattr(step, "nest"):
            written_before |= set(step.writes)
        else:
            for var in step.stored_inputs:
                assert var in written_before, (plan.names[var], str(plan))
            written_before |= set(step.outputs)


def test_linalg_options_cupy_lacks_are_adapted_not_passed():
    """On a GPU the library is CuPy, whose np.linalg takes no cholesky `upper`, pinv `rtol` or
    `hermitian`: a stand-in with CuPy's signatures (NumPy underneath) gives NumPy's results."""
    import types

    class Linalg:
        def cholesky(self, a):
            return np.linalg.cholesky(a)

        def pinv(self, a, rcond=1e-15):
            return np.linalg.pinv(a, rcond=rcond)

        def svd(self, a, full_matrices=True, compute_uv=True):
            return np.linalg.svd(a, full_matrices, compute_uv)

    cupy_like = types.SimpleNamespace(linalg=Linalg(), swapaxes=np.swapaxes)
    a = np.array([[4.0, 1.0], [1.0, 3.0]])
    run = lambda prim, params: LIBRARY[prim].run(cupy_like, [a], params)[0]  # noqa: E731
    np.testing.assert_allclose(run("linalg_cholesky", {"upper": True}), np.linalg.cholesky(a, upper=True))
    np.testing.assert_allclose(run("linalg_pinv", {"rtol": 1e-10}), np.linalg.pinv(a, rtol=1e-10))
    np.testing.assert_allclose(run("linalg_svd", {"full_matrices": True, "compute_uv": False, "hermitian": True}),
                               np.linalg.svd(a, compute_uv=False))


def _multiply_at(x, i):
    np.multiply.at(x, i, 2.0)
    return x * 1.0


def _add_at_wider(x, i):
    np.add.at(x, i, -1)  # NumPy adds in float64 and casts to uint64
    return x * 1


def _add_at(x, i):
    np.add.at(x, i, 1.0)
    return x * 1.0


@pytest.mark.parametrize("fn, args, cupy_runs", [
    (lambda a, b: np.tanh(a @ b), (np.ones((64, 64)), np.ones((64, 64))), True),
    (_add_at, (np.ones(4), np.array([0, 0, 3])), True),
    (_multiply_at, (np.ones(4), np.array([0, 0, 3])), False),
    (_add_at_wider, (np.ones(4, np.uint64), np.array([0, 0, 3])), False),
])
def test_a_gpu_runs_library_calls_through_cupy_but_what_it_lacks(fn, args, cupy_runs, monkeypatch):
    """With CuPy on a GPU, a library step runs through CuPy on the plan's device buffers; a
    scatter CuPy has none for (np.multiply.at), or one that NumPy runs in a wider dtype than the
    array's, runs through NumPy on the host. A stand-in for CuPy (NumPy underneath) and for the
    device buffers shows which path each step takes."""
    import contextlib
    import sys
    import types
    import warnings

    from numfuse.targets.cuda import library_calls

    used = []

    class Buffer(np.ndarray):
        def copy_to_device(self, host, stream=None):
            used.append("host")
            self[...] = host

    class CupyStandIn(types.SimpleNamespace):
        def __getattr__(self, name):
            return getattr(np, name)

    context = lambda *a, **k: contextlib.nullcontext()  # noqa: E731
    cuda = types.SimpleNamespace(Device=context, ExternalStream=context,
                                 runtime=types.SimpleNamespace(getDevice=lambda: 0))
    stand_in = CupyStandIn(cuda=cuda, asarray=lambda a, **k: used.append("cupy") or np.asarray(a, **k))
    plan = plan_of(fn, *args)
    (step,) = plan.library_steps
    call = types.SimpleNamespace(simulated=False, device_id=None, handle=0, stream=0, read=np.asarray)
    rng = np.random.default_rng(0)
    env = {v: (rng.integers(0, 3, v.aval.shape) if v.aval.dtype.kind in "iu" else rng.random(v.aval.shape))
           .astype(v.aval.dtype).view(Buffer) for v in step.inputs + step.outputs}
    expected = step.op.run(np, [np.array(env[v]) for v in step.inputs], step.params)
    monkeypatch.setattr(library_calls, "_cupy", lambda: stand_in)
    monkeypatch.setitem(sys.modules, "cupyx", types.SimpleNamespace(
        scatter_add=np.add.at, scatter_max=np.maximum.at, scatter_min=np.minimum.at))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the host path's note that it runs on the host
        library_calls.run_step(call, step, env)
    assert ("cupy" in used) == cupy_runs and ("host" in used) != cupy_runs, used
    for var, value in zip(step.outputs, expected):
        np.testing.assert_array_equal(np.asarray(env[var]), value)


# -- the CPU target's products ---------------------------------------------------------------------
# There NumPy's matmul is its BLAS: as fast as memory allows on every core, in the BLAS's order of
# summation. A product of stored operands summing more than CpuTarget.fused_product_terms terms runs
# there; short sums and products of a computed operand fuse (their library call would need the
# operand written first).


def cpu_plan(fn, *args):
    return numfuse.jit(fn, target="cpu").plan(*args)


@pytest.mark.parametrize("fn, args", [
    (lambda a, v: a @ v, (ones(64, 32), ones(32))),  # a matrix times a vector
    (lambda v, a: v @ a, (ones(64), ones(64, 32))),
    (lambda a, b: np.dot(a, b), (ones(128), ones(128))),  # a dot product
    (lambda a, b: np.dot(a[::-1], b), (ones(5), ones(5))),  # of any length: its one output
    (lambda a, v: np.einsum("ij,j->i", a, v), (ones(64, 32), ones(32))),
    (lambda a, v: (a @ v) @ a, (ones(64, 32), ones(32))),  # atax: the second reads a library result
    (lambda a, v: a[:, ::2] @ v, (ones(64, 64), ones(32))),  # a view of an argument is stored too
])
def test_cpu_target_runs_long_sums_of_stored_operands_in_the_library(fn, args):
    plan = cpu_plan(fn, *args)
    assert plan.library_steps and all(s.op.name in ("matmul", "dot", "einsum") for s in plan.library_steps)
    # ... and the CUDA target's rule still fuses them
    assert not numfuse.jit(fn, target="cuda").plan(*args).library_steps
    text = numfuse.jit(fn, target="cpu").explain(*args)
    assert "operands are stored and its sums of" in text and "NumPy's matmul on the CPU target" in text


@pytest.mark.parametrize("fn, args", [
    (lambda a, v: 1.5 * a @ v, (ones(64, 32), ones(32))),  # gesummv's alpha * A @ x: A computed
    (lambda a, b, v: (a + b) @ v, (ones(64, 32), ones(64, 32), ones(32))),
    (lambda a, b: a @ b, (ones(1000, 3, 3), ones(1000, 3, 3))),  # tiny matrices: 3 terms
    (lambda x, w: x @ w, (ones(256, 3), ones(3, 64))),  # 3 terms a sum
    (lambda a, b: np.einsum("i,j->ij", a, b), (ones(64), ones(32))),  # an outer product
])
def test_cpu_target_fuses_short_sums_and_computed_operands(fn, args):
    plan = cpu_plan(fn, *args)
    assert not plan.library_steps and len(plan.kernels) == 1
