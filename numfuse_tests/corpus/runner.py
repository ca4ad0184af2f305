"""Run one corpus program through numfuse.jit and through NumPy, and classify what happened."""

from __future__ import annotations

import copy
import time
import traceback
import warnings
from dataclasses import dataclass

import numpy as np

import numfuse
from numfuse_tests.helpers import assert_same

from .programs import Program

MATCHED, REFUSED, WRONG, CRASH = "matched", "refused", "WRONG", "CRASH"
# A refusal must name the user's line: " at <file>:<line>", in one of the corpus's files.
USER_FILES = ("programs.py", "picogpt.py")
SEED = 42


@dataclass
class Outcome:
    name: str
    kind: str  # MATCHED, REFUSED, WRONG or CRASH
    message: str = ""  # the error or the difference; for a refusal, numfuse's message
    seconds: float = 0.0

    @property
    def first_line(self) -> str:
        return self.message.strip().splitlines()[0] if self.message.strip() else ""


def _capped(text: str, limit: int = 6000) -> str:
    """A crash's message and traceback, cut in the middle when long (a RecursionError's notes)."""
    if len(text) <= limit:
        return text
    return text[: limit // 2] + f"\n... [{len(text) - limit} characters left out] ...\n" + text[-limit // 2:]


def names_user_line(message: str) -> bool:
    return " at " in message and any(f in message for f in USER_FILES)


def _compare(got, expected, prog: Program, path: str):
    if expected is None:
        assert got is None, f"{path}: got {type(got).__name__}, NumPy gives None"
        return
    if prog.tol is None:
        assert_same(got, expected, prog.reduced, path)
        return
    if isinstance(expected, (tuple, list)):
        assert type(got) is type(expected) and len(got) == len(expected), f"{path}: structure differs"
        for i, (g, e) in enumerate(zip(got, expected)):
            _compare(g, e, prog, f"{path}[{i}]")
        return
    assert type(got) is type(expected) or (isinstance(got, np.ndarray) and isinstance(expected, np.ndarray)), \
        f"{path}: got {type(got).__name__}, NumPy gives {type(expected).__name__}"
    got_a, exp_a = np.asarray(got), np.asarray(expected)
    assert got_a.shape == exp_a.shape, f"{path}: shape {got_a.shape} != NumPy's {exp_a.shape}"
    assert got_a.dtype == exp_a.dtype, f"{path}: dtype {got_a.dtype} != NumPy's {exp_a.dtype}"
    if exp_a.dtype.kind in "fc":
        rtol, atol = prog.tol
        np.testing.assert_allclose(got_a, exp_a, rtol=rtol, atol=atol, equal_nan=True, err_msg=path)
    else:
        np.testing.assert_array_equal(got_a, exp_a, err_msg=path)


def compare(prog: Program, got, expected, nf_args, np_args) -> None:
    """Raise AssertionError where numfuse's result, or an argument after the call, differs."""
    _compare(got, expected, prog, "result")
    for i, (a, b) in enumerate(zip(nf_args, np_args)):
        if isinstance(b, np.ndarray):
            _compare(a, b, prog, f"argument {i} after the call")


def run_program(prog: Program) -> Outcome:
    args = prog.make_args(np.random.default_rng(SEED))
    np_args, nf_args = copy.deepcopy(args), copy.deepcopy(args)
    with np.errstate(all="ignore"):
        expected = prog.fn(*np_args)
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            got = numfuse.jit(prog.fn, static_argnames=prog.static_argnames)(*nf_args)
    except (numfuse.UnsupportedError, numfuse.TracingError) as err:
        seconds = time.perf_counter() - start
        message = f"{type(err).__name__}: {err}"
        if names_user_line(str(err)):
            return Outcome(prog.name, REFUSED, message, seconds)
        return Outcome(prog.name, CRASH, _capped("refusal without the user's line: " + message + "\n"
                                                 + traceback.format_exc()), seconds)
    except Exception as err:  # noqa: BLE001 - any other exception is a crash to report
        return Outcome(prog.name, CRASH, _capped(f"{type(err).__name__}: {err}\n{traceback.format_exc()}"),
                       time.perf_counter() - start)
    seconds = time.perf_counter() - start
    try:
        compare(prog, got, expected, nf_args, np_args)
    except AssertionError as err:
        text = str(err).strip()
        lines = [l.strip() for l in text.splitlines() if l.strip()]
        # assert_allclose puts its err_msg (which value differs) after its first line.
        where = next((l for l in lines if l.startswith(("result", "argument"))), "")
        head = f"{where}: {lines[0]}" if where and where != lines[0] else (lines[0] if lines else "")
        return Outcome(prog.name, WRONG, head + "\n" + text, seconds)
    return Outcome(prog.name, MATCHED, "", seconds)
