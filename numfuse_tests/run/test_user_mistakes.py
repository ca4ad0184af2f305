"""What a NumPy user may do that numfuse must take as NumPy does, or refuse clearly: views
returned, subclasses, buffers, bad indices and options, composition, threads."""

import functools
import re
import threading

import numpy as np
import pytest

import numfuse
from numfuse_tests.helpers import assert_same


# -- views returned ----------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda x: x[1:], lambda x: x.T, lambda x: x[:, ::-1], lambda x: x[1], lambda x: x.reshape(3, 4),
    lambda x: x.ravel(), lambda x: np.swapaxes(x, 0, 1)[::2], lambda x: np.broadcast_to(x, (2, 4, 3)),
])
def test_a_view_of_an_argument_is_returned_as_a_view_of_the_callers_array(fn):
    x = np.arange(12.0).reshape(4, 3)
    got, expected = numfuse.jit(fn)(x), fn(x)
    assert np.shares_memory(got, x)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    assert got.flags.writeable == expected.flags.writeable
    if got.flags.writeable:  # writes reach x, as through NumPy's view
        got[...] = -1.0
        assert (x == -1.0).any()


G = np.arange(6.0)


def _break_then_view(x):
    v = x[1:].T
    if x[0, 0] > -1.0:  # a graph break
        x[0, 0] = 5.0
    return v, x[::2, 1]


@pytest.mark.parametrize("fn", [
    lambda x: x[0, ...], lambda x: x[..., 1][2, ...], lambda x: G, lambda x: G[1:], lambda x: (G[::2], x + G[:3]),
    _break_then_view,
], ids=["zero-d", "zero-d-of-view", "global", "global-view", "global-view-and-sum", "after-a-break"])
def test_zero_d_views_views_of_globals_and_views_after_a_break_are_views_as_in_numpy(fn):
    x, e = np.arange(12.0).reshape(4, 3), np.arange(12.0).reshape(4, 3)
    got, expected = numfuse.jit(fn)(x), fn(e)
    got, expected = (got, expected) if isinstance(got, tuple) else ((got,), (expected,))
    for g, w in zip(got, expected):
        assert type(g) is type(w)
        np.testing.assert_array_equal(g, w)
        assert np.shares_memory(g, x) == np.shares_memory(w, e)
        assert np.shares_memory(g, G) == np.shares_memory(w, G)
    np.testing.assert_array_equal(x, e)


@pytest.mark.parametrize("fn", [lambda x: x.flatten(), lambda x: x.copy(), lambda x: x[1:] + 0,
                                lambda x: np.array(x)])
def test_a_copy_is_returned_as_a_new_array(fn):
    x = np.arange(12.0).reshape(4, 3)
    got = numfuse.jit(fn)(x)
    assert not np.shares_memory(got, x)
    np.testing.assert_array_equal(got, fn(x))


def test_a_view_after_a_write_shows_the_written_values():
    def f(x):
        x += 1
        return x[::2]

    x, e = np.arange(6.0), np.arange(6.0)
    got = numfuse.jit(f)(x)
    np.testing.assert_array_equal(got, f(e))
    assert np.shares_memory(got, x)


def test_a_view_of_another_result_is_a_view_of_it():
    def f(x):
        y = x + 1
        y[0] = -1.0
        return y, y[1:].T, y[::2]

    x = np.arange(6.0).reshape(3, 2)
    got, expected = numfuse.jit(f)(x), f(x)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
    assert np.shares_memory(got[0], got[1]) and np.shares_memory(got[0], got[2])
    got[0][...] = 7.0
    assert (got[1] == 7.0).all() and (got[2] == 7.0).all()


class Tagged(np.ndarray):
    pass


def test_results_keep_a_plain_subclass_of_the_arguments():
    x = np.arange(4.0).view(Tagged)
    assert type(numfuse.jit(lambda a: a * 2 + 1)(x)) is Tagged
    assert type(numfuse.jit(lambda a: a[1:])(x)) is Tagged


def _mixed(tagged, plain):
    return tagged + 1, plain * 2, np.zeros((2, 3)), tagged.sum(axis=0), plain + tagged


def test_only_results_computed_from_a_subclass_argument_are_of_its_class():
    tagged, plain = np.arange(6.0).reshape(2, 3).view(Tagged), np.arange(6.0).reshape(2, 3)
    expected = _mixed(tagged, plain)
    got = numfuse.jit(_mixed)(tagged, plain)
    assert [type(g) for g in got] == [type(e) for e in expected]
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


