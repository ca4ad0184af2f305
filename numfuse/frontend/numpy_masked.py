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

from ..errors import unsupported
from .untraced import untraced

_WHY = "its size depends on the data (the number of selected elements)"
_HINT = "reduce it (x[mask].sum()), write it back (x[mask] = ...), or use np.where(mask, x, fill)"


class MaskedSelection:
    """x[mask]: x's values (of x's shape) and the traced mask that selects them."""

    __array_priority__ = 2000

    def __init__(self, ctx, values, mask):
        from ..errors import user_location


        self._ctx = ctx
        # Their values now (NumPy's x[mask] is evaluated at once): an in-place write into x or
        # the mask afterwards does not change the selection.
        self.values = ctx.wrap(values._var)
        self.mask = ctx.wrap(mask._var)
        self.loc = user_location()  # the line that made it, for the refusal to return it
        # Once compacted (a graph break, for something that needs its size), the selection is
        # that NumPy array: writes into it (out=) stay, and everything after reads it.
        self._value = None
        if ctx.breaks is not None:
            ctx.breaks.track(self)  # (compacted, should the call go on in NumPy: eager.py)

    dtype = property(lambda self: self.values.dtype)
    ndim = property(lambda self: 1)

    def compacted(self, what: str, refusal: Exception | None = None, at_its_line: bool = False) -> np.ndarray:
        """The selected values as a NumPy array (NumPy's x[mask]), for `what`, which needs its
        size: computed at a graph break; when tracing once, the trace stops (`refusal` with
        graph_breaks=False)."""

        if self._value is None:
            if refusal is None:
                refusal = unsupported(what, _HINT + "; " + _WHY)
            self._value = untraced(self._ctx, _compact, (self.values, self.mask), {}, refusal,
                                   f"{what}: x[mask]'s size depends on the data",
                                   self.loc if at_its_line else None, may_write=False)
        return self._value

    @property
    def shape(self):
        return self.compacted("the shape of x[mask]").shape

    @property
    def size(self):
        return self.compacted("the size of x[mask]").size

    def __len__(self):
        return len(self.compacted("len(x[mask])"))

    def __getitem__(self, index):
        return self.compacted("indexing x[mask]")[index]

    def __setitem__(self, index, value):
        # NumPy's x[mask] is a new array: writing into it changes that array alone.
        self.compacted("writing into x[mask]")[index] = value

    def __iter__(self):
        return iter(self.compacted("iterating over x[mask]"))

    def __repr__(self) -> str:
        return f"MaskedSelection<{self.values._aval}>"

    def __getattr__(self, name):
        # Any other ndarray attribute (x[mask].std(), .argmax(), .copy(), .T): NumPy's, of the
        # selected values (a graph break). Others are no ndarray's: an AttributeError, as
        # NumPy's (duck-typing probes such as hasattr(value, "get") stay cheap).
        if name.startswith("_") or not hasattr(np.ndarray, name):
            raise AttributeError(f"'numpy.ndarray' object has no attribute '{name}'")
        return getattr(self.compacted(f"x[mask].{name}"), name)

    # -- elementwise ---------------------------------------------------------------------------

    def _values_of(self, other):
        if isinstance(other, MaskedSelection):
            if other.mask._var is not self.mask._var:
                raise unsupported("combining selections of two different masks", _WHY)
            return other.values
        return other

    @staticmethod
    def _real(value, what: str):
        return value.compacted(what) if isinstance(value, MaskedSelection) else value

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "reduce" and kwargs.get("out") is None and ufunc in _UFUNC_REDUCTIONS:
            return getattr(self, _UFUNC_REDUCTIONS[ufunc])(**kwargs)
        arrays = [i for i in inputs if not isinstance(i, MaskedSelection)]
        outs = kwargs.get("out") or ()
        outs = outs if isinstance(outs, tuple) else (outs,)
        if method != "__call__" or kwargs.get("out") is not None or any(
                np.ndim(i) or (hasattr(i, "shape") and i.shape) for i in arrays) or any(
                isinstance(i, MaskedSelection) and i._value is not None for i in inputs + outs):
            # With an array beside it, or another method: NumPy's, on the compacted selection.
            what = f"np.{ufunc.__name__}.{method} of x[mask]" if method != "__call__" else \
                f"np.{ufunc.__name__} of x[mask] and an array"
            real = [self._real(i, what) for i in inputs]
            if "out" in kwargs and kwargs["out"] is not None:
                kwargs = {**kwargs, "out": tuple(self._real(o, what) for o in outs)}
            return getattr(ufunc, method)(*real, **kwargs) if method != "__call__" else ufunc(*real, **kwargs)
        values = [self._values_of(i) for i in inputs]
        result = ufunc(*values, **kwargs)
        if isinstance(result, tuple):
            return tuple(MaskedSelection(self._ctx, r, self.mask) for r in result)
        return MaskedSelection(self._ctx, result, self.mask)

    def __array_function__(self, func, types, args, kwargs):
        method = _FUNCTIONS.get(func)
        if method is None or not args or args[0] is not self or self._value is not None:
            what = f"{getattr(func, '__name__', func)} of x[mask]"
            return func(*[self._real(a, what) for a in args],
                        **{k: self._real(v, what) for k, v in kwargs.items()})
        return getattr(self, method)(*args[1:], **kwargs)

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.compacted("converting x[mask] to an array"), dtype=dtype)

    def astype(self, dtype, copy=True):
        if self._value is not None:
            return self._value.astype(dtype=dtype, copy=copy)
        return MaskedSelection(self._ctx, self.values.astype(dtype), self.mask)

    # -- reductions over the selected points ----------------------------------------------------

    def _axis(self, axis, keepdims):
        if axis not in (None, 0, -1, (0,)) or keepdims:
            raise unsupported("x[mask] reduced with axis= or keepdims=", "x[mask] is 1-D: reduce it whole")

    def _filled(self, identity):
        return np.where(self.mask, self.values, np.asarray(identity, self.values.dtype)[()])

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        if self._value is not None:
            return self._value.sum(axis=axis, dtype=dtype, out=out, keepdims=keepdims)
        self._axis(axis, keepdims)
        return np.sum(self._filled(0), dtype=dtype)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        if self._value is not None:
            return self._value.prod(axis=axis, dtype=dtype, out=out, keepdims=keepdims)
        self._axis(axis, keepdims)
        return np.prod(self._filled(1), dtype=dtype)

    def any(self, axis=None, out=None, keepdims=False):
        if self._value is not None:
            return self._value.any(axis=axis, out=out, keepdims=keepdims)
        self._axis(axis, keepdims)
        return np.any(np.logical_and(self.mask, self.values))

    def all(self, axis=None, out=None, keepdims=False):
        if self._value is not None:
            return self._value.all(axis=axis, out=out, keepdims=keepdims)
        self._axis(axis, keepdims)
        return np.all(np.logical_or(np.logical_not(self.mask), self.values))

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        if self._value is not None:
            return self._value.mean(axis=axis, dtype=dtype, out=out, keepdims=keepdims)
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
        if self._value is not None:
            return self._value.max(axis=axis, out=out, keepdims=keepdims)
        self._axis(axis, keepdims)
        return self._extreme(True)

    def min(self, axis=None, out=None, keepdims=False):
        if self._value is not None:
            return self._value.min(axis=axis, out=out, keepdims=keepdims)
        self._axis(axis, keepdims)
        return self._extreme(False)


