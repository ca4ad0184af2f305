"""The benchmark suite (python -m benchmarks): its workloads' sizes and kinds, the part that needs
no GPU run end to end into JSON and markdown, and the GPU tables and targets rendered from a
made-up GPU run (the GPU paths themselves only run on a GPU: benchmarks/gpu_check.sh)."""

import copy
import json

import numpy as np
import pytest

from benchmarks import output
from benchmarks.__main__ import main
from benchmarks.suite import SIZES, plan_row
from benchmarks.workloads import TARGETS, WORKLOADS


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.name)
def test_sizes_and_kind(workload):
    assert workload.kind in TARGETS
    small, large = plan_row(workload, "small"), plan_row(workload, "large")
    assert small["kernels"] >= 1 and large["kernels"] == small["kernels"]
    if workload.kind == "compute":  # the KDE: its size is its never-stored matrix's
        assert small["unfused_bytes"] >= SIZES["small"] and large["unfused_bytes"] >= SIZES["large"]
    else:
        # about 1 MiB of input (normalizations add their weight rows), 512 MiB and more moved
        assert 2**19 <= small["input_bytes"] <= 1.1 * SIZES["small"] and small["min_bytes"] <= 3 * 2**20
        assert large["min_bytes"] >= 512 * 2**20


def test_cpu_suite_writes_json_and_markdown(tmp_path):
    main(["--cpu", "--no-compile", "--only", "chain10", "softmax", "--size", "both", "--out", str(tmp_path),
          "--name", "run", "--repeat", "2", "--plan-repeat", "1"])
    data = json.loads((tmp_path / "run.json").read_text())
    meta = data["meta"]
    assert meta["gpu"] == "cpu" and meta["commit"] and meta["date"]
    assert meta["command"].startswith("python -m benchmarks --cpu --no-compile")
    assert {"numfuse", "numba", "numba-cuda", "numpy"} <= set(meta["versions"])
    assert data["copy"] is None
    rows = {(r["workload"], r["size"]): r for r in data["rows"]}
    assert set(rows) == {(w, s) for w in ("chain10", "softmax") for s in ("small", "large")}
    for (name, size), r in rows.items():
        assert r["kernels"] == 1 and r["bytes_moved"] == r["min_bytes"] > 0
        assert r["plan_ms"] > 0 and r["compile_s"] is None
        numpy_entry = r["impls"]["numpy"]
        if size == "small":
            assert numpy_entry["status"] == "ok" and numpy_entry["ms"] > 0 and len(numpy_entry["times_ms"]) == 2
        else:
            assert numpy_entry["status"].startswith("not run")
        expected_note = "targets apply at the large size" if size == "small" else "numfuse not timed on a GPU"
        assert r["targets"] == {"note": expected_note}
    md = (tmp_path / "run.md").read_text()
    assert "CPU only (no GPU)" in md and meta["command"] in md
    header = "| workload | kind | shapes | kernels | strategy | minimum bytes | moved / min | one pass per op / min | plan (ms) | compile (s) | NumPy CPU (ms) |"
    assert md.count(header) == 1  # the small size's; the large one's says NumPy was not run
    assert md.count("| chain10 | elementwise | ") == 2 and md.count("| softmax | normalization | 32768x4096 |") == 1
    assert not (tmp_path / "run.png").exists()  # nothing timed on a GPU: nothing to plot


def _gpu_run() -> dict:
    """A made-up GPU run: numfuse at 80% of the copy on an elementwise workload, 1.25x
    torch.compile's time; at 95% on a reduction, faster than torch.compile; a wrong CuPy result."""

    def entry(ms, gbs, **extra):
        return {"status": "ok", "timer": "events", "ms": ms, "gbs": gbs, "pct_of_copy": 100 * gbs / 4000,
                "times_ms": [ms], **extra}

    def row(name, kind, target, nf, torch, cupy):
        return {"workload": name, "kind": kind, "size": "large", "shapes": [[1024, 4096]], "input_bytes": 2**24,
                "kernels": 1, "strategies": ["flat"], "bytes_moved": 2**25, "min_bytes": 2**25,
                "unfused_bytes": 2**26, "operations": 2**23, "target_pct": target, "plan_ms": 5.0, "compile_s": 0.3,
                "impls": {"numfuse": nf, "numpy": {"status": "not run: large size (--numpy-large)"},
                          "cupy": cupy, "torch_compile": torch, "jax_jit": {"status": "not run: JAX is not installed"},
                          "cupy_fuse": {"status": "no twin"}}}

    meta = {"date": "2030-01-01 00:00:00 +0000", "gpu": "NVIDIA H200", "no_gpu_reason": None, "commit": "abc1234",
            "host": "h", "cpu": "x86_64", "command": "python -m benchmarks --size large", "sizes": {"large": 2**29},
            "repeat": 20, "versions": {"python": "3.11", "numfuse": "0.1.0", "numba": "0.68.1"},
            "kernel_count": "counted", "numpy_large": False}
    return {"meta": meta, "copy": {"bytes": 2**30, "ms": 0.5, "gbs": 4000.0, "repeat": 20},
            "rows": [
                row("chain10", "elementwise", 90, entry(1.0, 3200.0, kernels=1, max_rel_diff=1e-7, reference="cupy"),
                    entry(0.8, 4000.0, kernels=1), entry(5.0, 640.0, kernels=9)),
                row("row_sum", "reduction", 85, entry(1.0, 3800.0, kernels=1, max_rel_diff=2e-7, reference="cupy"),
                    entry(1.1, 3454.0, kernels=2), entry(1.2, 3000.0, max_rel_diff=0.5, reference="numpy")),
            ]}