class WithUfuncs(np.ndarray):
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return NotImplemented


def test_a_subclass_with_its_own_array_ufunc_is_refused():
    with pytest.raises(numfuse.UnsupportedError, match="its own __array_ufunc__"):
        numfuse.jit(lambda a: a + 1)(np.zeros(3).view(WithUfuncs))


# -- arguments that are not arrays --------------------------------------------------------------

def test_buffers_are_read_as_numpy_reads_them():
    f = numfuse.jit(lambda a: np.sqrt(a) + 1)
    data = np.arange(4.0)
    np.testing.assert_array_equal(f(memoryview(data)), np.sqrt(np.asarray(memoryview(data))) + 1)
    np.testing.assert_array_equal(f(bytearray(b"\x01\x04")), np.sqrt(np.asarray(bytearray(b"\x01\x04"))) + 1)


def test_writes_into_a_memoryview_reach_its_buffer():
    def f(a):
        a *= 2

    data = np.arange(4.0)
    numfuse.jit(f)(memoryview(data))
    np.testing.assert_array_equal(data, np.arange(4.0) * 2)


def test_a_float_index_raises_numpys_index_error():
    with pytest.raises(IndexError, match="only integers, slices"):
        numfuse.jit(lambda a: a[1.5])(np.arange(3.0))
    with pytest.raises(TypeError, match="slice indices must be integers"):
        numfuse.jit(lambda a: a[1.5:])(np.arange(3.0))


def test_bad_jit_options_are_errors_at_jit_time():
    def f(x, n):
        return x * n

    with pytest.raises(ValueError, match="has no parameter 'm'"):
        numfuse.jit(f, static_argnames=("m",))
    with pytest.raises(ValueError, match="5 is out of range"):
        numfuse.jit(f, static_argnums=5)
    with pytest.raises(TypeError, match="expects a function, got NoneType"):
        numfuse.jit(None)
    with pytest.raises(TypeError, match="expects a function"):
        numfuse.jit(3)


def test_a_missing_argument_names_the_function():
    def add(x, y):
        return x + y

    with pytest.raises(TypeError, match=r"add\(\): missing a required argument: 'y'"):
        numfuse.jit(add)(np.ones(2))


# -- composition ---------------------------------------------------------------------------------

def test_jit_of_a_jitted_function_is_that_function():
    f = numfuse.jit(lambda x: x + 1)
    assert numfuse.jit(f) is f


class Model:
    scale = 3.0

    @numfuse.jit
    def method(self, x):
        return x * 2

    @staticmethod
    @numfuse.jit
    def below(x):
        return x + 1

    @numfuse.jit
    @staticmethod
    def above(x):
        return x + 2

    @classmethod
    @numfuse.jit
    def klass(cls, x):
        return x * cls.scale


def test_methods_staticmethods_classmethods_and_partials():
    x = np.arange(3.0)
    np.testing.assert_array_equal(Model().method(x), x * 2)
    np.testing.assert_array_equal(Model.below(x), x + 1)
    np.testing.assert_array_equal(Model.above(x), x + 2)
    np.testing.assert_array_equal(Model().above(x), x + 2)
    np.testing.assert_array_equal(Model.klass(x), x * 3.0)
    add = numfuse.jit(lambda a, b: a + b)
    np.testing.assert_array_equal(functools.partial(add, x)(x), x + x)


def test_a_jitted_function_called_inside_another_is_traced_inline():
    inner = numfuse.jit(lambda x: x * x)
    outer = numfuse.jit(lambda x: inner(x) + 1)
    x = np.arange(4.0)
    np.testing.assert_array_equal(outer(x), x * x + 1)
    assert "traced inline" in outer.explain(x)


# -- threads ---------------------------------------------------------------------------------------

def test_eight_threads_first_calls_included_several_signatures():
    f = numfuse.jit(lambda x, y: np.tanh(x * y).sum(axis=-1) + 1)
    errors = []

    def work(i):
        try:
            n = 3 + i % 3
            x = np.arange(n * 4, dtype=np.float64 if i % 2 else np.float32).reshape(4, n) / 7
            for _ in range(2):
                np.testing.assert_allclose(f(x, x), np.tanh(x * x).sum(axis=-1) + 1, rtol=1e-5)
        except BaseException as err:  # noqa: B902 (reported below)
            errors.append(err)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


