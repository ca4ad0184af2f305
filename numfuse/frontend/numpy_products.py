"""NumPy's matrix products on traced values: @, np.matmul, np.dot, np.vdot, np.inner,
np.tensordot and np.einsum.

Each becomes the library primitive `matmul` (or `dot`, `einsum`: library_ops.py), run as a plan
step of its own, except where a fused loop serves better than the library: a product whose
iteration space is at most library_ops.FUSE_PRODUCT_RATIO times its largest array (a matrix
times a vector, a dot product, an outer product, a batch of tiny matrices) is traced as a
broadcast multiply and a sum, which fuses with its producers and consumers (`A @ v` is one
row-reduction kernel). The choice is made from the shapes, when traced, by the target's rule
(TraceContext.fuses_product: Target.fuses_product, whose default is library_ops.fused_by_size),
and `explain` prints it with its reason.

The products compute as NumPy's matmul does: both operands cast to the result dtype, products
summed in it (int8 @ int8 wraps in int8; bool @ bool is an `or` of `and`s).
"""

from __future__ import annotations

import string

import numpy as np

from ..errors import at_user_line, unsupported, user_line_noted
from ..ir.library_ops import dot_shape, fused_by_size, matmul_shape, numpy_error
from ..ir.primitives import PRIMITIVES
from .numpy_library import bind_library, check_dtypes, note, traced

def _product_dtype(fn, a, b) -> np.dtype:
    return fn(np.ones((1, 1), a.dtype), np.ones((1, 1), b.dtype)).dtype


def _fused_sum_of_products(ctx, a, b, a_axes, b_axes, sum_axes, dtype):
    """sum over `sum_axes` of a * b, where a and b are laid out (by broadcasting) on a joint
    iteration space: a_axes/b_axes give each operand's axes' positions in it."""
    ndim = 1 + max(max(a_axes, default=-1), max(b_axes, default=-1))
    terms = []
    for t, axes in ((a, a_axes), (b, b_axes)):
        t = ctx.convert(t, dtype)
        order = sorted(range(len(axes)), key=lambda i: axes[i])
        t = np.transpose(t, order) if order != list(range(len(axes))) else t
        placed = sorted(axes)
        shape = [1] * ndim
        for pos, size in zip(placed, t.shape):
            shape[pos] = size
        terms.append(np.reshape(t, tuple(shape)))
    product = terms[0] * terms[1] if dtype.kind != "b" else np.logical_and(terms[0], terms[1])
    if product.dtype != dtype:
        product = ctx.convert(product, dtype)
    if sum_axes:
        prim = "reduce_or" if dtype.kind == "b" else "reduce_sum"
        shape = tuple(s for i, s in enumerate(product.shape) if i not in sum_axes)
        params = (("axes", tuple(sum_axes)), ("keepdims", False))
        product = ctx.bind(prim, [product._var], shape, dtype, params=params, numpy_scalar=True)
    # NumPy's product is a new array in C order, whatever its operands' layouts (its ravel is a
    # view, for one).
    ctx.strides.pop(product._var, None)
    return product


# What a product's operand may be read from without a kernel computing it first: a graph input,
# a constant, a library call's result or a buffer written by updates, or a view of one of these.
_STORED_KINDS = frozenset({"library", "update"})


def _computed(ctx, tracers) -> bool:
    """Whether an operand is computed by fusable operations (`alpha * A`): a library call would
    need it stored first, where a fused sum of products computes it as it reads."""
    for t in tracers:
        var = t._var
        while var not in ctx.consts and var not in ctx.inputs:
            # (the operand's producer is usually among the last equations: search from the end)
            eqn = next((e for e in reversed(ctx.eqns) if e.out is var), None)
            if eqn is None:
                break  # a value of an earlier segment (graph breaks): an input there
            kind = PRIMITIVES[eqn.prim].kind if eqn.prim in PRIMITIVES else "library"
            if kind != "view":
                if kind not in _STORED_KINDS:
                    return True
                break
            var = eqn.inputs[0]
    return False


