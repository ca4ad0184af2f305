"""Graph breaks: functions that need real values while they run (graph_breaks.py) give NumPy's
results, through Python control flow on values, conversions, untraced NumPy functions, sizes
from data, writes before and after a break, and random draws."""

from __future__ import annotations

import numpy as np
import pytest

import numfuse


def check(fn, *args, **kwargs):
    """numfuse's result and the arguments it left equal NumPy's on copies of the arguments."""
    numpy_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    ours_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    expected = fn(*numpy_args)
    jitted = numfuse.jit(fn, **kwargs)
    got = jitted(*ours_args)
    _same(got, expected)
    for a, b in zip(ours_args, numpy_args):
        if isinstance(b, np.ndarray):
            np.testing.assert_array_equal(a, b)
    return jitted


def _same(got, expected):
    if isinstance(expected, (tuple, list)):
        assert type(got) is type(expected) and len(got) == len(expected)
        for g, e in zip(got, expected):
            _same(g, e)
        return
    assert type(got) is type(expected), (type(got), type(expected))
    if isinstance(expected, np.ndarray):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)
    elif isinstance(expected, (float, np.floating)):
        np.testing.assert_allclose(got, expected, rtol=1e-12)  # sums may add in another order
    else:
        assert got == expected


X = np.linspace(-3.0, 5.0, 24).reshape(4, 6)


def test_while_loop_on_a_norm_compiles_its_body_once():
    def halve_until(x, tol):
        steps = 0
        while np.linalg.norm(x) > tol:
            x = x * 0.5
            steps += 1
        return x, steps

    jitted = check(halve_until, X, 1e-3)
    # The first segment, the first iteration's (reading the caller's array) and the body's.
    assert len(jitted._segments) <= 3
    before = len(jitted._segments)
    check_again = jitted(X * 4, 1e-3)  # more iterations: no new segment
    _same(check_again, halve_until(X * 4, 1e-3))
    assert len(jitted._segments) == before


def test_if_on_a_value_takes_numpy_branch():
    def branch(x):
        y = np.exp(x) - 2.0
        if y.sum() > 100:
            y = y / y.max()
        else:
            y[0] = 0.0
        return y * 3

    check(branch, X)
    check(branch, X - 10)


@pytest.mark.parametrize("convert", ["float", "int", "item", "tolist", "bool", "index"])
def test_conversions_give_values(convert):
    def f(x):
        s = x.sum()
        if convert == "float":
            v = float(s)
        elif convert == "int":
            v = int(s)
        elif convert == "item":
            v = x.max().item()
        elif convert == "tolist":
            v = x[0].tolist()
        elif convert == "bool":
            v = bool(s > 0)
        else:
            v = [10, 20, 30][(x[0, 0] > 0).astype(np.int64)]
        return x + 1, v

    check(f, X)


def test_asarray_is_the_arrays_buffer_kept_current_and_array_a_copy():
    def f(x):
        y = x * 2
        seen = np.asarray(y)  # NumPy: y itself, so it shows y's later writes
        own = np.array(y)
        own[0, 0] = -1.0  # the function's own copy
        first = seen.sum()
        y[1, 1] = 7.0
        y += 1.0
        return y, first, seen.sum(), own

    check(f, X)

    def write_into_it(x):
        a = np.asarray(x + 1)  # in the user's own code: the traced array itself, no break
        a[0] = 0.0  # writes into it, as NumPy writes into x + 1
        return a, np.asarray(a, dtype=np.float32), np.array(a, copy=False)

    check(write_into_it, X)
    assert "graph break" not in numfuse.jit(write_into_it).explain(X.copy())


def test_untraced_numpy_functions_run_on_real_arrays():
    def f(x):
        u = np.unique(np.round(x))  # not traced: its size depends on the data
        m = np.outer(u, u)
        np.fill_diagonal(m, 0.0)  # writes into the array it is given
        return m.sum(axis=0) + 1.0, u

    jitted = check(f, X)
    assert "np.unique is not traced" in jitted.explain(X)


def test_untraced_function_writing_into_an_argument_and_a_copy():
    def f(x):
        c = x.copy()
        np.fill_diagonal(c, -1.0)  # the copy only: the caller's array keeps its diagonal
        np.fill_diagonal(x, 9.0)  # the caller's array itself
        return c + x

    check(f, np.arange(16.0).reshape(4, 4))


