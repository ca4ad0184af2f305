"""Writes through views and concatenations give NumPy's values on the simulator: the arrays
written (arguments, locals, copies NumPy makes) end up as NumPy leaves them, with the kernel
counts of their plans. Plans in detail: trace/test_view_writes.py."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import numfuse
from numfuse_tests.helpers import assert_same


def check_in_place(fn, *make_args, kernels=None, reduced=1):
    """numfuse.jit(fn) returns what NumPy returns, leaves every argument as NumPy leaves it, and
    plans `kernels` kernels. Arguments are made by calling `make_args` (fresh arrays, laid out
    as the test wants, for each side)."""
    mine = [m() for m in make_args]
    theirs = [m() for m in make_args]
    with np.errstate(all="ignore"):
        expected = fn(*theirs)
    jf = numfuse.jit(fn)
    got = jf(*mine)
    if expected is not None:
        assert_same(got, expected, reduced)
    for i, (a, b) in enumerate(zip(mine, theirs)):
        assert_same(a, b, reduced, f"argument {i}")
    if kernels is not None:
        plan = jf.plan(*[m() for m in make_args])
        assert len(plan.kernels) == kernels, str(plan)
    return got


def rand(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(dtype)


def arg(*shape, layout="C", seed=0, dtype=np.float32):
    """A maker of fresh arrays of `shape` laid out C, F, transposed or with steps."""
    def make():
        if layout == "F":
            return np.asfortranarray(rand(*shape, seed=seed, dtype=dtype))
        if layout == "T":
            return rand(*reversed(shape), seed=seed, dtype=dtype).T
        if layout == "steps":
            return rand(2 * shape[0], *shape[1:], seed=seed, dtype=dtype)[::2]
        return rand(*shape, seed=seed, dtype=dtype)

    return make


def test_the_issues_writes_through_views():
    def f(a, v4, v6):
        a.T[0] = v4
        a.T[1:, :] += 1
        a.reshape(4, 6)[1] = v6 * 2
        a[:, None][2] = v6
        np.moveaxis(a, 0, -1)[..., 1] = -v6
        a.ravel()[3:7] = v4 + 10
        a[::2].T[1] = v4[:2]
        return a

    check_in_place(f, arg(4, 6), arg(4, seed=1), arg(6, seed=2), kernels=5)  # 7 updates, two pairs of them disjoint


@pytest.mark.parametrize("layout", ["C", "F", "T", "steps"])
def test_a_transposed_stencil_written_in_place(layout):
    """A Jacobi step on the transposed view: the right side reads the array at other points,
    so it goes to a temporary first, as NumPy evaluates it first."""
    def jacobi_t(a):
        t = a.T
        t[1:-1, 1:-1] = 0.25 * (t[:-2, 1:-1] + t[2:, 1:-1] + t[1:-1, :-2] + t[1:-1, 2:])
        return a.sum()

    check_in_place(jacobi_t, arg(6, 7, layout=layout), kernels=3)


@pytest.mark.parametrize("layout", ["F", "T", "steps"])
def test_a_whole_strided_argument_written_keeps_its_strides(layout):
    """Every version of a strided argument is its buffer: never indexed as if C-contiguous."""
    def f(a):
        a[...] = 1.5
        np.expand_dims(a, 0)[0, 1:] *= 2.0
        return a

    check_in_place(f, arg(3, 4, layout=layout), kernels=2)


def test_writes_through_reshapes_reach_the_argument_only_where_numpy_makes_a_view():
    def f(a, b, c):
        a.reshape(3, 2, 4)[1] = 7.0  # C-contiguous: a view
        b.reshape(-1)[::5] = 8.0  # Fortran-ordered: NumPy copies, b is left alone
        b.T.reshape(2, 2, 6)[1, 0] = 9.0  # b.T is C-contiguous: a view
        c.reshape(-1)[1::4] = 6.0  # rows with steps: NumPy copies, c is left alone
        c.reshape(2, 2, 6)[:, 1, ::2] = 5.0  # splitting the strided axis is a view
        return a.sum(), b.sum(), c.sum()

    # the three arrays' updates (disjoint: other buffers) as parts of one kernel, the two sums
    # over [6,4] in one kernel, c's sum in another
    check_in_place(f, arg(6, 4), arg(6, 4, layout="F"), arg(4, 6, layout="steps"), kernels=3)


def test_writing_through_a_numpy_copy_changes_only_the_copy():
    def f(a):
        r = a.T.reshape(-1)  # a copy
        r[::3] = 0.0
        s = a.flatten()
        s[2:5] += 100.0
        u = a[:, 1].ravel()  # ravel of a strided array: a copy
        u[0] = -1.0
        return r, s, u, a

    # the three copies (a.T materialized for r, then each copy into its own buffer) and the
    # three updates of the copies, as parts of three kernels: a copy is read by its update
    check_in_place(f, arg(4, 6), kernels=3)


def test_locals_their_views_and_a_broadcast_value():
    def f(x, row):
        y = x * 2.0
        y.T[::2] = row[:, None]  # a (3, 1) value broadcast into the (3, 4) region of y.T
        z = y.reshape(2, 12)
        z[1, ::3] -= 5.0
        np.swapaxes(y[None], 0, 2)[1:3, :, 0] = np.exp(x[:, 1:3]).T
        return y, z.sum(axis=1)

    check_in_place(f, arg(4, 6), arg(3, seed=1), kernels=5)


def test_views_made_before_a_write_show_it():
    def f(a):
        t = a.T
        r = a.reshape(-1)
        e = np.expand_dims(a, 0)
        t[2] = 3.0
        return t + 0.0, r[::5] * 1.0, e.sum(axis=(0, 2))

    # the update, the sum, and the two other results' domains as parts of one kernel
    check_in_place(f, arg(4, 6), kernels=3)


def test_integer_writes_through_views_cast_as_numpy_casts():
    def f(a, v):
        a.T[::2] = v * 1.7  # float64 into int16: truncated
        a.reshape(-1)[::7] += 3
        return a

    check_in_place(f, arg(5, 4, dtype=np.int16), lambda: np.arange(5.0), kernels=2)


def test_writes_into_a_numba_device_array_through_a_transposed_view():
    from numba import cuda

    x = rand(4, 6)

    def f(a):
        a.T[1:3] += 1.0
        np.moveaxis(a, 0, 1)[0] = a[:, 5]

    d = cuda.to_device(x)
    numfuse.jit(f, target="cuda")(d)  # device arrays: the CUDA target in every tier
    expected = x.copy()
    f(expected)
    np.testing.assert_array_equal(d.copy_to_host(), expected)


# -- concatenate and stack ------------------------------------------------------------------------


def test_concatenations_with_their_producers_and_consumers_are_one_kernel_each():
    def f(x, y):
        joined = np.concatenate([x, y * 2.0], axis=1) + 1.0
        stacked = np.stack([x, np.sqrt(np.abs(y)), x * y], axis=1)
        total = np.concatenate([x.T, y.T]).sum(axis=0)
        flat = np.concatenate([x, y[::-1]], axis=None)[::3]
        return joined, stacked, total, flat

    # joined and stacked (and flat's values) as parts of one kernel, then total's sum, then flat
    check_in_place(f, arg(3, 4), arg(3, 4, seed=1), kernels=3)


def test_concatenation_dtypes_and_odd_shapes():
    def f(x, y, b, h):
        return (
            np.concatenate([x, y]),  # int32 and float32: float64
            np.concatenate([b, ~b]),
            np.concatenate([h, h * h], axis=1),  # float16
            np.concatenate([x[:0], x, x[:1]]),  # an empty operand
            np.concatenate([x]),
            np.stack([y[0], y[1]], axis=-1),
            np.concatenate([x, y])[4],  # a constant point along the axis: one operand
        )

    check_in_place(
        f, lambda: np.arange(12, dtype=np.int32).reshape(3, 4), arg(2, 4), lambda: rand(2, 3) > 0,
        arg(2, 3, dtype=np.float16),
    )


def test_softmax_of_a_concatenation_is_one_kernel():
    def f(x, y):
        z = np.concatenate([x, y], axis=1)
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    got = check_in_place(f, arg(3, 5), arg(3, 7, seed=1), kernels=1)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-5)


def test_an_update_whose_right_side_is_a_concatenation_of_the_array():
    def roll_rows(a):
        a[...] = np.concatenate([a[-1:], a[:-1]])  # reads a elsewhere: a temporary first
        return a

    def fill(out, x, y):
        out[1:].T[...] = np.concatenate([x, y * 2.0]).T  # one update kernel

    check_in_place(roll_rows, arg(5, 3), kernels=2)
    check_in_place(fill, lambda: np.zeros((6, 3), np.float32), arg(2, 3), arg(3, 3, seed=1), kernels=1)


# -- hypothesis: random chains of views, written into ---------------------------------------------

VIEWS = {
    "{}.T": lambda v: v.T,
    "np.swapaxes({}, 0, -1)": lambda v: np.swapaxes(v, 0, -1),
    "np.moveaxis({}, 0, -1)": lambda v: np.moveaxis(v, 0, -1),
    "{}[::-1]": lambda v: v[::-1],
    "{}[1:]": lambda v: v[1:],
    "{}[::2]": lambda v: v[::2],
    "{}[:, None]": lambda v: v[:, None],
    "np.expand_dims({}, 0)": lambda v: np.expand_dims(v, 0),
    "np.squeeze({})": np.squeeze,
    "{}.ravel()": lambda v: v.ravel(),
    "{}.reshape(-1)": lambda v: v.reshape(-1),
}


@st.composite
def view_writes(draw):
    """(spelling, shape, layout, chain of views, index, how the value is made, augmented)."""
    shape = draw(st.tuples(st.integers(1, 4), st.integers(2, 5)))
    layout = draw(st.sampled_from(["C", "F", "T", "steps"]))
    probe = np.zeros(shape)
    chain, spelled = [], "a"
    for _ in range(draw(st.integers(1, 3))):
        if probe.ndim == 0:
            break
        name = draw(st.sampled_from(sorted(VIEWS)))
        probe = VIEWS[name](probe)
        chain.append(VIEWS[name])
        spelled = name.format(spelled)
        if draw(st.booleans()) and probe.size % 2 == 0 and probe.size > 2:  # a reshape that splits
            new = (2, probe.size // 2)
            probe = probe.reshape(new)
            chain.append(lambda v, new=new: v.reshape(new))
            spelled = f"{spelled}.reshape{new}"
    index = []
    for n in probe.shape:
        kind = draw(st.sampled_from(["all", "int", "slice"])) if n else "all"
        if kind == "int":
            index.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            index.append(slice(draw(st.integers(-n, n)), draw(st.integers(-n, n)), draw(st.sampled_from([1, 2, -1]))))
        else:
            index.append(slice(None))
    index = tuple(index)
    value = draw(st.sampled_from(["const", "arg", "own", "flipped"]))
    augmented = draw(st.booleans())
    return spelled, shape, layout, chain, index, value, augmented


def a_size(shape) -> int:
    return int(np.prod(shape))


@settings(max_examples=20, deadline=None)
@given(view_writes())
def test_random_writes_through_view_chains_match_numpy(case):
    spelled, shape, layout, chain, index, value_kind, augmented = case
    region = np.zeros(shape)
    for view in chain:
        region = view(region)
    region = np.asarray(region[index])

    def f(a, b):
        t = a
        for view in chain:
            t = view(t)
        if value_kind == "const":
            value = 1.5
        elif value_kind == "arg":
            value = b
        elif value_kind == "own":  # the points written, read through the same views
            value = t[index] * 2.0
        elif region.ndim:  # the array read at other points: NumPy computes it first
            value = t[index][::-1] + a.sum()
        else:
            value = a.sum()
        if augmented:
            t[index] += value
        else:
            t[index] = value
        return a, t

    note = f"{spelled}[{index}] {'+=' if augmented else '='} {value_kind}"
    try:
        check_in_place(f, arg(*shape, layout=layout), lambda: rand(*region.shape, seed=3), reduced=a_size(shape))
    except AssertionError as err:
        raise AssertionError(f"{note} on a {layout} array of shape {shape}: {err}") from None


@settings(max_examples=10, deadline=None)
@given(st.data())
def test_random_concatenations_match_numpy(data):
    ndim = data.draw(st.integers(1, 3), label="ndim")
    shape = data.draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim), label="shape")
    axis = data.draw(st.integers(-ndim, ndim - 1), label="axis")
    sizes = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=4), label="sizes along the axis")
    pieces = []
    for k, size in enumerate(sizes):
        piece = list(shape)
        piece[axis] = size
        pieces.append(rand(*piece, seed=k))
    stack = data.draw(st.booleans(), label="stack") and len(set(sizes)) == 1
    reduce_axis = data.draw(st.sampled_from([None, *range(ndim)]), label="sum over")

    def f(*xs):
        scaled = [x * (k + 1) for k, x in enumerate(xs)]
        joined = np.stack(scaled, axis=axis) if stack else np.concatenate(scaled, axis=axis)
        out = np.sqrt(np.abs(joined)) - 1.0
        return out, out.sum(axis=reduce_axis)

    check_in_place(f, *[lambda p=p: p.copy() for p in pieces], reduced=int(np.prod(shape)) * 12)


def test_new_arrays_are_laid_out_as_numpy_lays_them_out():
    """A copy is C-contiguous, astype and *_like follow their operand's layout: whether a later
    reshape is a view (written through) or a copy (not) follows."""
    def f(x, xf):
        a = x[:, :3].astype(np.float32)  # C-ordered operand: C-contiguous
        a.reshape(-1)[::2] = 7.0
        b = (xf * 2.0).copy()  # C
        b.reshape(-1)[1] = 8.0
        c = x[:, 0].ravel()  # a contiguous copy of a strided column
        c.ravel()[1:] = 9.0
        d = x[:, ::2].flatten()
        d.reshape(2, -1)[1] = 3.0
        e = np.zeros_like(x)
        e.ravel()[::5] = 1.0
        return a, b, c, d, e

    check_in_place(f, arg(4, 6), arg(4, 6, layout="F"), kernels=None)


def test_writing_through_a_reshape_of_an_array_numpy_lays_out_in_its_operands_order_is_refused():
    def f(x):
        y = x * 2.0  # NumPy: Fortran-ordered like x, so y.reshape(-1) is a copy
        y.reshape(-1)[0] = 5.0
        return y

    with pytest.raises(numfuse.UnsupportedError, match="memory layout numfuse does not trace"):
        numfuse.jit(f)(arg(4, 6, layout="F")())
    check_in_place(f, arg(4, 6), kernels=2)  # C-ordered: a view, as numfuse knows


@pytest.mark.parametrize("layout", ["C", "F", "steps"])
def test_an_array_written_with_itself_at_other_points_reads_its_old_values(layout):
    def f(x, y):
        x[::-1] = x  # NumPy: the right side first (a temporary where they overlap)
        y[:, ::-1] = y
        y.T[...] = y  # square: written with its own transpose
        return x, y

    check_in_place(f, arg(7, layout=layout if layout != "F" else "C"), arg(5, 5, layout=layout), kernels=None)


def _sign_flip(z):
    bits = z.view(np.uint32)
    bits ^= 0x80000000
    return z


def _bits_written(Z):
    # numpy-100 #53: a float32 array converted into an int32 one in place
    Y = Z.view(np.int32)
    Y[:] = Z
    return Y


def _inverse_sqrt(x):
    # the fast inverse square root's bit trick, float32
    i = x.view(np.int32)
    i = 0x5f3759df - (i >> 1)
    y = i.view(np.float32)
    return y * (1.5 - 0.5 * x * y * y)


def _exponent_and_view(x):
    v = x.view(np.int64)
    x *= 2
    v[0] = 0  # into x, after its doubling
    return (x.view(np.int64) >> 52) & 0x7FF, x.view(np.uint64) + 1, v


@pytest.mark.parametrize("fn, x", [
    (_sign_flip, np.array([1.5, -2.0, 0.0, np.nan], np.float32)),
    (_bits_written, np.arange(4, dtype=np.float32) * 10.7),
    (_inverse_sqrt, np.array([1.0, 4.0, 0.25, 1e-30], np.float32)),
    (_exponent_and_view, np.array([1.0, 3.5, -0.0, 1e300])),
])
def test_a_view_as_another_dtype_of_its_size_reads_and_writes_the_bits_as_numpys(fn, x):
    # (writes through it raised NumPy's read-only ValueError: the view ran at a graph break)
    mine, theirs = x.copy(), x.copy()
    got, expected = numfuse.jit(fn, numpy_fallback=False)(mine), fn(theirs)
    for g, e in zip(got if isinstance(got, tuple) else (got,), expected if isinstance(expected, tuple) else (expected,)):
        assert g.dtype == e.dtype
        np.testing.assert_array_equal(g.view(np.uint8), e.view(np.uint8))
    np.testing.assert_array_equal(mine.view(np.uint8), theirs.view(np.uint8))


def test_a_returned_view_as_another_dtype_is_a_view_of_the_callers_array():
    x = np.array([1.5, 2.5])
    got = numfuse.jit(lambda x: x[::-1].view(np.uint64))(x)
    assert np.shares_memory(got, x)
    np.testing.assert_array_equal(got, x[::-1].view(np.uint64))
