"""NumPy's floating-point error modes: where the caller asks NumPy to raise (np.errstate,
np.seterr), a call on NumPy arrays raises NumPy's FloatingPointError, not inf from a kernel;
where NumPy only warns or ignores, the kernels run. On both targets."""

import os
import threading
import warnings

import numpy as np
import pytest

import numfuse

X = np.array([1.0, 4.0, 9.0])
ZEROS = np.array([1.0, 0.0, 2.0])


def counted(fn):
    """fn, and a list that grows each time NumPy runs its body (tracing counts too)."""
    runs = []
    # (counted through a bound method, which numfuse does not look into: a list the body
    # appended to itself would be a change it makes, run at every call: frontend/effects.py)
    note = runs.append

    def body(*args):
        note(1)
        return fn(*args)

    return body, runs


def sqrt_over(x, y):
    return np.sqrt(x) / y


def jitted_and_runs(fn):
    body, runs = counted(fn)
    jf = numfuse.jit(body)
    return jf, runs


@pytest.mark.parametrize("fn, args, category", [
    (sqrt_over, (X, ZEROS), "divide"),
    (lambda x: np.log(x - 2.0), (X,), "invalid"),
    (lambda x: np.exp(x * 100.0), (X,), "over"),
    (lambda x: (x * 1e-300) * 1e-300, (X,), "under"),
    (lambda x: (np.tanh(x) / (x - 4.0)).sum(), (X,), "divide"),  # inside a fused reduction
    (lambda x: np.where(x > 2.0, np.log(x - 5.0), 0.0), (X,), "invalid"),  # a discarded branch
])
def test_a_raising_error_state_raises_numpys_floating_point_error(fn, args, category):
    jf = numfuse.jit(fn)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(jf(*args), fn(*args))  # the kernels, compiled
    with np.errstate(**{category: "raise"}):
        with pytest.raises(FloatingPointError) as numpys:
            fn(*args)
        with pytest.warns(numfuse.UnfusedCallWarning, match=f"{category}='raise'"):
            with pytest.raises(FloatingPointError) as ours:
                jf(*args)
    assert str(ours.value) == str(numpys.value)


def test_the_kernels_serve_the_calls_before_and_after_a_raising_state():
    jf, runs = jitted_and_runs(sqrt_over)
    first = jf(X, ZEROS)
    traced = len(runs)
    assert jf(X, ZEROS)[1] == np.inf and len(runs) == traced  # the cached kernels, the fast path
    with np.errstate(all="raise"), pytest.warns(numfuse.UnfusedCallWarning):
        np.testing.assert_array_equal(jf(X, X), sqrt_over(X, X))  # no error: NumPy's values
    assert len(runs) == traced + 1
    np.testing.assert_array_equal(jf(X, ZEROS), first)
    assert len(runs) == traced + 1


@pytest.mark.parametrize("mode", ["warn", "ignore"])
def test_warn_and_ignore_keep_the_kernels(mode):
    jf, runs = jitted_and_runs(sqrt_over)
    jf(X, ZEROS)
    traced = len(runs)
    with np.errstate(all=mode), warnings.catch_warnings():
        warnings.simplefilter("error", numfuse.UnfusedCallWarning)
        with np.errstate(all="ignore"):
            expected = sqrt_over(X, ZEROS)
        np.testing.assert_array_equal(jf(X, ZEROS), expected)
    assert len(runs) == traced


def test_seterr_is_seen_like_errstate():
    jf = numfuse.jit(sqrt_over)
    jf(X, ZEROS)
    old = np.seterr(divide="raise")
    try:
        with pytest.warns(numfuse.UnfusedCallWarning), pytest.raises(FloatingPointError):
            jf(X, ZEROS)
    finally:
        np.seterr(**old)
    assert jf(X, ZEROS)[1] == np.inf


def test_a_call_mode_calls_the_users_function_as_numpy_does():
    jf = numfuse.jit(sqrt_over)
    theirs, ours = [], []
    with np.errstate(divide="call", call=lambda kind, flag: theirs.append(kind)):
        with np.errstate(all="ignore"):
            expected = sqrt_over(X, ZEROS)
        with np.errstate(divide="call"):
            sqrt_over(X, ZEROS)
    with np.errstate(divide="call", call=lambda kind, flag: ours.append(kind)):
        with pytest.warns(numfuse.UnfusedCallWarning):
            got = jf(X, ZEROS)
    np.testing.assert_array_equal(got, expected)
    assert ours == theirs == ["divide by zero"]


def test_a_jitted_function_inside_another_raises_as_numpy_does():
    inner = numfuse.jit(lambda x: x / (x - 4.0))
    outer = numfuse.jit(lambda x: inner(x) + 1.0)
    np.testing.assert_array_equal(outer(X)[0], 1.0 / -3.0 + 1.0)
    with np.errstate(divide="raise"), pytest.warns(numfuse.UnfusedCallWarning):
        with pytest.raises(FloatingPointError, match="divide by zero"):
            outer(X)