def test_writes_before_and_after_a_break_reach_the_caller():
    def f(x):
        x[0] = 1.0
        if x.sum() > 0:
            x[1] += 2.0
        v = x[2:]  # a view across a break: writes reach x
        if float(v.mean()) > -100:
            v[0] = 5.0
        return x.sum()

    check(f, X.copy())


def test_earlier_version_kept_across_a_break():
    def f(x):
        y = x.copy()
        x += 1.0
        total = float(x.sum())
        x *= 2.0
        return y, x, total

    check(f, X.copy())


def test_sizes_and_slice_bounds_from_data():
    def f(x):
        n = int((x > 0).sum())
        out = np.zeros(n)
        out[:] = np.sort(x.ravel())[-n:]
        k = int(np.argmax(x[0]))
        return out * 2, x[0, :k + 1].sum()

    check(f, X)


def test_try_except_sees_real_exceptions():
    def f(x):
        try:
            np.unique(x, axis=5)
        except np.exceptions.AxisError:
            x = x + 100.0
        return x

    check(f, X)


def test_graph_breaks_false_keeps_the_refusal():
    def f(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(numfuse.TracingError, match="graph_breaks=False"):
        numfuse.jit(f, graph_breaks=False)(X)
    check(f, X)


def test_explain_lists_each_break_with_its_line():
    def f(x):
        for _ in range(3):
            if x.max() > 1:
                x = x / 2
        return x

    text = numfuse.jit(f)(X), numfuse.jit(f).explain(X)
    explained = text[1]
    assert "graph breaks" in explained
    assert "if x.max() > 1:" in explained
    assert "== segment #0" in explained
    _same(text[0], f(X))


def test_random_draws_are_fresh_and_numpys():
    def noisy(x):
        return x + np.random.standard_normal(x.shape)

    jitted = numfuse.jit(noisy)
    np.random.seed(7)
    expected = noisy(X)
    np.random.seed(7)
    got = jitted(X)
    np.testing.assert_allclose(got, expected, rtol=1e-15)
    again = jitted(X)  # a later call draws new numbers, as NumPy's would
    assert not np.allclose(again, got)
    np.random.seed(7)
    np.testing.assert_allclose(jitted(X), expected, rtol=1e-15)


def test_random_generator_argument_and_default_rng_inside():
    def with_rng(x, rng):
        return x * rng.uniform(size=x.shape)

    jitted = numfuse.jit(with_rng)
    got = jitted(X, np.random.default_rng(3))
    np.testing.assert_allclose(got, with_rng(X, np.random.default_rng(3)), rtol=1e-15)
    other = jitted(X, np.random.default_rng(4))
    np.testing.assert_allclose(other, with_rng(X, np.random.default_rng(4)), rtol=1e-15)

    def fresh(x):
        return x + np.random.default_rng().standard_normal(x.shape)

    jitted = numfuse.jit(fresh)
    assert not np.allclose(jitted(X), jitted(X))


def test_a_generator_returned_is_the_callers_object_or_numpys():
    # (A battery found numfuse's wrapper of the generator returned instead.)
    def draws(rng, x):
        made = np.random.default_rng(5)
        return x + rng.normal(size=x.shape), rng, {"made": [made]}

    jitted = numfuse.jit(draws)
    for seed in (1, 1, 2):
        rng = np.random.default_rng(seed)
        values, returned, held = jitted(rng, X)
        assert returned is rng
        assert type(held["made"][0]) is np.random.Generator
        reference = np.random.default_rng(seed)
        np.testing.assert_allclose(values, draws(reference, X)[0], rtol=1e-15)
        assert rng.bit_generator.state == reference.bit_generator.state


# -- read after overwrite (planner.keep_old_values) -----------------------------------------------


def test_value_read_after_its_buffer_is_overwritten():
    def f(x):
        d = x[0] + 1.0
        x[0] = 0.0
        return x[1] * d

    check(f, X.copy())


def test_recursive_filter_rewriting_the_row_it_reads():
    def f(y, a):
        for i in range(1, y.shape[0]):
            y[i] = a * y[i - 1] + y[i]
        y[0] = y[-1] - y[0]
        return y, y.sum(0)

    check(f, X.copy(), 0.5)


GLOBAL_OUT = np.zeros((4, 6))


def _into_global(x):
    np.multiply(x, 2.0, out=GLOBAL_OUT)  # NumPy writes the module's array, at a break
    return GLOBAL_OUT.sum() + x


def test_ufunc_out_into_a_global_numpy_array():
    GLOBAL_OUT[...] = 0.0
    expected = _into_global(X)
    written = GLOBAL_OUT.copy()
    GLOBAL_OUT[...] = 0.0
    got = numfuse.jit(_into_global)(X)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    np.testing.assert_array_equal(GLOBAL_OUT, written)


# -- x[mask] whose size Python needs (numpy_masked.MaskedSelection.compacted) -------------------


def test_masked_selection_returned_and_measured():
    def f(x):
        s = x[x > 0]
        n = len(s)  # its size: a break
        return s * 2, n, (x[x < 1] + 1).max()  # the last one stays fused

    check(f, X)


def test_selection_then_in_place_on_it():
    def f(x):
        z = x.ravel()
        keep = np.abs(z) < 4
        z = z[keep]
        if not len(z):
            return z
        np.multiply(z, z, z)  # into the compacted selection, as into NumPy's
        return abs(z) > 2, z

    check(f, X)


def test_a_selection_used_as_an_index_array():
    def f(a, xi):
        kept = xi[xi > 0]  # an index array whose size the data decides
        a[kept[1:]] = -1.0
        return a[kept] * 2, a[kept, None] + a[:3]

    check(f, np.arange(10.0), np.array([3, -1, 5, 0, 2, 7]))
    with pytest.raises(numfuse.UnsupportedError, match=r"indexing with x\[mask\] \(an index array\)"):
        numfuse.jit(lambda a, xi: a[xi[xi > 0]], graph_breaks=False)(np.arange(4.0), np.array([1, 2]))


def test_rows_selected_by_the_data():
    # k-means' update: x[labels == j] picks rows; its size comes from the data.
    def kmeans(points, k, iters):
        centers = points[:k].copy()
        for _ in range(iters):
            distances = ((points[:, None, :] - centers[None, :, :]) ** 2).sum(-1)
            labels = distances.argmin(1)
            for j in range(k):
                members = labels == j
                if members.any():
                    centers[j] = points[members].mean(0)
        return centers, labels

    points = np.random.default_rng(0).standard_normal((20, 2))
    check(kmeans, points, 3, 4)
    check(lambda x: x[np.array([True, False, True, False])].sum(0), X)


def test_conjugate_gradient_stops_on_its_residual():
    def cg(A, b, tol, maxiter):
        x = np.zeros_like(b)
        r = b - A @ x
        p = r.copy()
        rs = r @ r
        for _ in range(maxiter):
            Ap = A @ p
            alpha = rs / (p @ Ap)
            x += alpha * p
            r -= alpha * Ap
            rs_new = r @ r
            if np.sqrt(rs_new) < tol:
                break
            p = r + (rs_new / rs) * p
            rs = rs_new
        return x

    m = np.random.default_rng(1).standard_normal((8, 8))
    A = m @ m.T + 8 * np.eye(8)
    b = np.arange(8.0)
    got = numfuse.jit(cg)(A, b, 1e-10, 50)
    np.testing.assert_allclose(A @ got, b, atol=1e-8)
    np.testing.assert_allclose(got, cg(A, b, 1e-10, 50), rtol=1e-9, atol=1e-12)


def test_print_shows_values_as_numpy_prints_them(capsys):
    def f(x):
        y = x * 2
        print("y is", y, f"sum={y.sum():.2f}")
        return y + 1

    f(np.arange(3.0))
    expected = capsys.readouterr().out
    got = numfuse.jit(f)(np.arange(3.0))
    assert capsys.readouterr().out == expected == "y is [0. 2. 4.] sum=6.00\n"
    np.testing.assert_array_equal(got, np.arange(3.0) * 2 + 1)


def test_untraced_ufuncs_and_arguments_run_numpys_at_a_break():
    def f(x):
        z = x + 1j * x[::-1]
        return (np.arcsin(z) * 2,  # no complex arcsin template: NumPy's
                np.add.accumulate(x, axis=1) + 1,  # a ufunc method numfuse does not trace
                x.max(initial=100.0),  # an argument numfuse does not trace
                np.maximum.reduce(z.real, axis=0))

    jitted = check(f, X)
    assert "np.arcsin with these operands is not traced" in jitted.explain(X)


def test_untraced_ndarray_methods_run_on_the_real_array():
    def f(x):
        y = x * 2
        y.fill(3.0)  # writes into y's own buffer
        rows, cols = (x > 0).nonzero()
        return y + 1, rows, cols, x.tobytes() == np.ascontiguousarray(x).tobytes()

    check(f, X)


def test_untraced_method_on_an_argument_writes_the_callers_array():
    def f(x):
        x.fill(7.0)
        return x.sum()

    check(f, X.copy())


def test_a_break_is_no_write_for_views_of_unknown_layout():
    def f(x):
        y = x.T * 2  # NumPy lays it out like x.T; numfuse does not trace that layout
        v = y.ravel()  # a view or a copy, by that layout
        if x.sum() > 0:  # a break: y is unchanged, v may read it
            pass
        return v + 1, (x @ x.T).ravel()  # a product is C-ordered: its ravel is a view

    check(f, np.arange(6.0).reshape(2, 3))

    def g(x):
        y = x.T * 2
        v = y.ravel()
        if x.sum() > 0:
            y[0, 0] = 100.0  # whether v shows this depends on the layout: refused
        return v + 1

    with pytest.raises(numfuse.UnsupportedError, match="after the array was written"):
        numfuse.jit(g)(np.arange(6.0).reshape(2, 3))


def test_an_untraced_function_writes_into_a_view_as_into_numpys():
    # the numpy-tutorials SVD tutorial: np.fill_diagonal(S[j, :, :], s[j, :]) of a made array
    def diagonals(s):
        S = np.zeros((2, 3, 3))
        for j in range(2):
            np.fill_diagonal(S[j, :, :], s[j, :])
        return S

    def into_argument(x, s):
        np.fill_diagonal(x[1:, 1:], s)
        return x

    s = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(numfuse.jit(diagonals)(s), diagonals(s))
    x, expected = np.zeros((4, 4)), np.zeros((4, 4))
    got = numfuse.jit(into_argument)(x, np.arange(3.0))
    into_argument(expected, np.arange(3.0))
    np.testing.assert_array_equal(x, expected)
    assert got is x


def test_global_draws_of_a_trace_made_again_are_not_drawn_twice():
    # a Python float argument that steers an `if` is made static by a second trace: the first
    # trace's draws are put back (a Metropolis step drew twice on its first call)
    def step(beta):
        u = np.random.rand()
        if u < np.exp(-beta):
            return u
        return -u

    jitted = numfuse.jit(step)
    for _ in range(2):
        np.random.seed(0)
        expected, after = step(0.5), np.random.rand()
        np.random.seed(0)
        assert jitted(0.5) == expected
        assert np.random.rand() == after


def test_a_try_around_a_library_call_or_a_gather_catches_numpys_exception():
    def solve_or_fit(A, b):
        try:
            return np.linalg.solve(A, b)
        except np.linalg.LinAlgError:  # a singular matrix
            return np.linalg.lstsq(A, b, rcond=None)[0]

    def picked(x, i):
        try:
            return x[i].sum()
        except (KeyError, IndexError):
            return -1.0

    def written(x, i):
        x[0] = 1.0
        try:
            x[i] = -1.0
        except Exception:
            x[1] = 2.0
        return x

    cases = [(solve_or_fit, (np.ones((2, 2)), np.ones(2))), (solve_or_fit, (np.eye(2), np.ones(2))),
             (picked, (np.arange(3.0), np.array([5]))), (picked, (np.arange(3.0), np.array([1]))),
             (written, (np.zeros(3), np.array([7]))), (written, (np.zeros(3), np.array([2])))]
    for fn, args in cases:
        mine, theirs = [a.copy() for a in args], [a.copy() for a in args]
        np.testing.assert_allclose(numfuse.jit(fn)(*mine), fn(*theirs), rtol=1e-12)
        for m, t in zip(mine, theirs):
            np.testing.assert_array_equal(m, t)
    # outside a try, a gather stays in the plan
    assert "graph break" not in numfuse.jit(lambda x, i: x[i].sum()).explain(np.arange(3.0), np.array([1]))


def masked_selection_written(z):
    u = z[z > 2]
    u[0] = 7.0
    u[1:] += z[:2].sum()
    return u, u * 2, z


def test_writing_into_a_boolean_selection_writes_that_new_array_alone():
    z = np.arange(6.0)
    jf = numfuse.jit(masked_selection_written, numpy_fallback=False)
    for _ in range(2):
        ours = z.copy()
        got = jf(ours)
        want = masked_selection_written(z.copy())
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(ours, z)


def test_writing_into_an_array_python_holds_read_only_at_a_break_says_why():
    def reinterpreted(z):
        y = z.view(np.int16)  # not traced (another size): NumPy's view, on the real array, at a break
        y[0] = 1
        return z

    z = np.array([1.5, 2.5], np.float32)
    with pytest.raises(ValueError, match="read-only") as raised:
        numfuse.jit(reinterpreted, numpy_fallback=False)(z)
    assert "gave Python read-only at a graph break (ndarray.view is not traced)" in "".join(
        getattr(raised.value, "__notes__", []))


def shuffled_rows(x):
    np.random.seed(0)
    np.random.shuffle(x)  # rows of a 2-D array: NumPy's shuffle of an ndarray, in place
    return x.sum(axis=1)


def drawn_with_a_seed_argument(x, seed):
    rng = np.random.default_rng(seed)
    y = x * 1.0
    rng.shuffle(y)
    return x + rng.standard_normal(x.shape), rng.permutation(x), y


def test_random_draws_given_traced_values_are_numpys():
    jf = numfuse.jit(shuffled_rows, numpy_fallback=False)
    g = numfuse.jit(drawn_with_a_seed_argument, numpy_fallback=False)
    for _ in range(2):
        ours, theirs = np.arange(12.0).reshape(6, 2), np.arange(12.0).reshape(6, 2)
        np.testing.assert_array_equal(jf(ours), shuffled_rows(theirs))
        np.testing.assert_array_equal(ours, theirs)  # rows moved, none duplicated
        x = np.arange(8.0).reshape(4, 2)
        for a, b in zip(g(x, 3), drawn_with_a_seed_argument(x, 3)):
            np.testing.assert_array_equal(a, b)


def membership_and_index_forms(x, mask):
    rows = np.array([0, 2])
    return (x[1] in x, (x[1] + 100) in x, x[:, (0, 2)], x[rows[:, None], mask], x[1, mask],
            x[1, np.array([True, False, True, False])])


def test_in_tuples_inside_an_index_and_boolean_arrays_beside_other_index_parts():
    x = np.arange(12.0).reshape(3, 4)
    mask = np.array([True, False, True, True])
    jf = numfuse.jit(membership_and_index_forms, numpy_fallback=False)
    for _ in range(2):
        for a, b in zip(jf(x, mask), membership_and_index_forms(x, mask)):
            np.testing.assert_array_equal(a, b)


def cleaned_in_place_then_written(z, c):
    w = z * 2
    np.nan_to_num(w, copy=False, nan=5.0)  # not traced: NumPy's, into w's buffer, at a break
    w[np.abs(w) == np.inf] = c  # then traced writes into that buffer (TheAlgorithms' julia_sets)
    w += 1.0
    return w


@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
def test_traced_writes_into_an_array_an_untraced_call_wrote(dtype):
    z = np.array([1.0, np.nan, np.inf, -2.0], dtype)
    jf = numfuse.jit(cleaned_in_place_then_written, numpy_fallback=False)
    with np.errstate(all="ignore"):
        expected = cleaned_in_place_then_written(z.copy(), 9.0)
        for _ in range(2):
            np.testing.assert_array_equal(jf(z.copy(), 9.0), expected)


@pytest.mark.parametrize("index", [
    lambda m: (1, m), lambda m: ([0, 1], m), lambda m: (np.array([True]), 1), lambda m: (1, np.append(m, [True, False])),
])
def test_a_boolean_array_of_the_wrong_length_beside_other_index_parts_raises_as_numpy(index):
    x = np.arange(6.0).reshape(2, 3)
    m = np.array([True, True])
    with pytest.raises(IndexError) as theirs:
        x[index(m)]
    with pytest.raises(IndexError, match="boolean index did not match") as ours:
        numfuse.jit(lambda x, m: x[index(m)], numpy_fallback=False)(x, m)
    assert str(ours.value).splitlines()[0] == str(theirs.value)

    def write(x, m):
        x[index(m)] = -1.0
        return x

    y = x.copy()
    with pytest.raises(IndexError, match="boolean index did not match"):
        numfuse.jit(write, numpy_fallback=False)(y, m)
    np.testing.assert_array_equal(y, x)


def test_a_computed_diagonal_returned_after_a_break_is_read_only_and_a_scalar_is_no_container():
    def f(x):
        float(x[0, 0])  # a graph break
        return (x * 2).diagonal(), np.diagonal(x + 1)

    got = numfuse.jit(f, numpy_fallback=False)(np.arange(9.0).reshape(3, 3))
    assert not got[0].flags.writeable and not got[1].flags.writeable
    with pytest.raises(TypeError, match="not iterable"):
        numfuse.jit(lambda x: 1.0 in x[0, 0], numpy_fallback=False)(np.ones((2, 2)))


def _write_one_read_other(a, b):
    if a.sum() > -100.0:  # a graph break
        a[:] = a + 10.0  # into memory that b shares
    return b * 1.0, b


@pytest.mark.parametrize("make", [
    lambda: (lambda x: (x, x))(np.arange(4.0)),  # one array, twice
    lambda: (lambda x: (x, x[:]))(np.arange(4.0)),  # two views of the same memory
    lambda: (lambda x: (x[:3], x[1:]))(np.arange(4.0)),  # overlapping views
    lambda: (lambda x: (x[1:], x.reshape(2, 2).T.ravel()))(np.arange(5.0)[1:]),  # ravel: a copy, not shared
])
def test_arguments_that_share_memory_in_a_run_segment_by_segment(make):
    expected = _write_one_read_other(*make())
    args = make()
    got = numfuse.jit(_write_one_read_other, numpy_fallback=False)(*args)
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])
    assert got[1] is args[1]  # the argument itself, returned: the caller's array object


