"""A run segment by segment that passes its budget of traced operations goes on in NumPy
(numfuse/frontend/eager.py): every live traced value becomes a proxy of its real value, the
rest of the call is NumPy's, and the signature runs as the plain function from then on.

Each test lowers the budget so that the switch comes after a break or two, and checks what a
NumPy user sees: results, the caller's arrays written, views of them returned, NumPy's types,
arrays that must stay apart, and explain's account."""

import numpy as np
import pytest

import numfuse
from numfuse import numpy_fallback


@pytest.fixture
def small_budget(monkeypatch):
    monkeypatch.setattr(numpy_fallback, "TRACE_BUDGET", 40)


def went_on_in_numpy(jitted, *args) -> bool:
    """Whether a call with these arguments went on in NumPy: the measured choice says so where
    times are real (then the plain function runs); on the simulator, which makes no choice,
    explain's run of the segments does."""
    choice = jitted.numpy_choice(*args)
    if choice is None:
        return "the rest of that call ran on NumPy" in jitted.explain(*args)
    return choice.chosen == "numpy" and "the rest of that call ran on NumPy" in (choice.reason or "")


def relax(u, f, h, tol):
    """Jacobi sweeps until the update is below tol: a graph break an iteration."""
    residuals = []
    inner = u[1:-1]  # a view of the argument, alive across the breaks
    change = tol + 1.0
    sweeps = 0
    while change > tol:
        old = u.copy()
        inner[:] = 0.5 * (old[:-2] + old[2:] - h * h * f[1:-1])
        change = np.abs(u - old).max()
        residuals.append(change)
        sweeps += 1
    scratch = np.zeros_like(u)  # made after the switch: NumPy's own array
    scratch[::2] = u[::2]
    return inner, residuals, sweeps, scratch.sum() / h


def test_a_solver_loop_goes_on_in_numpy_past_the_budget(small_budget):
    n = 12
    f_values = np.linspace(-1.0, 1.0, n)
    jitted = numfuse.jit(relax, numpy_fallback=True)
    for call in range(2):  # the first switches mid-call; the second runs the plain function
        u_np, u_nf = np.zeros(n), np.zeros(n)
        expected = relax(u_np, f_values, 0.1, 1e-6)
        got = jitted(u_nf, f_values, 0.1, 1e-6)
        np.testing.assert_array_equal(u_nf, u_np)  # the caller's array, written
        np.testing.assert_array_equal(got[0], expected[0])
        assert np.shares_memory(got[0], u_nf) and not got[0].flags.owndata  # NumPy's view of it
        assert got[2] == expected[2] > 5
        assert [type(r) for r in got[1]] == [type(r) for r in expected[1]] == [np.float64] * expected[2]
        np.testing.assert_array_equal(got[1], expected[1])
        assert type(got[3]) is type(expected[3]) and got[3] == expected[3]
    assert went_on_in_numpy(jitted, np.zeros(n), f_values, 0.1, 1e-6)
    choice = jitted.numpy_choice(np.zeros(n), f_values, 0.1, 1e-6)
    if choice is not None:  # (where times are real: the plain function runs from then on, untimed)
        assert choice.fused == [] and choice.plain == []
        assert "the run segment by segment passed the trace budget in one call (40 operations" in choice.reason


def test_explain_says_where_the_call_went_on_in_numpy(small_budget):
    jitted = numfuse.jit(relax, numpy_fallback=False)  # (explain runs the segments itself)
    text = numfuse.jit(relax, numpy_fallback=True).explain(np.zeros(12), np.linspace(-1.0, 1.0, 12), 0.1, 1e-6)
    assert "   then the run segment by segment passed the trace budget in one call (40 operations" in text
    assert "(while change > tol:)" in text
    # Without the measured choice there is no budget: every call runs segment by segment.
    u = np.zeros(12)
    jitted(u, np.linspace(-1.0, 1.0, 12), 0.1, 1e-6)
    assert jitted.numpy_choice(u, np.linspace(-1.0, 1.0, 12), 0.1, 1e-6) is None
    assert "went on in NumPy" not in jitted.explain(np.zeros(12), np.linspace(-1.0, 1.0, 12), 0.1, 1e-6)
    np.testing.assert_array_equal(u, relax(np.zeros(12), np.linspace(-1.0, 1.0, 12), 0.1, 1e-6)[0].base)


def twins(x, limit):
    a = x * 2.0
    b = x * 2.0  # the same equation as a: one value in the trace, two arrays in NumPy
    view = x[::2]
    total = 0.0
    s = x.sum()
    while float(s) < limit:  # float(): a break where Python converts
        s = s + 1.0
        total += 1
    a += 100.0  # after the switch: a alone
    view[:] = -1.0  # through the view: into the caller's x
    return a, b, total


def test_arrays_that_numpy_holds_apart_stay_apart(small_budget):
    x = np.arange(6.0)
    x_np, x_nf = x.copy(), x.copy()
    expected = twins(x_np, 300.0)
    jitted = numfuse.jit(twins, numpy_fallback=True)
    got = jitted(x_nf, 300.0)
    assert went_on_in_numpy(jitted, x, 300.0)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
    np.testing.assert_array_equal(x_nf, x_np)
    assert type(got[2]) is float


def gather_history(x, history, steps):
    state = x.copy()
    k = 0
    while k < steps and state.max() > 0.0:  # the comparison's bool: a break
        state = state * 0.95 - 0.001
        history.append(state)  # traced values in the caller's list
        k += 1
    return k