@pytest.mark.skipif(os.environ.get("NUMFUSE_TARGET") == "cpu", reason="device arrays: the CUDA target")
def test_device_arrays_keep_the_kernels_as_cupy_has_no_error_modes():
    from numfuse.targets.cuda.device import backend

    cuda = backend().cuda
    jf, runs = jitted_and_runs(sqrt_over)
    x, y = cuda.to_device(X), cuda.to_device(ZEROS)
    jf(x, y)
    traced = len(runs)
    with np.errstate(all="raise"), warnings.catch_warnings():
        warnings.simplefilter("error", numfuse.UnfusedCallWarning)
        got = jf(x, y).copy_to_host()
    assert got[1] == np.inf and len(runs) == traced


def test_the_state_is_each_threads_own():
    jf, runs = jitted_and_runs(sqrt_over)
    jf(X, ZEROS)
    traced = len(runs)
    start, outcomes = threading.Barrier(8), {}

    def call(i):
        start.wait()
        state = np.errstate(divide="raise") if i % 2 else np.errstate()
        with state:  # (no catch_warnings here: it is not thread-safe; pytest collects the warnings)
            try:
                outcomes[i] = jf(X, ZEROS)[1]
            except FloatingPointError:
                outcomes[i] = "raised"

    threads = [threading.Thread(target=call, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes == {i: "raised" if i % 2 else np.inf for i in range(8)}
    assert len(runs) == traced + 4  # the four raising calls ran the body; the others, kernels


# -- NumPy's warnings that the signature decides, at every call (frontend/numpy_warnings.py) -----


def cast_to_real(z):
    return z.astype(np.float64) * 2.0


def mean_of_empty_columns(x):
    return x.mean(axis=0) + 1.0


def variance_past_its_freedom(x):
    return np.var(x, ddof=3) + np.std(x, axis=0, ddof=2)


def cross_of_2_vectors(a):
    return np.cross(a, a[::-1])


SIGNATURE_WARNINGS = [
    (cast_to_real, np.array([1 + 2j, 3.0]), "Casting complex values to real discards the imaginary part"),
    (mean_of_empty_columns, np.ones((0, 3)), "Mean of empty slice"),
    (variance_past_its_freedom, np.ones((2, 2)), "Degrees of freedom <= 0 for slice"),
    (cross_of_2_vectors, np.ones((4, 2)), "Arrays of 2-dimensional vectors are deprecated"),
]


def _given(fn, x, calls=3):
    """Per call: the messages of the warnings given, and the line they point at."""
    given = []
    for _ in range(calls):
        with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
            warnings.simplefilter("always")
            fn(x.copy())
        given.append([(str(w.message), w.category, w.filename, w.lineno) for w in caught])
    return given


@pytest.mark.parametrize("fn, x, message", SIGNATURE_WARNINGS, ids=lambda v: getattr(v, "__name__", ""))
def test_warnings_the_signature_decides_are_given_at_every_call(fn, x, message):
    jf = numfuse.jit(fn, numpy_fallback=False)
    ours = _given(jf, x)
    theirs = _given(fn, x)
    lines = {fn.__code__.co_firstlineno + 1}
    for our_call, their_call in zip(ours, theirs):
        # NumPy's own: the same message and category (and, where NumPy gives them, its
        # warnings about the invalid values of an empty division, which numfuse does not give)
        expected = [(m, c) for m, c, _, _ in their_call if "encountered" not in m]
        assert [(m, c) for m, c, _, _ in our_call] == expected
        assert any(message in m for m, _, _, _ in our_call)
        assert {(f, n) for _, _, f, n in our_call} == {(__file__, n) for n in lines}  # the user's line


def test_a_warning_given_once_per_line_is_given_once():
    # (Numba's compiler, and the simulator's launches, change the warnings filters between the
    # calls, which makes Python forget what the registry says was shown)
    jf = numfuse.jit(cast_to_real, numpy_fallback=False)
    z = np.array([1 + 2j, 3.0])
    registry = globals().get("__warningregistry__")
    if registry is not None:
        registry.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for _ in range(4):
            jf(z)
    assert [str(w.message) for w in caught] == ["Casting complex values to real discards the imaginary part"]


def test_a_warning_made_an_error_raises_at_every_call():
    jf = numfuse.jit(cross_of_2_vectors, numpy_fallback=False)
    a = np.arange(8.0).reshape(4, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        expected = cross_of_2_vectors(a)
        np.testing.assert_array_equal(jf(a), expected)
        np.testing.assert_array_equal(jf(a), expected)
    for _ in range(2):
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            with pytest.raises(DeprecationWarning, match="2-dimensional vectors"):
                jf(a)


def empty_mean_then_a_break(x):
    m = np.mean(x[:0])  # warns, then the first trace stops at the break below and runs again
    if x.sum() > 0:
        x = x * 2
    return x + m


def test_a_call_that_traces_twice_warns_once():
    jf = numfuse.jit(empty_mean_then_a_break, numpy_fallback=False)
    x = np.ones(3)
    ours = _given(jf, x)
    theirs = _given(empty_mean_then_a_break, x)
    for our_call, their_call in zip(ours, theirs):
        assert [m for m, _, _, _ in our_call] == [m for m, _, _, _ in their_call if "encountered" not in m]