# -- writes into global arrays ------------------------------------------------------------------

SINK = np.zeros(3)


def test_writes_into_global_arrays_are_numpys():
    def store(x):
        SINK[:] = x * 2

    def accumulate(x):
        global SINK
        SINK += x

    saved = SINK.copy()
    try:
        numfuse.jit(store)(np.arange(3.0))
        np.testing.assert_array_equal(SINK, np.arange(3.0) * 2)
        numfuse.jit(accumulate)(np.ones(3))
        np.testing.assert_array_equal(SINK, np.arange(3.0) * 2 + 1)
        numfuse.jit(accumulate)(np.ones(3))  # again: the global holds the last result
        np.testing.assert_array_equal(SINK, np.arange(3.0) * 2 + 2)
    finally:
        SINK[:] = saved


def test_a_ufunc_is_jitted_as_the_function_that_calls_it():
    # np.add's signature lists out, dtype and signature with defaults, which may not all be
    # passed: numfuse.jit(np.add) calls it with what it is given.
    x = np.arange(6.0).reshape(2, 3)
    add = numfuse.jit(np.add)
    np.testing.assert_array_equal(add(x, x), x + x)
    np.testing.assert_array_equal(add(x, 1.5), x + 1.5)
    assert add(x, x, dtype=np.float32).dtype == np.float32
    out = np.empty_like(x)
    assert add(x, x, out=out) is out
    np.testing.assert_array_equal(out, x + x)
    np.testing.assert_allclose(numfuse.jit(np.sin)(x), np.sin(x), rtol=1e-15)


# -- isinstance of scalar arguments ------------------------------------------------------------


def _pad(x, pad):
    # numpy-ml's pad2D: an int pad means the same on every side; a tuple is taken as given.
    if isinstance(pad, int):
        pad = (pad, pad)
    if isinstance(pad, tuple):
        padded = np.pad(x, ((pad[0], pad[1]),), mode="constant")
    return padded * 2.0


def _by_type(x, s):
    if isinstance(s, bool):
        return x * -1.0
    if isinstance(s, int):
        return x * s
    if isinstance(s, np.floating):
        return x - s
    if isinstance(s, float):
        return x + s
    return x


@pytest.mark.parametrize("s", [3, 2.5, True, np.float32(1.5), np.float64(0.25), np.int32(4)])
def test_isinstance_of_a_scalar_argument_is_numpys(s):
    x = np.arange(5.0)
    fn = numfuse.jit(_by_type)
    assert_same(fn(x, s), _by_type(x, s))
    assert_same(numfuse.jit(_pad)(x, 2), _pad(x, 2))
    assert_same(numfuse.jit(_pad)(x, (1, 3)), _pad(x, (1, 3)))


def _validated(x, s):
    # The checks of library code: an array argument is an ndarray, as its views and results.
    if not isinstance(x, np.ndarray):
        x = np.asarray(x, dtype=float)
    assert isinstance(x.T, np.ndarray) and isinstance(x * 2, np.ndarray)
    scale = x.sum()
    if isinstance(scale, np.ndarray):  # NumPy's sum is a scalar, not an array
        return x
    return x * s + (1.0 if np.isscalar(s) else 2.0)


def _type_of(x, s):
    # type(), which isinstance's __class__ cannot answer, in the function and a helper.
    if type(s) is float:
        x = x * s
    elif type(s) == np.float32:
        x = x - s
    if type(x) is not np.ndarray:
        return x
    return _helper_type_of(x), type(s).__name__


def _helper_type_of(v):
    return v + 1.0 if type(v) is np.ndarray and type(v.T) is np.ndarray else v


@pytest.mark.parametrize("s", [3, 2.5, np.float32(1.5)])
def test_isinstance_and_type_of_arrays_and_scalars_are_numpys(s):
    x = np.arange(5.0)
    assert_same(numfuse.jit(_validated)(x, s), _validated(x, s))
    got, expected = numfuse.jit(_type_of)(x, s), _type_of(x, s)
    assert_same(got[0], expected[0])
    assert got[1] == expected[1]
    # The module binds no `type` of its own once the trace is over.
    assert "type" not in globals()