def test_targets_say_by_how_much_they_are_missed(tmp_path):
    data = _gpu_run()
    output.write(data, tmp_path, "gpu")
    chain, rows_ = data["rows"][0]["targets"], data["rows"][1]["targets"]
    assert chain["bandwidth"]["met"] is False and chain["bandwidth"]["missed_by_points"] == pytest.approx(10)
    assert chain["vs_torch_compile"]["met"] is False and chain["vs_torch_compile"]["slower_by_pct"] == pytest.approx(25)
    assert rows_["bandwidth"]["met"] is True and rows_["vs_torch_compile"]["met"] is True
    md = (tmp_path / "gpu.md").read_text()
    assert "**4000 GB/s**" in md
    assert "**missed by 10 points** (80% < 90%)" in md and "**missed: 25% slower** (1.25x)" in md
    assert "met (95% ≥ 85%)" in md and "met (0.91x its time)" in md
    side = md[md.index("Side by side"):]
    assert "| chain10 | 1.00 (80%, 1) | not run [1] | 5.00 (16%, 9) | — | 0.800 (100%, 1) | not run [2] |" in side
    assert "| row_sum | 1.00 (95%, 1) | not run [1] | 1.20 (75%) **wrong** [3] | — | 1.10 (86%, 2) | not run [2] |" in side
    assert "1. chain10 (large); row_sum (large): NumPy (CPU): not run: large size (--numpy-large)" in md
    assert "3. row_sum (large): CuPy's result differs from numpy's (max rel diff 5.0e-01)" in md
    assert json.loads((tmp_path / "gpu.json").read_text())["rows"][0]["targets"] == chain


def test_small_size_and_compute_rows_have_no_bandwidth_target():
    data = _gpu_run()
    small = copy.deepcopy(data["rows"][0])
    small["size"] = "small"
    kde = copy.deepcopy(data["rows"][1])
    kde["kind"], kde["target_pct"] = "compute", None
    assert output.judge(small, data["copy"]) == {"note": "targets apply at the large size"}
    assert "bandwidth" not in output.judge(kde, data["copy"])
    assert output.judge(data["rows"][0], None) == {"note": "numfuse not timed on a GPU"}
    assert np.isclose(output.judge(kde, data["copy"])["vs_torch_compile"]["time_ratio"], 1 / 1.1)


def test_the_test_runner_shares_test_files_out_evenly_and_by_tier_weight(tmp_path):
    """Without pytest-xdist, `python -m numfuse_tests --jobs N` gives each tier processes by its
    work and each process about as many bytes of test files."""
    from numfuse_tests.__main__ import _shard_counts, _shards

    sizes = [900, 500, 400, 300, 200, 100]
    for k, size in enumerate(sizes):
        (tmp_path / f"test_{k}.py").write_text("#" * size)
    (tmp_path / "helper.py").write_text("#" * 5000)  # not a test file
    groups = _shards([tmp_path], 3)
    assert sorted(f.name for g in groups for f in g) == sorted(f"test_{k}.py" for k in range(6))
    loads = sorted(sum(f.stat().st_size for f in g) for g in groups)
    assert loads == [700, 800, 900]  # the largest file first, each to the lightest process
    assert _shards([tmp_path], 10) and len(_shards([tmp_path], 10)) == 6  # never an empty process
    assert _shard_counts(["trace", "compile", "run"], 16) == {"trace": 1, "compile": 3, "run": 12}
    assert _shard_counts(["run"], 1) == {"run": 1}


def test_jax_is_started_in_a_child_process_before_this_one(tmp_path, monkeypatch):
    """A JAX that cannot start beside PyTorch's CUDA libraries may crash its process: the suite
    asks a child process first, and says why JAX is not run."""
    import sys

    from benchmarks.peers import JaxJit

    fake = tmp_path / "jax"
    fake.mkdir()
    (fake / "__init__.py").write_text(
        "import os, types\n"
        "if os.environ.get('FAKE_JAX') == 'crash':\n"
        "    raise SystemExit('Segmentation fault in the fake plugin')\n"
        "def devices():\n"
        "    return [types.SimpleNamespace(platform=os.environ.get('FAKE_JAX', 'cpu'))]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.delitem(sys.modules, "jax", raising=False)
    peer = JaxJit(None)
    monkeypatch.setenv("FAKE_JAX", "crash")
    assert peer.missing() == "JAX failed to start: Segmentation fault in the fake plugin"
    assert "jax" not in sys.modules  # never imported here
    monkeypatch.setenv("FAKE_JAX", "cpu")
    assert peer.missing() == "JAX has no GPU device"
    monkeypatch.setenv("FAKE_JAX", "gpu")
    assert peer.missing() is None
