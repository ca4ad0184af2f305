"""`x.strides` and `x.flags` of traced arrays (numfuse/frontend/array_flags.py): NumPy's
answers where the trace knows them, a clear refusal where numfuse would have to guess, and the
public programs that use them."""

import numpy as np
import pytest
from numpy.lib import stride_tricks

import numfuse
from numfuse import UnsupportedError


def jit(fn):
    return numfuse.jit(fn, numpy_fallback=False)


# rougier/numpy-100 (MIT), exercise 84: "Extract all the contiguous 3x3 blocks from a random
# 10x10 matrix", its answer with Z an argument, summed so that the blocks are compared.
def blocks_3x3(Z):
    n = 3
    i = 1 + (Z.shape[0] - 3)
    j = 1 + (Z.shape[1] - 3)
    C = stride_tricks.as_strided(Z, shape=(i, j, n, n), strides=Z.strides + Z.strides)
    return C.sum(axis=(2, 3)), C[2, 3].copy()


# scipy-cookbook's GameOfLifeStrides (BSD): grid_nD, the 3**n neighbourhoods of every interior
# point as a strided view; the count of live neighbours from it.
def grid_nD(arr):
    assert all(_len > 2 for _len in arr.shape)
    nDims = len(arr.shape)
    newShape = [_len - 2 for _len in arr.shape]
    newShape.extend([3] * nDims)
    newStrides = arr.strides + arr.strides
    return stride_tricks.as_strided(arr, shape=newShape, strides=newStrides)


def live_neighbours(board):
    return grid_nD(board).sum(axis=(2, 3)) - board[1:-1, 1:-1]


@pytest.mark.parametrize("fn, make", [
    (blocks_3x3, lambda rng: rng.integers(0, 5, (10, 10))),
    (live_neighbours, lambda rng: (rng.random((9, 11)) > 0.6).astype(np.int64)),
    (live_neighbours, lambda rng: np.asfortranarray(rng.random((7, 8)))),
])
def test_strided_windows_of_an_argument_as_public_code_writes_them(fn, make):
    arg = make(np.random.default_rng(5))
    expected = fn(arg)
    got = jit(fn)(arg)
    for g, e in zip(got if isinstance(got, tuple) else (got,), expected if isinstance(expected, tuple) else (expected,)):
        np.testing.assert_array_equal(g, e)


def layouts(x, y):
    t = x.T
    s = x[::2, 1:]
    answers = [x.strides, y.strides]
    for a in (x, y, t, s, s.T, x[:, ::-2], y[1:, None], np.broadcast_to(x[0], (3,) + x.shape[1:])):
        f = a.flags
        answers.append((f.c_contiguous, f["F_CONTIGUOUS"], f["C"], f.forc, f.fnc, f.writeable, f["W"], f.aligned,
                        f.behaved, f.carray, f.farray, f.writebackifcopy))
    made, computed = np.zeros((3, 5), np.float32), x + 1.0
    answers.append((t.flags.owndata, s.flags["OWNDATA"], made.flags.writeable, computed.flags["W"],
                    x.sum().flags.writeable, x.sum().flags.owndata, x.flags == x.flags))
    return answers


def test_strides_and_flags_are_numpys():
    x = np.arange(24.0).reshape(4, 6)
    y = np.asfortranarray(np.arange(12, dtype=np.int32).reshape(3, 4))
    assert jit(layouts)(x, y) == layouts(x, y)
    strided = np.arange(60.0).reshape(6, 10)[::2, ::3]  # an argument neither C nor F ordered
    assert jit(layouts)(strided, y[:, ::-1]) == layouts(strided, y[:, ::-1])


def made_read_only(x):
    Z = x * 2.0
    Z.flags.writeable = False  # numpy-100, exercise 43: "Make an array immutable (read-only)"
    return Z, Z[1:]


def test_views_made_before_the_flag_stay_writeable():
    expected = view_before_the_flag(np.arange(4.0))
    got = jit(view_before_the_flag)(np.arange(4.0))
    assert got[:2] == expected[:2] == (True, False)
    np.testing.assert_array_equal(got[2], expected[2])
    assert got[2].flags.writeable is expected[2].flags.writeable is False


def written_after(x):
    Z = np.zeros(10)
    Z.flags["W"] = False
    Z[0] = x.sum()