def _fuses(ctx, operands, dtype, sizes, space, terms) -> tuple[bool, str]:
    """The target's choice (TraceContext.fuses_product), fused_by_size's where none is given."""
    rule = ctx.fuses_product or fused_by_size
    return rule(dtype, sizes, space, terms, _computed(ctx, operands))


def matmul(ctx, a, b, name="np.matmul", library="matmul"):
    a, b = traced(ctx, a), traced(ctx, b)
    check_dtypes(name, a, b)
    shape = matmul_shape(a.shape, b.shape)
    if shape is None:
        raise numpy_error(np.matmul, [a._aval, b._aval], ValueError(at_user_line("matmul: shapes do not match")))
    dtype = _product_dtype(np.matmul, a, b)
    k = a.shape[-1]
    space = int(np.prod(shape, dtype=np.int64)) * k
    sizes = [a.size, b.size, int(np.prod(shape, dtype=np.int64))]
    fused, why = _fuses(ctx, [a, b], dtype, sizes, space, k)
    if fused:
        note(ctx, f"{name} of {list(a.shape)} and {list(b.shape)} fused as a sum of products: {why}")
        # Joint space: batch..., n, k, m, where a 1-D operand has no n (or m) axis at all.
        batch = len(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
        has_n, has_m = a.ndim > 1, b.ndim > 1
        k_axis = batch + has_n
        a_axes = list(range(batch - max(a.ndim - 2, 0), batch)) + ([batch] if has_n else []) + [k_axis]
        b_axes = list(range(batch - max(b.ndim - 2, 0), batch)) + [k_axis] + ([k_axis + 1] if has_m else [])
        return ctx.numpy_scalar(_fused_sum_of_products(ctx, a, b, a_axes, b_axes, [k_axis], dtype))
    note(ctx, f"{name} of {list(a.shape)} and {list(b.shape)} runs as a library call: {why}")
    return ctx.numpy_scalar(bind_library(ctx, library, [a, b])[0])


def dot(ctx, a, b, out=None):
    if out is not None:
        raise unsupported("np.dot(..., out=...)")
    ea, eb = ctx.operand(a), ctx.operand(b)
    if not ea.shape or not eb.shape:
        return np.multiply(a, b)  # np.dot with a scalar multiplies
    ta, tb = ctx.as_tracer(ea), ctx.as_tracer(eb)
    if tb.ndim <= 2 or ta.ndim == 1:
        # Within these ranks np.dot is np.matmul (b's batch axes are the only difference).
        if dot_shape(ta.shape, tb.shape) is None:
            raise numpy_error(np.dot, [ta._aval, tb._aval], ValueError(at_user_line("shapes not aligned")))
        # ... but not in every loop: np.dot of vectors whose strides BLAS cannot take (a flip)
        # adds in its own loop, np.matmul in another; the library call is NumPy's np.dot.
        return matmul(ctx, ta, tb, "np.dot", library="dot")
    note(ctx, f"np.dot of {list(ta.shape)} and {list(tb.shape)} runs as a library call")
    return ctx.numpy_scalar(bind_library(ctx, "dot", [ta, tb])[0])


def vdot(ctx, a, b):
    ta, tb = traced(ctx, a), traced(ctx, b)
    if ta.size != tb.size:
        raise numpy_error(np.vdot, [ta._aval, tb._aval], ValueError(at_user_line("vectors have different lengths")))
    if ta.dtype.kind == "c":
        ta = np.conjugate(ta)
    return matmul(ctx, np.ravel(ta), np.ravel(tb), "np.vdot")


def inner(ctx, a, b):
    ea, eb = ctx.operand(a), ctx.operand(b)
    if not ea.shape or not eb.shape:
        return np.multiply(a, b)
    ta, tb = ctx.as_tracer(ea), ctx.as_tracer(eb)
    if ta.shape[-1] != tb.shape[-1]:
        raise numpy_error(np.inner, [ta._aval, tb._aval], ValueError(at_user_line("shapes not aligned")))
    # (np.inner of two vectors is a NumPy scalar; np.tensordot's 0-d result an array)
    return ctx.numpy_scalar(tensordot(ctx, ta, tb, axes=([-1], [-1]), name="np.inner"))


def tensordot(ctx, a, b, axes=2, name="np.tensordot"):
    """As NumPy computes it: both operands transposed and reshaped to matrices, one product."""
    ta, tb = traced(ctx, a), traced(ctx, b)
    try:
        iter(axes)
    except TypeError:
        n = int(axes)
        axes_a, axes_b = list(range(ta.ndim - n, ta.ndim)), list(range(n))
    else:
        axes_a, axes_b = axes
        axes_a = [axes_a] if isinstance(axes_a, int) else list(axes_a)
        axes_b = [axes_b] if isinstance(axes_b, int) else list(axes_b)
    stand = [np.broadcast_to(np.zeros((), t.dtype), t.shape) for t in (ta, tb)]
    if len(axes_a) != len(axes_b) or any(
        ta.shape[i] != tb.shape[j] for i, j in zip(axes_a, axes_b)
    ):
        with user_line_noted():
            np.tensordot(*stand, axes=(axes_a, axes_b))
        raise ValueError(at_user_line("shape-mismatch for sum"))
    axes_a = [i % ta.ndim for i in axes_a]
    axes_b = [j % tb.ndim for j in axes_b]
    free_a = [i for i in range(ta.ndim) if i not in axes_a]
    free_b = [j for j in range(tb.ndim) if j not in axes_b]
    k = int(np.prod([ta.shape[i] for i in axes_a], dtype=np.int64))
    m = int(np.prod([ta.shape[i] for i in free_a], dtype=np.int64))
    n = int(np.prod([tb.shape[j] for j in free_b], dtype=np.int64))
    at = np.reshape(np.transpose(ta, free_a + axes_a), (m, k))
    bt = np.reshape(np.transpose(tb, axes_b + free_b), (k, n))
    result = matmul(ctx, at, bt, name)
    return np.reshape(result, tuple(ta.shape[i] for i in free_a) + tuple(tb.shape[j] for j in free_b))


def parse_einsum(subscripts: str, shapes):
    """einsum's parsed subscripts: (input letter strings, output letters, letter sizes)."""
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        ins, out = subscripts.split("->")
    else:
        ins, out = subscripts, None
    terms = ins.split(",")
    if len(terms) != len(shapes):
        raise ValueError(at_user_line("more operands were provided than specified in the subscripts string"
                                      if len(shapes) > len(terms) else "fewer operands provided to einstein sum function than specified in the subscripts string"))
    used = set(c for c in subscripts if c in string.ascii_letters)
    spare = [c for c in string.ascii_letters if c not in used]
    ellipsis_rank = max((len(s) - (len(t) - 3) for t, s in zip(terms, shapes) if "..." in t), default=0)
    dots = "".join(spare[:ellipsis_rank])
    expanded = []
    for t, s in zip(terms, shapes):
        if "..." in t:
            rank = len(s) - (len(t) - 3)
            t = t.replace("...", dots[ellipsis_rank - rank:] if rank else "")
        if len(t) != len(s):
            raise ValueError(at_user_line("einstein sum subscripts string contains too many subscripts for operand"))
        expanded.append(t)
    if out is None:
        counts = {}
        for t in expanded:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = dots + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in dots))
    elif "..." in out:
        out = out.replace("...", dots)
    sizes: dict[str, int] = {}
    for t, s in zip(expanded, shapes):
        for c, n in zip(t, s):
            if sizes.get(c, 1) != 1 and n != 1 and sizes[c] != n:
                raise ValueError(at_user_line("operands could not be broadcast together with remapped shapes"))
            sizes[c] = n if sizes.get(c, 1) == 1 else sizes[c]  # a size 1 broadcasts, even to 0
    return expanded, out, sizes


