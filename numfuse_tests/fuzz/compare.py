"""numfuse's results against NumPy's, output by output.

Identical: the structure (a tuple of outputs), each output's Python type (ndarray, NumPy scalar
or Python scalar), shape and dtype; bool and integer values; NaN, +inf and -inf positions; and,
where the tolerance is 0 (the value is exact under the error model), float values bit for bit,
the sign of zero included. Elsewhere floats may differ by the tolerance of each element, which
the generator derived from the dtype's eps, the number of elements reduced and every operation
on the way (numerics.py).
"""

from __future__ import annotations

import numpy as np


def _show(a: np.ndarray, where: np.ndarray) -> str:
    """The first few flagged elements, with their indices."""
    idx = list(zip(*np.nonzero(where)))[:4] if a.ndim else [()] if where else []
    return ", ".join(f"{tuple(int(k) for k in i)}: {a[i]!r}" for i in idx)


def compare_value(got, expected, tol, path: str) -> list[str]:
    if type(got) is not type(expected):
        return [f"{path}: numfuse gives a {type(got).__name__}, NumPy a {type(expected).__name__}"]
    g, e = np.asarray(got), np.asarray(expected)
    if g.shape != e.shape:
        return [f"{path}: shape {g.shape}, NumPy's {e.shape}"]
    if g.dtype != e.dtype:
        return [f"{path}: dtype {g.dtype}, NumPy's {e.dtype}"]
    if e.dtype.kind != "f":
        wrong = g != e
        return [f"{path}: values differ at {_show(g, wrong)}; NumPy: {_show(e, wrong)}"] if np.any(wrong) else []
    problems = []
    for name, test in (("NaN", np.isnan), ("+inf", np.isposinf), ("-inf", np.isneginf)):
        wrong = test(g) != test(e)
        if np.any(wrong):
            problems.append(f"{path}: {name} positions differ at {_show(g, wrong)}; NumPy: {_show(e, wrong)}")
    if problems:
        return problems
    tol = np.broadcast_to(np.asarray(tol, dtype=np.float64), e.shape)
    finite = np.isfinite(e)
    with np.errstate(all="ignore"):
        diff = np.abs(g.astype(np.float64) - e.astype(np.float64), where=finite, out=np.zeros(e.shape))
    wrong = finite & (diff > tol)
    if np.any(wrong):
        problems.append(f"{path}: values beyond tolerance at {_show(g, wrong)}; NumPy: {_show(e, wrong)}; "
                        f"tolerance: {_show(tol, wrong)}")
    sign = (tol == 0) & (e == 0) & (np.signbit(g) != np.signbit(e))
    if np.any(sign):
        problems.append(f"{path}: the sign of zero differs at {_show(g, sign)}; NumPy: {_show(e, sign)}")
    return problems


def compare(got, expected, tolerances) -> list[str]:
    """Every difference between numfuse's outputs and NumPy's, as sentences (none: they agree)."""
    if not isinstance(got, tuple) or len(got) != len(expected):
        return [f"numfuse returns {type(got).__name__} {got!r}, NumPy a tuple of {len(expected)}"]
    problems = []
    for k, (g, e, tol) in enumerate(zip(got, expected, tolerances)):
        problems += compare_value(g, e, tol, f"output {k}")
    return problems
