"""Running a plan's library calls (plan_steps.LibraryStep) on the call's buffers.

On a GPU with CuPy the call runs through CuPy (cuBLAS, cuSOLVER, cuFFT, CUB) on the call's
stream, reading and writing the plan's device buffers in place (CuPy wraps them through the
CUDA array interface, no copy). On the simulator, and on a GPU without CuPy, it runs through
NumPy on host copies of its inputs; its outputs are copied into the plan's buffers.
"""

from __future__ import annotations

import numpy as np

from ...errors import warn_once
from ...ir.viewmaps import view_through
from ...runtime.library_results import check_result


def _cupy():
    try:
        import cupy
    except ImportError:
        return None
    return cupy


def _input(step, var, env, wrap, xp):
    """Input `var` as an array of the library (`wrap` of a buffer; `xp` its module), seen in
    place through the views the plan reads it by (LibraryStep.views)."""
    if var in step.views:
        base, eqns = step.views[var]
        return view_through(xp, wrap(env[base]), eqns)
    return wrap(env[var])


def _cupy_runs(step) -> bool:
    """Whether CuPy runs `step` as NumPy does: all library calls but the scatters it lacks
    (np.multiply.at and the like) and those whose ufunc NumPy runs in a wider dtype than the
    array's (np.add.at of float64 values into uint64: cupyx's scatters work in the array's)."""
    if step.prim != "scatter" or step.params["ufunc"] is None:
        return True
    x, value = step.inputs[:2]
    return step.params["ufunc"] in ("add", "maximum", "minimum") and value.aval.dtype == x.aval.dtype


def run_step(call, step, env) -> None:
    """Run library call `step` of one call: inputs from `env`'s buffers into its outputs'."""
    outputs = {e.param("output", 0): e.out for e in step.eqns}
    cupy = None if call.simulated or not _cupy_runs(step) else _cupy()
    if cupy is not None:
        with cupy.cuda.Device(call.device_id if call.device_id is not None else cupy.cuda.runtime.getDevice()):
            with cupy.cuda.ExternalStream(call.handle or 0):
                arrays = [_input(step, v, env, cupy.asarray, cupy) for v in step.inputs]
                results = step.op.run(cupy, arrays, step.params)
                for k, var in outputs.items():
                    check_result(step, results[k], var)
                    cupy.asarray(env[var])[...] = results[k]
        return
    if not call.simulated:
        why = "(install CuPy to run it on the GPU)" if _cupy() is None else "(CuPy has no call that gives NumPy's result)"
        warn_once(f"numfuse runs {step.op.what} through NumPy on the host {why}")
    arrays = [_input(step, v, env, call.read, np) for v in step.inputs]
    with np.errstate(all="ignore"):
        results = step.op.run(np, arrays, step.params)
    for k, var in outputs.items():
        result = np.asarray(results[k])
        check_result(step, result, var)
        if result.size:
            env[var].copy_to_device(np.ascontiguousarray(result), stream=call.stream)


__all__ = ["run_step"]
