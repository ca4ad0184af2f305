"""Comparing numfuse against NumPy: same structure, types, shapes and dtypes; values within a
tolerance that depends on the dtype and on how many elements were reduced."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import numfuse

# Python's binary operators, as the functions tests apply to arrays and scalars.
PYTHON_OPERATORS = {
    "+": lambda x, y: x + y,
    "-": lambda x, y: x - y,
    "*": lambda x, y: x * y,
    "/": lambda x, y: x / y,
    "//": lambda x, y: x // y,
    "%": lambda x, y: x % y,
    "**": lambda x, y: x ** y,
    "&": lambda x, y: x & y,
    "|": lambda x, y: x | y,
    "^": lambda x, y: x ^ y,
    "<": lambda x, y: x < y,
    "<=": lambda x, y: x <= y,
    ">": lambda x, y: x > y,
    ">=": lambda x, y: x >= y,
    "==": lambda x, y: x == y,
    "!=": lambda x, y: x != y,
}


def tolerance(dtype, reduced: int = 1) -> tuple[float, float]:
    """(rtol, atol) for results of `dtype` that each combine `reduced` inputs."""
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        return 0.0, 0.0
    eps = float(np.finfo(dtype).eps)
    # Summation order differs (a tree on the device, pairwise in NumPy): the error grows with
    # the number of terms. Generous but far below what a wrong identity or index would give.
    rtol = eps * 16 * max(1.0, float(np.sqrt(reduced))) * (4 if reduced > 1 else 1)
    atol = eps * 16 * max(1.0, float(reduced))
    return rtol, atol


def assert_same(got, expected, reduced: int = 1, path: str = "result"):
    """Structure, Python type, shape, dtype and values of `got` match `expected`."""
    if isinstance(expected, (tuple, list)):
        assert type(got) is type(expected), f"{path}: {type(got).__name__} != {type(expected).__name__}"
        assert len(got) == len(expected), f"{path}: length {len(got)} != {len(expected)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same(g, e, reduced, f"{path}[{i}]")
        return
    if isinstance(expected, dict):
        assert isinstance(got, dict) and set(got) == set(expected), path
        for k in expected:
            assert_same(got[k], expected[k], reduced, f"{path}[{k!r}]")
        return
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray), f"{path}: got {type(got).__name__}, NumPy gives an ndarray"
    elif isinstance(expected, np.generic):
        assert isinstance(got, np.generic), f"{path}: got {type(got).__name__}, NumPy gives a NumPy scalar"
    elif isinstance(expected, (bool, int, float, complex)):
        assert type(got) is type(expected), f"{path}: got {type(got).__name__}, NumPy gives {type(expected).__name__}"
    got_a, exp_a = np.asarray(got), np.asarray(expected)
    assert got_a.shape == exp_a.shape, f"{path}: shape {got_a.shape} != NumPy's {exp_a.shape}"
    assert got_a.dtype == exp_a.dtype, f"{path}: dtype {got_a.dtype} != NumPy's {exp_a.dtype}"
    if exp_a.dtype.kind == "c":
        # Each part as a float array: assert_allclose of complex values with an infinite part
        # would ask for exact equality of the other part.
        assert_same(got_a.real, exp_a.real, reduced, f"{path}.real")
        assert_same(got_a.imag, exp_a.imag, reduced, f"{path}.imag")
    elif exp_a.dtype.kind == "f":
        rtol, atol = tolerance(exp_a.dtype, reduced)
        np.testing.assert_allclose(got_a, exp_a, rtol=rtol, atol=atol, equal_nan=True, err_msg=path)
        # NaN and inf in the same places, with the same signs.
        np.testing.assert_array_equal(np.isnan(got_a), np.isnan(exp_a), err_msg=f"{path}: NaN positions")
        np.testing.assert_array_equal(np.isposinf(got_a), np.isposinf(exp_a), err_msg=f"{path}: +inf positions")
        np.testing.assert_array_equal(np.isneginf(got_a), np.isneginf(exp_a), err_msg=f"{path}: -inf positions")
    else:
        np.testing.assert_array_equal(got_a, exp_a, err_msg=path)


def run_both(fn, *args, **kwargs):
    """(numfuse's result, NumPy's result) of fn(*args), checking the caller's arrays stay intact."""
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with np.errstate(all="ignore"):
        expected = fn(*args, **kwargs)
    got = numfuse.jit(fn)(*args, **kwargs)
    for before, after in zip(copies, args):
        if isinstance(before, np.ndarray):
            np.testing.assert_array_equal(after, before, err_msg="numfuse modified an argument")
    return got, expected


def check(fn, *args, reduced: int = 1, **kwargs):
    """Assert that numfuse.jit(fn) gives what NumPy gives."""
    got, expected = run_both(fn, *args, **kwargs)
    assert_same(got, expected, reduced)
    return got


def numpy_outcome(fn, *args):
    """('ok', result) or ('raises', exception) for NumPy."""
    try:
        with np.errstate(all="ignore"):
            return "ok", fn(*args)
    except Exception as err:  # noqa: BLE001 - which error NumPy raises is what we compare
        return "raises", err


def check_like_numpy(fn, *args, reduced: int = 1, jitted=None):
    """numfuse.jit(fn) gives NumPy's result, or raises the error NumPy raises."""
    import pytest

    jitted = jitted or numfuse.jit(fn)
    status, expected = numpy_outcome(fn, *args)
    if status == "raises":
        with pytest.raises(type(expected)):
            jitted(*args)
        return None
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got = jitted(*args)
    for before, after in zip(copies, args):
        if isinstance(before, np.ndarray):
            np.testing.assert_array_equal(after, before, err_msg="numfuse modified an argument")
    assert_same(got, expected, reduced)
    return got


@st.composite
def axis_specs(draw, ndim: int, tuples: bool = True, int_weight: int = 1):
    """A reduction's axis: None, an int (maybe negative; `int_weight` times as likely as the
    others), or a tuple of distinct axes (maybe empty, maybe negative) unless not `tuples`."""
    kinds = ["none"] + (["int"] * int_weight if ndim else []) + (["tuple"] if tuples else [])
    choice = draw(st.sampled_from(kinds), label="axis kind")
    if choice == "none":
        return None
    if choice == "int":
        axis = draw(st.integers(0, ndim - 1))
        return axis - ndim if draw(st.booleans()) else axis
    axes = draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim)) if ndim else []
    return tuple(a - ndim if draw(st.booleans()) else a for a in axes)


def with_offsets(nest) -> str:
    """A loop nest's text with each offset argument (`off0`, collapse.py) replaced by its value at
    the traced shapes: `load in_a[i0 + off0]` reads `load in_a[i0 + 7]`."""
    import re

    values = {c.name: int(c.value) for c in nest.counts if c.name.startswith("off")}
    text = re.sub(r"\boff\d+\b", lambda m: str(values[m.group()]), str(nest))
    return text.replace("+ -", "- ")


def planning_target():
    """The target the tests' functions are planned for (NUMFUSE_TARGET, which each tier sets):
    tests of a strategy's thresholds read them from it."""
    from numfuse.targets import by_name, requested

    name = requested(None)
    return by_name("cuda" if name == "auto" else name)
