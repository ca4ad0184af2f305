"""What programs are made of: numfuse's ufuncs with their Python spellings, their input domains,
their place in the error model, and the reductions, casts and constants programs use.

The ufuncs come from numfuse's own op table, so that a new operation is fuzzed as soon as numfuse
supports it. Which dtypes an operation accepts is never listed here: the generator asks NumPy
(stand-in arrays here, the concrete values while it builds a program).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from numfuse.ir.dtypes import REAL
from numfuse.ir.ops import BY_UFUNC

# Hypothesis shrinks a sampled choice toward the first entry: the common dtypes come first.
DTYPES = [np.dtype(d) for d in ("float64", "float32", "int64", "int32", "bool", "float16", "int8",
                                "int16", "uint8", "uint16", "uint32", "uint64")]
# Complex dtypes take only some operations; test_hyp_complex.py covers them.
assert set(DTYPES) == set(REAL), "the fuzzer draws every real dtype numfuse supports"

UFUNCS = list(BY_UFUNC)
UNARY = [u for u in UFUNCS if u.nin == 1]
BINARY = [u for u in UFUNCS if u.nin == 2]

# Python's spelling of a ufunc, drawn instead of np.<name>(...) half the time.
OPERATOR_FORMS = {
    np.add: "{0} + {1}", np.subtract: "{0} - {1}", np.multiply: "{0} * {1}",
    np.true_divide: "{0} / {1}", np.floor_divide: "{0} // {1}", np.remainder: "{0} % {1}",
    np.power: "{0} ** {1}", np.bitwise_and: "{0} & {1}", np.bitwise_or: "{0} | {1}",
    np.bitwise_xor: "{0} ^ {1}", np.less: "{0} < {1}", np.less_equal: "{0} <= {1}",
    np.greater: "{0} > {1}", np.greater_equal: "{0} >= {1}", np.equal: "{0} == {1}",
    np.not_equal: "{0} != {1}", np.negative: "-{0}", np.positive: "+{0}", np.absolute: "abs({0})",
    np.invert: "~{0}", np.left_shift: "{0} << {1}", np.right_shift: "{0} >> {1}",
}

COMPARISONS = {np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal}

# Results within a few ulps, not bit-identical, between CUDA's libm and NumPy's.
TRANSCENDENTAL = {
    np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p, np.sin, np.cos, np.tan,
    np.arcsin, np.arccos, np.arctan, np.arctan2, np.hypot, np.sinh, np.cosh, np.tanh, np.arcsinh,
    np.arccosh, np.arctanh, np.logaddexp, np.logaddexp2, np.power, np.cbrt,
}
# A product that a GPU may contract with a following add into one FMA.
MULTIPLIES = {np.multiply, np.square, np.deg2rad, np.radians, np.rad2deg, np.degrees}
# NumPy leaves the sign of a zero result to its loops (np.maximum(-0.0, 0.0) is 0.0 in SIMD).
FREE_ZERO_SIGN = {np.maximum, np.minimum, np.fmax, np.fmin}

# Float arguments inside each function's domain. Outside it (log of a negative, arccos(2)) NumPy
# gives NaN: kept out of the programs, where NaN would swamp every later value, and tested on
# its own in test_fuzz_programs.py.
_FLOAT_DOMAINS = {
    np.log: lambda x: x > 0, np.log2: lambda x: x > 0, np.log10: lambda x: x > 0,
    np.sqrt: lambda x: x >= 0, np.log1p: lambda x: x > -1,
    np.arcsin: lambda x: np.abs(x) <= 1, np.arccos: lambda x: np.abs(x) <= 1,
    np.arccosh: lambda x: x >= 1, np.arctanh: lambda x: np.abs(x) < 1,
}


def _f64(v) -> np.ndarray:
    return np.asarray(v).astype(np.float64)


def in_domain(ufunc: np.ufunc, args: list, result) -> bool:
    """Whether NumPy, the simulator and a GPU all define ufunc(*args) and agree on it.

    `result` tells the loop NumPy ran (integer or float)."""
    integer_loop = np.asarray(result).dtype.kind in "biu" and ufunc not in (np.isnan, np.isinf, np.isfinite)
    if ufunc in _FLOAT_DOMAINS and not integer_loop:
        x = _f64(args[0])
        return bool(np.all(np.isnan(x) | _FLOAT_DOMAINS[ufunc](x)))
    if ufunc is np.power:
        return _integer_power_defined(args, result) if integer_loop else _float_power_real(*args)
    if ufunc is np.signbit or ufunc is np.copysign:
        # The sign of a NaN is the loop's choice (x86 makes -nan for 0/0, a GPU +nan).
        return not np.any(np.isnan(_f64(args[-1])))
    if ufunc is np.reciprocal and integer_loop:
        return not np.any(np.asarray(args[0]) == 0)  # 1 / 0 in an integer loop is undefined
    if ufunc in (np.floor_divide, np.remainder, np.fmod) and np.asarray(result).dtype.kind == "i":
        # MIN // -1 overflows: C leaves it undefined (a GPU may give anything).
        low = np.iinfo(np.asarray(result).dtype).min
        a, b = np.broadcast_arrays(*[np.asarray(v) for v in args])
        return not np.any((a.astype(np.float64) == low) & (b == -1))
    return True


def _float_power_real(base, exponent) -> bool:
    """No negative base to a non-integer power (NaN, like the log of a negative)."""
    b, e = np.broadcast_arrays(_f64(base), _f64(exponent))
    bad = (b < 0) & np.isfinite(e) & (e != np.trunc(e)) | (b == -np.inf) & ~np.isfinite(e)
    return not np.any(bad)


def _integer_power_defined(args, result) -> bool:
    """Integer powers only with exponents >= 0 (NumPy raises otherwise) and without overflow,
    which C leaves undefined for signed types."""
    dtype = np.asarray(result).dtype
    if dtype.kind == "b":
        return True
    info = np.iinfo(dtype)
    for b, e in np.broadcast(*[np.asarray(v) for v in args]):
        b, e = int(b), int(e)
        if e < 0 or (abs(b) > 1 and e > 64) or not info.min <= b ** e <= info.max:
            return False
    return True


def cast_defined(values, dtype) -> bool:
    """Whether casting `values` to `dtype` is defined in C (and so on every device): a float to
    an integer only when its integral part fits, NaN and infinities never."""
    dtype = np.dtype(dtype)
    x = np.asarray(values)
    if x.dtype.kind != "f" or dtype.kind not in "iu":
        return True
    info = np.iinfo(dtype)
    x = x.astype(np.float64)
    if not np.all(np.isfinite(x)):
        return False
    t = np.trunc(x)
    # float64 rounds 2**63 - 1 up; the margin keeps the bound itself out.
    return bool(np.all((t >= info.min) & (t <= float(info.max) * (1 - 2**-52))))


@functools.cache
def accepts(ufunc: np.ufunc, dtypes: tuple[np.dtype, ...]) -> bool:
    """Whether NumPy has a loop for ufunc on these dtypes (asked on zero-size stand-ins)."""
    try:
        with np.errstate(all="ignore"):
            ufunc(*[np.empty(0, d) for d in dtypes])
    except TypeError:
        return False
    return True


# -- reductions -------------------------------------------------------------------------------------

REDUCTIONS = ["sum", "max", "mean", "min", "prod", "any", "all"]
UFUNC_REDUCE = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum",
                "any": "logical_or", "all": "logical_and"}
FUNCTION_ALIASES = {"max": ["max", "amax"], "min": ["min", "amin"]}
TAKES_DTYPE = {"sum", "prod", "mean"}


def reduced_axes(axis, ndim: int) -> tuple[int, ...]:
    if ndim == 0:
        return ()
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else axis
    return tuple(sorted(a % ndim for a in axes))


# -- constants written into programs -----------------------------------------------------------------

INT_CONSTANTS = [1, 2, 0, -1, 3, 7, -5, 100]
FLOAT_CONSTANTS = [0.5, 2.0, -1.5, 0.0, 3.25, -0.0, 0.1, 1000.0, 1e-3, math.inf]
ROUND_DECIMALS = [0, 1, 2, -1]
