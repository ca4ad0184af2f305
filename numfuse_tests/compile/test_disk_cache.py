"""numfuse's PTX disk cache (targets/cuda/ptx_cache.py) with the real compiler: a second process
compiles nothing, a damaged entry is compiled again, processes compiling at once all succeed,
and the cache can be listed and cleared."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import numfuse
import numfuse.cache


def layer_norm(x, w, b):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * w + b


ARGS = (np.ones((16, 64), np.float32), np.ones(64, np.float32), np.ones(64, np.float32))


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("NUMFUSE_CACHE_DIR", str(tmp_path))
    return tmp_path


@pytest.fixture
def nvvm_calls(monkeypatch) -> list:
    from numba import cuda

    calls = []
    real = cuda.compile_ptx

    def spy(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(cuda, "compile_ptx", spy)
    return calls


def test_a_warm_cache_compiles_nothing_and_gives_the_same_ptx(cache, nvvm_calls):
    first = numfuse.jit(layer_norm).compile(*ARGS)
    assert len(nvvm_calls) == len(first) >= 1
    entries = sorted((cache / "ptx").glob("*.ptx"))
    assert len(entries) == len(first)
    second = numfuse.jit(layer_norm).compile(*ARGS)  # a new function object: nothing in memory
    assert second == first
    assert len(nvvm_calls) == len(first)
    # Another target is another entry.
    numfuse.jit(layer_norm).compile(*ARGS, cc=(8, 0))
    assert len(nvvm_calls) == 2 * len(first)


@pytest.mark.parametrize("damage", ["truncated", "garbage", "edited", "empty"])
def test_a_damaged_entry_is_compiled_again_and_repaired(cache, nvvm_calls, damage):
    good = numfuse.jit(layer_norm).compile(*ARGS)
    entry = next((cache / "ptx").glob("*.ptx"))
    text = entry.read_text()
    entry.write_bytes({
        "truncated": text[: len(text) // 2].encode(),
        "garbage": os.urandom(256),
        "edited": text.replace(".entry", ".entry ").encode(),
        "empty": b"",
    }[damage])
    from numfuse.targets.cuda import ptx_cache

    again = numfuse.jit(layer_norm).compile(*ARGS)
    assert len(nvvm_calls) == 2 * len(good)
    assert ptx_cache._read(entry) in again  # repaired: a sound entry, what the compiler gave
    assert numfuse.jit(layer_norm).compile(*ARGS) == again
    assert len(nvvm_calls) == 2 * len(good)


def test_processes_compiling_at_once_all_succeed(cache):
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_disk_cache import ARGS, layer_norm
        import numfuse
        print(len(numfuse.jit(layer_norm).compile(*ARGS)[0]))
    """)
    env = dict(os.environ, NUMFUSE_CACHE_DIR=str(cache))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(3)]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert len(set(outs)) == 1 and int(outs[0]) > 0
    assert not list((cache / "ptx").glob("*.tmp"))  # no half-written entry left behind
    from numfuse.targets.cuda import ptx_cache

    assert all(ptx_cache._read(p) is not None for p in (cache / "ptx").glob("*.ptx"))


def test_the_cache_is_listed_and_cleared(cache, capsys):
    numfuse.jit(layer_norm).compile(*ARGS)
    assert numfuse.cache.location() == cache
    info = numfuse.cache.info()
    assert info["ptx"][0] >= 1 and info["kernels"][0] >= 1
    assert numfuse.cache.main([]) == 0
    assert str(cache) in capsys.readouterr().out
    removed = numfuse.clear_cache()
    assert removed >= 2
    assert numfuse.cache.info()["ptx"] == (0, 0)
    assert numfuse.cache.main(["clear"]) == 0
