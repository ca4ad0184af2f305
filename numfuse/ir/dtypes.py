"""The dtypes numfuse computes with, and their short printed names.

Promotion is never decided here: NumPy decides it (ufunc.resolve_dtypes, np.result_type),
see numpy_api.py. This module only says which dtypes kernels can hold, and which they compute in.

Every operation takes the real dtypes (REAL) where NumPy does. The complex dtypes (COMPLEX) take
the operations whose op table entry (ops.py) has a complex template: arithmetic, abs, exp,
conjugate, the real and imaginary parts, equality, where, sums and products, and (with NumPy's
loops, scalar_impl_complex.py) power, sqrt, log, log10, log2, log1p, expm1, exp2, the ordered
comparisons (NumPy's lexicographic order), isnan, isinf, isfinite, sign, reciprocal, rint and the
logical ufuncs; any other operation on them (the trigonometric and hyperbolic functions, maximum,
minimum, fmax, fmin and the max/min reductions among them) is refused at trace time, naming the
operation and the dtype.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import unsupported

REAL = tuple(
    np.dtype(name)
    for name in (
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
    )
)
COMPLEX = (np.dtype(np.complex64), np.dtype(np.complex128))
SUPPORTED = REAL + COMPLEX

_SHORT = {"b": "bool", "i": "i", "u": "u", "f": "f", "c": "c"}


def short_name(dtype: np.dtype) -> str:
    """'f32', 'i64', 'u8', 'bool', 'c64': the names the printed IR uses (as jaxprs do)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return "bool"
    return f"{_SHORT.get(dtype.kind, dtype.kind)}{dtype.itemsize * 8}"


def check_supported(dtype, what: str) -> np.dtype:
    """The dtype, or UnsupportedError naming it and what carried it."""
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise unsupported(f"dtype {dtype!r} ({what})") from None
    if dtype not in SUPPORTED:
        raise unsupported(f"dtype {dtype} ({what})", _hint(dtype))
    return dtype


def _hint(dtype: np.dtype) -> str:
    """Why a dtype numfuse refuses cannot run, and what to pass instead."""
    if dtype.kind == "c":
        return "numfuse computes in complex64 and complex128, not in longer complex dtypes"
    if dtype.kind == "O":
        return "an object array holds Python objects, which kernels cannot: convert it with .astype() to a numeric dtype"
    if dtype.kind == "V":
        return "structured and void dtypes are not supported: pass each field as its own array (x['field'])"
    if dtype.kind in "Mm":
        return (
            "datetime64 and timedelta64 are not supported: pass .view(np.int64) (counts of the unit) "
            "and convert the result back"
        )
    if dtype.kind in "USa":
        return "string dtypes are not supported"
    if not dtype.isnative:
        return "byte-swapped dtypes are not supported: convert with .astype(x.dtype.newbyteorder('='))"
    return "numfuse computes in " + ", ".join(d.name for d in SUPPORTED)


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype arithmetic on `dtype` runs in: float16 is stored as float16 and computed in
    float32, rounding after each operation, as NumPy's half-precision loops do."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype == np.float16 else dtype


# The float objects code compares with `is` (scikit-learn's `missing_values is np.nan`), by
# id (they live as long as their modules): an argument that is one is static (its object).
NAMED_FLOATS = {id(np.nan): "np.nan", id(math.nan): "math.nan", id(np.inf): "np.inf", id(math.inf): "math.inf"}


def complex_dtype(dtype: np.dtype) -> np.dtype:
    """The complex dtype whose parts are of float dtype `dtype` (complex64 for float32)."""
    return np.dtype(f"c{2 * np.dtype(dtype).itemsize}")


def part_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype of a complex dtype's real and imaginary parts (float32 for complex64); a real
    dtype is its own."""
    dtype = np.dtype(dtype)
    return np.dtype(f"f{dtype.itemsize // 2}") if dtype.kind == "c" else dtype
