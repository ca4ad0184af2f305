"""The measured choice between numfuse's plan and the plain function (numfuse/numpy_fallback.py),
run: on a target whose times are real (the CPU target, a GPU) a function that is far slower
fused runs as the plain function after its timed calls; on Numba's CUDA simulator no choice is
made. Every call, timed or not, gives NumPy's results and writes into the caller's arrays."""

import numpy as np
import pytest

import numfuse
from numfuse.numpy_fallback import ROUNDS
from numfuse.targets import by_name, requested
from numfuse_tests.corpus.programs import crc16  # npbench's: a graph break at every bit of every byte


def times_are_real() -> bool:
    return by_name(requested(None)).times_are_real()


def test_a_function_far_slower_fused_runs_as_the_plain_function_where_times_are_real():
    data = np.random.default_rng(0).integers(0, 256, size=24, dtype=np.uint8)
    f = numfuse.jit(crc16, numpy_fallback=True)
    expected = crc16(data)
    for _ in range(2 * ROUNDS + 3):
        assert f(data) == expected
    choice = f.numpy_choice(data)
    if not times_are_real():
        assert choice is None  # the simulator's kernels run as Python: its times say nothing
        assert "numfuse or NumPy" not in f.explain(data)
        return
    # 24 bytes: 192 graph breaks, each a segment's trace and run, against about 20 µs of Python.
    assert choice.chosen == "numpy", str(choice)
    assert f.explain(data).rstrip().endswith(str(choice))


def scale_rows(out, x):
    for i in range(x.shape[0]):
        out[i] = x[i] * (i + 1.0)
    return out[::2]


@pytest.mark.parametrize("chosen", ["numpy", "numfuse"])
def test_either_choice_writes_the_callers_arrays_and_returns_numpys_views(chosen):
    x = np.arange(12.0).reshape(4, 3)
    f = numfuse.jit(scale_rows, numpy_fallback=True)
    out = np.zeros_like(x)
    f(out, x)
    choice = f.numpy_choice(out, x)
    if choice is None:
        assert not times_are_real()
        return
    choice.chosen = chosen  # as if timed so: which one runs must not change what a call does
    for k in range(3):  # (the second and third take the fast path)
        out = np.full_like(x, -1.0)
        got = f(out, x)
        np.testing.assert_array_equal(out, x * np.arange(1.0, 5.0)[:, None])
        assert got.base is out or np.shares_memory(got, out)
        np.testing.assert_array_equal(got, out[::2])


def test_no_choice_when_turned_off_or_for_device_arrays(monkeypatch):
    x = np.linspace(0.0, 1.0, 50)
    off = numfuse.jit(lambda x: np.sin(x) + 1, numpy_fallback=False)
    for _ in range(2 * ROUNDS + 2):
        np.testing.assert_allclose(off(x), np.sin(x) + 1)
    assert off.numpy_choice(x) is None
    monkeypatch.setenv("NUMFUSE_NUMPY_FALLBACK", "0")  # (the run tier's default)
    by_env = numfuse.jit(lambda x: np.cos(x) * 2)
    by_env(x)
    assert by_env.numpy_choice(x) is None


def row_updates(C, A):
    for i in range(A.shape[0]):
        C[i, :i + 1] *= 1.5
        for k in range(A.shape[1]):
            C[i, :i + 1] += A[i, k] * A[:i + 1, k]


def test_a_trace_past_its_budget_runs_the_plain_function(monkeypatch):
    from numfuse import numpy_fallback

    monkeypatch.setattr(numpy_fallback, "TRACE_BUDGET", 60)
    rng = np.random.default_rng(3)
    A, C = rng.random((8, 5)), rng.random((8, 8))
    f = numfuse.jit(row_updates, numpy_fallback=True)
    for _ in range(3):
        expected, got = C.copy(), C.copy()
        row_updates(expected, A)
        assert f(got, A) is None
        np.testing.assert_array_equal(got, expected)  # the plain function: NumPy's own bits
    choice = f.numpy_choice(C, A)
    assert choice.chosen == "numpy" and choice.fused == [] and choice.plain == []
    assert str(choice).startswith("numfuse or NumPy: runs as the plain function on NumPy, untimed: its trace "
                                  "passed 60 operations (at test_numpy_fallback.py:")
    assert f.explain(C, A) == str(choice) + "\n"
    with pytest.raises(numfuse.TracingError, match=r"row_updates runs as the plain function, untraced: its trace "
                                                   r"passed 60 operations .*numpy_fallback=False"):
        f.plan(C, A)
    whole = numfuse.jit(row_updates, numpy_fallback=False)  # traced whole, however long
    got = C.copy()
    whole(got, A)
    np.testing.assert_allclose(got, expected, rtol=1e-14)
    assert len(whole.plan(C, A).kernels) > 1


def swallows(x):
    """Catches every exception, numfuse's budget included: the trace ends past it anyway."""
    for i in range(x.shape[0]):
        try:
            x[i] = x[i] * 2 + 1
        except Exception:  # noqa: BLE001
            pass
    return x


def test_a_function_that_catches_the_budget_exception_still_runs_plain(monkeypatch):
    from numfuse import numpy_fallback

    monkeypatch.setattr(numpy_fallback, "TRACE_BUDGET", 10)
    x = np.arange(30.0)
    f = numfuse.jit(swallows, numpy_fallback=True)
    got = f(x.copy())
    np.testing.assert_array_equal(got, swallows(x.copy()))
    assert f.numpy_choice(x).reason is not None


_PLAIN_FAST_PATH = """
import numpy as np, numfuse
f = numfuse.jit(lambda x, y: x * 0.5 + y, numpy_fallback=True)
x, y = np.ones(4), np.ones(4)
for _ in range(12):
    f(x, y)
assert f.numpy_choice(x, y).chosen == "numpy", f.numpy_choice(x, y)
def full_path(args, kwargs):
    raise AssertionError("the full path ran")
f._call = full_path
np.testing.assert_array_equal(f(x, y), x * 0.5 + y)
print("fast")
"""


def test_a_signature_that_runs_plain_takes_the_fast_path_in_a_process_where_no_plan_ran():
    # (A process of its own: in this one, other tests' plans have met NumPy arrays already. Before,
    # only a plan that ran made NumPy arrays known to the fast path: each plain call took 30 µs,
    # where NumPy's took 2.)
    if not times_are_real():
        pytest.skip("the simulator's times choose nothing")
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _PLAIN_FAST_PATH], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NUMFUSE_NUMPY_FALLBACK": "1"})
    assert done.returncode == 0 and done.stdout.strip() == "fast", done.stderr[-2000:]
