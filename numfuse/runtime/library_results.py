"""What every target does around a library call: read an input in place as the view of a
buffer the user's code made (view_of), and check the result's shape and dtype against the
buffer the plan made for it (check_result)."""

from __future__ import annotations


def view_of(xp, array, eqns) -> object:
    """`array` (a buffer: NumPy's or the device library's, whose module is `xp`) seen through
    the view equations `eqns` (broadcast, transpose, slice, reshape; plan_steps.LibraryStep
    .views), as NumPy's own views of it: the library then reads the strides the user's code
    gave it, as NumPy's call does, which decides its loop (BLAS or not) and so its bits."""
    for eqn in eqns:
        out = eqn.out.aval.shape
        if eqn.prim == "transpose":
            array = array.transpose(eqn.param("perm"))
        elif eqn.prim == "broadcast":
            array = xp.broadcast_to(array, out)
        elif eqn.prim == "reshape":
            array = array.reshape(out)
        elif eqn.prim == "slice":
            start, step, drop = eqn.param("start"), eqn.param("step"), eqn.param("drop")
            lengths = iter(out)
            index = []
            for k in range(array.ndim):
                if k in drop:
                    index.append(start[k])
                    continue
                n = next(lengths)
                stop = start[k] + step[k] * n
                index.append(slice(start[k], None if stop < 0 else stop, step[k]) if n else slice(0, 0))
            array = array[tuple(index)]
        else:
            raise AssertionError(f"{eqn.prim} is no view")
    return array


def check_result(step, result, var) -> None:
    if tuple(result.shape) != var.aval.shape:
        raise ValueError(
            f"{step.op.what} returned shape {tuple(result.shape)} where numfuse planned "
            f"{var.aval.shape}: its result's shape depends on the data"
        )
    if result.dtype != var.aval.dtype:
        raise TypeError(f"{step.op.what} returned {result.dtype} where numfuse planned {var.aval.dtype}")
