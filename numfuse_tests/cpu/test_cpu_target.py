"""What the CPU target promises beyond matching NumPy: the same bits for any thread count, the
caller's arrays used in place, thread safety, the serial path for small calls, clear refusals."""

import copy
import threading

import numba
import numpy as np
import pytest

import numfuse
from numfuse.errors import UnsupportedError
from numfuse.targets.cpu import CPU

RNG = np.random.default_rng(7)
# Large enough for the parallel functions (CPU.serial_points) and split reductions.
BIG = RNG.uniform(-2, 2, (96, 1500)).astype(np.float32)
LONG = RNG.uniform(-2, 2, 3 * CPU.split_min_reduced + 17)
# Many rows of few columns: a column reduction cut into chunks of rows (column_split_reduction).
TALL = RNG.uniform(-2, 2, (20011, 37)).astype(np.float32)
TALL_NAN = TALL.copy()
TALL_NAN[5000::7001, 3] = np.nan


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


PROGRAMS = {
    "pointwise": (lambda x: np.tanh(x) * 2 + x, BIG),
    "row sums": (lambda x: (x * x).sum(axis=1), BIG),
    "column means": (lambda x: x.mean(axis=0), BIG),
    "softmax": (softmax, BIG),
    "split sum": (lambda x: np.sum(x * 0.5), LONG),
    "split argmax": (lambda x: np.argmax(np.abs(x)), LONG),
    "variance": (lambda x: x.var(axis=1), BIG),
    # 20011 float32 terms: NumPy adds them in row order, numfuse in chunks of rows, both within
    # float32's rounding of the sum of |terms| (about 4e-3 here); numfuse's is the closer to
    # the exact sum (max error 2.3e-4 against NumPy's 2.7e-3, measured against float64).
    "column sums of many rows": (lambda x: (x * 2.0).sum(axis=0), TALL, 1e-3),
    "column argmax": (lambda x: np.argmax(x, axis=0), TALL),
    "column max with NaN": (lambda x: np.max(x, axis=0), TALL_NAN),
    "column variance": (lambda x: x.var(axis=0), BIG),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_results_are_the_same_bits_for_any_thread_count(name):
    fn, x, *atol = PROGRAMS[name]
    f = numfuse.jit(fn, target="cpu")
    results = []
    for threads in sorted({1, numba.config.NUMBA_NUM_THREADS, 2} - {0}):
        if threads > numba.config.NUMBA_NUM_THREADS:
            continue
        numba.set_num_threads(threads)
        try:
            results.append(np.asarray(f(x)).copy())
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    assert len(results) >= 2  # 1 thread and all of them
    assert not f._compiled((x,), {})[0].executable.launches[0].serial  # the parallel function ran
    for r in results[1:]:
        assert r.tobytes() == results[0].tobytes()
    np.testing.assert_allclose(results[0], fn(x), rtol=2e-5, atol=atol[0] if atol else 1e-6)


def test_split_reductions_cut_rows_into_fixed_chunks():
    f = numfuse.jit(lambda x: np.max(x * 0.5), target="cpu")
    nest = f.plan(LONG).kernels[0].nest
    assert nest.split
    assert CPU.nsplit(nest) == min(CPU.split_max_chunks, LONG.size // CPU.split_chunk_points)
    # a float sum's chunks are the nodes of NumPy's pairwise tree at one depth: a power of 2
    nest = numfuse.jit(lambda x: np.sum(x * 0.5), target="cpu").plan(LONG).kernels[0].nest
    chunks = min(CPU.split_max_chunks, LONG.size // CPU.split_chunk_points)
    assert CPU.nsplit(nest) == 1 << (chunks.bit_length() - 1)


def test_a_column_reduction_cuts_its_rows_into_chunks_fixed_by_the_sizes():
    f = numfuse.jit(lambda x: x.max(axis=0), target="cpu")
    nest = f.plan(TALL).kernels[0].nest
    assert nest.schedule == "columns" and not nest.split
    nsplit = CPU.nsplit(nest)
    # As many chunks as fit split_chunk_points each, within split_max_chunks jobs.
    assert nsplit == min(CPU.split_max_chunks, TALL.size // CPU.split_chunk_points) > 1
    # And never fewer than column_chunk_rows rows a chunk: a short input is not cut.
    short = np.ones((2 * CPU.column_chunk_rows - 1, 4096), np.float32)
    assert CPU.nsplit(f.plan(short).kernels[0].nest) == 1
    assert CPU.nsplit(f.plan(np.ones((4 * CPU.column_chunk_rows, 4096), np.float32)).kernels[0].nest) == 4
    (source,) = f.kernel_sources(TALL)
    assert "for job in prange(nblocks * nsplit):" in source.source
    assert {p.name: p.value for p in source.params}["nsplit"] == nsplit
    assert "cut into" in f.explain(TALL)
    # A float sum is not cut: NumPy adds row after row into each output, and so does numfuse (its
    # bits); nor are several phases (a variance's mean, then its squares).
    for g in (lambda x: x.sum(axis=0), lambda x: x.var(axis=0)):
        nest = numfuse.jit(g, target="cpu").plan(TALL).kernels[0].nest
        assert CPU.nsplit(nest) == 1
        np.testing.assert_array_equal(numfuse.jit(g, target="cpu")(TALL), g(TALL))


def test_arguments_are_updated_in_place_and_returned_as_themselves():
    def scale(x, y):
        x *= 2.0
        x[0] = y.sum()
        return x, x + y

    x, y = BIG.copy(), BIG[::-1].copy()
    expected_x, expected_sum = scale(x.copy(), y)
    got_x, got_sum = numfuse.jit(scale, target="cpu")(x, y)
    assert got_x is x  # NumPy returns the argument it updated, not a copy
    np.testing.assert_allclose(x, expected_x, rtol=1e-5)
    np.testing.assert_allclose(got_sum, expected_sum, rtol=1e-5)


def test_a_written_argument_that_shares_memory_with_another_reads_its_old_values():
    def shift(a, b):
        a[1:] = b[:-1] * 2
        return a

    base = np.arange(8.0)
    expected = shift(base.copy(), base.copy())
    got = numfuse.jit(shift, target="cpu")(base, base)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(base, expected)


def test_strided_and_fortran_arguments_are_read_in_place():
    f = numfuse.jit(lambda x: (x * 3).sum(axis=0), target="cpu")
    for x in (BIG[::2, 1::3], np.asfortranarray(BIG), BIG.T):
        np.testing.assert_allclose(f(x), (x * 3).sum(axis=0), rtol=2e-5, atol=1e-4)


def test_small_calls_run_the_serial_function():
    f = numfuse.jit(lambda x: x + 1, target="cpu")
    small = np.ones(10)
    np.testing.assert_array_equal(f(small), small + 1)
    assert f._compiled((small,), {})[0].executable.launches[0].serial


def test_eight_threads_calling_one_function_with_several_signatures():
    f = numfuse.jit(lambda x, y: np.sqrt(np.abs(x)) * y - x.sum(), target="cpu")
    inputs = [(BIG[: 10 + k], BIG[: 10 + k] * 0.5) if k % 2 else (BIG.astype(np.float64), BIG * 2.0)
              for k in range(8)]
    results, errors = [None] * 8, []

    def call(k):
        try:
            for _ in range(3):
                results[k] = f(*inputs[k])
        except Exception as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=call, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for k, (x, y) in enumerate(inputs):
        np.testing.assert_allclose(results[k], np.sqrt(np.abs(x)) * y - x.sum(), rtol=1e-4, atol=1e-2)


def test_float16_is_rounded_after_every_operation_as_numpy_does():
    x = np.random.default_rng(1).uniform(-60, 60, 5000).astype(np.float16)

    def f(x):
        return (x * 3 + 1) / 7, np.sqrt(np.abs(x)).sum(), np.arccos(np.int8(1) * np.zeros(3, np.int8))

    got, expected = numfuse.jit(f, target="cpu")(x), f(x)
    assert got[0].dtype == np.float16 and got[2].dtype == np.float16
    np.testing.assert_array_equal(got[0], expected[0])  # every step rounded to float16, bit for bit
    np.testing.assert_array_equal(got[2], expected[2])
    np.testing.assert_allclose(np.float64(got[1]), np.float64(expected[1]), rtol=2e-3)


def test_explain_names_the_target_and_shows_the_cpu_code():
    text = numfuse.jit(softmax, target="cpu").explain(BIG)
    assert "target: cpu" in text
    assert "@njit(parallel=True" in text and "prange(" in text


def test_compile_builds_every_function_without_running():
    x = BIG.copy()
    before = x.copy()
    f = numfuse.jit(lambda x: softmax(x) + x.sum(axis=0), target="cpu")
    asm = f.compile(x)
    executable = f._compiled((x,), {})[0].executable
    assert len(asm) == len(executable.launches) >= 2
    assert all(executable.function(i).signatures for i in range(len(asm)))  # compiled, or loaded from disk
    np.testing.assert_array_equal(x, before)


def test_the_stream_option_belongs_to_the_cuda_target():
    with pytest.raises(UnsupportedError, match="CUDA option"):
        numfuse.jit(lambda x: x, target="cpu", stream=0)


def test_later_calls_of_a_signature_take_the_fast_path_with_new_values():
    f = numfuse.jit(lambda x, s: (x * s).sum(axis=1), target="cpu")
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(f(x, 2.0), (x * 2.0).sum(axis=1))
    assert any(fast is not None for fast in f._fast.values())
    for scale in (3.0, -1.5):
        y = x + scale
        np.testing.assert_allclose(f(y, scale), (y * scale).sum(axis=1))
    # Another layout and a read-only array are other signatures: the full path, then their own.
    for other in (np.asfortranarray(x), x[:, ::2], np.lib.stride_tricks.as_strided(x, writeable=False)):
        np.testing.assert_allclose(f(other, 2.0), (other * 2.0).sum(axis=1))
    # An int out of int64's range leaves the fast path: NumPy's OverflowError, from the full path.
    ints = np.ones((2, 2), np.int64)
    np.testing.assert_array_equal(f(ints, 3), (ints * 3).sum(axis=1))
    with pytest.raises(OverflowError):
        ints * 2**70
    with pytest.raises(OverflowError):
        f(ints, 2**70)


def test_a_fast_call_runs_the_plan_without_the_full_calls_bookkeeping(monkeypatch):
    # Later calls of a signature run the kernels and library steps straight from the fast
    # path (executable._FastCall), not through CpuExecutable.__call__: in-place updates, a
    # library step, an index-array gather with its error flag, new values.
    from numfuse.targets.cpu.executable import CpuExecutable

    def step(a, w, idx, k):
        a[1:] += a[:-1] * k
        h = np.tanh(a @ w) + k
        return h, a[::2] * 2, w[idx].sum(axis=0)

    f = numfuse.jit(step, target="cpu", numpy_fallback=False)
    rng = np.random.default_rng(3)
    a, w, idx = rng.random(8), rng.random((8, 3)), np.array([0, 7, 2])
    full_calls = []
    original = CpuExecutable.__call__
    monkeypatch.setattr(CpuExecutable, "__call__", lambda self, *args, **kw: full_calls.append(1) or
                        original(self, *args, **kw))
    for k in (0.5, -2.0, 3.0):
        mine, theirs = a.copy(), a.copy()
        got, want = f(mine, w, idx, k), step(theirs, w, idx, k)
        np.testing.assert_array_equal(mine, theirs)
        for g, e in zip(got, want):
            np.testing.assert_allclose(g, e, rtol=1e-12)
    assert len(full_calls) == 1  # the first call; the later ones ran on the fast path
    with pytest.raises(IndexError, match="index out of bounds"):
        f(a.copy(), w, np.array([0, 8, 1]), 1.0)  # NumPy: IndexError, from the kernel's error flag
    assert len(full_calls) == 1


_BESIDE = [
    lambda x: (x.sum(axis=-1), x.max(axis=-1)),
    lambda x: (x.mean(axis=-1), np.argmax(x, axis=-1), x.min(axis=-1)),
    lambda x: ((x * 2).sum(axis=-1), np.abs(x).max(axis=-1)),
]


@pytest.mark.parametrize("f, shape", [(f, shape) for f in _BESIDE for shape in [(10_000,), (40, 3000)]]
                         + [(lambda x: (x.sum(), np.cumsum(x)), (10_000,))])
def test_a_sum_beside_other_reductions_of_its_row_is_numpys_pairwise_sum(f, shape):
    # Found by a battery: in one pass with a max, an argmax or a cumsum, a float32 sum folded
    # in their order, 1 to 6 ULP from NumPy's (pairwise.sums_apart: the sums' own pass).
    x = (np.random.default_rng(0).random(shape) + 1000).astype(np.float32)
    for got, want in zip(numfuse.jit(f, target="cpu", numpy_fallback=False)(x), f(x)):
        np.testing.assert_array_equal(got, want)
        assert np.asarray(got).dtype == np.asarray(want).dtype


@pytest.mark.parametrize("n", [7, 8, 64, 127, 129, 200, 1000, 5000])
@pytest.mark.parametrize("chunked", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_row_sum_is_numpys_pairwise_sum(n, chunked, dtype):
    """A row reduction's float sum adds in NumPy's pairwise order (codegen._pairwise_loop):
    leaves of at most 128 points folded into 8 lanes, halves rounded down to a multiple of 8
    points above that. Where the points compute something (an exp here), NumPy's sum of those
    values. A row of at most CPU.short_row_points points adds them in order, as NumPy does."""
    x = np.random.default_rng(n).uniform(-3, 3, (3, n)).astype(dtype)
    if chunked:
        values = numfuse.jit(lambda x: np.exp(x), target="cpu")(x)  # the same exp template
        got = numfuse.jit(lambda x: np.exp(x).sum(axis=1), target="cpu")(x)
    else:
        values = x
        got = numfuse.jit(lambda x: x.sum(axis=1), target="cpu")(x)
    np.testing.assert_array_equal(got, values.sum(axis=1))
    # ... and a mean's and a variance's, which NumPy computes from such sums
    np.testing.assert_array_equal(numfuse.jit(lambda x: x.mean(axis=1), target="cpu")(x), x.mean(axis=1))
    np.testing.assert_array_equal(numfuse.jit(lambda x: x.var(axis=1), target="cpu")(x), x.var(axis=1))


@pytest.mark.parametrize("n", [8193, 20000])
def test_a_sum_of_values_its_reduction_casts_adds_numpys_buffers_in_turn(n):
    """NumPy casts such a row (np.mean of ints, sum(dtype=np.float64) of float32) into buffers
    of np.getbufsize() points and adds each buffer's pairwise sum to the total in turn."""
    rng = np.random.default_rng(n)
    ints = rng.integers(-2**60, 2**60, (3, n))
    floats = (rng.standard_normal((3, n)) * 2.0 ** rng.integers(0, 60, (3, n))).astype(np.float32)
    for fn, x in ((lambda x: np.mean(x, axis=1), ints), (lambda x: x.mean(), ints),
                  (lambda x: x.sum(axis=-1, dtype=np.float64), floats), (lambda x: x.sum(dtype=np.float64), floats),
                  (lambda x: (x * 3).sum(axis=1, dtype=np.float64), ints)):
        np.testing.assert_array_equal(numfuse.jit(fn, target="cpu")(x), fn(x))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_a_row_product_multiplies_in_order_as_numpy_does(dtype):
    x = (1 + np.random.default_rng(3).standard_normal((20, 500)) * 1e-2).astype(dtype)
    for fn in (lambda x: x.prod(axis=1), lambda x: np.nanprod(x * 1.5, axis=1)):
        np.testing.assert_array_equal(numfuse.jit(fn, target="cpu")(x), fn(x))


@pytest.mark.parametrize("shape", [(3 * (1 << 15) + 17,), ((1 << 21) + 5,), (3, 100_003)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_split_sum_is_numpys_pairwise_sum(shape, dtype):
    # few long rows: each cut into the nodes of NumPy's pairwise tree at one depth, one job
    # each, the nodes' sums added back up the tree
    x = np.random.default_rng(5).standard_normal(shape).astype(dtype)
    f = numfuse.jit(lambda x: x.sum(axis=-1), target="cpu")
    assert f.plan(x).kernels[0].nest.split
    np.testing.assert_array_equal(f(x), x.sum(axis=-1))
    np.testing.assert_array_equal(numfuse.jit(lambda x: np.mean(x * 2.0), target="cpu")(x), np.mean(x * 2.0))


def test_a_row_sum_of_negative_zeros_and_empty_rows_is_numpys():
    for x in (np.full((4, 300), -0.0), np.zeros((4, 0)), np.full((4, 12), -0.0)):
        np.testing.assert_array_equal(numfuse.jit(lambda x: x.sum(axis=1), target="cpu")(x), x.sum(axis=1))
        assert not np.signbit(numfuse.jit(lambda x: x.sum(axis=1), target="cpu")(x)).any()


COLUMN_REDUCTIONS = {
    "min": (lambda x: x.min(axis=0), np.float32),
    "argmin": (lambda x: x.argmin(axis=0), np.float32),
    "any": (lambda x: (x > 1.999).any(axis=0), np.float32),
    "all": (lambda x: (x > -1.999).all(axis=0), np.float32),
    "int sum": (lambda x: (x * 100).astype(np.int32).sum(axis=0), np.float32),
    "nanmax": (lambda x: np.nanmax(x, axis=0), np.float32),
    "an epilogue": (lambda x: np.sqrt(np.abs(x.max(axis=0))) + x.min(axis=0), np.float32),
}
# Float sums and products, row after row into each output as NumPy computes them: its bits.
ORDERED_COLUMN_REDUCTIONS = {
    "sum float64": (lambda x: x.sum(axis=0), np.float64),
    "sum float32": (lambda x: (x * x).sum(axis=0), np.float32),
    "prod": (lambda x: (1.0 + x * 1e-4).prod(axis=0), np.float32),
    "mean": (lambda x: x.mean(axis=0), np.float32),
    "an epilogue": (lambda x: np.sqrt(np.abs(x.sum(axis=0))) + x.max(axis=0), np.float32),
}


@pytest.mark.parametrize("name", ORDERED_COLUMN_REDUCTIONS)
def test_column_sums_and_products_are_numpys_bits(name):
    fn, dtype = ORDERED_COLUMN_REDUCTIONS[name]
    x = TALL.astype(dtype)
    np.testing.assert_array_equal(numfuse.jit(fn, target="cpu")(x), fn(x))


@pytest.mark.parametrize("name", COLUMN_REDUCTIONS)
def test_column_reductions_cut_into_chunks_are_numpys(name):
    fn, dtype = COLUMN_REDUCTIONS[name]
    x = TALL_NAN.astype(dtype) if name == "nanmax" else TALL.astype(dtype)
    f = numfuse.jit(fn, target="cpu")
    nests = [k.nest for k in f.plan(x).kernels if k.nest.kind == "reduction"]
    assert any(CPU.nsplit(n) > 1 for n in nests)  # the chunked template ran
    results = []
    for threads in sorted({1, numba.config.NUMBA_NUM_THREADS}):
        numba.set_num_threads(threads)
        try:
            results.append(np.asarray(f(x)).copy())
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    assert all(r.tobytes() == results[0].tobytes() for r in results)
    expected = fn(x)
    assert results[0].dtype == expected.dtype
    if expected.dtype.kind in "biu":
        np.testing.assert_array_equal(results[0], expected)
    else:
        np.testing.assert_allclose(results[0], expected, rtol=2e-3 if dtype == np.float16 else 1e-5, atol=1e-3)


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"),
                    reason="NumPy's complex sin, ... are the C library's: glibc's algorithms, copied, are Linux's")
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_trig_is_numpys_bit_for_bit(dtype):
    # glibc's csin, ccos, ctan, csinh, ccosh, ctanh (scalar_impl_complex.py) on libm's real sin,
    # cosh, ... as NumPy calls them: the same bits, special values and zero signs included, and
    # past the arguments where sinh alone overflows (88 in float32, 709 in float64).
    parts = np.array([0.0, -0.0, 1e-30, -0.5, 1.0, 2.0, 44.5, 88.5, 100.0, 354.5, 709.5, 1000.0, 1500.0,
                      np.inf, -np.inf, np.nan])
    re, im = np.meshgrid(parts, parts)
    z = np.concatenate([(re + 1j * im).ravel(), RNG.standard_normal(500) * 4 + 1j * RNG.standard_normal(500) * 4])
    z = z.astype(dtype)
    for ufunc in (np.sin, np.cos, np.tan, np.sinh, np.cosh, np.tanh):
        with np.errstate(all="ignore"):
            want = ufunc(z)
        got = numfuse.jit(lambda a, f=ufunc: f(a), graph_breaks=False)(z)
        for part in ("real", "imag"):
            g, w = getattr(got, part), getattr(want, part)
            same = (np.isnan(g) & np.isnan(w)) | ((g == w) & (np.signbit(g) == np.signbit(w)))
            assert same.all(), (ufunc.__name__, part, z[~same][:4], g[~same][:4], w[~same][:4])


def test_products_of_stored_operands_are_numpys_bits():
    # npbench's bicg and mvt: the CPU target runs these products in NumPy's matmul (its BLAS),
    # whose order of summation a fused sum cannot follow; a computed operand still fuses.
    rng = np.random.default_rng(7)
    a, p, r = rng.random((300, 200)), rng.random(200), rng.random(300)

    def bicg(A, p, r):
        return r @ A, A @ p

    got = numfuse.jit(bicg, target="cpu")(a, p, r)
    for g, e in zip(got, bicg(a, p, r)):
        np.testing.assert_array_equal(g, e)

    def mvt(x1, A, y):
        x1 += A @ y
        return np.dot(y, y)

    x1, x2 = rng.random(300), None
    x2 = x1.copy()
    y = rng.random(200)
    dot = numfuse.jit(mvt, target="cpu")(x1, a, y)
    assert dot == mvt(x2, a, y)
    np.testing.assert_array_equal(x1, x2)

    def strided(A, p):  # views read in place, with NumPy's strides (its unblocked loop here)
        return A[:, ::2] @ p[:100], np.flip(A[:, :200]) @ p, A[::3].T @ r[::3]

    for g, e in zip(numfuse.jit(strided, target="cpu")(a, p), strided(a, p)):
        np.testing.assert_array_equal(g, e)

    # npbench's durbin: a recursion on np.dot of a flipped slice, whose strides BLAS cannot take
    # (NumPy's np.dot then adds in its own loop, np.matmul in another): NumPy's bits at every step
    from numfuse_tests.corpus.programs import BY_NAME, _spd_init

    durbin = BY_NAME["durbin"].fn
    r = np.arange(60, 0, -1, dtype=np.float64)
    np.testing.assert_array_equal(numfuse.jit(durbin, target="cpu")(r), durbin(r))

    # npbench's covariance and lu: products of views of arrays updated in place, read in place
    # (a kernel's copy of the view would be C-contiguous, where NumPy's call sees strides)
    for name, args in (("covariance", (40, 50.0, rng.random((50, 40)))), ("lu", (_spd_init(40),))):
        fn = BY_NAME[name].fn
        mine, theirs = copy.deepcopy(args), copy.deepcopy(args)
        np.testing.assert_array_equal(numfuse.jit(fn, target="cpu")(*mine), fn(*theirs))
        np.testing.assert_array_equal(mine[-1], theirs[-1])

    def overwritten_later(x, w):  # the product reads x's version before x *= 2 overwrites it
        x -= 1.0
        y = x[:, ::2] @ w
        x *= 2.0
        return y

    x, w = rng.random((40, 60)), rng.random((30, 30))
    x2 = x.copy()
    np.testing.assert_array_equal(numfuse.jit(overwritten_later, target="cpu")(x, w), overwritten_later(x2, w))
    np.testing.assert_array_equal(x, x2)

    def scaled(A, p):
        return 1.5 * A @ p

    np.testing.assert_allclose(numfuse.jit(scaled, target="cpu")(a, p), scaled(a, p), rtol=1e-13)


def test_a_first_calls_kernels_are_compiled_in_worker_processes(monkeypatch, tmp_path):
    # Several kernels missing from Numba's disk cache are compiled ahead by worker processes
    # (targets/cpu/parallel_compile.py); the call then loads them from the cache.
    from numfuse.targets.cpu import loader, parallel_compile

    monkeypatch.setenv("NUMFUSE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("NUMFUSE_COMPILE_WORKERS", "2")
    monkeypatch.setattr(parallel_compile, "MIN_SOURCE", 0)
    ran = []
    original = parallel_compile.compile_ahead
    monkeypatch.setattr(parallel_compile, "compile_ahead", lambda jobs: ran.append(original(jobs)) or ran[-1])

    def three(x, y):  # (a function of this test alone: kernels no other test compiled)
        return np.arcsinh(x).sum(axis=1) * 0.625, np.expm1(y).max(axis=0) - 3.25, np.cbrt(x * y) + 0.375

    f = numfuse.jit(three, target="cpu", numpy_fallback=False)
    x, y = np.random.default_rng(7).random((64, 32)), np.random.default_rng(8).random((64, 32))
    for got, want in zip(f(x, y), three(x, y)):
        np.testing.assert_allclose(got, want, rtol=1e-13)
    assert ran == [2]  # two workers compiled the kernels ...
    executable = f._compiled((x, y), {})[0].executable
    for launch, source in zip(executable.launches, executable.sources):
        parallel, serial = loader.functions(source)
        dispatcher = serial if launch.serial else parallel
        assert sum(dispatcher.stats.cache_hits.values()) == 1  # ... and the call loaded each from the cache
