"""numfuse: plain NumPy functions, traced, fused and run as CUDA kernels.

    @numfuse.jit
    def f(x, y):
        z = np.exp(x) * y + 1.0
        return z, z.sum(axis=1)

`import numfuse` does not import numba.cuda; that happens at the first kernel launch, when
numfuse also picks a GPU or, without a CUDA driver, Numba's CUDA simulator.
"""

from .errors import NumfuseError, NumfuseWarning, TracingError, UnsupportedError
from .jit_function import JitFunction, jit

__version__ = "0.1.0"

def clear_cache() -> int:
    """Delete numfuse's disk cache (generated kernels, compiled code, PTX); see numfuse.cache."""
    from .cache import clear

    return clear()


__all__ = ["clear_cache", "jit", "JitFunction", "NumfuseError", "NumfuseWarning", "TracingError", "UnsupportedError", "__version__"]