def _innermost_axis(ctx, x) -> int | None:
    """The axis of traced array `x` that NumPy's iterator runs innermost: of the axes longer than
    one, the one of smallest stride (None where its strides are unknown)."""
    strides = ctx.strides_of(x._var)
    axes = [i for i, n in enumerate(x.shape) if n > 1]
    if strides is None or not axes:
        return None
    return min(axes, key=lambda i: (abs(strides[i]), -i))


def _sum_before_broadcast_factor(ctx, arrays, terms, result, sizes, dtype):
    """Two einsum operands where one has size 1 on a summed letter the other spans: where that
    letter is NumPy's inner loop (the other's innermost axis in memory), NumPy sums the other over
    it first, then multiplies once (its stride-0 inner loop), which decides inf * (a sum whose
    signs mix): inf, not the NaN of summing inf * each term, and rounds once. Do the same; the
    letter then leaves both terms. Where the other's innermost axis is another (a Fortran-ordered
    or transposed operand), NumPy multiplies each term, as the sum of products does."""
    arrays, terms = list(arrays), list(terms)
    for k in (0, 1):
        factor, other = k, 1 - k
        for c in list(terms[factor]):
            if c in result or sizes[c] <= 1 or c not in terms[other]:
                continue
            if arrays[factor].shape[terms[factor].index(c)] != 1:
                continue
            axis = terms[other].index(c)
            if _innermost_axis(ctx, arrays[other]) != axis:
                continue
            x = ctx.convert(arrays[other], dtype)
            prim = "reduce_or" if dtype.kind == "b" else "reduce_sum"
            rshape = tuple(s for i, s in enumerate(x.shape) if i != axis)
            arrays[other] = ctx.bind(prim, [x._var], rshape, dtype, params=(("axes", (axis,)), ("keepdims", False)))
            arrays[factor] = np.squeeze(arrays[factor], axis=terms[factor].index(c))
            terms[other] = terms[other].replace(c, "")
            terms[factor] = terms[factor].replace(c, "")
    return arrays, terms


