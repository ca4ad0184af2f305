"""The fuzzer's error model: how far numfuse's result may legitimately be from NumPy's, per element.

numfuse computes each elementwise IEEE operation (+, *, /, sqrt, casts, comparisons, ...) in the
same dtype as NumPy, so those results are bit-identical. Legitimate differences come only from:

- reductions: a different summation order (a tree on the device, pairwise in NumPy), bounded by
  2 (n - 1) eps sum|x| for n terms whatever the two orders are (and unbounded where some order
  overflows, which the generator then avoids);
- transcendental functions: CUDA's and NumPy's libm differ by a few ulps;
- on a GPU, a multiply and an add contracted into one FMA, rounding once instead of twice;
- the sign of a zero that max/min (elementwise or reduced) or a reduction returns, which
  NumPy itself leaves to its loops (np.maximum(-0.0, 0.0) is 0.0 in its SIMD loop).

Each value carries an absolute error bound per element (None: exact). An operation on inexact
operands is evaluated again with its operands moved to the ends of their error intervals (the
"corners"). Where a bool or integer result changes, or a float result moves between finite, NaN,
+inf and -inf, the operation is unstable there: a comparison of two nearly equal sums, floor of
a value next to an integer. The generator then does not use it, rather than accept any answer.
Otherwise the spread of the corners plus the operation's own error bounds its result.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

TRANSCENDENTAL_ULPS = 8  # CUDA's libm is within 1-4 ulps of the exact result, NumPy's SIMD within 1-4
RELATIVE_LIMIT = 0.05  # past this a value's bound says little: the generator stops using it


@dataclass(frozen=True)
class ErrorModel:
    """`fma`: the device contracts a multiply and an add. None of numfuse's targets does now (a
    GPU's products are libdevice's mul.rn: targets/cuda/products.py); kept for a target that
    would."""

    fma: bool = False


SIMULATOR = ErrorModel()  # it rounds each operation as NumPy does


class Unstable(Exception):
    """The operation's result depends on rounding that numfuse may legitimately do differently."""


def _float_dtype(value) -> np.dtype | None:
    dtype = np.asarray(value).dtype
    return dtype if dtype.kind == "f" else None


def tiny(dtype) -> float:
    """The smallest positive value of a float dtype (a subnormal)."""
    return float(np.nextafter(np.zeros((), dtype), np.ones((), dtype)))


def perturb(value, err, sign: int):
    """`value` moved by `sign * err` (at least one ulp where err > 0), keeping its type: an array
    stays an array of its dtype, a NumPy scalar a NumPy scalar, a Python float a Python float."""
    if err is None:
        return value
    if isinstance(value, float):
        moved = value + sign * float(np.max(err))
        return moved if moved != value or not np.max(err) else float(np.nextafter(value, sign * np.inf))
    a = np.asarray(value)
    toward = np.full(a.shape, sign * np.inf, a.dtype)
    moved = (a.astype(np.float64) + sign * err).astype(a.dtype)
    stuck = (moved == a) & (err > 0)
    moved = np.where(stuck, np.nextafter(a, toward), moved).astype(a.dtype)
    return moved[()] if isinstance(value, np.generic) else moved


def _classes(r: np.ndarray) -> tuple:
    return np.isnan(r), np.isposinf(r), np.isneginf(r)


def _same_class(r: np.ndarray, c: np.ndarray) -> bool:
    if r.shape != c.shape or r.dtype != c.dtype:
        return False
    if r.dtype.kind != "f":
        return bool(np.array_equal(r, c))
    return all(np.array_equal(a, b) for a, b in zip(_classes(r), _classes(c)))


def corners(fn: Callable, operands: Sequence, errs: Sequence):
    """fn(*operands) and the largest change of it over the corners of the operands' error
    intervals (None if no operand is inexact). Raises Unstable where the result is discrete and
    changes, or changes class (finite, NaN, +inf, -inf)."""
    result = fn(*operands)
    inexact = [i for i, e in enumerate(errs) if e is not None and np.any(e > 0)]
    if not inexact:
        return result, None
    r = np.asarray(result)
    spread = np.zeros(r.shape)
    for signs in itertools.product((-1, 1), repeat=len(inexact)):
        moved = list(operands)
        for i, sign in zip(inexact, signs):
            moved[i] = perturb(operands[i], errs[i], sign)
        try:
            with np.errstate(all="ignore"):
                c = np.asarray(fn(*moved))
        except (ArithmeticError, ValueError):
            raise Unstable from None
        if not _same_class(r, c):
            raise Unstable
        if r.dtype.kind == "f":
            finite = np.isfinite(r)
            delta = np.abs(c.astype(np.float64) - r.astype(np.float64), where=finite, out=np.zeros(r.shape))
            # A zero whose sign follows the operands' rounding (rint of +-tiny) has either sign.
            flipped = (r == 0) & (np.signbit(c) != np.signbit(r))
            spread = np.maximum(spread, np.where(flipped, tiny(r.dtype), delta))
    return result, spread if r.dtype.kind == "f" else None


