"""The cache is not a way in (runtime/kernel_files.py): numfuse imports the Python files it
generates, so their folder is private, and a folder or file that others can write is refused."""

import os
import stat

import pytest

import numfuse
from numfuse.codegen.statements import KernelSource
from numfuse.runtime import kernel_files


@pytest.fixture
def cache(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("NUMFUSE_CACHE_DIR", str(root))
    return root


def _kernel(body="    return 1\n"):
    return KernelSource("nf_probe", f"def nf_probe():\n{body}", (), "flat")


def test_the_cache_folder_is_created_private(cache):
    path = kernel_files.write_kernel(_kernel())
    for folder in (cache, cache / "kernels"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0


def test_a_folder_others_can_write_is_refused_saying_why(cache):
    (cache / "kernels").mkdir(parents=True, mode=0o700)
    os.chmod(cache / "kernels", 0o777)
    with pytest.raises(numfuse.CacheSecurityError, match="other users can write it"):
        kernel_files.write_kernel(_kernel())


def test_a_kernel_file_others_can_write_is_refused(cache):
    path = kernel_files.write_kernel(_kernel())
    os.chmod(path, 0o666)
    with pytest.raises(numfuse.CacheSecurityError, match=f"cache file {path}"):
        kernel_files.write_kernel(_kernel())


def test_a_folder_of_another_user_is_refused(cache, monkeypatch):
    kernel_files.write_kernel(_kernel())
    monkeypatch.setattr(os, "getuid", lambda: os.stat(cache).st_uid + 1)
    with pytest.raises(numfuse.CacheSecurityError, match="owned by user id"):
        kernel_files.write_kernel(_kernel())


@pytest.mark.parametrize("damage", [b"", b"def nf_probe(:\n", b"\xff\xfe\x00garbage"])
def test_a_truncated_or_corrupted_kernel_file_is_written_again(cache, damage):
    kernel = _kernel()
    path = kernel_files.write_kernel(kernel)
    path.write_bytes(damage)
    assert kernel_files.write_kernel(kernel) == path
    assert path.read_text() == kernel.source