def einsum(ctx, *operands, out=None, optimize=False, dtype=None, order="K", casting="safe"):
    if out is not None or dtype is not None:
        raise unsupported("np.einsum(..., out=... or dtype=...)")
    if not operands or not isinstance(operands[0], str):
        raise unsupported("np.einsum with operand lists", "write the subscripts as a string: np.einsum('ij,jk->ik', a, b)")
    subscripts, arrays = operands[0], [traced(ctx, x) for x in operands[1:]]
    check_dtypes("np.einsum", *arrays)
    try:
        terms, result, sizes = parse_einsum(subscripts, [t.shape for t in arrays])
        if any(c not in sizes for c in result):
            raise KeyError(next(c for c in result if c not in sizes))
    except (KeyError, IndexError):
        # Subscripts NumPy refuses whatever the sizes: its own error, from arrays of one element
        with user_line_noted():
            np.einsum(subscripts, *[np.ones((1,) * t.ndim, t.dtype) for t in arrays])
        raise
    shape = tuple(sizes[c] for c in result)
    if len(arrays) == 1 and set(result) == set(terms[0]) and len(set(result)) == len(result):
        return _einsum_view(ctx, arrays[0], terms[0], result)
    letters = sorted(sizes, key=lambda c: (c not in result, result.index(c) if c in result else c))
    space = int(np.prod([sizes[c] for c in letters], dtype=np.int64))
    dtype_ = np.einsum(subscripts, *[np.ones((1,) * t.ndim, t.dtype) for t in arrays]).dtype
    repeated = any(len(set(t)) != len(t) for t in terms)
    sizes_all = [t.size for t in arrays] + [int(np.prod(shape, dtype=np.int64))]
    terms_each = int(np.prod([sizes[c] for c in letters if c not in result], dtype=np.int64))
    fused, why = (False, "") if repeated or len(arrays) > 2 else (
        fused_by_size(dtype_, sizes_all, space, terms_each) if len(arrays) == 1 else
        _fuses(ctx, arrays, dtype_, sizes_all, space, terms_each))
    if fused:
        note(ctx, f"np.einsum('{subscripts}') fused as a sum of products: {why}")
        if len(arrays) == 2:
            arrays, terms = _sum_before_broadcast_factor(ctx, arrays, terms, result, sizes, dtype_)
            letters = [c for c in letters if any(c in t for t in terms)]
        summed = [i for i, c in enumerate(letters) if c not in result]
        if len(arrays) == 1:
            x = ctx.convert(arrays[0], dtype_)
            perm = sorted(range(x.ndim), key=lambda i: letters.index(terms[0][i]))
            x = np.transpose(x, perm)
            placed = [letters.index(terms[0][i]) for i in perm]
            full = [1] * len(letters)
            for pos, size in zip(placed, x.shape):
                full[pos] = size
            x = np.broadcast_to(np.reshape(x, tuple(full)), tuple(sizes[c] for c in letters))
            if summed:
                prim = "reduce_or" if dtype_.kind == "b" else "reduce_sum"
                rshape = tuple(s for i, s in enumerate(x.shape) if i not in summed)
                x = ctx.bind(prim, [x._var], rshape, dtype_, params=(("axes", tuple(summed)), ("keepdims", False)))
            value = x
        else:
            a_axes = [letters.index(c) for c in terms[0]]
            b_axes = [letters.index(c) for c in terms[1]]
            value = _fused_sum_of_products(ctx, arrays[0], arrays[1], a_axes, b_axes, summed, dtype_)
        if value.shape != shape:
            value = np.broadcast_to(value, shape)
        return ctx.numpy_scalar(value)
    note(ctx, f"np.einsum('{subscripts}') runs as a library call" + (f": {why}" if why else ""))
    return ctx.numpy_scalar(bind_library(ctx, "einsum", arrays, {"subscripts": subscripts, "shape": shape})[0])



