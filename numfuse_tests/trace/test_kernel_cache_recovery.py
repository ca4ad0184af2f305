"""On a GPU, kernels come from Numba's disk cache beside the kernel files (kernel_cache.py).
An entry Numba cannot read must not stop a call: it is deleted and the kernel compiled again.
Numba's CUDA compiler needs a GPU, so the dispatcher is a stand-in here that fails the way
Numba fails on a damaged index (an unpickling error) while an entry is on disk."""

import pickle

import pytest

from numfuse.targets.cuda.codegen import KernelSource
from numfuse.targets.cuda import kernel_cache

SOURCE = KernelSource("nf_test_kernel", "# header\nimport math\n\ndef nf_test_kernel(a):\n    pass\n", (), "flat")


class Dispatcher:
    def __init__(self, log):
        self.log = log

    def compile(self, argtypes):
        if kernel_cache.numba_cache_files(SOURCE):
            self.log.append("damaged entry")
            raise pickle.UnpicklingError("invalid load key, '\\x00'")
        self.log.append("compiled")
        return ("kernel", argtypes)


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMFUSE_CACHE_DIR", str(tmp_path))
    log = []
    monkeypatch.setattr(kernel_cache, "dispatcher", lambda kernel: Dispatcher(log))
    return log


def test_a_damaged_numba_entry_is_deleted_and_the_kernel_compiled_again(stand_in):
    path = kernel_cache.write_kernel(SOURCE)
    pycache = path.parent / "__pycache__"
    pycache.mkdir()
    for suffix in (".nf_test_kernel-4.py311.nbi", ".nf_test_kernel-4.py311.1.nbc"):
        (pycache / f"{path.stem}{suffix}").write_bytes(b"\x00garbage")
    assert len(kernel_cache.numba_cache_files(SOURCE)) == 2
    assert kernel_cache.compile_for(SOURCE, ("f32[:]",)) == ("kernel", ("f32[:]",))
    assert stand_in == ["damaged entry", "compiled"]
    assert kernel_cache.numba_cache_files(SOURCE) == []


def test_a_compile_error_without_a_cache_entry_is_raised(stand_in, monkeypatch):
    class Failing:
        def compile(self, argtypes):
            raise TypeError("a typing error in the kernel")

    monkeypatch.setattr(kernel_cache, "dispatcher", lambda kernel: Failing())
    with pytest.raises(TypeError, match="typing error"):
        kernel_cache.compile_for(SOURCE, ())