def test_a_write_into_arguments_that_share_memory_otherwise_than_as_views_is_refused_before_it_runs():
    def write(a, b):
        if a.sum() > -1e300:  # a graph break
            a[:] = 1.0
        return b * 1

    def read(a, b):
        if a.sum() > -1e300:
            pass
        return b * 1, a + 1

    x = np.zeros(4)
    with pytest.raises(numfuse.UnsupportedError, match="arguments 'a' and 'b' share memory and write writes 'a'"):
        numfuse.jit(write, numpy_fallback=False)(x, x.view(np.int64))
    np.testing.assert_array_equal(x, np.zeros(4))  # nothing written
    got = numfuse.jit(read, numpy_fallback=False)(x, x.view(np.int64))
    np.testing.assert_array_equal(got[0], read(x, x.view(np.int64))[0])
    np.testing.assert_array_equal(got[1], np.ones(4))


def test_comparing_with_a_string_is_numpys_all_false():
    def f(x, s):
        return "a" in x, x == "a", x != b"b", s == "a", "b" in x[0:2]

    x = np.arange(3.0)
    got, expected = numfuse.jit(f, numpy_fallback=False)(x, 1.5), f(x, 1.5)
    assert [type(v) for v in got] == [type(v) for v in expected]
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("index", [
    [True, False, True], (slice(None), [True, False, True, True]), np.array([[True, False, True, False]] * 3),
    ([False, True, True], slice(1, None)), [True, False],
])
def test_a_boolean_mask_known_when_traced_indexes_as_its_nonzero_positions(index):
    x = np.arange(12.0).reshape(3, 4)

    def read(x):
        return x[index] * 1.0

    def write(x):
        x[index] = -1.0
        return x

    for fn in (read, write):
        try:
            expected = fn(x.copy())
        except IndexError as theirs:
            with pytest.raises(IndexError, match="boolean index did not match") as ours:
                numfuse.jit(fn, numpy_fallback=False)(x.copy())
            assert str(ours.value).splitlines()[0] == str(theirs)
            continue
        np.testing.assert_array_equal(numfuse.jit(fn, numpy_fallback=False)(x.copy()), expected)