def test_type_answers_as_numpys_at_graph_breaks_too():
    def fn(x):
        total = float(x.sum())  # a graph break: the rest runs segment by segment
        if type(x) is np.ndarray and type(total) is float:
            return x + total
        return x

    x = np.arange(4.0)
    assert_same(numfuse.jit(fn)(x), fn(x))
    assert "type" not in globals()


def _shrunk_covariance(cov, shrinkage):
    # scikit-learn's shrunk_covariance: the diagonal through .flat
    n = cov.shape[0]
    mu = np.trace(cov) / n
    shrunk = (1.0 - shrinkage) * cov
    shrunk.flat[:: n + 1] += shrinkage * mu
    return shrunk, shrunk.flat[::3], cov.flat[5], len(cov.flat)


def test_flat_reads_and_writes_in_c_order():
    cov = np.arange(16.0).reshape(4, 4)
    assert_same(numfuse.jit(_shrunk_covariance)(cov.copy(), 0.1), _shrunk_covariance(cov.copy(), 0.1))
    # of an array whose C-order ravel is a copy: reads (a radial profile's image.flat[ind] of a
    # Fortran-ordered image), and writes refused, which would not reach the array
    assert numfuse.jit(lambda x: x.T.flat[1])(cov) == cov.T.flat[1]
    image = np.asfortranarray(cov)
    index = np.array([0, 5, 7])
    assert_same(numfuse.jit(lambda x, i: x.flat[i].sum())(image, index), image.flat[index].sum())

    def write(x):
        x.T.flat[1] = 7.0
        return x

    with pytest.raises(numfuse.UnsupportedError, match="not C-contiguous"):
        numfuse.jit(write)(cov.copy())


def _to_spiral(A, order):
    # a Rosetta Code spiral matrix: B.flat[order] = A.flat, A.flat as an operand
    B = np.empty_like(A)
    B.flat[order] = A.flat
    return B, np.maximum(A.flat, 3) + np.ones(A.size)


def test_flat_as_a_value_and_an_operand_is_the_1d_array_of_its_points():
    # (an operand of type _Flat was refused)
    A = np.arange(12).reshape(3, 4)
    order = np.random.default_rng(0).permutation(12)
    assert_same(numfuse.jit(_to_spiral)(A, order), _to_spiral(A, order))


# -- found by a battery of misuse scripts (stop 31) ----------------------------------------------

def _both(fn, *args):
    """fn's result on copies of args with NumPy and with numfuse (plans only), and the copies."""
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    theirs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    return numfuse.jit(fn, numpy_fallback=False)(*mine), fn(*theirs), mine, theirs


def test_maximum_and_minimum_of_equal_values_give_the_second_as_numpy():
    # np.maximum(-0.0, 0.0) is 0.0 and np.maximum(0.0, -0.0) is -0.0: a ReLU of -0.0 is 0.0
    x = np.array([-0.0, 0.0, np.nan, 2.0])
    for fn in (lambda x: np.maximum(x, 0.0), lambda x: np.maximum(0.0, x), lambda x: np.minimum(x, -0.0),
               lambda x: np.minimum(-0.0, x), lambda x: np.maximum(x, x[::-1])):
        got, expected, _, _ = _both(fn, x)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8])
