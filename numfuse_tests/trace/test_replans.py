"""Reads of an array's old values after an update overwrote its buffer: that update writes into
a copy, and the graph is planned again. A loop of many such updates plans a few times, not once
per update (planner.ONE_COPY_AT_A_TIME copies one at a time, then every read found at once)."""

import numpy as np

import numfuse
from numfuse.plan import planner


def _adaptive_filter(e, w, mu):
    # An LMS-style loop (pythran's cma_pt benchmark): each step reads the weights, then updates
    # them in place, and a later step's reduction reads them again.
    out = np.zeros(e.shape[1] - w.shape[0])
    for i in range(out.shape[0]):
        x = e[0, i:i + w.shape[0]]
        out[i] = np.sum(x * w)
        w += mu * out[i] * x
    return out, w


def test_a_loop_of_overwritten_reads_plans_a_few_times(monkeypatch):
    calls = []
    original = planner.Planner.plan

    def counting(self):
        calls.append(1)
        return original(self)

    monkeypatch.setattr(planner.Planner, "plan", counting)
    e = np.linspace(0, 1, 2 * 60).reshape(2, 60)
    w = np.zeros(8)
    numfuse.jit(_adaptive_filter, target="cpu").plan(e, w.copy(), 0.01)
    assert len(calls) <= planner.ONE_COPY_AT_A_TIME + 3, len(calls)
