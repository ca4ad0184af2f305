"""The complex loops of scalar_impl_complex.py against NumPy, on the simulator (or a GPU).

Special values: every pair of parts from {nan, inf, -inf, 0, -0, 0.5, -2, 1} (and every pair
of such values for the binary ufuncs), compared exactly where NumPy's part is NaN, infinite or zero
(signs of zeros included), and within a few ulps where it is finite. Finite values: random parts at two scales, compared in ulps of each
part, or, where a part is far smaller than the value (a cancellation in NumPy's own formula, as
in expm1's real part), in ulps of |result|. np.power outside its integer-exponent path is
NumPy's cexp(b log a), whose rounding error grows with |b log a| (the exponent's error becomes
the result's relative error): it is compared against that bound.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numfuse
from numfuse.ir.dtypes import COMPLEX

SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -2.0, 1.0]
UNARY = [np.sqrt, np.log, np.log10, np.log2, np.log1p, np.expm1, np.exp2, np.isnan, np.isinf, np.isfinite,
         np.sign, np.reciprocal, np.rint, np.logical_not, np.sin, np.cos, np.tan, np.sinh, np.cosh, np.tanh]
BINARY = [np.power, np.less, np.less_equal, np.greater, np.greater_equal, np.logical_and, np.logical_or,
          np.logical_xor]
ULPS = 4


def complex_array(dtype, re, im):
    z = np.empty(len(re), dtype)
    z.real, z.imag = re, im  # parts set apart: 1j * inf would make a NaN real part
    return z


def special_grid(dtype):
    pairs = list(itertools.product(SPECIALS, SPECIALS))
    return complex_array(dtype, [p[0] for p in pairs], [p[1] for p in pairs])


def numpy_result(fn, *args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def assert_exact(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "b":
        np.testing.assert_array_equal(got, want)
        return
    for part in ("real", "imag"):
        g, w = getattr(got, part), getattr(want, part)
        same = (np.isnan(g) & np.isnan(w)) | ((g == w) & (np.signbit(g) == np.signbit(w)))
        # finite nonzero values (0.5j's square root): 8 ulps of the larger part (expm1's real
        # part at -inf - 2j is NumPy's cancellation of two terms near 1, power's cexp(b log a))
        mag = np.maximum(np.abs(want.real), np.abs(want.imag))
        near = np.isfinite(w) & (w != 0) & (np.abs(g - w) <= 2 * ULPS * np.spacing(mag))
        same |= near
        assert same.all(), (part, np.flatnonzero(~same)[:5], g[~same][:5], w[~same][:5])


def ulp_errors(got, want):
    """Per element: the larger part's error in ulps of that part, and in ulps of |want|."""
    part = np.dtype(want.real.dtype)
    tiny = np.finfo(part).smallest_subnormal
    mag = np.maximum(np.abs(want.real), np.abs(want.imag)).astype(part)
    own, norm = [], []
    for p in ("real", "imag"):
        g, w = getattr(got, p).astype(np.float64), getattr(want, p)
        d = np.abs(g - w.astype(np.float64))
        equal = (g == w) | (np.isnan(g) & np.isnan(w))
        own.append(np.where(equal, 0, d / np.maximum(np.spacing(np.abs(w)).astype(np.float64), tiny)))
        norm.append(np.where(equal, 0, d / np.maximum(np.spacing(mag).astype(np.float64), tiny)))
    return np.maximum(*own), np.maximum(*norm)


def assert_close(got, want, bound=None):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "b":
        np.testing.assert_array_equal(got, want)
        return
    assert (np.isnan(got.real) == np.isnan(want.real)).all() and (np.isnan(got.imag) == np.isnan(want.imag)).all()
    own, norm = ulp_errors(got, want)
    limit = ULPS if bound is None else bound
    ok = (own <= ULPS) | (norm <= limit)
    assert ok.all(), (np.flatnonzero(~ok)[:5], own[~ok][:5], norm[~ok][:5], got[~ok][:5], want[~ok][:5])