def test_the_minimum_int_floor_divided_by_minus_one_wraps_as_numpy(dtype):
    a = np.array([np.iinfo(dtype).min, -7, 7, 0], dtype)
    with np.errstate(all="ignore"):
        for fn in (lambda a: a // dtype(-1), lambda a: np.divmod(a, dtype(-1))[0], lambda a: a % dtype(-1)):
            got, expected, _, _ = _both(fn, a)
            np.testing.assert_array_equal(got, expected)


def test_numpys_errors_for_casts_and_sort_kinds_it_forbids():
    x = np.arange(3.0)
    for fn, error in ((lambda x: x.astype(np.int32, casting="safe"), TypeError),
                      (lambda x: x.astype(np.float32, casting="same_kind") + 1, None),
                      (lambda x: np.argsort(x, kind="bogus"), ValueError),
                      (lambda x: np.sort(x, kind="bogus"), ValueError)):
        if error is None:
            got, expected, _, _ = _both(fn, x)
            assert got.dtype == expected.dtype
            continue
        with pytest.raises(error):
            fn(x)
        with pytest.raises(error):
            numfuse.jit(fn, numpy_fallback=False)(x)


def test_repr_and_result_type_are_numpys():
    x32 = np.ones(2, np.float32)
    for fn, x in ((lambda x: repr(x), np.arange(2.0)), (lambda x: f"{x.sum()!r}", np.arange(2.0)),
                  (lambda x: np.result_type(x, 1.0), x32), (lambda x: np.result_type(x, 300), np.ones(2, np.uint8))):
        got, expected, _, _ = _both(fn, x)
        assert got == expected


def test_ndarray_methods_of_a_masked_selection_run_on_its_values():
    x = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0])
    for fn in (lambda x: x[x > 1].std(), lambda x: x[x > 1].argmax(), lambda x: x[x > 1].cumsum(),
               lambda x: x[x > 1].tolist(), lambda x: x[[True, False, True, False, True, False]],
               lambda x: x[[True, False, True, False, True, False]].sum()):
        got, expected, _, _ = _both(fn, x)
        np.testing.assert_array_equal(got, expected)


def test_a_bound_method_is_jitted_with_its_object():
    class Scale:
        def __init__(self):
            self.w = 2.0

        def apply(self, x):
            return x * self.w

    s = Scale()
    np.testing.assert_array_equal(numfuse.jit(s.apply)(np.ones(3)), np.full(3, 2.0))


def test_a_scalar_argument_scattered_into_an_array():
    def put(x, i, v):
        x[i] = v
        np.add.at(x, [0, 0], v)
        return x

    got, expected, _, _ = _both(put, np.arange(4.0), np.array([1, 2]), 1.5)
    np.testing.assert_array_equal(got, expected)


def test_an_einsum_nonsense_raises_numpys_error():
    with pytest.raises(ValueError, match="never appeared"):
        numfuse.jit(lambda x: np.einsum("ij->k", x))(np.ones((2, 2)))


def test_an_untraced_call_with_out_leaves_the_callers_array_writeable():
    def clip(x):
        np.clip(x, 0.0, 1.0, out=x)  # not traced: it runs at a graph break, on x itself

    x = np.arange(3.0) - 1.0
    numfuse.jit(clip, numpy_fallback=False)(x)
    np.testing.assert_array_equal(x, [0.0, 0.0, 1.0])
    assert x.flags.writeable
    x[0] = 5.0


def test_fill_and_view_write_into_the_array_as_numpy():
    def fill(x):
        x[1:].fill(7.0)
        v = x.view()
        v[0] = 9.0
        return x, x.view(np.int64)

    got, expected, mine, theirs = _both(fill, np.arange(3.0))
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
    np.testing.assert_array_equal(mine[0], theirs[0])


def test_inner_of_two_vectors_is_a_numpy_scalar():
    got, expected, _, _ = _both(lambda a: np.inner(a, a), np.arange(3.0))
    assert type(got) is type(expected) and got == expected


