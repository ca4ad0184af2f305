"""CPU kernel modules imported from their files (runtime/kernel_files.py), once per process per
code digest, and the threading layer their parallel loops run on.

Numba's `workqueue` layer aborts the process when two Python threads run parallel code at once,
so numfuse asks for a thread-safe layer (OpenMP or TBB: Numba's "threadsafe") unless the user
chose one (NUMBA_THREADING_LAYER). Where neither loads, parallel calls take a process-wide lock
on workqueue: still correct from any number of Python threads, one parallel call at a time.

GNU OpenMP's workers spin for about 300,000 pauses (milliseconds on CPUs whose pause is slow)
after each parallel loop before they sleep; NumPy's OpenBLAS workers spin after each product
too. A plan alternating kernels and library products then has each pool's spinners take the
cores the other needs: on 2 cores npbench's mlp ran its softmax kernels 10x and its matmul 1.5x
slower than alone. Unless the user set GOMP_SPINCOUNT or OMP_WAIT_POLICY, numfuse sets
GOMP_SPINCOUNT to SPIN_COUNT before Numba loads the OpenMP layer (libgomp reads it then): short
enough to leave the cores to BLAS, long enough to catch the next kernel of a loop
(benchmarks/results/2026-12-04-gomp-spincount-cpu.md).
"""

from __future__ import annotations

import os
import threading

from ...runtime.kernel_files import load_function

_functions: dict[str, tuple] = {}  # code digest -> (parallel, serial) dispatchers
_lock = threading.Lock()
_layer: list[str] = []  # the threading layer chosen, once per process
SPIN_COUNT = 10_000  # GOMP_SPINCOUNT, see above


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

    if "GOMP_SPINCOUNT" not in os.environ and "OMP_WAIT_POLICY" not in os.environ:
        os.environ["GOMP_SPINCOUNT"] = str(SPIN_COUNT)
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
