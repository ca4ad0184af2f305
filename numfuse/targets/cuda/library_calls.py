"""Running a plan's library calls (plan_steps.LibraryStep) on the call's buffers.

On a GPU with CuPy the call runs through CuPy (cuBLAS, cuSOLVER, cuFFT, CUB) on the call's
stream, reading and writing the plan's device buffers in place (CuPy wraps them through the
CUDA array interface, no copy). On the simulator, and on a GPU without CuPy, it runs through
NumPy on host copies of its inputs; its outputs are copied into the plan's buffers.
"""

from __future__ import annotations

import numpy as np

from ...errors import warn_once
from ...runtime.library_results import check_result


def _cupy():
    try:
        import cupy
    except ImportError:
        return None
    return cupy


def _input(step, var, env, wrap):
    """Input `var` as an array of the library (`wrap` of a buffer), transposed in place where
    the plan reads it as a view (LibraryStep.views)."""
    if var in step.views:
        base, perm = step.views[var]
        return wrap(env[base]).transpose(perm)
    return wrap(env[var])


def run_step(call, step, env) -> None:
    """Run library call `step` of one call: inputs from `env`'s buffers into its outputs'."""
    outputs = {e.param("output", 0): e.out for e in step.eqns}
    cupy = None if call.simulated else _cupy()
    if cupy is not None and step.prim == "scatter" and step.params["ufunc"] not in (None, "add", "maximum", "minimum"):
        cupy = None  # np.multiply.at and the like: CuPy has no scatter for them
        with cupy.cuda.Device(call.device_id if call.device_id is not None else cupy.cuda.runtime.getDevice()):
            with cupy.cuda.ExternalStream(call.handle or 0):
                arrays = [_input(step, v, env, cupy.asarray) for v in step.inputs]
                results = step.op.run(cupy, arrays, step.params)
                for k, var in outputs.items():
                    check_result(step, results[k], var)
                    cupy.asarray(env[var])[...] = results[k]
        return
    if not call.simulated:
        warn_once(f"numfuse runs {step.op.what} through NumPy on the host (install CuPy to run it on the GPU)")
    arrays = [_input(step, v, env, call.read) for v in step.inputs]
    with np.errstate(all="ignore"):
        results = step.op.run(np, arrays, step.params)
    for k, var in outputs.items():
        result = np.asarray(results[k])
        check_result(step, result, var)
        if result.size:
            env[var].copy_to_device(np.ascontiguousarray(result), stream=call.stream)


__all__ = ["run_step"]
