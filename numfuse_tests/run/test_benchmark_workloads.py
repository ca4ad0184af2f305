"""Every benchmark workload (benchmarks/workloads.py) gives NumPy's results through numfuse, on
tiny inputs made by its own input maker (the simulator is slow)."""

import numpy as np
import pytest

import numfuse
from benchmarks.workloads import WORKLOADS

TINY_BYTES = 1024  # 256 float32: 16 x 16 rows, a 16 x 16 grid, 256-point vectors


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.name)
def test_workload_matches_numpy(workload):
    args = workload.make(TINY_BYTES, np, 0)
    expected = workload.fn(*args)
    got = numfuse.jit(workload.fn)(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape, (g.dtype, g.shape, e.dtype, e.shape)
        assert e.size > 1 or workload.name == "full_sum"
        np.testing.assert_allclose(g, e, rtol=2e-5, atol=2e-5 * float(np.abs(e).max()))
