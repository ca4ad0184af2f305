"""x[mask] for a traced boolean mask of x's shape: a selection whose size depends on the data.

numfuse's shapes are fixed when it traces, so the selection is never compacted. It is kept as
x's values beside the mask, `MaskedSelection`, which supports what real code does with one:

- elementwise arithmetic and ufuncs with scalars and with selections of the same mask
  (`x[m] ** -1.5`);
- its reductions, computed over the selected points only (`x[m].mean()`, `.sum()`, `.max()`,
  `np.sum(x[m])`, `.any()`): the unselected points hold the reduction's identity. A max or min
  of an empty selection raises NumPy's ValueError after the kernel runs;
- writing it back through the same mask: `x[m] = x[m] ** -1.5`, and so `x[m] += 1`.

Anything that needs its size (`len`, `.shape`, returning it, indexing it) raises an
UnsupportedError that says why. Sums add the selected values in another order than NumPy's
pairwise sum of the compacted array: float sums agree to rounding.
"""

from __future__ import annotations

import operator

import numpy as np

from .errors import at_user_line, unsupported

_WHY = "its size depends on the data (the number of selected elements)"
_HINT = "reduce it (x[mask].sum()), write it back (x[mask] = ...), or use np.where(mask, x, fill)"


class MaskedSelection:
    """x[mask]: x's values (of x's shape) and the traced mask that selects them."""

    __array_priority__ = 2000

    def __init__(self, ctx, values, mask):
        from .errors import user_location

        self._ctx = ctx
        self.values = values
        self.mask = mask
        self.loc = user_location()  # the line that made it, for the refusal to return it

    dtype = property(lambda self: self.values.dtype)
    ndim = property(lambda self: 1)

    @property
    def shape(self):
        raise unsupported("the shape of x[mask]", _HINT + "; " + _WHY)

    @property
    def size(self):
        raise unsupported("the size of x[mask]", "count it with np.count_nonzero(mask); " + _WHY)

    def __len__(self):
        raise unsupported("len(x[mask])", "count it with np.count_nonzero(mask); " + _WHY)

    def __getitem__(self, index):
        raise unsupported("indexing x[mask]", _HINT + "; " + _WHY)

    def __iter__(self):
        raise unsupported("iterating over x[mask]", _HINT + "; " + _WHY)

    def __repr__(self) -> str:
        return f"MaskedSelection<{self.values._aval}>"

    # -- elementwise ---------------------------------------------------------------------------

    def _values_of(self, other):
        if isinstance(other, MaskedSelection):
            if other.mask._var is not self.mask._var:
                raise unsupported("combining selections of two different masks", _WHY)
            return other.values
        if np.ndim(other) or (hasattr(other, "shape") and other.shape):
            raise ValueError(at_user_line(
                "operands could not be broadcast together: x[mask] has a size known only from the data"))
        return other

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs.get("out") is not None:
            if method == "reduce" and ufunc in _UFUNC_REDUCTIONS:
                return getattr(self, _UFUNC_REDUCTIONS[ufunc])(**kwargs)
            raise unsupported(f"np.{ufunc.__name__}.{method} of x[mask]", _HINT)
        values = [self._values_of(i) for i in inputs]
        result = ufunc(*values, **kwargs)
        if isinstance(result, tuple):
            return tuple(MaskedSelection(self._ctx, r, self.mask) for r in result)
        return MaskedSelection(self._ctx, result, self.mask)

    def __array_function__(self, func, types, args, kwargs):
        method = _FUNCTIONS.get(func)
        if method is None or not args or args[0] is not self:
            raise unsupported(f"{getattr(func, '__name__', func)} of x[mask]", _HINT + "; " + _WHY)
        return getattr(self, method)(*args[1:], **kwargs)

    def __array__(self, dtype=None, copy=None):
        raise unsupported("converting x[mask] to an array", _HINT + "; " + _WHY)

    def astype(self, dtype, copy=True):
        return MaskedSelection(self._ctx, self.values.astype(dtype), self.mask)

    # -- reductions over the selected points ----------------------------------------------------

    def _axis(self, axis, keepdims):
        if axis not in (None, 0, -1, (0,)) or keepdims:
            raise unsupported("x[mask] reduced with axis= or keepdims=", "x[mask] is 1-D: reduce it whole")

    def _filled(self, identity):
        return np.where(self.mask, self.values, np.asarray(identity, self.values.dtype)[()])

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        self._axis(axis, keepdims)
        return np.sum(self._filled(0), dtype=dtype)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        self._axis(axis, keepdims)
        return np.prod(self._filled(1), dtype=dtype)

    def any(self, axis=None, out=None, keepdims=False):
        self._axis(axis, keepdims)
        return np.any(np.logical_and(self.mask, self.values))

    def all(self, axis=None, out=None, keepdims=False):
        self._axis(axis, keepdims)
        return np.all(np.logical_or(np.logical_not(self.mask), self.values))

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        self._axis(axis, keepdims)
        kind = self.values.dtype.kind
        sum_dtype = dtype if dtype is not None else (np.float64 if kind in "biu" else None)
        total = np.sum(self._filled(0), dtype=sum_dtype)
        count = np.count_nonzero(self.mask)
        result = np.true_divide(total, count)  # 0 / 0 is NaN, as NumPy's mean of an empty slice
        return result.astype(total.dtype) if result.dtype != total.dtype else result

    def _extreme(self, largest: bool):
        dtype = self.values.dtype
        if dtype.kind == "f":
            identity = -np.inf if largest else np.inf
        elif dtype.kind == "b":
            identity = not largest
        else:
            info = np.iinfo(dtype)
            identity = info.min if largest else info.max
        value = (np.max if largest else np.min)(self._filled(identity))
        # NumPy raises for an empty selection: the kernel checks the count (ops.RUNTIME_ERRORS),
        # in the kernel that computes the value (which depends on the check's result).
        ctx = self._ctx
        count = ctx.convert(ctx.as_tracer(ctx.operand(np.count_nonzero(self.mask))), np.int64)
        nonempty = ctx.bind("nonempty", [count._var], (), np.dtype(bool))
        return ctx.numpy_scalar(np.where(nonempty, value, value))

    def max(self, axis=None, out=None, keepdims=False):
        self._axis(axis, keepdims)
        return self._extreme(True)

    def min(self, axis=None, out=None, keepdims=False):
        self._axis(axis, keepdims)
        return self._extreme(False)


