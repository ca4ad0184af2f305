"""CPU kernel modules imported from their files (runtime/kernel_files.py), once per process per
code digest, and the threading layer their parallel loops run on.

Numba's `workqueue` layer aborts the process when two Python threads run parallel code at once,
so numfuse asks for a thread-safe layer (OpenMP or TBB: Numba's "threadsafe") unless the user
chose one (NUMBA_THREADING_LAYER). Where neither loads, parallel calls take a process-wide lock
on workqueue: still correct from any number of Python threads, one parallel call at a time.
"""

from __future__ import annotations

import os
import threading

from ...runtime.kernel_files import load_function

_functions: dict[str, tuple] = {}  # code digest -> (parallel, serial) dispatchers
_lock = threading.Lock()
_layer: list[str] = []  # the threading layer chosen, once per process


def functions(source) -> tuple:
    """(parallel, serial) Numba dispatchers of a kernel module."""
    digest = source.code_digest
    found = _functions.get(digest)
    if found is None:
        module, parallel = load_function(source)
        found = (_guarded(parallel), getattr(module, f"{source.name}_serial"))
        _functions[digest] = found
    return found


def _guarded(parallel):
    """The parallel dispatcher, behind the workqueue lock where only workqueue loads."""
    _choose_layer()
    if _layer[0] != "workqueue":
        return parallel

    def call(*args):
        with _lock:
            return parallel(*args)

    call.inspect_asm = parallel.inspect_asm
    call.signatures = parallel.signatures
    return call


def _choose_layer() -> None:
    if _layer:
        return
    import numba

    if os.environ.get("NUMBA_THREADING_LAYER"):
        _layer.append(numba.config.THREADING_LAYER)
        return
    from numba.np.ufunc import parallel

    try:
        numba.config.THREADING_LAYER = "threadsafe"
        parallel._launch_threads()
    except (ValueError, ImportError):
        numba.config.THREADING_LAYER = "workqueue"
        parallel._launch_threads()
    _layer.append(numba.threading_layer())


def threading_layer() -> str:
    _choose_layer()
    return _layer[0]