def test_an_array_made_read_only_is_read_only():
    got = jit(made_read_only)(np.ones(4))
    expected = made_read_only(np.ones(4))
    assert [a.flags.writeable for a in got] == [a.flags.writeable for a in expected] == [False, False]
    with pytest.raises(ValueError, match="assignment destination is read-only") as numpy_error:
        written_after(np.ones(3))
    with pytest.raises(ValueError, match=str(numpy_error.value)) as err:
        jit(written_after)(np.ones(3))
    assert "test_array_flags.py" in str(err.value) and "Z[0] = x.sum()" in str(err.value)


@pytest.mark.parametrize("fn, arg, refusal", [
    (lambda x: (x.T * 2.0).strides, np.ones((3, 4)), "x.strides of an array the function computed"),
    (lambda x: np.zeros((3, 4), order="F").flags.f_contiguous, np.ones(4), "contiguity of an array the function"),
    (lambda x: x.T.strides, np.ones((3, 4)), "x.strides of a view"),
    (lambda x: (x + 1).strides, np.ones((1, 4)), "x.strides of an array the function computed"),
    (lambda x: x.flags.owndata, np.ones(4), "x.flags.owndata of an array that is not a view"),
    (lambda x: setattr(x.flags, "writeable", False), np.ones(4), "x.flags.writeable = False of an argument"),
    (lambda x: setattr(x[1:].flags, "writeable", False), np.ones(4), "x.flags.writeable = False of an argument"),
    (lambda x: setattr((x + 1).flags, "aligned", False), np.ones(4), "setting x.flags.aligned"),
])
def test_what_numfuse_would_have_to_guess_is_refused_with_its_reason(fn, arg, refusal):
    with pytest.raises(UnsupportedError, match=refusal.replace(".", r"\.")):
        jit(fn)(arg)


def test_an_arguments_strides_along_axes_of_length_one_are_the_callers():
    # What made the array decides them (np.ones((1, 4)) has 32 there, x[None] 0): an im2col
    # through as_strided(x, ..., x.strides) of a batch of one was refused.
    def window_sums(x):
        s = x.strides
        n, h, c = x.shape
        return x.strides, stride_tricks.as_strided(x, (n, h - 1, 2, c), (s[0], s[1], s[1], s[2])).sum(axis=(2, 3))

    jitted = jit(window_sums)
    base = np.arange(12.0).reshape(4, 3)
    for x in (base[None].copy(), base[None], np.asfortranarray(base[None]), np.arange(4.0).reshape(1, 4, 1)):
        (got_strides, got), (want_strides, want) = jitted(x), window_sums(x)
        assert got_strides == want_strides
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fn, error", [
    (lambda x: setattr(x.flags, "c_contiguous", False), AttributeError),
    (lambda x: setattr(x.sum().flags, "writeable", False), ValueError),
    (lambda x: x.flags["c"], KeyError),
])
def test_numpys_own_errors(fn, error):
    with pytest.raises(error) as numpy_error:
        fn(np.ones(4))
    with pytest.raises(error, match=str(numpy_error.value).strip("'")):
        jit(fn)(np.ones(4))


def view_before_the_flag(x):
    Z = x * 2.0
    v = Z[1:]  # made before: stays writeable, as NumPy's
    Z.flags.writeable = False
    w = Z[:2]  # made after: read-only
    v[0] = 5.0
    return v.flags.writeable, w.flags.writeable, Z


def strides_after_a_break(x):
    y = x * 2.0
    if y.sum() > 0:  # a graph break: y lives on in numfuse's buffer
        return y.strides
    return None


def test_strides_of_a_value_carried_across_a_graph_break_are_refused():
    with pytest.raises(UnsupportedError, match="x.strides of an array the function computed"):
        jit(strides_after_a_break)(np.ones((3, 4)))
    assert jit(lambda x: x.strides if x.sum() > 0 else None)(np.ones((3, 4))) == (32, 8)  # an argument's


def windows(x):
    return np.lib.stride_tricks.sliding_window_view(x, 4, writeable=True)


def test_a_window_view_asked_writeable_comes_back_with_numpys_values_read_only():
    # (numpy-ml's dsp.to_frames(..., writeable=True) crashed numfuse where the view could not
    # be made writeable again at the end of the run)
    got = jit(windows)(np.arange(10.0))
    np.testing.assert_array_equal(got, windows(np.arange(10.0)))
    assert not got.flags.writeable