def returned_error(selection: MaskedSelection):
    """The refusal to return x[mask], naming the line that made it."""
    from .errors import UnsupportedError

    message = ("returning x[mask] is not supported by numfuse; its size depends on the data; return "
               "np.where(mask, x, fill) or a reduction of it")
    loc = selection.loc
    if loc is not None:
        message += f"\n  at {loc}" + (f": {loc.text}" if loc.text else "")
    return UnsupportedError(message)


def _operator(fn, reflected: bool = False):
    def apply(self, other):
        other = self._values_of(other)
        result = fn(other, self.values) if reflected else fn(self.values, other)
        out = MaskedSelection(self._ctx, result, self.mask)
        out.loc = self.loc
        return out

    return apply


def _unary_operator(fn):
    return lambda self: MaskedSelection(self._ctx, fn(self.values), self.mask)


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor",
              "lshift", "rshift"):
    _fn = getattr(operator, f"{_name}_" if _name in ("and", "or") else _name)
    setattr(MaskedSelection, f"__{_name}__", _operator(_fn))
    setattr(MaskedSelection, f"__r{_name}__", _operator(_fn, reflected=True))
for _name in ("lt", "le", "gt", "ge", "eq", "ne"):
    setattr(MaskedSelection, f"__{_name}__", _operator(getattr(operator, _name)))
for _name in ("neg", "pos", "abs", "invert"):
    setattr(MaskedSelection, f"__{_name}__", _unary_operator(getattr(operator, _name)))
MaskedSelection.__hash__ = None


_UFUNC_REDUCTIONS = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min",
                     np.logical_or: "any", np.logical_and: "all"}
_FUNCTIONS = {np.sum: "sum", np.prod: "prod", np.max: "max", np.amax: "max", np.min: "min", np.amin: "min",
              np.mean: "mean", np.any: "any", np.all: "all"}


def select(ctx, x, mask):
    """x[mask] for a traced boolean `mask` of x's shape."""
    if mask.shape != x.shape:
        raise unsupported("x[mask] with a mask of x's leading dimensions only", _HINT + "; " + _WHY)
    return MaskedSelection(ctx, x, mask)