def _einsum_view(ctx, x, term: str, result: str):
    """np.einsum of one operand that sums nothing ('ij->ji', 'ii->i', '...ij->...ji'): NumPy's
    result is a writeable view of the operand, and writes through it reach the operand. A
    letter repeated twice takes that diagonal (a view through the operand's flat rows, where
    those are a view); a diagonal numfuse cannot see as a view is read-only here, so that a
    write raises rather than being lost."""
    from .traced import root_array

    repeated = [c for c in dict.fromkeys(term) if term.count(c) > 1]
    view, letters = x, list(term)
    if len(repeated) == 1 and term.count(repeated[0]) == 2:
        c = repeated[0]
        first, second = (i for i, d in enumerate(term) if d == c)
        moved = np.moveaxis(view, (first, second), (-2, -1))
        n = moved.shape[-1]
        flat = moved.reshape(moved.shape[:-2] + (n * n,))
        view = flat[..., ::n + 1]
        letters = [d for i, d in enumerate(term) if i not in (first, second)] + [c]
        if root_array(view) is not root_array(x):  # (the reshape was a copy)
            view._readonly = True
    elif repeated:
        raise unsupported(f"np.einsum('{term}->{result}')", "a view of several diagonals; take them one by one")
    return np.transpose(view, [letters.index(c) for c in result])


FUNCTIONS = {
    np.dot: dot,
    np.vdot: vdot,
    np.inner: inner,
    np.tensordot: tensordot,
    np.einsum: einsum,
}
if hasattr(np.linalg, "matmul"):
    FUNCTIONS[np.linalg.matmul] = lambda ctx, a, b: matmul(ctx, a, b, "np.linalg.matmul")