def test_python_arithmetic_on_python_number_arguments_raises_where_python_differs():
    # numfuse computes a Python int argument in int64 and a float in float64: where Python's
    # exact int or its ZeroDivisionError would differ, an error, never another number
    f = numfuse.jit(lambda x, k: x * (k * k), numpy_fallback=False)
    np.testing.assert_array_equal(f(np.ones(2), 2**20), np.ones(2) * 2**40)
    with pytest.raises(OverflowError, match="int64"):
        f(np.ones(2), 2**40)
    g = numfuse.jit(lambda s, t: (s + t, s - t, s * t), numpy_fallback=False)
    assert g(-2**62, 2) == (-2**62 + 2, -2**62 - 2, -2**63)
    for args in ((2**62, 2**62), (-2**62, -2**62 - 1), (-2**62, -2)):
        with pytest.raises(OverflowError):
            g(*args)
    for fn, args in ((lambda s, t: s / t, (1.0, 0.0)), (lambda s, t: s // t, (7, 0)), (lambda s, t: s % t, (7.0, 0.0)),
                     (lambda s: s / 0, (1.0,))):
        with pytest.raises(ZeroDivisionError):
            numfuse.jit(fn, numpy_fallback=False)(*args)
    assert numfuse.jit(lambda s, t: s % t, numpy_fallback=False)(7, 2) == 1


def scaled_by_a_power(x, b, t):
    return x * b ** t


@pytest.mark.parametrize("b, t", [(0.0, -1), (-0.0, -3), (10.0, 400), (2.0, 1024), (0.9, 4), (2.0, -2), (0.0, 0),
                                  (float("inf"), 2), (2, 62), (2, 63), (-2, 63), (3, 40), (-8, 21),
                                  (-8.0, 1 / 3), (-8.0, 2.0), (float("-inf"), 0.5), (-1.0, float("inf")),
                                  (-8.0, float("nan"))])
def test_a_power_of_python_numbers_is_pythons_or_raises_where_python_does(b, t):
    jf = numfuse.jit(scaled_by_a_power, numpy_fallback=False)
    x = np.ones(2)
    try:
        expected = scaled_by_a_power(x, b, t)
    except (ZeroDivisionError, OverflowError) as err:
        with pytest.raises(type(err)):
            jf(x, b, t)
        return
    if type(b) is int and not -2**63 <= b ** t < 2**63:  # NumPy computes x * (an exact int past int64) in float
        with pytest.raises(OverflowError, match="int64"):
            jf(x, b, t)
        return
    if expected.dtype.kind == "c":  # Python's (-8.0) ** (1/3) is complex; numfuse's float pow, NaN
        with pytest.raises(numfuse.UnsupportedError, match="complex number in Python"):
            jf(x, b, t)
        return
    np.testing.assert_array_equal(jf(x, b, t), expected)


def test_a_range_indexes_as_its_ints_and_none_compares_as_numpy():
    # found running public code: the SciPy Cookbook's Schrodinger FDTD (x[range(...)]) and a
    # k-means whose first comparison is `labels == None`
    def write(x):
        x[range(1, 3)] = 0.0
        return x

    x = np.arange(12.0).reshape(3, 4)
    for fn in (lambda x: x[range(1, 3)], lambda x: x[:, range(0, 4, 2)], write, lambda x: x == None,  # noqa: E711
               lambda x: x != None, lambda x: np.all(x == None)):  # noqa: E711
        got, expected, _, _ = _both(fn, x)
        np.testing.assert_array_equal(got, expected)


def test_found_in_public_code_flat_products_scalar_indices_and_masked_rows():
    # the SciPy Cookbook's laplace error (np.dot of x.flat: each point was a value of its own,
    # minutes to plan at 100 x 100), min-char-rnn's one-hot z[i] = 1 for an int argument i,
    # numpy-100's R[mask, :]
    def error(u, w):
        v = (u - w).flat
        return np.sqrt(np.dot(v, v))

    def one_hot(i):
        z = np.zeros(5)
        z[i] = 1
        return z

    u, w = np.random.default_rng(0).random((2, 100, 100))
    plan = numfuse.jit(error, numpy_fallback=False).plan(u, w)
    assert len(plan.kernels) <= 2
    for fn, args in ((error, (u, w)), (one_hot, (2,)), (lambda R: R[R[:, 0] > 3, :], (np.arange(12.0).reshape(4, 3),))):
        got, expected, _, _ = _both(fn, *args)
        np.testing.assert_allclose(got, expected, rtol=1e-13)


def test_asarray_of_a_scalar_is_a_new_zero_d_array():
    # np.asarray(x.sum(), dtype=...) was a NumPy scalar: NumPy makes a 0-d array of a scalar
    def cast(x):
        return np.asarray(x.sum(), dtype=np.float32), np.array(x.max()), np.asarray(x.min())

    def written(x, s):
        y = np.asarray(s)
        y += 1.0  # a new array: neither the scalar nor the argument changes
        t = x.sum()
        z = np.asarray(t)
        z *= 2.0
        return y, s, z, t

    x = np.arange(5.0)
    for fn, args in ((cast, (x,)), (written, (x, 2.5))):
        got, expected, _, _ = _both(fn, *args)
        assert [type(g) for g in got] == [type(e) for e in expected]
        for g, e in zip(got, expected):
            assert np.asarray(g).dtype == np.asarray(e).dtype
            np.testing.assert_array_equal(g, e)


# -- found by the second misuse battery ----------------------------------------------------------


def test_static_tuples_are_keyed_by_the_types_inside():
    # (2.5,) and (np.float64(2.5),) are equal in Python, not to NumPy's promotion
    scale = numfuse.jit(lambda x, t: x * t[0])
    x = np.ones(2, np.float32)
    assert scale(x, (2.5,)).dtype == np.float32
    assert scale(x, (np.float64(2.5),)).dtype == np.float64
    add = numfuse.jit(lambda x, t: x + np.array(t))
    assert add(np.zeros(2, np.int8), (1, 0)).dtype == np.int64
    assert add(np.zeros(2, np.int8), (True, False)).dtype == np.int8
    # a slice inside a tuple (unhashable before Python 3.12) is a static value too
    window = numfuse.jit(lambda x, t: x[t[0]] * t[1])
    x = np.arange(10.0)
    for t in ((slice(1, 5), 2.0), (slice(2, 8, 3), 3.0)):
        np.testing.assert_array_equal(window(x, t), x[t[0]] * t[1])


def _scaler():
    class Scaler:  # (a new class each time: the test changes its attribute)
        k = 3.0

        def __init__(self):
            self.s = 2.0

        def __call__(self, x):
            return x * self.s

        def method(self, x):
            return x * self.s

        @classmethod
        def by_class(cls, x):
            return x * cls.k

    return Scaler()


def test_a_bound_method_a_callable_object_and_a_classmethod_read_their_attributes_at_each_call():
    x = np.ones(2)
    for make, change in ((lambda o: o, lambda o: setattr(o, "s", 5.0)),
                         (lambda o: o.method, lambda o: setattr(o, "s", 7.0)),
                         (lambda o: type(o).by_class, lambda o: setattr(type(o), "k", 10.0))):
        obj = _scaler()
        jitted = numfuse.jit(make(obj))
        np.testing.assert_array_equal(jitted(x), make(obj)(x))
        change(obj)
        np.testing.assert_array_equal(jitted(x), make(obj)(x))


def test_errstate_set_inside_the_function_is_followed():
    def guarded(x):
        with np.errstate(divide="raise"):
            try:
                return x / 0
            except FloatingPointError:
                return np.zeros_like(x)

    def squared(x):
        with np.errstate(over="raise"):
            return x * x

    for _ in range(2):
        np.testing.assert_array_equal(numfuse.jit(guarded)(np.ones(2)), np.zeros(2))
        with pytest.raises(FloatingPointError):
            numfuse.jit(squared)(np.array([1e30], np.float32))
    assert "inside the function" in numfuse.jit(guarded).explain(np.ones(2))


def test_warnings_made_errors_raise_numpys_runtime_warning():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning):
            numfuse.jit(lambda x: (x / 0.0).sum())(np.ones(2))
    assert numfuse.jit(lambda x: (x / 0.0).sum())(np.ones(2)) == np.inf


