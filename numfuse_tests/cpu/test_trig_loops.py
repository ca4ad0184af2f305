"""sin and cos on the CPU target (targets/cpu/trig_loops.py): each loop that computes them first
checks its arguments, then runs vectorized templates, or libm's functions where an argument is
past vector_math.TRIG_LIMIT. Whatever the kernel (pointwise flat or 2d, rows with lanes and
chunks, split, columns, an update in place, an epilogue), results are NumPy's within 4 ULP, and
a block holding one large argument is as right as the others."""

import numpy as np
import pytest

import numfuse
from numfuse_tests.cpu.test_vector_math import ulp_error

RNG = np.random.default_rng(11)


def _with_large(x: np.ndarray) -> np.ndarray:
    """x with a few arguments past every limit (and inf, NaN), in some blocks only."""
    x = x.copy()
    flat = x.reshape(-1)
    flat[5::7919] = 3.0e9
    flat[17::12011] = -np.inf
    flat[29::15013] = np.nan
    flat[31::9001] = 1.0e30 if x.dtype == np.float64 else 1.0e20
    return x


CASES = {
    # Products, not sums: a sum of two near-opposite terms is small, and its ULP too.
    "flat": (lambda x: np.sin(x) * 2.0, (70_000,)),
    "flat, cos": (lambda x: np.cos(x * 0.5) * np.sin(x), (70_000,)),
    "2d": (lambda x: np.sin(x.T) * 3.0, (300, 257)),
    "rows": (lambda x: np.cos(x).sum(axis=1), (64, 3000)),
    "split": (lambda x: np.sin(x).sum(), (200_000,)),
    "columns": (lambda x: np.sin(x).sum(axis=0), (5000, 33)),
    "rows, two phases": (lambda x: np.sin(x - x.max(axis=1, keepdims=True)), (64, 3000)),
    "epilogue": (lambda x: np.sin(x.sum(axis=1)), (64, 3000)),
    "argmax": (lambda x: np.argmax(np.sin(x), axis=1), (64, 3000)),
}


def _large_sums(x: np.ndarray) -> np.ndarray:
    """Rows whose sums are past the limits, exactly (the sin of a sum added in another order
    than NumPy's is another number where the sum is large)."""
    x = x.copy()
    x[3] = 0.0
    x[3, 0] = 3.0e9
    x[5] = 0.0
    x[5, 0] = np.inf
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", CASES)
def test_sin_and_cos_are_numpys_with_large_arguments_among_small_ones(name, dtype):
    fn, shape = CASES[name]
    x = RNG.uniform(-50, 50, shape).astype(dtype)
    x = _large_sums(x) if name == "epilogue" else _with_large(x)
    f = numfuse.jit(fn, target="cpu")
    with np.errstate(all="ignore"):
        got, expected = f(x), fn(x)
    assert got.dtype == expected.dtype
    if name in ("rows", "split", "columns", "epilogue"):  # sums: NumPy adds in another order
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-2 * np.sqrt(x.size / got.size), equal_nan=True)
    elif name == "argmax":
        np.testing.assert_array_equal(got, expected)
    else:  # a product of two 1-ULP results, rounded: within 4 ULP
        assert ulp_error(got, expected) <= 4


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_an_update_in_place_reads_its_arguments_before_writing(dtype):
    def f(x):
        x += np.sin(x)
        return x

    x = _with_large(RNG.uniform(-50, 50, (90_000,)).astype(dtype))
    expected = x.copy()
    with np.errstate(all="ignore"):
        f(expected)
        got = numfuse.jit(f, target="cpu")(x)
    assert got is x
    assert ulp_error(x, expected) <= 4


def test_the_check_loop_comes_first_and_the_source_says_so():
    f = numfuse.jit(lambda x: np.sin(x) + 1.0, target="cpu")
    (source,) = f.kernel_sources(np.ones(10_000, np.float32))
    code = source.source
    assert code.index("nf_big = False") < code.index("if nf_big:") < code.index("math.sin(")
    assert "sin and cos" in f.explain(np.ones(10_000, np.float32))


def test_a_loop_that_cannot_be_checked_first_keeps_libm():
    # An argmax counts its points (lin += 1): its loop is not split, libm's sin serves it.
    f = numfuse.jit(lambda x: np.argmax(np.sin(x), axis=1), target="cpu")
    (source,) = f.kernel_sources(np.ones((8, 100), np.float32))
    assert "nf_big" not in source.source and "math.sin(" in source.source
