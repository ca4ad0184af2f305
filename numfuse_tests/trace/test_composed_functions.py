"""NumPy functions numfuse composes from operations it traces (numpy_shapes.py, numpy_numerics.py):
at trace time, NumPy's dtypes, shapes and kinds of results, NumPy's errors, and fusion (each is
part of one kernel with its producers and consumers)."""

import warnings

import numpy as np
import pytest

import numfuse

F32 = np.zeros((4, 6), np.float32)
F64 = np.zeros((4, 6), np.float64)
I32 = np.zeros((4, 6), np.int32)
I8 = np.zeros((4, 6), np.int8)
U8 = np.zeros((4, 6), np.uint8)
B = np.zeros((4, 6), bool)
C64 = np.zeros((4, 6), np.complex64)
V = np.zeros(7, np.float32)
X3 = np.zeros((2, 3, 4), np.float32)


def _leaves(value, out):
    if isinstance(value, (list, tuple)):
        for v in value:
            _leaves(v, out)
    else:
        out.append(value)
    return out


def assert_avals_like_numpy(fn, *args):
    """The traced outputs have NumPy's shapes, dtypes and kinds (array or NumPy scalar)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        expected = _leaves(fn(*args), [])
        traced = numfuse.jit(fn).trace(*args)
    outputs = traced.graph.outputs
    assert len(outputs) == len(expected)
    for i, (var, kind, e) in enumerate(zip(outputs, traced.leaf_kinds, expected)):
        # NumPy's Python bools (np.allclose, np.array_equal) are traced as Python bools.
        e_kind = "python" if isinstance(e, bool) else "numpy_scalar" if isinstance(e, np.generic) else "array"
        assert (var.aval.shape, var.aval.dtype, kind) == (np.shape(e), np.asarray(e).dtype, e_kind), (i, var.aval, kind, e)


def assert_raises_like_numpy(fn, *args):
    """numfuse raises NumPy's error: its type, and NumPy's message first."""
    with pytest.raises(Exception) as numpy_error:
        fn(*args)
    with pytest.raises(type(numpy_error.value)) as mine:
        numfuse.jit(fn).graph(*args)
    assert str(mine.value).startswith(str(numpy_error.value)), (str(mine.value), str(numpy_error.value))


def kernels(fn, *args) -> int:
    return len(numfuse.jit(fn).plan(*args).kernels)


# -- dtypes, shapes, kinds -----------------------------------------------------------------------


@pytest.mark.parametrize("x", [F32, F64, I32, I8, U8, B], ids=lambda x: str(x.dtype))
def test_shape_functions_keep_numpys_dtypes_and_shapes(x):
    def f(x):
        return (np.flip(x), np.fliplr(x), np.flipud(x[0]), np.rot90(x), np.roll(x, 5), np.roll(x, (1, 2), (0, 1)),
                np.copy(x), np.hstack([x, x]), np.vstack([x[0], x]), np.dstack([x]), np.column_stack([x[0], x[1]]),
                np.split(x, 2), np.array_split(x, 4, 1), np.hsplit(x, 3), np.vsplit(x, [1]), np.tile(x, (2, 1, 3)),
                np.repeat(x, 3), np.repeat(x, [1, 2, 0, 1], 0), np.pad(x, 2), np.pad(x, 3, "reflect"),
                np.pad(x, 1, "wrap"), np.flip(x[0, 0]), np.roll(x[0, 0], 1), np.diagonal(x), np.diag(x[0]))

    assert_avals_like_numpy(f, x)


@pytest.mark.parametrize("x", [F32, F64, I32, I8, U8], ids=lambda x: str(x.dtype))
def test_numerical_functions_keep_numpys_dtypes_and_shapes(x):
    def f(x, s):
        return (np.outer(x[0], x[1]), np.add.outer(x[0], x[:2]), np.kron(x, x[:2]), np.kron(x[0, 0], 2),
                np.cross(x[:, :3], x[:, 3:]), np.diff(x), np.diff(x, 2, 0, prepend=0), np.gradient(x),
                np.gradient(x[0], 0.5, edge_order=2), np.trapezoid(x), np.trapezoid(x[0]), np.convolve(x[0], x[1, :3]),
                np.correlate(x[0], x[1, :2], "same"), np.isclose(x, 1), np.isclose(x[0, 0], s), np.allclose(x, x),
                np.array_equal(x, x), np.fix(x), np.sinc(x), np.angle(x), np.angle(x[0, 0], True), np.float_power(x, 2),
                np.float_power(s, x), np.trace(x), np.clip(x), np.multiply.outer(s, x[0]))

    assert_avals_like_numpy(f, x, 1.5)


def test_bool_and_complex_numerics():
    assert_avals_like_numpy(lambda b: (np.diff(b), np.outer(b[0], b[1]), np.kron(b, b[:1]), np.convolve(b[0], b[1, :2]),
                                       np.trace(b), np.isclose(b, b), np.angle(b)), B)
    assert_avals_like_numpy(lambda z: (np.angle(z), np.angle(z, deg=True), np.correlate(z[0], z[1, :3]),
                                       np.diff(z), np.outer(z[0], z[1])), C64)


def test_scalars_follow_numpy():
    # np.copy of a scalar is a 0-d array; ufunc.outer and float_power of scalars give NumPy scalars.
    assert_avals_like_numpy(lambda s, t: (np.copy(s), np.add.outer(s, t), np.float_power(s, t), np.fix(s), np.sinc(t),
                                          np.isclose(s, t), np.kron(s, t), np.clip(s)), 1.5, np.float32(2))


# -- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize("fn, x", [
    (lambda x: np.flip(x, 2), F32),
    (lambda x: np.fliplr(x[0]), F32),
    (lambda x: np.flipud(x[0, 0]), F32),
    (lambda x: np.rot90(x, 1, (0, 0)), F32),
    (lambda x: np.rot90(x, 1, (0, 1, 2)), F32),
    (lambda x: np.roll(x, 1, 3), F32),
    (lambda x: np.roll(x, [[1]], 0), F32),
    (lambda x: np.split(x, 5), F32),
    (lambda x: np.array_split(x, 0), F32),
    (lambda x: np.split(x, 2, axis=2), F32),
    (lambda x: np.hsplit(x[0, 0], 2), F32),
    (lambda x: np.vsplit(x[0], 2), F32),
    (lambda x: np.tile(x, -1), F32),
    (lambda x: np.repeat(x, -1), F32),
    (lambda x: np.repeat(x, [1, 2], axis=0), F32),
    (lambda x: np.repeat(x, 2, axis=2), F32),
    (lambda x: np.pad(x, -1), F32),
    (lambda x: np.pad(x, 1, "nonsense"), F32),
    (lambda x: np.pad(x, 1, "edge", constant_values=3), F32),
    (lambda x: np.pad(x[:0], 1, "reflect"), F32),
    (lambda x: np.pad(x, 1.5), F32),
    (lambda x: np.vstack([x, x[:, :2]]), F32),
    (lambda x: np.cross(x, x), F32),
    (lambda x: np.cross(x[0, 0], x[0, :3]), F32),
    (lambda x: np.cross(x[:, :3], x[:, :3], axisc=2), F32),
    (lambda x: np.diff(x, -1), F32),
    (lambda x: np.diff(x[0, 0]), F32),
    (lambda x: np.diff(x, axis=2), F32),
    (lambda x: np.gradient(x[:1], axis=0), F32),
    (lambda x: np.gradient(x, edge_order=3), F32),
    (lambda x: np.gradient(x, 1.0, 2.0, 3.0), F32),
    (lambda x: np.gradient(x[:2], axis=0, edge_order=2), F32),
    (lambda x: np.convolve(x[0, :0], x[0]), F32),
    (lambda x: np.convolve(x, x[0]), F32),
    (lambda x: np.correlate(x[0], x[1], "middle"), F32),
    (lambda x: np.correlate(x[0], x[1], 5), F32),
    (lambda x: np.diag(x[None]), F32),
    (lambda x: np.diagonal(x[0]), F32),
    (lambda x: np.diagonal(x, 0, 1, 1), F32),
    (lambda x: np.trace(x[0]), F32),
    (lambda x: np.sin.outer(x, x), F32),
    (lambda x: np.add.outer(x, x, x), F32),
    (lambda x: np.clip(x), B),
])
def test_errors_are_numpys(fn, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert_raises_like_numpy(fn, x)


def test_cross_of_2_vectors_warns_as_numpy():
    with pytest.warns(DeprecationWarning, match="2-dimensional vectors are deprecated"):
        numfuse.jit(lambda x: np.cross(x[:, :2], x[:, 2:4])).graph(F32)


def test_diagonal_is_a_read_only_view():
    def f(x):
        np.diagonal(x)[0] = 1

    with pytest.raises(ValueError):
        f(F32.copy())
    with pytest.raises(ValueError, match="read-only"):
        numfuse.jit(f).graph(F32)


@pytest.mark.parametrize("fn, x, match", [
    (lambda x: np.convolve(x, x), np.zeros(65, np.float32), "at most 64"),
    (lambda x: np.pad(x, 1, "mean"), F32, "mode='mean'"),
    (lambda x: np.pad(x, 1, "reflect", reflect_type="odd"), F32, "odd"),
    (lambda x: np.pad(x[:1], 200, "reflect"), F32, "at most 64"),
    (lambda x: np.gradient(x[0], np.arange(6.0)), F32, "coordinate arrays"),
    (lambda x: np.copy(x, order="F"), F32, "order='F'"),
])
def test_unsupported_compositions_say_why(fn, x, match):
    with pytest.raises(numfuse.UnsupportedError, match=match):
        numfuse.jit(fn, graph_breaks=False).graph(x)


# -- fusion --------------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [
    lambda x: np.flip(x) + 1,
    lambda x: np.roll(x, (1, -2), (0, 1)) * 2,
    lambda x: np.rot90(x) - 1,
    lambda x: np.hstack([x, x]) + 1,
    lambda x: np.pad(x, 2, "reflect") + 1,
    lambda x: np.pad(x, 1) * 3,
    lambda x: np.tile(x, (2, 3)) + 1,
    lambda x: np.repeat(x, 3, axis=1) + 1,
    lambda x: np.diff(x, 2) ** 2,
    lambda x: np.gradient(x, axis=0, edge_order=2) + 1,
    lambda x: np.isclose(x, 2 * x),
    lambda x: np.outer(x[0], x[1]) + 1,
    lambda x: np.kron(x[:2, :2], x) + 1,
    lambda x: np.convolve(x[0], x[1, :3], "same") + 1,
    lambda x: np.diag(x[0]) + 1,
    lambda x: np.sinc(x) + np.angle(x) + np.fix(x),
])
def test_compositions_fuse_into_one_kernel(fn):
    assert kernels(fn, F32) == 1


def test_convolution_is_a_sum_of_shifted_slices():
    from numfuse.ir import format_graph

    text = format_graph(numfuse.jit(lambda a, v: np.convolve(a, v, "valid")).graph(V, V[:3]), with_locs=False)
    assert text.count("slice[") >= 3 and "concatenate" not in text, text  # valid: no padding needed