def test_round_and_indexing_of_scalars_and_empty_index_lists():
    x = np.arange(4.0) * 1.37
    for fn in (lambda x: round(x.sum()), lambda x: round(x.sum(), 2), lambda x: round(x.astype(np.int64).sum(), -1),
               lambda x: x.sum()[()], lambda x: x.sum()[...], lambda x: x.sum()[None], lambda x: x[[]],
               lambda x: x.reshape(2, 2)[:, []]):
        got, expected, _, _ = _both(fn, x)
        assert type(got) is type(expected)
        np.testing.assert_array_equal(got, expected)
    with pytest.raises(TypeError, match="__round__"):
        numfuse.jit(lambda x: round(x))(x)


def test_a_view_the_size_of_the_argument_is_a_new_array_object():
    for fn in (lambda x: x[:], lambda x: x[...], lambda x: x.view(), lambda x: x.T):
        x = np.arange(6.0)
        got = numfuse.jit(fn)(x)
        assert got is not x and np.shares_memory(got, x)
        got.shape = (3, 2)  # NumPy's view: its shape is its own
        assert x.shape == (6,)


def test_a_complex_python_value_into_a_real_array_raises_as_numpy():
    def put(x, i, v):
        x[i] = v
        return x

    with pytest.raises(TypeError):
        numfuse.jit(put)(np.zeros(2), 0, 1 + 1j)
    np.testing.assert_array_equal(numfuse.jit(put)(np.zeros(2), 1, 3.5), [0.0, 3.5])


def test_a_generator_function_is_refused_when_jitted():
    def frames(x):
        yield x

    with pytest.raises(numfuse.UnsupportedError, match="generator"):
        numfuse.jit(frames)


