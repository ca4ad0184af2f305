"""What every target checks of a library call's result: the shape and dtype the plan made its
buffer for. (Its inputs read in place as views: ir/viewmaps.view_through.)"""

from __future__ import annotations


def check_result(step, result, var) -> None:
    if tuple(result.shape) != var.aval.shape:
        raise ValueError(
            f"{step.op.what} returned shape {tuple(result.shape)} where numfuse planned "
            f"{var.aval.shape}: its result's shape depends on the data"
        )
    if result.dtype != var.aval.dtype:
        raise TypeError(f"{step.op.what} returned {result.dtype} where numfuse planned {var.aval.dtype}")