def test_traced_values_in_the_callers_containers_come_back_real(small_budget):
    x = np.linspace(0.1, 1.0, 5)
    expected_history, got_history = [], []
    expected = gather_history(x, expected_history, 40)
    jitted = numfuse.jit(gather_history, numpy_fallback=True)
    got = jitted(x, got_history, 40)
    assert went_on_in_numpy(jitted, x, [], 40)
    assert got == expected
    assert len(got_history) == len(expected_history)
    for g, e in zip(got_history, expected_history):
        assert type(g) is np.ndarray
        np.testing.assert_array_equal(g, e)


def selection_then_loop(x, limit):
    picked = x[x > 0.5]  # NumPy's x[mask]: its size depends on the data
    k = 0.0
    while k < limit:  # limit is an array: a break at every test
        k = k + x.sum()
    return picked.sum() + k, picked.shape


def test_a_masked_selection_alive_at_the_switch(small_budget):
    x = np.linspace(0.0, 1.0, 9)
    expected = selection_then_loop(x, np.float64(400.0))
    jitted = numfuse.jit(selection_then_loop, numpy_fallback=True)
    got = jitted(x, np.float64(400.0))
    assert went_on_in_numpy(jitted, x, np.float64(400.0))
    assert got == expected


def _loop(x):
    s = x.sum() * 0.0
    while float(s) < 100:  # a hundred breaks, a few operations each: past the budget
        s = s + 1.0


def keys_and_members(x):
    s = x[1]
    _loop(x)
    return {s: 1}, {s}, {(s, 1): 2}


def identities(x):
    a = x * 2.0
    _loop(x)
    r = np.add(x, 1.0, out=a)  # NumPy returns out= itself
    return r is a, np.asarray(x) is np.asarray(x), np.shares_memory(np.asarray(x), x)


def selection_in_place(x):
    m = x[x > 0.5]
    m2 = m
    _loop(x)
    is_array = isinstance(m, np.ndarray)
    m += 1.0  # in place: m2 is the same array
    return is_array, m2


def flag_then_view(x):
    Z = x * 2.0
    v = Z[1:]
    Z.flags.writeable = False  # v, made before, stays writeable
    _loop(x)
    v[0] = 5.0
    return v.flags.writeable, Z[:2].flags.writeable, Z


def exposed_then_written(x):
    a = x * 2.0
    r = np.require(a)  # NumPy's: a itself
    _loop(x)
    r[0] = 7.0
    return a


@pytest.mark.parametrize("fn", [keys_and_members, identities, selection_in_place, flag_then_view,
                                exposed_then_written])
def test_after_the_switch_python_sees_numpys_objects(small_budget, fn):
    x = np.linspace(0.0, 1.0, 5)
    expected = fn(x.copy())
    jitted = numfuse.jit(fn, numpy_fallback=True)
    got = jitted(x.copy())
    assert went_on_in_numpy(jitted, x.copy())
    for g, e in zip(got if isinstance(got, tuple) else (got,), expected if isinstance(expected, tuple) else (expected,)):
        if isinstance(e, np.ndarray):
            np.testing.assert_array_equal(g, e)
            assert g.flags.writeable == e.flags.writeable
        else:
            assert g == e
            if isinstance(e, (dict, set)):
                assert [type(k) for k in g] == [type(k) for k in e]


def csr_matvec(indptr, indices, data, x):
    """A sparse matrix times a vector, row by row (npbench's spmv): each row's bounds are
    data, so every row breaks the graph inside the slice x[a:b], not where Python converts."""
    y = np.empty(indptr.size - 1, data.dtype)
    for i in range(indptr.size - 1):
        cols = indices[indptr[i]:indptr[i + 1]]
        y[i] = data[indptr[i]:indptr[i + 1]] @ x[cols]
    return y


def test_a_break_inside_an_operation_switches_when_it_returns(small_budget):
    rng = np.random.default_rng(2)
    dense = np.where(rng.random((30, 12)) < 0.3, rng.random((30, 12)), 0.0)
    indptr = np.concatenate([[0], np.cumsum((dense != 0).sum(axis=1))])
    indices, data = np.nonzero(dense)[1], dense[dense != 0]
    x = rng.random(12)
    jitted = numfuse.jit(csr_matvec, numpy_fallback=True)
    np.testing.assert_allclose(jitted(indptr, indices, data, x), dense @ x, rtol=1e-13)
    assert went_on_in_numpy(jitted, indptr, indices, data, x)
    import sys

    assert sys.getprofile() is None  # (the hook that waited for the slice to return is gone)


def test_a_profiler_of_the_users_own_is_left_alone(small_budget):
    import sys

    calls = []

    def profiler(frame, event, arg):
        calls.append(event)

    rng = np.random.default_rng(3)
    indptr, indices, data, x = np.array([0, 2, 3, 5] * 1)[:4], np.array([0, 2, 1, 0, 2]), rng.random(5), rng.random(3)
    sys.setprofile(profiler)
    try:
        got = numfuse.jit(csr_matvec, numpy_fallback=True)(indptr, indices, data, x)
        assert sys.getprofile() is profiler
    finally:
        sys.setprofile(None)
    np.testing.assert_allclose(got, csr_matvec(indptr, indices, data, x), rtol=1e-13)
    assert calls