def call(ufunc):
    return (lambda a: ufunc(a)) if ufunc.nin == 1 else (lambda a, b: ufunc(a, b))


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("ufunc", UNARY + BINARY, ids=lambda u: u.__name__)
def test_special_values_are_numpys(ufunc, dtype):
    z = special_grid(dtype)
    args = (z,) if ufunc.nin == 1 else (np.repeat(z, len(z)), np.tile(z, len(z)))
    assert_exact(numfuse.jit(call(ufunc))(*args), numpy_result(call(ufunc), *args))


def random_complex(dtype, n, scale, seed):
    rng = np.random.default_rng(seed)
    return complex_array(dtype, rng.uniform(-scale, scale, n), rng.uniform(-scale, scale, n))


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("scale", [10.0, 1e3])
@pytest.mark.parametrize("ufunc", UNARY + BINARY[1:], ids=lambda u: u.__name__)
def test_finite_values_within_a_few_ulps(ufunc, scale, dtype):
    z = random_complex(dtype, 300, scale, 1)
    args = (z,) if ufunc.nin == 1 else (z, random_complex(dtype, 300, scale, 2))
    assert_close(numfuse.jit(call(ufunc))(*args), numpy_result(call(ufunc), *args))


def power_bound(a, b, dtype):
    """The ulps of |a ** b| that cexp(b log a) may be off by: a few, times the size of b log a."""
    loga = np.log(a.astype(np.complex128))
    return ULPS * (2 + np.abs(b.real * loga.real) + np.abs(b.imag * loga.imag)
                   + np.abs(b.real * loga.imag) + np.abs(b.imag * loga.real))


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_power(dtype):
    a = random_complex(dtype, 300, 4.0, 3)
    b = random_complex(dtype, 300, 3.0, 4)
    fn = call(np.power)
    assert_close(numfuse.jit(fn)(a, b), numpy_result(fn, a, b), bound=power_bound(a, b, dtype))
    # Integer exponents (NumPy multiplies), a real exponent, and the unrolled 1, 2, 3.
    ints = np.arange(-12, 13).astype(dtype)
    base = random_complex(dtype, len(ints), 1.5, 5)
    assert_close(numfuse.jit(fn)(base, ints), numpy_result(fn, base, ints), bound=64)
    exps = np.array([0.5, -1.5, 2.0, 3.0, 1.0, 99.0, 100.0, -99.0], np.float64)
    base = random_complex(dtype, len(exps), 1.2, 6)
    assert_close(numfuse.jit(fn)(base, exps), numpy_result(fn, base, exps), bound=power_bound(base, exps.astype(dtype), dtype) * 16)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_extreme_magnitudes(dtype):
    """Parts near overflow and in the subnormal range: sqrt and log rescale by powers of two."""
    part = np.finfo(np.dtype(dtype).char.lower())
    re = np.array([part.max, part.max / 3, part.tiny, part.smallest_subnormal * 7, 1e-30, -part.max, 3.0])
    im = np.array([part.max / 2, -part.max, part.tiny * 3, -part.smallest_subnormal, 1e-32, 1.0, -part.max])
    z = complex_array(dtype, re, im)
    for ufunc in (np.sqrt, np.log, np.log10, np.log2, np.sign, np.reciprocal):
        assert_close(numfuse.jit(call(ufunc))(z), numpy_result(call(ufunc), z))


@settings(max_examples=30, deadline=None, derandomize=True)
@given(st.sampled_from(UNARY + BINARY[1:]), st.sampled_from(COMPLEX),
       st.lists(st.tuples(st.floats(-50, 50), st.floats(-50, 50)), min_size=1, max_size=6))
def test_hypothesis_values(ufunc, dtype, values):
    z = complex_array(dtype, [v[0] for v in values], [v[1] for v in values])
    args = (z,) if ufunc.nin == 1 else (z, z[::-1].copy())
    assert_close(numfuse.jit(call(ufunc))(*args), numpy_result(call(ufunc), *args))
