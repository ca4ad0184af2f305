"""Every benchmark workload (benchmarks/workloads.py) gives NumPy's results through numfuse, on
tiny inputs made by its own input maker (the simulator is slow)."""

import time
import types

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


class _FakeEvent:
    def record(self):
        self.t = time.perf_counter()

    def synchronize(self):
        pass


class _FakeCupy:
    """Just enough of CuPy, made of NumPy, for the suite's GPU columns to run their bookkeeping
    (numfuse then runs on the simulator with NumPy arrays; events read the host clock)."""

    def __init__(self):
        device = types.SimpleNamespace(synchronize=lambda: None, id=0)
        self.cuda = types.SimpleNamespace(Event=_FakeEvent, Device=lambda: device,
                                          get_elapsed_time=lambda start, end: (end.t - start.t) * 1e3)
        self.asnumpy = np.asarray

    def fuse(self, fn):
        return fn

    def __getattr__(self, name):
        return getattr(np, name)


def test_gpu_columns_bookkeeping_on_a_fake_cupy(tmp_path, monkeypatch):
    """The GPU part of `python -m benchmarks` (benchmarks/gpu.py) end to end, with NumPy posing as
    CuPy: every implementation's cell filled or said why not, numfuse checked against NumPy at the
    small size and CuPy at the large one, the targets judged, the tables written."""
    from benchmarks import gpu, peers, suite, timing

    monkeypatch.setitem(suite.SIZES, "small", 4096)
    monkeypatch.setitem(suite.SIZES, "large", 16384)
    monkeypatch.setattr(timing, "L2_FLUSH_BYTES", 1024)
    monkeypatch.setattr(suite, "find_gpu", lambda cpu_only: (_FakeCupy(), "Fake GPU"))

    def copy_bandwidth(self):
        self.run.copy = {"bytes": 1, "ms": 1.0, "gbs": 1e-7, "repeat": 1, "how": "made up"}

    monkeypatch.setattr(gpu.Session, "copy_bandwidth", copy_bandwidth)
    # torch.compile and jax.jit would run on NumPy's arrays on the CPU: left out here. The kernel
    # counter needs a GPU: this one counts a call's results.
    for peer in (peers.TorchCompile, peers.JaxJit):
        monkeypatch.setattr(peer, "missing", lambda self: "left out of this test")
    monkeypatch.setattr(gpu, "count_kernels", lambda call, sync: (len(peers.flatten(call())), ["k"]))
    opts = suite.Options(only=("chain10", "black_scholes", "full_sum", "stencil"), out=tmp_path, repeat=2,
                         compile=False, plan_repeat=1, stem="fake", max_seconds=600)
    data = suite.run_suite(opts)
    assert data["meta"]["gpu"] == "Fake GPU" and data["meta"]["kernel_count"].startswith("Kernels per call counted")
    for row in data["rows"]:
        impls = row["impls"]
        assert impls["numfuse"]["status"] == "ok" and impls["cupy"]["status"] == "ok", impls
        assert impls["numfuse"]["reference"] == ("numpy" if row["size"] == "small" else "cupy")
        assert impls["numfuse"]["max_rel_diff"] < 1e-5 and impls["numfuse"]["kernels"] == 1
        assert impls["numpy"]["status"] == ("ok" if row["size"] == "small" else "not run: large size (--numpy-large)")
        assert impls["cupy_fuse"]["status"] == ("ok" if row["workload"] != "stencil" else "no twin")
        for key in ("torch_compile", "jax_jit"):
            assert impls[key]["status"] == "not run: left out of this test"
        outputs = 2 if row["workload"] == "black_scholes" else 1
        for key in ("numfuse", "cupy", "cupy_fuse"):
            assert impls[key].get("kernels_profiled", outputs) == outputs
        if row["size"] == "large":
            band = row["targets"]["bandwidth"]  # against a made-up 100 kB/s copy
            assert band["met"] is True and band["pct"] == impls["numfuse"]["pct_of_copy"] > 100
        else:
            assert row["targets"] == {"note": "targets apply at the large size"}
    md = (tmp_path / "fake.md").read_text()
    assert md.count("| chain10 | ") == 4 and "Side by side" in md and "met (" in md


def test_a_result_of_another_dtype_is_wrong_whatever_its_values():
    """A float64 result moves twice the bytes: the comparison refuses it (cupy.fuse on Python
    floats once computed Black-Scholes in float64)."""
    from benchmarks.peers import max_rel_diff

    expected = [np.ones(4, np.float32)]
    assert max_rel_diff(np, [np.ones(4, np.float32)], expected) == 0.0
    with pytest.raises(ValueError, match="dtype float64, expected float32"):
        max_rel_diff(np, [np.ones(4, np.float64)], expected)


def test_cupy_fuse_gets_python_floats_as_float32_arrays():
    """cupy.fuse types a Python float as a float64 scalar (CuPy issue 9400): the suite passes
    0-d float32 arrays instead, so its Black-Scholes stays in float32 as NumPy's does."""
    from benchmarks.peers import CupyFuse
    from benchmarks.workloads import BY_NAME

    w = BY_NAME["black_scholes"]
    seen = []
    fake = _FakeCupy()
    fake.fuse = lambda fn: lambda *args: seen.append(args) or fn(*args)
    args = w.make(TINY_BYTES, np, 0)
    assert any(isinstance(a, float) for a in args)
    call = CupyFuse(fake).prepare(w, args)
    call()
    assert all(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in seen[0])
