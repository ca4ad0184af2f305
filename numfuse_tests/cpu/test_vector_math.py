"""The CPU target's vectorizable exp, tanh, log, sin and cos (targets/cpu/vector_math.py) against
NumPy: within 4 ULP everywhere, and NumPy's inf, NaN, zeros and signs exactly, over a sample of
every float32 bit pattern (every 1021st) and of float64 ones (benchmarks/vector_math_accuracy.py
measures all float32 inputs). sin and cos past vector_math.TRIG_LIMIT take libm's functions for
the loop they are in (trig_loops.py): the samples hold such arguments beside small ones."""

import numpy as np
import pytest

import numfuse

FUNCTIONS = {"exp": np.exp, "tanh": np.tanh, "log": np.log, "sin": np.sin, "cos": np.cos}
MAX_ULP = 4


def ulp_error(got: np.ndarray, expected: np.ndarray) -> float:
    """The largest error in units of the last place of NumPy's result, where it is finite;
    elsewhere the values (inf, NaN) must agree exactly."""
    finite = np.isfinite(expected)
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~finite & ~nan], expected[~finite & ~nan])
    zero = expected == 0
    assert np.array_equal(np.signbit(got[zero]), np.signbit(expected[zero]))
    spacing = np.spacing(np.abs(expected[finite])).astype(np.float64)
    error = np.abs(got[finite].astype(np.float64) - expected[finite].astype(np.float64))
    return float((error / spacing).max(initial=0.0))


def float32_patterns(step: int = 1021) -> np.ndarray:
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.1754944e-38, 88.72, -103.9,
                         2.0**28, -2.0**28, 2.0**28 + 32, 1.5707964, 3.1415927, 1e6, -1e6], np.float32)
    return np.concatenate([np.arange(0, 2**32, step, dtype=np.uint64).astype(np.uint32).view(np.float32), specials])


def float64_samples() -> np.ndarray:
    rng = np.random.default_rng(3)
    bits = rng.integers(0, 2**64 - 1, 300_000, dtype=np.uint64, endpoint=True).view(np.float64)
    ranges = [rng.uniform(-800, 800, 100_000), rng.uniform(-20, 20, 100_000), rng.uniform(0, 2, 100_000),
              np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 2.2250738585072014e-308, 709.78, -745.13,
                        1e6, -1e6, np.nextafter(1e6, 2e6), 1e22]),
              # multiples of pi/2, where sin or cos is nearest 0: the reduction's hardest arguments
              np.arange(1, 600_000) * (np.pi / 2)]
    return np.concatenate([bits] + ranges)


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_within_four_ulp_of_numpy(name, dtype):
    x = float32_patterns() if dtype == "float32" else float64_samples()
    fn = FUNCTIONS[name]
    jitted = numfuse.jit(lambda x: fn(x), target="cpu")
    with np.errstate(all="ignore"):
        got, expected = jitted(x), fn(x)
    assert got.dtype == expected.dtype
    assert ulp_error(got, expected) <= MAX_ULP


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """Compiled now, not loaded from Numba's disk cache, whose code cannot be inspected."""
    from numfuse.targets.cpu import loader

    monkeypatch.setenv("NUMFUSE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(loader, "_functions", {})


def test_sin_and_cos_loops_vectorize_and_keep_libm_for_large_arguments(fresh_cache):
    x = np.ones(1 << 16)
    f = numfuse.jit(lambda x: np.sin(x) * np.cos(2.0 * x), target="cpu")
    f(x)
    function = f._compiled((x,), {})[0].executable.function(0)
    llvm = function.inspect_llvm(function.signatures[0])
    assert "x double>" in llvm  # the fast loop is vectorized
    assert "llvm.sin" in llvm or "@sin" in llvm  # its twin, for blocks with an argument past TRIG_LIMIT, calls libm


def test_the_loops_vectorize(fresh_cache):
    x = np.ones(1 << 16, np.float32)
    f = numfuse.jit(lambda x: np.tanh(np.log(x + 1.0)) * np.exp(x), target="cpu")
    f(x)
    executable = f._compiled((x,), {})[0].executable
    function = executable.function(0)
    llvm = function.inspect_llvm(function.signatures[0])
    assert "x float>" in llvm  # a vector type: LLVM vectorized the loop
    assert "@expf" not in llvm and "@tanhf" not in llvm and "@logf" not in llvm