def test_ascontiguousarray_and_asanyarray_are_the_array_itself_where_numpy_gives_it():
    def through(x):
        y = np.ascontiguousarray(x)
        y[0, 0] = 5.0  # writes x, as NumPy's
        z = np.asanyarray(x)
        z[1, 1] = 6.0
        c = np.ascontiguousarray(x[:, ::2])  # a copy: x keeps its values
        c[0, 1] = 7.0
        return y, c, np.ascontiguousarray(x.sum()), np.ascontiguousarray(x.T, dtype=np.float32)

    got, expected, mine, theirs = _both(through, np.zeros((3, 4)))
    np.testing.assert_array_equal(mine[0], theirs[0])
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype and g.flags.c_contiguous
        np.testing.assert_array_equal(g, e)
        assert np.shares_memory(g, mine[0]) == np.shares_memory(e, theirs[0])


def test_results_numpy_makes_read_only_are_read_only():
    x = np.arange(4.0)
    for fn in (lambda x: x.imag, lambda x: (x * 2).imag, lambda x: np.broadcast_to(x.sum(), (3,))):
        jitted = numfuse.jit(fn, numpy_fallback=False)
        for _ in range(2):  # (the second call: the cached plan)
            got, expected = jitted(x), fn(x)
            np.testing.assert_array_equal(got, expected)
            assert not got.flags.writeable and not expected.flags.writeable
    assert numfuse.jit(lambda x: x.imag + 1)(x).flags.writeable


def none_and_strings_written(x, m):
    y = x * 2
    y[0] = None
    y[1] = "1.5"
    y[m] = None
    y[-2:] = [None, "2.5"]
    return y


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int64, np.bool_])
def test_none_and_strings_assigned_convert_as_numpy_converts_them(dtype):
    # NumPy converts each such value as it writes it: None is NaN in a float array (an error in
    # an int one), "1.5" is parsed.
    x = np.arange(1, 7).astype(dtype)
    m = np.array([False, False, True, False, False, False])
    jf = numfuse.jit(none_and_strings_written, numpy_fallback=False)
    try:
        expected = none_and_strings_written(x, m)
    except (TypeError, ValueError) as err:
        with pytest.raises(type(err), match=re.escape(str(err).splitlines()[0])):
            jf(x, m)
        return
    for _ in range(2):
        assert_same(jf(x, m), expected)


def _outcome(fn, x):
    """fn(x)'s result, or its exception's type and first line."""
    try:
        return fn(x)
    except numfuse.UnsupportedError:
        raise
    except (ValueError, TypeError) as err:
        return type(err), str(err).splitlines()[0]


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.complex128, np.bool_])
@pytest.mark.parametrize("write", [
    lambda x: x.__setitem__(0, [1.0]),  # a sequence into one element: NumPy's error by dtype, a bool's truth
    lambda x: x.__setitem__(0, []),
    lambda x: x.__setitem__(0, np.array([2.0])),
    lambda x: x.__setitem__(0, x[1:2] * 2),
    lambda x: x.reshape(1, 3).__setitem__((0, 0), np.ones(1)),
    lambda x: x.__setitem__(slice(0, 1), [[5.0]]),  # a list deeper than the region
    lambda x: x.__setitem__(0, [None]),
    lambda x: x.__setitem__(slice(0, 2), np.ones((2, 3))),  # NumPy's shapes in the message: (2,3)
])
def test_a_sequence_assigned_as_numpy_assigns_it_or_with_numpys_error(write, dtype):
    def f(x):
        write(x)
        return x

    jf = numfuse.jit(f, numpy_fallback=False)
    theirs = _outcome(f, np.ones(3, dtype))
    try:
        ours = _outcome(jf, np.ones(3, dtype))
    except numfuse.UnsupportedError:
        assert dtype == np.bool_  # (an array's truth value into a bool element: refused)
        return
    if isinstance(theirs, tuple):
        assert ours == theirs
    else:
        assert_same(ours, theirs)


def test_an_array_with_extra_leading_dimensions_goes_into_a_region():
    g = numfuse.jit(lambda x: (x.__setitem__(slice(0, 1), np.array([[5.0]])), x)[1], numpy_fallback=False)
    np.testing.assert_array_equal(g(np.zeros(3)), [5.0, 0.0, 0.0])