def _compact(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """NumPy's x[mask], on real arrays at a graph break."""
    return values[mask]


def compacted_in_index(index):
    """`index` with each x[mask] in it compacted (a graph break): an index array whose size
    depends on the data (`a[xi[xi > 0]]`)."""
    if isinstance(index, MaskedSelection):
        return index.compacted("indexing with x[mask] (an index array)")
    if isinstance(index, tuple) and any(isinstance(item, MaskedSelection) for item in index):
        return tuple(compacted_in_index(item) for item in index)
    return index


def returned_error(selection: MaskedSelection):
    """The refusal to return x[mask], naming the line that made it."""
    from ..errors import UnsupportedError

    message = ("returning x[mask] is not supported by numfuse; its size depends on the data; return "
               "np.where(mask, x, fill) or a reduction of it")
    loc = selection.loc
    if loc is not None:
        message += f"\n  at {loc}" + (f": {loc.text}" if loc.text else "")
    return UnsupportedError(message)


def _operator(fn, reflected: bool = False):
    def apply(self, other):
        if self._value is not None or isinstance(other, MaskedSelection) and other._value is not None \
                or not isinstance(other, MaskedSelection) and np.ndim(other):
            # Compacted, or beside an array: NumPy's operator on the compacted selection.
            what = "an operator on x[mask] and an array"
            real, other = self._real(self, what), self._real(other, what)
            return fn(other, real) if reflected else fn(real, other)
        other = self._values_of(other)
        result = fn(other, self.values) if reflected else fn(self.values, other)
        out = MaskedSelection(self._ctx, result, self.mask)
        out.loc = self.loc
        return out

    return apply


def _unary_operator(fn):
    def apply(self):
        if self._value is not None:
            return fn(self._value)
        return MaskedSelection(self._ctx, fn(self.values), self.mask)

    return apply


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