def rounding_error(result, ulps: float) -> np.ndarray:
    """`ulps` units of the result's precision, relative (an exact 0 stays exact), at least one
    unit of its storage precision (float16 is computed in float32 and rounded)."""
    r = np.asarray(result)
    eps = float(np.finfo(r.dtype).eps)
    magnitude = np.abs(r.astype(np.float64), where=np.isfinite(r), out=np.zeros(r.shape))
    compute_eps = float(np.finfo(np.float32).eps) if r.dtype == np.float16 else eps
    err = magnitude * max(ulps * compute_eps, eps) + ulps * tiny(r.dtype) * (magnitude > 0)
    return err


def free_zero_sign(result, err):
    """Mark zeros of a float result as of either sign (see the module docstring)."""
    r = np.asarray(result)
    if r.dtype.kind != "f" or not np.any(r == 0):
        return err
    floor = np.where(r == 0, tiny(r.dtype), 0.0)
    return floor if err is None else np.maximum(err, floor)


def combine(*errs):
    """The sum of error bounds, None if all are None."""
    present = [e for e in errs if e is not None]
    if not present:
        return None
    total = present[0]
    for e in present[1:]:
        total = total + e
    return total


def check_usable(result, err):
    """Raise Unstable where a bound makes a value's comparison meaningless, or where a finite
    result within its bound could overflow."""
    if err is None:
        return None
    r = np.asarray(result)
    finite = np.isfinite(r)
    err = np.where(finite, np.broadcast_to(err, r.shape), 0.0)
    magnitude = np.abs(r.astype(np.float64), where=finite, out=np.zeros(r.shape))
    if np.any(err > RELATIVE_LIMIT * np.maximum(1.0, magnitude)):
        raise Unstable
    if np.any(magnitude + err > float(np.finfo(r.dtype).max)):
        raise Unstable
    return err if np.any(err > 0) else None


def reduction_error(kind: str, x, x_err, axis, keepdims: bool, result, count: int):
    """The bound of a float reduction's result beyond what its inputs' errors carry: the
    rounding of any order of `count` terms, for both numfuse and NumPy."""
    r = np.asarray(result)
    if r.dtype.kind != "f":
        return None
    eps = float(np.finfo(r.dtype).eps)
    a = np.abs(np.asarray(x).astype(np.float64))
    a = np.where(np.isfinite(a), a, 0.0)
    e = 0.0 if x_err is None else x_err

    def over(values, fn):
        return np.asarray(fn(np.broadcast_to(values, a.shape), axis=axis, keepdims=keepdims))

    kind, _, ddof = kind.partition(":")
    if kind in ("var", "std", "nanvar", "nanstd"):
        return np.where(np.isfinite(r), _variance_error(kind, np.asarray(x), axis, keepdims, r, int(ddof or 0)), 0.0)
    kind = kind.removeprefix("nan")  # NaN counts as the identity: a bound on all terms bounds the others
    # Where some order of the terms overflows (or a product underflows) and another does not,
    # the result (inf, NaN or 0 against a number) is the order's choice.
    info = np.finfo(r.dtype)
    if kind in ("sum", "mean") and np.any(over(a, np.sum) > float(info.max)):
        raise Unstable
    if kind == "prod" and (np.any(over(np.where(a >= 1, a, 1.0), np.prod) > float(info.max))
                           or np.any(over(np.where((a > 0) & (a < 1), a, 1.0), np.prod) < float(info.tiny))):
        raise Unstable
    if kind in ("sum", "mean"):
        err = sum_error(over(a, np.sum), r, count)
        if kind == "mean":
            err = err / max(count, 1)
    elif kind == "prod":
        # Products of magnitudes bound a product of signed terms and its first-order error.
        base = over(a, np.prod)
        err = over(a + e, np.prod) - base + 2 * (count + 1) * eps * base
    else:
        err = np.zeros(r.shape)
    return np.where(np.isfinite(r), err, 0.0)


def sum_error(magnitudes, result, count: int):
    """The bound of a float sum of `count` terms in any order, for both numfuse and NumPy, where
    `magnitudes` is the sum of the terms' magnitudes (per element of the result)."""
    r = np.asarray(result)
    eps = float(np.finfo(r.dtype).eps)
    return 2 * max(count - 1, 0) * eps * np.asarray(magnitudes) + 2 * eps * np.abs(r.astype(np.float64))


