"""numfuse: plain NumPy functions, traced, fused and run as kernels, on a GPU or the CPU's cores.

    @numfuse.jit
    def f(x, y):
        z = np.exp(x) * y + 1.0
        return z, z.sum(axis=1)

`import numfuse` does not import numba. A function runs on the target numfuse.jit's `target`
names: "auto" (the default, or NUMFUSE_TARGET) is a CUDA GPU where one is found or device arrays
are passed, else the CPU target (Numba parallel functions on NumPy arrays).
"""

from .errors import (
    CacheSecurityError, LayoutError, NumfuseError, NumfuseWarning, SimulatorWarning, TargetWarning, TracingError,
    UnfusedCallWarning, UnsupportedError,
)
from .api import jit
from .jit_function import JitFunction
from .version import __version__

def clear_cache() -> int:
    """Delete numfuse's disk cache (generated kernels, compiled code, PTX); see numfuse.cache."""
    from .cache import clear

    return clear()


def set_num_threads(n: int) -> None:
    """Bound the threads the CPU target's parallel functions use (Numba's set_num_threads, for
    the calling thread; NUMBA_NUM_THREADS bounds them for the process). Results are the same
    bits for any number of threads."""
    import numba

    numba.set_num_threads(n)


__all__ = ["CacheSecurityError", "clear_cache", "jit", "JitFunction", "LayoutError", "NumfuseError", "NumfuseWarning", "SimulatorWarning",
           "TargetWarning", "TracingError", "UnfusedCallWarning",
           "UnsupportedError", "set_num_threads", "__version__"]