def _magnitudes(value) -> np.ndarray:
    """|value| in float64, its NaN and infinities as 0 (they propagate alike in every order)."""
    a = np.abs(np.asarray(value).astype(np.float64))
    return np.where(np.isfinite(a), a, 0.0)


def product_error(run: Callable, operands: Sequence, errs: Sequence, result, count: int):
    """The bound of a sum of products (a matrix product, np.dot, np.einsum: any op whose result
    is a sum over `count` products of one element of each operand), in any order: the sum rule
    over count + 1 roundings (the products' own, and the count - 1 additions), and the operands'
    errors carried through |a| |b| (the corners miss them, the terms having mixed signs).
    `run` evaluates the op on operands of the same shapes; on magnitudes it gives sum |a||b|."""
    r = np.asarray(result)
    if r.dtype.kind != "f":
        return None
    mags = [_magnitudes(v) for v in operands]
    total = np.asarray(run(*mags), dtype=np.float64)
    if np.any(total > float(np.finfo(r.dtype).max)):
        raise Unstable  # some order of the terms may overflow where another does not
    err = sum_error(total, r, count + 1)
    if any(e is not None for e in errs):
        moved = np.asarray(run(*[m + (0.0 if e is None else np.where(np.isfinite(e), e, 0.0))
                                 for m, e in zip(mags, errs)]), dtype=np.float64)
        err = err + (moved - total)
    return np.where(np.isfinite(r), err, 0.0)


def scan_error(kind: str, x, x_err, axis, result):
    """The bound of a float np.cumsum or np.cumprod along `axis` (None: of the flattened array)
    in any order (a device scan associates its terms otherwise than NumPy's loop): per element,
    the reduction rule over the prefix it combines, with the axis length as the count."""
    r = np.asarray(result)
    if r.dtype.kind != "f":
        return None
    x = np.asarray(x)
    if axis is None:
        x_err = None if x_err is None else np.broadcast_to(x_err, x.shape).reshape(-1)
        x = x.reshape(-1)
        axis = 0
    count = x.shape[axis] if x.ndim else 1
    a = _magnitudes(x)
    eps = float(np.finfo(r.dtype).eps)
    big = float(np.finfo(r.dtype).max)
    if kind == "cumsum":
        total = np.cumsum(a, axis=axis)
        if np.any(total > big):
            raise Unstable
        err = sum_error(total, r, count)
    else:
        if (np.any(np.cumprod(np.where(a >= 1, a, 1.0), axis=axis) > big)
                or np.any(np.cumprod(np.where((a > 0) & (a < 1), a, 1.0), axis=axis) < float(np.finfo(r.dtype).tiny))):
            raise Unstable
        base = np.cumprod(a, axis=axis)
        e = 0.0 if x_err is None else np.broadcast_to(x_err, a.shape)
        err = np.cumprod(a + e, axis=axis) - base + 2 * (count + 1) * eps * base
    return np.where(np.isfinite(r), np.reshape(err, r.shape), 0.0)


def _variance_error(kind: str, x: np.ndarray, axis, keepdims: bool, result: np.ndarray, ddof: int):
    """A bound on the rounding of a two-pass variance (the mean, then the mean of squared
    deviations, as NumPy computes it) in any summation order, or of its square root."""
    eps = float(np.finfo(result.dtype).eps)
    a = x.astype(np.float64)
    valid = np.isfinite(a)
    a = np.where(valid, a, 0.0)
    n = np.sum(valid, axis=axis, keepdims=True)
    mean = np.sum(a, axis=axis, keepdims=True) / np.maximum(n, 1)
    dev = np.where(valid, np.abs(a - mean), 0.0)
    # The mean: a sum of n terms and a division.
    mean_err = 2 * n * eps * np.sum(np.abs(a), axis=axis, keepdims=True) / np.maximum(n, 1) + 2 * eps * np.abs(mean)
    # Each deviation, its square, and their sum.
    term_err = 2 * dev * (mean_err + eps * dev) + mean_err**2 + eps * dev**2
    total = 2 * n * eps * np.sum(dev**2, axis=axis, keepdims=True) + np.sum(np.where(valid, term_err, 0.0), axis=axis,
                                                                            keepdims=True)
    var = np.sum(dev**2, axis=axis, keepdims=True) / np.maximum(n - ddof, 1)
    err = total / np.maximum(n - ddof, 1) + 2 * eps * var
    if kind.endswith("std"):
        std = np.sqrt(var)
        err = np.minimum(np.sqrt(err), err / np.maximum(2 * std, tiny(result.dtype))) + 2 * eps * std
    if not keepdims:
        err = np.squeeze(err, axis=axis) if axis is not None else err.reshape(())
    return np.broadcast_to(err, result.shape)
